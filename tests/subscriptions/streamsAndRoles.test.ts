import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createApiKey } from '../../app/apiKeys.js';
import { dataOf, startSeededService, type SeededService } from '../support/seededService.js';
import { connect, subscribe, type Subscription, type TestClient } from '../support/graphSocket.js';

/** Issue 34, Done-when 1 (the investor's filter) and 3 (streams). */
let s: SeededService;
let admin: TestClient;

before(async () => {
  s = await startSeededService();
  admin = connect(s.url, s.apiKey);
});
after(async () => {
  await admin?.dispose();
  await s?.close();
});

const post = async (loan: string, amount: string): Promise<string> =>
  dataOf(await s.graph(`mutation($loan: uuid!, $amount: numeric!) { insert_payments_one(object: {loan_id: $loan, date: "2026-11-20", amount: $amount, type: "regular", method: "ach"}) { id } }`, { loan, amount })).insert_payments_one.id;

describe('Streams', () => {
  it('deliver every inserted payment exactly once and in order, across a restart of the subscriber from its last cursor', async () => {
    const [loan] = await s.sql<{ id: string }>(`SELECT id FROM loans WHERE account_id = $1 AND status = 'servicing' ORDER BY id LIMIT 1`, [s.account.id]);
    const [{ now }] = (await s.sql<{ now: string }>(`SELECT to_json(clock_timestamp())#>>'{}' AS now`)) as [{ now: string }];
    const query = `subscription($loan: uuid!, $from: timestamptz!) {
      payments_stream(batch_size: 2, cursor: {initial_value: {posted_at: $from}, ordering: ASC}, where: {loan_id: {_eq: $loan}}) { id posted_at amount }
    }`;
    const received: { id: string; posted_at: string }[] = [];
    const read = async (stream: Subscription, count: number): Promise<void> => {
      while (received.length < count) {
        const batch = ((await stream.next()) as { data: { payments_stream: { id: string; posted_at: string }[] } }).data.payments_stream;
        assert.ok(batch.length >= 1 && batch.length <= 2, 'batches of at most batch_size rows, never empty');
        received.push(...batch);
      }
    };
    const posted: string[] = [];
    const first = subscribe(admin.client, query, { loan: loan!.id, from: now });
    for (const amount of ['11.01', '11.02', '11.03']) posted.push(await post(loan!.id, amount));
    await read(first, 3);
    first.stop();
    // While nobody listens, three more; then the subscriber comes back from the last cursor it saw.
    for (const amount of ['11.04', '11.05', '11.06']) posted.push(await post(loan!.id, amount));
    const resumed = subscribe(admin.client, query, { loan: loan!.id, from: received[received.length - 1]!.posted_at });
    await read(resumed, 6);
    posted.push(await post(loan!.id, '11.07'));
    await read(resumed, 7);
    resumed.stop();
    assert.deepEqual(received.map((row) => row.id), posted, 'each payment once, in the order posted');
    assert.deepEqual(
      (await s.sql<{ id: string }>(`SELECT id FROM payments WHERE account_id = $1 AND loan_id = $2 AND posted_at > $3 ORDER BY posted_at`, [s.account.id, loan!.id, now])).map((row) => row.id),
      posted,
    );
  });
});

describe('Streams over a cursor with equal values', () => {
  it('skip none of the rows that share a cursor value: a batch takes the rows tying with its last (PGlite\'s clock_timestamp() is to the millisecond)', async () => {
    const [loan] = await s.sql<{ id: string }>(`SELECT id FROM loans WHERE account_id = $1 AND status = 'servicing' ORDER BY id DESC LIMIT 1`, [s.account.id]);
    const [{ from }] = (await s.sql<{ from: string }>(`SELECT to_json(clock_timestamp() + interval '1 hour')#>>'{}' AS from`)) as [{ from: string }];
    // Five payments as one request's inserts (or a bulk import) may store them: 1, 3 and 1 sharing a posted_at.
    const offsets = [1, 2, 2, 2, 3];
    const inserted: string[] = [];
    for (const [i, ms] of offsets.entries()) {
      const [row] = await s.sql<{ id: string }>(
        `INSERT INTO payments (account_id, loan_id, date, amount, posted_at) VALUES ($1, $2, '2026-11-20', $3, $4::timestamptz + make_interval(secs => $5::int / 1000.0)) RETURNING id`,
        [s.account.id, loan!.id, `12.0${i}`, from, ms],
      );
      inserted.push(row!.id);
    }
    const stream = subscribe(admin.client, `subscription($loan: uuid!, $from: timestamptz!) {
      payments_stream(batch_size: 1, cursor: {initial_value: {posted_at: $from}, ordering: ASC}, where: {loan_id: {_eq: $loan}}) { id posted_at }
    }`, { loan: loan!.id, from });
    const batches: { id: string; posted_at: string }[][] = [];
    while (batches.flat().length < inserted.length) batches.push(((await stream.next()) as { data: { payments_stream: { id: string; posted_at: string }[] } }).data.payments_stream);
    stream.stop();
    assert.deepEqual(batches.flat().map((row) => row.id).sort(), [...inserted].sort(), 'every row once');
    assert.deepEqual(batches.map((batch) => batch.length), [1, 3, 1], 'batch_size 1, and the two rows tying with the second batch\'s last came with it');
    for (const batch of batches) assert.equal(new Set(batch.map((row) => row.posted_at)).size, 1);
  });
});

describe("The investor role's subscriptions", () => {
  it('never receive a row outside the role\'s filter and the subscription\'s own (generated filters)', async () => {
    const [investor] = await s.sql<{ person_id: string }>(
      `SELECT person_id FROM funding_sources WHERE account_id = $1 GROUP BY person_id ORDER BY count(DISTINCT loan_id) DESC, person_id LIMIT 1`,
      [s.account.id],
    );
    const personId = investor!.person_id;
    const key = await createApiKey(s.db, s.account.id, 'investor portal', { role: 'investor', variables: new Map([['person_id', personId]]) });
    const funded = (await s.sql<{ id: string }>(`SELECT DISTINCT loan_id AS id FROM funding_sources WHERE account_id = $1 AND person_id = $2 ORDER BY 1`, [s.account.id, personId])).map((row) => row.id);
    const [notFunded] = await s.sql<{ id: string }>(
      `SELECT id FROM loans l WHERE account_id = $1 AND status = 'servicing' AND NOT EXISTS (SELECT 1 FROM funding_sources f WHERE f.account_id = l.account_id AND f.loan_id = l.id AND f.person_id = $2) ORDER BY id LIMIT 1`,
      [s.account.id, personId],
    );
    assert.ok(funded.length && notFunded);
    const investorClient = connect(s.url, key.key);
    type Filter = { readonly minAmount: string | null; readonly type: string | null; readonly reversed: boolean | null };
    const graphqlWhere = (f: Filter): string =>
      [f.minAmount === null ? '' : `amount: {_gte: "${f.minAmount}"}`, f.type === null ? '' : `type: {_eq: "${f.type}"}`, f.reversed === null ? '' : `date_reversed: {_is_null: ${!f.reversed}}`].filter(Boolean).join(', ');
    /** The rows the investor may see that pass the filter, by independent SQL. */
    const expected = async (f: Filter): Promise<string[]> =>
      (
        await s.sql<{ id: string }>(
          `SELECT p.id FROM payments p WHERE p.account_id = $1
              AND EXISTS (SELECT 1 FROM funding_sources fs WHERE fs.account_id = p.account_id AND fs.loan_id = p.loan_id AND fs.person_id = $2)
              AND ($3::numeric IS NULL OR p.amount >= $3::numeric) AND ($4::text IS NULL OR p.type = $4) AND ($5::boolean IS NULL OR (p.date_reversed IS NOT NULL) = $5)
            ORDER BY p.id`,
          [s.account.id, personId, f.minAmount, f.type, f.reversed],
        )
      ).map((row) => row.id);
    const visible = new Set(await expected({ minAmount: null, type: null, reversed: null }));
    const filters = fc.sample(
      fc.record<Filter>({ minAmount: fc.constantFrom(null, '0.01', '500.00', '2000.00'), type: fc.constantFrom(null, 'regular', 'payoff', 'principal'), reversed: fc.constantFrom(null, true, false) }),
      { seed: 34, numRuns: 6 },
    );
    try {
      const lives = filters.map((f) => subscribe(investorClient.client, `subscription { payments(where: {${graphqlWhere(f)}}, order_by: {id: asc}) { id } }`));
      const check = async (index: number, message: { data: { payments: { id: string }[] } }): Promise<string[]> => {
        const ids = message.data.payments.map((row) => row.id);
        for (const id of ids) assert.ok(visible.has(id), `filter ${JSON.stringify(filters[index])} sent payment ${id}, which the investor may not see`);
        return ids;
      };
      for (const [index, live] of lives.entries()) assert.deepEqual(await check(index, await live.next()), await expected(filters[index]!));
      // Writes inside and outside the investor's loans; then each subscription shows exactly the oracle.
      const outside = await post(notFunded!.id, '2500.00');
      const inside = await post(funded[0]!, '2500.00');
      visible.add(inside);
      for (const [index, live] of lives.entries()) {
        const want = await expected(filters[index]!);
        assert.ok(!want.includes(outside));
        let latest = live.raw[live.raw.length - 1] as { data: { payments: { id: string }[] } };
        while (JSON.stringify(latest.data.payments.map((row) => row.id)) !== JSON.stringify(want)) latest = (await live.next(5_000)) as typeof latest;
        while (live.waiting) await check(index, await live.next());
        for (const message of live.raw) await check(index, message as { data: { payments: { id: string }[] } });
        live.stop();
      }
    } finally {
      await investorClient.dispose();
    }
  });
});
