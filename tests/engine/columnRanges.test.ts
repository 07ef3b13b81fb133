import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseMetadata } from '../../metadata/index.js';
import { tokenHeader } from '../support/http.js';
import { testDatabaseKind } from '../support/testDatabase.js';
import { startLenderSchemaService, type LenderSchemaService } from '../support/lenderSchemaService.js';

/**
 * A value past what its column holds, on a lender's own table (engine/README.md, "Errors of a
 * write"): the answer names the field and the column's own range. Before session 41 a value past
 * a whole-number column's bounds, or a figure the write computed past a numeric's digits, was
 * answered on every table with loanql's ledger sentence ("a balance, credit or fee past
 * 999,999,999,999.99"), naming no field; and a fraction given for an integer column was rounded.
 */
const SCHEMA = `
  CREATE TABLE lender_limits (
    account_id uuid NOT NULL,
    code text NOT NULL,
    cap numeric(6, 2),
    doubled numeric(6, 2) GENERATED ALWAYS AS (cap * 2) STORED,
    small smallint,
    whole integer,
    PRIMARY KEY (account_id, code)
  );
`;

const METADATA = `
version: 1
tenant_column: account_id
collections:
  limits:
    table: lender_limits
    primary_key: code
    fields: { code: text, cap: numeric, doubled: numeric, small: integer, whole: numeric }
    insert: { columns: [code, cap, small, whole] }
    update: { columns: [cap, small, whole] }
  # The same table, its metadata saying what the computed figure's overflow means (\`overflow\`).
  capped:
    table: lender_limits
    primary_key: code
    fields: { code: text, cap: numeric, doubled: numeric }
    overflow: { fields: [cap], sentence: "twice the cap (doubled) would be past 9,999.99" }
    insert: { columns: [code, cap] }
`;

let s: LenderSchemaService;
before(async () => {
  s = await startLenderSchemaService(SCHEMA, METADATA);
});
after(async () => {
  await s?.close();
});

interface Answer {
  status: number;
  body: { data?: any; errors?: { message: string; extensions?: { code?: string; fields?: string[] } }[] };
}

async function graph(query: string, variables?: Record<string, unknown>): Promise<Answer> {
  const response = await fetch(`${s.server.url}/api/graph`, { method: 'POST', headers: { 'content-type': 'application/json', ...tokenHeader(s.key) }, body: JSON.stringify({ query, variables }) });
  return { status: response.status, body: (await response.json()) as Answer['body'] };
}

const stored = async (): Promise<unknown[]> => (await s.database.db.query(`SELECT code, small, whole FROM lender_limits WHERE account_id = $1 ORDER BY code`, [s.accountId])).rows;

describe(`A value past its column's range on a lender's own table (${testDatabaseKind})`, () => {
  it("refuses at load an overflow naming a field the collection does not have", () => {
    assert.throws(() => parseMetadata(METADATA.replace('overflow: { fields: [cap]', 'overflow: { fields: [cup]')), /collection capped, overflow: cup is not a field of the collection/);
  });

  it("an integer field on a smallint column, a numeric field on an integer one: refused naming the field and the column's bounds, nothing written", async () => {
    const cases: [string, string][] = [
      ['mutation { insert_limits_one(object: {code: "a", small: 40000}) { code } }', 'insert_limits_one: limits.small: a whole number from -32768 to 32767 (its column is smallint)'],
      ['mutation { insert_limits_one(object: {code: "a", small: -32769}) { code } }', 'insert_limits_one: limits.small: a whole number from -32768 to 32767 (its column is smallint)'],
      ['mutation { insert_limits_one(object: {code: "a", whole: "3000000000"}) { code } }', 'insert_limits_one: limits.whole: a whole number from -2147483648 to 2147483647 (its column is integer)'],
      // PostgreSQL would have stored 3.
      ['mutation { insert_limits_one(object: {code: "a", whole: "2.5"}) { code } }', 'insert_limits_one: limits.whole: a whole number from -2147483648 to 2147483647 (its column is integer)'],
    ];
    for (const [query, message] of cases) {
      const answer = await graph(query);
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.equal(answer.body.errors?.[0]?.extensions?.code, 'validation-failed', JSON.stringify(answer.body));
      assert.equal(answer.body.errors?.[0]?.message, message);
    }
    // A variable too, and an update's _set.
    const viaVariable = await graph('mutation($w: numeric!) { insert_limits_one(object: {code: "a", whole: $w}) { code } }', { w: '1e10' });
    assert.equal(viaVariable.body.errors?.[0]?.message, 'insert_limits_one: limits.whole: a whole number from -2147483648 to 2147483647 (its column is integer)');
    assert.deepEqual(await stored(), [], 'nothing written');
    assert.equal((await graph('mutation { insert_limits_one(object: {code: "b", small: 32767, whole: "2.000e3"}) { code small whole } }')).body.data?.insert_limits_one.whole, 2000);
    const set = await graph('mutation { update_limits_by_pk(pk_columns: {code: "b"}, _set: {small: 32768}) { code } }');
    assert.equal(set.body.errors?.[0]?.message, 'update_limits_by_pk: limits.small: a whole number from -32768 to 32767 (its column is smallint)');
    assert.deepEqual(await stored(), [{ code: 'b', small: 32767, whole: 2000 }]);
  });

  it('an _inc whose amount alone is past the bounds is the sum the database checks: -30000 + 40000 is stored', async () => {
    await graph('mutation { insert_limits_one(object: {code: "c", small: -30000}) { code } }');
    const answer = await graph('mutation { update_limits_by_pk(pk_columns: {code: "c"}, _inc: {small: 40000}) { small } }');
    assert.equal(answer.body.errors, undefined, JSON.stringify(answer.body));
    assert.equal(answer.body.data?.update_limits_by_pk.small, 10000);
  });

  it("a figure the write computes past its column (a generated column's): PostgreSQL's words with the column's precision and scale, not the ledger's sentence", async () => {
    const answer = await graph('mutation { insert_limits_one(object: {code: "d", cap: "6000.00"}) { code doubled } }');
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.errors?.[0]?.extensions?.code, 'validation-failed');
    assert.equal(
      answer.body.errors?.[0]?.message,
      'insert_limits_one: the write makes a value too large for its column to store (numeric field overflow: A field with precision 6, scale 2 must round to an absolute value less than 10^4); nothing was written',
    );
    assert.doesNotMatch(answer.body.errors?.[0]?.message ?? '', /balance|999,999/);
    // A collection whose metadata declares what it means says that instead, naming its fields.
    const declared = await graph('mutation { insert_capped_one(object: {code: "d", cap: "6000.00"}) { code doubled } }');
    assert.deepEqual(declared.body.errors, [{ message: 'insert_capped_one: cap: twice the cap (doubled) would be past 9,999.99; nothing was written', path: ['insert_capped_one'], extensions: { code: 'validation-failed', fields: ['cap'] } }]);
    assert.equal((await s.database.db.query(`SELECT 1 FROM lender_limits WHERE account_id = $1 AND code = 'd'`, [s.accountId])).rows.length, 0);
  });
});
