import type { Collection, Field, Metadata, Relationship, ScalarType } from '../../metadata/index.js';
import {
  assertNever,
  type AggregateField,
  type AggregateSelection,
  type BoolExp,
  type ComparisonOperator,
  type JsonbOperator,
  type ListQuery,
  type OperationPlan,
  type OrderItem,
  type RootField,
  type Selection,
} from '../plan/ir.js';
import type { OrderDirection } from '../schema/buildSchema.js';
import { render, sql, type Fragment, type Param, type RenderedSql } from './fragment.js';

/** Casts of bound parameters, one closed table (never built from input). */
const CAST: Readonly<Record<ScalarType, Fragment>> = {
  uuid: sql`uuid`,
  text: sql`text`,
  numeric: sql`numeric`,
  integer: sql`bigint`,
  boolean: sql`boolean`,
  date: sql`date`,
  timestamptz: sql`timestamptz`,
  jsonb: sql`jsonb`,
};
const ARRAY_CAST: Readonly<Record<ScalarType, Fragment>> = {
  uuid: sql`uuid[]`,
  text: sql`text[]`,
  numeric: sql`numeric[]`,
  integer: sql`bigint[]`,
  boolean: sql`boolean[]`,
  date: sql`date[]`,
  timestamptz: sql`timestamptz[]`,
  jsonb: sql`jsonb[]`,
};
const OPERATOR: Readonly<Record<ComparisonOperator, Fragment>> = {
  _eq: sql`=`,
  _neq: sql`<>`,
  _gt: sql`>`,
  _gte: sql`>=`,
  _lt: sql`<`,
  _lte: sql`<=`,
  _like: sql`LIKE`,
  _nlike: sql`NOT LIKE`,
  _ilike: sql`ILIKE`,
  _nilike: sql`NOT ILIKE`,
  _regex: sql`~`,
  _iregex: sql`~*`,
  _nregex: sql`!~`,
  _niregex: sql`!~*`,
  _similar: sql`SIMILAR TO`,
  _nsimilar: sql`NOT SIMILAR TO`,
};
/** jsonb operators and the type their operand is bound as (`?`, `?|`, `?&` take keys). */
const JSONB_OPERATOR: Readonly<Record<JsonbOperator, { readonly operator: Fragment; readonly operand: Fragment }>> = {
  _contains: { operator: sql`@>`, operand: sql`jsonb` },
  _contained_in: { operator: sql`<@`, operand: sql`jsonb` },
  _has_key: { operator: sql`?`, operand: sql`text` },
  _has_keys_any: { operator: sql`?|`, operand: sql`text[]` },
  _has_keys_all: { operator: sql`?&`, operand: sql`text[]` },
};
const DIRECTION: Readonly<Record<OrderDirection, Fragment>> = {
  asc: sql`ASC NULLS LAST`,
  asc_nulls_first: sql`ASC NULLS FIRST`,
  asc_nulls_last: sql`ASC NULLS LAST`,
  desc: sql`DESC NULLS FIRST`,
  desc_nulls_first: sql`DESC NULLS FIRST`,
  desc_nulls_last: sql`DESC NULLS LAST`,
};
const AGGREGATE_FUNCTION = { sum: sql`sum`, avg: sql`avg`, min: sql`min`, max: sql`max` } as const;
const ACCOUNT = sql.param({ kind: 'account' });
/** Root aggregates one shared scan computes at most (see `sharedScanAggregates`). */
const MAX_SHARED_SCAN_AGGREGATES = 50;

/** JSON text `sql.literal` accepts (GraphQL names and JSON punctuation). */
const LITERAL_PIECE = /^[A-Za-z0-9_{}[\],:"]*$/;

/**
 * A limit or offset: an integer written in the document is SQL text, so that the planner sees
 * it in the generic plan of a prepared statement (a `LIMIT $n` is estimated as 10 % of the rows,
 * which made PostgreSQL re-plan such statements on every execution); a variable stays a
 * parameter (`checkCount` bounds both).
 */
function count(value: Param): Fragment {
  return value.kind === 'const' && typeof value.value === 'number' && Number.isSafeInteger(value.value) ? sql.integer(value.value) : sql`${sql.param(value)}::bigint`;
}

/** PostgreSQL functions take at most 100 arguments. */
const MAX_ARGUMENTS = 100;

/**
 * The text of all pieces in order: one `concat(…)` (one function call parses and runs faster
 * than a chain of `||`), nested when there are more pieces than a call takes.
 */
function concatenate(pieces: readonly Fragment[]): Fragment {
  if (pieces.length <= MAX_ARGUMENTS) return sql`concat(${sql.join(pieces)})`;
  const chunks: Fragment[] = [];
  const size = Math.ceil(pieces.length / MAX_ARGUMENTS);
  for (let at = 0; at < pieces.length; at += size) chunks.push(concatenate(pieces.slice(at, at + size)));
  return concatenate(chunks);
}

/**
 * The select compiler's pieces, shared by the query compiler (`compileOperation`) and the
 * mutation compiler (`compileMutation.ts`, for `where` and `returning`). One instance per
 * statement: its alias counter makes the aliases of that statement.
 */
export type SelectCompiler = ReturnType<typeof selectCompiler>;

export function selectCompiler(metadata: Metadata) {
  let aliasCounter = 0;
  const nextAlias = (prefix: string): Fragment => sql.ident(`_${prefix}${++aliasCounter}`);
  const tenant = sql.ident(metadata.tenantColumn);
  const key = (text: string): Fragment => sql`${sql.value(text)}::text`;
  /**
   * JSON text written here (a key with its punctuation, a `__typename` string): a SQL literal,
   * since it is made of GraphQL names (`sql.literal`); bound as a parameter otherwise.
   */
  const jsonPiece = (text: string): Fragment => (LITERAL_PIECE.test(text) ? sql.literal(text) : sql`${sql.value(text)}::text`);
  /** Any SQL value as JSON (`json`); SQL NULL is `null`. */
  const jsonOf = (value: Fragment): Fragment => sql`coalesce(to_json(${value}), 'null')`;
  /** A scalar string as JSON text (`__typename`). */
  const jsonString = (text: string): Fragment => jsonPiece(JSON.stringify(text));

  /** `{"k":v,…}` from JSON-text values, keys in the given order. */
  const jsonObject = (pairs: readonly (readonly [string, Fragment])[]): Fragment => {
    if (!pairs.length) return sql`'{}'::text`;
    const pieces: Fragment[] = [];
    pairs.forEach(([k, v], index) => {
      pieces.push(jsonPiece(`${index ? ',' : '{'}${JSON.stringify(k)}:`), v);
    });
    pieces.push(sql`'}'`);
    return concatenate(pieces);
  };

  /** `[a,b,…]` of the JSON-text column `item`, aggregated in `order`; `[]` for no rows. */
  const jsonArray = (item: Fragment, order: Fragment): Fragment => sql`concat('[', string_agg(${item}, ',' ORDER BY ${order}), ']')`;

  /**
   * A field's value for output, as JSON text (custom fields keep their JSON type). A NOT NULL
   * column needs no null fallback; leaving it out keeps the statement as quick to parse as
   * `json_build_object` was (PGlite parses every statement it runs).
   */
  const fieldOutput = (collection: Collection, table: Fragment, field: Field): Fragment => {
    const column = sql`${table}.${sql.ident(field.source.column)}`;
    if (field.source.kind === 'customField') return sql`coalesce((${column} -> ${key(field.source.key)})::text, 'null')`;
    return metadata.notNullColumns.has(`${collection.table}.${field.source.column}`) ? sql`to_json(${column})` : jsonOf(column);
  };

  /** A field's value for comparison and ordering, typed. */
  const fieldValue = (table: Fragment, field: Field): Fragment =>
    field.source.kind === 'column'
      ? sql`${table}.${sql.ident(field.source.column)}`
      : sql`((${table}.${sql.ident(field.source.column)} ->> ${key(field.source.key)})::${CAST[field.type]})`;

  const tenantPredicate = (table: Fragment): Fragment => sql`${table}.${tenant} = ${ACCOUNT}`;

  /**
   * The predicate of EVERY table reference to a collection: the tenant predicate and, for a
   * role, its select filter (key variables are parameters, so the plan is per role, not per
   * key). A filter's own relationships point at unrestricted collections: they get the tenant
   * predicate only, so filters never nest into each other.
   */
  const rowPredicate = (collection: Collection, table: Fragment): Fragment =>
    collection.selectFilter ? sql`${tenantPredicate(table)} AND ${where(collection.selectFilter, table)}` : tenantPredicate(table);

  /**
   * The predicate of a table reference reached from a row of `parent` through `relationship`:
   * the tenant predicate alone when the role's filter of `target` holds for every such row by
   * construction (`Collection.relationshipsOnlyToVisibleRows`, worked out by the permissions
   * stage), else `rowPredicate`.
   */
  const pathPredicate = (parent: Collection, relationship: Relationship, target: Collection, table: Fragment): Fragment =>
    parent.relationshipsOnlyToVisibleRows.has(relationship.name) ? tenantPredicate(table) : rowPredicate(target, table);

  const joinPredicate = (relationship: Relationship, parent: Fragment, child: Fragment): Fragment =>
    sql.join(
      relationship.mapping.map(([from, to]) => sql`${child}.${sql.ident(to)} = ${parent}.${sql.ident(from)}`),
      sql` AND `,
    );

  /** A value of a comparison; a boolean written in the document is SQL text (`sql.boolean`), anything else a parameter. */
  const param = (value: Param, type: ScalarType): Fragment =>
    value.kind === 'const' && type === 'boolean' && typeof value.value === 'boolean' ? sql.boolean(value.value) : sql`${sql.param(value)}::${CAST[type]}`;

  /**
   * A string written in the document that equals a constant the catalogue holds for this column —
   * a text constant of a partial index's predicate on a column of this name, or one of the values
   * a CHECK constraint allows the field's column (`Metadata.fieldValues`) — as the catalogue's
   * constant in SQL text (`sql.catalogueConstant`): the statement's generic plan can then use the
   * partial index, and reads a constant where it would read a parameter on every row. Null
   * otherwise (the value stays a parameter).
   */
  const catalogueConstant = (field: Field, value: Param): Fragment | null => {
    if (value.kind !== 'const' || typeof value.value !== 'string' || field.type !== 'text' || field.source.kind !== 'column') return null;
    const known = metadata.indexConstants.get(field.source.column)?.has(value.value) || metadata.fieldValues.get(field)?.includes(value.value);
    return known ? sql.catalogueConstant(value.value) : null;
  };

  /**
   * A variable compared (`_eq`) with a field whose column takes only a CHECK constraint's values
   * (`Metadata.fieldValues`) is marked with them (`oneOf`), so the statement's plan can be
   * checked for each (engine/sql/fragment.ts `genericPlanSafety`). Every other value as it is.
   */
  const listed = ({ field, operator, value }: Extract<BoolExp, { kind: 'compare' }>): Param => {
    if (value.kind !== 'var' || operator !== '_eq') return value;
    const values = metadata.fieldValues.get(field);
    return values ? { ...value, oneOf: values } : value;
  };

  /**
   * A relationship filter that only goes through its target to one of the target's own
   * relationships — `{loan: {funding_sources: {person_id: …}}}` on schedules — written as that
   * inner relationship from the parent row directly (`funding_sources.loan_id = schedules.loan_id`),
   * when the outer relationship is an object relationship backed by a foreign key
   * (`Metadata.foreignKeyRelationships`: the target row exists whenever the columns are not null,
   * and a null column matches nothing either way), the target carries no filter of its own (a
   * role's view of it does), and every column the inner relationship reads of the target is one
   * the outer relationship maps. Null when any of that does not hold.
   */
  const throughForeignKey = (expression: Extract<BoolExp, { kind: 'relationship' }>): Extract<BoolExp, { kind: 'relationship' }> | null => {
    const { relationship, target, where: inner } = expression;
    if (relationship.kind !== 'object' || target.selectFilter || inner.kind !== 'relationship' || !metadata.foreignKeyRelationships.has(relationship)) return null;
    const parentColumnOf = new Map(relationship.mapping.map(([from, to]) => [to, from]));
    const mapping: (readonly [string, string])[] = [];
    for (const [from, to] of inner.relationship.mapping) {
      const parentColumn = parentColumnOf.get(from);
      if (parentColumn === undefined) return null;
      mapping.push([parentColumn, to]);
    }
    return { ...inner, relationship: { ...inner.relationship, name: `${relationship.name}.${inner.relationship.name}`, mapping } };
  };

  /**
   * A boolean expression over the row `table`. `cast` is the field a `_cast` compares (the jsonb
   * field as text) and its value; comparisons naming it read that value instead of the field.
   */
  function where(expression: BoolExp, table: Fragment, cast: { readonly as: Field; readonly value: Fragment } | null = null): Fragment {
    const valueOf = (field: Field): Fragment => (cast && cast.as === field ? cast.value : fieldValue(table, field));
    switch (expression.kind) {
      case 'and':
        return expression.items.length ? sql`(${sql.join(expression.items.map((item) => where(item, table, cast)), sql` AND `)})` : sql`true`;
      case 'or':
        return expression.items.length ? sql`(${sql.join(expression.items.map((item) => where(item, table, cast)), sql` OR `)})` : sql`false`;
      case 'not':
        return sql`(NOT ${where(expression.item, table, cast)})`;
      case 'compare':
        return sql`(${valueOf(expression.field)} ${OPERATOR[expression.operator]} ${catalogueConstant(expression.field, expression.value) ?? param(listed(expression), expression.field.type)})`;
      case 'jsonb': {
        const { operator, operand } = JSONB_OPERATOR[expression.operator];
        return sql`(${valueOf(expression.field)} ${operator} ${sql.param(expression.value)}::${operand})`;
      }
      case 'cast':
        return where(expression.where, table, { as: expression.as, value: sql`(${valueOf(expression.field)})::text` });
      case 'in': {
        const values = sql`${sql.param(expression.values)}::${ARRAY_CAST[expression.field.type]}`;
        const value = valueOf(expression.field);
        // SPEC §5: _nin never matches a null field. ALL over an empty list is true even for
        // null, so null is made unknown (not false: NOT of it must stay unknown too).
        return expression.negated ? sql`(${value} <> ALL(${values}) AND (${value} IS NOT NULL OR NULL))` : sql`(${value} = ANY(${values}))`;
      }
      case 'isNull': {
        const value = valueOf(expression.field);
        if (expression.value.kind === 'const' && typeof expression.value.value === 'boolean') {
          return expression.value.value ? sql`(${value} IS NULL)` : sql`(${value} IS NOT NULL)`;
        }
        return sql`((${value} IS NULL) = ${param(expression.value, 'boolean')})`;
      }
      case 'relationship': {
        const shorter = throughForeignKey(expression);
        if (shorter) return where(shorter, table, cast);
        const child = nextAlias('t');
        return sql`EXISTS (SELECT 1 FROM ${sql.ident(expression.target.table)} AS ${child} WHERE ${rowPredicate(expression.target, child)} AND ${joinPredicate(
          expression.relationship,
          table,
          child,
        )} AND ${where(expression.where, child)})`;
      }
      default:
        return assertNever(expression);
    }
  }

  /**
   * An aggregate of the rows of an array relationship of the row `parent` (`count`, or
   * `sum`/`avg`/`min`/`max` of a field), for ordering: a correlated subquery with the row
   * predicate (tenant and role filter) of the related collection. `count` of no rows is 0.
   */
  function relationshipAggregate(item: Extract<OrderItem, { kind: 'aggregate' }>, parent: Fragment): Fragment {
    const child = nextAlias('o');
    const value = item.fn === 'count' || !item.field ? sql`count(*)` : sql`${AGGREGATE_FUNCTION[item.fn]}(${fieldValue(child, item.field)})`;
    return sql`(SELECT ${value} FROM ${sql.ident(item.target.table)} AS ${child} WHERE ${rowPredicate(item.target, child)} AND ${joinPredicate(item.relationship, parent, child)})`;
  }

  /**
   * The value an order item sorts by: a field, or an aggregate of an array relationship, of the
   * row or of a row reached through object relationships.
   */
  function orderValue(item: OrderItem, table: Fragment): Fragment {
    const valueAt = (row: Fragment): Fragment => (item.kind === 'column' ? fieldValue(row, item.field) : relationshipAggregate(item, row));
    if (!item.path.length) return valueAt(table);
    let parent = table;
    const aliases: Fragment[] = [];
    const joins: Fragment[] = [];
    for (const step of item.path) {
      const child = nextAlias('o');
      aliases.push(child);
      joins.push(sql`${rowPredicate(step.target, child)} AND ${joinPredicate(step.relationship, parent, child)}`);
      parent = child;
    }
    const from = sql.join(
      item.path.map((step, index) => sql`${sql.ident(step.target.table)} AS ${aliases[index]!}`),
      sql`, `,
    );
    return sql`(SELECT ${valueAt(parent)} FROM ${from} WHERE ${sql.join(joins, sql` AND `)} LIMIT 1)`;
  }

  /** Order keys with the primary-key tie-break, ascending (SPEC §5: deterministic results). */
  function orderKeys(collection: Collection, query: ListQuery, table: Fragment): { value: Fragment; direction: Fragment }[] {
    const keys = query.orderBy.map((item) => ({ value: orderValue(item, table), direction: DIRECTION[item.direction] }));
    const last = query.orderBy.at(-1);
    const pkAlreadyLast = last?.kind === 'column' && last.path.length === 0 && last.field === collection.primaryKey;
    if (!pkAlreadyLast) keys.push({ value: fieldValue(table, collection.primaryKey), direction: DIRECTION.asc });
    return keys;
  }

  function rowObject(collection: Collection, selection: Selection, table: Fragment): Fragment {
    const pairs = selection.map((item): readonly [string, Fragment] => {
      switch (item.kind) {
        case 'column':
          return [item.alias, fieldOutput(collection, table, item.field)];
        case 'computed': {
          // fn(tenant, key, name => $n::type, …): omitted arguments take the function's defaults.
          const args = [...item.args].map(([name, value]) => sql`${sql.ident(name)} => ${sql.param(value)}::${CAST[item.field.args.get(name)!]}`);
          const call = sql`${sql.ident(item.field.function)}(${sql.join([sql`${table}.${tenant}`, fieldValue(table, collection.primaryKey), ...args], sql`, `)})`;
          return [item.alias, jsonOf(call)];
        }
        case 'typename':
          return [item.alias, jsonString(item.value)];
        case 'object': {
          const child = nextAlias('t');
          return [
            item.alias,
            sql`coalesce((SELECT ${rowObject(item.target, item.selection, child)} FROM ${sql.ident(item.target.table)} AS ${child} WHERE ${pathPredicate(collection, item.relationship, item.target, child)} AND ${joinPredicate(
              item.relationship,
              table,
              child,
            )} LIMIT 1), 'null')`,
          ];
        }
        case 'array':
          return [item.alias, list(item.target, item.query, item.selection, { relationship: item.relationship, parent: table, parentCollection: collection })];
        case 'arrayAggregate':
          return [item.alias, aggregate(item.target, item.query, item.aggregate, { relationship: item.relationship, parent: table, parentCollection: collection })];
        default:
          return assertNever(item);
      }
    });
    return jsonObject(pairs);
  }

  interface Correlation {
    readonly relationship: Relationship;
    readonly parent: Fragment;
    readonly parentCollection: Collection;
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
  function source(collection: Collection, query: ListQuery, table: Fragment, correlation: Correlation | null, keys: { value: Fragment; direction: Fragment }[]): Fragment {
    const conditions = [correlation ? pathPredicate(correlation.parentCollection, correlation.relationship, collection, table) : rowPredicate(collection, table)];
    if (correlation) conditions.push(joinPredicate(correlation.relationship, correlation.parent, table));
    if (query.where) conditions.push(where(query.where, table));
    const filtered = sql`FROM ${sql.ident(collection.table)} AS ${table} WHERE ${sql.join(conditions, sql` AND `)}`;
    const distinct = query.distinctOn.length ? sql`DISTINCT ON (${sql.join(query.distinctOn.map((field) => fieldValue(table, field)))}) ` : sql``;
    if (!query.limit && !query.offset && collection.selectLimit === null && !query.distinctOn.length) return filtered;
    const paging: Fragment[] = [sql` ORDER BY ${sql.join(keys.map((k) => sql`${k.value} ${k.direction}`))}`];
    // A role's limit caps every list of the collection, whatever the request asks.
    const roleLimit = collection.selectLimit === null ? null : sql.integer(collection.selectLimit);
    if (query.limit) paging.push(roleLimit ? sql` LIMIT least(${count(query.limit)}, ${roleLimit})` : sql` LIMIT ${count(query.limit)}`);
    else if (roleLimit) paging.push(sql` LIMIT ${roleLimit}`);
    if (query.offset) paging.push(sql` OFFSET ${count(query.offset)}`);
    return sql`FROM (SELECT ${distinct}${table}.* ${filtered}${sql.join(paging, sql``)}) AS ${table}`;
  }

  function list(collection: Collection, query: ListQuery, selection: Selection, correlation: Correlation | null): Fragment {
    const table = nextAlias('t');
    const rows = nextAlias('r');
    const keys = orderKeys(collection, query, table);
    const keyColumns = keys.map((k, i) => sql`${k.value} AS ${sql.ident(`k${i}`)}`);
    const aggregateOrder = sql.join(keys.map((k, i) => sql`${rows}.${sql.ident(`k${i}`)} ${k.direction}`));
    return sql`(SELECT ${jsonArray(sql`${rows}.${sql.ident('j')}`, aggregateOrder)} FROM (SELECT ${rowObject(collection, selection, table)} AS ${sql.ident(
      'j',
    )}, ${sql.join(keyColumns)} ${source(collection, query, table, correlation, keys)}) AS ${rows})`;
  }

  /** One aggregate output (`count`, `sum { … }`, …) over the rows where `filter` holds (all rows when null). */
  function aggregateField(item: AggregateField, column: (field: Field) => Fragment, filter: Fragment | null): readonly [string, Fragment] {
    const over = (call: Fragment, condition: Fragment | null = null): Fragment => {
      const conditions = [filter, condition].filter((c): c is Fragment => c !== null);
      return conditions.length ? sql`${call} FILTER (WHERE ${sql.join(conditions, sql` AND `)})` : call;
    };
    switch (item.kind) {
      case 'typename':
        return [item.alias, jsonString(item.value)];
      case 'count': {
        // A count is never null: no fallback needed.
        if (!item.columns.length) return [item.alias, sql`to_json(${over(sql`count(*)`)})`];
        const values = item.columns.map(column);
        if (values.length === 1) return [item.alias, sql`to_json(${over(item.distinct ? sql`count(DISTINCT ${values[0]!})` : sql`count(${values[0]!})`)})`];
        const allPresent = sql.join(values.map((v) => sql`${v} IS NOT NULL`), sql` AND `);
        return [item.alias, sql`to_json(${over(item.distinct ? sql`count(DISTINCT ROW(${sql.join(values)}))` : sql`count(*)`, allPresent)})`];
      }
      case 'function':
        return [
          item.alias,
          jsonObject(
            item.items.map((leaf): readonly [string, Fragment] =>
              leaf.kind === 'typename' ? [leaf.alias, jsonString(leaf.value)] : [leaf.alias, jsonOf(over(sql`${AGGREGATE_FUNCTION[item.fn]}(${column(leaf.field)})`))],
            ),
          ),
        ];
      default:
        return assertNever(item);
    }
  }

  /**
   * The aggregated columns of a scan: each field is selected once in the inner query (pushed
   * onto `inner` as `c0`, `c1`, …) and read from the outer one as `rows.cN`.
   */
  function columnsOf(table: Fragment, rows: Fragment, inner: Fragment[]): (field: Field) => Fragment {
    const aliases = new Map<Field, Fragment>();
    return (field) => {
      let alias = aliases.get(field);
      if (!alias) {
        alias = sql.ident(`c${aliases.size}`);
        aliases.set(field, alias);
        inner.push(sql`${fieldValue(table, field)} AS ${alias}`);
      }
      return sql`${rows}.${alias}`;
    };
  }

  /**
   * Several root aggregates over one collection (`lead: loans_aggregate(where: …) servicing:
   * loans_aggregate(where: …) all: loans_aggregate`) in ONE scan: each aggregate keeps its own
   * `where` as a FILTER, the scan reads the rows any of them needs. Returns a FROM item of one
   * row and, per aggregate, the column holding its JSON. The role's filter is in the scan's
   * WHERE (`rowPredicate`), once for all of them.
   *
   * When nothing would be computed twice per row (`aggregatesOverTable`), the aggregates read
   * the table directly, each `where` written into its FILTER, as a person writes it; otherwise
   * an inner query computes each `where` (as a flag `fN`) and each computed value (`cN`) once
   * per row, and the aggregates read those.
   */
  function sharedScanAggregates(collection: Collection, members: readonly SharedScanAggregate[]): { from: Fragment; values: Fragment[] } {
    const table = nextAlias('t');
    const rows = nextAlias('r');
    const shared = nextAlias('m');
    const direct = aggregatesOverTable(members);
    const inner: Fragment[] = [];
    const column = direct ? (field: Field): Fragment => fieldValue(table, field) : columnsOf(table, rows, inner);
    const scopes: Fragment[] = [];
    let everyRow = false;
    const outputs = members.map((member, index) => {
      let filter: Fragment | null = null;
      if (member.query.where) {
        const condition = where(member.query.where, table);
        scopes.push(condition);
        if (direct) {
          filter = condition;
        } else {
          const flag = sql.ident(`f${index}`);
          inner.push(sql`${condition} AS ${flag}`);
          filter = sql`${rows}.${flag}`;
        }
      } else {
        everyRow = true;
      }
      const pairs = member.aggregate.map((item): readonly [string, Fragment] => {
        switch (item.kind) {
          case 'typename':
            return [item.alias, jsonString(item.value)];
          case 'aggregate':
            return [item.alias, jsonObject(item.fields.map((field) => aggregateField(field, column, filter)))];
          case 'nodes':
            throw new Error('an aggregate with nodes never shares a scan');
          default:
            return assertNever(item);
        }
      });
      const alias = sql.ident(`a${index}`);
      return { select: sql`${jsonObject(pairs)} AS ${alias}`, value: sql`${shared}.${alias}` };
    });
    const conditions = [rowPredicate(collection, table)];
    if (!everyRow) conditions.push(sql`(${sql.join(scopes, sql` OR `)})`);
    const scan = sql`FROM ${sql.ident(collection.table)} AS ${table} WHERE ${sql.join(conditions, sql` AND `)}`;
    const selects = sql.join(outputs.map((output) => output.select));
    // GROUP BY (): exactly one row, even when only __typename is selected.
    if (direct) return { from: sql`(SELECT ${selects} ${scan} GROUP BY ()) AS ${shared}`, values: outputs.map((output) => output.value) };
    if (!inner.length) inner.push(sql`1 AS ${sql.ident('one')}`);
    const from = sql`(SELECT ${selects} FROM (SELECT ${sql.join(inner)} ${scan}) AS ${rows} GROUP BY ()) AS ${shared}`;
    return { from, values: outputs.map((output) => output.value) };
  }

  /**
   * Whether a shared scan's aggregates can read the table directly: no member's `where` is
   * read by more than one of its aggregate calls (`count`, each `sum { a b }` leaf, …) and no
   * computed value (a custom field's `->>` and cast) by more than one call. PostgreSQL does
   * not share a repeated expression, so anything read twice is computed once in an inner query
   * instead; a plain column costs nothing to read twice, while the inner query's flags make the
   * scan project them for every row (q4: ~2 % of its time, bench/README.md).
   */
  function aggregatesOverTable(members: readonly SharedScanAggregate[]): boolean {
    const uses = new Map<Field, number>();
    const counting = (field: Field): Fragment => {
      uses.set(field, (uses.get(field) ?? 0) + 1);
      return sql`NULL`;
    };
    for (const member of members) {
      let calls = 0;
      for (const item of member.aggregate) {
        if (item.kind !== 'aggregate') continue;
        for (const field of item.fields) {
          aggregateField(field, counting, null);
          if (field.kind === 'count') calls += 1;
          else if (field.kind === 'function') calls += field.items.filter((leaf) => leaf.kind !== 'typename').length;
        }
      }
      if (member.query.where && calls > 1) return false;
    }
    return [...uses].every(([field, reads]) => reads <= 1 || field.source.kind === 'column');
  }

  function aggregate(collection: Collection, query: ListQuery, selection: AggregateSelection, correlation: Correlation | null): Fragment {
    const table = nextAlias('t');
    const rows = nextAlias('r');
    const keys = orderKeys(collection, query, table);
    const inner: Fragment[] = [];
    const column = columnsOf(table, rows, inner);
    const pairs = selection.map((item): readonly [string, Fragment] => {
      switch (item.kind) {
        case 'typename':
          return [item.alias, jsonString(item.value)];
        case 'aggregate':
          return [item.alias, jsonObject(item.fields.map((field) => aggregateField(field, column, null)))];
        case 'nodes': {
          const alias = sql.ident(`n${inner.length}`);
          inner.push(sql`${rowObject(collection, item.selection, table)} AS ${alias}`);
          const order = sql.join(keys.map((k, i) => sql`${rows}.${sql.ident(`k${i}`)} ${k.direction}`));
          return [item.alias, jsonArray(sql`${rows}.${alias}`, order)];
        }
        default:
          return assertNever(item);
      }
    });
    const needsKeys = selection.some((item) => item.kind === 'nodes');
    if (needsKeys) keys.forEach((k, i) => inner.push(sql`${k.value} AS ${sql.ident(`k${i}`)}`));
    if (!inner.length) inner.push(sql`1 AS ${sql.ident('one')}`);
    // GROUP BY (): exactly one row, even when only __typename is selected or no row matches.
    return sql`(SELECT ${jsonObject(pairs)} FROM (SELECT ${sql.join(inner)} ${source(collection, query, table, correlation, keys)}) AS ${rows} GROUP BY ())`;
  }

  function rootField(field: RootField): readonly [string, Fragment] {
    switch (field.kind) {
      case 'typename':
        return [field.alias, jsonString(field.value)];
      case 'select':
        return [field.alias, list(field.collection, field.query, field.selection, null)];
      case 'selectAggregate':
        return [field.alias, aggregate(field.collection, field.query, field.aggregate, null)];
      case 'selectByPk': {
        const table = nextAlias('t');
        const pk = field.collection.primaryKey;
        return [
          field.alias,
          sql`coalesce((SELECT ${rowObject(field.collection, field.selection, table)} FROM ${sql.ident(field.collection.table)} AS ${table} WHERE ${rowPredicate(field.collection, table)} AND ${fieldValue(
            table,
            pk,
          )} = ${param(field.key, pk.type)}), 'null')`,
        ];
      }
      default:
        return assertNever(field);
    }
  }

  return { nextAlias, key, jsonObject, jsonArray, jsonString, fieldOutput, fieldValue, tenantPredicate, rowPredicate, param, where, rowObject, list, aggregate, rootField, sharedScanAggregates };
}

/**
 * Compiles a plan into ONE statement returning the finished response text `{"data":…}`.
 * Every table reference carries the tenant predicate; every value is a parameter. Pure and
 * deterministic: aliases come from a counter, so golden SQL stays stable.
 *
 * The response is assembled as compact JSON text (`{"k":v,"k2":[1,2]}`), not with
 * `json_build_object`/`json_agg`, which write `"k" : v` and `[a, b]`. Every value fragment
 * below is a non-null expression (`text` or `json`) whose text is one JSON value: keys are
 * JSON-encoded here and bound as parameters together with their `{`/`,` and `:`
 * (`{"loans":`), scalars go through `to_json` (the encoder `json_build_object` uses, so
 * numbers keep PostgreSQL's exact digits and dates their ISO form), objects through one
 * `concat(…)`, lists through `string_agg(… ORDER BY …)`. Key order is the selection order.
 * Values of `jsonb` columns keep PostgreSQL's jsonb text form. Measured against
 * `json_build_object` in `engine/README.md`.
 */
export function compileOperation(plan: OperationPlan, metadata: Metadata): RenderedSql {
  const { jsonObject, rootField, sharedScanAggregates } = selectCompiler(metadata);
  // Root aggregates of one collection without nodes or paging share one scan when there are
  // several, and not too many (a select list holds at most 1664 entries).
  const byCollection = new Map<Collection, SharedScanAggregate[]>();
  for (const field of plan.rootFields) {
    if (field.kind !== 'selectAggregate' || field.query.limit || field.query.offset || field.query.distinctOn.length || field.collection.selectLimit !== null || field.aggregate.some((item) => item.kind === 'nodes')) continue;
    byCollection.set(field.collection, [...(byCollection.get(field.collection) ?? []), field]);
  }
  const sharedValues = new Map<RootField, Fragment>();
  const sharedScans: Fragment[] = [];
  for (const [collection, members] of byCollection) {
    if (members.length < 2 || members.length > MAX_SHARED_SCAN_AGGREGATES) continue;
    const { from, values } = sharedScanAggregates(collection, members);
    sharedScans.push(from);
    members.forEach((member, index) => sharedValues.set(member, values[index]!));
  }
  const data = jsonObject(plan.rootFields.map((field) => {
    const shared = sharedValues.get(field);
    return shared ? ([field.alias, shared] as const) : rootField(field);
  }));
  const from = sharedScans.length ? sql` FROM ${sql.join(sharedScans)}` : sql``;
  return render(sql`SELECT concat('{"data":', ${data}, '}') AS ${sql.ident('response')}${from}`);
}

type SharedScanAggregate = Extract<RootField, { kind: 'selectAggregate' }>;
