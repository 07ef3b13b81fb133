import { GraphQLError, type FieldNode } from 'graphql';
import type { Collection, Field } from '../../metadata/index.js';
import { ORDER_BY_DIRECTIONS, STATISTICAL_FUNCTIONS, type AggregateFunction, type OrderDirection } from '../schema/buildSchema.js';
import { Literal, VariableRef, type ArgValue, type ArgumentValues } from './argumentValues.js';
import type { ListQuery, OrderItem } from './ir.js';
import type { wherePlanner } from './planWhere.js';
import type { ErrorCode } from '../errorCode.js';

const AGGREGATE_ORDER_FUNCTIONS: ReadonlySet<string> = new Set<AggregateFunction>(['sum', 'avg', 'min', 'max', ...STATISTICAL_FUNCTIONS]);

/** A list's or aggregate's arguments → `ListQuery`: `where`, `order_by`, `distinct_on`, `limit`, `offset`. */
export function listQueryPlanner(
  { enumValue, asList, fromJs, variableValue, schemaCollection, argsOf, atArgument, countLimit }: ArgumentValues,
  { planWhere }: ReturnType<typeof wherePlanner>,
) {
  function planOrderBy(collection: Collection, value: ArgValue | undefined): OrderItem[] {
    const items: OrderItem[] = [];
    const directionOf = (inner: ArgValue): OrderDirection | null => {
      const direction = enumValue(inner) as OrderDirection | null;
      if (direction !== null && !ORDER_BY_DIRECTIONS.includes(direction)) throw new GraphQLError(`invalid order_by direction ${String(direction)}`, { extensions: { code: 'validation-failed' satisfies ErrorCode } });
      return direction;
    };
    const isObject = (entry: ArgValue): entry is { [key: string]: ArgValue } =>
      entry !== null && typeof entry === 'object' && !Array.isArray(entry) && !(entry instanceof VariableRef) && !(entry instanceof Literal);
    /** `{count: desc, sum: {amount: asc}, …}` of `<relationship>_aggregate`, in the order written. */
    const walkAggregate = (relationshipName: string, current: Collection, entry: ArgValue, path: OrderItem['path']): void => {
      const relationship = current.relationships.get(relationshipName)!;
      const target = schemaCollection(relationship.target);
      if (!isObject(entry)) return;
      for (const [fn, inner] of Object.entries(entry)) {
        if (fn === 'count') {
          const direction = directionOf(inner);
          if (direction !== null) items.push({ kind: 'aggregate', path, relationship, target, fn: 'count', field: null, direction });
        } else if (AGGREGATE_ORDER_FUNCTIONS.has(fn) && isObject(inner)) {
          for (const [fieldName, fieldDirection] of Object.entries(inner)) {
            const direction = directionOf(fieldDirection);
            // A field, or a scalar computed field: the schema offers what the aggregate field offers.
            const field = target.fields.get(fieldName) ?? target.computedFields.get(fieldName);
            if (direction !== null && field) items.push({ kind: 'aggregate', path, relationship, target, fn: fn as AggregateFunction, field, direction });
          }
        }
      }
    };
    const walk = (current: Collection, entry: ArgValue, path: OrderItem['path']): void => {
      if (!isObject(entry)) return;
      for (const [key, inner] of Object.entries(entry)) {
        const field = current.fields.get(key);
        if (field) {
          const direction = directionOf(inner);
          if (direction === null) continue;
          items.push({ kind: 'column', path, field, direction });
        } else if (current.computedFields.has(key)) {
          // The schema offers a computed field in order_by with a stored form or without arguments.
          const direction = directionOf(inner);
          if (direction !== null) items.push({ kind: 'computed', path, collection: current, field: current.computedFields.get(key)!, direction });
        } else if (!current.relationships.has(key) && key.endsWith('_aggregate') && current.relationships.has(key.slice(0, -'_aggregate'.length))) {
          walkAggregate(key.slice(0, -'_aggregate'.length), current, inner, path);
        } else {
          const relationship = current.relationships.get(key)!;
          const target = schemaCollection(relationship.target);
          walk(target, inner, [...path, { relationship, target }]);
        }
      }
    };
    for (const entry of asList(value)) walk(collection, entry, []);
    return items;
  }

  /**
   * `distinct_on` and `order_by` together: PostgreSQL's DISTINCT ON needs the ordering to start
   * with the distinct fields (in any order among themselves), so Hasura's rule is checked here
   * with a clear error; without an `order_by`, the rows are ordered by the distinct fields,
   * ascending (each group then keeps its row with the lowest primary key).
   */
  function planDistinct(collection: Collection, node: FieldNode, value: ArgValue | undefined, orderBy: OrderItem[]): { distinctOn: Field[]; orderBy: OrderItem[] } {
    const columns = value instanceof VariableRef ? fromJs(variableValue(value.name)) : value;
    const distinctOn: Field[] = [];
    for (const name of asList(columns)) {
      const field = collection.fields.get(enumValue(name) ?? '');
      if (field && !distinctOn.includes(field)) distinctOn.push(field);
    }
    if (!distinctOn.length) return { distinctOn, orderBy };
    const json = distinctOn.find((field) => field.type === 'json');
    if (json) return atArgument(node, 'distinct_on', () => {
      throw new GraphQLError(`"distinct_on" ${json.name}: a json field has no equality (PostgreSQL's json; jsonb has)`, { extensions: { code: 'validation-failed' satisfies ErrorCode } });
    });
    if (!orderBy.length) return { distinctOn, orderBy: distinctOn.map((field) => ({ kind: 'column', path: [], field, direction: 'asc' })) };
    const leading = orderBy.slice(0, distinctOn.length);
    const matches = leading.length === distinctOn.length && leading.every((item) => item.kind === 'column' && !item.path.length && distinctOn.includes(item.field)) && new Set(leading.map((item) => item.field)).size === distinctOn.length;
    if (!matches) {
      const names = distinctOn.map((field) => field.name).join(', ');
      return atArgument(node, 'distinct_on', () => {
        throw new GraphQLError(`"distinct_on" columns must match initial "order_by" columns: order_by must start with ${names} (PostgreSQL's DISTINCT ON)`, { extensions: { code: 'validation-failed' satisfies ErrorCode } });
      });
    }
    return { distinctOn, orderBy };
  }

  function planListQuery(collection: Collection, node: FieldNode, kind: 'list' | 'aggregate'): ListQuery {
    const args = argsOf(node);
    const ordered = atArgument(node, 'order_by', () => planOrderBy(collection, args.order_by));
    const { distinctOn, orderBy } = planDistinct(collection, node, args.distinct_on, ordered);
    return {
      where: atArgument(node, 'where', () => (args.where === undefined || args.where === null ? null : planWhere(collection, args.where))),
      distinctOn,
      orderBy,
      limit: atArgument(node, 'limit', () => countLimit(args.limit, 'limit', kind === 'list')),
      offset: atArgument(node, 'offset', () => countLimit(args.offset, 'offset')),
    };
  }

  return { planListQuery };
}
