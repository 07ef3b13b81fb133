import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAccountWithKey, startTestServer, tokenHeader, type TestServer } from '../support/http.js';
import { openTestDatabase, testDatabaseKind, type TestDatabase } from '../support/testDatabase.js';
import { socketUrl } from '../support/graphSocket.js';
import { WebSocket } from 'ws';

/**
 * Issue 30: Hasura's jsonb update operators — `_append`, `_prepend`, `_delete_key`, `_delete_elem`,
 * `_delete_at_path` — an empty `_set`, and the `path` argument of a jsonb field, on a lender's own
 * table (an integer key). Each update
 * goes over HTTP and its answer and stored value are compared with PostgreSQL's own operator
 * applied to the value as it was (`||`, `-`, `#-`), so the test states what the engine must
 * do, not how it writes the SQL. A statement trigger counts UPDATE statements: `_set: {}` must
 * run none (Hasura answers affected_rows 0 without writing).
 */
const SCHEMA = `
  CREATE TABLE lender_profiles (
    account_id uuid NOT NULL,
    id integer NOT NULL,
    label text NOT NULL,
    data jsonb,
    PRIMARY KEY (account_id, id)
  );
  CREATE TABLE lender_profile_updates (n integer NOT NULL);
  INSERT INTO lender_profile_updates VALUES (0);
  CREATE FUNCTION lender_profiles_count_update() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN UPDATE lender_profile_updates SET n = n + 1; RETURN NULL; END $$;
  CREATE TRIGGER lender_profiles_updated AFTER UPDATE ON lender_profiles FOR EACH STATEMENT EXECUTE FUNCTION lender_profiles_count_update()
`;

const METADATA = `
version: 1
tenant_column: account_id
collections:
  profiles:
    table: lender_profiles
    primary_key: id
    fields: { id: integer, label: text, data: jsonb }
    insert: { columns: [id, label, data] }
    update: { columns: [label, data] }
`;

let database: TestDatabase;
let server: TestServer;
let directory: string;
let key: string;
let accountId: string;

interface Body {
  data?: any;
  errors?: { message: string; extensions?: { code?: string } }[];
}

async function post(query: string, variables?: Record<string, unknown>): Promise<{ status: number; body: Body; text: string }> {
  const response = await fetch(`${server.url}/api/graph`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...tokenHeader(key) },
    body: JSON.stringify({ query, ...(variables ? { variables } : {}) }),
  });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text) as Body, text };
}
async function data(query: string, variables?: Record<string, unknown>): Promise<any> {
  const answer = await post(query, variables);
  assert.equal(answer.status, 200, answer.text);
  assert.equal(answer.body.errors, undefined, answer.text);
  return answer.body.data;
}
async function stored(id: number): Promise<unknown> {
  const { rows } = await database.db.query<{ data: unknown }>('SELECT data FROM lender_profiles WHERE account_id = $1 AND id = $2', [accountId, id]);
  return rows[0]?.data;
}
/** PostgreSQL's own answer: `expression` over `$1::jsonb` (the value before) and `$2`. */
async function plain(expression: string, before: unknown, operand: unknown): Promise<unknown> {
  const { rows } = await database.db.query<{ j: unknown }>(`SELECT ${expression} AS j`, [JSON.stringify(before), operand]);
  return rows[0]!.j;
}
async function updateStatements(): Promise<number> {
  const { rows } = await database.db.query<{ n: number }>('SELECT n FROM lender_profile_updates');
  return rows[0]!.n;
}

const START = { a: 1, b: { c: [1, 2, 3], d: 'x' }, tags: ['red', 'green', 'blue'] };

before(async () => {
  database = await openTestDatabase();
  for (const statement of SCHEMA.split(/;\n/).filter((text) => text.trim())) await database.db.query(statement);
  directory = mkdtempSync(join(tmpdir(), 'loanql-jsonb-updates-'));
  const metadataPath = join(directory, 'profiles.yaml');
  writeFileSync(metadataPath, METADATA);
  server = await startTestServer(database.db, { metadataPath });
  const made = await createAccountWithKey(database.db);
  key = made.apiKey.key;
  accountId = made.account.id;
});
after(async () => {
  await server?.close();
  await database?.close();
  if (directory) rmSync(directory, { recursive: true, force: true });
});

/** A fresh row `id` holding `value`. */
async function row(id: number, value: unknown): Promise<void> {
  await data(`mutation($id: Int!, $v: jsonb) { insert_profiles_one(object: {id: $id, label: "p", data: $v}) { id } }`, { id, v: value });
}

describe(`jsonb update operators as Hasura has them (${testDatabaseKind})`, () => {
  const cases: { name: string; argument: string; type: string; operand: unknown; expression: string; before?: unknown }[] = [
    { name: '_append merges an object', argument: '_append', type: 'jsonb', operand: { a: 2, z: true }, expression: '$1::jsonb || $2::jsonb' },
    { name: '_append adds to an array', argument: '_append', type: 'jsonb', operand: ['x'], expression: '$1::jsonb || $2::jsonb', before: [1, 2] },
    { name: '_prepend puts an array first', argument: '_prepend', type: 'jsonb', operand: ['x', 'y'], expression: '$2::jsonb || $1::jsonb', before: [1, 2] },
    { name: '_prepend of an object: the stored keys win', argument: '_prepend', type: 'jsonb', operand: { a: 9, n: null }, expression: '$2::jsonb || $1::jsonb' },
    { name: '_delete_key removes a key', argument: '_delete_key', type: 'String', operand: 'b', expression: '$1::jsonb - $2::text' },
    { name: '_delete_key removes string items of an array', argument: '_delete_key', type: 'String', operand: 'green', expression: '$1::jsonb - $2::text', before: ['red', 'green', 'green', 1] },
    { name: '_delete_elem removes an index', argument: '_delete_elem', type: 'Int', operand: 1, expression: '$1::jsonb - $2::int', before: [10, 20, 30] },
    { name: '_delete_elem counts a negative index from the end', argument: '_delete_elem', type: 'Int', operand: -1, expression: '$1::jsonb - $2::int', before: [10, 20, 30] },
    { name: '_delete_at_path removes a nested field', argument: '_delete_at_path', type: '[String!]', operand: ['b', 'd'], expression: '$1::jsonb #- $2::text[]' },
    { name: '_delete_at_path removes an item inside an array by index', argument: '_delete_at_path', type: '[String!]', operand: ['b', 'c', '-1'], expression: '$1::jsonb #- $2::text[]' },
    { name: '_delete_at_path of a path that is not there changes nothing', argument: '_delete_at_path', type: '[String!]', operand: ['nope', 'x'], expression: '$1::jsonb #- $2::text[]' },
  ];
  for (const [index, c] of cases.entries()) {
    it(`${c.name}: the answer and the stored value are PostgreSQL's own operator's`, async () => {
      const id = 100 + index;
      const before = c.before ?? START;
      await row(id, before);
      const expected = await plain(c.expression, before, c.type === 'jsonb' ? JSON.stringify(c.operand) : c.operand);
      // As a variable, and written inline in the document.
      const viaVariable = await data(`mutation($id: Int!, $o: ${c.type}) { update_profiles_by_pk(pk_columns: {id: $id}, ${c.argument}: {data: $o}) { id data } }`, { id, o: c.operand });
      assert.deepEqual(viaVariable.update_profiles_by_pk, { id, data: expected });
      assert.deepEqual(await stored(id), expected);
      await database.db.query('UPDATE lender_profiles SET data = $3 WHERE account_id = $1 AND id = $2', [accountId, id, JSON.stringify(before)]);
      const inline = await data(`mutation { update_profiles(where: {id: {_eq: ${id}}}, ${c.argument}: {data: ${graphqlLiteral(c.operand)}}) { affected_rows returning { data } } }`);
      assert.deepEqual(inline.update_profiles, { affected_rows: 1, returning: [{ data: expected }] });
    });
  }

  it('applies several operators to one field in one order: _append, _prepend, then the deletes (engine/README.md)', async () => {
    await row(200, [1, 2, 3]);
    const result = await data(`mutation { update_profiles_by_pk(pk_columns: {id: 200}, _append: {data: [4]}, _prepend: {data: [0]}, _delete_elem: {data: 1}) { data } }`);
    const expected = await plain('(($2::jsonb || ($1::jsonb || \'[4]\'::jsonb)) - 1)', [1, 2, 3], '[0]');
    assert.deepEqual(result.update_profiles_by_pk.data, expected);
    assert.deepEqual(expected, [0, 2, 3, 4]);
  });

  it('refuses a null index or path, and a field in _set and another operator, naming it (400-class, nothing written)', async () => {
    await row(201, START);
    for (const document of [
      'mutation { update_profiles_by_pk(pk_columns: {id: 201}, _delete_elem: {data: null}) { id } }',
      'mutation { update_profiles_by_pk(pk_columns: {id: 201}, _delete_at_path: {data: null}) { id } }',
      'mutation { update_profiles_by_pk(pk_columns: {id: 201}, _set: {data: {}}, _delete_key: {data: "a"}) { id } }',
    ]) {
      const answer = await post(document);
      assert.ok(answer.status === 200 || answer.status === 400, answer.text);
      assert.equal(answer.body.errors?.[0]?.extensions?.code, 'validation-failed', answer.text);
      assert.match(answer.body.errors![0]!.message, /data/);
    }
    assert.deepEqual(await stored(201), START);
  });
});

describe(`An empty _set (${testDatabaseKind})`, () => {
  it('answers affected_rows 0 and no rows, writes nothing and runs no UPDATE', async () => {
    await row(300, START);
    const before = await updateStatements();
    const result = await data(`mutation {
      many: update_profiles(where: {}, _set: {}) { affected_rows returning { id } }
      one: update_profiles_by_pk(pk_columns: {id: 300}, _set: {}) { id }
      multi: update_profiles_many(updates: [{where: {id: {_eq: 300}}, _set: {}}]) { affected_rows }
    }`);
    assert.deepEqual(result, { many: { affected_rows: 0, returning: [] }, one: null, multi: [{ affected_rows: 0 }] });
    assert.equal(await updateStatements(), before, 'no UPDATE statement ran');
    const { rows } = await database.db.query<{ label: string }>('SELECT label FROM lender_profiles WHERE account_id = $1 AND id = 300', [accountId]);
    assert.deepEqual(rows, [{ label: 'p' }]);
    // A real update in the same way runs one statement: the trigger counts what it should.
    await data(`mutation { update_profiles_by_pk(pk_columns: {id: 300}, _set: {label: "q"}) { id } }`);
    assert.equal(await updateStatements(), before + 1);
  });

  it('still refuses an update with no operator at all (Hasura: at least one is expected)', async () => {
    const answer = await post('mutation { update_profiles(where: {}) { affected_rows } }');
    assert.equal(answer.body.errors?.[0]?.extensions?.code, 'validation-failed', answer.text);
    assert.match(answer.body.errors![0]!.message, /_set, _inc, _append, _prepend, _delete_key, _delete_elem, _delete_at_path/);
  });
});

describe(`The path argument of a jsonb field (${testDatabaseKind})`, () => {
  const VALUE = { a: 1, b: { c: [10, 20, { d: 'deep' }], 'odd.key': true }, list: [[1, 2], [3]] };
  const paths: { path: string; steps: string[] }[] = [
    { path: '$', steps: [] },
    { path: '$.a', steps: ['a'] },
    { path: 'a', steps: ['a'] },
    { path: 'b.c', steps: ['b', 'c'] },
    { path: '$.b.c[1]', steps: ['b', 'c', '1'] },
    { path: '$.b.c[2].d', steps: ['b', 'c', '2', 'd'] },
    { path: "$.b['odd.key']", steps: ['b', 'odd.key'] },
    { path: '$["list"][0][1]', steps: ['list', '0', '1'] },
    { path: '$.missing.deeper', steps: ['missing', 'deeper'] },
    { path: '$.b.c[7]', steps: ['b', 'c', '7'] },
  ];

  before(async () => {
    await row(400, VALUE);
    await row(401, null);
  });

  for (const { path, steps } of paths) {
    it(`path: ${JSON.stringify(path)} answers PostgreSQL's #> '{${steps.join(',')}}' (null where nothing is there)`, async () => {
      const expected = await plain('$1::jsonb #> $2::text[]', VALUE, steps);
      const result = await data(`query($p: String) { inline: profiles_by_pk(id: 400) { data(path: ${JSON.stringify(path)}) } variable: profiles(where: {id: {_in: [400, 401]}}, order_by: {id: asc}) { id data(path: $p) whole: data } }`, { p: path });
      assert.deepEqual(result.inline, { data: expected ?? null });
      assert.deepEqual(result.variable, [
        { id: 400, data: expected ?? null, whole: VALUE },
        { id: 401, data: null, whole: null },
      ]);
    });
  }

  it('refuses a path it cannot read, naming the field (validation-failed, never a 500)', async () => {
    for (const path of ['$.', '$.b[x]', "$['unterminated", '$a', 'a..b']) {
      const answer = await post(`{ profiles_by_pk(id: 400) { data(path: ${JSON.stringify(path)}) } }`);
      assert.ok(answer.status === 200 || answer.status === 400, answer.text);
      assert.equal(answer.body.errors?.[0]?.extensions?.code, 'validation-failed', `${path}: ${answer.text}`);
      assert.match(answer.body.errors![0]!.message, /path of data/);
    }
  });
});

/** A JSON value written as a GraphQL literal (object keys bare). */
function graphqlLiteral(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(graphqlLiteral).join(', ')}]`;
  if (value !== null && typeof value === 'object') return `{${Object.entries(value).map(([k, v]) => `${k}: ${graphqlLiteral(v)}`).join(', ')}}`;
  return JSON.stringify(value);
}

/** A request body written as text: numbers a double cannot hold, as a client's JSON may carry them. */
async function postText(body: string, contentType = 'application/json'): Promise<{ status: number; body: Body; text: string }> {
  const response = await fetch(`${server.url}/api/graph`, { method: 'POST', headers: { 'content-type': contentType, ...tokenHeader(key) }, body });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text) as Body, text };
}

/** The stored value's number at `path` as PostgreSQL's text, and its JSON type. */
async function storedNumber(id: number, path: string[]): Promise<{ text: string; kind: string }> {
  const { rows } = await database.db.query<{ text: string; kind: string }>(
    'SELECT data #>> $3::text[] AS text, jsonb_typeof(data #> $3::text[]) AS kind FROM lender_profiles WHERE account_id = $1 AND id = $2',
    [accountId, id, path],
  );
  return rows[0]!;
}

const BIG = '12345678901234567890';
const LONG_DECIMAL = '100.10000000000000001';

describe(`jsonb variables keep numbers a double cannot hold (${testDatabaseKind})`, () => {
  const insertByScalar = 'mutation($id: Int!, $v: jsonb) { insert_profiles_one(object: {id: $id, label: \\"v\\", data: $v}) { id } }';
  for (const [name, id, contentType] of [
    ['the fast path', 9100, 'application/json'],
    ["Express's route", 9101, 'application/json; charset=UTF-8; x=1'],
  ] as const) {
    it(`a jsonb variable on ${name}: ${BIG} and ${LONG_DECIMAL} stored as numbers with their digits (they were stored as strings)`, async () => {
      const answer = await postText(`{"query": "${insertByScalar}", "variables": {"id": ${id}, "v": {"big": ${BIG}, "list": [${LONG_DECIMAL}, 1.5], "text": "${BIG}"}}}`, contentType);
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.body.errors, undefined, answer.text);
      assert.deepEqual(await storedNumber(id, ['big']), { text: BIG, kind: 'number' });
      assert.deepEqual(await storedNumber(id, ['list', '0']), { text: LONG_DECIMAL, kind: 'number' });
      assert.deepEqual(await storedNumber(id, ['text']), { text: BIG, kind: 'string' }, 'a string stays a string');
    });
  }

  it('inside an input object variable too, while an Int field given such a number is still refused and nothing is written', async () => {
    const byObject = 'mutation($o: profiles_insert_input!) { insert_profiles_one(object: $o) { id } }';
    const answer = await postText(`{"query": "${byObject}", "variables": {"o": {"id": 9102, "label": "o", "data": {"n": ${BIG}}}}}`);
    assert.equal(answer.body.errors, undefined, answer.text);
    assert.deepEqual(await storedNumber(9102, ['n']), { text: BIG, kind: 'number' });
    const refused = await postText(`{"query": "${byObject}", "variables": {"o": {"id": ${BIG}, "label": "o", "data": {"n": 1}}}}`);
    assert.equal(refused.body.errors?.[0]?.extensions?.code, 'validation-failed', refused.text);
    assert.match(refused.body.errors![0]!.message, /Int/);
    const { rows } = await database.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM lender_profiles WHERE account_id = $1 AND label = 'o'`, [accountId]);
    assert.deepEqual(rows, [{ n: 1 }], 'nothing written');
  });

  it('over WebSocket too (graphql-ws reads the message with JSON.parse: its copy had strings)', async () => {
    const socket = new WebSocket(socketUrl(server.url), 'graphql-transport-ws');
    const messages: any[] = [];
    const next = (type: string): Promise<any> =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${type} message: ${JSON.stringify(messages)}`)), 10_000);
        const look = (): void => {
          const found = messages.find((message) => message.type === type);
          if (found) {
            clearTimeout(timer);
            resolve(found);
          } else setTimeout(look, 20);
        };
        look();
      });
    socket.on('message', (data) => messages.push(JSON.parse(String(data))));
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    try {
      socket.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: `Token ${key}` } }));
      await next('connection_ack');
      socket.send(`{"type": "subscribe", "id": "1", "payload": {"query": "${insertByScalar}", "variables": {"id": 9103, "v": {"big": ${BIG}}}}}`);
      const done = await next('complete');
      assert.equal(done.id, '1');
      assert.equal(messages.find((message) => message.type === 'error'), undefined, JSON.stringify(messages));
      assert.deepEqual(await storedNumber(9103, ['big']), { text: BIG, kind: 'number' });
    } finally {
      socket.close();
    }
  });
});
