import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createApiKey } from '../../app/apiKeys.js';
import { checkMetadataAgainstDatabase, MetadataError, parseMetadata } from '../../metadata/index.js';
import { createAccountWithKey, tokenHeader, type TestServer } from '../support/http.js';
import { testDatabaseKind, type TestDatabase } from '../support/testDatabase.js';
import { startLenderSchemaService, type LenderSchemaService } from '../support/lenderSchemaService.js';

/**
 * Issue 30, Done-when 1, the catalogue-level forms: tables in a schema of their own (`lender`),
 * a view without a key (relationships from and to it), an automatically updatable view with a
 * declared key and a write, a `SETOF` function as root fields (`args`, where, order_by, paging,
 * `_aggregate`, a role's filter on its rows) and a computed field with an argument — each over
 * HTTP and compared with the same question in plain SQL; no form answers 500.
 */
const SCHEMA = `
  CREATE EXTENSION IF NOT EXISTS citext;
  CREATE SCHEMA lender;
  CREATE TABLE lender.branches (
    account_id uuid NOT NULL,
    id bigserial NOT NULL,
    name text NOT NULL,
    region citext,
    PRIMARY KEY (account_id, id)
  );
  CREATE TABLE lender.loans (
    account_id uuid NOT NULL,
    id bigserial NOT NULL,
    branch_id bigint NOT NULL,
    amount numeric(12, 2) NOT NULL,
    opened date NOT NULL,
    rate float8 NOT NULL DEFAULT 0.05,
    PRIMARY KEY (account_id, id),
    FOREIGN KEY (account_id, branch_id) REFERENCES lender.branches (account_id, id)
  );
  CREATE VIEW lender.branch_totals AS
    SELECT b.account_id, b.id AS branch_id, b.name, count(l.id)::int AS loans, coalesce(sum(l.amount), 0) AS total
      FROM lender.branches b LEFT JOIN lender.loans l ON l.account_id = b.account_id AND l.branch_id = b.id
     GROUP BY b.account_id, b.id, b.name;
  CREATE VIEW lender.big_loans AS SELECT account_id, id, branch_id, amount, opened FROM lender.loans WHERE amount >= 1000;
  CREATE FUNCTION lender.loans_opened_between(from_date date, to_date date DEFAULT NULL) RETURNS SETOF lender.loans
    LANGUAGE sql STABLE AS $$ SELECT * FROM lender.loans WHERE opened >= from_date AND (to_date IS NULL OR opened <= to_date) $$;
  CREATE FUNCTION lender.loans_at_least(account uuid, min_amount numeric DEFAULT 0) RETURNS SETOF lender.loans
    LANGUAGE sql STABLE AS $$ SELECT * FROM lender.loans WHERE account_id = account AND amount >= min_amount $$;
  CREATE FUNCTION lender.loans_touched() RETURNS SETOF lender.loans LANGUAGE sql VOLATILE AS $$ SELECT * FROM lender.loans $$;
  CREATE FUNCTION lender.branch_names() RETURNS SETOF text LANGUAGE sql STABLE AS $$ SELECT name FROM lender.branches $$;
  CREATE FUNCTION lender.loan_interest(account uuid, id bigint, years float8 DEFAULT 1) RETURNS numeric
    LANGUAGE sql STABLE AS $$ SELECT round(l.amount * l.rate::numeric * years::numeric, 2) FROM lender.loans l WHERE l.account_id = account AND l.id = loan_interest.id $$
`;

const METADATA = `
version: 1
tenant_column: account_id
collections:
  lender_branches:
    schema: lender
    table: branches
    primary_key: id
    fields: { id: bigint, name: text, region: citext }
    relationships:
      loans: { array: lender_loans, on: { id: branch_id } }
      totals: { object: branch_totals, on: { id: branch_id } }
    insert: { columns: [name, region] }
  lender_loans:
    schema: lender
    table: loans
    primary_key: id
    fields: { id: bigint, branch_id: bigint, amount: numeric, opened: date, rate: float8 }
    relationships:
      branch: { object: lender_branches, on: { branch_id: id } }
    computed_fields:
      interest: { function: loan_interest, type: numeric, args: { years: float8 } }
    insert: { columns: [branch_id, amount, opened, rate] }
  branch_totals:
    schema: lender
    table: branch_totals
    fields: { branch_id: bigint, name: text, loans: integer, total: numeric }
    relationships:
      branch: { object: lender_branches, on: { branch_id: id } }
      branch_loans: { array: lender_loans, on: { branch_id: branch_id } }
  big_loans:
    schema: lender
    table: big_loans
    primary_key: id
    fields: { id: bigint, branch_id: bigint, amount: numeric, opened: date }
    update: { columns: [amount] }
functions:
  loans_opened_between:
    schema: lender
    function: loans_opened_between
    returns: lender_loans
    args: { from_date: date, to_date: date }
  loans_at_least:
    schema: lender
    function: loans_at_least
    returns: lender_loans
    tenant_argument: account
    args: { min_amount: numeric }
roles:
  branch_viewer:
    variables: { branch: bigint }
    collections:
      lender_loans:
        select: { columns: [id, branch_id, amount, opened], filter: { branch_id: { _eq: key.branch } } }
`;

let database: TestDatabase;
let server: TestServer;
let service: LenderSchemaService | undefined;
let key: string;
let accountId: string;
let viewerKey: string;
let branchIds: number[];

interface Body {
  data?: any;
  errors?: { message: string; extensions?: { code?: string } }[];
}

async function post(body: unknown, apiKey = key): Promise<{ status: number; body: Body; text: string }> {
  const response = await fetch(`${server.url}/api/graph`, { method: 'POST', headers: { 'content-type': 'application/json', ...tokenHeader(apiKey) }, body: JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text) as Body, text };
}

async function data(query: string, variables?: Record<string, unknown>, apiKey = key): Promise<any> {
  const answer = await post({ query, ...(variables ? { variables } : {}) }, apiKey);
  assert.equal(answer.status, 200, answer.text);
  assert.equal(answer.body.errors, undefined, answer.text);
  return answer.body.data;
}

/** The first error of an answer that must fail as the client's mistake (never a 500, never `internal`). */
async function clientError(query: string, variables?: Record<string, unknown>, apiKey = key): Promise<{ message: string; code: string | undefined }> {
  const answer = await post({ query, ...(variables ? { variables } : {}) }, apiKey);
  assert.ok(answer.status === 200 || answer.status === 400, answer.text);
  const error = answer.body.errors?.[0];
  assert.ok(error, answer.text);
  assert.notEqual(error.extensions?.code, 'internal', answer.text);
  return { message: error.message, code: error.extensions?.code };
}

async function plain(text: string, values: readonly unknown[] = []): Promise<any[]> {
  const { rows } = await database.db.query<{ j: unknown }>(text, values);
  return rows.map((row) => row.j);
}

const LOAN_JSON = `json_build_object('id', id, 'branch_id', branch_id, 'amount', amount, 'opened', opened)`;

before(async () => {
  service = await startLenderSchemaService(SCHEMA, METADATA);
  ({ database, server, key, accountId } = service);
  // Another account's rows, with the same keys: no answer may include them.
  const other = (await createAccountWithKey(database.db)).account.id;
  await database.db.query(`INSERT INTO lender.branches (account_id, id, name) VALUES ($1, 1, 'theirs')`, [other]);
  await database.db.query(`INSERT INTO lender.loans (account_id, id, branch_id, amount, opened) VALUES ($1, 1, 1, 5000, '2026-01-15')`, [other]);
});
after(async () => {
  await service?.close();
});

describe(`A lender's own schema: views, SETOF functions, another schema (${testDatabaseKind})`, () => {
  it('writes and reads tables of another schema by their collection names (lender_branches: Hasura\'s <schema>_<table>)', async () => {
    const inserted = await data(`mutation {
      insert_lender_branches(objects: [{name: "North", region: "Highlands"}, {name: "South"}, {name: "Empty"}]) { affected_rows returning { id name region } }
    }`);
    assert.equal(inserted.insert_lender_branches.affected_rows, 3);
    const branches = await plain(`SELECT json_build_object('id', id, 'name', name, 'region', region) AS j FROM lender.branches WHERE account_id = $1 ORDER BY id`, [accountId]);
    assert.deepEqual(inserted.insert_lender_branches.returning, branches);
    branchIds = branches.map((branch) => branch.id as number);
    const [north, south] = branchIds;
    const loans = await data(
      `mutation($n: bigint!, $s: bigint!) {
        insert_lender_loans(objects: [
          {branch_id: $n, amount: 1500, opened: "2026-01-10", rate: 0.1}
          {branch_id: $n, amount: 200.50, opened: "2026-02-01"}
          {branch_id: $s, amount: 3000, opened: "2026-03-05", rate: 0.07}
          {branch_id: $s, amount: 80, opened: "2025-12-24"}
        ]) { affected_rows returning { id branch { name } } }
      }`,
      { n: north, s: south },
    );
    assert.equal(loans.insert_lender_loans.affected_rows, 4);
    const result = await data(`query($n: bigint!) {
      one: lender_branches_by_pk(id: $n) { name loans(order_by: {amount: desc}) { amount opened } }
      found: lender_branches(where: {region: {_eq: "highlands"}}) { name }
      sums: lender_loans_aggregate(where: {opened: {_gte: "2026-01-01"}}) { aggregate { count sum { amount } max { opened } } }
    }`, { n: north });
    const [one] = await plain(
      `SELECT json_build_object('name', b.name, 'loans', (SELECT json_agg(json_build_object('amount', l.amount, 'opened', l.opened) ORDER BY l.amount DESC) FROM lender.loans l WHERE l.account_id = b.account_id AND l.branch_id = b.id)) AS j
         FROM lender.branches b WHERE b.account_id = $1 AND b.id = $2`,
      [accountId, north],
    );
    assert.deepEqual(result.one, one);
    assert.deepEqual(result.found, [{ name: 'North' }]);
    const [sums] = await plain(`SELECT json_build_object('count', count(*), 'sum', json_build_object('amount', sum(amount)), 'max', json_build_object('opened', max(opened))) AS j FROM lender.loans WHERE account_id = $1 AND opened >= '2026-01-01'`, [accountId]);
    assert.deepEqual(result.sums.aggregate, sums);
  });

  it('reads a view without a key: where, order_by, aggregate, and relationships from it and to it', async () => {
    const result = await data(`{
      totals: branch_totals(where: {loans: {_gt: 0}}, order_by: {total: desc}) { name loans total branch { region } branch_loans(order_by: {opened: asc}) { amount } }
      count: branch_totals_aggregate(where: {total: {_lt: 2000}}) { aggregate { count sum { total } } }
      via: lender_branches(order_by: {id: asc}) { name totals { loans total } }
    }`);
    const totals = await plain(
      `SELECT json_build_object('name', t.name, 'loans', t.loans, 'total', t.total, 'branch', json_build_object('region', b.region),
              'branch_loans', (SELECT json_agg(json_build_object('amount', l.amount) ORDER BY l.opened) FROM lender.loans l WHERE l.account_id = t.account_id AND l.branch_id = t.branch_id)) AS j
         FROM lender.branch_totals t JOIN lender.branches b ON b.account_id = t.account_id AND b.id = t.branch_id
        WHERE t.account_id = $1 AND t.loans > 0 ORDER BY t.total DESC`,
      [accountId],
    );
    assert.deepEqual(result.totals, totals);
    assert.equal(totals.length, 2);
    const [count] = await plain(`SELECT json_build_object('count', count(*), 'sum', json_build_object('total', sum(total))) AS j FROM lender.branch_totals WHERE account_id = $1 AND total < 2000`, [accountId]);
    assert.deepEqual(result.count.aggregate, count);
    const via = await plain(`SELECT json_build_object('name', b.name, 'totals', json_build_object('loans', t.loans, 'total', t.total)) AS j FROM lender.branches b JOIN lender.branch_totals t ON t.account_id = b.account_id AND t.branch_id = b.id WHERE b.account_id = $1 ORDER BY b.id`, [accountId]);
    assert.deepEqual(result.via, via);
    // No key declared: no _by_pk, and asking for one is the client's mistake.
    const byPk = await clientError(`{ branch_totals_by_pk(branch_id: 1) { name } }`);
    assert.equal(byPk.code, 'validation-failed');
    const write = await clientError(`mutation { insert_branch_totals(objects: [{name: "x"}]) { affected_rows } }`);
    assert.equal(write.code, 'validation-failed');
  });

  it('lists a view without a key and without order_by, paged and as aggregate nodes (was a syntax error: a 500)', async () => {
    // No key and no order_by: no ORDER BY at all (rows in the database's order, as Hasura).
    const result = await data(`{
      all: branch_totals { name loans total }
      first: branch_totals(limit: 1) { name }
      rest: branch_totals(offset: 1) { name }
      agg: branch_totals_aggregate { aggregate { count } nodes { name total } }
      via: lender_branches(order_by: {id: asc}) { totals { name } }
    }`);
    const rows = await plain(`SELECT json_build_object('name', name, 'loans', loans, 'total', total) AS j FROM lender.branch_totals WHERE account_id = $1`, [accountId]);
    const byName = (a: { name: string }, b: { name: string }): number => a.name.localeCompare(b.name);
    assert.ok(rows.length >= 2);
    assert.deepEqual([...result.all].sort(byName), [...rows].sort(byName));
    assert.equal(result.first.length, 1);
    assert.equal(result.rest.length, rows.length - 1);
    assert.deepEqual([...result.first, ...result.rest].map((row: { name: string }) => row.name).sort(), rows.map((row) => row.name as string).sort());
    assert.equal(result.agg.aggregate.count, rows.length);
    assert.deepEqual([...result.agg.nodes].sort(byName), rows.map(({ name, total }) => ({ name, total })).sort(byName));
    assert.equal(result.via.length, branchIds.length);
  });

  it('writes through an automatically updatable view whose key the metadata declares', async () => {
    const [big] = await plain(`SELECT id::int AS j FROM lender.loans WHERE account_id = $1 AND amount = 3000`, [accountId]);
    const result = await data(`query { big_loans(order_by: {id: asc}) { id amount } }`);
    assert.deepEqual(result.big_loans, await plain(`SELECT json_build_object('id', id, 'amount', amount) AS j FROM lender.big_loans WHERE account_id = $1 ORDER BY id`, [accountId]));
    const updated = await data(`mutation($id: bigint!) { update_big_loans_by_pk(pk_columns: {id: $id}, _set: {amount: 3250}) { id amount } }`, { id: big });
    assert.deepEqual(updated.update_big_loans_by_pk, { id: big, amount: 3250 });
    assert.deepEqual(await plain(`SELECT to_json(amount) AS j FROM lender.loans WHERE account_id = $1 AND id = $2`, [accountId, big]), [3250]);
    const one = await data(`query($id: bigint!) { big_loans_by_pk(id: $id) { amount } }`, { id: big });
    assert.deepEqual(one.big_loans_by_pk, { amount: 3250 });
  });

  it('a write that moves a row out of a view: written but not returned; WITH CHECK OPTION refuses it as the client\'s mistake (was a 500)', async () => {
    const [id] = await plain(`SELECT id::int AS j FROM lender.loans WHERE account_id = $1 AND amount = 1500`, [accountId]);
    const stored = async (): Promise<unknown[]> => plain(`SELECT to_json(amount) AS j FROM lender.loans WHERE account_id = $1 AND id = $2`, [accountId, id]);
    // Without a check option PostgreSQL writes the row; the view no longer shows it, so neither does returning.
    const moved = await data(`mutation($id: bigint!) { update_big_loans_by_pk(pk_columns: {id: $id}, _set: {amount: 999}) { id amount } }`, { id });
    assert.deepEqual(moved.update_big_loans_by_pk, null);
    assert.deepEqual(await stored(), [999]);
    await database.db.query(`UPDATE lender.loans SET amount = 1500 WHERE account_id = $1 AND id = $2`, [accountId, id]);
    const VIEW = 'CREATE OR REPLACE VIEW lender.big_loans AS SELECT account_id, id, branch_id, amount, opened FROM lender.loans WHERE amount >= 1000';
    await database.db.query(`${VIEW} WITH CHECK OPTION`);
    try {
      for (const mutation of [
        `mutation($id: bigint!) { update_big_loans_by_pk(pk_columns: {id: $id}, _set: {amount: 999}) { id amount } }`,
        `mutation($id: bigint!) { update_big_loans(where: {id: {_eq: $id}}, _set: {amount: 999}) { affected_rows } }`,
        `mutation($id: bigint!) { a: update_big_loans(where: {id: {_eq: $id}}, _set: {amount: 1200}) { affected_rows } b: update_big_loans(where: {id: {_eq: $id}}, _set: {amount: 999}) { affected_rows } }`,
      ]) {
        const refused = await clientError(mutation, { id });
        assert.equal(refused.code, 'check-violation', mutation);
        assert.match(refused.message, /the written row would not be in view lender\.big_loans \(its WITH CHECK OPTION\); nothing was written/);
        assert.deepEqual(await stored(), [1500], 'nothing was written');
      }
    } finally {
      await database.db.query(VIEW);
    }
  });

  it('answers a SETOF function as root fields: args, where, order_by, paging and _aggregate, as calling it in SQL', async () => {
    const result = await data(`{
      window: loans_opened_between(args: {from_date: "2026-01-01", to_date: "2026-02-28"}, order_by: {opened: desc}) { id amount opened branch { name } }
      open: loans_opened_between(args: {from_date: "2026-01-01"}, where: {amount: {_gt: 1000}}, order_by: {amount: asc}, limit: 1, offset: 1) { amount }
      sums: loans_opened_between_aggregate(args: {from_date: "2025-01-01"}, where: {branch: {name: {_eq: "North"}}}) { aggregate { count sum { amount } } nodes { amount } }
    }`);
    const window = await plain(
      `SELECT json_build_object('id', f.id, 'amount', f.amount, 'opened', f.opened, 'branch', json_build_object('name', b.name)) AS j
         FROM lender.loans_opened_between('2026-01-01', '2026-02-28') f JOIN lender.branches b ON b.account_id = f.account_id AND b.id = f.branch_id
        WHERE f.account_id = $1 ORDER BY f.opened DESC`,
      [accountId],
    );
    assert.deepEqual(result.window, window);
    assert.equal(window.length, 2);
    const open = await plain(`SELECT json_build_object('amount', amount) AS j FROM lender.loans_opened_between('2026-01-01') WHERE account_id = $1 AND amount > 1000 ORDER BY amount, id LIMIT 1 OFFSET 1`, [accountId]);
    assert.deepEqual(result.open, open);
    assert.equal(open.length, 1);
    const [sums] = await plain(
      `SELECT json_build_object('count', count(*), 'sum', json_build_object('amount', sum(f.amount)), 'nodes', json_agg(json_build_object('amount', f.amount) ORDER BY f.id)) AS j
         FROM lender.loans_opened_between('2025-01-01') f JOIN lender.branches b ON b.account_id = f.account_id AND b.id = f.branch_id WHERE f.account_id = $1 AND b.name = 'North'`,
      [accountId],
    );
    assert.deepEqual(result.sums, { aggregate: { count: sums.count, sum: sums.sum }, nodes: sums.nodes });
    // Beside the table's own aggregates (which share one scan), the function's stays its own.
    const side = await data(`{
      all: lender_loans_aggregate { aggregate { count } }
      big: lender_loans_aggregate(where: {amount: {_gte: 1000}}) { aggregate { count } }
      late: loans_opened_between_aggregate(args: {from_date: "2026-02-01"}) { aggregate { count } }
    }`);
    const [counts] = await plain(
      `SELECT json_build_object('all', (SELECT count(*) FROM lender.loans WHERE account_id = $1), 'big', (SELECT count(*) FROM lender.loans WHERE account_id = $1 AND amount >= 1000),
              'late', (SELECT count(*) FROM lender.loans_opened_between('2026-02-01') WHERE account_id = $1)) AS j`,
      [accountId],
    );
    assert.deepEqual({ all: side.all.aggregate.count, big: side.big.aggregate.count, late: side.late.aggregate.count }, counts);
    assert.notEqual(counts.late, counts.all);
  });

  it('passes the caller\'s account to a function\'s tenant_argument (Hasura\'s session_argument)', async () => {
    const result = await data(`{ big: loans_at_least(args: {min_amount: 1000}, order_by: {id: asc}) { id amount } all: loans_at_least(order_by: {id: asc}) { id } }`);
    assert.deepEqual(result.big, await plain(`SELECT json_build_object('id', id, 'amount', amount) AS j FROM lender.loans_at_least($1, 1000) ORDER BY id`, [accountId]));
    assert.deepEqual(result.all, await plain(`SELECT json_build_object('id', id) AS j FROM lender.loans WHERE account_id = $1 ORDER BY id`, [accountId]));
    assert.equal(result.big.length, 2);
    // The account is not an argument a request may give.
    assert.match((await clientError(`{ loans_at_least(args: {account: "601de000-0000-4000-8000-000000000001"}) { id } }`)).message, /account/);
  });

  it('applies a role\'s select filter to the function\'s rows as to the table\'s; the other account\'s rows never appear', async () => {
    const [, south] = branchIds;
    viewerKey = (await createApiKey(database.db, accountId, 'branch viewer', { role: 'branch_viewer', variables: new Map([['branch', String(south)]]) })).key;
    const seen = await data(`{ loans_opened_between(args: {from_date: "2020-01-01"}, order_by: {id: asc}) { id branch_id amount } lender_loans(order_by: {id: asc}) { id } }`, undefined, viewerKey);
    const expected = await plain(`SELECT ${LOAN_JSON.replace(", 'opened', opened", '')} AS j FROM lender.loans_opened_between('2020-01-01') WHERE account_id = $1 AND branch_id = $2 ORDER BY id`, [accountId, south]);
    assert.deepEqual(seen.loans_opened_between, expected);
    assert.deepEqual(seen.lender_loans, expected.map((row) => ({ id: row.id })));
    assert.equal(expected.length, 2);
    // Without allow_aggregations the role has no _aggregate of it, and no rate column.
    assert.equal((await clientError(`{ loans_opened_between_aggregate(args: {from_date: "2020-01-01"}) { aggregate { count } } }`, undefined, viewerKey)).code, 'validation-failed');
    assert.equal((await clientError(`{ loans_opened_between(args: {from_date: "2020-01-01"}) { rate } }`, undefined, viewerKey)).code, 'validation-failed');
    const admin = await data(`{ loans_opened_between(args: {from_date: "2020-01-01"}) { id } }`);
    assert.equal(admin.loans_opened_between.length, 4);
  });

  it('answers bad function arguments as the client\'s mistake, naming the argument', async () => {
    const missing = await clientError(`{ loans_opened_between { id } }`);
    assert.equal(missing.code, 'validation-failed');
    assert.match(missing.message, /args/);
    const noFrom = await clientError(`{ loans_opened_between(args: {to_date: "2026-01-01"}) { id } }`);
    assert.match(noFrom.message, /from_date/);
    const wrongType = await clientError(`{ loans_opened_between(args: {from_date: "yesterday"}) { id } }`);
    assert.equal(wrongType.code, 'validation-failed');
    assert.match(wrongType.message, /from_date|date/);
    const unknown = await clientError(`{ loans_opened_between(args: {from_date: "2026-01-01", days: 3}) { id } }`);
    assert.match(unknown.message, /days/);
    // The arguments as one variable: the same rows.
    const whole = await data(`query($a: loans_opened_between_args!) { loans_opened_between(args: $a, order_by: {id: asc}) { id } }`, { a: { from_date: '2026-03-01' } });
    assert.deepEqual(whole.loans_opened_between, await plain(`SELECT json_build_object('id', id) AS j FROM lender.loans_opened_between('2026-03-01') WHERE account_id = $1 ORDER BY id`, [accountId]));
    const nullVariable = await data(`query($to: date) { loans_opened_between(args: {from_date: "2026-03-01", to_date: $to}) { amount } }`, { to: null });
    // A null variable is SQL's NULL (here: no upper bound), as calling the function with NULL.
    const unbounded = await plain(`SELECT json_build_object('amount', amount) AS j FROM lender.loans_opened_between('2026-03-01', NULL) WHERE account_id = $1`, [accountId]);
    assert.deepEqual(nullVariable.loans_opened_between, unbounded);
    assert.equal(unbounded.length, 1);
  });

  it('selects a computed field with an argument (and its default) on a table of another schema', async () => {
    const result = await data(`{ lender_loans(order_by: {id: asc}) { id interest twice: interest(args: {years: 2}) } }`);
    const expected = await plain(
      `SELECT json_build_object('id', id, 'interest', lender.loan_interest(account_id, id), 'twice', lender.loan_interest(account_id, id, years => 2)) AS j FROM lender.loans WHERE account_id = $1 ORDER BY id`,
      [accountId],
    );
    assert.deepEqual(result.lender_loans, expected);
    assert.ok(expected.some((row) => Number(row.twice) > 0));
    const bad = await clientError(`{ lender_loans { interest(args: {years: "two"}) } }`);
    assert.equal(bad.code, 'validation-failed');
  });

  it('explains a function root field: its statement calls the function with named parameters', async () => {
    const response = await fetch(`${server.url}/api/graph/explain`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...tokenHeader(key) },
      body: JSON.stringify({ query: '{ loans_opened_between(args: {from_date: "2026-01-01"}) { id } }' }),
    });
    const text = await response.text();
    assert.equal(response.status, 200, text);
    assert.match(text, /FROM \\"lender\\"\.\\"loans_opened_between\\"\(\\"from_date\\" => \$\d+::date\) AS/);
  });
});

describe('metadata check: views, functions and schemas against the catalogue', () => {
  const refused = async (edit: (text: string) => string): Promise<string> => {
    try {
      await checkMetadataAgainstDatabase(parseMetadata(edit(METADATA)), database.db);
    } catch (error) {
      assert.ok(error instanceof MetadataError, String(error));
      return error.problems.join('\n');
    }
    assert.fail('the metadata was accepted');
  };

  it('accepts the metadata above', async () => {
    const { metadata } = await checkMetadataAgainstDatabase(parseMetadata(METADATA), database.db);
    assert.deepEqual([...metadata.functions.get('loans_opened_between')!.args].map(([name, arg]) => [name, arg.required]), [['from_date', true], ['to_date', false]]);
  });

  it('refuses a write on a view PostgreSQL cannot write through', async () => {
    const problems = await refused((text) => text.replace('    fields: { branch_id: bigint, name: text, loans: integer, total: numeric }', '    primary_key: branch_id\n    fields: { branch_id: bigint, name: text, loans: integer, total: numeric }\n    update: { columns: [name] }'));
    assert.match(problems, /collection branch_totals, update: view lender\.branch_totals is not automatically updatable/);
  });

  it('refuses a VOLATILE function, one that returns another type, a missing one, and an argument without a default left out', async () => {
    const functions = (spec: string) => (text: string) => text.replace(/functions:\n(?:  .*\n)+/, `functions:\n${spec}`);
    assert.match(await refused(functions('  touched: { schema: lender, function: loans_touched, returns: lender_loans }\n')), /function touched: loans_touched is VOLATILE/);
    assert.match(await refused(functions('  names: { schema: lender, function: branch_names, returns: lender_branches }\n')), /function names: branch_names does not return SETOF lender\.branches/);
    assert.match(await refused(functions('  nothing: { schema: lender, function: no_such_function, returns: lender_loans }\n')), /function nothing: function no_such_function does not exist/);
    assert.match(await refused(functions('  partial: { schema: lender, function: loans_opened_between, returns: lender_loans, args: { to_date: date } }\n')), /argument from_date of loans_opened_between has no default/);
    assert.match(await refused(functions('  tenant: { schema: lender, function: loans_opened_between, returns: lender_loans, tenant_argument: from_date, args: { to_date: date } }\n')), /tenant_argument from_date is not a uuid argument/);
    assert.match(await refused(functions('  typed: { schema: lender, function: loans_opened_between, returns: lender_loans, args: { from_date: text } }\n')), /argument from_date: loans_opened_between takes date, not text/);
  });

  it('resolves a role filter\'s _exists by the schema it names (Hasura\'s {_table: {schema, name}})', () => {
    const withExists = (table: string) =>
      METADATA.replace("filter: { branch_id: { _eq: key.branch } } }", `filter: { _exists: { _table: ${table}, _where: { region: { _eq: highlands } } } } }`);
    assert.doesNotThrow(() => parseMetadata(withExists('{ schema: lender, name: branches }')));
    assert.throws(() => parseMetadata(withExists('{ name: branches }')), /no collection has the table public\.branches/);
  });

  it('refuses a relationship or computed field named as an array relationship\'s generated aggregate (it silently replaced it)', () => {
    const branches = '      loans: { array: lender_loans, on: { id: branch_id } }\n';
    assert.ok(METADATA.includes(branches));
    assert.throws(
      () => parseMetadata(METADATA.replace(branches, `${branches}      loans_aggregate: { object: branch_totals, on: { id: branch_id } }\n`)),
      /collection lender_branches, relationship loans_aggregate: clashes with the generated aggregate of relationship loans; rename one/,
    );
    assert.throws(
      () => parseMetadata(METADATA.replace('    insert: { columns: [name, region] }\n', '    computed_fields:\n      loans_aggregate: { function: f, type: integer }\n    insert: { columns: [name, region] }\n')),
      /collection lender_branches, computed field loans_aggregate: clashes with the generated aggregate of relationship loans; rename one/,
    );
  });

  it('refuses an event type on a view: its capture is a table trigger (check passed it, and the service refused the file in PostgreSQL\'s words)', async () => {
    await database.db.query('CREATE VIEW public.big_loans_public AS SELECT account_id, id, amount FROM lender.loans WHERE amount >= 1000');
    try {
      const problems = await refused(
        (text) => `${text.replace('functions:\n', '  public_big_loans:\n    table: big_loans_public\n    primary_key: id\n    fields: { id: bigint, amount: numeric }\nfunctions:\n')}event_types:\n  big.added: { collection: public_big_loans, on: insert }\n`,
      );
      // With the line of `big.added:`, the file's last but one (session 40: stage 3's problems say their line).
      assert.match(problems, /^event type big\.added: collection public_big_loans is the view big_loans_public; events are captured by triggers on tables: name the collection of the table it writes \(line \d+\)$/);
    } finally {
      await database.db.query('DROP VIEW public.big_loans_public');
    }
  });

  it('refuses a table missing from the schema it names, and writes on a collection without a key', async () => {
    assert.match(await refused((text) => text.replace('    schema: lender\n    table: branches', '    schema: public\n    table: branches')), /collection lender_branches: table public\.branches does not exist/);
    assert.throws(() => parseMetadata(METADATA.replace('    fields: { branch_id: bigint, name: text, loans: integer, total: numeric }', '    fields: { branch_id: bigint, name: text, loans: integer, total: numeric }\n    delete: {}')), /collection branch_totals: insert, update and delete need a primary_key/);
  });
});
