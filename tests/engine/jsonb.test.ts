import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createAccountWithKey, startTestServer, tokenHeader, type TestServer } from '../support/http.js';
import { exactDataOf, num, send } from '../support/seededService.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';

/**
 * `jsonb` fields (metadata type `jsonb`; `loans.custom_fields` in the project's metadata): the
 * stored JSON comes back as stored, with exact numbers; they are filtered with the jsonb
 * operators (issue 19; drawn at random by the generated test too) and `_is_null`, not with
 * `_eq`; they are not orderable.
 */
let database: TestDatabase;
let server: TestServer;
let key: string;

before(async () => {
  database = await openTestDatabase();
  server = await startTestServer(database.db);
  const made = await createAccountWithKey(database.db);
  key = made.apiKey.key;
  // Documents of any shape (a list, a nested object) are what the operators are tried on, not
  // values of a product's fields: loaded as a trusted load of stored history is, unchecked (0063).
  await database.db.transaction(async (tx) => {
    await tx.query(`SELECT set_config('loanql.custom_fields_unchecked', 'on', true)`);
    await tx.query(
      `INSERT INTO loans (account_id, id, name, custom_fields) VALUES
         ($1, 'a0000000-0000-4000-8000-000000000001', 'with fields', '{"loan_officer": "Kim", "ltv": 65.500, "flags": [true, null], "nested": {"a": 1}}'),
         ($1, 'a0000000-0000-4000-8000-000000000002', 'empty', '{}')`,
      [made.account.id],
    );
  });
});

after(async () => {
  await server?.close();
  await database?.close();
});

async function graph(query: string) {
  return send(`${server.url}/api/graph`, { method: 'POST', headers: { ...tokenHeader(key), 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
}

describe('jsonb fields', () => {
  it('return the stored JSON with exact numbers, beside the typed custom fields', async () => {
    const data = exactDataOf(await graph('{ loans(order_by: {name: desc}) { name custom_fields loan_officer } }'));
    assert.deepEqual(data.loans, [
      { name: 'with fields', custom_fields: { flags: [true, null], ltv: num('65.500'), nested: { a: num(1) }, loan_officer: 'Kim' }, loan_officer: 'Kim' },
      { name: 'empty', custom_fields: {}, loan_officer: null },
    ]);
  });

  it('filter with the jsonb operators: containment is deep, numbers compare as numbers', async () => {
    const names = async (where: string): Promise<string[]> => (exactDataOf(await graph(`{ loans(where: {custom_fields: ${where}}, order_by: {name: asc}) { name } }`)).loans as { name: string }[]).map((l) => l.name);
    assert.deepEqual(await names('{_contains: {nested: {a: 1}}}'), ['with fields']);
    assert.deepEqual(await names('{_contains: {ltv: 65.5}}'), ['with fields']);
    assert.deepEqual(await names('{_contains: {flags: [null]}}'), ['with fields']);
    assert.deepEqual(await names('{_contains: {flags: [false]}}'), []);
    assert.deepEqual(await names('{_contained_in: {loan_officer: "Kim"}}'), ['empty']);
    assert.deepEqual(await names('{_has_key: "nested"}'), ['with fields']);
    assert.deepEqual(await names('{_has_keys_all: ["ltv", "nope"]}'), []);
    assert.deepEqual(await names('{_has_keys_any: ["ltv", "nope"]}'), ['with fields']);
    assert.deepEqual(await names('{_cast: {String: {_eq: "{}"}}}'), ['empty']);
    assert.deepEqual(await names('{_cast: {String: {_regex: "\\"ltv\\": 65.500"}}}'), ['with fields']);
  });

  it('filter with _is_null, and not with _eq', async () => {
    const data = exactDataOf(await graph('{ loans(where: {custom_fields: {_is_null: false}}) { name } none: loans(where: {custom_fields: {_is_null: true}}) { name } }'));
    assert.equal(data.loans.length, 2);
    assert.deepEqual(data.none, []);
    const refused = await graph('{ loans(where: {custom_fields: {_eq: "x"}}) { name } }');
    assert.match((refused.body as { errors: { message: string }[] }).errors[0]!.message, /"_eq" is not defined by type "jsonb_comparison_exp"/);
  });

  it('are not orderable', async () => {
    const refused = await graph('{ loans(order_by: {custom_fields: asc}) { name } }');
    assert.match((refused.body as { errors: { message: string }[] }).errors[0]!.message, /"custom_fields" is not defined by type "loans_order_by"/);
  });
});
