import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { buildEngine } from '../../app/engineHolder.js';
import { configFromEnv, engineOptionsOf } from '../../app/config.js';
import type { GraphEngine } from '../../engine/index.js';
import { formatSql } from '../../dashboard/client/formatSql.js';
import { indentJson } from '../../dashboard/client/exactResult.js';
import type { TestDatabase } from '../support/testDatabase.js';
import { METADATA_PATH } from '../support/http.js';
import { openSeededTestDatabase, type SeededAccount } from '../support/seededService.js';

/**
 * The console's formatting (issue 17): the SQL panel's layout of a statement changes only
 * whitespace — the laid-out text, run on the database, gives the very same answer — and the
 * result pane's indentation keeps every literal of the response as sent.
 */
let database: TestDatabase;
let engine: GraphEngine;
let seeded: SeededAccount;

before(async () => {
  ({ database, seeded: [seeded] } = await openSeededTestDatabase([{ scale: 0.01 }]));
  engine = await buildEngine(METADATA_PATH, database.db, engineOptionsOf(configFromEnv({})));
});

after(async () => {
  await database?.close();
});

/** The text without whitespace outside string literals and quoted identifiers. */
function withoutLayout(sql: string): string {
  return (sql.match(/'(?:[^']|'')*'|"(?:[^"]|"")*"|\S/g) ?? []).join('');
}

const QUERIES = [
  '{ loans(limit: 3, where: {status: {_eq: servicing}, borrows: {person: {name: {_ilike: "%a%"}}}}, order_by: {amount: desc}) { id name amount borrows { person { name } } schedules(where: {is_next: {_eq: true}}) { due balance } payments_aggregate { aggregate { count sum { amount } } } } }',
  '{ people(limit: 2, order_by: {name: asc}) { name funding_sources { rate loan { name status } } } loans_aggregate(where: {status: {_neq: closed}}) { aggregate { count avg { rate } max { date_maturity } } } }',
  // Text that looks like SQL inside literals and identifiers must come through untouched.
  '{ loans(where: {name: {_nilike: "%) FROM (SELECT \' AND x%"}}) { id } }',
];

describe('Console: the SQL panel’s layout', () => {
  for (const query of QUERIES) {
    it(`keeps the statement: the laid-out text answers exactly as the compiled one (${query.slice(0, 40)}…)`, async () => {
      const { sql, params } = await engine.explain(database.db, { query }, seeded.account.id);
      const laidOut = formatSql(sql);
      assert.equal(withoutLayout(laidOut), withoutLayout(sql), 'only whitespace differs');
      assert.ok(laidOut.split('\n').length > 5, 'on several lines');
      assert.match(laidOut, /\(\n {2,}SELECT /, 'each subquery opens an indented block');
      assert.match(laidOut, /\n {2,}FROM "loans" AS "_t\d+"\n {2,}WHERE "_t\d+"\."account_id" = \$\d+/);
      const original = await database.db.query<{ response: string }>(sql, params);
      const formatted = await database.db.query<{ response: string }>(laidOut, params);
      assert.equal(formatted.rows[0]!.response, original.rows[0]!.response);
    });
  }

  it('lays out the statements of a mutation one after another', async () => {
    // `loan { name }` reads another table: the write and the response are two statements (engine/README.md, "Writes in one statement").
    const { sql } = await engine.explain(database.db, { query: 'mutation { insert_tasks_one(object: {name: "Call", status: "open"}) { id loan { name } } }' }, seeded.account.id);
    const laidOut = formatSql(sql);
    assert.equal(withoutLayout(laidOut), withoutLayout(sql));
    assert.match(laidOut, /^WITH "_w0" AS \(\n {2}INSERT INTO "tasks"/, 'the insert, indented in its CTE');
    assert.match(laidOut, /;\nSELECT concat\('\{"data":'/, 'the response statement on a line of its own');
  });
});

describe('Console: the result pane’s indentation', () => {
  it('is JSON.stringify’s layout for any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value);
        assert.equal(indentJson(text), JSON.stringify(JSON.parse(text), null, 2));
      }),
      { seed: 20261122, numRuns: 500 },
    );
  });

  it('keeps numbers and strings byte for byte, where parsing would change them', () => {
    const sent = '{"data":{"loans":[{"amount":100000.00,"rate":12.5000,"big":123456789012345678901.25,"tiny":1E-7,"name":"caf\\u00e9 \\"x\\""}]}}';
    const shown = indentJson(sent);
    assert.equal(
      shown,
      '{\n  "data": {\n    "loans": [\n      {\n        "amount": 100000.00,\n        "rate": 12.5000,\n        "big": 123456789012345678901.25,\n        "tiny": 1E-7,\n        "name": "caf\\u00e9 \\"x\\""\n      }\n    ]\n  }\n}',
    );
    assert.notEqual(shown, JSON.stringify(JSON.parse(sent), null, 2), 'what parsing would have shown differs');
  });

  it('leaves text that is not JSON as it is', () => {
    assert.equal(indentJson('Not authorized'), 'Not authorized');
    assert.equal(indentJson('{"cut short'), '{"cut short');
  });
});
