import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createAccountWithKey, tokenHeader, type TestServer } from '../support/http.js';
import { testDatabaseKind, type TestDatabase } from '../support/testDatabase.js';
import { startLenderSchemaService, type LenderSchemaService } from '../support/lenderSchemaService.js';
import { parseExact } from '../support/exactJson.js';
import { connect, subscribe } from '../support/graphSocket.js';

/**
 * Issue 30, Done-when 1 (and the batch of 4): tables no one shaped for loanql — a bigserial key,
 * a composite key, a text key, a mixed-case table and mixed-case columns, float8, bigint, citext
 * and timestamp columns — exposed through a metadata file of their own, and every query and
 * mutation form over HTTP, each answer compared with the same question answered in plain SQL.
 * No form answers 500 (`integer = uuid` was the mutation path's uuid assumption).
 */
const SCHEMA = `
  CREATE EXTENSION IF NOT EXISTS citext;
  CREATE TABLE lender_branches (
    account_id uuid NOT NULL,
    id bigserial NOT NULL,
    name text NOT NULL,
    region citext,
    opened_at timestamp,
    score float8,
    budget bigint,
    PRIMARY KEY (account_id, id),
    UNIQUE (account_id, name)
  );
  CREATE TABLE "LoanNotes" (
    account_id uuid NOT NULL,
    "branchId" bigint NOT NULL,
    "Seq" integer NOT NULL,
    "Body" text NOT NULL,
    "createdAt" timestamp NOT NULL DEFAULT '2026-01-01 09:00',
    PRIMARY KEY (account_id, "branchId", "Seq"),
    FOREIGN KEY (account_id, "branchId") REFERENCES lender_branches (account_id, id) ON DELETE CASCADE
  );
  CREATE TABLE lender_codes (
    account_id uuid NOT NULL,
    code text NOT NULL,
    label text NOT NULL,
    weight integer,
    PRIMARY KEY (account_id, code)
  );
`;

const METADATA = `
version: 1
tenant_column: account_id
collections:
  branches:
    table: lender_branches
    primary_key: id
    fields:
      id: bigint
      name: text
      region: citext
      opened_at: timestamp
      score: float8
      budget: bigint
    relationships:
      notes: { array: notes, on: { id: branchId } }
    insert: { columns: [name, region, opened_at, score, budget] }
    update: { columns: [name, region, score, budget] }
    delete: {}
  notes:
    table: LoanNotes
    primary_key: [branchId, Seq]
    fields:
      branchId: bigint
      Seq: integer
      Body: text
      createdAt: timestamp
    relationships:
      branch: { object: branches, on: { branchId: id } }
    insert: { columns: [branchId, Seq, Body, createdAt] }
    update: { columns: [Body] }
    delete: {}
  codes:
    table: lender_codes
    primary_key: code
    fields: { code: text, label: text, weight: integer }
    insert: { columns: [code, label, weight] }
    update: { columns: [label, weight] }
    delete: {}
`;

let database: TestDatabase;
let server: TestServer;
let service: LenderSchemaService | undefined;
let key: string;
let accountId: string;
let otherKey: string;

interface Body {
  data?: any;
  errors?: { message: string; extensions?: { code?: string } }[];
}

async function post(body: unknown, apiKey = key): Promise<{ status: number; body: any; text: string }> {
  const response = await fetch(`${server.url}/api/graph`, { method: 'POST', headers: { 'content-type': 'application/json', ...tokenHeader(apiKey) }, body: JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text) as unknown, text };
}

/** The `data` of an answer that must succeed. */
async function data(query: string, variables?: Record<string, unknown>, apiKey = key): Promise<any> {
  const answer = await post({ query, ...(variables ? { variables } : {}) }, apiKey);
  assert.equal(answer.status, 200, answer.text);
  assert.equal((answer.body as Body).errors, undefined, answer.text);
  return (answer.body as Body).data;
}

/** The errors of an answer that must fail as a client's mistake (never a 500). */
async function errors(query: string, variables?: Record<string, unknown>): Promise<NonNullable<Body['errors']>> {
  const answer = await post({ query, ...(variables ? { variables } : {}) });
  assert.ok(answer.status === 200 || answer.status === 400, answer.text);
  const body = answer.body as Body;
  assert.ok(body.errors?.length, answer.text);
  assert.notEqual(body.errors![0]!.extensions?.code, 'internal', answer.text);
  return body.errors!;
}

/** Plain SQL's answer: rows of JSON built by PostgreSQL itself (`to_json` of each column, as the engine promises). */
async function plain(text: string, values: readonly unknown[] = []): Promise<any[]> {
  const { rows } = await database.db.query<{ j: unknown }>(text, values);
  return rows.map((row) => row.j);
}

const BRANCH_JSON = `json_build_object('id', id, 'name', name, 'region', region, 'opened_at', opened_at, 'score', score, 'budget', budget)`;
const NOTE_JSON = `json_build_object('branchId', "branchId", 'Seq', "Seq", 'Body', "Body", 'createdAt', "createdAt")`;

before(async () => {
  service = await startLenderSchemaService(SCHEMA, METADATA);
  ({ database, server, key, accountId } = service);
  const otherAccount = await createAccountWithKey(database.db);
  otherKey = otherAccount.apiKey.key;
  // Another account's rows with the same keys: every answer must leave them out.
  const other = otherAccount.account.id;
  await database.db.query(`INSERT INTO lender_branches (account_id, id, name) VALUES ($1, 1, 'theirs')`, [other]);
  await database.db.query(`INSERT INTO lender_codes (account_id, code, label) VALUES ($1, 'A', 'theirs')`, [other]);
});
after(async () => {
  await service?.close();
});

describe(`A lender's own tables: keys of any type and shape (${testDatabaseKind})`, () => {
  it('inserts rows whose bigserial key the database makes, and returns them', async () => {
    const result = await data(`mutation {
      insert_branches(objects: [
        {name: "North", region: "Highlands", opened_at: "2025-03-04T10:11:12", score: 4.25, budget: 1200000}
        {name: "South", region: "lowlands", opened_at: "2024-12-31T23:59:59.5", score: -0.5, budget: 7}
        {name: "East"}
      ]) { affected_rows returning { id name region opened_at score budget } }
    }`);
    assert.equal(result.insert_branches.affected_rows, 3);
    const expected = await plain(`SELECT ${BRANCH_JSON} AS j FROM lender_branches WHERE account_id = $1 ORDER BY id`, [accountId]);
    assert.deepEqual(result.insert_branches.returning, expected);
    assert.deepEqual(expected.map((row) => row.name), ['North', 'South', 'East']);
  });

  it('inserts rows whose composite key the request gives (insert.columns has it), nested under their branch', async () => {
    const [north] = await plain(`SELECT id::int AS j FROM lender_branches WHERE account_id = $1 AND name = 'North'`, [accountId]);
    const result = await data(
      `mutation($b: bigint!) {
        insert_notes(objects: [{branchId: $b, Seq: 1, Body: "first"}, {branchId: $b, Seq: 2, Body: "second", createdAt: "2026-02-03T04:05:06"}]) {
          affected_rows returning { branchId Seq Body createdAt branch { name } }
        }
        one: insert_notes_one(object: {branchId: $b, Seq: 3, Body: "third"}) { Seq Body }
      }`,
      { b: north },
    );
    assert.equal(result.insert_notes.affected_rows, 2);
    const expected = await plain(`SELECT ${NOTE_JSON}::jsonb || jsonb_build_object('branch', jsonb_build_object('name', 'North')) AS j FROM "LoanNotes" WHERE account_id = $1 AND "Seq" < 3 ORDER BY "Seq"`, [accountId]);
    assert.deepEqual(result.insert_notes.returning, expected);
    assert.deepEqual(result.one, { Seq: 3, Body: 'third' });
  });

  it('inserts text-keyed rows, and upserts on the primary key (offered because the role may update)', async () => {
    const inserted = await data(`mutation { insert_codes(objects: [{code: "A", label: "alpha", weight: 1}, {code: "B", label: "beta"}]) { affected_rows } }`);
    assert.equal(inserted.insert_codes.affected_rows, 2);
    const upserted = await data(`mutation {
      insert_codes(objects: [{code: "A", label: "ALPHA", weight: 10}, {code: "C", label: "gamma"}], on_conflict: {constraint: lender_codes_pkey, update_columns: [label, weight]}) {
        affected_rows returning { code label weight }
      }
    }`);
    assert.equal(upserted.insert_codes.affected_rows, 2);
    const expected = await plain(`SELECT json_build_object('code', code, 'label', label, 'weight', weight) AS j FROM lender_codes WHERE account_id = $1 AND code IN ('A', 'C') ORDER BY code`, [accountId]);
    assert.deepEqual(upserted.insert_codes.returning, expected);
    assert.deepEqual(expected[0], { code: 'A', label: 'ALPHA', weight: 10 });
    // The other account's "A" is untouched.
    assert.deepEqual(await plain(`SELECT label AS j FROM lender_codes WHERE account_id <> $1`, [accountId]), ['theirs']);
    // A unique constraint other than the key, including the tenant column, is offered too.
    const byName = await data(`mutation { insert_branches_one(object: {name: "East", score: 1.5}, on_conflict: {constraint: lender_branches_account_id_name_key, update_columns: [score]}) { name score } }`);
    assert.deepEqual(byName.insert_branches_one, { name: 'East', score: 1.5 });
  });

  it('reads by every kind of key: bigint, composite, text (and another account’s same key is not there)', async () => {
    const [north] = await plain(`SELECT id::int AS j FROM lender_branches WHERE account_id = $1 AND name = 'North'`, [accountId]);
    const result = await data(
      `query($b: bigint!) {
        branch: branches_by_pk(id: $b) { id name notes(order_by: {Seq: desc}) { Seq Body } }
        note: notes_by_pk(branchId: $b, Seq: 2) { Body branch { name } }
        none: notes_by_pk(branchId: $b, Seq: 99) { Body }
        code: codes_by_pk(code: "A") { label }
        theirs: branches_by_pk(id: 1) { name }
      }`,
      { b: north },
    );
    const [branch] = await plain(
      `SELECT json_build_object('id', b.id, 'name', b.name, 'notes', (SELECT json_agg(json_build_object('Seq', n."Seq", 'Body', n."Body") ORDER BY n."Seq" DESC) FROM "LoanNotes" n WHERE n.account_id = b.account_id AND n."branchId" = b.id)) AS j
         FROM lender_branches b WHERE b.account_id = $1 AND b.id = $2`,
      [accountId, north],
    );
    assert.deepEqual(result.branch, branch);
    assert.deepEqual(result.note, { Body: 'second', branch: { name: 'North' } });
    assert.equal(result.none, null);
    assert.deepEqual(result.code, { label: 'ALPHA' });
    const mine = await plain(`SELECT name AS j FROM lender_branches WHERE account_id = $1 AND id = 1`, [accountId]);
    assert.deepEqual(result.theirs, mine.length ? { name: mine[0] } : null);
  });

  it('lists, filters, orders and aggregates; ties broken by every key column', async () => {
    const result = await data(`{
      notes(where: {Body: {_ilike: "%i%"}}, order_by: {branch: {name: asc}}) { branchId Seq }
      branches(where: {region: {_eq: "highlands"}}) { name }
      branches_aggregate(where: {score: {_gt: -1}}) { aggregate { count sum { score budget } max { opened_at } } }
    }`);
    const notes = await plain(`SELECT json_build_object('branchId', "branchId", 'Seq', "Seq") AS j FROM "LoanNotes" WHERE account_id = $1 AND "Body" ILIKE '%i%' ORDER BY "branchId", "Seq"`, [accountId]);
    assert.deepEqual(result.notes, notes);
    // citext compares without case, as PostgreSQL's own = does on it.
    assert.deepEqual(result.branches, await plain(`SELECT json_build_object('name', name) AS j FROM lender_branches WHERE account_id = $1 AND region = 'highlands'`, [accountId]));
    assert.equal(result.branches.length, 1);
    const [aggregate] = await plain(
      `SELECT json_build_object('count', count(*), 'sum', json_build_object('score', sum(score), 'budget', sum(budget)), 'max', json_build_object('opened_at', max(opened_at))) AS j FROM lender_branches WHERE account_id = $1 AND score > -1`,
      [accountId],
    );
    assert.deepEqual(result.branches_aggregate.aggregate, aggregate);
  });

  it('answers the statistical aggregates with PostgreSQL\'s own digits (float8, bigint), and orders by them', async () => {
    const query = `{
      branches_aggregate {
        aggregate {
          stddev { score budget } stddev_samp { score budget } stddev_pop { score budget }
          variance { score budget } var_samp { score budget } var_pop { score budget }
        }
      }
      branches(order_by: [{notes_aggregate: {var_samp: {Seq: desc_nulls_last}}}, {notes_aggregate: {stddev_pop: {Seq: asc}}}]) { id }
    }`;
    const answer = await post({ query });
    assert.equal(answer.status, 200, answer.text);
    const result = parseExact(answer.text) as { data: { branches_aggregate: unknown; branches: unknown } };
    const fns = ['stddev', 'stddev_samp', 'stddev_pop', 'variance', 'var_samp', 'var_pop'];
    // PostgreSQL's answer as text (to_json of each value), read the same exact way.
    const [expected] = await plain(
      `SELECT json_build_object(${fns.map((fn) => `'${fn}', json_build_object('score', ${fn}(score), 'budget', ${fn}(budget))`).join(', ')})::text AS j FROM lender_branches WHERE account_id = $1`,
      [accountId],
    );
    assert.deepEqual(result.data.branches_aggregate, { aggregate: parseExact(expected as string) });
    const order = await plain(
      `SELECT json_build_object('id', b.id)::text AS j FROM lender_branches AS b WHERE b.account_id = $1
       ORDER BY (SELECT var_samp(n."Seq") FROM "LoanNotes" AS n WHERE n.account_id = b.account_id AND n."branchId" = b.id) DESC NULLS LAST,
                (SELECT stddev_pop(n."Seq") FROM "LoanNotes" AS n WHERE n.account_id = b.account_id AND n."branchId" = b.id) ASC NULLS LAST, b.id`,
      [accountId],
    );
    assert.deepEqual(result.data.branches, order.map((text) => parseExact(text as string)));
    assert.ok(order.length >= 2);
  });

  it('filters by an aggregate predicate over a composite-keyed relationship, as plain SQL does', async () => {
    const result = await data(`{
      some: branches(where: {notes_aggregate: {count: {predicate: {_gte: 1}, filter: {Body: {_ilike: "%i%"}}}}}, order_by: {id: asc}) { id }
      none: branches(where: {_not: {notes_aggregate: {count: {predicate: {_gt: 0}}}}}, order_by: {id: asc}) { id }
      distinct: branches(where: {notes_aggregate: {count: {arguments: [Body], distinct: true, predicate: {_in: [2, 3]}}}}, order_by: {id: asc}) { id }
    }`);
    const count = (where: string, predicate: string) =>
      plain(`SELECT json_build_object('id', b.id) AS j FROM lender_branches AS b WHERE b.account_id = $1 AND (SELECT ${predicate} FROM "LoanNotes" AS n WHERE n.account_id = b.account_id AND n."branchId" = b.id ${where}) ORDER BY b.id`, [accountId]);
    assert.deepEqual(result.some, await count(`AND n."Body" ILIKE '%i%'`, 'count(*) >= 1'));
    assert.deepEqual(result.none, await count('', 'NOT (count(*) > 0)'));
    assert.deepEqual(result.distinct, await count('', 'count(DISTINCT n."Body") IN (2, 3)'));
    assert.ok(result.some.length > 0 && result.none.length > 0);
  });

  it('updates by key (update_by_pk with pk_columns of each shape), by where, and many', async () => {
    const [north] = await plain(`SELECT id::int AS j FROM lender_branches WHERE account_id = $1 AND name = 'North'`, [accountId]);
    const result = await data(
      `mutation($b: bigint!) {
        byId: update_branches_by_pk(pk_columns: {id: $b}, _set: {region: "Uplands"}, _inc: {budget: 5, score: 0.25}) { id region budget score }
        byPair: update_notes_by_pk(pk_columns: {branchId: $b, Seq: 1}, _set: {Body: "first, edited"}) { Seq Body }
        missing: update_notes_by_pk(pk_columns: {branchId: $b, Seq: 99}, _set: {Body: "x"}) { Seq }
        byText: update_codes_by_pk(pk_columns: {code: "B"}, _set: {weight: 2}) { code weight }
        byWhere: update_notes(where: {branchId: {_eq: $b}, Seq: {_gte: 2}}, _set: {Body: "later"}) { affected_rows returning { Seq Body } }
        many: update_codes_many(updates: [{where: {code: {_eq: "A"}}, _inc: {weight: 1}}, {where: {code: {_in: ["B", "C"]}}, _set: {label: "other"}}]) { affected_rows returning { code } }
      }`,
      { b: north },
    );
    const [branch] = await plain(`SELECT json_build_object('id', id, 'region', region, 'budget', budget, 'score', score) AS j FROM lender_branches WHERE account_id = $1 AND id = $2`, [accountId, north]);
    assert.deepEqual(result.byId, branch);
    assert.deepEqual(branch.budget, 1200005);
    assert.deepEqual(result.byPair, { Seq: 1, Body: 'first, edited' });
    assert.equal(result.missing, null);
    assert.deepEqual(result.byText, { code: 'B', weight: 2 });
    assert.deepEqual(result.byWhere, { affected_rows: 2, returning: [{ Seq: 2, Body: 'later' }, { Seq: 3, Body: 'later' }] });
    assert.deepEqual(result.many, [{ affected_rows: 1, returning: [{ code: 'A' }] }, { affected_rows: 2, returning: [{ code: 'B' }, { code: 'C' }] }]);
    assert.deepEqual(await plain(`SELECT json_agg(json_build_object('code', code, 'label', label, 'weight', weight) ORDER BY code) AS j FROM lender_codes WHERE account_id = $1`, [accountId]), [
      [
        { code: 'A', label: 'ALPHA', weight: 11 },
        { code: 'B', label: 'other', weight: 2 },
        { code: 'C', label: 'other', weight: null },
      ],
    ]);
  });

  it('deletes by composite, bigint and text key and by where, returning what was deleted', async () => {
    const [north] = await plain(`SELECT id::int AS j FROM lender_branches WHERE account_id = $1 AND name = 'North'`, [accountId]);
    const before = await plain(`SELECT ${NOTE_JSON} AS j FROM "LoanNotes" WHERE account_id = $1 AND "Seq" = 3`, [accountId]);
    const result = await data(
      `mutation($b: bigint!) {
        pair: delete_notes_by_pk(branchId: $b, Seq: 3) { branchId Seq Body createdAt }
        code: delete_codes_by_pk(code: "C") { code }
        where: delete_codes(where: {weight: {_is_null: true}}) { affected_rows }
      }`,
      { b: north },
    );
    assert.deepEqual(result.pair, before[0]);
    assert.deepEqual(result.code, { code: 'C' });
    assert.deepEqual(result.where, { affected_rows: 0 });
    const south = await data(`{ branches(where: {name: {_eq: "South"}}) { id } }`);
    const deleted = await data(`mutation($id: bigint!) { delete_branches_by_pk(id: $id) { name } }`, { id: south.branches[0].id });
    assert.deepEqual(deleted.delete_branches_by_pk, { name: 'South' });
    assert.deepEqual(await plain(`SELECT count(*)::int AS j FROM lender_branches WHERE account_id = $1 AND name = 'South'`, [accountId]), [0]);
  });

  it('keeps every digit of a bigint past 2^53 (a string in, a JSON number out, as Hasura writes it)', async () => {
    const answer = await post({ query: 'mutation { insert_branches_one(object: {name: "Big", budget: "9007199254740993", score: 0.1}) { budget score } }' });
    assert.equal(answer.status, 200, answer.text);
    assert.match(answer.text, /"budget":9007199254740993,"score":0.1\}/);
    assert.deepEqual(await plain(`SELECT budget::text AS j FROM lender_branches WHERE account_id = $1 AND name = 'Big'`, [accountId]), ['9007199254740993']);
    const filtered = await data(`{ branches(where: {budget: {_gt: "9007199254740992"}}) { name } }`);
    assert.deepEqual(filtered.branches, [{ name: 'Big' }]);
    const tooBig = await errors(`{ branches(where: {budget: {_gt: "9223372036854775808"}}) { name } }`);
    assert.equal(tooBig[0]!.extensions?.code, 'validation-failed');
  });

  it('answers every mistake about a key as a client error, never a 500', async () => {
    const duplicate = await errors(`mutation { insert_codes_one(object: {code: "A", label: "again"}) { code } }`);
    assert.equal(duplicate[0]!.extensions?.code, 'constraint-violation');
    const missingPart = await errors(`{ notes_by_pk(branchId: 1) { Body } }`);
    assert.equal(missingPart[0]!.extensions?.code, 'validation-failed');
    const wrongType = await errors(`{ branches_by_pk(id: "x") { name } }`);
    assert.equal(wrongType[0]!.extensions?.code, 'validation-failed');
    const noParent = await errors(`mutation { insert_notes_one(object: {branchId: 999999, Seq: 1, Body: "orphan"}) { Seq } }`);
    assert.equal(noParent[0]!.extensions?.code, 'not-found');
  });

  it('explains a composite-key update without running it: its statements name every key column', async () => {
    const response = await fetch(`${server.url}/api/graph/explain`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...tokenHeader(key) },
      // `branch { name }` reads another table: two statements (the write, then the response).
      body: JSON.stringify({ query: 'mutation { update_notes_by_pk(pk_columns: {branchId: 1, Seq: 1}, _set: {Body: "never"}) { Body branch { name } } }' }),
    });
    const text = await response.text();
    assert.equal(response.status, 200, text);
    assert.match(text, /UPDATE \\"LoanNotes\\"/);
    assert.match(text, /\\"branchId\\" = \$\d+::bigint/);
    // The response reads the written row by every key column, each cast as a _by_pk argument is.
    assert.match(text, /\\"branchId\\" = \(\$\d+::json -> 0 ->> \$\d+::text\)::bigint AND \S+\.\\"Seq\\" = \(\$\d+::json -> 0 ->> \$\d+::text\)::bigint/);
    // Its own columns only: one statement, the response read from the UPDATE's RETURNING.
    const own = await fetch(`${server.url}/api/graph/explain`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...tokenHeader(key) },
      body: JSON.stringify({ query: 'mutation { update_notes_by_pk(pk_columns: {branchId: 1, Seq: 1}, _set: {Body: "never"}) { Body } }' }),
    });
    const single = (await own.json()) as { statements: { sql: string }[] };
    assert.equal(single.statements.length, 1);
    assert.match(single.statements[0]!.sql, /^WITH "_w" AS \(UPDATE "LoanNotes" .*"branchId" = \$\d+::bigint.*"Seq" = \$\d+::bigint.* RETURNING "_t\d+"\.\*\) SELECT CASE WHEN /);
    assert.deepEqual(await plain(`SELECT count(*)::int AS j FROM "LoanNotes" WHERE "Body" = 'never'`), [0]);
  });

  it('keeps accounts apart: the other account sees none of these rows', async () => {
    const theirs = await data(`{ branches { name } codes { code label } notes { Seq } }`, undefined, otherKey);
    assert.deepEqual(theirs, { branches: [{ name: 'theirs' }], codes: [{ code: 'A', label: 'theirs' }], notes: [] });
  });
});

describe('Batches: a JSON array of requests (Apollo BatchHttpLink)', () => {
  it('answers 10 requests with 10 results in order, each its own statement and errors, writes seen by later requests', async () => {
    const requests = [
      { query: '{ codes(order_by: {code: asc}) { code } }' },
      { query: 'mutation { insert_codes_one(object: {code: "Z", label: "zeta", weight: 26}) { code } }' },
      { query: 'query One($c: String!) { codes_by_pk(code: $c) { label weight } }', variables: { c: 'Z' } },
      { query: '{ nope }' },
      { query: 'mutation { insert_codes_one(object: {code: "Z", label: "again"}) { code } }' },
      { query: '{ codes_aggregate { aggregate { count } } }' },
      { query: 'query A { a: codes_by_pk(code: "A") { code } } query B { b: codes_by_pk(code: "B") { code } }', operationName: 'B' },
      { query: 'mutation { update_codes_by_pk(pk_columns: {code: "Z"}, _inc: {weight: 1}) { weight } }' },
      { query: '{ codes_by_pk(code: "Z") { weight } }' },
      { query: '{ __typename }' },
    ];
    const answer = await post(requests);
    assert.equal(answer.status, 200, answer.text);
    const results = answer.body as Body[];
    assert.equal(results.length, 10);
    const codes = await plain(`SELECT code AS j FROM lender_codes WHERE account_id = $1 AND code <> 'Z' ORDER BY code`, [accountId]);
    assert.deepEqual(results[0], { data: { codes: codes.map((code) => ({ code })) } });
    assert.deepEqual(results[1], { data: { insert_codes_one: { code: 'Z' } } });
    assert.deepEqual(results[2], { data: { codes_by_pk: { label: 'zeta', weight: 26 } } });
    assert.equal(results[3]!.errors?.[0]?.extensions?.code, 'validation-failed');
    assert.equal(results[3]!.data, undefined);
    assert.equal(results[4]!.errors?.[0]?.extensions?.code, 'constraint-violation');
    assert.deepEqual(results[5], { data: { codes_aggregate: { aggregate: { count: codes.length + 1 } } } });
    assert.deepEqual(results[6], { data: { b: { code: 'B' } } });
    assert.deepEqual(results[7], { data: { update_codes_by_pk: { weight: 27 } } });
    assert.deepEqual(results[8], { data: { codes_by_pk: { weight: 27 } } });
    assert.deepEqual(results[9], { data: { __typename: 'query_root' } });
    // Each request was its own transaction: the failed insert left the first one in place.
    assert.deepEqual(await plain(`SELECT label AS j FROM lender_codes WHERE account_id = $1 AND code = 'Z'`, [accountId]), ['zeta']);
  });

  it('refuses an empty batch and one over MAX_BATCH_SIZE (20) with 400, running nothing', async () => {
    const empty = await post([]);
    assert.equal(empty.status, 400, empty.text);
    assert.equal((empty.body as Body).errors?.[0]?.extensions?.code, 'invalid-request');
    const tooMany = await post(Array.from({ length: 21 }, () => ({ query: 'mutation { insert_codes_one(object: {code: "Y", label: "y"}) { code } }' })));
    assert.equal(tooMany.status, 400, tooMany.text);
    assert.match((tooMany.body as Body).errors?.[0]?.message ?? '', /MAX_BATCH_SIZE/);
    assert.deepEqual(await plain(`SELECT count(*)::int AS j FROM lender_codes WHERE account_id = $1 AND code = 'Y'`, [accountId]), [0]);
    // An item that is no GraphQL request is that item's error; the others are answered.
    const mixed = await post([5, { query: '{ codes_by_pk(code: "A") { code } }' }]);
    assert.equal(mixed.status, 200, mixed.text);
    assert.equal((mixed.body as Body[])[0]!.errors?.[0]?.extensions?.code, 'invalid-request');
    assert.deepEqual((mixed.body as Body[])[1], { data: { codes_by_pk: { code: 'A' } } });
  });
});

describe('A column dropped under the metadata in service', () => {
  const readyz = async (apiKey?: string) => (await fetch(`${server.url}/readyz`, { headers: apiKey ? tokenHeader(apiKey) : {} })).json() as Promise<{ status: string; metadata: { status: string; problems?: string[] } }>;

  it('is a 500 metadata-mismatch in words (read or write), named by /readyz for an admin key until the database has it again', async () => {
    await database.db.query(`ALTER TABLE lender_codes DROP COLUMN weight`);
    try {
      for (const query of ['{ codes { code weight } }', 'mutation { update_codes_by_pk(pk_columns: {code: "A"}, _set: {label: "a"}) { weight } }']) {
        const answer = await post({ query });
        assert.equal(answer.status, 500, answer.text);
        const error = (answer.body as Body).errors![0]!;
        assert.equal(error.extensions?.code, 'metadata-mismatch', answer.text);
        assert.match(error.message, /^the database no longer has a table, column or function this service's metadata names; an admin must correct the metadata file or the database/);
        assert.doesNotMatch(answer.text, /_t\d|does not exist/, "the database's own words (and the statement's aliases) stay in the log");
      }
      // Over the WebSocket too: a query sent on the socket is answered with the same code, not `internal`.
      const socket = connect(server.url, key);
      try {
        const once = subscribe(socket.client, '{ codes { code weight } }');
        const ended = (await once.ended) as { message?: string; extensions?: { code?: string } }[] | null;
        assert.equal(ended?.[0]?.extensions?.code, 'metadata-mismatch', JSON.stringify(ended));
        // And a live query's first result: its cohort statement fails the same way.
        const live = subscribe(socket.client, 'subscription { codes { code weight } }');
        const liveEnded = (await live.ended) as { message?: string; extensions?: { code?: string } }[] | null;
        assert.equal(liveEnded?.[0]?.extensions?.code, 'metadata-mismatch', JSON.stringify(liveEnded));
        assert.match(liveEnded?.[0]?.message ?? '', /^the database no longer has a table, column or function/);
      } finally {
        await socket.dispose();
      }
      // What does not read the column still answers.
      assert.ok((await data('{ codes { code label } }')).codes.length > 0);
      let seen = await readyz(key);
      for (let tries = 0; seen.metadata.status !== 'mismatch' && tries < 50; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        seen = await readyz(key);
      }
      assert.equal(seen.status, 'ok', 'still ready: every other collection answers');
      assert.equal(seen.metadata.status, 'mismatch');
      assert.ok(seen.metadata.problems?.some((problem) => /lender_codes\.weight/.test(problem)), JSON.stringify(seen));
      const anonymous = await readyz();
      assert.equal(anonymous.metadata.status, 'mismatch');
      assert.equal(anonymous.metadata.problems, undefined, 'what is missing only for an admin key');
    } finally {
      await database.db.query(`ALTER TABLE lender_codes ADD COLUMN weight integer`);
    }
    await server.engines.checkServing();
    assert.equal((await readyz(key)).metadata.status, 'ok');
    assert.deepEqual((await data('{ codes_by_pk(code: "A") { weight } }')).codes_by_pk, { weight: null });
  });
});
