import { isArrayType, type Collection, type Field, type Relationship, type RowFilter } from '../../metadata/index.js';
import { assertNever, type BoolExp } from '../plan/ir.js';
import type { Param } from '../plan/params.js';
import { shortenRoleFilter } from '../plan/passes/foreignKeyShortcuts.js';
import type { CompileContext } from './compileContext.js';
import { sql, type Fragment } from './fragment.js';
import { storedFormRenderer } from './renderStoredForm.js';
import { AGGREGATE_PREDICATE_FUNCTION, ARRAY_CAST, ARRAY_OPERATOR, JSONB_OPERATOR, OPERATOR } from './sqlTables.js';

export type WhereRenderer = ReturnType<typeof whereRenderer>;

/**
 * Boolean expressions and the predicates of table references. A relationship filter is rendered
 * as the IR has it: the foreign-key shortcuts were made before (`plan/passes/foreignKeyShortcuts.ts`;
 * a role's filters through `shortenRoleFilter`, once per metadata version).
 */
export function whereRenderer(context: CompileContext) {
  const { metadata, nextAlias, fieldValue, tenantPredicate, joinPredicate, param, computedCall } = context;
  const { storedComparison } = storedFormRenderer(context);

  /** A role's filter (select, update, delete, check) over the row `table`. */
  const roleFilter = (filter: RowFilter, table: Fragment): Fragment => where(shortenRoleFilter(filter, metadata.foreignKeyRelationships), table);

  /**
   * The predicate of EVERY table reference to a collection: the tenant predicate and, for a
   * role, its select filter (key variables are parameters, so the plan is per role, not per
   * key). A filter's own relationships point at unrestricted collections: they get the tenant
   * predicate only, so filters never nest into each other.
   */
  const rowPredicate = (collection: Collection, table: Fragment): Fragment =>
    collection.selectFilter ? sql`${tenantPredicate(table)} AND ${roleFilter(collection.selectFilter, table)}` : tenantPredicate(table);

  /**
   * The predicate of a table reference reached from a row of `parent` through `relationship`:
   * the tenant predicate alone when the role's filter of `target` holds for every such row by
   * construction (`Collection.relationshipsOnlyToVisibleRows`, worked out by the permissions
   * stage, metadata/visibleRows.ts), else `rowPredicate`.
   */
  const pathPredicate = (parent: Collection, relationship: Relationship, target: Collection, table: Fragment): Fragment =>
    parent.relationshipsOnlyToVisibleRows.has(relationship.name) ? tenantPredicate(table) : rowPredicate(target, table);

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
        // json has no = of its own: compared as jsonb (engine/README.md, "json and arrays").
        if (expression.field.type === 'json') return sql`((${valueOf(expression.field)})::jsonb ${OPERATOR[expression.operator]} ${param(expression.value, 'jsonb')})`;
        return sql`(${valueOf(expression.field)} ${OPERATOR[expression.operator]} ${catalogueConstant(expression.field, expression.value) ?? param(listed(expression), expression.field.type)})`;
      case 'arrayContainment':
        return sql`(${valueOf(expression.field)} ${ARRAY_OPERATOR[expression.operator]} ${param(expression.value, expression.field.type)})`;
      case 'jsonb': {
        const { operator, operand } = JSONB_OPERATOR[expression.operator];
        return sql`(${valueOf(expression.field)} ${operator} ${sql.param(expression.value)}::${operand})`;
      }
      case 'cast':
        return where(expression.where, table, { as: expression.as, value: sql`(${valueOf(expression.field)})::text` });
      case 'computedValue':
        return where(expression.where, table, { as: expression.as, value: computedCall(expression.collection, expression.field, table) });
      case 'in': {
        if (isArrayType(expression.field.type)) return arrayIn(expression, valueOf(expression.field));
        const json = expression.field.type === 'json';
        const values = sql`${sql.param(expression.values)}::${ARRAY_CAST[json ? 'jsonb' : expression.field.type]}`;
        const value = json ? sql`(${valueOf(expression.field)})::jsonb` : valueOf(expression.field);
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
        const child = nextAlias('t');
        return sql`EXISTS (SELECT 1 FROM ${sql.qualified(expression.target.schema, expression.target.table)} AS ${child} WHERE ${rowPredicate(expression.target, child)} AND ${joinPredicate(
          expression.relationship,
          table,
          child,
        )} AND ${where(expression.where, child)})`;
      }
      case 'computed':
        return storedComparison(expression.field, expression.operator, expression.value, table);
      case 'aggregate':
        return aggregatePredicate(expression, table);
      case 'columns':
        return sql`(${valueOf(expression.field)} ${OPERATOR[expression.operator]} ${valueOf(expression.other)})`;
      case 'exists': {
        const other = nextAlias('t');
        return sql`EXISTS (SELECT 1 FROM ${sql.qualified(expression.target.schema, expression.target.table)} AS ${other} WHERE ${rowPredicate(expression.target, other)} AND ${where(expression.where, other)})`;
      }
      default:
        return assertNever(expression);
    }
  }

  /**
   * `_in`/`_nin` of an array field: one comparison per array (`(f = $1::text[] OR f = $2::text[])`),
   * since PostgreSQL's arrays of arrays must be rectangular; `_nin` never matches a null field, as
   * for scalars. An empty `_in` is false, an empty `_nin` true for a non-null field.
   */
  function arrayIn(expression: Extract<BoolExp, { kind: 'in' }>, value: Fragment): Fragment {
    const items = expression.values.kind === 'list' ? expression.values.items : [];
    if (expression.negated) return items.length ? sql`(${sql.join(items.map((item) => sql`${value} <> ${param(item, expression.field.type)}`), sql` AND `)} AND (${value} IS NOT NULL OR NULL))` : sql`(${value} IS NOT NULL OR NULL)`;
    return items.length ? sql`(${sql.join(items.map((item) => sql`${value} = ${param(item, expression.field.type)}`), sql` OR `)})` : sql`false`;
  }

  /**
   * An aggregate predicate: the aggregate over the related rows (row predicate, join, `filter`)
   * computed once in a one-row subquery, and the predicate's comparisons reading it —
   * `(SELECT (a.v > $1) FROM (SELECT count(*) AS v FROM payments AS t … ) AS a)`.
   */
  function aggregatePredicate(expression: Extract<BoolExp, { kind: 'aggregate' }>, table: Fragment): Fragment {
    const child = nextAlias('t');
    const result = nextAlias('a');
    const values = expression.arguments.map((field) => fieldValue(child, field));
    const conditions = [rowPredicate(expression.target, child), joinPredicate(expression.relationship, table, child)];
    if (expression.filter) conditions.push(where(expression.filter, child));
    let value: Fragment;
    if (expression.fn !== 'count') value = sql`${AGGREGATE_PREDICATE_FUNCTION[expression.fn]}(${expression.distinct ? sql`DISTINCT ` : sql``}${values[0]!})`;
    else if (!values.length) value = sql`count(*)`;
    else if (values.length === 1) value = expression.distinct ? sql`count(DISTINCT ${values[0]!})` : sql`count(${values[0]!})`;
    else {
      // count(columns: [a, b]) as the aggregate field counts it: the rows where every argument is present.
      value = expression.distinct ? sql`count(DISTINCT ROW(${sql.join(values)}))` : sql`count(*)`;
      conditions.push(...values.map((v) => sql`${v} IS NOT NULL`));
    }
    const aggregated = sql`${result}.${sql.ident('v')}`;
    return sql`(SELECT ${where(expression.predicate, result, { as: expression.as, value: aggregated })} FROM (SELECT ${value} AS ${sql.ident('v')} FROM ${sql.qualified(expression.target.schema, expression.target.table)} AS ${child} WHERE ${sql.join(conditions, sql` AND `)}) AS ${result})`;
  }

  return { where, roleFilter, rowPredicate, pathPredicate };
}
