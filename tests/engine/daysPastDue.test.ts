import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { graphData } from '../support/graphData.js';
import { startKeyedService, type KeyedService } from '../support/seededService.js';

/**
 * Issue 31: `days_past_due`, `delinquency_bucket` and `amount_past_due` of loans (SPEC §12 R3).
 * Without `as_of`, `days_past_due` is its stored form (metadata `stored_form`: the stored
 * `arrears_since` of migration 0019 against the business date), filtered and ordered through the
 * index; with `as_of`, the replay (`loanql_ledger`). Generated loans and payment histories
 * (fast-check, fixed seed) show the two agree on every loan whose ledger is current, for every
 * operator and threshold and for the order.
 */
let s: KeyedService;
let today = '';

before(async () => {
  s = await startKeyedService();
  today = (await s.db.query<{ day: string }>(`SELECT loanql_business_date($1)::text AS day`, [s.accountId])).rows[0]!.day;
});
after(() => s?.close());

const graph = (query: string, variables: Record<string, unknown> = {}): Promise<any> => graphData(s.url, s.key, query, variables);

function addDays(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

async function pay(loan: string, date: string, amount: string): Promise<void> {
  await graph(
    `mutation ($loan: uuid!, $date: date!, $amount: numeric!) { insert_payments_one(object: {loan_id: $loan, date: $date, amount: $amount, type: "regular", method: "ach"}) { id } }`,
    { loan, date, amount },
  );
}

async function createLoan(name: string, funded: string, amount = 100000, extra: Record<string, unknown> = {}): Promise<string> {
  const created = await s.rest.post('/api/loan', { Name: name, Amount: amount, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: funded, Status: 'servicing', ...extra });
  assert.equal(created.status, 201, created.text);
  return created.json.loan.id as string;
}

describe('days past due, bucket and amount past due (SPEC §12 R3)', () => {
  it("R3's example: 33 days (30-59) on 2026-03-20 before R1's payment, 5 (1-29) after; the amount past due beside it", async () => {
    await s.db.query(`INSERT INTO products (account_id, name, is_default) VALUES ($1, 'Default', true) ON CONFLICT DO NOTHING`, [s.accountId]);
    const loan = await createLoan('Reference loan', '2026-01-15');
    const on = `query ($id: uuid!) { loans_by_pk(id: $id) {
      days_past_due(args: {as_of: "2026-03-20"}) delinquency_bucket(args: {as_of: "2026-03-20"}) amount_past_due(args: {as_of: "2026-03-20"})
      d19: days_past_due(args: {as_of: "2026-03-19"}) b19: delinquency_bucket(args: {as_of: "2026-03-19"}) } }`;
    const before = (await graph(on, { id: loan })).loans_by_pk;
    assert.deepEqual(before, { days_past_due: 33, delinquency_bucket: '30-59', amount_past_due: 17769.76, d19: 32, b19: '30-59' });
    await pay(loan, '2026-03-20', '10000.00');
    const afterPayment = (await graph(on, { id: loan })).loans_by_pk;
    // Row 1 paid; row 2 (due 03-15) short by 8,884.88 − 921.15 − 193.97 = 7,769.76.
    assert.deepEqual(afterPayment, { days_past_due: 5, delinquency_bucket: '1-29', amount_past_due: 7769.76, d19: 32, b19: '30-59' });
    await s.db.query(`DELETE FROM loans WHERE account_id = $1 AND id = $2`, [s.accountId, loan]).catch(() => undefined);
  });

  it('agrees with the replay on generated loans and histories: value, every operator and threshold, the order (fixed seed)', async () => {
    // Products with and without an arrears tolerance (R3: a row within it counts as paid).
    const products = new Map<string, string>();
    for (const tolerance of ['0', '5.00', '500.00']) {
      const { rows } = await s.db.query<{ id: string }>(`INSERT INTO products (account_id, name, arrears_tolerance) VALUES ($1, $2, $3) RETURNING id`, [s.accountId, `tolerance ${tolerance}`, tolerance]);
      products.set(tolerance, rows[0]!.id);
    }
    const history = fc.record({
      monthsAgo: fc.integer({ min: 0, max: 9 }),
      dayShift: fc.integer({ min: 0, max: 27 }),
      tolerance: fc.constantFrom('0', '5.00', '500.00'),
      payments: fc.array(fc.record({ afterFunding: fc.integer({ min: 0, max: 300 }), cents: fc.oneof(fc.constant(888488), fc.constant(888486), fc.integer({ min: 100, max: 2_000_000 })) }), { maxLength: 6 }),
    });
    const cases = fc.sample(history, { seed: 31, numRuns: 36 });
    const ids: string[] = [];
    for (const [index, c] of cases.entries()) {
      const funded = addDays(today, -(c.monthsAgo * 30 + c.dayShift));
      const id = await createLoan(`Generated ${index}`, funded);
      await s.db.query(`UPDATE loans SET product_id = $3 WHERE account_id = $1 AND id = $2`, [s.accountId, id, products.get(c.tolerance)]);
      // Only payments dated up to the business date: a loan with a later one is not current (docs/ledger.md).
      for (const p of c.payments) {
        const date = addDays(funded, p.afterFunding);
        if (date <= today) await pay(id, date, (p.cents / 100).toFixed(2));
      }
      ids.push(id);
    }
    const exact = (await graph(`query ($ids: [uuid!]!, $today: date!) { loans(where: {id: {_in: $ids}}) { id stored: days_past_due replayed: days_past_due(args: {as_of: $today}) } }`, { ids, today })).loans as {
      id: string;
      stored: number;
      replayed: number;
    }[];
    assert.equal(exact.length, ids.length);
    const byId = new Map(exact.map((loan) => [loan.id, loan.replayed]));
    for (const loan of exact) assert.equal(loan.stored, loan.replayed, `loan ${loan.id}`);
    const values = new Set(exact.map((loan) => loan.replayed));
    assert.ok([...values].some((v) => v === 0) && [...values].some((v) => v > 30), `a spread of days past due: ${[...values].join(', ')}`);

    const compare = { _eq: (a: number, b: number) => a === b, _neq: (a: number, b: number) => a !== b, _gt: (a: number, b: number) => a > b, _gte: (a: number, b: number) => a >= b, _lt: (a: number, b: number) => a < b, _lte: (a: number, b: number) => a <= b };
    // And GraphQL Int's ends: today − 2147483647 days is no date PostgreSQL holds, and 2147483647 + 1 no integer.
    const thresholds = [-1, 0, 1, ...values, 30, 31, 400, 2_147_483_647, -2_147_483_648, 1_000_001, -1_000_001];
    for (const [operator, holds] of Object.entries(compare)) {
      for (const n of thresholds) {
        const data = await graph(`query ($ids: [uuid!]!) { loans(where: {id: {_in: $ids}, days_past_due: {${operator}: ${n}}}) { id } }`, { ids });
        const got = new Set((data.loans as { id: string }[]).map((loan) => loan.id));
        const want = new Set(ids.filter((id) => holds(byId.get(id)!, n)));
        assert.deepEqual(got, want, `days_past_due ${operator} ${n}`);
      }
    }
    for (const [isNull, count] of [[true, 0], [false, ids.length]] as const) {
      const data = await graph(`query ($ids: [uuid!]!) { loans(where: {id: {_in: $ids}, days_past_due: {_is_null: ${isNull}}}) { id } }`, { ids });
      assert.equal(data.loans.length, count, `_is_null: ${isNull}`);
    }
    for (const direction of ['desc', 'asc'] as const) {
      const data = await graph(`query ($ids: [uuid!]!) { loans(where: {id: {_in: $ids}}, order_by: {days_past_due: ${direction}}) { id } }`, { ids });
      const order = (data.loans as { id: string }[]).map((loan) => byId.get(loan.id)!);
      const sorted = [...order].sort((a, b) => (direction === 'desc' ? b - a : a - b));
      assert.deepEqual(order, sorted, `order_by days_past_due ${direction}`);
    }
  });

  it('a variable compares the value exactly; a filter through a relationship uses the same form', async () => {
    const data = await graph(`query ($n: Int!) { all: loans_aggregate { aggregate { count } } late: loans_aggregate(where: {days_past_due: {_gte: $n}}) { aggregate { count } }
      lateInline: loans_aggregate(where: {days_past_due: {_gte: 1}}) { aggregate { count } }
      payments: payments_aggregate(where: {loan: {days_past_due: {_gte: 1}}}) { aggregate { count } }
      paymentsAll: payments_aggregate(where: {loan: {days_past_due: {_gte: 0}}}) { aggregate { count } } allPayments: payments_aggregate { aggregate { count } } }`, { n: 1 });
    assert.equal(data.late.aggregate.count, data.lateInline.aggregate.count);
    assert.ok(data.late.aggregate.count > 0 && data.late.aggregate.count < data.all.aggregate.count);
    assert.equal(data.paymentsAll.aggregate.count, data.allPayments.aggregate.count);
    assert.ok(data.payments.aggregate.count <= data.allPayments.aggregate.count);
  });

  it('refuses an operator the stored form does not offer, naming it', async () => {
    const response = await fetch(`${s.url}/api/graph`, {
      method: 'POST',
      headers: { authorization: `Token ${s.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ loans(where: {days_past_due: {_in: [1, 2]}}) { id } }' }),
    });
    const body = (await response.json()) as { errors?: { message: string }[] };
    assert.match(body.errors?.[0]?.message ?? '', /_in/);
  });
});
