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
