import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { graphBody } from '../support/graphData.js';
import { startKeyedService, type KeyedService } from '../support/seededService.js';

/**
 * Issue 29, Done when 1: every worked example of SPEC §12 R1, R2 and R5–R9 over HTTP, to the
 * cent — the reference loan of §7 created over REST, payments posted and reversed through
 * GraphQL, figures read through GraphQL and the REST ledger routes. Late fees (R4) are the
 * replay's own: a row unpaid after its grace period gets one, dated due + grace + 1.
 */
let s: KeyedService;

before(async () => {
  s = await startKeyedService();
});
after(() => s?.close());

const graph = (query: string, variables: Record<string, unknown> = {}): Promise<any> => graphBody(s.url, s.key, query, variables);

/** The reference loan of SPEC §7 (100,000 at 12 %, 12 monthly, funded 2026-01-15), in servicing. */
async function referenceLoan(settings: Record<string, string | number> = {}): Promise<string> {
  await s.db.query(`INSERT INTO products (account_id, name, is_default) VALUES ($1, 'Default', true) ON CONFLICT DO NOTHING`, [s.accountId]);
  for (const [setting, value] of Object.entries(settings)) {
    await s.db.query(`UPDATE products SET ${setting} = $2 WHERE account_id = $1`, [s.accountId, value]);
  }
  const created = await s.rest.post('/api/loan', {
    Name: 'Reference loan', Amount: 100000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing',
  });
  assert.equal(created.status, 201, created.text);
  assert.equal(created.exact.loan.regular_payment.text, '8884.88');
  return created.json.loan.id as string;
}

async function pay(loan: string, date: string, amount: string, type = 'regular'): Promise<string> {
  const answer = await graph(
    `mutation ($loan: uuid!, $date: date!, $amount: numeric!, $type: String!) {
       insert_payments_one(object: {loan_id: $loan, date: $date, amount: $amount, type: $type, method: "ach"}) { id }
     }`,
    { loan, date, amount, type },
  );
  assert.equal(answer.errors, undefined, JSON.stringify(answer.errors));
  return answer.data.insert_payments_one.id as string;
}

async function reverse(payment: string, date: string, reason: string): Promise<void> {
  const answer = await graph(
    `mutation ($id: uuid!, $date: date!, $reason: String!) {
       update_payments_by_pk(pk_columns: {id: $id}, _set: {date_reversed: $date, reversal_reason: $reason}) { id }
     }`,
    { id: payment, date, reason },
  );
  assert.equal(answer.errors, undefined, JSON.stringify(answer.errors));
}

/** The loan's fees as of a day, as `kind date amount` strings. */
async function feesOn(loan: string, date: string): Promise<string[]> {
  const ledger = await s.rest.get(`/api/loan/${loan}/ledger?date=${date}`);
  assert.equal(ledger.status, 200, ledger.text);
  return ledger.json.fees.map((f: any) => `${f.kind} ${f.date} ${Number(f.amount).toFixed(2)}`);
}

/** Allocation lines of the loan's payments, as `row component amount` strings, in order. */
async function allocations(loan: string): Promise<string[]> {
  const answer = await graph(
    `query ($loan: uuid!) { loans_by_pk(id: $loan) { payments(order_by: {date: asc}) { allocations(order_by: {position: asc}) { row_number component amount fee { kind } } } } }`,
    { loan },
  );
  assert.equal(answer.errors, undefined, JSON.stringify(answer.errors));
  return answer.data.loans_by_pk.payments.flatMap((p: any) =>
    p.allocations.map((a: any) => `${a.fee ? `fee(${a.fee.kind})` : `row ${a.row_number}`} ${a.component} ${Number(a.amount).toFixed(2)}`),
  );
}

async function payoff(loan: string, date: string): Promise<any> {
  const answer = await s.rest.get(`/api/loan/${loan}/payoff?date=${date}`);
  assert.equal(answer.status, 200, answer.text);
  return answer.json;
}

async function onTime(loan: string): Promise<void> {
  await pay(loan, '2026-02-15', '8884.88');
  await pay(loan, '2026-03-15', '8884.88');
}

describe('SPEC §12 worked examples over HTTP (issue 29)', () => {
  it('R1: 10,000.00 on 2026-03-20 after an unpaid February pays row 1 in full, then row 2 interest 921.15 and principal 193.97', async () => {
    const loan = await referenceLoan();
    await pay(loan, '2026-03-20', '10000.00');
    assert.deepEqual(await allocations(loan), ['row 1 interest 1000.00', 'row 1 principal 7884.88', 'row 2 interest 921.15', 'row 2 principal 193.97']);
  });

  it('R1 with fees_interest_principal: the fee 444.24, row 1 1,000.00 + 7,884.88, row 2 interest 670.88', async () => {
    const loan = await referenceLoan({ allocation_order: 'fees_interest_principal' });
    await pay(loan, '2026-03-20', '10000.00');
    assert.deepEqual(await allocations(loan), ['fee(late) fee 444.24', 'row 1 interest 1000.00', 'row 1 principal 7884.88', 'row 2 interest 670.88']);
    await s.db.query(`UPDATE products SET allocation_order = 'interest_principal_then_fees' WHERE account_id = $1`, [s.accountId]);
  });

  it('R2: rows 1–2 paid on time, as of 2026-03-31: principal 84,151.39; accrued 448.81 / 442.66 / 420.76 by day count; per diem 28.05', async () => {
    const loan = await referenceLoan();
    await onTime(loan);
    const quote = await payoff(loan, '2026-03-31');
    assert.deepEqual([quote.principal_outstanding, quote.accrued_interest, quote.per_diem, quote.interest_due], [84151.39, 448.81, 28.05, 0]);
    // Stored on the loan: as of the account's business date (today), so only the date-free figures are fixed here.
    const stored = await graph(`query ($loan: uuid!) { loans_by_pk(id: $loan) { principal_outstanding credit_balance oldest_unpaid_due } }`, { loan });
    assert.deepEqual(stored.data.loans_by_pk, { principal_outstanding: 84151.39, credit_balance: 0, oldest_unpaid_due: '2026-04-15' });
    for (const [dayCount, accrued] of [['actual/365', 442.66], ['30/360', 420.76]] as const) {
      await s.db.query(`UPDATE products SET day_count = $2 WHERE account_id = $1`, [s.accountId, dayCount]);
      assert.equal((await payoff(loan, '2026-03-31')).accrued_interest, accrued, dayCount);
    }
    await s.db.query(`UPDATE products SET day_count = 'actual/360' WHERE account_id = $1`, [s.accountId]);
  });

  it('R3: R1\'s loan is 5 days past due on 2026-03-20 after the payment', async () => {
    const loan = await referenceLoan();
    assert.equal((await payoff(loan, '2026-03-19')).days_past_due, 32);
    await pay(loan, '2026-03-20', '10000.00');
    assert.equal((await payoff(loan, '2026-03-20')).days_past_due, 5);
  });

  it('R4: row 1 unpaid on 2026-02-25 gets 444.24 dated 02-26; after R1\'s payment row 2 is short at 03-25: a second 444.24 dated 03-26', async () => {
    const loan = await referenceLoan();
    assert.deepEqual(await feesOn(loan, '2026-02-25'), []);
    assert.deepEqual(await feesOn(loan, '2026-02-26'), ['late 2026-02-26 444.24']);
    await pay(loan, '2026-03-20', '10000.00');
    assert.deepEqual(await feesOn(loan, '2026-03-25'), ['late 2026-02-26 444.24']);
    assert.deepEqual(await feesOn(loan, '2026-03-26'), ['late 2026-02-26 444.24', 'late 2026-03-26 444.24']);
    // Stored: one fee per late row up to today, never two for a row; a payment on due + grace + 1 can pay that row's fee.
    const stored = await s.db.query<{ row_number: number; n: number }>(`SELECT row_number, count(*)::int AS n FROM fees WHERE loan_id = $1 GROUP BY row_number ORDER BY row_number`, [loan]);
    assert.ok(stored.rows.length >= 2 && stored.rows.every((row) => row.n === 1), JSON.stringify(stored.rows));
    const onTime = await referenceLoan();
    await pay(onTime, '2026-02-15', '8884.88');
    await pay(onTime, '2026-03-26', '9329.12');
    assert.deepEqual((await allocations(onTime)).slice(2), ['row 2 interest 921.15', 'row 2 principal 7963.73', 'fee(late) fee 444.24']);
  });

  it('R5: payoff 84,600.20 on time; 93,258.44 for R1\'s delinquent loan; 76,051.92 with row 3 paid on 04-10, quoted 04-12', async () => {
    const onTimeLoan = await referenceLoan();
    await onTime(onTimeLoan);
    assert.equal((await payoff(onTimeLoan, '2026-03-31')).payoff, 84600.2);
    const late = await referenceLoan();
    await pay(late, '2026-03-20', '10000.00');
    const quote = await payoff(late, '2026-03-31');
    assert.deepEqual([quote.payoff, quote.fees_due], [93258.44, 888.48]);
    await pay(onTimeLoan, '2026-04-10', '8884.88');
    const ahead = await payoff(onTimeLoan, '2026-04-12');
    assert.deepEqual([ahead.payoff, ahead.interest_paid_ahead], [76051.92, 841.51]);
  });

  it('R6 and R9: 84,600.20 on 2026-03-31 pays row 3 interest 448.81 and all principal 84,151.39; the loan closes that day', async () => {
    const loan = await referenceLoan();
    await onTime(loan);
    await pay(loan, '2026-03-31', '84600.20');
    const lines = (await allocations(loan)).slice(4);
    assert.equal(lines[0], 'row 3 interest 448.81');
    const principal = lines.slice(1).map((line) => Number(line.split(' ').pop())).reduce((a, b) => a + b, 0);
    assert.equal(principal.toFixed(2), '84151.39');
    assert.ok(lines.slice(1).every((line) => line.includes('principal')));
    const after = await graph(`query ($loan: uuid!) { loans_by_pk(id: $loan) { status date_closed principal_outstanding interest_due fees_due credit_balance schedules(where: {is_next: {_eq: true}}) { number } } }`, { loan });
    assert.deepEqual(after.data.loans_by_pk, { status: 'closed', date_closed: '2026-03-31', principal_outstanding: 0, interest_due: 0, fees_due: 0, credit_balance: 0, schedules: [] });
  });

  it('R9: a surplus leaves the loan overpaid; a refund of the credit closes it; a refund above the credit is refused; a reversal reopens', async () => {
    const loan = await referenceLoan();
    await onTime(loan);
    const big = await pay(loan, '2026-03-31', '84700.20');
    let state = (await graph(`query ($loan: uuid!) { loans_by_pk(id: $loan) { status credit_balance } }`, { loan })).data.loans_by_pk;
    assert.deepEqual(state, { status: 'overpaid', credit_balance: 100 });
    const tooMuch = await graph(
      `mutation ($loan: uuid!) { insert_payments_one(object: {loan_id: $loan, date: "2026-04-02", amount: 100.01, type: "refund"}) { id } }`,
      { loan },
    );
    assert.equal(tooMuch.errors?.[0]?.extensions?.code, 'check-violation', JSON.stringify(tooMuch));
    // The trigger's own sentence, not the rule's name: what a clerk or a client can act on.
    assert.equal(tooMuch.errors?.[0]?.message, "insert_payments_one: amount: a refund of 100.01 is more than the loan's credit balance of 100.00 on 2026-04-02");
    await pay(loan, '2026-04-02', '100.00', 'refund');
    state = (await graph(`query ($loan: uuid!) { loans_by_pk(id: $loan) { status credit_balance date_closed } }`, { loan })).data.loans_by_pk;
    assert.deepEqual(state, { status: 'closed', credit_balance: 0, date_closed: '2026-03-31' });
    // Closing by hand while money is owed is a 400 naming what is owed (REST).
    const open = await referenceLoan();
    await onTime(open);
    const refused = await s.rest.patch(`/api/loan/${open}`, { Status: 'closed' });
    assert.equal(refused.status, 400, refused.text);
    assert.match(refused.json.fields.Status, /^the loan still owes principal 84151\.39, interest \d+\.\d\d, fees \d+\.\d\d \(credit \d+\.\d\d\): it closes by itself when paid off$/);
    // A loan without a schedule has nothing for a payment to pay (it became credit): a payment is refused and nothing is
    // written (migration 0061), and closing it by hand while its principal is owed says what to do.
    const bare = await s.rest.post('/api/loan', { Name: 'No terms', Amount: 5000, Date_Funded: '2026-01-15', Status: 'servicing' });
    assert.equal(bare.status, 201, bare.text);
    const bareId = bare.json.loan.id as string;
    const barePayment = await graph(
      `mutation ($loan: uuid!) { insert_payments_one(object: {loan_id: $loan, date: "2026-02-01", amount: 5000, method: "ach"}) { id } }`,
      { loan: bareId },
    );
    assert.equal(barePayment.errors?.[0]?.extensions?.code, 'check-violation', JSON.stringify(barePayment));
    assert.equal(
      barePayment.errors?.[0]?.message,
      'insert_payments_one: loan_id: the loan has no schedule, so a payment would pay nothing (it would become credit): give it its terms (Amount, Rate, Term, Frequency, and First_Payment_Date or Date_Funded) first',
    );
    const bareState = await graph(`query ($loan: uuid!) { loans_by_pk(id: $loan) { payments { id } } }`, { loan: bareId });
    assert.deepEqual(bareState.data.loans_by_pk, { payments: [] });
    const bareClose = await s.rest.patch(`/api/loan/${bareId}`, { Status: 'closed' });
    assert.equal(bareClose.status, 400, bareClose.text);
    assert.equal(
      bareClose.json.fields.Status,
      'the loan still owes principal 5000.00, interest 0.00, fees 0.00 (credit 0.00): it has no schedule, so it takes no payment: give it its terms (Term, Rate, Frequency) first',
    );
    // Given its terms, it takes the payment.
    const termed = await s.rest.patch(`/api/loan/${bareId}`, { Rate: 12, Term: 1, Frequency: 'monthly' });
    assert.equal(termed.status, 200, termed.text);
    await pay(bareId, '2026-02-15', '5050.00');
    const paidOff = await graph(`query ($loan: uuid!) { loans_by_pk(id: $loan) { status principal_outstanding } }`, { loan: bareId });
    assert.deepEqual(paidOff.data.loans_by_pk, { status: 'closed', principal_outstanding: 0 });
    // A reversal that reopens a balance puts the loan back in servicing.
    await reverse(big, '2026-04-05', 'error');
    state = (await graph(`query ($loan: uuid!) { loans_by_pk(id: $loan) { status date_closed } }`, { loan })).data.loans_by_pk;
    assert.deepEqual(state, { status: 'servicing', date_closed: null });
  });

  it('R9: a reversal that leaves a refund above the credit reopens a closed loan: the credit owed back is a balance; paying it closes the loan again', async () => {
    const loan = await referenceLoan();
    await onTime(loan);
    await pay(loan, '2026-03-31', '84600.20');
    const extra = await pay(loan, '2026-04-05', '100.00');
    await pay(loan, '2026-04-06', '100.00', 'refund');
    const read = async () => (await graph(`query ($loan: uuid!) { loans_by_pk(id: $loan) { status date_closed credit_balance } }`, { loan })).data.loans_by_pk;
    assert.deepEqual(await read(), { status: 'closed', date_closed: '2026-03-31', credit_balance: 0 });
    // The 100.00 the refund paid back is reversed: the borrower owes it back (docs/ledger.md).
    await reverse(extra, '2026-04-07', 'returned');
    assert.deepEqual(await read(), { status: 'servicing', date_closed: null, credit_balance: -100 });
    assert.equal((await payoff(loan, '2026-06-01')).payoff, 100);
    await pay(loan, '2026-06-01', '100.00');
    // Closed again; `date_closed` stays the day its rows and fees were settled (docs/ledger.md).
    assert.deepEqual(await read(), { status: 'closed', date_closed: '2026-03-31', credit_balance: 0 });
  });

  it('R7: 10,000.00 principal on 2026-03-20 keeps row 3 at 841.51 + 8,043.37 and rebuilds rows 4–12 at 7,717.47 (row 12: 76.41 + 7,641.10)', async () => {
    const loan = await referenceLoan();
    await onTime(loan);
    await pay(loan, '2026-03-20', '10000.00', 'principal');
    const rows = (await graph(`query ($loan: uuid!) { schedules(where: {loan_id: {_eq: $loan}}, order_by: {number: asc}) { number interest principal payment } }`, { loan })).data.schedules;
    const row = (n: number) => rows.find((r: any) => r.number === n);
    assert.deepEqual(row(3), { number: 3, interest: 841.51, principal: 8043.37, payment: 8884.88 });
    assert.deepEqual(row(4), { number: 4, interest: 661.08, principal: 7056.39, payment: 7717.47 });
    assert.deepEqual(row(12), { number: 12, interest: 76.41, principal: 7641.1, payment: 7717.51 });
    for (let n = 5; n <= 11; n++) assert.equal(row(n).payment, 7717.47, `row ${n}`);
    assert.equal((await payoff(loan, '2026-03-20')).principal_outstanding, 74151.39);
  });

  it('R7 after paying ahead: the money on rows after the current one becomes principal lines with no row; the rows are rebuilt from the lower balance', async () => {
    const loan = await referenceLoan();
    await pay(loan, '2026-02-15', '30000.00');
    await pay(loan, '2026-03-20', '10000.00', 'principal');
    assert.deepEqual(await allocations(loan), [
      'row 1 interest 1000.00', 'row 1 principal 7884.88', 'row 2 interest 921.15', 'row 2 principal 7963.73',
      'row 3 interest 841.51', 'row 3 principal 8043.37', 'row null principal 761.08', 'row null principal 2584.28',
      'row null principal 10000.00',
    ]);
    const answer = await graph(`query ($loan: uuid!) { loans_by_pk(id: $loan) { principal_outstanding schedules(where: {number: {_eq: 4}}) { interest principal interest_paid principal_paid } } }`, { loan });
    assert.equal(answer.errors, undefined, JSON.stringify(answer.errors));
    assert.deepEqual(answer.data.loans_by_pk, { principal_outstanding: 62762.66, schedules: [{ interest: 627.63, principal: 6699.31, interest_paid: 0, principal_paid: 0 }] });
  });

  it('R8: P1 reversed as NSF (fee 25.00): P2 now pays row 1; the NSF fee is dated 02-20; 5 days past due on 03-20', async () => {
    const loan = await referenceLoan({ nsf_fee: '25.00' });
    const p1 = await pay(loan, '2026-02-13', '8884.88');
    await pay(loan, '2026-03-15', '8884.88');
    assert.deepEqual(await allocations(loan), ['row 1 interest 1000.00', 'row 1 principal 7884.88', 'row 2 interest 921.15', 'row 2 principal 7963.73']);
    assert.deepEqual(await feesOn(loan, '2026-03-20'), [], 'paid on time: no fee');
    await reverse(p1, '2026-02-20', 'nsf');
    const ledger = await s.rest.get(`/api/loan/${loan}/ledger?date=2026-03-20`);
    assert.equal(ledger.status, 200, ledger.text);
    assert.deepEqual(ledger.json.payments[0].allocations, []);
    assert.deepEqual(
      ledger.json.payments[1].allocations.map((a: any) => `${a.row_number} ${a.component} ${a.amount}`),
      ['1 interest 1000', '1 principal 7884.88'],
    );
    assert.deepEqual(await feesOn(loan, '2026-03-20'), ['nsf 2026-02-20 25.00', 'late 2026-02-26 444.24']);
    assert.equal(ledger.json.balances.days_past_due, 5);
    await s.db.query(`UPDATE products SET nsf_fee = 0 WHERE account_id = $1`, [s.accountId]);
  });

  it('a payment of an unknown type is refused naming the allowed ones, and nothing is written', async () => {
    const loan = await referenceLoan();
    const answer = await graph(
      `mutation ($loan: uuid!) { insert_payments_one(object: {loan_id: $loan, date: "2026-02-15", amount: 10, type: "prepayment"}) { id } }`,
      { loan },
    );
    assert.equal(answer.errors?.[0]?.extensions?.code, 'check-violation', JSON.stringify(answer));
    const count = await s.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM payments WHERE loan_id = $1`, [loan]);
    assert.equal(count.rows[0]!.n, 0);
  });

  it('the REST ledger routes refuse a bad date (400) and answer 404 for no such loan', async () => {
    const loan = await referenceLoan();
    assert.equal((await s.rest.get(`/api/loan/${loan}/payoff?date=2026-02-30`)).status, 400);
    assert.equal((await s.rest.get(`/api/loan/${loan}/payoff?day=2026-02-01`)).status, 400);
    assert.equal((await s.rest.get(`/api/loan/00000000-0000-4000-8000-000000000000/ledger`)).status, 404);
    assert.equal((await s.rest.get(`/api/loan/not-a-uuid/payoff`)).status, 404);
  });
});

describe('Rules every writer of a payment meets (migration 0050)', () => {
  const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
  const countPayments = async (loan: string) => (await s.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM payments WHERE loan_id = $1`, [loan])).rows[0]!.n;
  const insert = (loan: string, date: string, amount: string) => graph(
    `mutation ($loan: uuid!, $date: date!, $amount: numeric!) { insert_payments_one(object: {loan_id: $loan, date: $date, amount: $amount, method: "ach"}) { id } }`,
    { loan, date, amount },
  );

  it('a payment (and a manual fee) is dated in the years 1900–2999 (GraphQL took 9999-12-31); a refused one writes nothing', async () => {
    const loan = await referenceLoan();
    for (const date of ['9999-12-31', '3000-01-01', '1899-12-31']) {
      const answer = await insert(loan, date, '100.00');
      assert.equal(answer.errors?.[0]?.extensions?.code, 'check-violation', JSON.stringify(answer));
      assert.equal(answer.errors[0].message, `insert_payments_one: date: a payment is dated in the years 1900–2999, not ${date}`);
    }
    assert.equal(await countPayments(loan), 0);
    // A manual fee's day, given by its writer, likewise.
    const fee = await graph(`mutation ($loan: uuid!) { insert_fees_one(object: {loan_id: $loan, amount: "35.00", date: "9999-12-31"}) { id } }`, { loan });
    assert.equal(fee.errors?.[0]?.message, 'insert_fees_one: date: a fee is dated in the years 1900–2999, not 9999-12-31', JSON.stringify(fee));
  });

  it('a payment is not dated before its loan was funded (migration 0081), in a batch too; nothing of the batch is written', async () => {
    // 2025-01-10 on a loan funded 2026-01-15 (a year mistyped while loading a book) was taken and paid row 1's interest ahead.
    const loan = await referenceLoan();
    const early = await insert(loan, '2025-01-10', '1000.00');
    assert.equal(early.errors?.[0]?.extensions?.code, 'validation-failed', JSON.stringify(early));
    assert.equal(early.errors[0].message, "insert_payments_one: date: 2025-01-10 is before the loan was funded (2026-01-15); a payment is dated on or after its loan's Date_Funded");
    const batch = await graph(
      `mutation ($loan: uuid!) { insert_payments(objects: [{loan_id: $loan, date: "2026-02-15", amount: 8884.88}, {loan_id: $loan, date: "2026-01-14", amount: 8884.88}]) { affected_rows } }`,
      { loan },
    );
    assert.match(batch.errors?.[0]?.message ?? '', /^insert_payments: date: 2026-01-14 is before the loan was funded \(2026-01-15\)/, JSON.stringify(batch));
    assert.equal(await countPayments(loan), 0);
    // On the funding day itself it is taken.
    await pay(loan, '2026-01-15', '100.00');
    assert.equal(await countPayments(loan), 1);
  });

  it('a manual fee is not dated before its loan was funded, nor charged to a lead (migration 0084), in a batch too; nothing is written', async () => {
    // insert_fees_one took a fee dated a year before Date_Funded (and one on a lead) while the same day's payment was refused (0081).
    const countFees = async (loan: string) => (await s.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM fees WHERE loan_id = $1 AND kind = 'manual'`, [loan])).rows[0]!.n;
    const fee = (loan: string, date: string) =>
      graph(`mutation ($loan: uuid!, $date: date!) { insert_fees_one(object: {loan_id: $loan, amount: "35.00", date: $date, description: "Inspection"}) { id } }`, { loan, date });
    const loan = await referenceLoan();
    const early = await fee(loan, '2025-01-15');
    assert.equal(early.errors?.[0]?.extensions?.code, 'validation-failed', JSON.stringify(early));
    assert.deepEqual(early.errors[0].extensions.fields, ['date']);
    assert.equal(early.errors[0].message, "insert_fees_one: date: 2025-01-15 is before the loan was funded (2026-01-15); a fee is dated on or after its loan's Date_Funded");
    const batch = await graph(
      `mutation ($loan: uuid!) { insert_fees(objects: [{loan_id: $loan, amount: "10.00", date: "2026-02-01"}, {loan_id: $loan, amount: "10.00", date: "2026-01-14"}]) { affected_rows } }`,
      { loan },
    );
    assert.match(batch.errors?.[0]?.message ?? '', /^insert_fees: date: 2026-01-14 is before the loan was funded \(2026-01-15\)/, JSON.stringify(batch));
    assert.equal(await countFees(loan), 0);
    // Re-dating a stored fee before the funding day is refused the same way.
    assert.equal((await fee(loan, '2026-01-15')).errors, undefined, 'on the funding day itself it is taken');
    const redate = await graph(`mutation ($loan: uuid!) { update_fees(where: {loan_id: {_eq: $loan}, kind: {_eq: "manual"}}, _set: {date: "2025-12-31"}) { affected_rows } }`, { loan });
    assert.equal(redate.errors?.[0]?.extensions?.code, 'validation-failed', JSON.stringify(redate));
    assert.equal((await s.db.query<{ date: string }>(`SELECT date::text FROM fees WHERE loan_id = $1 AND kind = 'manual'`, [loan])).rows[0]!.date, '2026-01-15', 'nothing written');
    // A lead is charged no fee, as it takes no payment (0050): it owes nothing before funding.
    const lead = await s.rest.post('/api/loan', { Name: 'A lead with a fee', Amount: 5000, Rate: 10, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15' });
    const onLead = await fee(lead.json.loan.id, '2026-02-01');
    assert.equal(onLead.errors?.[0]?.extensions?.code, 'check-violation', JSON.stringify(onLead));
    assert.equal(onLead.errors[0].message, 'insert_fees_one: loan_id: the loan is a lead (not funded): it is charged fees once its status is servicing');
    assert.equal(await countFees(lead.json.loan.id), 0);
  });

  it("Date_Funded is not moved past the loan's first payment or fee (migration 0084): REST's PATCH 400 naming Date_Funded, nothing changed", async () => {
    // A PATCH moving it to 2026-03-01 after a payment of 2026-02-15 answered 200, and the loan then held a payment dated before its funding.
    const loan = await referenceLoan();
    const paid = await pay(loan, '2026-02-15', '8884.88');
    const before = (await s.rest.get(`/api/loan/${loan}/ledger?date=2026-03-31`)).text;
    const moved = await s.rest.patch(`/api/loan/${loan}`, { Date_Funded: '2026-03-01' });
    assert.equal(moved.status, 400, moved.text);
    assert.deepEqual(Object.keys(moved.json.fields), ['Date_Funded']);
    assert.equal(moved.json.fields.Date_Funded, "2026-03-01 is after the loan's first payment (2026-02-15); a loan is funded on or before its payments' days (a payment posted on a wrong day is reversed first)");
    assert.equal((await s.rest.get(`/api/loan/${loan}`)).json.loan.date_funded, '2026-01-15', 'nothing changed');
    assert.equal((await s.rest.get(`/api/loan/${loan}/ledger?date=2026-03-31`)).text, before);
    // On the payment's own day, or earlier, it moves.
    assert.equal((await s.rest.patch(`/api/loan/${loan}`, { Date_Funded: '2026-02-15' })).status, 200);
    // A payment posted on a wrong day is reversed; the funding day then moves past it.
    await reverse(paid, '2026-02-20', 'error');
    assert.equal((await s.rest.patch(`/api/loan/${loan}`, { Date_Funded: '2026-03-01' })).status, 200);
    // A fee a writer dated counts as a payment does.
    const fee = await graph(`mutation ($loan: uuid!) { insert_fees_one(object: {loan_id: $loan, amount: "35.00", date: "2026-03-10"}) { id } }`, { loan });
    assert.equal(fee.errors, undefined, JSON.stringify(fee.errors));
    const pastFee = await s.rest.patch(`/api/loan/${loan}`, { Date_Funded: '2026-04-01' });
    assert.equal(pastFee.status, 400, pastFee.text);
    assert.match(pastFee.json.fields.Date_Funded, /^2026-04-01 is after the loan's first fee \(2026-03-10\)/);
    assert.equal((await s.rest.get(`/api/loan/${loan}`)).json.loan.date_funded, '2026-03-01', 'nothing changed');
    // (GraphQL's update_loans_by_pk does not set date_funded: the schedule's inputs are REST's; SQL meets the same trigger.)
    await assert.rejects(s.db.query(`UPDATE loans SET date_funded = '2026-04-01' WHERE id = $1`, [loan]), /date_funded: 2026-04-01 is after the loan's first fee/);
  });

  it('a reversal is dated on or before the business date, or on a post-dated payment\'s own day', async () => {
    const loan = await referenceLoan();
    const paid = await pay(loan, '2026-02-15', '8884.88');
    const ahead = await graph(
      `mutation ($id: uuid!, $d: date!) { update_payments_by_pk(pk_columns: {id: $id}, _set: {date_reversed: $d, reversal_reason: "error"}) { id } }`,
      { id: paid, d: day(2) },
    );
    assert.equal(ahead.errors?.[0]?.extensions?.code, 'check-violation', JSON.stringify(ahead));
    assert.match(ahead.errors[0].message, new RegExp(`^update_payments_by_pk: date_reversed: a reversal is dated on or before ${day(0)}, the business date .*, not ${day(2)}$`));
    const stored = await s.db.query<{ date_reversed: string | null }>(`SELECT date_reversed::text FROM payments WHERE id = $1`, [paid]);
    assert.equal(stored.rows[0]!.date_reversed, null, 'nothing written');
    await reverse(paid, day(0), 'error');
    // A post-dated payment (a cheque dated ahead) is cancelled on its own day.
    const postDated = await pay(loan, day(10), '100.00');
    await reverse(postDated, day(10), 'error');
  });

  it("a reversal's reason is final as its date is (migration 0051): re-labelling one to or from nsf is refused naming reversal_reason", async () => {
    // R8 adds the NSF fee when the reversal is made: a reason changed afterwards left an `nsf`
    // reversal without its fee, or an `other` one with it.
    const loan = await referenceLoan({ nsf_fee: '25.00' });
    const p1 = await pay(loan, '2026-02-15', '8884.88');
    const p2 = await pay(loan, '2026-03-15', '8884.88');
    await reverse(p1, '2026-02-20', 'other');
    await reverse(p2, '2026-03-20', 'nsf');
    const relabel = (id: string, reason: string | null) =>
      graph(`mutation ($id: uuid!, $reason: String) { update_payments_by_pk(pk_columns: {id: $id}, _set: {reversal_reason: $reason}) { id } }`, { id, reason });
    for (const [id, reason, was] of [[p1, 'nsf', 'other'], [p2, 'other', 'nsf'], [p2, null, 'nsf'], [p1, 'other', 'other']] as const) {
      const answer = await relabel(id, reason);
      assert.equal(answer.errors?.[0]?.extensions?.code, 'check-violation', JSON.stringify(answer));
      assert.deepEqual(answer.errors[0].extensions.fields, ['reversal_reason']);
      assert.match(answer.errors[0].message, new RegExp(`^update_payments_by_pk: reversal_reason: the payment is already reversed \\(on 2026-0\\d-20, reason ${was}\\); a reversal is final, its reason included$`));
    }
    const stored = await s.db.query<{ reason: string }>(`SELECT reversal_reason AS reason FROM payments WHERE loan_id = $1 ORDER BY date`, [loan]);
    assert.deepEqual(stored.rows.map((row) => row.reason), ['other', 'nsf'], 'nothing written');
    assert.deepEqual((await feesOn(loan, '2026-03-31')).filter((fee) => fee.startsWith('nsf')), ['nsf 2026-03-20 25.00'], 'the one NSF fee is the nsf reversal\'s');
    // A payment not reversed is unchanged by a null reason (the rule is about reversals).
    const p3 = await pay(loan, '2026-04-15', '100.00');
    assert.equal((await relabel(p3, null)).errors, undefined);
    await s.db.query(`UPDATE products SET nsf_fee = 0 WHERE account_id = $1`, [s.accountId]);
  });

  it('a lead (not funded) takes no payment; once in servicing it does', async () => {
    const created = await s.rest.post('/api/loan', { Name: 'A lead', Amount: 5000, Rate: 10, Term: 12, Frequency: 'monthly' });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.loan.status, 'lead');
    const loan = created.json.loan.id as string;
    const refused = await insert(loan, '2026-02-15', '100.00');
    assert.equal(refused.errors?.[0]?.extensions?.code, 'check-violation', JSON.stringify(refused));
    assert.equal(refused.errors[0].message, 'insert_payments_one: loan_id: the loan is a lead (not funded): it takes payments once its status is servicing');
    assert.equal(await countPayments(loan), 0);
    const funded = await s.rest.patch(`/api/loan/${loan}`, { Status: 'servicing', Date_Funded: '2026-01-15' });
    assert.equal(funded.status, 200, funded.text);
    assert.equal((await insert(loan, '2026-02-15', '100.00')).errors, undefined);
    // Funded now (it took a payment), it is not a lead again (migration 0053): the replay dropped its late fees.
    const fees = await feesOn(loan, '2026-11-01');
    assert.ok(fees.length > 0, 'rows 2 on are late');
    const back = await s.rest.patch(`/api/loan/${loan}`, { Status: 'lead' });
    assert.equal(back.status, 400, back.text);
    assert.match(back.json.fields.Status, /^the loan has taken payments, so it has been funded: it cannot be a lead again/);
    assert.equal((await s.rest.get(`/api/loan/${loan}`)).json.loan.status, 'servicing');
    assert.deepEqual(await feesOn(loan, '2026-11-01'), fees, 'nothing written');
    const graphBack = await graph(`mutation ($id: uuid!) { update_loans_by_pk(pk_columns: {id: $id}, _set: {status: "lead"}) { status } }`, { id: loan });
    assert.equal(graphBack.errors?.[0]?.extensions?.code, 'check-violation', JSON.stringify(graphBack));
    assert.deepEqual(graphBack.errors[0].extensions.fields, ['status']);
    // A loan set to servicing by mistake, with no payment, still goes back.
    const mistaken = await s.rest.post('/api/loan', { Name: 'Funded by mistake', Amount: 5000, Status: 'servicing' });
    assert.equal((await s.rest.patch(`/api/loan/${mistaken.json.loan.id}`, { Status: 'lead' })).status, 200);
  });

  it('a lead is never past due (migration 0052): with a Date_Funded and rows long due it is 0 days, current, 0.00 past due in every form', async () => {
    // It was "291 days past due", 120+, in the days_past_due filter, while its stored_days_past_due said 0.
    const created = await s.rest.post('/api/loan', { Name: 'A lead with a funding date', Amount: 100000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15' });
    assert.equal(created.status, 201, created.text);
    const loan = created.json.loan.id as string;
    const read = `query ($loan: uuid!) {
      late: loans(where: {id: {_eq: $loan}, days_past_due: {_gte: 1}}) { id }
      loans_by_pk(id: $loan) { status days_past_due stored_days_past_due delinquency_bucket amount_past_due
        then: days_past_due(args: {as_of: "2026-04-01"}) then_bucket: delinquency_bucket(args: {as_of: "2026-04-01"}) then_owed: amount_past_due(args: {as_of: "2026-04-01"}) } }`;
    const lead = await graph(read, { loan });
    assert.equal(lead.errors, undefined, JSON.stringify(lead.errors));
    assert.deepEqual(lead.data, {
      late: [],
      loans_by_pk: { status: 'lead', days_past_due: 0, stored_days_past_due: 0, delinquency_bucket: 'current', amount_past_due: 0, then: 0, then_bucket: 'current', then_owed: 0 },
    });
    const ledger = await s.rest.get(`/api/loan/${loan}/ledger?date=2026-04-01`);
    assert.equal(ledger.status, 200, ledger.text);
    assert.equal(ledger.json.balances.days_past_due, 0, ledger.text);
    // Session 40: a lead has no payoff quote at all (409 naming Status; tests/api/ledgerEdges.test.ts) — it was a 200 quoting it as if funded.
    assert.equal((await s.rest.get(`/api/loan/${loan}/payoff?date=2026-04-01`)).status, 409);
    // Funded (servicing), the same loan is as late as its rows say: rows 1–2 unpaid on 04-01.
    assert.equal((await s.rest.patch(`/api/loan/${loan}`, { Status: 'servicing' })).status, 200);
    const serviced = await graph(read, { loan });
    assert.equal(serviced.data.late.length, 1);
    assert.deepEqual([serviced.data.loans_by_pk.then, serviced.data.loans_by_pk.then_bucket, serviced.data.loans_by_pk.then_owed], [45, '30-59', 17769.76]);
    assert.equal((await payoff(loan, '2026-04-01')).days_past_due, 45);
  });

  it('a lead owes nothing in any figure (migration 0084): its stored balances and the REST ledger\'s are null, as its payoff (0083); funded, they are its ledger\'s', async () => {
    // A lead with terms stored and showed principal_outstanding 100,000 and interest_due 6,355.49 (rows "due" since its planned
    // funding day), and REST's ledger quoted a payoff of 106,437.19, while its payoff field was null and its payoff quote a 409.
    const created = await s.rest.post('/api/loan', { Name: 'A lead owing nothing', Amount: 100000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15' });
    assert.equal(created.status, 201, created.text);
    const loan = created.json.loan.id as string;
    const read = `query ($loan: uuid!) { loans_by_pk(id: $loan) { status principal_outstanding interest_due fees_due credit_balance oldest_unpaid_due payoff accrued_interest per_diem amount_past_due } }`;
    const lead = await graph(read, { loan });
    assert.equal(lead.errors, undefined, JSON.stringify(lead.errors));
    assert.deepEqual(lead.data.loans_by_pk, {
      status: 'lead', principal_outstanding: null, interest_due: null, fees_due: null, credit_balance: null, oldest_unpaid_due: null,
      payoff: null, accrued_interest: null, per_diem: null, amount_past_due: 0,
    });
    for (const day of ['', '?date=2026-04-01']) {
      const ledger = await s.rest.get(`/api/loan/${loan}/ledger${day}`);
      assert.equal(ledger.status, 200, ledger.text);
      assert.deepEqual(ledger.json.balances, {
        principal_outstanding: null, interest_due: null, fees_due: null, credit_balance: null, oldest_unpaid_due: null,
        accrued_interest: null, per_diem: null, payoff: null, days_past_due: 0,
      }, day);
    }
    assert.equal((await s.rest.get(`/api/loan/${loan}/payoff`)).status, 409, 'still no quote');
    // Funded, the status change replays it: the stored figures are its ledger's as of today.
    assert.equal((await s.rest.patch(`/api/loan/${loan}`, { Status: 'servicing' })).status, 200);
    const serviced = (await graph(read, { loan })).data.loans_by_pk;
    const ledger = (await s.rest.get(`/api/loan/${loan}/ledger`)).json.balances;
    assert.equal(serviced.principal_outstanding, 100000);
    assert.ok(serviced.interest_due > 0, JSON.stringify(serviced));
    assert.deepEqual([serviced.interest_due, serviced.fees_due, serviced.oldest_unpaid_due], [ledger.interest_due, ledger.fees_due, ledger.oldest_unpaid_due]);
    assert.equal(serviced.payoff, ledger.payoff);
    // And a lead again (no payment taken): nothing again.
    assert.equal((await s.rest.patch(`/api/loan/${loan}`, { Status: 'lead' })).status, 200);
    assert.deepEqual((await graph(read, { loan })).data.loans_by_pk, lead.data.loans_by_pk);
  });

  it('a loan closed before it was funded is never past due (migration 0081): created closed, or a lead closed by hand', async () => {
    // Both were "2,327 days past due", 120+, 106,618.53 past due, in the days_past_due filter, while
    // their stored_days_past_due said 0 — a lender moving its book and loading a loan paid off long
    // ago as closed, without its history, saw it at the top of its collections.
    const terms = { Amount: 100000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2020-01-15' };
    const createdClosed = await s.rest.post('/api/loan', { Name: 'Paid off before the move', ...terms, Status: 'closed' });
    assert.equal(createdClosed.status, 201, createdClosed.text);
    const withdrawn = await s.rest.post('/api/loan', { Name: 'A withdrawn application', ...terms });
    assert.equal(withdrawn.status, 201, withdrawn.text);
    assert.equal((await s.rest.patch(`/api/loan/${withdrawn.json.loan.id}`, { Status: 'closed' })).status, 200);
    const read = `query ($loan: uuid!) {
      late: loans(where: {id: {_eq: $loan}, days_past_due: {_gte: 1}}) { id }
      loans_by_pk(id: $loan) { status days_past_due stored_days_past_due delinquency_bucket amount_past_due
        then: days_past_due(args: {as_of: "2020-06-01"}) then_bucket: delinquency_bucket(args: {as_of: "2020-06-01"}) then_owed: amount_past_due(args: {as_of: "2020-06-01"}) } }`;
    for (const loan of [createdClosed.json.loan.id as string, withdrawn.json.loan.id as string]) {
      const closed = await graph(read, { loan });
      assert.equal(closed.errors, undefined, JSON.stringify(closed.errors));
      assert.deepEqual(closed.data, {
        late: [],
        loans_by_pk: { status: 'closed', days_past_due: 0, stored_days_past_due: 0, delinquency_bucket: 'current', amount_past_due: 0, then: 0, then_bucket: 'current', then_owed: 0 },
      });
      for (const route of ['payoff', 'ledger']) {
        const answer = await s.rest.get(`/api/loan/${loan}/${route}?date=2020-06-01`);
        assert.equal(answer.status, 200, answer.text);
        assert.equal((route === 'payoff' ? answer.json : answer.json.balances).days_past_due, 0, `${route}: ${answer.text}`);
      }
    }
    // A loan its payments closed keeps the days past due it had on earlier days: row 1 unpaid on 03-01.
    const paidOff = await referenceLoan();
    await pay(paidOff, '2026-03-01', String((await payoff(paidOff, '2026-03-01')).payoff));
    const settled = await graph(read.replaceAll('2020-06-01', '2026-02-20'), { loan: paidOff });
    assert.equal(settled.errors, undefined, JSON.stringify(settled.errors));
    assert.deepEqual([settled.data.loans_by_pk.status, settled.data.loans_by_pk.days_past_due, settled.data.loans_by_pk.then], ['closed', 0, 5]);
  });

  it('a loan is not created overpaid (the ledger sets it, R9): POST is a 400 naming Status, as PATCH was', async () => {
    const count = async () => (await s.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM loans WHERE account_id = $1`, [s.accountId])).rows[0]!.n;
    const before = await count();
    const refused = await s.rest.post('/api/loan', { Name: 'Born overpaid', Status: 'overpaid' });
    assert.equal(refused.status, 400, refused.text);
    assert.match(refused.json.fields.Status, /overpaid is set by the ledger/);
    assert.equal(await count(), before, 'nothing written');
  });

  it("a write whose ledger would store an amount past 999,999,999,999.99 is refused in REST's words naming its field (the metadata's overflow), and writes nothing", async () => {
    const loan = await referenceLoan();
    await pay(loan, '2026-02-15', '999999999999.00');
    const answer = await insert(loan, '2026-02-16', '999999999999.00');
    assert.equal(answer.errors?.length, 1, JSON.stringify(answer));
    // The sentence is the shipped metadata's (payments' `overflow`), as REST's 400 says it; before
    // 2026-11-30 PostgreSQL's words ("numeric field overflow: A field with precision 14, …") and no field.
    const sentence = "the loan's ledger would hold an amount too large to store (its fees, a balance or the credit past 999,999,999,999.99); nothing was written";
    assert.deepEqual(answer.errors[0], { message: `insert_payments_one: amount: ${sentence}`, path: ['insert_payments_one'], extensions: { code: 'validation-failed', fields: ['amount'] } });
    assert.equal(await countPayments(loan), 1);
    // A manual fee the same: its amount fits its column; with a second one the loan's fees due do not.
    const feeLoan = await referenceLoan();
    const fee = () => graph(`mutation ($loan: uuid!) { insert_fees_one(object: {loan_id: $loan, amount: "500000000000.00"}) { id } }`, { loan: feeLoan });
    const first = await fee();
    assert.equal(first.errors, undefined, JSON.stringify(first.errors));
    assert.deepEqual((await fee()).errors, [{ message: `insert_fees_one: amount: ${sentence}`, path: ['insert_fees_one'], extensions: { code: 'validation-failed', fields: ['amount'] } }]);
    assert.equal((await s.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM fees WHERE loan_id = $1 AND kind = 'manual'`, [feeLoan])).rows[0]!.n, 1, 'nothing written');
  });

  it("a fee waiver whose replay would store an amount past 999,999,999,999.99 is refused in words naming the fee and the day (fee_waivers' overflow), and writes nothing", async () => {
    // A manual fee of 500,000,000,000.00 paid by the first payment; the second fits beside the
    // credit; waived from its own day, what the payments paid on it goes to the credit, past the largest amount.
    const loan = await referenceLoan();
    const fee = await graph(`mutation ($loan: uuid!) { insert_fees_one(object: {loan_id: $loan, date: "2026-02-01", amount: "500000000000.00"}) { id } }`, { loan });
    assert.equal(fee.errors, undefined, JSON.stringify(fee.errors));
    await pay(loan, '2026-02-15', '999999999999.00');
    await pay(loan, '2026-02-16', '500000000000.00');
    const waiver = await graph(
      `mutation ($fee: uuid!) { insert_fee_waivers_one(object: {fee_id: $fee, waived_on: "2026-02-01", waived_by: "ops", reason: "goodwill"}) { id } }`,
      { fee: fee.data.insert_fees_one.id },
    );
    // Before session 44: "the write makes a value too large for its column to store (numeric field overflow: …)", no field.
    const sentence = "the loan's ledger, replayed with this fee waived, would hold an amount too large to store (a balance or the credit past 999,999,999,999.99: what its payments paid on the fee from waived_on goes to the credit instead); nothing was written";
    assert.deepEqual(waiver.errors, [{ message: `insert_fee_waivers_one: fee_id, waived_on: ${sentence}`, path: ['insert_fee_waivers_one'], extensions: { code: 'validation-failed', fields: ['fee_id', 'waived_on'] } }]);
    assert.equal((await s.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM fee_waivers WHERE loan_id = $1`, [loan])).rows[0]!.n, 0, 'no waiver');
    assert.equal((await s.db.query<{ waived_on: string | null }>(`SELECT waived_on FROM fees WHERE id = $1`, [fee.data.insert_fees_one.id])).rows[0]!.waived_on, null, 'the fee not waived');
  });

  it('the REST payoff and ledger give every amount in cents (0.00, not 0)', async () => {
    const loan = await referenceLoan();
    const quote = await s.rest.get(`/api/loan/${loan}/payoff?date=2026-01-20`);
    assert.equal(quote.status, 200, quote.text);
    for (const field of ['fees_due', 'credit_balance', 'interest_due', 'interest_paid_ahead']) assert.match(quote.text, new RegExp(`"${field}"\\s*:\\s*0\\.00[,}]`), `${field} in ${quote.text}`);
    const ledger = await s.rest.get(`/api/loan/${loan}/ledger?date=2026-01-20`);
    for (const field of ['fees_due', 'credit_balance', 'interest_due']) assert.match(ledger.text, new RegExp(`"${field}"\\s*:\\s*0\\.00[,}]`), `${field} in ${ledger.text}`);
  });
});

describe('As-of values as computed fields (issue 29, through the Hasura-parity computed fields)', () => {
  it('payoff, accrued_interest, per_diem and days_past_due take args: {as_of}, in lists and by key, with variables', async () => {
    const loan = await referenceLoan();
    await onTime(loan);
    const answer = await graph(
      `query ($loan: uuid!, $d: date!) {
         loans_by_pk(id: $loan) {
           payoff(args: {as_of: "2026-03-31"}) accrued_interest(args: {as_of: $d}) per_diem(args: {as_of: $d})
           late: days_past_due(args: {as_of: "2026-05-01"}) today: days_past_due
         }
         loans(where: {id: {_eq: $loan}}) { payoff(args: {as_of: "2026-04-12"}) }
       }`,
      { loan, d: '2026-03-31' },
    );
    assert.equal(answer.errors, undefined, JSON.stringify(answer.errors));
    // Without as_of: the account's business date (UTC here), 2026-04-15 being row 3's unpaid due date.
    const today = (Date.parse(new Date().toISOString().slice(0, 10)) - Date.parse('2026-04-15')) / 86_400_000;
    assert.deepEqual(answer.data.loans_by_pk, { payoff: 84600.2, accrued_interest: 448.81, per_diem: 28.05, late: 16, today: Math.max(0, today) });
    assert.equal(answer.data.loans[0].payoff, 84151.39 + 785.41);
    const bad = await graph(`query ($loan: uuid!) { loans_by_pk(id: $loan) { payoff(args: {as_of: "soon"}) } }`, { loan });
    assert.equal(bad.errors?.[0]?.extensions?.code, 'validation-failed', JSON.stringify(bad));
  });
});
