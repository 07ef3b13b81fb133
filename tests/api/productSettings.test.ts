import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createApiKey } from '../../app/apiKeys.js';
import { startKeyedService, type KeyedAccount, type KeyedService } from '../support/seededService.js';
import { tokenHeader } from '../support/http.js';

/**
 * `GET`/`PATCH /api/product` (issue 29: SPEC §12's settings, editable with the product), through
 * the REST client, which checks every answer against the OpenAPI document. A change replays the
 * product's loans in the same transaction: R1's figures follow `allocation_order`, the late fees
 * follow the late-fee settings (migration 0015), a payoff quote follows `day_count` (R2).
 */
let s: KeyedService;

before(async () => {
  s = await startKeyedService({ fields: [{ name: 'Loan Officer', type: 'text' }] });
});
after(() => s?.close());

const DEFAULTS = {
  allocation_order: 'interest_principal_then_fees',
  day_count: 'actual/360',
  late_fee_grace_days: 10,
  late_fee_percent: 5,
  late_fee_fixed: null,
  late_fee_min: null,
  late_fee_max: null,
  nsf_fee: 0,
  arrears_tolerance: 0,
  delinquency_buckets: [
    { name: 'current', from: 0 },
    { name: '1-29', from: 1 },
    { name: '30-59', from: 30 },
    { name: '60-89', from: 60 },
    { name: '90-119', from: 90 },
    { name: '120+', from: 120 },
  ],
  investor_fee_share: 0,
};

async function settingsOf(account: KeyedAccount | KeyedService): Promise<Record<string, unknown>> {
  const answer = await account.rest.get('/api/product');
  assert.equal(answer.status, 200, answer.text);
  return answer.json.product.settings;
}

describe('GET /api/product', () => {
  it('reads the default product: every setting at its SPEC §12 default, the defaults, and the fields as `product field list` shows them', async () => {
    const answer = await s.rest.get('/api/product');
    assert.equal(answer.status, 200, answer.text);
    assert.deepEqual(answer.json.product.settings, DEFAULTS);
    assert.deepEqual(answer.json.product.defaults, DEFAULTS);
    // Money keeps its cents on the wire.
    assert.match(answer.text, /"nsf_fee":0\.00,"arrears_tolerance":0\.00/);
    const fields = answer.json.product.fields as any[];
    assert.deepEqual(fields[0], { body_key: 'Name', type: 'text', required: true, default: null, options: null, stored_in: 'loans.name', custom: false });
    assert.deepEqual(fields.at(-1), { body_key: 'Loan_Officer', type: 'text', required: false, default: null, options: null, stored_in: 'loans.custom_fields.loan_officer', custom: true });
    // The document shows every setting with its type, bounds, default and description.
    const schema = (s.rest.document as any).components.schemas.ProductSettings;
    assert.deepEqual(schema.properties.day_count.enum, ['actual/360', 'actual/365', '30/360']);
    assert.equal(schema.properties.late_fee_grace_days.maximum, 365);
    assert.equal(schema.properties.investor_fee_share.maximum, 1);
    assert.deepEqual(schema.properties.delinquency_buckets.default, DEFAULTS.delinquency_buckets);
    for (const name of Object.keys(DEFAULTS)) assert.ok(schema.properties[name].description.length > 20, name);
  });
});

describe('PATCH /api/product', () => {
  it('changes each kind of setting (enum, integer, decimal, nullable money set and cleared, buckets, fraction); decimals as numbers or strings', async () => {
    const account = await s.newAccount();
    const changed = await account.rest.patch('/api/product', {
      day_count: 'actual/365',
      late_fee_grace_days: 15,
      late_fee_percent: '7.5',
      late_fee_min: 25,
      late_fee_max: '100.5',
      nsf_fee: '30',
      arrears_tolerance: 1.25,
      delinquency_buckets: [{ name: 'current', from: 0 }, { name: 'late', from: 1 }, { name: 'default', from: 90 }],
      investor_fee_share: 0.25,
    });
    assert.equal(changed.status, 200, changed.text);
    assert.deepEqual(changed.json.changed, ['day_count', 'late_fee_grace_days', 'late_fee_percent', 'late_fee_min', 'late_fee_max', 'nsf_fee', 'arrears_tolerance', 'delinquency_buckets', 'investor_fee_share']);
    assert.match(changed.text, /"late_fee_max":100\.50,"nsf_fee":30\.00,"arrears_tolerance":1\.25/);
    const now = await settingsOf(account);
    assert.deepEqual(now, {
      ...DEFAULTS,
      day_count: 'actual/365',
      late_fee_grace_days: 15,
      late_fee_percent: 7.5,
      late_fee_min: 25,
      late_fee_max: 100.5,
      nsf_fee: 30,
      arrears_tolerance: 1.25,
      delinquency_buckets: [{ name: 'current', from: 0 }, { name: 'late', from: 1 }, { name: 'default', from: 90 }],
      investor_fee_share: 0.25,
    });
    // null clears a nullable setting; a fixed fee replaces the percent when the percent is cleared with it.
    const cleared = await account.rest.patch('/api/product', { late_fee_min: null, late_fee_percent: null, late_fee_fixed: 35 });
    assert.equal(cleared.status, 200, cleared.text);
    assert.deepEqual([cleared.json.product.settings.late_fee_min, cleared.json.product.settings.late_fee_percent, cleared.json.product.settings.late_fee_fixed], [null, null, 35]);
    // The same values again change nothing; an empty body neither.
    const same = await account.rest.patch('/api/product', { late_fee_fixed: '35.00', day_count: 'actual/365' });
    assert.deepEqual([same.status, same.json.changed, same.json.replayed_loans], [200, [], 0]);
    assert.equal((await account.rest.patch('/api/product', {})).status, 200);
  });

  const REFUSED: readonly [string, Record<string, unknown>, readonly string[], RegExp][] = [
    ['an unknown setting', { late_fee: 5 }, ['late_fee'], /unknown setting "late_fee"; the settings are allocation_order, day_count, late_fee_grace_days, .*investor_fee_share/],
    ['a __proto__ key', JSON.parse('{"__proto__": 1}'), ['__proto__'], /unknown setting "__proto__"/],
    ['a day count not offered', { day_count: 'actual/366' }, ['day_count'], /day_count must be one of actual\/360, actual\/365, 30\/360/],
    ['an allocation order as a number', { allocation_order: 1 }, ['allocation_order'], /allocation_order must be one of interest_principal_then_fees, fees_interest_principal/],
    ['a NUL character', { day_count: 'actual/360\u0000' }, ['day_count'], /day_count contains a NUL character/],
    ['negative grace days', { late_fee_grace_days: -1 }, ['late_fee_grace_days'], /late_fee_grace_days must be a whole number from 0 to 365/],
    ['grace days past a year', { late_fee_grace_days: 366 }, ['late_fee_grace_days'], /from 0 to 365/],
    ['fractional grace days', { late_fee_grace_days: 1.5 }, ['late_fee_grace_days'], /whole number/],
    ['grace days as a string', { late_fee_grace_days: '10' }, ['late_fee_grace_days'], /whole number/],
    ['a percent above 100', { late_fee_percent: 100.5 }, ['late_fee_percent'], /late_fee_percent must be a number from 0 to 100 with at most 4 decimal places, or null/],
    ['a percent with 5 decimals', { late_fee_percent: '1.23456' }, ['late_fee_percent'], /at most 4 decimal places/],
    ['a percent that is not a number', { late_fee_percent: 'five' }, ['late_fee_percent'], /late_fee_percent must be a number/],
    ['a null NSF fee', { nsf_fee: null }, ['nsf_fee'], /nsf_fee must be a number from 0 to 999,999,999,999\.99 with at most 2 decimal places \(it cannot be null\)/],
    ['a negative NSF fee', { nsf_fee: -1 }, ['nsf_fee'], /nsf_fee must be a number from 0/],
    ['an amount past numeric(14,2)', { late_fee_max: 1e15 }, ['late_fee_max'], /late_fee_max must be a number from 0 to 999,999,999,999\.99/],
    ['a tenth of a cent', { arrears_tolerance: 0.001 }, ['arrears_tolerance'], /at most 2 decimal places/],
    ['a share above 1', { investor_fee_share: 1.5 }, ['investor_fee_share'], /investor_fee_share must be a number from 0 to 1/],
    ['no buckets', { delinquency_buckets: [] }, ['delinquency_buckets'], /delinquency_buckets must be a list of 1 to 12 buckets .*\(0 buckets\)/],
    ['buckets not starting at 0', { delinquency_buckets: [{ name: 'late', from: 1 }] }, ['delinquency_buckets'], /the first bucket must start at 0/],
    ['buckets out of order', { delinquency_buckets: [{ name: 'a', from: 0 }, { name: 'b', from: 30 }, { name: 'c', from: 30 }] }, ['delinquency_buckets'], /bucket 3 starts at 30, not after 30/],
    ['a bucket name twice', { delinquency_buckets: [{ name: 'a', from: 0 }, { name: 'a', from: 1 }] }, ['delinquency_buckets'], /the name "a" is given twice/],
    ['a bucket with another key', { delinquency_buckets: [{ name: 'a', from: 0, to: 9 }] }, ['delinquency_buckets'], /bucket 1 has "to"/],
    ['a bucket name with NUL', { delinquency_buckets: [{ name: 'a\u0000', from: 0 }] }, ['delinquency_buckets'], /NUL character/],
    ['buckets as text', { delinquency_buckets: 'current: 0' }, ['delinquency_buckets'], /not a list/],
    ['a minimum above the maximum', { late_fee_min: 50, late_fee_max: 40 }, ['late_fee_min', 'late_fee_max'], /late_fee_min must not exceed late_fee_max \(50\.00 > 40\.00\)/],
    ['a fixed fee beside the percent', { late_fee_fixed: 25 }, ['late_fee_percent', 'late_fee_fixed'], /late_fee_percent and late_fee_fixed: .*not both: set late_fee_percent to null in the same change/],
    ['a minimum with no percent nor fixed fee', { late_fee_percent: null, late_fee_min: 10 }, ['late_fee_percent', 'late_fee_fixed', 'late_fee_min'], /late_fee_min holds a late fee within bounds, so it needs late_fee_percent or late_fee_fixed/],
    ['a good value beside a bad one', { day_count: '30/360', late_fee_grace_days: 'ten' }, ['late_fee_grace_days'], /late_fee_grace_days must be/],
  ];

  it('refuses every invalid value and unknown name with a 400 naming it, and changes nothing', async () => {
    const account = await s.newAccount();
    const before = await account.rest.get('/api/product');
    for (const [what, body, named, message] of REFUSED) {
      const answer = await account.rest.patch('/api/product', body);
      assert.equal(answer.status, 400, `${what}: ${answer.text}`);
      assert.match(answer.json.error, message, what);
      assert.deepEqual(Object.keys(answer.json.fields), named, what);
    }
    for (const raw of ['[]', '"day_count"', 'null', '{"day_count": ']) {
      const answer = await account.rest.patch('/api/product', null, { raw });
      assert.equal(answer.status, 400, `${raw}: ${answer.text}`);
    }
    assert.equal((await account.rest.get('/api/product')).text, before.text, 'nothing was written');
  });

  it('is for admin keys: another role gets 403 permission-denied and nothing changes; GET is for any role that reads loans', async () => {
    const readOnly = await createApiKey(s.db, s.accountId, 'reader', { role: 'read_only', variables: new Map() });
    const before = await s.rest.get('/api/product');
    const headers = { ...tokenHeader(readOnly.key), 'content-type': 'application/json' };
    const refused = await s.rest.send('PATCH', '/api/product', { body: JSON.stringify({ day_count: 'actual/365' }), headers });
    assert.equal(refused.status, 403, refused.text);
    assert.deepEqual([refused.json.code, refused.json.role, refused.json.permission], ['permission-denied', 'read_only', 'product.update']);
    const read = await s.rest.send('GET', '/api/product', { headers });
    assert.equal(read.status, 200);
    assert.equal(read.text, before.text);
    // The read-only key's document offers GET /api/product, not PATCH.
    const document = (await (await fetch(`${s.url}/api/openapi.json`, { headers })).json()) as any;
    assert.deepEqual(Object.keys(document.paths['/api/product']), ['get']);
  });
});

describe('a change replays the product\'s loans (SPEC §12)', () => {
  /** The reference loan of §7 (100,000 at 12 %, 12 monthly, funded 2026-01-15), in servicing. */
  async function referenceLoan(account: KeyedAccount): Promise<string> {
    const created = await account.rest.post('/api/loan', { Name: 'Reference loan', Amount: 100000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' });
    assert.equal(created.status, 201, created.text);
    return created.json.loan.id as string;
  }

  async function pay(account: KeyedAccount, loan: string, date: string, amount: string): Promise<void> {
    const response = await fetch(`${s.url}/api/graph`, {
      method: 'POST',
      headers: { ...tokenHeader(account.key), 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'mutation ($loan: uuid!, $date: date!, $amount: numeric!) { insert_payments_one(object: {loan_id: $loan, date: $date, amount: $amount, type: "regular", method: "ach"}) { id } }', variables: { loan, date, amount } }),
    });
    const body = (await response.json()) as { errors?: unknown };
    assert.equal(body.errors, undefined, JSON.stringify(body.errors));
  }

  /** The stored allocation lines of the loan's payments, as `row component amount` / `fee amount`. */
  async function allocations(account: KeyedAccount, loan: string): Promise<string[]> {
    const ledger = await account.rest.get(`/api/loan/${loan}/ledger`);
    assert.equal(ledger.status, 200, ledger.text);
    return ledger.exact.payments.flatMap((payment: any) =>
      payment.allocations.map((line: any) => (line.fee_id ? `fee ${line.amount.text}` : `row ${line.row_number.text} ${line.component} ${line.amount.text}`)),
    );
  }

  async function lateFees(account: KeyedAccount, loan: string): Promise<string[]> {
    const ledger = await account.rest.get(`/api/loan/${loan}/ledger`);
    return ledger.exact.fees.filter((fee: any) => ['1', '2'].includes(fee.row_number?.text)).map((fee: any) => `row ${fee.row_number.text} ${fee.date} ${fee.amount.text}`);
  }

  it('R1: switching allocation_order re-applies an already-posted payment; the late-fee settings re-derive its fees', async () => {
    const account = await s.newAccount();
    const loan = await referenceLoan(account);
    await pay(account, loan, '2026-03-20', '10000.00');
    assert.deepEqual(await allocations(account, loan), ['row 1 interest 1000.00', 'row 1 principal 7884.88', 'row 2 interest 921.15', 'row 2 principal 193.97']);
    assert.deepEqual(await lateFees(account, loan), ['row 1 2026-02-26 444.24', 'row 2 2026-03-26 444.24']);

    const fees = await account.rest.patch('/api/product', { allocation_order: 'fees_interest_principal' });
    assert.equal(fees.status, 200, fees.text);
    assert.deepEqual([fees.json.changed, fees.json.replayed_loans], [['allocation_order'], 1]);
    assert.deepEqual(await allocations(account, loan), ['fee 444.24', 'row 1 interest 1000.00', 'row 1 principal 7884.88', 'row 2 interest 670.88']);

    // A fixed fee instead of the percent: the existing fees become 50.00, and the payment pays 50.00 of fees.
    assert.equal((await account.rest.patch('/api/product', { late_fee_percent: null, late_fee_fixed: 50 })).status, 200);
    assert.deepEqual(await lateFees(account, loan), ['row 1 2026-02-26 50.00', 'row 2 2026-03-26 50.00']);
    assert.deepEqual(await allocations(account, loan), ['fee 50.00', 'row 1 interest 1000.00', 'row 1 principal 7884.88', 'row 2 interest 921.15', 'row 2 principal 143.97']);
    // Held within min/max.
    assert.equal((await account.rest.patch('/api/product', { late_fee_max: 30 })).status, 200);
    assert.deepEqual(await lateFees(account, loan), ['row 1 2026-02-26 30.00', 'row 2 2026-03-26 30.00']);
    // A 40-day grace: row 1 is paid on 03-20, within its grace (to 03-27), so it has no fee and the payment pays none.
    assert.equal((await account.rest.patch('/api/product', { late_fee_grace_days: 40 })).status, 200);
    assert.deepEqual(await lateFees(account, loan), ['row 2 2026-04-25 30.00']);
    assert.deepEqual(await allocations(account, loan), ['row 1 interest 1000.00', 'row 1 principal 7884.88', 'row 2 interest 921.15', 'row 2 principal 193.97']);
    // No late fee at all (a bound alone makes none, so it goes too): the fees are removed.
    assert.equal((await account.rest.patch('/api/product', { late_fee_fixed: null, late_fee_max: null })).status, 200);
    assert.deepEqual(await lateFees(account, loan), []);
  });

  it("delinquency_buckets and nsf_fee replay nothing: each loan's stored bucket is renamed in the same change, an NSF fee keeps the amount it was made with", async () => {
    const account = await s.newAccount();
    const graphAs = async (query: string, variables: Record<string, unknown>): Promise<any> => {
      const response = await fetch(`${s.url}/api/graph`, { method: 'POST', headers: { ...tokenHeader(account.key), 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
      const body = (await response.json()) as { data?: any; errors?: unknown };
      assert.equal(body.errors, undefined, JSON.stringify(body.errors));
      return body.data;
    };
    const loan = await referenceLoan(account);
    const nsfPayment = async (date: string, reversed: string): Promise<void> => {
      const id = (await graphAs('mutation ($loan: uuid!, $date: date!) { insert_payments_one(object: {loan_id: $loan, date: $date, amount: "8884.88", method: "ach"}) { id } }', { loan, date })).insert_payments_one.id;
      await graphAs('mutation ($id: uuid!, $on: date!) { update_payments_by_pk(pk_columns: {id: $id}, _set: {date_reversed: $on, reversal_reason: "nsf"}) { id } }', { id, on: reversed });
    };
    const state = async (): Promise<any> =>
      (await graphAs('query ($loan: uuid!) { loans_by_pk(id: $loan) { stored_days_past_due stored_delinquency_bucket delinquency_bucket fees(where: {kind: {_eq: "nsf"}}, order_by: {date: asc}) { date amount } } }', { loan })).loans_by_pk;

    assert.equal((await account.rest.patch('/api/product', { nsf_fee: 25 })).status, 200);
    await nsfPayment('2026-02-15', '2026-02-20');
    const before = await state();
    // Funded 2026-01-15 and nothing paid: row 1 (due 02-15) is months late whatever today is.
    assert.ok(before.stored_days_past_due >= 120, JSON.stringify(before));
    assert.deepEqual([before.stored_delinquency_bucket, before.delinquency_bucket], ['120+', '120+']);
    assert.deepEqual(before.fees, [{ date: '2026-02-20', amount: 25 }]);

    const buckets = await account.rest.patch('/api/product', { delinquency_buckets: [{ name: 'current', from: 0 }, { name: 'late', from: 1 }, { name: 'default', from: 90 }] });
    assert.equal(buckets.status, 200, buckets.text);
    assert.deepEqual([buckets.json.changed, buckets.json.replayed_loans], [['delinquency_buckets'], 0]);
    const renamed = await state();
    assert.deepEqual([renamed.stored_days_past_due, renamed.stored_delinquency_bucket, renamed.delinquency_bucket], [before.stored_days_past_due, 'default', 'default']);

    const nsf = await account.rest.patch('/api/product', { nsf_fee: 40 });
    assert.deepEqual([nsf.status, nsf.json.changed, nsf.json.replayed_loans], [200, ['nsf_fee'], 0]);
    assert.deepEqual((await state()).fees, [{ date: '2026-02-20', amount: 25 }]);
    // The next NSF reversal is charged the new amount.
    await nsfPayment('2026-03-15', '2026-03-18');
    assert.deepEqual((await state()).fees, [{ date: '2026-02-20', amount: 25 }, { date: '2026-03-18', amount: 40 }]);
  });

  it('R2: day_count changes the payoff quote on 2026-03-31 to the cent: accrued 448.81, 442.66, 420.76', async () => {
    const account = await s.newAccount();
    const loan = await referenceLoan(account);
    await pay(account, loan, '2026-02-15', '8884.88');
    await pay(account, loan, '2026-03-15', '8884.88');
    for (const [dayCount, accrued, payoff] of [['actual/360', '448.81', '84600.20'], ['actual/365', '442.66', '84594.05'], ['30/360', '420.76', '84572.15']] as const) {
      assert.equal((await account.rest.patch('/api/product', { day_count: dayCount })).status, 200);
      const quote = await account.rest.get(`/api/loan/${loan}/payoff?date=2026-03-31`);
      assert.deepEqual([quote.exact.accrued_interest.text, quote.exact.payoff.text], [accrued, payoff], dayCount);
    }
  });
});
