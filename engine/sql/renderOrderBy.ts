import type { Collection } from '../../metadata/index.js';
import type { ListQuery, OrderItem } from '../plan/ir.js';
import type { CompileContext } from './compileContext.js';
import { sql, type Fragment } from './fragment.js';
import type { WhereRenderer } from './renderWhere.js';
import { storedFormRenderer } from './renderStoredForm.js';
import { aggregatedValueRenderer } from './renderAggregatedValue.js';
import { AGGREGATE_FUNCTION, DIRECTION } from './sqlTables.js';

/** One key of a list's order: the value sorted by and its direction (with its NULLS placement). */
export interface OrderKey {
  readonly value: Fragment;
  readonly direction: Fragment;
}

export type OrderByRenderer = ReturnType<typeof orderByRenderer>;

/** `order_by` keys: fields, aggregates of array relationships, through object relationships. */
export function orderByRenderer(context: CompileContext, { rowPredicate }: Pick<WhereRenderer, 'rowPredicate'>) {
  const { nextAlias, fieldValue, joinPredicate, computedCall } = context;
  const { storedOrder } = storedFormRenderer(context);
  const aggregatedValue = aggregatedValueRenderer(context);

  /**
   * An aggregate of the rows of an array relationship of the row `parent` (`count`, or
   * `sum`/`avg`/`min`/`max`/… of a field or of a scalar computed field, read as the aggregate
   * field reads it), for ordering: a correlated subquery with the row predicate (tenant and role
   * filter) of the related collection. `count` of no rows is 0.
   */
  function relationshipAggregate(item: Extract<OrderItem, { kind: 'aggregate' }>, parent: Fragment): Fragment {
    const child = nextAlias('o');
    const value = item.fn === 'count' || !item.field ? sql`count(*)` : sql`${AGGREGATE_FUNCTION[item.fn]}(${aggregatedValue(item.target, child, item.field)})`;
    return sql`(SELECT ${value} FROM ${sql.qualified(item.target.schema, item.target.table)} AS ${child} WHERE ${rowPredicate(item.target, child)} AND ${joinPredicate(item.relationship, parent, child)})`;
  }

  /**
   * The value an order item sorts by: a field, or an aggregate of an array relationship, of the
   * row or of a row reached through object relationships.
   */
  function orderValue(item: OrderItem, table: Fragment): Fragment {
    const valueAt = (row: Fragment): Fragment =>
      item.kind === 'column'
        ? fieldValue(row, item.field)
        : item.kind === 'computed'
          ? item.field.storedForm
            ? storedOrder(item.field, item.direction, row).value
            : computedCall(item.collection, item.field, row)
          : relationshipAggregate(item, row);
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
      item.path.map((step, index) => sql`${sql.qualified(step.target.schema, step.target.table)} AS ${aliases[index]!}`),
      sql`, `,
    );
    return sql`(SELECT ${valueAt(parent)} FROM ${from} WHERE ${sql.join(joins, sql` AND `)} LIMIT 1)`;
  }

  /** Order keys with the primary-key tie-break, ascending (SPEC §5: deterministic results). */
  function orderKeys(collection: Collection, query: ListQuery, table: Fragment): OrderKey[] {
    const keys = query.orderBy.map((item) => ({
      value: orderValue(item, table),
      direction: item.kind === 'computed' && item.field.storedForm ? storedOrder(item.field, item.direction, table).direction : DIRECTION[item.direction],
    }));
    const last = query.orderBy.at(-1);
    const [onlyKey] = collection.primaryKey;
    const pkAlreadyLast = collection.primaryKey.length === 1 && last?.kind === 'column' && last.path.length === 0 && last.field === onlyKey;
    if (!pkAlreadyLast) for (const key of collection.primaryKey) keys.push({ value: fieldValue(table, key), direction: DIRECTION.asc });
    return keys;
  }

  return { orderKeys };
}
