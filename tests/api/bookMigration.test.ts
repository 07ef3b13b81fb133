import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startKeyedService, type KeyedAccount, type KeyedService } from '../support/seededService.js';
import { installTestClock, setTestClock } from '../support/testClock.js';
import { addDays, feesOf, historicalBook, paymentsOf, type FeePolicy, type HistoricalBook, type HistoricalLoan, type Installment } from '../support/historicalBook.js';
import { verifyLedgers } from '../../app/ledgerVerify.js';
import { assessFees } from '../../app/feeJob.js';
import { createWebhookEndpoint, setWebhookEndpointActive } from '../../app/webhooks/endpoints.js';

/**
 * Moving a lender's existing book into loanql (README, "Moving an existing book into loanql"),
 * step by step as the README gives them, over HTTP: a book of loans funded months and years
 * back, with their borrowers, investors and payment history (late installments with their late
 * fees, split ones, missed ones, one returned NSF), loaded through `PATCH /api/product`,
 * `POST /api/loan` and the GraphQL mutations. Then each loan's ledger is what its history
 * implies — status, `date_closed`, `is_next`, the late and NSF fees on their historical days —,
 * `ledger verify` finds nothing to correct, the daily fee job assesses nothing new, and the same
 * book loaded newest payment first ends in the same ledgers.
 */
const BOOK: HistoricalBook = historicalBook(16);
const POLICY: FeePolicy = { graceDays: 10, lateFeePercent: 5, nsfFee: '25.00' };

let s: KeyedService;

before(async () => {
  s = await startKeyedService();
  await installTestClock(s.db);
  await setTestClock(s.db, BOOK.businessDate);
});
after(() => s?.close());

interface Sent {
  readonly status: number;
  readonly body: any;
}

async function send(account: KeyedAccount, method: string, path: string, body: unknown, idempotencyKey?: string): Promise<Sent> {
  const response = await fetch(`${s.url}${path}`, {
    method,
    headers: { authorization: `Token ${account.key}`, 'content-type': 'application/json', ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

async function graph(account: KeyedAccount, query: string, variables: Record<string, unknown> = {}, idempotencyKey?: string): Promise<any> {
  const answer = await send(account, 'POST', '/api/graph', { query, variables }, idempotencyKey);
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.equal(answer.body.errors, undefined, JSON.stringify(answer.body.errors));
  return answer.body.data;
}

const INSERT_PAYMENTS = `mutation ($objects: [payments_insert_input!]!) {
  insert_payments(objects: $objects) { returning { id loan_id date amount } }
}`;

interface LoadedLoan {
  readonly id: string;
  readonly history: HistoricalLoan;
  readonly schedule: readonly Installment[];
}

/**
 * The README's steps. `newestFirst`: the payments of the whole book in one list, newest first,
 * sent in batches of `batchSize` (a lender's export in any order); else loan by loan, oldest first.
 */
async function loadBook(account: KeyedAccount, book: HistoricalBook, options: { newestFirst: boolean; batchSize: number }): Promise<Map<string, LoadedLoan>> {
  // 1. The product's fee policy: the lender's, so that the fees the history implies are theirs.
  const product = await send(account, 'PATCH', '/api/product', {
    late_fee_grace_days: POLICY.graceDays, late_fee_percent: POLICY.lateFeePercent, nsf_fee: POLICY.nsfFee,
  });
  assert.equal(product.status, 200, JSON.stringify(product.body));

  // 2. Investors as people.
  const people = await graph(account, `mutation ($objects: [people_insert_input!]!) { insert_people(objects: $objects) { returning { id email } } }`, {
    objects: book.investors.map((investor) => ({ name: investor.name, email: investor.email, entity_type: 'individual' })),
  }, `${account.accountId}-people`);
  const investorIds = new Map<string, string>(people.insert_people.returning.map((p: any) => [p.email, p.id]));

  // 3. Each loan, in servicing, with its borrower (found or created by name and e-mail).
  const loaded = new Map<string, LoadedLoan>();
  for (const loan of book.loans) {
    const created = await send(account, 'POST', '/api/loan', {
      Name: loan.name, Amount: loan.amount, Rate: loan.rate, Term: loan.term, Frequency: 'monthly', Amortization: loan.amortization,
      Date_Funded: loan.dateFunded, Status: 'servicing', Borrower_Name: loan.borrower.name, Borrower_Email: loan.borrower.email,
    }, `${account.accountId}-${loan.name.replaceAll(" ", "-")}`);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    loaded.set(loan.name, { id: created.body.loan.id, history: loan, schedule: [] });
  }

  // 4. The schedules loanql made (the history pays their installments), and the funding sources.
  const read = await graph(account, `{ loans { id name schedules(order_by: {number: asc}) { number due payment } } }`);
  for (const row of read.loans) {
    const entry = loaded.get(row.name)!;
    loaded.set(row.name, { ...entry, schedule: row.schedules.map((r: any) => ({ number: r.number, due: r.due, payment: Number(r.payment).toFixed(2) })) });
  }
  const sources = book.loans.flatMap((loan) => loan.fundedBy.map((funding) => ({
    loan_id: loaded.get(loan.name)!.id,
    person_id: investorIds.get(book.investors[funding.investor]!.email),
    original_amount: (loan.amount * funding.share).toFixed(2),
    rate: funding.rate,
    date_funded: loan.dateFunded,
  })));
  await graph(account, `mutation ($objects: [funding_sources_insert_input!]!) { insert_funding_sources(objects: $objects) { affected_rows } }`, { objects: sources }, `${account.accountId}-sources`);

  // 5. The payments, in batches; 6. the returned ones reversed, with their reason.
  const payments = [...loaded.values()].flatMap((loan) =>
    paymentsOf(loan.history, loan.schedule, POLICY).map((payment) => ({ loan: loan.id, ...payment })));
  if (options.newestFirst) payments.sort((a, b) => (a.date < b.date ? 1 : a.date > b.date ? -1 : 0));
  const reversals: { id: string; date: string; reason: string }[] = [];
  for (let start = 0; start < payments.length; start += options.batchSize) {
    const batch = payments.slice(start, start + options.batchSize);
    const inserted = await graph(account, INSERT_PAYMENTS, {
      objects: batch.map((p) => ({ loan_id: p.loan, date: p.date, amount: p.amount, method: 'ach' })),
    }, `${account.accountId}-payments-${start}`);
    inserted.insert_payments.returning.forEach((row: any, i: number) => {
      const reversed = batch[i]!.reversed;
      if (reversed) reversals.push({ id: row.id, date: reversed.date, reason: reversed.reason });
    });
  }
  if (reversals.length) {
    await graph(account, `mutation ($updates: [payments_updates!]!) { update_payments_many(updates: $updates) { affected_rows } }`, {
      updates: reversals.map((r) => ({ where: { id: { _eq: r.id } }, _set: { date_reversed: r.date, reversal_reason: r.reason } })),
    }, `${account.accountId}-reversals`);
  }
  return loaded;
}

/** What a loan's ledger says, as `GET /api/loan/{id}/ledger` and GraphQL give it, in comparable text. */
async function ledgerOf(account: KeyedAccount, loanId: string): Promise<any> {
  const ledger = await send(account, 'GET', `/api/loan/${loanId}/ledger`, undefined);
  assert.equal(ledger.status, 200, JSON.stringify(ledger.body));
  const next = await graph(account, `query ($id: uuid!) { loans_by_pk(id: $id) { schedules(where: {is_next: {_eq: true}}) { number } } }`, { id: loanId });
  return {
    status: ledger.body.status,
    date_closed: ledger.body.date_closed,
    balances: ledger.body.balances,
    next: next.loans_by_pk.schedules.map((row: any) => row.number),
    fees: ledger.body.fees.map((f: any) => `${f.kind} ${f.date} ${Number(f.amount).toFixed(2)} paid ${Number(f.paid).toFixed(2)}`).sort(),
    payments: ledger.body.payments
      .map((p: any) => `${p.date} ${Number(p.amount).toFixed(2)}${p.date_reversed ? ` reversed ${p.date_reversed} ${p.reversal_reason}` : ''}: ${p.allocations.map((a: any) => `${a.row_number ?? 'fee'} ${a.component} ${Number(a.amount).toFixed(2)}`).join(', ')}`)
      .sort(),
  };
}

describe('Moving an existing book into loanql', () => {
  let oldestFirst: KeyedAccount;
  let loaded: Map<string, LoadedLoan>;

  before(async () => {
    oldestFirst = s;
    loaded = await loadBook(oldestFirst, BOOK, { newestFirst: false, batchSize: 1000 });
  });

  it('gives each loan the status, closing day, next installment and fees its history implies', async () => {
    let closed = 0;
    let behind = 0;
    let withFees = 0;
    for (const loan of loaded.values()) {
      const ledger = await ledgerOf(oldestFirst, loan.id);
      const history = loan.history;
      const missed = history.fates.findIndex((fate) => fate.kind === 'missed');
      const expectedFees = feesOf(history, loan.schedule, POLICY, BOOK.businessDate);
      assert.deepEqual(ledger.fees.map((f: string) => f.replace(/ paid .*/, '')), expectedFees, `${history.name}: fees`);
      if (expectedFees.length) withFees += 1;
      if (history.fates.length === loan.schedule.length && missed < 0) {
        closed += 1;
        const payments = paymentsOf(history, loan.schedule, POLICY);
        assert.equal(ledger.status, 'closed', `${history.name}: paid off`);
        assert.equal(ledger.date_closed, payments.at(-1)!.date, `${history.name}: closed on its last payment`);
        assert.deepEqual(ledger.next, [], `${history.name}: no next installment`);
        assert.equal(ledger.balances.fees_due, 0, `${history.name}: its fees were paid with the payments`);
      } else {
        assert.equal(ledger.status, 'servicing', history.name);
        assert.equal(ledger.date_closed, null, history.name);
        const firstUnpaid = missed >= 0 ? missed : history.fates.length;
        assert.deepEqual(ledger.next, [firstUnpaid + 1], `${history.name}: next installment`);
        if (missed >= 0) {
          behind += 1;
          const due = loan.schedule[missed]!.due;
          assert.equal(ledger.balances.oldest_unpaid_due, due, history.name);
          assert.equal(ledger.balances.days_past_due, (Date.parse(BOOK.businessDate) - Date.parse(due)) / 86_400_000, history.name);
        } else {
          assert.equal(ledger.balances.days_past_due, 0, history.name);
          assert.equal(ledger.balances.fees_due, 0, `${history.name}: its fees were paid with the payments`);
        }
      }
    }
    // The book has every case the test is about.
    assert.ok(closed >= 2 && behind >= 1 && withFees >= 3, `closed ${closed}, behind ${behind}, with fees ${withFees}`);
  });

  it('leaves nothing for ledger verify to correct, nor for the daily fee job to assess', async () => {
    const report = await verifyLedgers(s.db, { accountId: oldestFirst.accountId });
    assert.equal(report.checked, BOOK.loans.length);
    assert.deepEqual(report.differing, []);
    const [run] = await assessFees(s.db, { accountSlug: oldestFirst.account.slug });
    assert.equal(run!.feesAssessed, 0, 'the history already holds every fee up to the business date');
  });

  it('ends in the same ledgers when the payments arrive newest first, in smaller batches', async () => {
    const newestFirst = await s.newAccount();
    const other = await loadBook(newestFirst, BOOK, { newestFirst: true, batchSize: 37 });
    for (const [name, loan] of loaded) {
      assert.deepEqual(await ledgerOf(newestFirst, other.get(name)!.id), await ledgerOf(oldestFirst, loan.id), name);
    }
    // Each investor is owed the same, whatever order the payments came in (R10's adjustment lines net out).
    const owed = async (account: KeyedAccount): Promise<string[]> => {
      const { rows } = await s.db.query<{ email: string; loan: string; component: string; amount: string }>(
        `SELECT p.email, l.name AS loan, d.component, sum(d.amount)::text AS amount
           FROM distributions d JOIN people p ON p.account_id = d.account_id AND p.id = d.person_id JOIN loans l ON l.account_id = d.account_id AND l.id = d.loan_id
          WHERE d.account_id = $1 GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`, [account.accountId]);
      return rows.map((r) => `${r.email} ${r.loan} ${r.component} ${r.amount}`);
    };
    const lines = await owed(oldestFirst);
    assert.ok(lines.length > 0);
    assert.deepEqual(await owed(newestFirst), lines);
  });

  it('stores no webhook event for a load made before the lender adds its endpoints, or while they are disabled', async () => {
    const events = async (account: KeyedAccount): Promise<number> =>
      (await s.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_outbox WHERE account_id = $1`, [account.accountId])).rows[0]!.n;
    assert.equal(await events(oldestFirst), 0);
    // An account already live disables its endpoints (the dashboard's Webhooks page) for the load, then enables them.
    const live = await s.newAccount();
    const endpoint = await createWebhookEndpoint(s.db, live.accountId, { url: 'http://127.0.0.1:9/hooks' }, { knownEventTypes: new Set(), allowPrivate: true });
    await setWebhookEndpointActive(s.db, endpoint.id, false, live.accountId);
    const small = { ...BOOK, loans: BOOK.loans.slice(0, 3) };
    const loadedQuietly = await loadBook(live, small, { newestFirst: false, batchSize: 1000 });
    assert.equal(await events(live), 0, 'nothing stored for the load');
    await setWebhookEndpointActive(s.db, endpoint.id, true, live.accountId);
    const servicing = [...loadedQuietly.values()].find((loan) => loan.history.fates.length < loan.schedule.length)!;
    await graph(live, `mutation ($loan: uuid!) { insert_payments_one(object: {loan_id: $loan, date: "${BOOK.businessDate}", amount: 100}) { id } }`, { loan: servicing.id });
    const { rows } = await s.db.query<{ type: string }>(`SELECT DISTINCT type FROM webhook_outbox WHERE account_id = $1 ORDER BY 1`, [live.accountId]);
    assert.ok(rows.some((row) => row.type === 'payment.posted'), JSON.stringify(rows));
  });

  it('keeps the fees the lender charged: a late fee it waived, a manual fee it charged, each on its historical day', async () => {
    const lender = await s.newAccount();
    assert.equal((await send(lender, 'PATCH', '/api/product', { late_fee_grace_days: 10, late_fee_percent: 5 })).status, 200);
    const created = await send(lender, 'POST', '/api/loan', {
      Name: 'Extended once', Amount: 12000, Rate: 12, Term: 6, Frequency: 'monthly', Date_Funded: '2025-01-10', Status: 'servicing',
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const loan = created.body.loan.id as string;
    const { loans_by_pk: { schedules } } = await graph(lender, `query ($loan: uuid!) { loans_by_pk(id: $loan) { schedules(order_by: {number: asc}) { number due payment } } }`, { loan });
    // The manual fee first: a loan its payments close takes none.
    const manual = await graph(lender, `mutation ($loan: uuid!) { insert_fees_one(object: {loan_id: $loan, date: "2025-04-01", amount: 150, description: "Extension fee"}) { id kind } }`, { loan });
    assert.equal(manual.insert_fees_one.kind, 'manual');
    // Row 2 paid 20 days late, its fee waived by the lender then; row 4 paid with the extension fee.
    const payments = schedules.map((row: any) => ({
      loan_id: loan,
      date: row.number === 2 ? addDays(row.due, 20) : row.due,
      amount: (Number(row.payment) + (row.number === 4 ? 150 : 0)).toFixed(2),
    }));
    await graph(lender, INSERT_PAYMENTS, { objects: payments });
    const late = await graph(lender, `query ($loan: uuid!) { fees(where: {loan_id: {_eq: $loan}, kind: {_eq: "late"}}) { id date amount row_number } }`, { loan });
    assert.deepEqual(late.fees.map((f: any) => [f.row_number, f.date]), [[2, addDays(schedules[1].due, 11)]]);
    await graph(lender, `mutation ($fee: uuid!, $day: date!) { insert_fee_waivers_one(object: {fee_id: $fee, waived_on: $day, waived_by: "Lender (before loanql)", reason: "first late payment"}) { id } }`, {
      fee: late.fees[0].id, day: late.fees[0].date,
    });
    const ledger = await ledgerOf(lender, loan);
    assert.equal(ledger.status, 'closed');
    assert.equal(ledger.date_closed, schedules.at(-1).due);
    const fees = (await send(lender, 'GET', `/api/loan/${loan}/ledger`, undefined)).body.fees.map((f: any) => `${f.kind} ${f.date} ${f.amount} paid ${f.paid} waived ${f.waived}`);
    assert.deepEqual(fees.sort(), [`late ${late.fees[0].date} ${late.fees[0].amount} paid 0 waived ${late.fees[0].amount}`, 'manual 2025-04-01 150 paid 150 waived 0']);
    assert.deepEqual((await verifyLedgers(s.db, { accountId: lender.accountId })).differing, []);
  });
});
