import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { dataOf, exactDataOf, parseExact, startSeededService, type SeededAccount, type SeededService } from '../support/seededService.js';

/**
 * SPEC §3 through the query engine: an API key reaches its own account and nothing else, in
 * every query shape.
 *
 * Accounts A and B are seeded with the SAME seed, so they hold the same names, amounts and
 * shapes (only ids differ). B also holds "twin" rows that reuse ids of A's rows — allowed,
 * since primary keys are (account_id, id) — and hang B-only payments, borrowers, addresses,
 * valuations, tasks and comments off them. Joining or filtering on an id without the tenant
 * predicate would therefore pick up B's rows; every assertion below compares A's answer with
 * SQL restricted to A, and checks that B's key does see B's rows (so the case could fail).
 */
let a: SeededService;
let b: SeededAccount;
/** A loan of A with payments, borrowers and an address; B has a loan with the same id. */
let twinLoanId: string;
let twinPersonId: string;
let twinAddressId: string;
/** A loan id that exists only in B. */
let bOnlyLoanId: string;

const SEED = 1; // the default: the first account is the dump most files load (openSeededTestDatabase)
/** Half the default scale: two accounts are seeded. */
const SCALE = 0.01;
const B_MARK = 'B-only';

before(async () => {
  a = await startSeededService({ seed: SEED, scale: SCALE, others: [{ seed: SEED, scale: SCALE }] });
  [b] = a.others as [SeededAccount];
  const A = a.account.id;
  const B = b.account.id;
  const [loan] = await a.sql<{ id: string; person_id: string; address_id: string }>(
    `SELECT l.id, min(bo.person_id::text)::uuid AS person_id, min(d.address_id::text)::uuid AS address_id
       FROM loans l
       JOIN borrows bo ON bo.account_id = l.account_id AND bo.loan_id = l.id
       JOIN address_details d ON d.account_id = l.account_id AND d.loan_id = l.id
      WHERE l.account_id = $1 AND l.status = 'servicing'
        AND EXISTS (SELECT 1 FROM payments p WHERE p.account_id = l.account_id AND p.loan_id = l.id)
        AND EXISTS (SELECT 1 FROM valuations v WHERE v.account_id = d.account_id AND v.address_id = d.address_id)
      GROUP BY l.id ORDER BY l.id LIMIT 1`,
    [A],
  );
  twinLoanId = loan!.id;
  twinPersonId = loan!.person_id;
  twinAddressId = loan!.address_id;
  bOnlyLoanId = (await a.sql<{ id: string }>(`SELECT id FROM loans WHERE account_id = $1 ORDER BY id LIMIT 1`, [B]))[0]!.id;

  // B's twins: same ids as A's rows, B's values (names sort first, amounts stand out, dates are newest).
  await a.db.transaction(async (tx) => {
    // A payment is dated at most a year after the business date (migration 0065): the fixture is
    // loaded as of its newest day, with the setting the seeder loads history under.
    await tx.query(`SELECT set_config('loanql.business_date', '2099-01-01', true)`);
    await tx.query(`INSERT INTO loans (account_id, id, name, amount, status, rate) VALUES ($1, $2, '0000 ${B_MARK} twin loan', 1.11, 'servicing', 99)`, [B, twinLoanId]);
    await tx.query(`INSERT INTO people (account_id, id, name, is_borrower) VALUES ($1, $2, '${B_MARK} Zed Smith', true)`, [B, twinPersonId]);
    await tx.query(`INSERT INTO borrows (account_id, loan_id, person_id) VALUES ($1, $2, $3)`, [B, twinLoanId, twinPersonId]);
    await tx.query(`INSERT INTO guarantees (account_id, loan_id, person_id) VALUES ($1, $2, $3)`, [B, twinLoanId, twinPersonId]);
    // A payment is taken by a loan with a schedule (migration 0061): one row.
    await tx.query(`INSERT INTO schedules (account_id, loan_id, number, due, payment, principal, interest, balance) VALUES ($1, $2, 1, '2099-01-01', 1.11, 1.11, 0, 0)`, [B, twinLoanId]);
    await tx.query(`INSERT INTO payments (account_id, loan_id, date, amount, type, method) SELECT $1, $2, DATE '2099-01-01' + n, 1.11, 'regular', 'ach' FROM generate_series(1, 3) n`, [B, twinLoanId]);
    await tx.query(`INSERT INTO addresses (account_id, id, street1, city) VALUES ($1, $2, '1 ${B_MARK} St', '${B_MARK} City')`, [B, twinAddressId]);
    await tx.query(`INSERT INTO address_details (account_id, loan_id, address_id) VALUES ($1, $2, $3)`, [B, twinLoanId, twinAddressId]);
    await tx.query(`INSERT INTO valuations (account_id, address_id, value, valuation_type, report_date) VALUES ($1, $2, 9.99, 'appraisal', '2099-12-31')`, [B, twinAddressId]);
    await tx.query(`INSERT INTO insurances (account_id, address_id, carrier, type, coverage_amount, expiration) VALUES ($1, $2, '${B_MARK} Mutual', 'hazard', 1.11, '2099-12-31')`, [B, twinAddressId]);
    await tx.query(`INSERT INTO funding_sources (account_id, person_id, loan_id, class, original_amount) VALUES ($1, $2, $3, 'senior', 1.11)`, [B, twinPersonId, twinLoanId]);
    await tx.query(`INSERT INTO tasks (account_id, loan_id, name, status, date_due) VALUES ($1, $2, '${B_MARK} task', 'open', '2099-01-01')`, [B, twinLoanId]);
    await tx.query(`INSERT INTO comments (account_id, loan_id, admin_id, text) VALUES ($1, $2, $3, '${B_MARK} comment')`, [B, twinLoanId, b.adminId]);
  });
});

after(async () => {
  await a?.close();
});

/** `POST /api/graph` with B's key. */
function asB(query: string, variables?: Record<string, unknown>) {
  return a.post('/api/graph', { query, ...(variables ? { variables } : {}) }, { authorization: `Token ${b.apiKey}` });
}

/** The data A's key gets, after checking that no B-only value appears anywhere in the text. */
async function asA(query: string, variables?: Record<string, unknown>): Promise<any> {
  const answer = await a.graph(query, variables);
  assert.ok(!answer.text.includes(B_MARK), `A's answer shows a row of B: ${answer.text.slice(0, 500)}`);
  assert.ok(!answer.text.includes(b.account.id), `A's answer shows B's account id`);
  return exactDataOf(answer);
}

async function sqlJson(text: string, values: readonly unknown[] = []): Promise<any> {
  const rows = await a.sql<{ j: string }>(`SELECT (${text})::text AS j`, [a.account.id, ...values]);
  return parseExact(rows[0]!.j);
}

describe('tenancy through POST /api/graph (SPEC §3)', () => {
  it('seeds both accounts alike: the same names in A and B', async () => {
    const [row] = await a.sql<{ same: boolean; n: string }>(
      `SELECT (SELECT array_agg(name ORDER BY name) FROM loans WHERE account_id = $1) = (SELECT array_agg(name ORDER BY name) FROM loans WHERE account_id = $2 AND name NOT LIKE '%${B_MARK}%') AS same,
              (SELECT count(*) FROM loans WHERE account_id = $1) AS n`,
      [a.account.id, b.account.id],
    );
    assert.equal(row!.same, true);
    assert.ok(Number(row!.n) >= 100);
  });

  it('B’s key does see the twin rows (so every check below could fail)', async () => {
    const data = dataOf(await asB(`query($id: uuid!) { loans_by_pk(id: $id) { name payments { amount } borrows { person { name } } } }`, { id: twinLoanId }));
    assert.equal(data.loans_by_pk.name, `0000 ${B_MARK} twin loan`);
    assert.equal(data.loans_by_pk.payments.length, 3);
    assert.deepEqual(data.loans_by_pk.borrows, [{ person: { name: `${B_MARK} Zed Smith` } }]);
  });

  it('lists only A’s rows', async () => {
    const data = await asA(`{ loans { id } people { id } payments { id } valuations { id } tasks { id } comments { id } }`);
    for (const table of ['loans', 'people', 'payments', 'valuations', 'tasks', 'comments']) {
      const expected = (await a.sql<{ id: string }>(`SELECT id FROM ${table} WHERE account_id = $1 ORDER BY id`, [a.account.id])).map((row) => row.id);
      assert.deepEqual(
        data[table].map((row: { id: string }) => row.id),
        expected,
        table,
      );
    }
  });

  it('gives null from _by_pk for an id that exists only in B', async () => {
    const data = await asA(`query($id: uuid!) { loans_by_pk(id: $id) { id name } }`, { id: bOnlyLoanId });
    assert.deepEqual(data, { loans_by_pk: null });
    assert.equal(dataOf(await asB(`query($id: uuid!) { loans_by_pk(id: $id) { id } }`, { id: bOnlyLoanId })).loans_by_pk.id, bOnlyLoanId);
  });

  it('gives A’s row from _by_pk for an id both accounts use', async () => {
    const data = await asA(`query($id: uuid!) { loans_by_pk(id: $id) { id name amount } people_by_pk(id: "${twinPersonId}") { name } addresses_by_pk(id: "${twinAddressId}") { city } }`, { id: twinLoanId });
    assert.deepEqual(data.loans_by_pk, await sqlJson(`SELECT json_build_object('id', id, 'name', name, 'amount', amount) FROM loans WHERE account_id = $1 AND id = $2`, [twinLoanId]));
    assert.deepEqual(data.people_by_pk, await sqlJson(`SELECT json_build_object('name', name) FROM people WHERE account_id = $1 AND id = $2`, [twinPersonId]));
    assert.deepEqual(data.addresses_by_pk, await sqlJson(`SELECT json_build_object('city', city) FROM addresses WHERE account_id = $1 AND id = $2`, [twinAddressId]));
  });

  it('counts and sums only A’s rows in aggregates', async () => {
    const data = await asA(`{
      loans_aggregate { aggregate { count sum { amount } max { rate } } }
      payments_aggregate { aggregate { count sum { amount } max { date } } }
      people_aggregate { aggregate { count(columns: [name], distinct: true) } }
      valuations_aggregate { aggregate { count max { report_date } } }
    }`);
    assert.deepEqual(data.loans_aggregate.aggregate, await sqlJson(`SELECT json_build_object('count', count(*), 'sum', json_build_object('amount', sum(amount)), 'max', json_build_object('rate', max(rate))) FROM loans WHERE account_id = $1`));
    assert.deepEqual(data.payments_aggregate.aggregate, await sqlJson(`SELECT json_build_object('count', count(*), 'sum', json_build_object('amount', sum(amount)), 'max', json_build_object('date', max(date))) FROM payments WHERE account_id = $1`));
    assert.deepEqual(data.people_aggregate.aggregate, await sqlJson(`SELECT json_build_object('count', count(DISTINCT name)) FROM people WHERE account_id = $1`));
    assert.deepEqual(data.valuations_aggregate.aggregate, await sqlJson(`SELECT json_build_object('count', count(*), 'max', json_build_object('report_date', max(report_date))) FROM valuations WHERE account_id = $1`));
  });

  it('follows relationships of a shared id into A’s rows only (array and object relationships, three levels deep)', async () => {
    const data = await asA(
      `query($id: uuid!) { loans_by_pk(id: $id) {
        payments { id amount }
        borrows { person { id name } }
        guarantees { person { name } }
        address_details { address { city valuations { value report_date } insurances { carrier } } }
        funding_sources { original_amount person { name } }
        tasks { name }
        comments { text admin { name } }
      } }`,
      { id: twinLoanId },
    );
    const loan = data.loans_by_pk;
    assert.deepEqual(loan.payments, await sqlJson(`SELECT coalesce(json_agg(json_build_object('id', id, 'amount', amount) ORDER BY id), '[]') FROM payments WHERE account_id = $1 AND loan_id = $2`, [twinLoanId]));
    assert.ok(loan.payments.length > 0);
    assert.deepEqual(
      loan.borrows,
      await sqlJson(
        `SELECT json_agg(json_build_object('person', json_build_object('id', p.id, 'name', p.name)) ORDER BY b.id)
           FROM borrows b JOIN people p ON p.account_id = b.account_id AND p.id = b.person_id WHERE b.account_id = $1 AND b.loan_id = $2`,
        [twinLoanId],
      ),
    );
    assert.ok(loan.address_details.length > 0);
    for (const detail of loan.address_details) assert.ok(detail.address.valuations.length > 0);
    assert.equal(loan.tasks.length, Number((await a.sql<{ n: string }>(`SELECT count(*) AS n FROM tasks WHERE account_id = $1 AND loan_id = $2`, [a.account.id, twinLoanId]))[0]!.n));
  });

  it('filters through relationships with A’s rows only', async () => {
    const data = await asA(`{
      byBorrower: loans(where: {borrows: {person: {name: {_ilike: "%${B_MARK}%"}}}}) { id }
      byPayment: loans(where: {payments: {amount: {_eq: 1.11}}}) { id }
      byValuation: addresses(where: {valuations: {report_date: {_gt: "2098-01-01"}}}) { id }
      byLoan: payments(where: {loan: {rate: {_eq: 99}}}) { id }
      byPerson: borrows(where: {person: {name: {_ilike: "%${B_MARK}%"}}}) { id }
    }`);
    assert.deepEqual(data, { byBorrower: [], byPayment: [], byValuation: [], byLoan: [], byPerson: [] });
    const seen = dataOf(await asB(`{ byBorrower: loans(where: {borrows: {person: {name: {_ilike: "%${B_MARK}%"}}}}) { id } byLoan: payments(where: {loan: {rate: {_eq: 99}}}) { id } }`));
    assert.deepEqual(seen.byBorrower, [{ id: twinLoanId }]);
    assert.equal(seen.byLoan.length, 3);
  });

  it('aggregates under a relationship over A’s rows only', async () => {
    const data = await asA(`query($id: uuid!) { loans_by_pk(id: $id) { payments_aggregate { aggregate { count sum { amount } max { date } } nodes { id } } borrows_aggregate { aggregate { count } } } }`, { id: twinLoanId });
    const expected = await sqlJson(
      `SELECT json_build_object('count', count(*), 'sum', json_build_object('amount', sum(amount)), 'max', json_build_object('date', max(date))) FROM payments WHERE account_id = $1 AND loan_id = $2`,
      [twinLoanId],
    );
    assert.deepEqual(data.loans_by_pk.payments_aggregate.aggregate, expected);
    assert.equal(data.loans_by_pk.payments_aggregate.nodes.length, Number(expected.count.text));
    assert.deepEqual(data.loans_by_pk.borrows_aggregate.aggregate, await sqlJson(`SELECT json_build_object('count', count(*)) FROM borrows WHERE account_id = $1 AND loan_id = $2`, [twinLoanId]));
  });

  it('sorts through an object relationship by A’s related row', async () => {
    const data = await asA(`{ payments(order_by: [{loan: {name: asc}}, {date: asc}]) { id loan { name } } borrows(order_by: {person: {name: asc}}) { id } }`);
    const payments = (
      await a.sql<{ id: string }>(
        `SELECT p.id FROM payments p JOIN loans l ON l.account_id = p.account_id AND l.id = p.loan_id WHERE p.account_id = $1 ORDER BY l.name, p.date, p.id`,
        [a.account.id],
      )
    ).map((row) => row.id);
    assert.deepEqual(
      data.payments.map((row: { id: string }) => row.id),
      payments,
    );
    const borrows = (
      await a.sql<{ id: string }>(
        `SELECT b.id FROM borrows b JOIN people p ON p.account_id = b.account_id AND p.id = b.person_id WHERE b.account_id = $1 ORDER BY p.name, b.id`,
        [a.account.id],
      )
    ).map((row) => row.id);
    assert.deepEqual(
      data.borrows.map((row: { id: string }) => row.id),
      borrows,
    );
  });

  it('keeps the newest-record pattern inside A (B’s 2099 valuation of a shared address id is not newest)', async () => {
    const data = await asA(`query($id: uuid!) { addresses_by_pk(id: $id) { valuations(order_by: {report_date: desc}, limit: 1) { value report_date } } }`, { id: twinAddressId });
    const expected = await sqlJson(
      `SELECT json_agg(json_build_object('value', value, 'report_date', report_date)) FROM (SELECT value, report_date FROM valuations WHERE account_id = $1 AND address_id = $2 ORDER BY report_date DESC, id LIMIT 1) v`,
      [twinAddressId],
    );
    assert.deepEqual(data.addresses_by_pk.valuations, expected);
  });

  it('binds A’s account in explain, and the statement text names no account', async () => {
    const query = { query: `query($id: uuid!) { loans_by_pk(id: $id) { name payments { id } } }`, variables: { id: twinLoanId } };
    const forA = (await a.post('/api/graph/explain', query)).body as { sql: string; params: unknown[] };
    const forB = (await a.post('/api/graph/explain', query, { authorization: `Token ${b.apiKey}` })).body as { sql: string; params: unknown[] };
    assert.equal(forA.sql, forB.sql);
    assert.ok(forA.params.includes(a.account.id) && !forA.params.includes(b.account.id));
    assert.ok(forB.params.includes(b.account.id) && !forB.params.includes(a.account.id));
    assert.ok(!forA.sql.includes(a.account.id));
  });
});
