import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { dataOf, startSeededService, type SeededService } from '../support/seededService.js';
import { connect, subscribe, type TestClient } from '../support/graphSocket.js';

/** Issue 34, Done-when 1: live queries over graphql-transport-ws, refreshed by the database's change notices. */
let s: SeededService;
let loanId: string;
let client: TestClient;

const NEXT_ROW = `subscription Next($id: uuid!) { loans_by_pk(id: $id) { id schedules(where: {is_next: {_eq: true}}) { number payment } } }`;

before(async () => {
  s = await startSeededService();
  const [loan] = await s.sql<{ id: string }>(
    `SELECT l.id FROM loans l WHERE l.account_id = $1 AND l.status = 'servicing'
        AND EXISTS (SELECT 1 FROM schedules x JOIN schedules y ON y.account_id = x.account_id AND y.loan_id = x.loan_id AND y.number = x.number + 3
                     WHERE x.account_id = l.account_id AND x.loan_id = l.id AND x.is_next AND x.number > 1 AND y.payment = x.payment)
      ORDER BY l.id LIMIT 1`,
    [s.account.id],
  );
  loanId = loan!.id;
  client = connect(s.url, s.apiKey);
});
after(async () => {
  await client?.dispose();
  await s?.close();
});

describe('Live queries', () => {
  it("a subscriber to a loan's next schedule row gets it at once, then the new row after a payment posted over HTTP", async () => {
    const live = subscribe(client.client, NEXT_ROW, { id: loanId });
    const first = await live.next();
    const [row] = first.data.loans_by_pk.schedules as { number: number; payment: number }[];
    assert.ok(row);
    dataOf(await s.graph(`mutation($loan: uuid!, $amount: numeric!) { insert_payments_one(object: {loan_id: $loan, date: "2026-11-20", amount: $amount, type: "regular", method: "ach"}) { id } }`, { loan: loanId, amount: String(row.payment) }));
    const second = await live.next();
    assert.deepEqual(second.data.loans_by_pk.schedules.map((r: { number: number }) => r.number), [row.number + 1]);
    live.stop();
  });
});

describe('Multiplexing: one statement per cohort', () => {
  it('subscribers of one document share ONE statement per refresh, and nothing written runs none', async () => {
    const loans = (await s.sql<{ id: string }>(`SELECT id FROM loans WHERE account_id = $1 AND status = 'servicing' ORDER BY id LIMIT 3`, [s.account.id])).map((row) => row.id);
    const query = `subscription($id: uuid!) { loans_by_pk(id: $id) { id payments_aggregate { aggregate { count } } } }`;
    const subscriptions = loans.map((id) => subscribe(client.client, query, { id }));
    const firsts = await Promise.all(subscriptions.map((live) => live.next()));
    assert.deepEqual(firsts.map((first) => first.data.loans_by_pk.id), loans, 'each subscriber gets its own loan');
    /** The metrics hook: this process's subscriptions as `/healthz` reports them to an admin key. */
    const usage = async (): Promise<{ subscriptions: number; cohorts: number; statementsRun: number }> =>
      ((await (await fetch(`${s.url}/healthz`, { headers: { authorization: `Token ${s.apiKey}` } })).json()) as { subscriptions: { subscriptions: number; cohorts: number; statementsRun: number } }).subscriptions;
    // The first test's subscription ends when the server reads its `complete`.
    for (let tries = 0; (await usage()).subscriptions !== 3; tries++) {
      assert.ok(tries < 50, `open subscriptions: ${JSON.stringify(await usage())}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const before = await usage();
    assert.equal(before.cohorts, 1);
    const cohortStatements: string[] = [];
    const stop = s.db.observe((text) => {
      if (text.includes('json_to_recordset')) cohortStatements.push(text);
    });
    try {
      dataOf(await s.graph(`mutation($loan: uuid!) { insert_payments_one(object: {loan_id: $loan, date: "2026-11-20", amount: "10.00", type: "regular", method: "ach"}) { id } }`, { loan: loans[1] }));
      const changed = await subscriptions[1]!.next();
      assert.equal(changed.data.loans_by_pk.payments_aggregate.aggregate.count, firsts[1].data.loans_by_pk.payments_aggregate.aggregate.count + 1);
      assert.equal(cohortStatements.length, 1, 'one statement refreshed the cohort (for the subscriber of the loan written: tests/subscriptions/narrowRefresh.test.ts)');
      assert.equal(subscriptions[0]!.waiting + subscriptions[2]!.waiting, 0, 'an unchanged result is not sent again');
      // Nothing written: no statement at all, whatever the wait.
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(cohortStatements.length, 1);
      assert.equal((await usage()).statementsRun - before.statementsRun, 1, 'the counter counts the statements run');
    } finally {
      stop();
      for (const live of subscriptions) live.stop();
    }
  });
});
