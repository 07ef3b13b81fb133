import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { tokenHeader, type TestServer } from '../support/http.js';
import { testDatabaseKind, type TestDatabase } from '../support/testDatabase.js';
import { startLenderSchemaService, type LenderSchemaService } from '../support/lenderSchemaService.js';

/**
 * Session 36's audit of a lender's own schema used as a Hasura user would: an identity key, a
 * text key, a composite key, a self-referencing table with a nullable foreign key, foreign keys
 * without cascades, and a table of the same name in two schemas — the answers Hasura's docs
 * promise, each checked over HTTP against the database.
 */
const SCHEMA = `
  CREATE SCHEMA lender;
  CREATE TABLE plans (
    account_id uuid NOT NULL,
    id uuid NOT NULL,
    label text NOT NULL,
    PRIMARY KEY (account_id, id)
  );
  CREATE TABLE lender.borrowers (
    account_id uuid NOT NULL,
    id bigint GENERATED ALWAYS AS IDENTITY,
    handle text NOT NULL,
    name text NOT NULL,
    referrer_id bigint,
    credit_line bigint,
    PRIMARY KEY (account_id, id),
    UNIQUE (account_id, handle),
    FOREIGN KEY (account_id, referrer_id) REFERENCES lender.borrowers (account_id, id)
  );
  CREATE TABLE lender.plans (
    account_id uuid NOT NULL,
    code text NOT NULL,
    title text NOT NULL,
    PRIMARY KEY (account_id, code)
  );
  CREATE TABLE lender.facilities (
    account_id uuid NOT NULL,
    borrower_id bigint NOT NULL,
    seq smallint NOT NULL,
    plan_code text,
    amount numeric(12, 2) NOT NULL,
    PRIMARY KEY (account_id, borrower_id, seq),
    FOREIGN KEY (account_id, borrower_id) REFERENCES lender.borrowers (account_id, id) ON DELETE CASCADE,
    FOREIGN KEY (account_id, plan_code) REFERENCES lender.plans (account_id, code)
  );
`;

const METADATA = `
version: 1
tenant_column: account_id
collections:
  plans:
    table: plans
    primary_key: id
    fields: { id: uuid, label: text }
    insert: { columns: [label] }
  lender_borrowers:
    schema: lender
    table: borrowers
    primary_key: id
    fields: { id: bigint, handle: text, name: text, referrer_id: bigint, credit_line: bigint }
    relationships:
      referrer: { object: lender_borrowers, on: { referrer_id: id } }
      referred: { array: lender_borrowers, on: { id: referrer_id } }
      facilities: { array: lender_facilities, on: { id: borrower_id } }
    insert: { columns: [handle, name, referrer_id] }
    update: { columns: [name, referrer_id, credit_line] }
    delete: {}
  lender_plans:
    schema: lender
    table: plans
    primary_key: code
    fields: { code: text, title: text }
    relationships:
      facilities: { array: lender_facilities, on: { code: plan_code } }
    insert: { columns: [code, title] }
    update: { columns: [title] }
    delete: {}
  lender_facilities:
    schema: lender
    table: facilities
    primary_key: [borrower_id, seq]
    fields: { borrower_id: bigint, seq: smallint, plan_code: text, amount: numeric }
    relationships:
      borrower: { object: lender_borrowers, on: { borrower_id: id } }
      plan: { object: lender_plans, on: { plan_code: code } }
    insert: { columns: [borrower_id, seq, plan_code, amount] }
    update: { columns: [amount] }
    delete: {}
`;

let database: TestDatabase;
let server: TestServer;
let service: LenderSchemaService | undefined;
let key: string;
let accountId: string;

interface Body {
  data?: any;
  errors?: { message: string; path?: string[]; extensions?: { code?: string; fields?: string[]; [name: string]: unknown } }[];
}

async function post(query: string, variables?: Record<string, unknown>): Promise<{ status: number; body: Body; text: string }> {
  const response = await fetch(`${server.url}/api/graph`, { method: 'POST', headers: { 'content-type': 'application/json', ...tokenHeader(key) }, body: JSON.stringify({ query, variables }) });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text) as Body, text };
}

/** The one error of a request that must fail as the client's mistake (never a 500). */
async function refusal(query: string, variables?: Record<string, unknown>): Promise<NonNullable<Body['errors']>[number]> {
  const answer = await post(query, variables);
  assert.ok(answer.status === 200 || answer.status === 400, answer.text);
  assert.equal(answer.body.errors?.length, 1, answer.text);
  assert.equal(answer.body.data ?? null, null, answer.text);
  return answer.body.errors![0]!;
}

async function count(table: string): Promise<number> {
  const { rows } = await database.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE account_id = $1`, [accountId]);
  return rows[0]!.n;
}

before(async () => {
  service = await startLenderSchemaService(SCHEMA, METADATA);
  ({ database, server, key, accountId } = service);
  await database.db.query(`INSERT INTO lender.plans (account_id, code, title) VALUES ($1, 'TERM', 'Term loan'), ($1, 'LOC', 'Line of credit')`, [accountId]);
  await database.db.query(`INSERT INTO lender.borrowers (account_id, handle, name, referrer_id) OVERRIDING SYSTEM VALUE VALUES ($1, 'ann', 'Ann', NULL)`, [accountId]);
  await database.db.query(`INSERT INTO lender.borrowers (account_id, handle, name, referrer_id) VALUES ($1, 'bob', 'Bob', 1)`, [accountId]);
  await database.db.query(`INSERT INTO lender.facilities (account_id, borrower_id, seq, plan_code, amount) VALUES ($1, 1, 1, 'TERM', 1000.50), ($1, 1, 2, 'LOC', 250.25)`, [accountId]);
});
after(async () => {
  await service?.close();
});

describe(`A lender's own schema as a Hasura user uses it: one table name in two schemas (${testDatabaseKind})`, () => {
  it('loads with each table\u2019s own primary key (both are named plans_pkey) and reads each', async () => {
    await database.db.query(`INSERT INTO plans (account_id, id, label) VALUES ($1, '00000000-0000-4000-8000-000000000001', 'public plan')`, [accountId]);
    const answer = await post(`{ plans_by_pk(id: "00000000-0000-4000-8000-000000000001") { label } lender_plans_by_pk(code: "TERM") { title } }`);
    assert.equal(answer.body.errors, undefined, answer.text);
    assert.deepEqual(answer.body.data, { plans_by_pk: { label: 'public plan' }, lender_plans_by_pk: { title: 'Term loan' } });
  });

  it('offers on_conflict on the constraint of the table written, and upserts through it', async () => {
    const types = await post(`{ __type(name: "lender_plans_constraint") { enumValues { name } } }`);
    assert.deepEqual(types.body.data?.__type?.enumValues, [{ name: 'plans_pkey' }], types.text);
    const answer = await post(`mutation { insert_lender_plans_one(object: {code: "BRIDGE", title: "Bridge"}, on_conflict: {constraint: plans_pkey, update_columns: [title]}) { code title }
      again: insert_lender_plans_one(object: {code: "BRIDGE", title: "Bridge loan"}, on_conflict: {constraint: plans_pkey, update_columns: [title]}) { code title } }`);
    assert.equal(answer.body.errors, undefined, answer.text);
    assert.deepEqual(answer.body.data?.again, { code: 'BRIDGE', title: 'Bridge loan' });
    const { rows } = await database.db.query<{ title: string }>(`SELECT title FROM lender.plans WHERE account_id = $1 AND code = 'BRIDGE'`, [accountId]);
    assert.deepEqual(rows, [{ title: 'Bridge loan' }]);
  });
});

describe(`A lender's own schema as a Hasura user uses it: write errors (${testDatabaseKind})`, () => {
  it('a delete of a record other records still refer to names the deleted collection and the referring one, and deletes nothing', async () => {
    const before = await count('lender.plans');
    const error = await refusal(`mutation { delete_lender_plans(where: {code: {_eq: "LOC"}}) { affected_rows } }`);
    assert.equal(error.extensions?.code, 'foreign-key-violation');
    assert.deepEqual(error.path, ['delete_lender_plans']);
    assert.equal(error.message, 'delete_lender_plans: a lender_plans record is still referred to by lender_facilities records (their plan_code); nothing was deleted');
    assert.deepEqual(error.extensions?.fields, ['plan_code']);
    assert.equal(error.extensions?.referred_by, 'lender_facilities');
    assert.equal(await count('lender.plans'), before);
  });

  it('a delete of a row its own table refers to (a self-reference) says so', async () => {
    const error = await refusal(`mutation { delete_lender_borrowers_by_pk(id: 1) { id } }`);
    assert.equal(error.extensions?.code, 'foreign-key-violation');
    assert.equal(error.message, 'delete_lender_borrowers_by_pk: a lender_borrowers record is still referred to by lender_borrowers records (their referrer_id); nothing was deleted');
    assert.equal(error.extensions?.referred_by, 'lender_borrowers');
    assert.equal(await count('lender.borrowers'), 2);
  });

  it('a duplicate key in a table whose name another schema also has names the collection written, not the other schema’s', async () => {
    const error = await refusal(`mutation { insert_lender_plans_one(object: {code: "TERM", title: "again"}) { code } }`);
    assert.equal(error.extensions?.code, 'constraint-violation');
    assert.equal(error.message, 'insert_lender_plans_one: a lender_plans record with the same code already exists');
    assert.deepEqual(error.extensions?.fields, ['code']);
  });

  it('a reference to a record that is not there is not-found, naming the field of the table written', async () => {
    const error = await refusal(`mutation { insert_lender_facilities_one(object: {borrower_id: 1, seq: 3, plan_code: "NONE", amount: 1}) { seq } }`);
    assert.equal(error.extensions?.code, 'not-found');
    assert.equal(error.message, 'insert_lender_facilities_one: plan_code: no such record');
    assert.equal(await count('lender.facilities'), 2);
  });
});

describe(`A lender's own schema as a Hasura user uses it: _inc past what a column holds (${testDatabaseKind})`, () => {
  it('a bigint summed past 2^63 - 1 names the field and PostgreSQL\u2019s words, not the ledger\u2019s, and writes nothing', async () => {
    await database.db.query(`UPDATE lender.borrowers SET credit_line = 9007199254740993 WHERE account_id = $1 AND handle = 'ann'`, [accountId]);
    const error = await refusal(`mutation($by: bigint!) { update_lender_borrowers(where: {handle: {_eq: "ann"}}, _inc: {credit_line: $by}) { affected_rows } }`, { by: '9223372036854775807' });
    assert.equal(error.extensions?.code, 'validation-failed');
    assert.equal(error.message, 'update_lender_borrowers: credit_line: _inc makes a value its column cannot hold (bigint out of range); nothing was written');
    assert.deepEqual(error.extensions?.fields, ['credit_line']);
    const { rows } = await database.db.query<{ credit_line: string }>(`SELECT credit_line::text FROM lender.borrowers WHERE account_id = $1 AND handle = 'ann'`, [accountId]);
    assert.deepEqual(rows, [{ credit_line: '9007199254740993' }]);
  });

  it('a numeric(12, 2) summed past 10^10 names the field and the column\u2019s precision, by key too', async () => {
    const error = await refusal(`mutation { update_lender_facilities_by_pk(pk_columns: {borrower_id: 1, seq: 1}, _inc: {amount: "9999999999.00"}) { amount } }`);
    assert.equal(error.extensions?.code, 'validation-failed');
    assert.equal(error.message, 'update_lender_facilities_by_pk: amount: _inc makes a value its column cannot hold (numeric field overflow: A field with precision 12, scale 2 must round to an absolute value less than 10^10); nothing was written');
    const { rows } = await database.db.query<{ amount: string }>(`SELECT amount::text FROM lender.facilities WHERE account_id = $1 AND borrower_id = 1 AND seq = 1`, [accountId]);
    assert.deepEqual(rows, [{ amount: '1000.50' }]);
  });
});
