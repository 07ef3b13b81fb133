import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { tokenHeader } from '../support/http.js';
import { type RestClient } from '../support/restClient.js';
import { installTestClock, setTestClock } from '../support/testClock.js';
import { exactDataOf, num, send, startKeyedService, type KeyedService } from '../support/seededService.js';

/**
 * A loan's life as the servicer runs it (SPEC §7, §12 R6, R9): terms corrected after the loan is
 * paid off. The PATCH's schedule replays the ledger, and the status follows it — a paid-off loan
 * whose amount falls below what it was paid holds credit (`overpaid`), one whose amount rises owes
 * again (`servicing`) — rather than the PATCH writing back the status it read before the replay
 * (before session 39 that was refused as "closing by hand" with the money the correction made,
 * naming `Status`, a field the servicer never sent).
 */
let service: KeyedService;
let rest: RestClient;
let key: string;

before(async () => {
  service = await startKeyedService();
  ({ rest, key } = service);
  await installTestClock(service.db);
  await setTestClock(service.db, '2026-06-30');
});

after(async () => {
  await service?.close();
});

async function graph(query: string, variables: Record<string, unknown>): Promise<any> {
  const answer = await send(`${service.url}/api/graph`, {
    method: 'POST',
    headers: { ...tokenHeader(key), 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  return exactDataOf(answer);
}

async function ledgerOf(id: string): Promise<any> {
  const data = await graph(
    `query ($id: uuid!) { loans_by_pk(id: $id) { status date_closed principal_outstanding credit_balance next: schedules(where: {is_next: {_eq: true}}) { number } } }`,
    { id },
  );
  return data.loans_by_pk;
}

async function pay(loanId: string, date: string, amount: string, type = 'regular'): Promise<void> {
  await graph(`mutation ($l: uuid!, $d: date!, $a: numeric!, $t: String!) { insert_payments_one(object: {loan_id: $l, date: $d, amount: $a, type: $t}) { id } }`, {
    l: loanId,
    d: date,
    a: amount,
    t: type,
  });
}

describe('terms corrected after a loan is paid off', () => {
  let loanId: string;

  it('a loan of 1,200.00 at 0 % over 12 months, paid 1,200.00 at once, is closed', async () => {
    const created = await rest.post('/api/loan', { Name: 'Paid at once', Amount: 1200, Rate: 0, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' });
    assert.equal(created.status, 201, created.text);
    loanId = created.json.loan.id;
    await pay(loanId, '2026-02-15', '1200.00');
    assert.deepEqual(await ledgerOf(loanId), { status: 'closed', date_closed: '2026-02-15', principal_outstanding: num('0.00'), credit_balance: num('0.00'), next: [] });
  });

  it('the Amount corrected down to 1,000.00: 200.00 of the payment is credit and the loan is overpaid', async () => {
    const patched = await rest.patch(`/api/loan/${loanId}`, { Amount: 1000 });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.json.loan.status, 'overpaid');
    assert.deepEqual(await ledgerOf(loanId), { status: 'overpaid', date_closed: '2026-02-15', principal_outstanding: num('0.00'), credit_balance: num('200.00'), next: [] });
  });

  it('the Amount corrected up to 1,500.00: 300.00 is owed, the loan is back in servicing and row 10 is next', async () => {
    const patched = await rest.patch(`/api/loan/${loanId}`, { Amount: 1500 });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.json.loan.status, 'servicing');
    // Rows of 125.00: the 1,200.00 paid rows 1–9 (1,125.00) and 75.00 of row 10.
    assert.deepEqual(await ledgerOf(loanId), { status: 'servicing', date_closed: null, principal_outstanding: num('300.00'), credit_balance: num('0.00'), next: [{ number: num(10) }] });
  });

  it('paying the 300.00 closes it again', async () => {
    await pay(loanId, '2026-06-30', '300.00');
    assert.deepEqual(await ledgerOf(loanId), { status: 'closed', date_closed: '2026-06-30', principal_outstanding: num('0.00'), credit_balance: num('0.00'), next: [] });
  });

  it("the reference loan paid off (R6), then its rate corrected to 10 %: the PATCH is taken and the loan's status follows the replay", async () => {
    const created = await rest.post('/api/loan', { Name: 'Reference', Amount: 100000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' });
    const id = created.json.loan.id;
    await pay(id, '2026-02-15', '8884.88');
    await pay(id, '2026-03-15', '8884.88');
    await pay(id, '2026-03-31', '84600.20', 'payoff');
    assert.equal((await ledgerOf(id)).status, 'closed');
    const patched = await rest.patch(`/api/loan/${id}`, { Rate: 10 });
    assert.equal(patched.status, 200, patched.text);
    const after = await ledgerOf(id);
    // At 10 % the same money pays more than the loan owes: the rest is credit (R6, R9).
    assert.equal(after.status, 'overpaid');
    assert.deepEqual(after.principal_outstanding, num('0.00'));
    assert.ok(Number(after.credit_balance.text) > 0, after.credit_balance.text);
    assert.equal(patched.json.loan.status, after.status, 'the PATCH answers the status it left');
  });

  it('a PATCH that gives Status is still checked: closing the loan owing money by hand is a 400 naming Status', async () => {
    const created = await rest.post('/api/loan', { Name: 'Owes', Amount: 1200, Rate: 0, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' });
    const id = created.json.loan.id;
    await pay(id, '2026-02-15', '100.00');
    const refused = await rest.patch(`/api/loan/${id}`, { Status: 'closed', Name: 'Owes, renamed' });
    assert.equal(refused.status, 400, refused.text);
    assert.match(refused.json.fields.Status, /still owes principal 1100\.00/);
    const unchanged = await rest.get(`/api/loan/${id}`);
    assert.equal(unchanged.json.loan.status, 'servicing');
    assert.equal(unchanged.json.loan.name, 'Owes', 'nothing of the request is written');
  });
});

describe('closing a loan by hand and its credit (R9, migration 0078)', () => {
  let loanId: string;
  let extraId: string;

  it('an overpaid loan is told to refund its credit, not that it "still owes" and "closes when paid off"', async () => {
    const created = await rest.post('/api/loan', { Name: 'Overpaid', Amount: 1200, Rate: 0, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' });
    loanId = created.json.loan.id;
    await pay(loanId, '2026-02-15', '1200.00');
    const extra = await graph(`mutation ($l: uuid!) { insert_payments_one(object: {loan_id: $l, date: "2026-02-20", amount: "50.00"}) { id } }`, { l: loanId });
    extraId = extra.insert_payments_one.id;
    assert.equal((await ledgerOf(loanId)).status, 'overpaid');
    const refused = await rest.patch(`/api/loan/${loanId}`, { Status: 'closed' });
    assert.equal(refused.status, 400, refused.text);
    const sentence = 'the loan owes nothing but holds credit 50.00: refund it (a payment of type refund) and it closes by itself';
    assert.deepEqual(refused.json, { error: sentence, fields: { Status: sentence } });
  });

  it('the refund closes it, as the answer said', async () => {
    await pay(loanId, '2026-02-25', '50.00', 'refund');
    assert.deepEqual(await ledgerOf(loanId), { status: 'closed', date_closed: '2026-02-15', principal_outstanding: num('0.00'), credit_balance: num('0.00'), next: [] });
  });

  it('the refunded payment reversed: the borrower owes the 50.00 back, and closing by hand is refused, not answered 200 with the loan still in servicing', async () => {
    await graph(`mutation ($id: uuid!) { update_payments_by_pk(pk_columns: {id: $id}, _set: {date_reversed: "2026-03-01"}) { id } }`, { id: extraId });
    assert.deepEqual(await ledgerOf(loanId), { status: 'servicing', date_closed: null, principal_outstanding: num('0.00'), credit_balance: num('-50.00'), next: [] });
    const refused = await rest.patch(`/api/loan/${loanId}`, { Status: 'closed' });
    assert.equal(refused.status, 400, refused.text);
    assert.match(refused.json.fields.Status, /credit -50\.00/);
    const graphRefused = await send(`${service.url}/api/graph`, {
      method: 'POST',
      headers: { ...tokenHeader(key), 'content-type': 'application/json' },
      body: JSON.stringify({ query: `mutation ($id: uuid!) { update_loans_by_pk(pk_columns: {id: $id}, _set: {status: "closed"}) { status } }`, variables: { id: loanId } }),
    });
    const error = (graphRefused.body as { errors: { message: string; extensions: { code: string; constraint: string } }[] }).errors[0]!;
    assert.equal(error.extensions.code, 'check-violation');
    assert.equal(error.extensions.constraint, 'loans_close_with_balance');
    assert.equal((await ledgerOf(loanId)).status, 'servicing');
  });
});

describe('reopening a paid-off loan by hand (R9, migration 0078)', () => {
  it('PATCH Status servicing on a loan the ledger closed is a 400 saying what reopens it, not a 200 that leaves it closed', async () => {
    const created = await rest.post('/api/loan', { Name: 'Settled', Amount: 1200, Rate: 0, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' });
    const id = created.json.loan.id;
    await pay(id, '2026-02-15', '1200.00');
    const refused = await rest.patch(`/api/loan/${id}`, { Status: 'servicing' });
    assert.equal(refused.status, 400, refused.text);
    const sentence =
      'the loan is paid off (settled on 2026-02-15): its status follows the ledger, and it goes back to servicing by itself when a payment is reversed or its terms change so that it owes again';
    assert.deepEqual(refused.json, { error: sentence, fields: { Status: sentence } });
    const graphRefused = await send(`${service.url}/api/graph`, {
      method: 'POST',
      headers: { ...tokenHeader(key), 'content-type': 'application/json' },
      body: JSON.stringify({ query: `mutation ($id: uuid!) { update_loans_by_pk(pk_columns: {id: $id}, _set: {status: "servicing"}) { status } }`, variables: { id } }),
    });
    const error = (graphRefused.body as { errors: { message: string; extensions: { code: string; fields: string[] } }[] }).errors[0]!;
    assert.equal(error.message, `update_loans_by_pk: status: ${sentence}`);
    assert.deepEqual(error.extensions.fields, ['status']);
    assert.deepEqual(await ledgerOf(id), { status: 'closed', date_closed: '2026-02-15', principal_outstanding: num('0.00'), credit_balance: num('0.00'), next: [] });
  });

  it('a lead closed by hand (never funded) still goes to servicing', async () => {
    const created = await rest.post('/api/loan', { Name: 'Lead closed', Amount: 1200, Rate: 0, Term: 12, Frequency: 'monthly', Date_Funded: '2026-06-15' });
    const id = created.json.loan.id;
    assert.equal((await rest.patch(`/api/loan/${id}`, { Status: 'closed' })).status, 200);
    const reopened = await rest.patch(`/api/loan/${id}`, { Status: 'servicing' });
    assert.equal(reopened.status, 200, reopened.text);
    assert.deepEqual(await ledgerOf(id), { status: 'servicing', date_closed: null, principal_outstanding: num('1200.00'), credit_balance: num('0.00'), next: [{ number: num(1) }] });
  });
});


describe('the day a paid-off loan closed follows its replay when its terms, Date_Funded or payments change (R9)', () => {
  it('REST: paid 500.00 twice, closed on the second; the Amount corrected to 500.00 settles it on the first: date_closed moves back', async () => {
    const created = await rest.post('/api/loan', { Name: 'Closed twice', Amount: 1000, Rate: 0, Term: 10, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' });
    const id = created.json.loan.id;
    await pay(id, '2026-02-15', '500.00');
    await pay(id, '2026-03-15', '500.00');
    assert.equal((await ledgerOf(id)).date_closed, '2026-03-15');
    const patched = await rest.patch(`/api/loan/${id}`, { Amount: 500 });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(await ledgerOf(id), { status: 'overpaid', date_closed: '2026-02-15', principal_outstanding: num('0.00'), credit_balance: num('500.00'), next: [] });
  });

  it('REST: Date_Funded moved later (less interest) settles it on the earlier payment; moved back, it closes on the later one', async () => {
    // 1,000.00 at 12 % over 2 months: 1,005.00 on 02-15 does not cover a month's interest (10.00); the 100.00 of 03-15 settles it.
    const created = await rest.post('/api/loan', { Name: 'Funding day moved', Amount: 1000, Rate: 12, Term: 2, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' });
    const id = created.json.loan.id;
    await pay(id, '2026-02-15', '1005.00');
    await pay(id, '2026-03-15', '100.00');
    assert.deepEqual([(await ledgerOf(id)).status, (await ledgerOf(id)).date_closed], ['overpaid', '2026-03-15']);
    const steps: [string, string, string | null][] = [
      ['2026-02-01', 'overpaid', '2026-02-15'], // two weeks' interest: the 1,005.00 pays it off
      ['2026-01-15', 'overpaid', '2026-03-15'],
    ];
    for (const [funded, status, closed] of steps) {
      const patched = await rest.patch(`/api/loan/${id}`, { Date_Funded: funded });
      assert.equal(patched.status, 200, patched.text);
      assert.equal(patched.json.loan.status, status, `Date_Funded ${funded}`);
      const after = await ledgerOf(id);
      assert.deepEqual([after.status, after.date_closed], [status, closed], `Date_Funded ${funded}`);
    }
  });

  it('REST: Date_Funded moved a year back makes its rows late: the late fees are owed, the loan is back in servicing and date_closed is cleared', async () => {
    const created = await rest.post('/api/loan', { Name: 'Funded earlier', Amount: 1000, Rate: 0, Term: 2, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' });
    const id = created.json.loan.id;
    await pay(id, '2026-02-15', '1000.00');
    assert.deepEqual([(await ledgerOf(id)).status, (await ledgerOf(id)).date_closed], ['closed', '2026-02-15']);
    const patched = await rest.patch(`/api/loan/${id}`, { Date_Funded: '2025-06-01' });
    assert.equal(patched.status, 200, patched.text);
    const after = await ledgerOf(id);
    assert.deepEqual([after.status, after.date_closed], ['servicing', null]);
  });

  it('GraphQL: the settling payment reversed, the loan owes again and date_closed is cleared; a payment on a later day closes it on that day', async () => {
    const created = await rest.post('/api/loan', { Name: 'Reversed payoff', Amount: 1000, Rate: 0, Term: 10, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' });
    const id = created.json.loan.id;
    await pay(id, '2026-02-15', '400.00');
    const settling = await graph(`mutation ($l: uuid!) { insert_payments_one(object: {loan_id: $l, date: "2026-03-15", amount: "600.00"}) { id } }`, { l: id });
    assert.equal((await ledgerOf(id)).date_closed, '2026-03-15');
    await graph(`mutation ($id: uuid!) { update_payments_by_pk(pk_columns: {id: $id}, _set: {date_reversed: "2026-03-20", reversal_reason: "error"}) { id } }`, { id: settling.insert_payments_one.id });
    const reopened = await ledgerOf(id);
    assert.deepEqual([reopened.status, reopened.date_closed, reopened.principal_outstanding], ['servicing', null, num('600.00')]);
    await pay(id, '2026-04-10', '600.00');
    assert.equal((await ledgerOf(id)).date_closed, '2026-04-10');
  });
});
