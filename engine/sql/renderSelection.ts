import type { Collection, Relationship, ScalarType } from '../../metadata/index.js';
import { assertNever, type AggregateSelection, type FunctionRows, type ListQuery, type Selection } from '../plan/ir.js';
import type { Param } from '../plan/params.js';
import type { CompileContext } from './compileContext.js';
import { sql, type Fragment } from './fragment.js';
import { jsonList, jsonObject, jsonOf, jsonString } from './jsonText.js';
import type { OrderByRenderer, OrderKey } from './renderOrderBy.js';
import type { WhereRenderer } from './renderWhere.js';
import { storedFormRenderer } from './renderStoredForm.js';
import { argumentCast } from './sqlTables.js';

/** The row of the parent a nested list or aggregate belongs to, and the relationship to it. */
export interface Correlation {
  readonly relationship: Relationship;
  readonly parent: Fragment;
  readonly parentCollection: Collection;
}

/** How a nested aggregate is rendered (`renderAggregates.ts`; passed in, the two recurse into each other). */
export type RenderAggregate = (collection: Collection, query: ListQuery, selection: AggregateSelection, correlation: Correlation | null) => Fragment;

/**
 * A limit or offset: an integer written in the document is SQL text, so that the planner sees
 * it in the generic plan of a prepared statement (a `LIMIT $n` is estimated as 10 % of the rows,
 * which made PostgreSQL re-plan such statements on every execution); a variable stays a
 * parameter (`checkCount` bounds both). MAX_ROWS, a server setting, is a literal too.
 */
export function rowCount(value: Param): Fragment {
  return value.kind === 'const' && typeof value.value === 'number' && Number.isSafeInteger(value.value) ? sql.integer(value.value) : sql`${sql.param(value)}::bigint`;
}

export type SelectionRenderer = ReturnType<typeof selectionRenderer>;

/** Row objects, lists and the FROM … WHERE … of a list's rows. */
export function selectionRenderer(context: CompileContext, { where, rowPredicate, pathPredicate }: WhereRenderer, { orderKeys }: OrderByRenderer, aggregate: RenderAggregate) {
  const { nextAlias, fieldOutput, fieldValue, joinPredicate, computedCall } = context;
  const { storedValue } = storedFormRenderer(context);

  function rowObject(collection: Collection, selection: Selection, table: Fragment): Fragment {
    const pairs = selection.map((item): readonly [string, Fragment] => {
      switch (item.kind) {
        case 'column':
          if (item.path) return [item.alias, jsonOf(sql`(${fieldValue(table, item.field)} #> ${sql.param(item.path)}::text[])`)];
          return [item.alias, fieldOutput(collection, table, item.field)];
        case 'computed': {
          // Without arguments, a stored form reads the row's columns (the value the function gives).
          if (!item.args.size && item.field.storedForm) return [item.alias, jsonOf(storedValue(item.field, table))];
          // fn(tenant, key, name => $n::type, …): omitted arguments take the function's defaults.
          return [item.alias, jsonOf(computedCall(collection, item.field, table, namedArguments(item.args, item.field.args)))];
        }
        case 'typename':
          return [item.alias, jsonString(item.value)];
        case 'object': {
          const child = nextAlias('t');
          return [
            item.alias,
            sql`coalesce((SELECT ${rowObject(item.target, item.selection, child)} FROM ${sql.qualified(item.target.schema, item.target.table)} AS ${child} WHERE ${pathPredicate(collection, item.relationship, item.target, child)} AND ${joinPredicate(
              item.relationship,
              table,
              child,
            )} LIMIT 1), 'null')`,
          ];
        }
        case 'array':
          return [item.alias, list(item.target, item.query, item.selection, { relationship: item.relationship, parent: table, parentCollection: collection })];
        case 'computedRows': {
          // fn(tenant, key…, name => $n::type): its rows stand for the returned collection's table,
          // under that collection's row predicate (tenant and role filter), as a function root's.
          return [item.alias, list(item.target, item.query, item.selection, null, computedCall(collection, item.field, table, namedArguments(item.args, item.field.args)))];
        }
        case 'arrayAggregate':
          return [item.alias, aggregate(item.target, item.query, item.aggregate, { relationship: item.relationship, parent: table, parentCollection: collection })];
        default:
          return assertNever(item);
      }
    });
    return jsonObject(pairs);
  }

  /**
   * FROM … WHERE … of a list. When paging, the rows are picked (ORDER BY … LIMIT … OFFSET …) in
   * a subquery under the same alias, so the JSON of each row (and its nested subqueries) is
   * built only for the rows returned: PostgreSQL evaluates a query's output for every row its
   * Limit node reads, the rows an OFFSET skips included. `distinct_on` is `SELECT DISTINCT ON
   * (…)` in the same subquery, ordered by the keys (the planner makes them start with the
   * distinct fields, as PostgreSQL requires), so each group keeps its first row by the
   * request's order and the primary-key tie-break, and paging applies after it (as in Hasura).
   */
  function source(collection: Collection, query: ListQuery, table: Fragment, correlation: Correlation | null, keys: readonly OrderKey[], reads: readonly Fragment[], rows: Fragment | null = null): Fragment {
    const conditions = [correlation ? pathPredicate(correlation.parentCollection, correlation.relationship, collection, table) : rowPredicate(collection, table)];
    if (correlation) conditions.push(joinPredicate(correlation.relationship, correlation.parent, table));
    if (query.where) conditions.push(where(query.where, table));
    const filtered = sql`FROM ${rows ?? (query.rowsFrom ? functionCall(query.rowsFrom) : sql.qualified(collection.schema, collection.table))} AS ${table} WHERE ${sql.join(conditions, sql` AND `)}`;
    const distinct = query.distinctOn.length ? sql`DISTINCT ON (${sql.join(query.distinctOn.map((field) => fieldValue(table, field)))}) ` : sql``;
    if (!query.limit && !query.offset && collection.selectLimit === null && !query.distinctOn.length) return filtered;
    // A role's limit caps every list of the collection, whatever the request asks.
    const roleLimit = collection.selectLimit === null ? null : sql.integer(collection.selectLimit);
    const paging: Fragment[] = [];
    if (query.withTies && query.limit) {
      // A stream's batch: ordered by the request's keys alone (not the primary-key tie-break), so
      // the rows that tie with the last one on the cursor come too (`WITH TIES`).
      const tieKeys = keys.slice(0, query.orderBy.length);
      paging.push(sql` ORDER BY ${sql.join(tieKeys.map((k) => sql`${k.value} ${k.direction}`))}`);
      paging.push(sql` FETCH FIRST (${roleLimit ? sql`least(${rowCount(query.limit)}, ${roleLimit})` : rowCount(query.limit)}) ROWS WITH TIES`);
    } else {
      // No keys: a collection without a primary key (a view) listed without `order_by`.
      if (keys.length) paging.push(sql` ORDER BY ${sql.join(keys.map((k) => sql`${k.value} ${k.direction}`))}`);
      if (query.limit) paging.push(roleLimit ? sql` LIMIT least(${rowCount(query.limit)}, ${roleLimit})` : sql` LIMIT ${rowCount(query.limit)}`);
      else if (roleLimit) paging.push(sql` LIMIT ${roleLimit}`);
    }
    if (query.offset) paging.push(sql` OFFSET ${rowCount(query.offset)}`);
    // The subquery returns the columns the list reads of its rows (`reads`), not `table.*`: every
    // column of `*` is taken out of each row the Limit passes (q1's two paged lists: ~15,000
    // instructions of its 672,000; bench/README.md, "q1's statement").
    const columns = query.distinctOn.length ? null : columnsRead(table, reads);
    const output = columns ? sql.join(columns.map((column) => sql`${table}.${sql.ident(column)}`)) : sql`${table}.*`;
    return sql`FROM (SELECT ${distinct}${output} ${filtered}${sql.join(paging, sql``)}) AS ${table}`;
  }

  /** A computed field's arguments by name, `name => $n::type`, each cast to the type the metadata gives it. */
  function namedArguments(values: ReadonlyMap<string, Param>, types: ReadonlyMap<string, ScalarType>): Fragment[] {
    return [...values].map(([name, value]) => sql`${sql.ident(name)} => ${sql.param(value)}::${argumentCast(types.get(name)!)}`);
  }

  /** A tracked function's call, `fn(name => $n::type, …)`: the rows it returns stand for the collection's table. */
  function functionCall({ fn, args }: FunctionRows): Fragment {
    const named = [...args].map(([name, value]) => sql`${sql.ident(name)} => ${sql.param(value)}::${argumentCast(fn.args.get(name)!.type)}`);
    if (fn.tenantArgument !== null) named.unshift(sql`${sql.ident(fn.tenantArgument)} => ${sql.param({ kind: 'account' })}::uuid`);
    return sql`${sql.qualified(fn.schema, fn.function)}(${sql.join(named)})`;
  }

  /** `rows`: where the list's rows come from instead of the collection's table (a table computed field's call). */
  function list(collection: Collection, query: ListQuery, selection: Selection, correlation: Correlation | null, from: Fragment | null = null): Fragment {
    const table = nextAlias('t');
    const rows = nextAlias('r');
    const keys = orderKeys(collection, query, table);
    const keyColumns = keys.map((k, i) => sql`${k.value} AS ${sql.ident(`k${i}`)}`);
    // No keys (a collection without a primary key, listed without `order_by`): no order, as Hasura.
    const order = atMostOneRow(collection, query) || !keys.length ? null : sql.join(keys.map((k, i) => sql`${rows}.${sql.ident(`k${i}`)} ${k.direction}`));
    const object = rowObject(collection, selection, table);
    const rowSource = source(collection, query, table, correlation, keys, [object, ...keyColumns], from);
    const outputs = sql.join([sql`${object} AS ${sql.ident('j')}`, ...keyColumns]);
    return jsonList(sql`${rows}.${sql.ident('j')}`, sql`(SELECT ${outputs} ${rowSource}) AS ${rows}`, order);
  }

  return { rowObject, source, list };
}

/** Whether a list has at most one row: a limit of 1 (or 0) written in the document, or a role's. */
function atMostOneRow(collection: Collection, query: ListQuery): boolean {
  const limit = query.limit;
  const written = limit?.kind === 'const' && typeof limit.value === 'number' && limit.value <= 1;
  return written || (collection.selectLimit !== null && collection.selectLimit <= 1);
}

/**
 * The columns of `table` (an alias) that `reads` use, each once, in the order first used — or
 * null when a fragment uses the alias other than as `table.column` (the row whole, `table.*`) or
 * uses none of its columns: the subquery then returns `table.*` as before.
 */
export function columnsRead(table: Fragment, reads: readonly Fragment[]): string[] | null {
  const [aliasPart] = table.parts;
  if (table.parts.length !== 1 || !aliasPart || !('identifier' in aliasPart)) return null;
  const alias = aliasPart.identifier;
  const columns = new Set<string>();
  for (const fragment of reads) {
    const parts = fragment.parts;
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!;
      if (!('identifier' in part) || part.identifier !== alias) continue;
      const dot = parts[i + 1];
      const column = parts[i + 2];
      if (!dot || !('text' in dot) || dot.text !== '.' || !column || !('identifier' in column)) return null;
      columns.add(column.identifier);
      i += 2;
    }
  }
  return columns.size ? [...columns] : null;
}
