import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from '../../engine/sql/fragment.js';
import { columnsRead } from '../../engine/sql/renderSelection.js';

/**
 * A paged list's subquery returns the columns its rows are read by, not `table.*` (q1: 3.7 %
 * fewer instructions a statement, q2 8.7 %; bench/README.md, "q1's statement"). `columnsRead`
 * finds them in the fragments that read the rows, and gives up — `table.*` as before — whenever
 * the alias is used any other way.
 */
describe('the columns a paged list reads of its rows (columnsRead)', () => {
  const table = sql.ident('_t7');
  const column = (name: string) => sql`${table}.${sql.ident(name)}`;

  it('lists each column once, in the order first read, across every fragment', () => {
    const object = sql`concat('{"date":', to_json(${column('date')}), ',"amount":', to_json(${column('amount')}), '}')`;
    const nested = sql`(SELECT 1 FROM "people" AS "_t9" WHERE "_t9"."id" = ${column('person_id')} AND "_t9"."account_id" = ${column('account_id')})`;
    const key = sql`${column('date')} AS "k0"`;
    assert.deepEqual(columnsRead(table, [object, nested, key, sql`${column('id')} AS "k1"`]), ['date', 'amount', 'person_id', 'account_id', 'id']);
  });

  it('ignores other aliases, even one whose name starts the same', () => {
    assert.deepEqual(columnsRead(table, [sql`${sql.ident('_t70')}.${sql.ident('x')}, ${column('y')}`]), ['y']);
  });

  it('gives up when the row is used whole, by star, or not at all', () => {
    assert.equal(columnsRead(table, [sql`row_to_json(${table})`, column('id')]), null);
    assert.equal(columnsRead(table, [sql`${table}.*`]), null);
    assert.equal(columnsRead(table, [sql`${table}`]), null);
    assert.equal(columnsRead(table, [sql`count(*)`]), null);
    assert.equal(columnsRead(sql`${table}.${sql.ident('x')}`, [column('id')]), null);
  });
});
