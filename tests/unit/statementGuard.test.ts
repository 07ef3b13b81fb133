import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'graphql';
import { foldSelections, fragmentsOf, rootFields } from '../../engine/document/foldSelections.js';
import { guardCheck, guardedStatement, oneStatementText, statementGuard } from '../../engine/sql/statementGuard.js';
import { sql } from '../../engine/sql/fragment.js';

describe('Statement guard: a fragment wrapped around a rendered statement', () => {
  const guard = statementGuard`EXISTS (SELECT 1 FROM api_keys WHERE account_id = ${'account-a'} AND id = ${'key-1'} AND active)`;

  it('numbers its parameters after the statement\'s own, binding each value', () => {
    assert.equal(
      guardedStatement('SELECT $1::text AS "response"', 1, guard),
      'SELECT CASE WHEN EXISTS (SELECT 1 FROM api_keys WHERE account_id = $2 AND id = $3 AND active) THEN (SELECT $1::text AS "response") END AS "response"',
    );
  });

  it('checks alone as one small statement from $1', () => {
    assert.deepEqual(guardCheck(guard), { text: 'SELECT (EXISTS (SELECT 1 FROM api_keys WHERE account_id = $1 AND id = $2 AND active)) AS "holds"', values: ['account-a', 'key-1'] });
  });

  it('has the same text for every key, so statements made with it are prepared once', () => {
    const other = statementGuard`EXISTS (SELECT 1 FROM api_keys WHERE account_id = ${'account-b'} AND id = ${'key-2'} AND active)`;
    assert.equal(guardCheck(other).text, guardCheck(guard).text);
  });

  it('goes into a one-statement mutation as an asserted condition, its parameters after the statement\'s', () => {
    const single = { head: 'WITH "_w" AS (UPDATE "tasks" AS "_t1" SET "name" = $1 WHERE "_t1"."account_id" = $2 RETURNING "_t1".*) SELECT CASE WHEN ', tail: 'true THEN concat(\'{"data":\', $3::text, \'}\') END AS "response"' };
    assert.deepEqual(oneStatementText(single, 3, guard), {
      text: `${single.head}loanql_assert(EXISTS (SELECT 1 FROM api_keys WHERE account_id = $4 AND id = $5 AND active), 'guard') AND ${single.tail}`,
      values: ['account-a', 'key-1'],
    });
  });

  it('refuses a parameter that is not a constant', () => {
    assert.throws(() => guardCheck({ condition: sql`${sql.param({ kind: 'account' })} IS NOT NULL` }), /constants only/);
  });
});

describe('Fragment walker: foldSelections', () => {
  const document = parse(`
    query { a ...F ...F b { ...G } }
    fragment F on Query { c d { e } }
    fragment G on B { f ...G }
  `);
  const fragments = fragmentsOf(document);
  const operation = document.definitions[0]!;
  if (operation.kind !== 'OperationDefinition') throw new Error('no operation');

  it('lists root fields through fragments, each fragment once', () => {
    assert.deepEqual(rootFields(operation, fragments).map((field) => field.name.value), ['a', 'c', 'd', 'b']);
  });

  it('counts every spread in full, a cycle as nothing', () => {
    const count = foldSelections(operation.selectionSet, fragments, { field: (field, nested) => 1 + (field.selectionSet ? nested(field.selectionSet) : 0), combine: (a, b) => a + b, empty: 0 });
    // a, (c, d, e) twice, b, f
    assert.equal(count, 1 + 2 * 3 + 1 + 1);
  });
});
