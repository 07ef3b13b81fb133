import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { graphBody } from '../support/graphData.js';
import { startKeyedService, type KeyedAccount, type KeyedService } from '../support/seededService.js';
import { installTestClock, setTestClock } from '../support/testClock.js';

/**
 * The rules of docs/ledger.md ("The rules", SPEC §12) that its worked examples do not show, checked
 * on the stored ledger over HTTP: where accrual starts for a loan without `Date_Funded`, its cap at
 * row k's interest, a payment after the as-of day left out, the per diem
 * of each day count and none after maturity, `arrears_tolerance` moving days past due but not late
 * fees, fees never making a loan past due, a late fee's percent rounded half-up to cents, the
 * interest-only final row's fee, an NSF reversal with `nsf_fee` 0 adding no fee, a payment of type
 * `fee`, where `fees_interest_principal` pays a fee of no row, and existing credit paying a new fee on its date. Each block has an account of its own, so a
 * product setting one changes is no other's. (`api/ledgerExamples` has the worked examples.)
 */
let s: KeyedService;

before(async () => {
  s = await startKeyedService();
  await installTestClock(s.db);
  await setTestClock(s.db, '2026-11-30');
});
after(() => s?.close());

async function settings(account: KeyedAccount, change: Record<string, unknown>): Promise<void> {
  const answer = await account.rest.patch('/api/product', change);
  assert.equal(answer.status, 200, answer.text);
}

/** The reference loan of SPEC §7 (100,000 at 12 %, 12 monthly, funded 2026-01-15), in servicing, with other terms given. */
async function referenceLoan(account: KeyedAccount, terms: Record<string, unknown> = {}): Promise<string> {
  const created = await account.rest.post('/api/loan', {
    Name: 'Reference loan', Amount: 100000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing', ...terms,
  });
  assert.equal(created.status, 201, created.text);
  return created.json.loan.id as string;
}

async function graph(account: KeyedAccount, query: string, variables: Record<string, unknown>): Promise<any> {
  const answer = await graphBody(s.url, account.key, query, variables);
  assert.equal(answer.errors, undefined, JSON.stringify(answer.errors));
  return answer.data;
}

async function pay(account: KeyedAccount, loan: string, date: string, amount: string, type = 'regular'): Promise<string> {
  const data = await graph(
    account,
    `mutation ($loan: uuid!, $date: date!, $amount: numeric!, $type: String!) {
       insert_payments_one(object: {loan_id: $loan, date: $date, amount: $amount, type: $type, method: "ach"}) { id }
     }`,
    { loan, date, amount, type },
  );
  return data.insert_payments_one.id as string;
}

/** The REST payoff quote's figures as their exact texts. */
async function quote(account: KeyedAccount, loan: string, date: string): Promise<Record<string, string>> {
  const answer = await account.rest.get(`/api/loan/${loan}/payoff?date=${date}`);
  assert.equal(answer.status, 200, answer.text);
  return Object.fromEntries(Object.entries(answer.exact).map(([name, value]: [string, any]) => [name, typeof value === 'object' && value !== null ? value.text : value]));
}

/** The loan's fees as of a day, as `kind date amount` strings (exact amounts). */
async function feesOn(account: KeyedAccount, loan: string, date: string): Promise<string[]> {
  const ledger = await account.rest.get(`/api/loan/${loan}/ledger?date=${date}`);
  assert.equal(ledger.status, 200, ledger.text);
  return ledger.exact.fees.map((fee: any) => `${fee.kind} ${fee.date} ${fee.amount.text}`);
}

async function delinquency(account: KeyedAccount, loan: string, date: string): Promise<{ days_past_due: number; delinquency_bucket: string }> {
  const data = await graph(
    account,
    `query ($loan: uuid!, $date: date!) { loans_by_pk(id: $loan) { days_past_due(args: {as_of: $date}) delinquency_bucket(args: {as_of: $date}) } }`,
    { loan, date },
  );
  return data.loans_by_pk;
}

describe('R2: accrued interest and per diem', () => {
  let account: KeyedAccount;
  before(async () => {
    account = await s.newAccount();
  });

  it('a loan without Date_Funded accrues row 1 from one period before its first due date: 26 days to 2026-02-10 are 866.67', async () => {
    const loan = await referenceLoan(account, { Date_Funded: undefined, First_Payment_Date: '2026-02-15' });
    const figures = await quote(account, loan, '2026-02-10');
    // 100,000 × 12 % × 26/360 (2026-01-15 to 2026-02-10) = 866.666… → 866.67.
    assert.deepEqual([figures.accrued_interest, figures.per_diem, figures.payoff], ['866.67', '33.33', '100866.67']);
  });

  it('the per diem divides by 365 for actual/365 only (27.67), by 360 for actual/360 and 30/360 (28.05)', async () => {
    const loan = await referenceLoan(account);
    await pay(account, loan, '2026-02-15', '8884.88');
    await pay(account, loan, '2026-03-15', '8884.88');
    for (const [dayCount, perDiem] of [['actual/365', '27.67'], ['30/360', '28.05'], ['actual/360', '28.05']] as const) {
      await settings(account, { day_count: dayCount });
      assert.equal((await quote(account, loan, '2026-03-31')).per_diem, perDiem, dayCount);
    }
  });

  it("accrued interest is never more than row k's interest: a first period of 73 days accrues at most row 1's 1,000.00", async () => {
    const loan = await referenceLoan(account, { Date_Funded: '2026-01-01', First_Payment_Date: '2026-03-15' });
    // 100,000 × 12 % × 30/360 = 1,000.00 on 01-31; 44 and 68 days would be 1,466.67 and 2,266.67.
    for (const day of ['2026-01-31', '2026-02-14', '2026-03-10']) {
      const figures = await quote(account, loan, day);
      assert.deepEqual([figures.accrued_interest, figures.payoff], ['1000.00', '101000.00'], day);
    }
  });

  it('a payment dated after the as-of day is not applied yet: the quote of the day before it is as if unpaid', async () => {
    const loan = await referenceLoan(account);
    await pay(account, loan, '2026-02-10', '8884.88');
    const before = await quote(account, loan, '2026-02-09');
    // 25 days: 100,000 × 12 % × 25/360 = 833.33.
    assert.deepEqual([before.principal_outstanding, before.accrued_interest, before.payoff], ['100000.00', '833.33', '100833.33']);
    assert.equal((await quote(account, loan, '2026-02-10')).principal_outstanding, '92115.12');
  });

  it('after maturity accrued interest and per diem are 0.00: the payoff is what is owed (no default interest)', async () => {
    const loan = await referenceLoan(account);
    const figures = await quote(account, loan, '2027-02-01');
    assert.deepEqual([figures.accrued_interest, figures.per_diem], ['0.00', '0.00']);
    // Nothing paid: all principal, every row's interest (6,618.53) and twelve late fees of 444.24.
    assert.deepEqual([figures.principal_outstanding, figures.interest_due, figures.fees_due, figures.payoff], ['100000.00', '6618.53', '5330.88', '111949.41']);
  });
});

describe('R3 and R4: what makes a loan past due, and what makes a late fee', () => {
  let account: KeyedAccount;
  before(async () => {
    account = await s.newAccount();
  });

  it('a row short by no more than arrears_tolerance counts as paid for days past due, yet still gets its late fee', async () => {
    await settings(account, { arrears_tolerance: 1 });
    const loan = await referenceLoan(account);
    await pay(account, loan, '2026-02-15', '8884.38');
    assert.deepEqual(await delinquency(account, loan, '2026-03-01'), { days_past_due: 0, delinquency_bucket: 'current' });
    assert.deepEqual(await feesOn(account, loan, '2026-03-01'), ['late 2026-02-26 444.24']);
    await settings(account, { arrears_tolerance: 0 });
    assert.deepEqual(await delinquency(account, loan, '2026-03-01'), { days_past_due: 14, delinquency_bucket: '1-29' });
  });

  it('an unpaid fee never makes a loan past due: row 1 paid after its grace leaves its fee owed and 0 days past due', async () => {
    const loan = await referenceLoan(account);
    await pay(account, loan, '2026-02-26', '8884.88');
    const figures = await quote(account, loan, '2026-03-01');
    assert.deepEqual([figures.fees_due, figures.days_past_due], ['444.24', '0']);
    assert.deepEqual(await delinquency(account, loan, '2026-03-01'), { days_past_due: 0, delinquency_bucket: 'current' });
  });

  it("a percent fee is rounded half-up to cents: 6.25 % of 8,884.88 is 555.305, charged 555.31", async () => {
    await settings(account, { late_fee_percent: 6.25 });
    const loan = await referenceLoan(account);
    assert.deepEqual(await feesOn(account, loan, '2026-02-26'), ['late 2026-02-26 555.31']);
    await settings(account, { late_fee_percent: 5 });
  });

  it("an interest-only loan's final row is charged the percent of its interest only: 5 % of 1,000.00, not of 101,000.00", async () => {
    const loan = await referenceLoan(account, { Amortization: 'interest_only' });
    for (let month = 2; month <= 12; month++) await pay(account, loan, `2026-${String(month).padStart(2, '0')}-15`, '1000.00');
    await pay(account, loan, '2027-01-15', '1000.00');
    assert.deepEqual(await feesOn(account, loan, '2027-02-01'), ['late 2027-01-26 50.00']);
  });
});

describe('R8 and the details: fees of 0.00, fee payments, credit', () => {
  let account: KeyedAccount;
  before(async () => {
    account = await s.newAccount();
  });

  it('with nsf_fee 0 an NSF reversal adds no fee (a fee of 0.00 is not recorded): the ledger of never having paid', async () => {
    const loan = await referenceLoan(account);
    const payment = await pay(account, loan, '2026-02-13', '8884.88');
    await graph(
      account,
      `mutation ($id: uuid!) { update_payments_by_pk(pk_columns: {id: $id}, _set: {date_reversed: "2026-02-20", reversal_reason: "nsf"}) { id } }`,
      { id: payment },
    );
    assert.deepEqual(await feesOn(account, loan, '2026-02-25'), []);
    assert.deepEqual(await feesOn(account, loan, '2026-02-26'), ['late 2026-02-26 444.24']);
  });

  it('a payment of type fee pays the fees first, then the waterfall, even in the default allocation order', async () => {
    const loan = await referenceLoan(account);
    await pay(account, loan, '2026-03-20', '10000.00', 'fee');
    const ledger = await account.rest.get(`/api/loan/${loan}/ledger?date=2026-03-20`);
    assert.equal(ledger.status, 200, ledger.text);
    const lines = ledger.exact.payments.flatMap((payment: any) =>
      payment.allocations.map((line: any) => (line.fee_id ? `fee ${line.amount.text}` : `row ${line.row_number.text} ${line.component} ${line.amount.text}`)),
    );
    assert.deepEqual(lines, ['fee 444.24', 'row 1 interest 1000.00', 'row 1 principal 7884.88', 'row 2 interest 670.88']);
  });

  it('with fees_interest_principal a fee of no row (manual) is paid after the due rows and before the rows not yet due', async () => {
    const other = await s.newAccount();
    await settings(other, { allocation_order: 'fees_interest_principal' });
    const loan = await referenceLoan(other);
    await graph(other, `mutation ($loan: uuid!) { insert_fees_one(object: {loan_id: $loan, amount: "35.00", date: "2026-03-01", description: "courier"}) { id } }`, { loan });
    await pay(other, loan, '2026-03-20', '20000.00');
    const ledger = await other.rest.get(`/api/loan/${loan}/ledger?date=2026-03-20`);
    assert.equal(ledger.status, 200, ledger.text);
    const lines = ledger.exact.payments.flatMap((payment: any) =>
      payment.allocations.map((line: any) => (line.fee_id ? `fee ${line.amount.text}` : `row ${line.row_number.text} ${line.component} ${line.amount.text}`)),
    );
    assert.deepEqual(lines, [
      'fee 444.24', 'row 1 interest 1000.00', 'row 1 principal 7884.88', 'row 2 interest 921.15', 'row 2 principal 7963.73',
      'fee 35.00', 'row 3 interest 841.51', 'row 3 principal 909.49',
    ]);
  });

  it('existing credit pays a new fee on its date: an overpaid loan charged a manual fee of 30.00 keeps 70.00 of credit and owes no fee', async () => {
    const loan = await referenceLoan(account);
    await pay(account, loan, '2026-02-15', '8884.88');
    await pay(account, loan, '2026-03-15', '8884.88');
    await pay(account, loan, '2026-03-31', '84700.20');
    const read = async () => (await graph(account, `query ($loan: uuid!) { loans_by_pk(id: $loan) { status credit_balance fees_due } }`, { loan })).loans_by_pk;
    assert.deepEqual(await read(), { status: 'overpaid', credit_balance: 100, fees_due: 0 });
    const fee = await graph(account, `mutation ($loan: uuid!) { insert_fees_one(object: {loan_id: $loan, amount: "30.00", description: "statement copy"}) { date } }`, { loan });
    assert.equal(fee.insert_fees_one.date, '2026-11-30');
    assert.deepEqual(await read(), { status: 'overpaid', credit_balance: 70, fees_due: 0 });
  });
});
