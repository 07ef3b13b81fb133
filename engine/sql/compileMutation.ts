import { tableKey, type Collection, type Field, type Metadata, type RowFilter } from '../../metadata/index.js';
import { assertNever, type Selection } from '../plan/ir.js';
import type { InsertGroup, InsertValue, MutationField, MutationOutput, MutationPlan, UpdateWrite } from '../plan/mutationIr.js';
import type { Param } from '../plan/params.js';
import { render, sql, type Fragment, type RenderedSql } from './fragment.js';
import { selectCompiler, type SelectCompiler } from './selectCompiler.js';
import { castOf } from './sqlTables.js';
import { oneStatement, readsOnlyWrittenRows, type OneStatement, type WriteCte } from './oneStatementWrite.js';

export type { OneStatement };

/** One write statement of a mutation. It returns one row: `ids` (JSON array text) and `count`, or `json` and `count`. */
export interface MutationStep {
  readonly statement: RenderedSql;
  /** The response field the step belongs to (its errors carry this path). */
  readonly alias: string;
  readonly collection: Collection;
  readonly kind: 'insert' | 'update' | 'delete';
  /** An update's fields given in `_inc`: the sums the database computes (an overflow is theirs). */
  readonly incremented?: readonly Field[];
}

/** A value to check before anything runs: digits of a numeric, NUL characters of a text. */
export interface ValueCheck {
  readonly param: Param;
  readonly alias: string;
  readonly collection: Collection;
  readonly field: Field;
  /** An `_inc`'s amount: added to the stored value, so only its digits are checked, not the column's bounds. */
  readonly increment?: boolean;
}

/**
 * A compiled mutation: its write statements in order, then the one SELECT that builds the
 * response `{"data": …}` over what they returned. All run in one transaction
 * (`GraphEngine.runMutation`); later statements see earlier ones' writes and trigger effects.
 */
export interface CompiledMutation {
  readonly steps: readonly MutationStep[];
  readonly response: RenderedSql;
  readonly checks: readonly ValueCheck[];
  /**
   * The same mutation as one statement, run in autocommit, when it can be
   * (`oneStatementWrite`): its one write step as a data-modifying CTE and the response built
   * from the rows it returns. Null otherwise.
   */
  readonly single: OneStatement | null;
  /**
   * With several write statements and a database that has `loanql_several_writes` (migration
   * 0071): `SELECT loanql_several_writes(<account>, <the tables written>)`, run before the first
   * write, so the database can take the locks that keep the statements' row locks, taken in
   * document order, from crossing another transaction's. Null otherwise.
   */
  readonly announce: RenderedSql | null;
}

const step = (index: number, output: 'ids' | 'count' | 'json'): Fragment => sql.param({ kind: 'stepResult', step: index, output });

/** The rows an update or delete may touch: the tenant predicate and the role's `filter`. */
function permitted(compiler: SelectCompiler, filter: RowFilter | null, table: Fragment): Fragment {
  return filter ? sql`${compiler.tenantPredicate(table)} AND ${compiler.roleFilter(filter, table)}` : compiler.tenantPredicate(table);
}

/**
 * A role's `check`, evaluated on each written row as the write returns it (after the change,
 * in the same statement and transaction), as an `ok` column; a failing row makes the engine
 * answer `permission-error` and roll the request back.
 */
function checkColumn(compiler: SelectCompiler, check: RowFilter | null, table: Fragment): Fragment {
  return check ? sql`, coalesce(${compiler.roleFilter(check, table)}, false) AS ${sql.ident('ok')}` : sql``;
}

const failedChecks = (written: Fragment): Fragment => sql`(SELECT count(*) FROM ${written} WHERE NOT ${written}.${sql.ident('ok')})`;
const violations = (failing: readonly Fragment[]): Fragment => (failing.length ? sql`, (${sql.join(failing, sql` + `)})::int AS ${sql.ident('violations')}` : sql``);

/**
 * Compiles a mutation plan. Each insert field is one statement (its nested inserts are
 * data-modifying CTEs of it: foreign keys are checked at the statement's end), each update one
 * statement per update, each delete one statement that also builds its `returning` (the rows
 * are gone afterwards). Every written row gets the tenant column from the request's account, and
 * every row an update or delete touches carries the tenant predicate. Pure and deterministic.
 */
export function compileMutation(plan: MutationPlan, metadata: Metadata): CompiledMutation {
  const tenant = sql.ident(metadata.tenantColumn);
  const ACCOUNT = sql.param({ kind: 'account' });
  const steps: MutationStep[] = [];
  const checks: ValueCheck[] = [];
  const response = selectCompiler(metadata);
  const pairs: (readonly [string, Fragment])[] = [];

  /** The key columns of the rows `table` (a write's RETURNING, a CTE of written rows), comma-separated. */
  const keyColumns = (collection: Collection, table: Fragment): Fragment => sql.join(collection.primaryKey.map((field) => sql`${table}.${sql.ident(field.source.column)}`));
  /**
   * The keys of written rows as a JSON array of objects named by column (`[{"id": 7}]`), any key
   * type and any number of key columns: the response reads them back as the table's own row type
   * (`json_populate_recordset`), so every key column has its catalogue type.
   */
  const keysJson = (collection: Collection, written: Fragment, ordered: boolean): Fragment => {
    const keys = sql.ident('_k');
    const order = ordered ? sql` ORDER BY ${keyColumns(collection, keys)}` : sql``;
    return sql`(SELECT coalesce(json_agg(${keys}${order}), '[]'::json) FROM (SELECT ${keyColumns(collection, written)} FROM ${written}) AS ${keys})::text`;
  };

  function insertValue(value: InsertValue, compiler: ReturnType<typeof selectCompiler>, alias: string, collection: Collection): Fragment {
    if (value.kind === 'newId') return sql`${sql.param({ kind: 'newId', slot: value.slot })}::uuid`;
    checks.push({ param: value.param, alias, collection, field: value.field });
    return compiler.param(value.param, value.field.type);
  }

  function insertStatement(alias: string, groups: readonly InsertGroup[], onConflict: Extract<MutationField, { kind: 'insert' }>['insert']['onConflict']): { statement: RenderedSql; single: WriteCte | null } {
    const compiler = selectCompiler(metadata);
    // `objects: []` inserts nothing (Hasura answers affected_rows 0).
    if (!groups.length) return { statement: render(sql`SELECT '[]'::text AS ${sql.ident('ids')}, 0 AS ${sql.ident('count')}`), single: null };
    let single: WriteCte | null = null;
    const ctes = groups.map((group, index) => {
      const columns: string[] = [];
      for (const row of group.rows) for (const column of row.values.keys()) if (!columns.includes(column)) columns.push(column);
      const rows = group.rows.map(
        (row) =>
          sql`(${sql.join([ACCOUNT, ...columns.map((column) => {
            const value = row.values.get(column);
            return value ? insertValue(value, compiler, alias, group.collection) : sql`DEFAULT`;
          })])})`,
      );
      const target = compiler.nextAlias('t');
      let conflict = sql``;
      if (index === 0 && onConflict) {
        const constraint = sql` ON CONFLICT ON CONSTRAINT ${sql.ident(onConflict.constraint)}`;
        if (!onConflict.updateFields.length) conflict = sql`${constraint} DO NOTHING`;
        else {
          const assignments = onConflict.updateFields.map((field) => sql`${sql.ident(field.source.column)} = EXCLUDED.${sql.ident(field.source.column)}`);
          const conditions = [compiler.tenantPredicate(target)];
          const updateFilter = group.collection.update?.filter;
          if (updateFilter) conditions.push(compiler.roleFilter(updateFilter, target));
          if (onConflict.where) conditions.push(compiler.where(onConflict.where, target));
          conflict = sql`${constraint} DO UPDATE SET ${sql.join(assignments)} WHERE ${sql.join(conditions, sql` AND `)}`;
        }
      }
      const insert = sql`INSERT INTO ${sql.qualified(group.collection.schema, group.collection.table)} AS ${target} (${sql.join([tenant, ...columns.map((c) => sql.ident(c))])}) VALUES ${sql.join(rows)}${conflict}`;
      const check = checkColumn(compiler, group.collection.insert?.check ?? null, target);
      if (groups.length === 1) single = { cte: sql`${sql.ident('_w0')} AS (${insert} RETURNING ${target}.*${check})`, written: sql.ident('_w0'), checked: !!group.collection.insert?.check, order: 'returned' };
      return sql`${sql.ident(`_w${index}`)} AS (${insert} RETURNING ${keyColumns(group.collection, target)}${check})`;
    });
    const counts = groups.map((_, index) => sql`(SELECT count(*) FROM ${sql.ident(`_w${index}`)})`);
    const failing = groups.flatMap((group, index) => (group.collection.insert?.check ? [failedChecks(sql.ident(`_w${index}`))] : []));
    const statement = render(
      sql`WITH ${sql.join(ctes)} SELECT ${keysJson(groups[0]!.collection, sql.ident('_w0'), false)} AS ${sql.ident('ids')}, (${sql.join(counts, sql` + `)})::int AS ${sql.ident('count')}${violations(failing)}`,
    );
    return { statement, single };
  }

  /**
   * An update or delete by `where` may write many rows, which its statement locks as its scan
   * finds them: in an order no other transaction knows. With `loanql_several_writes` (migration
   * 0071) it tells the database its table first, as a mutation of several writes does, so the
   * database can make it take its turn: an uncorrelated sub-select in its WHERE, which PostgreSQL
   * evaluates once, before the scan returns (and the statement locks) any row. Nothing otherwise,
   * and nothing for a write by key (one row).
   */
  const announcedByWhere = (collection: Collection, byWhere: boolean): Fragment =>
    byWhere && metadata.announcesSeveralWrites
      ? sql` AND (SELECT loanql_several_writes(${ACCOUNT}, ARRAY[${sql.param({ kind: 'const', value: tableKey(collection) })}::text]::text[])) IS NOT NULL`
      : sql``;

  function updateStatement(alias: string, collection: Collection, update: UpdateWrite, byWhere: boolean): { statement: RenderedSql; single: WriteCte | null } {
    // Operators naming no field (`_set: {}`): no UPDATE at all (no trigger fires), no row touched.
    if (!update.set.size) return { statement: render(sql`SELECT '[]'::text AS ${sql.ident('ids')}, 0 AS ${sql.ident('count')}`), single: null };
    const compiler = selectCompiler(metadata);
    const table = compiler.nextAlias('t');
    const assignments = [...update.set].map(([field, changes]) => {
      let value: Fragment = sql`${table}.${sql.ident(field.source.column)}`;
      for (const change of changes) {
        if (change.kind === 'set' || change.kind === 'inc' || change.kind === 'append' || change.kind === 'prepend') checks.push({ param: change.param, alias, collection, field, ...(change.kind === 'inc' ? { increment: true } : {}) });
        switch (change.kind) {
          case 'set':
            value = compiler.param(change.param, field.type);
            break;
          case 'inc':
            value = sql`(${value} + ${compiler.param(change.param, field.type)})`;
            break;
          case 'append':
            value = sql`(${value} || ${compiler.param(change.param, 'jsonb')})`;
            break;
          case 'prepend':
            value = sql`(${compiler.param(change.param, 'jsonb')} || ${value})`;
            break;
          case 'deleteKey':
            value = sql`(${value} - ${compiler.param(change.param, 'text')})`;
            break;
          case 'deleteElem':
            value = sql`(${value} - ${sql.param(change.param)}::int)`;
            break;
          case 'deleteAtPath':
            value = sql`(${value} #- ${sql.param(change.param)}::text[])`;
            break;
          default:
            return assertNever(change.kind);
        }
      }
      return sql`${sql.ident(field.source.column)} = ${value}`;
    });
    const written = sql.ident('_w');
    const check = collection.update?.check ?? null;
    const write = sql`UPDATE ${sql.qualified(collection.schema, collection.table)} AS ${table} SET ${sql.join(assignments)} WHERE ${permitted(compiler, collection.update?.filter ?? null, table)} AND ${compiler.where(update.where, table)}${announcedByWhere(collection, byWhere)}`;
    const okColumn = checkColumn(compiler, check, table);
    const statement = render(
      sql`WITH ${written} AS (${write} RETURNING ${keyColumns(collection, table)}${okColumn}) SELECT ${keysJson(collection, written, true)} AS ${sql.ident('ids')}, count(*)::int AS ${sql.ident(
        'count',
      )}${check ? sql`, count(*) FILTER (WHERE NOT ${written}.${sql.ident('ok')})::int AS ${sql.ident('violations')}` : sql``} FROM ${written}`,
    );
    return { statement, single: { cte: sql`${written} AS (${write} RETURNING ${table}.*${okColumn})`, written, checked: !!check, order: 'key' } };
  }

  function deleteStatement(field: Extract<MutationField, { kind: 'delete' }>): { statement: RenderedSql; cte: Fragment; output: Fragment } {
    const compiler = selectCompiler(metadata);
    const table = compiler.nextAlias('t');
    const written = sql.ident('_w');
    const row = compiler.nextAlias('r');
    // The deleted rows `returning` shows: those the role may select.
    const visible = field.collection.selectFilter ? sql` WHERE ${compiler.roleFilter(field.collection.selectFilter, row)}` : sql``;
    const rowsOf = (selection: Selection, one: boolean): Fragment =>
      one
        ? sql`coalesce((SELECT ${compiler.rowObject(field.collection, selection, row)} FROM ${written} AS ${row}${visible} LIMIT 1), 'null')`
        : sql`(SELECT ${compiler.jsonArray(compiler.rowObject(field.collection, selection, row), keyColumns(field.collection, row))} FROM ${written} AS ${row}${visible})`;
    const count = sql`(SELECT count(*) FROM ${written})`;
    const output = outputOf(field.output, compiler, count, (selection) => rowsOf(selection, false), (selection) => rowsOf(selection, true));
    const cte = sql`${written} AS (DELETE FROM ${sql.qualified(field.collection.schema, field.collection.table)} AS ${table} WHERE ${permitted(compiler, field.collection.delete?.filter ?? null, table)} AND ${compiler.where(
      field.where,
      table,
    )}${announcedByWhere(field.collection, field.output.kind === 'response')} RETURNING ${table}.*)`;
    return { statement: render(sql`WITH ${cte} SELECT ${output}::text AS ${sql.ident('json')}, ${count}::int AS ${sql.ident('count')}`), cte, output };
  }

  /** The JSON of a field's response: `{affected_rows, returning}` or the one row. */
  function outputOf(
    output: MutationOutput,
    compiler: ReturnType<typeof selectCompiler>,
    count: Fragment,
    rows: (selection: Selection) => Fragment,
    one: (selection: Selection) => Fragment,
  ): Fragment {
    if (output.kind === 'one') return one(output.selection);
    return compiler.jsonObject(
      output.items.map((item): readonly [string, Fragment] => {
        switch (item.kind) {
          case 'affectedRows':
            return [item.alias, sql`to_json(${count})`];
          case 'returning':
            return [item.alias, rows(item.selection)];
          case 'typename':
            return [item.alias, compiler.jsonString(item.value)];
          default:
            return assertNever(item);
        }
      }),
    );
  }

  /**
   * The rows whose keys an earlier step returned, as they are now: the keys read back as the
   * table's row type (each key column of its catalogue type), joined on every key column.
   */
  function writtenRows(collection: Collection, table: Fragment, keys: Fragment, stepIndex: number): Fragment {
    const matches = collection.primaryKey.map((field) => sql`${table}.${sql.ident(field.source.column)} = ${keys}.${sql.ident(field.source.column)}`);
    return sql`json_populate_recordset(NULL::${sql.qualified(collection.schema, collection.table)}, ${step(stepIndex, 'ids')}::json) WITH ORDINALITY AS ${keys} JOIN ${sql.qualified(collection.schema, collection.table)} AS ${table} ON ${response.rowPredicate(collection, table)} AND ${sql.join(matches, sql` AND `)}`;
  }
  /** The rows of keys an earlier step returned, in its order. */
  function rowsByIds(collection: Collection, selection: Selection, stepIndex: number): Fragment {
    const table = response.nextAlias('t');
    const keys = response.nextAlias('i');
    return sql`(SELECT ${response.jsonArray(response.rowObject(collection, selection, table), sql`${keys}.${sql.ident('ordinality')}`)} FROM ${writtenRows(collection, table, keys, stepIndex)})`;
  }
  /**
   * The one row (`_one`, `_by_pk`) an earlier step returned, or null: each key column equal to
   * the first key's value, read from the JSON text and cast as a `_by_pk` argument is
   * (`($n::json -> 0 ->> 'id')::uuid`) — an index lookup without populating a row from JSON,
   * which cost the response statement 10 % (bench/mutationStatements.ts).
   */
  function rowById(collection: Collection, selection: Selection, stepIndex: number): Fragment {
    const table = response.nextAlias('t');
    const matches = collection.primaryKey.map(
      (field) => sql`${table}.${sql.ident(field.source.column)} = (${step(stepIndex, 'ids')}::json -> 0 ->> ${sql.value(field.source.column)}::text)::${castOf(field.type)}`,
    );
    return sql`coalesce((SELECT ${response.rowObject(collection, selection, table)} FROM ${sql.qualified(collection.schema, collection.table)} AS ${table} WHERE ${response.rowPredicate(collection, table)} AND ${sql.join(
      matches,
      sql` AND `,
    )}), 'null')`;
  }
  const writtenOutput = (collection: Collection, output: MutationOutput, stepIndex: number): Fragment =>
    outputOf(
      output,
      response,
      sql`${step(stepIndex, 'count')}::int`,
      (selection) => rowsByIds(collection, selection, stepIndex),
      (selection) => rowById(collection, selection, stepIndex),
    );

  /**
   * The one-statement form's output of a field whose step is the CTE `write`: the rows as the
   * write returned them (final: `oneStatementWrite` admits only tables whose rows no later trigger
   * changes), under the same row predicate (tenant and the role's select filter) the two-statement
   * form reads them with, in the same order.
   */
  const one = selectCompiler(metadata);
  const returnedOutput = (collection: Collection, output: MutationOutput, write: WriteCte): Fragment => {
    const row = one.nextAlias('r');
    const count = sql`(SELECT count(*) FROM ${write.written})`;
    const returned = sql.ident('loanql_returned');
    const rows = (selection: Selection): Fragment =>
      write.order === 'key'
        ? sql`(SELECT ${one.jsonArray(one.rowObject(collection, selection, row), keyColumns(collection, row))} FROM ${write.written} AS ${row} WHERE ${one.rowPredicate(collection, row)})`
        : sql`(SELECT ${one.jsonArray(one.rowObject(collection, selection, row), sql`${row}.${returned}`)} FROM (SELECT *, row_number() OVER () AS ${returned} FROM ${write.written}) AS ${row} WHERE ${one.rowPredicate(collection, row)})`;
    const first = (selection: Selection): Fragment => sql`coalesce((SELECT ${one.rowObject(collection, selection, row)} FROM ${write.written} AS ${row} WHERE ${one.rowPredicate(collection, row)} LIMIT 1), 'null')`;
    return outputOf(output, one, count, rows, first);
  };
  /** `update_…_many`'s list of each update's output, in the order of `updates`. */
  const outputList = (compiler: SelectCompiler, outputs: readonly Fragment[]): Fragment => {
    if (!outputs.length) return sql`'[]'::text`;
    const list = compiler.nextAlias('u');
    const entries = outputs.map((output, index) => sql`(${sql.value(index)}::int, ${output})`);
    return sql`(SELECT ${compiler.jsonArray(sql`${list}.${sql.ident('j')}`, sql`${list}.${sql.ident('i')}`)} FROM (VALUES ${sql.join(entries)}) AS ${list} (${sql.ident('i')}, ${sql.ident('j')}))`;
  };

  // The one-statement form is built beside the two-statement one while it stays possible.
  const onePairs: (readonly [string, Fragment])[] = [];
  let oneWrite: { readonly cte: Fragment; readonly written: Fragment; readonly checked: boolean } | null = null;
  let onePossible = plan.fields.filter((field) => field.kind !== 'typename').length === 1;
  for (const field of plan.fields) {
    switch (field.kind) {
      case 'typename':
        pairs.push([field.alias, response.jsonString(field.value)]);
        onePairs.push([field.alias, one.jsonString(field.value)]);
        break;
      case 'insert': {
        const { statement, single } = insertStatement(field.alias, field.insert.groups, field.insert.onConflict);
        steps.push({ statement, alias: field.alias, collection: field.collection, kind: 'insert' });
        pairs.push([field.alias, writtenOutput(field.collection, field.output, steps.length - 1)]);
        if (single && readsOnlyWrittenRows(field.collection, field.output, metadata)) {
          oneWrite = single;
          onePairs.push([field.alias, returnedOutput(field.collection, field.output, single)]);
        } else onePossible = false;
        break;
      }
      case 'update': {
        const outputs = field.updates.map((update) => {
          const { statement, single } = updateStatement(field.alias, field.collection, update, field.output.kind === 'response');
          const incremented = [...update.set].filter(([, values]) => values.some((value) => value.kind === 'inc')).map(([written]) => written);
          steps.push({ statement, alias: field.alias, collection: field.collection, kind: 'update', incremented });
          if (field.updates.length === 1 && single && readsOnlyWrittenRows(field.collection, field.output, metadata)) {
            oneWrite = single;
            const output = returnedOutput(field.collection, field.output, single);
            onePairs.push([field.alias, field.many ? outputList(one, [output]) : output]);
          } else onePossible = false;
          return writtenOutput(field.collection, field.output, steps.length - 1);
        });
        if (!field.many) pairs.push([field.alias, outputs[0]!]);
        else pairs.push([field.alias, outputList(response, outputs)]);
        if (!outputs.length) onePossible = false;
        break;
      }
      case 'delete': {
        // A delete builds its `returning` in its own statement already (the rows are gone after it).
        const { statement, cte, output } = deleteStatement(field);
        steps.push({ statement, alias: field.alias, collection: field.collection, kind: 'delete' });
        pairs.push([field.alias, sql`${step(steps.length - 1, 'json')}::text`]);
        // Its table must be final at RETURNING too: not for its response, but as the one rule (the
        // fact also says the database has loanql_assert).
        if (metadata.tablesFinalAtReturning.has(tableKey(field.collection))) {
          oneWrite = { cte, written: sql.ident('_w'), checked: false };
          onePairs.push([field.alias, sql`${output}::text`]);
        } else onePossible = false;
        break;
      }
      default:
        assertNever(field);
    }
  }
  const single = onePossible && oneWrite ? oneStatement(oneWrite, one.jsonObject(onePairs)) : null;
  const tables = [...new Set(steps.map((written) => tableKey(written.collection)))].sort();
  const announce =
    steps.length > 1 && metadata.announcesSeveralWrites
      ? render(sql`SELECT loanql_several_writes(${ACCOUNT}, ARRAY[${sql.join(tables.map((table) => sql`${sql.param({ kind: 'const', value: table })}::text`))}]::text[]) AS ${sql.ident('announced')}`)
      : null;
  return { steps, response: render(sql`SELECT concat('{"data":', ${response.jsonObject(pairs)}, '}') AS ${sql.ident('response')}`), checks, single, announce };
}
