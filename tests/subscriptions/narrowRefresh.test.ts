import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildEngine } from '../../app/engineHolder.js';
import type { GraphEngine } from '../../engine/index.js';
import { dataOf, METADATA_PATH, startSeededService, type SeededService } from '../support/seededService.js';
import { connect, subscribe, type TestClient } from '../support/graphSocket.js';

/**
 * Issue 34, Done-when 2: a write refreshes only the live queries it can change. Notices name the
 * loans written (migration 0031); a cohort keyed by a loan variable (`refreshKeys`) refreshes
 * only the subscribers of those loans; every other read still refreshes the whole account.
 */
let s: SeededService;
let engine: GraphEngine;
let client: TestClient;
let loans: string[];

before(async () => {
  s = await startSeededService();
  engine = await buildEngine(METADATA_PATH, s.db, { maxDepth: 12, maxRows: null, planCacheSize: 100 });
  loans = (await s.sql<{ id: string }>(`SELECT id FROM loans WHERE account_id = $1 AND status = 'servicing' ORDER BY id LIMIT 20`, [s.account.id])).map((row) => row.id);
  assert.equal(loans.length, 20);
  client = connect(s.url, s.apiKey);
});
after(async () => {
  await client?.dispose();
  await s?.close();
});

/** The tables of a subscription's plan keyed by a loan, each with the variable names at its key parameters. */
function keyed(query: string, variables: Record<string, unknown>, role = engine, principal: Parameters<GraphEngine['prepareSubscription']>[1] = s.account.id): Record<string, string[]> {
  const prepared = role.prepareSubscription({ query, variables }, principal);
  assert.equal(prepared.kind, 'statement');
  const statement = prepared as Extract<typeof prepared, { kind: 'statement' }>;
  const named = (index: number): string => {
    const param = statement.params[index]!;
    return param.kind === 'var' ? `$${param.name}` : param.kind === 'const' ? `"${String(param.value)}"` : param.kind;
  };
  return Object.fromEntries([...(statement.refreshKeys ?? new Map())].map(([table, indexes]) => [table, [...new Set(indexes.map(named))]]).sort(([a], [b]) => String(a).localeCompare(String(b))));
}

describe('Which reads a loan keys (refreshKeys, from the plan)', () => {
  it('a loan by its id: the loan and every row joined to it by loan id; a person reached through a borrow is not keyed', () => {
    assert.deepEqual(keyed(`subscription($id: uuid!) { loans_by_pk(id: $id) { id payments_aggregate { aggregate { count } } schedules { number } borrows { person { name } } } }`, { id: loans[0] }), {
      borrows: ['$id'],
      loans: ['$id'],
      payments: ['$id'],
      schedules: ['$id'],
    });
  });

  it('a loan id written in the document keys as well as a variable; a list pinned by loan_id _eq keys its rows', () => {
    assert.deepEqual(keyed(`subscription { loans_by_pk(id: "${loans[0]}") { id fees { amount } } }`, {}), { fees: [`"${loans[0]}"`], loans: [`"${loans[0]}"`] });
    assert.deepEqual(keyed(`subscription($loan: uuid!) { payments(where: {_and: [{loan_id: {_eq: $loan}}, {amount: {_gt: "0"}}]}) { id loan { name } } }`, { loan: loans[0] }), { loans: ['$loan'], payments: ['$loan'] });
    assert.deepEqual(
      keyed(`subscription($loan: uuid!) { payments_stream(batch_size: 10, cursor: {initial_value: {posted_at: "2020-01-01T00:00:00Z"}}, where: {loan_id: {_eq: $loan}}) { id posted_at } }`, { loan: loans[0] }),
      { payments: ['$loan'] },
    );
  });

  it('nothing keyed: a list not pinned to one loan, a pin under _or, a table reached back through a person, a computed field, listed or aggregated', () => {
    assert.deepEqual(keyed(`subscription { loans(where: {status: {_eq: "servicing"}}, limit: 5) { id payments { id } } }`, {}), {});
    assert.deepEqual(keyed(`subscription($a: uuid!, $b: uuid!) { payments(where: {_or: [{loan_id: {_eq: $a}}, {loan_id: {_eq: $b}}]}) { id } }`, { a: loans[0], b: loans[1] }), {});
    const back = keyed(`subscription($id: uuid!) { loans_by_pk(id: $id) { id payments { id } borrows { person { borrows { loan { payments { amount } } } } } } }`, { id: loans[0] });
    assert.equal(back.payments, undefined, 'payments of the person’s other loans are read too');
    assert.equal(back.loans, undefined);
    assert.deepEqual(keyed(`subscription($id: uuid!) { loans_by_pk(id: $id) { id payoff } }`, { id: loans[0] }), {});
    // Aggregated (session 40) or ordered by through an aggregate: still a call of the function.
    assert.deepEqual(keyed(`subscription($id: uuid!) { loans_aggregate(where: {id: {_eq: $id}}) { aggregate { sum { payoff } } } }`, { id: loans[0] }), {});
  });

  it("the investor role: its filter's funding sources are read by loan too, its people are not", async () => {
    const [source] = await s.sql<{ person_id: string; loan_id: string }>(`SELECT person_id, loan_id FROM funding_sources WHERE account_id = $1 AND person_id IS NOT NULL LIMIT 1`, [s.account.id]);
    assert.ok(source, 'the seed has funding sources');
    const investor = engine.forRole('investor')!;
    const principal = { accountId: s.account.id, keyVariables: new Map([['person_id', source.person_id]]) };
    const keys = keyed(`subscription($id: uuid!) { loans_by_pk(id: $id) { id payments { id } borrows { person { name } } } }`, { id: source.loan_id }, investor, principal);
    assert.deepEqual(keys.funding_sources, ['$id']);
    assert.deepEqual(keys.payments, ['$id']);
    assert.equal(keys.people, undefined);
  });
});

describe('Change notices name the loans written (migration 0031)', () => {
  async function noticesOf(write: () => Promise<unknown>): Promise<string[]> {
    const heard: string[] = [];
    const stop = await s.db.listen('loanql_changes', (payload) => heard.push(payload));
    try {
      await write();
      // A notice of this write arrives after it; this marker is sent after it, so it comes last.
      await s.sql(`SELECT pg_notify('loanql_changes', 'marker')`);
      for (let tries = 0; !heard.includes('marker'); tries++) {
        assert.ok(tries < 200, 'the marker notice arrives');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    } finally {
      await stop();
    }
    return heard.filter((payload) => payload !== 'marker');
  }

  it("a row of one loan: its table, the account and the loan; a row moved between loans names both; past 16 loans, none (every loan)", async () => {
    const account = s.account.id;
    const [a, b] = [loans[0]!, loans[1]!];
    const inserted = await noticesOf(() => s.sql(`INSERT INTO comments (account_id, loan_id, text) VALUES ($1, $2, 'a note')`, [account, a]));
    assert.deepEqual(inserted, [`comments ${account} ${a}`]);
    const moved = await noticesOf(() => s.sql(`UPDATE comments SET loan_id = $2 WHERE account_id = $1 AND loan_id = $3 AND text = 'a note'`, [account, b, a]));
    assert.deepEqual(moved, [`comments ${account} ${[a, b].sort().join(',')}`]);
    const many = await noticesOf(() => s.sql(`INSERT INTO comments (account_id, loan_id, text) SELECT $1, id, 'many' FROM unnest($2::uuid[]) AS id`, [account, loans.slice(0, 17)]));
    assert.deepEqual(many, [`comments ${account}`]);
    const sixteen = await noticesOf(() => s.sql(`DELETE FROM comments WHERE account_id = $1 AND text = 'many' AND loan_id = ANY ($2::uuid[])`, [account, loans.slice(0, 16)]));
    assert.deepEqual(sixteen, [`comments ${account} ${loans.slice(0, 16).sort().join(',')}`]);
    const loanRow = await noticesOf(() => s.sql(`UPDATE loans SET custom_fields = custom_fields WHERE account_id = $1 AND id = $2`, [account, b]));
    assert.ok(loanRow.includes(`loans ${account} ${b}`), JSON.stringify(loanRow));
  });
});

describe('A write refreshes only the subscribers of its loan', () => {
  it("a payment to loan A runs no statement for loan B's subscribers, B still updates when written, and a person's change reaches every reader", async () => {
    const [a, b] = [loans[2]!, loans[3]!];
    const query = `subscription($id: uuid!) { loans_by_pk(id: $id) { id payments_aggregate { aggregate { count } } borrows { person { name } } } }`;
    const [liveA, liveB] = [subscribe(client.client, query, { id: a }), subscribe(client.client, query, { id: b })];
    const [firstA, firstB] = await Promise.all([liveA.next(), liveB.next()]);
    const count = (result: any): number => result.data.loans_by_pk.payments_aggregate.aggregate.count;
    /** Every loan a cohort statement was run for, from its json parameter. */
    const refreshedLoans: string[] = [];
    const stop = s.db.observe((text, values) => {
      if (!text.includes('json_to_recordset')) return;
      for (const row of JSON.parse(String(values[0])) as Record<string, unknown>[]) refreshedLoans.push(...Object.values(row).filter((value) => value === a || value === b).map(String));
    });
    const pay = (loan: string): Promise<unknown> =>
      s.graph(`mutation($loan: uuid!) { insert_payments_one(object: {loan_id: $loan, date: "2026-11-20", amount: "10.00", type: "regular", method: "ach"}) { id } }`, { loan }).then(dataOf);
    try {
      // The writes of the tests before (comments on these loans among others) may still be on
      // their way to the live queries under load: their refreshes land before this test's write.
      await new Promise((resolve) => setTimeout(resolve, 500));
      refreshedLoans.length = 0;
      await pay(a);
      assert.equal(count(await liveA.next()), count(firstA) + 1);
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.ok(refreshedLoans.length > 0 && refreshedLoans.every((loan) => loan === a), `refreshed for ${JSON.stringify(refreshedLoans)}`);
      assert.equal(liveB.waiting, 0);

      refreshedLoans.length = 0;
      await pay(b);
      assert.equal(count(await liveB.next()), count(firstB) + 1);
      assert.ok(refreshedLoans.every((loan) => loan === b), `refreshed for ${JSON.stringify(refreshedLoans)}`);
      assert.equal(liveA.waiting, 0);

      // People have no loan key: a borrower renamed refreshes every subscriber of the account.
      const [borrower] = await s.sql<{ person_id: string }>(`SELECT person_id FROM borrows WHERE account_id = $1 AND loan_id = $2 LIMIT 1`, [s.account.id, a]);
      assert.ok(borrower, 'loan A has a borrower');
      dataOf(await s.graph(`mutation($id: uuid!) { update_people_by_pk(pk_columns: {id: $id}, _set: {name: "Renamed Borrower"}) { id } }`, { id: borrower.person_id }));
      const renamed = await liveA.next();
      assert.ok((renamed.data.loans_by_pk.borrows as { person: { name: string } }[]).some((row) => row.person.name === 'Renamed Borrower'));
    } finally {
      stop();
      liveA.stop();
      liveB.stop();
    }
  });
});
