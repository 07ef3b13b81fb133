import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { graphBody, graphData } from '../support/graphData.js';
import { connect, subscribe } from '../support/graphSocket.js';
import { startKeyedService, type KeyedService } from '../support/seededService.js';
import { installTestClock, setTestClock } from '../support/testClock.js';

/**
 * Four loose ends of a dates audit (session 37), each on every GraphQL path: a payment dated far
 * ahead (the database refuses it, migration 0065), a computed field's `as_of` outside the years
 * REST's `?date=` takes, a CHECK rule answered by its name only, and a stream's unbounded
 * `batch_size`. The business date is the test clock's 2026-06-30.
 */
let s: KeyedService;
let loanId: string;
const TODAY = '2026-06-30';

before(async () => {
  s = await startKeyedService();
  await s.db.query(`INSERT INTO products (account_id, name, is_default) VALUES ($1, 'Default', true) ON CONFLICT DO NOTHING`, [s.accountId]);
  await installTestClock(s.db);
  await setTestClock(s.db, TODAY);
  const created = await s.rest.post('/api/loan', { Name: 'Edges loan', Status: 'servicing', Amount: 12000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15' });
  assert.equal(created.status, 201, created.text);
  loanId = created.json.loan.id;
});
after(() => s?.close());

const graph = (query: string, variables: Record<string, unknown> = {}): Promise<any> => graphBody(s.url, s.key, query, variables);

/** Everything a payment's write touches for the account, as one text. */
async function footprint(): Promise<string> {
  const { rows } = await s.db.query(
    `SELECT (SELECT json_agg(p ORDER BY p.id) FROM payments p WHERE p.account_id = $1)::text AS payments,
            (SELECT json_agg(l ORDER BY l.id) FROM loans l WHERE l.account_id = $1)::text AS loans,
            (SELECT count(*) FROM fees WHERE account_id = $1)::int AS fees, (SELECT count(*) FROM fee_waivers WHERE account_id = $1)::int AS waivers`,
    [s.accountId],
  );
  return JSON.stringify(rows[0]);
}

/** The one error of a refused request, asserted to be `code`. */
function onlyError(answer: { data?: unknown; errors?: any[] }, code: string): { message: string; extensions: Record<string, any> } {
  assert.equal(answer.errors?.length, 1, JSON.stringify(answer));
  assert.equal(answer.errors![0].extensions.code, code, JSON.stringify(answer.errors));
  return answer.errors![0];
}

describe('A payment is dated at most a year after the business date, on every write path (migration 0065)', () => {
  const farAhead = (day: string) => `date: ${day} is more than a year after the business date (${TODAY}); a post-dated payment is dated within a year of it (on or before 2027-06-30)`;

  it('insert_payments_one and insert_payments of a day beyond it are validation-failed naming date and the limit; nothing is written', async () => {
    const before = await footprint();
    // 2062 for 2026: before, taken, and the loan's stored figures stood as of 2062 (every row late, a late fee each).
    for (const day of ['2062-06-30', '2027-07-01']) {
      const one = onlyError(await graph(`mutation ($loan: uuid!, $day: date!) { insert_payments_one(object: {loan_id: $loan, date: $day, amount: "100.00"}) { id } }`, { loan: loanId, day }), 'validation-failed');
      assert.equal(one.message, `insert_payments_one: ${farAhead(day)}`);
      assert.deepEqual(one.extensions.fields, ['date']);
    }
    const many = onlyError(
      await graph(`mutation ($loan: uuid!) { insert_payments(objects: [{loan_id: $loan, date: "2026-06-15", amount: "100.00"}, {loan_id: $loan, date: "2099-01-01", amount: "100.00"}]) { affected_rows } }`, { loan: loanId }),
      'validation-failed',
    );
    assert.equal(many.message, `insert_payments: ${farAhead('2099-01-01')}`);
    assert.equal(await footprint(), before);
  });

  it('a year ahead to the day (a post-dated cheque) is taken', async () => {
    const taken = await graphData(s.url, s.key, `mutation ($loan: uuid!) { insert_payments_one(object: {loan_id: $loan, date: "2027-06-30", amount: "10.00"}) { id date } }`, { loan: loanId });
    assert.equal(taken.insert_payments_one.date, '2027-06-30');
    // Reversed on its own day, it leaves the ledger as it was.
    const reversed = await graphData(s.url, s.key, `mutation ($id: uuid!) { update_payments_by_pk(pk_columns: {id: $id}, _set: {date_reversed: "2027-06-30", reversal_reason: "error"}) { date_reversed } }`, { id: taken.insert_payments_one.id });
    assert.equal(reversed.update_payments_by_pk.date_reversed, '2027-06-30');
  });

  it('an update re-dating a payment beyond it is refused (SQL: GraphQL does not update date); a payment stored beyond it before 0065 can still be reversed', async () => {
    const stored = await s.db.transaction(async (tx) => {
      // History loaded as of its own day, with the setting the seeder loads under.
      await tx.query(`SELECT set_config('loanql.business_date', '2062-06-30', true)`);
      return (await tx.query<{ id: string }>(`INSERT INTO payments (account_id, loan_id, date, amount) VALUES ($1, $2, '2062-06-30', 5) RETURNING id`, [s.accountId, loanId])).rows[0]!.id;
    });
    await assert.rejects(
      s.db.query(`UPDATE payments SET date = '2063-01-01' WHERE account_id = $1 AND id = $2`, [s.accountId, stored]),
      (error: any) => error.code === '22023' && error.column === 'date' && /date: 2063-01-01 is more than a year after the business date \(2026-06-30\)/.test(error.message),
    );
    const reversed = await graphData(s.url, s.key, `mutation ($id: uuid!) { update_payments_by_pk(pk_columns: {id: $id}, _set: {date_reversed: "2062-06-30", reversal_reason: "error"}) { date_reversed } }`, { id: stored });
    assert.equal(reversed.update_payments_by_pk.date_reversed, '2062-06-30');
  });
});

describe("A computed field's as_of is a day in the years 1900–2999, as REST's ?date= takes", () => {
  it('0001-01-01 and 9999-12-31, written or in a variable, are validation-failed naming the argument and its field', async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      [`query ($id: uuid!) { loans_by_pk(id: $id) { payoff(args: {as_of: "9999-12-31"}) } }`, {}, 'as_of of payoff: 9999-12-31'],
      [`query ($id: uuid!) { loans_by_pk(id: $id) { days_past_due(args: {as_of: "0001-01-01"}) } }`, {}, 'as_of of days_past_due: 0001-01-01'],
      [`query ($id: uuid!, $d: date) { loans_by_pk(id: $id) { accrued_interest(args: {as_of: $d}) } }`, { d: '1899-12-31' }, 'Variable "$d": as_of of accrued_interest: 1899-12-31'],
      [`query ($id: uuid!, $d: date) { loans(where: {id: {_eq: $id}}) { per_diem(args: {as_of: $d}) delinquency_bucket(args: {as_of: "2026-06-30"}) } }`, { d: '3000-01-01' }, 'Variable "$d": as_of of per_diem: 3000-01-01'],
      [`query ($id: uuid!) { loans_by_pk(id: $id) { delinquency_bucket(args: {as_of: "0026-06-30"}) } }`, {}, 'as_of of delinquency_bucket: 0026-06-30'],
    ];
    for (const [query, variables, said] of cases) {
      const error = onlyError(await graph(query, { id: loanId, ...variables }), 'validation-failed');
      assert.equal(error.message, `${said} is not in the years 1900–2999, the days the ledger is read as of`, query);
    }
  });

  it('in a mutation\'s returning, a variable out of them is refused before anything is written', async () => {
    const before = await footprint();
    const error = onlyError(
      await graph(`mutation ($loan: uuid!, $d: date) { insert_payments_one(object: {loan_id: $loan, date: "2026-06-01", amount: "1.00"}) { loan { payoff(args: {as_of: $d}) } } }`, { loan: loanId, d: '9999-12-31' }),
      'validation-failed',
    );
    assert.equal(error.message, 'Variable "$d": as_of of payoff: 9999-12-31 is not in the years 1900–2999, the days the ledger is read as of');
    assert.equal(await footprint(), before);
  });

  it('the first and last days of them are taken', async () => {
    const data = await graphData(s.url, s.key, `query ($id: uuid!, $d: date) { loans_by_pk(id: $id) { first: payoff(args: {as_of: "1900-01-01"}) last: payoff(args: {as_of: $d}) days_past_due(args: {as_of: "2999-12-31"}) } }`, { id: loanId, d: '2999-12-31' });
    assert.ok(data.loans_by_pk.last !== undefined && data.loans_by_pk.first !== undefined);
    assert.equal(typeof data.loans_by_pk.days_past_due, 'number');
  });
});

describe('A payment, fee or waiver rule the database keeps is answered with a sentence, not its name', () => {
  it('a reversal dated before its payment, and every other CHECK rule of payments, fees, waivers and loans a write can break', async () => {
    const paid = await graphData(s.url, s.key, `mutation ($loan: uuid!) { insert_payments_one(object: {loan_id: $loan, date: "2026-03-15", amount: "50.00"}) { id } }`, { loan: loanId });
    const paymentId = paid.insert_payments_one.id as string;
    const fee = await graphData(s.url, s.key, `mutation ($loan: uuid!) { insert_fees_one(object: {loan_id: $loan, date: "2026-03-15", amount: "25.00"}) { id } }`, { loan: loanId });
    const feeId = fee.insert_fees_one.id as string;
    const before = await footprint();
    const cases: [string, Record<string, unknown>, string, string][] = [
      [`mutation ($id: uuid!) { update_payments_by_pk(pk_columns: {id: $id}, _set: {date_reversed: "2026-03-01"}) { id } }`, { id: paymentId },
        'update_payments_by_pk: date_reversed: a payment is reversed on or after its own date, not before', 'payments_reversed_after_posting'],
      [`mutation ($id: uuid!) { update_payments_by_pk(pk_columns: {id: $id}, _set: {date_reversed: "2026-06-30", reversal_reason: "typo"}) { id } }`, { id: paymentId },
        'update_payments_by_pk: reversal_reason: expected one of nsf, error, returned, other', 'payments_reversal_reason'],
      [`mutation ($id: uuid!) { update_payments_by_pk(pk_columns: {id: $id}, _set: {reversal_reason: "error"}) { id } }`, { id: paymentId },
        'update_payments_by_pk: reversal_reason: a reason is given with a reversal (date_reversed), not without one', 'payments_reason_with_reversal'],
      [`mutation ($loan: uuid!) { insert_payments_one(object: {loan_id: $loan, date: "2026-03-15", amount: "0"}) { id } }`, { loan: loanId },
        'insert_payments_one: amount: a payment is more than 0.00', 'payments_amount_positive'],
      [`mutation ($loan: uuid!) { insert_payments_one(object: {loan_id: $loan, date: "2026-03-15", amount: "5.00", type: "bonus"}) { id } }`, { loan: loanId },
        'insert_payments_one: type: expected one of regular, payoff, principal, refund, fee', 'payments_type'],
      [`mutation ($loan: uuid!) { insert_fees_one(object: {loan_id: $loan, date: "2026-03-15", amount: "-1.00"}) { id } }`, { loan: loanId },
        'insert_fees_one: amount: a fee is more than 0.00', 'fees_amount_positive'],
      [`mutation ($loan: uuid!, $text: String) { insert_fees_one(object: {loan_id: $loan, date: "2026-03-15", amount: "1.00", description: $text}) { id } }`, { loan: loanId, text: 'x'.repeat(501) },
        "insert_fees_one: description: a fee's description is at most 500 characters", 'fees_description_length'],
      [`mutation ($fee: uuid!) { insert_fee_waivers_one(object: {fee_id: $fee, waived_by: "Kim", reason: "  "}) { id } }`, { fee: feeId },
        'insert_fee_waivers_one: reason: why the fee is waived is not blank and at most 500 characters', 'fee_waivers_reason'],
      [`mutation ($fee: uuid!, $who: String) { insert_fee_waivers_one(object: {fee_id: $fee, waived_by: $who, reason: "goodwill"}) { id } }`, { fee: feeId, who: 'K'.repeat(201) },
        'insert_fee_waivers_one: waived_by: who waives the fee is not blank and at most 200 characters', 'fee_waivers_waived_by'],
      // A loan's status and name over GraphQL, as REST words them (before session 39: "the value breaks the rule loans_status_check").
      [`mutation ($id: uuid!) { update_loans_by_pk(pk_columns: {id: $id}, _set: {status: "archived"}) { id } }`, { id: loanId },
        'update_loans_by_pk: status: expected one of lead, servicing, closed, overpaid', 'loans_status_check'],
      [`mutation ($id: uuid!) { update_loans_by_pk(pk_columns: {id: $id}, _set: {name: "  "}) { id } }`, { id: loanId },
        "update_loans_by_pk: name: a loan's name is not blank", 'loans_name_not_blank'],
    ];
    for (const [query, variables, message, constraint] of cases) {
      const error = onlyError(await graph(query, variables), 'check-violation');
      assert.equal(error.message, message, query);
      assert.equal(error.extensions.constraint, constraint);
    }
    assert.equal(await footprint(), before);
  });
});

describe("A stream's batch_size is at most 1000 rows with MAX_ROWS unset (STREAM_BATCH_MAX)", () => {
  const stream = (size: string) =>
    `subscription${size.startsWith('$') ? '($n: Int!)' : ''} { payments_stream(batch_size: ${size}, cursor: {initial_value: {posted_at: "2020-01-01T00:00:00Z"}}) { id posted_at } }`;

  it('over WebSocket, 100000 written or 1001 in a variable is validation-failed naming batch_size and the limit; 1000 streams', async () => {
    const client = connect(s.url, s.key);
    try {
      for (const [size, n, said] of [
        ['100000', 1, 'batch_size 100000'],
        ['$n', 1001, 'Variable "$n": batch_size 1001'],
      ] as const) {
        const refused = subscribe(client.client, stream(size), size.startsWith('$') ? { n } : undefined);
        // Before: the batch ran (a result, not an error); a refusal ends the subscription at once.
        const ended = (await Promise.race([refused.ended, refused.next(10_000)])) as { message: string; extensions: { code: string } }[];
        refused.stop();
        assert.ok(Array.isArray(ended), JSON.stringify(ended));
        assert.equal(ended[0]!.extensions.code, 'validation-failed');
        assert.match(ended[0]!.message, new RegExp(`^${said.replace(/\$/g, '\\$')} is over the maximum of 1000 rows per stream batch \\(MAX_ROWS, when set, is the maximum instead\\)`));
      }
      const taken = subscribe(client.client, stream('$n'), { n: 1000 });
      const first = await taken.next(10_000);
      assert.ok(first.data.payments_stream.length >= 1, JSON.stringify(first));
      taken.stop();
    } finally {
      await client.dispose();
    }
  });
});
