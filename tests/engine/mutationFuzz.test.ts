import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';
import { createAccountWithKey, startTestServer, tokenHeader, type TestServer } from '../support/http.js';

/**
 * Issue 14, Done-when 6: no input gets a 500. Random mutation documents and variables — wrong
 * types, NUL characters, huge and tiny numbers, missing required fields, unknown fields, odd
 * nesting — against every mutation field: every answer is GraphQL data or errors, never an
 * internal error, and the service logs no fault.
 */
let database: TestDatabase;
let server: TestServer;
let key: string;
let loanId: string;
let mutationFields: string[];
let inputTypes: string[];

before(async () => {
  database = await openTestDatabase();
  server = await startTestServer(database.db);
  const created = await createAccountWithKey(database.db);
  key = created.apiKey.key;
  loanId = (await database.db.query<{ id: string }>(`INSERT INTO loans (account_id, name, status) VALUES ($1, 'fuzz', 'servicing') RETURNING id`, [created.account.id])).rows[0]!.id;
  const schema = (await send({ query: `{ __schema { mutationType { fields { name } } types { name kind } } }` })).body as {
    data: { __schema: { mutationType: { fields: { name: string }[] }; types: { name: string; kind: string }[] } };
  };
  mutationFields = schema.data.__schema.mutationType.fields.map((f) => f.name);
  inputTypes = schema.data.__schema.types.filter((t) => t.kind === 'INPUT_OBJECT' || t.kind === 'SCALAR' || t.kind === 'ENUM').map((t) => t.name);
});
after(async () => {
  await server?.close();
  await database?.close();
});

async function send(body: unknown): Promise<{ status: number; body: any; text: string }> {
  const response = await fetch(`${server.url}/api/graph`, { method: 'POST', headers: { ...tokenHeader(key), 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, body: parsed, text };
}

const NAMES = ['loan_id', 'person_id', 'address_id', 'document_id', 'name', 'amount', 'date', 'date_reversed', 'status', 'text', 'value', 'rate', 'custom_fields', 'id', 'data',
  'address_details', 'valuations', 'loan_documents', 'address', 'constraint', 'update_columns', 'where', '_eq', '_in', '_and', '_set', 'nope', 'account_id'];
const WEIRD_STRINGS = ['', 'a\u0000b', '\u0000', 'x'.repeat(5000), '2026-02-30', '2026-01-01', '1e999', 'NaN', '-0', "'; DROP TABLE loans; --", '\u{1F4B8}', 'servicing', '00000000-0000-0000-0000-000000000000'];
const NUMBER_TOKENS = ['0', '-1', '1.005', '1e400', '-1e400', '123456789012345678901234567890', '0.0000000000000000000001', '2147483648', '-2147483649', '3.14'];

/** A GraphQL literal as document text. */
const literal: fc.Arbitrary<string> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(...WEIRD_STRINGS).map((v) => JSON.stringify(v)),
    fc.constant(JSON.stringify(loanId)),
    fc.constantFrom(...NUMBER_TOKENS),
    fc.constantFrom('true', 'false', 'null', 'asc', 'completed', 'loan_documents_account_id_loan_id_document_id_key'),
    fc.array(tie('value'), { maxLength: 3 }).map((items) => `[${items.join(', ')}]`),
    fc.dictionary(fc.constantFrom(...NAMES), tie('value'), { maxKeys: 4 }).map((o) => `{${Object.entries(o).map(([k, v]) => `${k}: ${v}`).join(', ')}}`),
  ),
})).value as fc.Arbitrary<string>;

/** A JSON variable value. */
const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom<unknown>(...WEIRD_STRINGS, loanId, 0, -1, 1.005, 1e300, -1e300, Number.MAX_SAFE_INTEGER, 2 ** 31, true, false, null),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom(...NAMES), tie('value'), { maxKeys: 4 }),
  ),
})).value;

const ARGUMENTS = ['objects', 'object', 'on_conflict', 'where', '_set', '_inc', '_append', '_prepend', '_delete_key', '_delete_elem', '_delete_at_path', 'pk_columns', 'id', 'updates', 'bogus'];

describe('Mutations: fuzzing documents and variables', () => {
  it('answers every random mutation with data or GraphQL errors, never a 500', async () => {
    const request = fc.record({
      fields: fc.array(
        fc.record({
          field: fc.constantFrom(...mutationFields),
          args: fc.dictionary(fc.constantFrom(...ARGUMENTS), fc.oneof(literal, fc.constant('$v')), { maxKeys: 3 }),
          selection: fc.constantFrom('{ __typename }', '{ affected_rows }', '{ returning { id } }', '{ id }', '', '{ id loan { id } }'),
        }),
        { minLength: 1, maxLength: 3 },
      ),
      variableType: fc.oneof(fc.constantFrom('String', 'Int', '[String!]!', 'numeric', 'uuid!', 'jsonb'), fc.constant(null).map(() => inputTypes[0]!), fc.integer({ min: 0, max: 500 }).map((i) => inputTypes[i % inputTypes.length]!)),
      v: json,
    });
    await fc.assert(
      fc.asyncProperty(request, async ({ fields, variableType, v }) => {
        const usesVariable = fields.some((f) => Object.values(f.args).includes('$v'));
        const body = fields
          .map((f, i) => {
            const args = Object.entries(f.args).map(([name, value]) => `${name}: ${value}`);
            return `f${i}: ${f.field}${args.length ? `(${args.join(', ')})` : ''} ${f.selection}`;
          })
          .join('\n');
        const query = `mutation${usesVariable ? `($v: ${variableType})` : ''} {\n${body}\n}`;
        const answer = await send({ query, variables: { v } });
        assert.ok(answer.status === 200 || answer.status === 400, `status ${answer.status} for ${query} ${answer.text.slice(0, 300)}`);
        assert.ok(answer.body && (answer.body.data !== undefined || Array.isArray(answer.body.errors)), answer.text.slice(0, 300));
        for (const error of answer.body.errors ?? []) assert.notEqual(error.extensions?.code, 'internal', `${query}\n${answer.text}`);
      }),
      { seed: 1406, numRuns: 400 },
    );
    const faults = server.logs.filter((line) => Number(line.level) >= 50);
    assert.deepEqual(faults, [], 'no internal error was logged');
  });

  it('answers well-formed mutations with random variable values with data or GraphQL errors, never a 500', async () => {
    const TEMPLATES = [
      `mutation($a: uuid, $b: date, $c: numeric, $d: String) { insert_payments_one(object: {loan_id: $a, date: $b, amount: $c, method: $d}) { id amount loan { id } } }`,
      `mutation($a: String, $b: String, $c: date) { insert_tasks(objects: [{name: $a, status: $b, date_due: $c}]) { affected_rows returning { id name } } }`,
      `mutation($a: [tasks_insert_input!]!) { insert_tasks(objects: $a) { affected_rows } }`,
      `mutation($a: tasks_bool_exp!, $b: tasks_set_input) { update_tasks(where: $a, _set: $b) { affected_rows } }`,
      `mutation($a: uuid!, $b: jsonb, $c: String) { update_loans_by_pk(pk_columns: {id: $a}, _append: {custom_fields: $b}, _delete_key: {custom_fields: $c}) { custom_fields } }`,
      `mutation($a: uuid!, $b: jsonb, $c: Int, $d: [String!]) { update_loans_by_pk(pk_columns: {id: $a}, _prepend: {custom_fields: $b}, _delete_elem: {custom_fields: $c}, _delete_at_path: {custom_fields: $d}) { custom_fields } }`,
      `mutation($a: uuid!, $b: String) { update_loans_by_pk(pk_columns: {id: $a}, _set: {status: $b, name: $b}) { status } }`,
      `mutation($a: funding_sources_inc_input, $b: uuid!) { update_funding_sources_by_pk(pk_columns: {id: $b}, _inc: $a) { id } }`,
      `mutation($a: [people_updates!]!) { update_people_many(updates: $a) { affected_rows } }`,
      `mutation($a: addresses_insert_input!) { insert_addresses_one(object: $a) { id valuations { value } } }`,
      `mutation($a: borrows_on_conflict, $b: uuid, $c: uuid) { insert_borrows(objects: [{loan_id: $b, person_id: $c}], on_conflict: $a) { affected_rows } }`,
      `mutation($a: uuid!) { delete_tasks_by_pk(id: $a) { id } delete_comments(where: {loan_id: {_eq: $a}}) { affected_rows } }`,
    ];
    const value = fc.oneof(json, fc.constant(loanId));
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...TEMPLATES), value, value, value, value, async (query, a, b, c, d) => {
        const answer = await send({ query, variables: { a, b, c, d } });
        assert.ok(answer.status === 200 || answer.status === 400, `status ${answer.status} for ${query} ${answer.text.slice(0, 300)}`);
        assert.ok(answer.body && (answer.body.data !== undefined || Array.isArray(answer.body.errors)), answer.text.slice(0, 300));
        for (const error of answer.body.errors ?? []) assert.notEqual(error.extensions?.code, 'internal', `${query}\n${JSON.stringify({ a, b, c, d })}\n${answer.text}`);
      }),
      { seed: 1407, numRuns: 400 },
    );
    const faults = server.logs.filter((line) => Number(line.level) >= 50);
    assert.deepEqual(faults, [], 'no internal error was logged');
  });
});
