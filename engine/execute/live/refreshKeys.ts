import { tableKey, type Collection, type Relationship } from '../../../metadata/index.js';
import type { AggregateSelection, BoolExp, ListQuery, OperationPlan, OrderItem, Selection } from '../../plan/ir.js';
import type { Param } from '../../plan/params.js';

/**
 * Which parameters of a live query's statement hold the key value every row it reads of a table
 * has in the column the table's change notices name (engine/README.md, "Subscriptions"): table →
 * the indexes (0-based, in `params`) of those parameters. A notice naming values of such a table
 * refreshes only the subscribers whose value at one of those indexes is a value named; a table
 * absent here refreshes every subscriber of its account.
 *
 * A table's notice key is what the catalogue says (`Metadata.changeNoticeKeys`, the argument of
 * its change-notice triggers): on loanql's own tables the loan (`loans.id`, `payments.loan_id`,
 * …), on a lender's own whatever its triggers name; never a table's name. A read is keyed when it
 * is reached from a keyed root through key-to-key joins only: a root `_by_pk` whose key holds
 * the notice key (`loans_by_pk(id:)`), or a root list whose `where` is a conjunction holding
 * `<notice key> _eq <value>`; then each relationship (in selections, `where`s, `order_by`s and the
 * role's row filters) whose mapping joins the notice key to the target's notice key
 * (`loans.id = payments.loan_id`, `payments.loan_id = loans.id`, `schedules.loan_id =
 * payments.loan_id`). A table read anywhere else (a person reached from a loan, an unrestricted
 * list, a table whose notices name no key) is not keyed, nor is any table under a view read
 * (`underViews`, `Metadata.tablesUnderViews`: which of its rows the view reads is the view's
 * affair); a plan that calls a computed field (a function may read anything) has no keys at all.
 * Being wrong here would miss an update, so every doubt falls to "not keyed".
 */
export function refreshKeys(
  plan: OperationPlan,
  params: readonly Param[],
  noticeKeys: ReadonlyMap<string, string>,
  underViews: ReadonlyMap<string, readonly string[]> = new Map(),
): ReadonlyMap<string, readonly number[]> {
  const walk = new KeyWalk(noticeKeys, underViews);
  try {
    for (const field of plan.rootFields) {
      if (field.kind === 'selectByPk') {
        const keyColumn = walk.keyColumn(field.collection);
        const key = field.key.find((part) => part.field.source.kind === 'column' && part.field.source.column === keyColumn);
        walk.node(field.collection, key?.value ?? null, true);
        walk.selection(field.collection, field.selection, key?.value ?? null);
      } else if (field.kind === 'select' || field.kind === 'selectAggregate') {
        const key = keyOfWhere(walk.keyColumn(field.collection), field.query.where);
        walk.node(field.collection, key, true);
        walk.query(field.collection, field.query, key);
        if (field.kind === 'select') walk.selection(field.collection, field.selection, key);
        else walk.aggregate(field.collection, field.aggregate, key);
      } else if (field.kind === 'sharedAggregate') throw OPAQUE;
    }
  } catch (error) {
    if (error === OPAQUE) return new Map();
    throw error;
  }
  const keys = new Map<string, readonly number[]>();
  for (const [table, values] of walk.reads) {
    if (values === null) continue;
    const indexes: number[] = [];
    for (const value of values) {
      const found = indexesOf(value, params);
      if (!found.length) {
        indexes.length = 0;
        break;
      }
      indexes.push(...found);
    }
    if (indexes.length) keys.set(table, [...new Set(indexes)]);
  }
  return keys;
}

/** Thrown when the plan holds something whose reads cannot be known (a computed field). */
const OPAQUE = new Error('a computed field');

class KeyWalk {
  /** Table → the key values its reads are keyed by; null once one read is not keyed. */
  readonly reads = new Map<string, Set<Param> | null>();

  constructor(
    private readonly noticeKeys: ReadonlyMap<string, string>,
    private readonly underViews: ReadonlyMap<string, readonly string[]>,
  ) {}

  /** The column a collection's table's change notices name (`Metadata.changeNoticeKeys`); undefined: none. */
  keyColumn(collection: Collection): string | undefined {
    return this.noticeKeys.get(tableKey(collection));
  }

  /** A read of `collection`'s rows (keyed by `key`, or not), with its role's row filter. */
  node(collection: Collection, key: Param | null, withFilter: boolean): void {
    const known = this.reads.get(collection.table);
    if (key === null) this.reads.set(collection.table, null);
    else if (known === undefined) this.reads.set(collection.table, new Set([key]));
    else known?.add(key);
    for (const table of this.underViews.get(tableKey(collection)) ?? []) this.reads.set(table, null);
    if (withFilter && collection.selectFilter) this.where(collection, collection.selectFilter as BoolExp, key, false);
  }

  related(from: Collection, relationship: Relationship, target: Collection, key: Param | null, withFilter: boolean): Param | null {
    const [ownKey, theirKey] = [this.keyColumn(from), this.keyColumn(target)];
    const joinsKeys = ownKey !== undefined && theirKey !== undefined && relationship.mapping.some(([own, theirs]) => own === ownKey && theirs === theirKey);
    const targetKey = key !== null && joinsKeys ? key : null;
    this.node(target, targetKey, withFilter);
    return targetKey;
  }

  where(collection: Collection, where: BoolExp | null, key: Param | null, withFilters = true): void {
    if (!where) return;
    switch (where.kind) {
      case 'and':
      case 'or':
        for (const item of where.items) this.where(collection, item, key, withFilters);
        return;
      case 'not':
        return this.where(collection, where.item, key, withFilters);
      case 'relationship': {
        const targetKey = this.related(collection, where.relationship, where.target, key, withFilters);
        return this.where(where.target, where.where, targetKey, withFilters);
      }
      case 'computed':
      case 'computedValue':
        throw OPAQUE;
      default:
        return;
    }
  }

  query(collection: Collection, query: ListQuery, key: Param | null): void {
    this.where(collection, query.where, key);
    for (const item of query.orderBy) this.order(collection, item, key);
  }

  order(collection: Collection, item: OrderItem, key: Param | null): void {
    // A computed field, of the row or aggregated over related rows, reads what no notice key names.
    if (item.kind === 'computed' || (item.kind === 'aggregate' && item.field && !('source' in item.field))) throw OPAQUE;
    let at = collection;
    let atKey = key;
    for (const step of item.path) {
      atKey = this.related(at, step.relationship, step.target, atKey, true);
      at = step.target;
    }
    if (item.kind === 'aggregate') this.related(at, item.relationship, item.target, atKey, true);
  }

  selection(collection: Collection, selection: Selection, key: Param | null): void {
    for (const item of selection) {
      switch (item.kind) {
        case 'computed':
        case 'computedRows':
          throw OPAQUE;
        case 'object': {
          const targetKey = this.related(collection, item.relationship, item.target, key, true);
          this.selection(item.target, item.selection, targetKey);
          break;
        }
        case 'array': {
          const targetKey = this.related(collection, item.relationship, item.target, key, true);
          this.query(item.target, item.query, targetKey);
          this.selection(item.target, item.selection, targetKey);
          break;
        }
        case 'arrayAggregate': {
          const targetKey = this.related(collection, item.relationship, item.target, key, true);
          this.query(item.target, item.query, targetKey);
          this.aggregate(item.target, item.aggregate, targetKey);
          break;
        }
        default:
          break;
      }
    }
  }

  aggregate(collection: Collection, aggregate: AggregateSelection, key: Param | null): void {
    for (const item of aggregate) {
      if (item.kind === 'nodes') this.selection(collection, item.selection, key);
      // An aggregated computed field (`sum { payoff }`) calls its function for every row, as listing it does.
      else if (item.kind === 'aggregate' && item.fields.some((field) => field.kind === 'function' && field.items.some((value) => value.kind === 'computed'))) throw OPAQUE;
    }
  }
}

/** The value a root list's `where` pins its notice key to: a `<notice key> _eq <value>` among its top-level conjuncts. */
function keyOfWhere(keyColumn: string | undefined, where: BoolExp | null): Param | null {
  if (!where || keyColumn === undefined) return null;
  if (where.kind === 'and') {
    for (const item of where.items) {
      const key = keyOfWhere(keyColumn, item);
      if (key) return key;
    }
    return null;
  }
  const pinned = where.kind === 'compare' && where.operator === '_eq' && where.field.source.kind === 'column' && where.field.source.column === keyColumn;
  return pinned && (where.value.kind === 'var' || where.value.kind === 'const') ? where.value : null;
}

/** Where a key value is bound in the statement: a variable at each of its places, a constant at its one. */
function indexesOf(value: Param, params: readonly Param[]): number[] {
  const indexes: number[] = [];
  params.forEach((param, index) => {
    if (value.kind === 'var' && param.kind === 'var' && param.name === value.name) indexes.push(index);
    if (value.kind === 'const' && param.kind === 'const' && param.value === value.value) indexes.push(index);
  });
  return indexes;
}
