import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createApiKey } from '../../app/apiKeys.js';
import { assessFees } from '../../app/feeJob.js';
import { startKeyedService, type KeyedService } from '../support/seededService.js';
import { installTestClock, setTestClock } from '../support/testClock.js';

/**
 * Issue 31, Done when 1: SPEC §12 R3, R4 and R8's NSF example over HTTP to the cent — the
 * reference loan created over REST, payments posted and reversed through GraphQL, the daily fee
 * job run as the worker runs it, the stored delinquency and fees read through GraphQL. Then
 * waivers and manual fees, with the roles that may write them.
 *
 * The clock: the database's business date is the test clock's day (support/testClock.ts), set
 * for every connection of the service, to walk through 2026 as the examples do.
 */
let s: KeyedService;

before(async () => {
  s = await startKeyedService();
  await installTestClock(s.db);
});
after(() => s?.close());

async function clock(day: string): Promise<void> {
  await setTestClock(s.db, day);
}

async function graph(query: string, variables: Record<string, unknown> = {}, key = s.key): Promise<any> {
  const response = await fetch(`${s.url}/api/graph`, {
    method: 'POST',
    headers: { authorization: `Token ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  return (await response.json()) as { data?: any; errors?: any[] };
}

async function referenceLoan(settings: Record<string, string | number> = {}): Promise<string> {
  await s.db.query(`INSERT INTO products (account_id, name, is_default) VALUES ($1, 'Default', true) ON CONFLICT DO NOTHING`, [s.accountId]);
  await s.db.query(`UPDATE products SET nsf_fee = 0 WHERE account_id = $1`, [s.accountId]);
  for (const [setting, value] of Object.entries(settings)) await s.db.query(`UPDATE products SET ${setting} = $2 WHERE account_id = $1`, [s.accountId, value]);
  await clock('2026-01-15');
  const created = await s.rest.post('/api/loan', { Name: 'Reference loan', Amount: 100000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' });
  assert.equal(created.status, 201, created.text);
  return created.json.loan.id as string;
}

async function pay(loan: string, date: string, amount: string): Promise<string> {
  await clock(date);
  const answer = await graph(`mutation ($loan: uuid!, $date: date!, $amount: numeric!) { insert_payments_one(object: {loan_id: $loan, date: $date, amount: $amount, method: "ach"}) { id } }`, { loan, date, amount });
  assert.equal(answer.errors, undefined, JSON.stringify(answer.errors));
  return answer.data.insert_payments_one.id as string;
}

/** The job as the worker runs it, on `day`. */
async function runJob(day: string) {
  await clock(day);
  const [run] = await assessFees(s.db, { accountSlug: s.account.slug });
  return run!;
}

async function loanState(loan: string, asOf?: string) {
  const answer = await graph(
    `query ($loan: uuid!, $asOf: date) { loans_by_pk(id: $loan) { stored_days_past_due stored_delinquency_bucket ledger_as_of fees_due
       days_past_due(args: {as_of: $asOf}) fees(order_by: {date: asc}) { id kind date amount paid waived waived_by waived_reason } } }`,
    { loan, asOf: asOf ?? null },
  );
  assert.equal(answer.errors, undefined, JSON.stringify(answer.errors));
  const l = answer.data.loans_by_pk;
  return { ...l, feeList: l.fees.map((f: any) => `${f.kind} ${f.date} ${Number(f.amount).toFixed(2)}`) };
}

describe('SPEC §12 R3, R4, R8 over HTTP with the daily job (issue 31)', () => {
  it('R3 and R4: 444.24 dated 02-26; 33 days (30-59) on 03-20 before the payment, 5 (1-29) after; a second 444.24 dated 03-26', async () => {
    const loan = await referenceLoan();
    assert.deepEqual((await loanState(loan)).feeList, []);
    assert.equal((await loanState(loan)).stored_delinquency_bucket, 'current');

    const feb25 = await runJob('2026-02-25');
    assert.deepEqual(feb25.days, ['2026-02-25']);
    assert.deepEqual((await loanState(loan)).feeList, [], 'row 1 is still within its grace on 02-25');

    const feb26 = await runJob('2026-02-26');
    assert.equal(feb26.feesAssessed, 1);
    assert.equal(feb26.feesAmount, '444.24');
    let state = await loanState(loan);
    assert.deepEqual(state.feeList, ['late 2026-02-26 444.24']);
    assert.equal(state.stored_days_past_due, 11);

    const mar20 = await runJob('2026-03-20');
    assert.equal(mar20.days.length, 22, 'the days from 02-27 to 03-20 are recorded as caught up');
    state = await loanState(loan);
    assert.equal(state.stored_days_past_due, 33);
    assert.equal(state.stored_delinquency_bucket, '30-59');
    assert.equal(state.days_past_due, 33);

    await pay(loan, '2026-03-20', '10000.00');
    state = await loanState(loan);
    assert.equal(state.stored_days_past_due, 5, 'the payment replays the stored delinquency in its own transaction');
    assert.equal(state.stored_delinquency_bucket, '1-29');

    await runJob('2026-03-25');
    assert.deepEqual((await loanState(loan)).feeList, ['late 2026-02-26 444.24']);
    const mar26 = await runJob('2026-03-26');
    assert.equal(mar26.feesAssessed, 1);
    state = await loanState(loan);
    assert.deepEqual(state.feeList, ['late 2026-02-26 444.24', 'late 2026-03-26 444.24']);
    assert.equal(state.stored_days_past_due, 11);

    const again = await runJob('2026-03-26');
    assert.deepEqual(again.days, [], 'a day already done is not run again');
    assert.deepEqual((await loanState(loan)).feeList, ['late 2026-02-26 444.24', 'late 2026-03-26 444.24']);
  });

  it('R8: P1 reversed as NSF on 02-20 (nsf_fee 25.00): P2 pays row 1; the NSF fee 25.00 (02-20) and row 1\'s late fee 444.24 (02-26) appear; 5 days past due on 03-20', async () => {
    const loan = await referenceLoan({ nsf_fee: '25.00' });
    const p1 = await pay(loan, '2026-02-13', '8884.88');
    await runJob('2026-03-14');
    assert.deepEqual((await loanState(loan)).feeList, []);
    await pay(loan, '2026-03-15', '8884.88');
    await clock('2026-03-20');
    const reversed = await graph(`mutation ($id: uuid!) { update_payments_by_pk(pk_columns: {id: $id}, _set: {date_reversed: "2026-02-20", reversal_reason: "nsf"}) { id } }`, { id: p1 });
    assert.equal(reversed.errors, undefined, JSON.stringify(reversed.errors));
    const state = await loanState(loan, '2026-03-20');
    assert.deepEqual(state.feeList, ['nsf 2026-02-20 25.00', 'late 2026-02-26 444.24']);
    assert.equal(state.days_past_due, 5);
    assert.equal(state.stored_days_past_due, 5);
    assert.equal(state.stored_delinquency_bucket, '1-29');
  });
});

describe('Waivers and manual fees through GraphQL (issue 31)', () => {
  let loan: string;
  const keys = new Map<string, string>();

  before(async () => {
    loan = await referenceLoan();
    // (this account's job has run to 03-26 above: the day's replay brings the loan to 03-01)
    await clock('2026-03-01');
    await s.db.query('SELECT loanql_refresh_next(ARRAY[$1::uuid], ARRAY[$2::uuid])', [s.accountId, loan]);
    for (const role of ['servicer', 'read_only']) keys.set(role, (await createApiKey(s.db, s.accountId, `${role} key`, { role, variables: new Map() })).key);
    const person = (await s.db.query<{ id: string }>(`INSERT INTO people (account_id, name) VALUES ($1, 'Investor') RETURNING id`, [s.accountId])).rows[0]!.id;
    keys.set('investor', (await createApiKey(s.db, s.accountId, 'investor key', { role: 'investor', variables: new Map([['person_id', person]]) })).key);
  });

  const waive = (fee: string, reason: string, key = s.key, waivedOn?: string) =>
    graph(`mutation ($fee: uuid!, $reason: String!, $on: date) { insert_fee_waivers_one(object: {fee_id: $fee, reason: $reason, waived_by: "Sam Servicer", waived_on: $on}) { id waived_on waived_by reason loan_id } }`, { fee, reason, on: waivedOn ?? null }, key);

  it('a servicer waives the late fee: a record (who, when, why); fees_due drops by what was unpaid; the waiver survives every replay and a reversal that removes and restores the fee', async () => {
    const late = (await loanState(loan)).fees[0];
    assert.equal(late.kind, 'late');
    assert.equal((await loanState(loan)).fees_due, 444.24);
    // Who waives is required over GraphQL (docs/ledger.md, "Who"): left out, null or blank, a validation error naming waived_by, nothing written.
    for (const by of ['', 'null', '"  "']) {
      const unsigned = await graph(`mutation ($fee: uuid!) { insert_fee_waivers_one(object: {fee_id: $fee, reason: "no signature"${by && `, waived_by: ${by}`}}) { id } }`, { fee: late.id });
      assert.deepEqual([unsigned.errors?.[0]?.extensions?.code, unsigned.errors?.[0]?.extensions?.fields], ['validation-failed', ['waived_by']], JSON.stringify(unsigned));
    }
    assert.equal((await loanState(loan)).fees_due, 444.24);
    const answer = await waive(late.id, 'first late payment, goodwill', keys.get('servicer'));
    assert.equal(answer.errors, undefined, JSON.stringify(answer.errors));
    assert.deepEqual({ ...answer.data.insert_fee_waivers_one, id: undefined }, { id: undefined, waived_on: '2026-03-01', waived_by: 'Sam Servicer', reason: 'first late payment, goodwill', loan_id: loan });
    let state = await loanState(loan);
    assert.equal(state.fees_due, 0);
    assert.deepEqual([state.fees[0].waived, state.fees[0].waived_by, state.fees[0].waived_reason], [444.24, 'Sam Servicer', 'first late payment, goodwill']);

    // A payment dated within row 1's grace removes the late fee; its reversal derives the same fee again, still waived.
    const early = await pay(loan, '2026-02-20', '8884.88');
    await clock('2026-03-01');
    assert.deepEqual((await loanState(loan)).feeList, []);
    const reversed = await graph(`mutation ($id: uuid!) { update_payments_by_pk(pk_columns: {id: $id}, _set: {date_reversed: "2026-03-01", reversal_reason: "error"}) { id } }`, { id: early });
    assert.equal(reversed.errors, undefined, JSON.stringify(reversed.errors));
    state = await loanState(loan);
    assert.deepEqual(state.feeList, ['late 2026-02-26 444.24']);
    assert.equal(state.fees[0].id, late.id, 'a late fee is its loan and row: the same id');
    assert.equal(state.fees[0].waived, 444.24);
    assert.equal(state.fees_due, 0);
    const count = await s.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM fee_waivers WHERE account_id = $1`, [s.accountId]);
    assert.equal(count.rows[0]!.n, 1);
  });

  it('refuses a second waiver, one dated before its fee, a fee of nobody, and a blank reason — 400-style errors naming the field, nothing written', async () => {
    const late = (await loanState(loan)).fees[0];
    const second = await waive(late.id, 'again');
    assert.ok(second.errors, JSON.stringify(second));
    assert.match(JSON.stringify(second.errors), /fee_id/);
    const early = await waive(late.id, 'too early', s.key, '2026-02-01');
    assert.match(JSON.stringify(early.errors), /fee_id|waived_on/);
    const nobody = await waive('00000000-0000-0000-0000-000000000001', 'no such fee');
    assert.match(JSON.stringify(nobody.errors), /fee_id/);
    const blank = await waive(late.id, '   ');
    assert.ok(blank.errors);
    const count = await s.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM fee_waivers WHERE account_id = $1`, [s.accountId]);
    assert.equal(count.rows[0]!.n, 1);
  });

  it('a servicer adds a manual fee (kind manual, dated the business date): in fees_due and paid through the waterfall; investor and read_only keys may not', async () => {
    await clock('2026-03-01');
    const add = (key: string) =>
      graph(`mutation ($loan: uuid!) { insert_fees_one(object: {loan_id: $loan, amount: "35.00", description: "returned mail"}) { id kind date amount description } }`, { loan }, key);
    const answer = await add(keys.get('servicer')!);
    assert.equal(answer.errors, undefined, JSON.stringify(answer.errors));
    assert.deepEqual({ ...answer.data.insert_fees_one, id: undefined }, { id: undefined, kind: 'manual', date: '2026-03-01', amount: 35, description: 'returned mail' });
    assert.equal((await loanState(loan)).fees_due, 35);
    for (const role of ['read_only', 'investor']) {
      const refused = await add(keys.get(role)!);
      assert.ok(refused.errors, `${role} may not add a fee`);
      const waiver = await waive(answer.data.insert_fees_one.id, 'no', keys.get(role));
      assert.ok(waiver.errors, `${role} may not waive a fee`);
    }
    const bad = await graph(`mutation ($loan: uuid!) { insert_fees_one(object: {loan_id: $loan, amount: "-5"}) { id } }`, { loan });
    assert.match(JSON.stringify(bad.errors), /amount/);
    await pay(loan, '2026-03-02', '9000.00');
    const paid = (await loanState(loan)).fees.find((f: any) => f.kind === 'manual');
    assert.equal(paid.paid, 35, 'the waterfall pays the manual fee after the due rows');
  });

  it('a fee paid in full cannot be waived (a 400 naming fee_id): what was paid stays paid', async () => {
    const manual = (await loanState(loan)).fees.find((f: any) => f.kind === 'manual');
    const answer = await waive(manual.id, 'too late');
    assert.equal(answer.errors?.[0]?.extensions?.constraint, 'fee_waivers_unpaid');
    assert.deepEqual(answer.errors?.[0]?.extensions?.fields, ['fee_id']);
  });
});
