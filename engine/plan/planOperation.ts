import {
  GraphQLError,
  GraphQLList,
  GraphQLNonNull,
  GraphQLString,
  getNamedType,
  isListType,
  isScalarType,
  Kind,
  typeFromAST,
  valueFromAST,
  valueFromASTUntyped,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLInputType,
  type GraphQLObjectType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
} from 'graphql';
import type { Collection, Field } from '../../metadata/index.js';
import { fieldRole, ORDER_BY_DIRECTIONS, type AggregateFunction, type FieldRole, type OrderDirection } from '../schema/buildSchema.js';
import { SCALAR_FOR_TYPE } from '../schema/scalars.js';
import type { Param } from './params.js';
import { patternDialect, patternProblem } from './patternCost.js';
import type {
  AggregateField,
  AggregateFunctionItem,
  AggregateSelection,
  BoolExp,
  ComparisonOperator,
  JsonbOperator,
  ListQuery,
  OperationPlan,
  OrderItem,
  RootField,
  Selection,
  SelectionItem,
} from './ir.js';

export interface PlanOptions {
  /** Applied as the limit of every list without one; a larger limit is an error. */
  readonly maxRows: number | null;
  /** The resolved collections the schema was built from, by name. */
  readonly collections: ReadonlyMap<string, Collection>;
}

export interface PlannedOperation {
  readonly plan: OperationPlan;
  /**
   * False when the plan depends on variable values (a variable used as a whole filter or
   * ordering, or in @skip/@include): such a plan is made per request and not cached.
   */
  readonly reusable: boolean;
}

/** A request variable used as a plain value: it stays a parameter, so the plan is reusable. */
class VariableRef {
  constructor(readonly name: string) {}
}
/** A literal from the document, coerced once its input type is known. */
class Literal {
  constructor(readonly node: ValueNode) {}
}
/** An argument value: literals and variable references inside plain objects and arrays. */
type ArgValue = VariableRef | Literal | ArgValue[] | { [key: string]: ArgValue } | string | number | boolean | null;

/** Deeper boolean expressions are refused: PGlite's parser stack gives out in the hundreds. */
const MAX_FILTER_DEPTH = 64;

const COMPARISON_OPERATORS: ReadonlySet<string> = new Set<ComparisonOperator>([
  '_eq', '_neq', '_gt', '_gte', '_lt', '_lte', '_like', '_nlike', '_ilike', '_nilike', '_regex', '_iregex', '_nregex', '_niregex', '_similar', '_nsimilar',
]);
const JSONB_OPERATORS: ReadonlySet<string> = new Set<JsonbOperator>(['_contains', '_contained_in', '_has_key', '_has_keys_any', '_has_keys_all']);
const AGGREGATE_ORDER_FUNCTIONS: ReadonlySet<string> = new Set<AggregateFunction>(['sum', 'avg', 'min', 'max']);
const KEY_LIST = new GraphQLList(new GraphQLNonNull(GraphQLString));

/**
 * The planner's pieces for one operation (arguments, filters, selections), shared by the query
 * planner (`planOperation`) and the mutation planner (`planMutation.ts`).
 */
export type PlanningContext = ReturnType<typeof planningContext>;

export { VariableRef, Literal, type ArgValue };

export function planningContext(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  /** The request's coerced variable values, by name (a `Map`: the names are the client's). */
  variables: ReadonlyMap<string, unknown>,
  options: PlanOptions,
) {
  let reusable = true;
  const scalarVariables = new Set<string>();
  for (const definition of operation.variableDefinitions ?? []) {
    const type = typeFromAST(schema, definition.type);
    if (type && isScalarType(getNamedType(type))) scalarVariables.add(definition.variable.name.value);
  }

  const variableValue = (name: string): unknown => {
    reusable = false;
    return variables.get(name);
  };

  function toArgValue(node: ValueNode): ArgValue {
    switch (node.kind) {
      case Kind.VARIABLE:
        if (scalarVariables.has(node.name.value)) return new VariableRef(node.name.value);
        return fromJs(variableValue(node.name.value));
      case Kind.OBJECT:
        return Object.fromEntries(node.fields.map((field) => [field.name.value, toArgValue(field.value)]));
      case Kind.LIST:
        return node.values.map(toArgValue);
      case Kind.NULL:
        return null;
      default:
        return new Literal(node);
    }
  }

  function fromJs(value: unknown): ArgValue {
    if (value === undefined || value === null) return null;
    if (Array.isArray(value)) return value.map(fromJs);
    if (typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fromJs(v)]));
    return value as string | number | boolean;
  }

  function toParam(value: ArgValue, type: GraphQLInputType): Param {
    if (value instanceof VariableRef) return { kind: 'var', name: value.name, cast: 'value' };
    if (value instanceof Literal) return { kind: 'const', value: valueFromAST(value.node, type) ?? null };
    if (Array.isArray(value)) {
      const itemType = isListType(type) ? (type.ofType as GraphQLInputType) : type;
      const items = value.map((item) => toParam(item, itemType));
      if (items.every((item) => item.kind === 'const')) return { kind: 'const', value: items.map((item) => (item as { value: unknown }).value) };
      return { kind: 'list', items };
    }
    // A single value where a list is expected is a list of one (GraphQL input coercion).
    if (isListType(type) && value !== null) return { kind: 'const', value: [value] };
    return { kind: 'const', value };
  }

  /**
   * A jsonb value as a parameter (JSON text). A value written inline is an object or list the
   * planner has taken apart (its leaves are literals and variables): it is put back together
   * as JSON text, read now, so the plan depends on those variables' values.
   */
  function jsonbParam(value: ArgValue): Param {
    if (value instanceof VariableRef) return toParam(value, SCALAR_FOR_TYPE.jsonb);
    // A plain string here comes from a variable holding the whole filter or object, which
    // graphql-js has coerced already: the jsonb scalar made it JSON text.
    if (typeof value === 'string') return { kind: 'const', value };
    return { kind: 'const', value: value === null ? null : JSON.stringify(toJs(value)) };
  }

  function toJs(value: ArgValue): unknown {
    if (value instanceof VariableRef) return variableValue(value.name);
    if (value instanceof Literal) return valueFromASTUntyped(value.node);
    if (Array.isArray(value)) return value.map(toJs);
    if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, toJs(inner)]));
    return value;
  }

  /** An enum value (an order_by direction, a column name), read now: it shapes the SQL. */
  function enumValue(value: ArgValue | undefined): string | null {
    if (value === undefined || value === null) return null;
    if (value instanceof VariableRef) return (variableValue(value.name) as string | null) ?? null;
    if (value instanceof Literal) return value.node.kind === Kind.ENUM ? value.node.value : null;
    return typeof value === 'string' ? value : null;
  }

  /** A literal or already-coerced value, read now (structural positions: directions, booleans). */
  function readNow(value: ArgValue | undefined, type: GraphQLInputType): unknown {
    if (value === undefined) return undefined;
    if (value instanceof VariableRef) return variableValue(value.name);
    // A Literal is a leaf (scalar, enum or null): it holds no variable.
    if (value instanceof Literal) return valueFromAST(value.node, type);
    return value;
  }

  function asList(value: ArgValue | undefined): ArgValue[] {
    if (value === undefined || value === null) return [];
    return Array.isArray(value) ? value : [value];
  }

  /** `capped`: a list (not an aggregate) without a limit gets MAX_ROWS as its limit. */
  function countLimit(value: ArgValue | undefined, name: 'limit' | 'offset', capped = false): Param | null {
    const cap: Param | null = capped && name === 'limit' && options.maxRows !== null ? { kind: 'const', value: options.maxRows } : null;
    if (value === undefined || value === null || (value instanceof Literal && value.node.kind === Kind.NULL)) return cap;
    if (value instanceof VariableRef) return { kind: 'var', name: value.name, cast: name === 'limit' && capped ? 'cappedLimit' : name };
    const number = value instanceof Literal ? (valueFromAST(value.node, SCALAR_FOR_TYPE.integer) as number) : (value as number);
    if (number === null || number === undefined) return cap;
    checkCount(number, name, options.maxRows);
    return { kind: 'const', value: number };
  }

  function planWhere(collection: Collection, value: ArgValue, depth = 0): BoolExp {
    if (depth > MAX_FILTER_DEPTH) {
      throw new GraphQLError(`a where expression nests deeper than ${MAX_FILTER_DEPTH} levels`, { extensions: { code: 'validation-failed' } });
    }
    if (value instanceof VariableRef || value instanceof Literal || value === null || typeof value !== 'object' || Array.isArray(value)) {
      // null where → no filter (Hasura treats a null boolean expression as true).
      return { kind: 'and', items: [] };
    }
    const items: BoolExp[] = [];
    for (const [key, inner] of Object.entries(value)) {
      // A null anywhere a boolean expression is expected means "no condition", whether it is
      // written inline or arrives in a variable.
      if (inner === null) continue;
      if (key === '_and' || key === '_or') {
        items.push({ kind: key === '_and' ? 'and' : 'or', items: asList(inner).map((item) => planWhere(collection, item, depth + 1)) });
      } else if (key === '_not') {
        items.push({ kind: 'not', item: planWhere(collection, inner, depth + 1) });
      } else if (collection.fields.has(key)) {
        items.push(...planComparison(collection.fields.get(key)!, inner));
      } else {
        const relationship = collection.relationships.get(key);
        if (!relationship) throw new GraphQLError(`field "${key}" not found in type: '${collection.name}_bool_exp'`, { extensions: { code: 'validation-failed' } });
        const target = schemaCollection(relationship.target);
        items.push({ kind: 'relationship', relationship, target, where: planWhere(target, inner, depth + 1) });
      }
    }
    return items.length === 1 ? items[0]! : { kind: 'and', items };
  }

  function planComparison(field: Field, value: ArgValue): BoolExp[] {
    if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof VariableRef || value instanceof Literal) return [];
    const scalar = SCALAR_FOR_TYPE[field.type];
    const items: BoolExp[] = [];
    for (const [operator, operand] of Object.entries(value)) {
      if (field.type === 'jsonb' && JSONB_OPERATORS.has(operator)) {
        const keys = operator === '_has_key' ? toParam(operand, GraphQLString) : toParam(operand, KEY_LIST);
        const param = operator === '_contains' || operator === '_contained_in' ? jsonbParam(operand) : keys;
        items.push({ kind: 'jsonb', field, operator: operator as JsonbOperator, value: param });
      } else if (field.type === 'jsonb' && operator === '_cast') {
        // `_cast: {String: {…}}`: the String comparisons apply to the field's JSON text.
        if (operand === null || typeof operand !== 'object' || Array.isArray(operand) || operand instanceof VariableRef || operand instanceof Literal) continue;
        const inner = operand.String;
        if (inner === undefined || inner === null) continue;
        const as: Field = { name: field.name, type: 'text', source: field.source };
        const comparisons = planComparison(as, inner);
        items.push({ kind: 'cast', field, as, where: comparisons.length === 1 ? comparisons[0]! : { kind: 'and', items: comparisons } });
      } else if (COMPARISON_OPERATORS.has(operator)) {
        items.push({ kind: 'compare', field, operator: operator as ComparisonOperator, value: patternChecked(operator, toParam(operand, scalar)) });
      } else if (operator === '_in' || operator === '_nin') {
        items.push({ kind: 'in', field, negated: operator === '_nin', values: toParam(operand, new GraphQLList(new GraphQLNonNull(scalar))) });
      } else if (operator === '_is_null') {
        items.push({ kind: 'isNull', field, value: toParam(operand, SCALAR_FOR_TYPE.boolean) });
      } else {
        throw new GraphQLError(`unknown operator ${operator}`, { extensions: { code: 'validation-failed' } });
      }
    }
    return items;
  }

  /**
   * A regular expression or SIMILAR TO pattern is checked before anything runs (`patternCost.ts`):
   * one written in the document now, one in a variable when the variable is bound (the mark
   * `pattern` on its parameter; the plan stays reusable).
   */
  function patternChecked(operator: string, param: Param): Param {
    const dialect = patternDialect(operator);
    if (!dialect) return param;
    if (param.kind === 'var') return { ...param, pattern: dialect };
    if (param.kind === 'const' && typeof param.value === 'string') {
      const problem = patternProblem(param.value, dialect);
      if (problem) throw new GraphQLError(`${operator}: ${problem}`, { extensions: { code: 'validation-failed' } });
    }
    return param;
  }

  function planOrderBy(collection: Collection, value: ArgValue | undefined): OrderItem[] {
    const items: OrderItem[] = [];
    const directionOf = (inner: ArgValue): OrderDirection | null => {
      const direction = enumValue(inner) as OrderDirection | null;
      if (direction !== null && !ORDER_BY_DIRECTIONS.includes(direction)) throw new GraphQLError(`invalid order_by direction ${String(direction)}`, { extensions: { code: 'validation-failed' } });
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
            const field = target.fields.get(fieldName);
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
    if (!orderBy.length) return { distinctOn, orderBy: distinctOn.map((field) => ({ kind: 'column', path: [], field, direction: 'asc' })) };
    const leading = orderBy.slice(0, distinctOn.length);
    const matches = leading.length === distinctOn.length && leading.every((item) => item.kind === 'column' && !item.path.length && distinctOn.includes(item.field)) && new Set(leading.map((item) => item.field)).size === distinctOn.length;
    if (!matches) {
      const names = distinctOn.map((field) => field.name).join(', ');
      return atArgument(node, 'distinct_on', () => {
        throw new GraphQLError(`"distinct_on" columns must match initial "order_by" columns: order_by must start with ${names} (PostgreSQL's DISTINCT ON)`, { extensions: { code: 'validation-failed' } });
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

  /**
   * Runs the planning of one argument; a GraphQL error it throws without a place gets the
   * argument's (so `locations` point an editor at `limit: -1`, or at the variable's use).
   */
  function atArgument<T>(node: FieldNode, name: string, plan: () => T): T {
    try {
      return plan();
    } catch (error) {
      if (!(error instanceof GraphQLError) || error.nodes?.length) throw error;
      const argument = node.arguments?.find((a) => a.name.value === name);
      throw new GraphQLError(error.message, { nodes: argument ?? node, extensions: error.extensions, originalError: error });
    }
  }

  const schemaCollection = (name: string): Collection => options.collections.get(name)!;

  function argsOf(node: FieldNode): Record<string, ArgValue> {
    return Object.fromEntries((node.arguments ?? []).map((argument) => [argument.name.value, toArgValue(argument.value)]));
  }

  function included(node: { directives?: readonly { name: { value: string }; arguments?: readonly { name: { value: string }; value: ValueNode }[] }[] }): boolean {
    for (const directive of node.directives ?? []) {
      const name = directive.name.value;
      if (name !== 'skip' && name !== 'include') continue;
      const argument = directive.arguments?.find((a) => a.name.value === 'if');
      if (!argument) continue;
      const value = argument.value.kind === Kind.VARIABLE ? Boolean(variableValue(argument.value.name.value)) : argument.value.kind === Kind.BOOLEAN && argument.value.value;
      if (name === 'skip' ? value : !value) return false;
    }
    return true;
  }

  /** GraphQL's CollectFields: response key → the field nodes merged under it, in order. */
  function collectFields(selectionSet: SelectionSetNode, into = new Map<string, FieldNode[]>(), visited = new Set<string>()): Map<string, FieldNode[]> {
    for (const selection of selectionSet.selections) {
      if (!included(selection)) continue;
      if (selection.kind === Kind.FIELD) {
        const key = selection.alias?.value ?? selection.name.value;
        const list = into.get(key);
        if (list) list.push(selection);
        else into.set(key, [selection]);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        collectFields(selection.selectionSet, into, visited);
      } else {
        const name = selection.name.value;
        if (visited.has(name)) continue;
        visited.add(name);
        const fragment = fragments.get(name);
        if (fragment) collectFields(fragment.selectionSet, into, visited);
      }
    }
    return into;
  }

  function subSelection(nodes: readonly FieldNode[]): Map<string, FieldNode[]> {
    const merged = new Map<string, FieldNode[]>();
    // One `visited` for all the merged nodes: a fragment spread under several of them adds its
    // fields once, so the nodes per level stay within the document's size (no fragment bomb).
    const visited = new Set<string>();
    for (const node of nodes) if (node.selectionSet) collectFields(node.selectionSet, merged, visited);
    return merged;
  }

  function roleOf(parent: GraphQLObjectType, node: FieldNode): FieldRole {
    const role = fieldRole(parent.getFields()[node.name.value]?.extensions);
    if (!role) throw new Error(`no role for ${parent.name}.${node.name.value}`);
    return role;
  }

  function objectType(name: string): GraphQLObjectType {
    return schema.getType(name) as GraphQLObjectType;
  }

  function planSelection(collection: Collection, fields: Map<string, FieldNode[]>): Selection {
    const parent = objectType(collection.name);
    const items: SelectionItem[] = [];
    for (const [alias, nodes] of fields) {
      const node = nodes[0]!;
      if (node.name.value === '__typename') {
        items.push({ kind: 'typename', alias, value: collection.name });
        continue;
      }
      const role = roleOf(parent, node);
      switch (role.kind) {
        case 'column':
          items.push({ kind: 'column', alias, field: role.field });
          break;
        case 'computed': {
          const given = argsOf(node)['args'];
          const values = given && typeof given === 'object' && !Array.isArray(given) && !(given instanceof VariableRef) && !(given instanceof Literal) ? given : {};
          if (given instanceof VariableRef) throw new GraphQLError(`give the arguments of ${node.name.value} one by one (args: {name: $variable}), not as one variable`, { nodes: node, extensions: { code: 'validation-failed' } });
          const args = new Map<string, Param>();
          for (const [name, type] of role.field.args) {
            const value = (values as Record<string, ArgValue>)[name];
            if (value !== undefined && value !== null) args.set(name, atArgument(node, 'args', () => toParam(value, SCALAR_FOR_TYPE[type])));
          }
          items.push({ kind: 'computed', alias, field: role.field, args });
          break;
        }
        case 'objectRelationship':
          items.push({ kind: 'object', alias, relationship: role.relationship, target: role.target, selection: planSelection(role.target, subSelection(nodes)) });
          break;
        case 'arrayRelationship':
          items.push({
            kind: 'array',
            alias,
            relationship: role.relationship,
            target: role.target,
            query: planListQuery(role.target, node, 'list'),
            selection: planSelection(role.target, subSelection(nodes)),
          });
          break;
        case 'arrayAggregate':
          items.push({
            kind: 'arrayAggregate',
            alias,
            relationship: role.relationship,
            target: role.target,
            query: planListQuery(role.target, node, 'aggregate'),
            aggregate: planAggregate(role.target, subSelection(nodes)),
          });
          break;
        default:
          throw new Error(`unexpected field ${node.name.value} in ${collection.name}`);
      }
    }
    return items;
  }

  function planAggregate(collection: Collection, fields: Map<string, FieldNode[]>): AggregateSelection {
    const aggregateType = objectType(`${collection.name}_aggregate`);
    const fieldsType = objectType(`${collection.name}_aggregate_fields`);
    const items: AggregateSelection[number][] = [];
    for (const [alias, nodes] of fields) {
      const node = nodes[0]!;
      if (node.name.value === '__typename') {
        items.push({ kind: 'typename', alias, value: aggregateType.name });
        continue;
      }
      const role = roleOf(aggregateType, node);
      if (role.kind === 'nodes') {
        items.push({ kind: 'nodes', alias, selection: planSelection(collection, subSelection(nodes)) });
        continue;
      }
      const aggregateFields: AggregateField[] = [];
      for (const [innerAlias, innerNodes] of subSelection(nodes)) {
        const inner = innerNodes[0]!;
        if (inner.name.value === '__typename') {
          aggregateFields.push({ kind: 'typename', alias: innerAlias, value: fieldsType.name });
          continue;
        }
        const innerRole = roleOf(fieldsType, inner);
        if (innerRole.kind === 'count') {
          const countArgs = argsOf(inner);
          const columnsArg = countArgs.columns instanceof VariableRef ? fromJs(variableValue(countArgs.columns.name)) : countArgs.columns;
          const columns = asList(columnsArg)
            .map((name) => collection.fields.get(enumValue(name) ?? ''))
            .filter((field): field is Field => field !== undefined);
          aggregateFields.push({ kind: 'count', alias: innerAlias, columns, distinct: readNow(countArgs.distinct, SCALAR_FOR_TYPE.boolean) === true });
        } else if (innerRole.kind === 'aggregateFunction') {
          const functionType = objectType(`${collection.name}_${innerRole.fn}_fields`);
          const functionItems: AggregateFunctionItem[] = [];
          for (const [leafAlias, leafNodes] of subSelection(innerNodes)) {
            const leaf = leafNodes[0]!;
            if (leaf.name.value === '__typename') functionItems.push({ kind: 'typename', alias: leafAlias, value: functionType.name });
            else {
              const leafRole = roleOf(functionType, leaf);
              if (leafRole.kind === 'column') functionItems.push({ kind: 'column', alias: leafAlias, field: leafRole.field });
            }
          }
          aggregateFields.push({ kind: 'function', alias: innerAlias, fn: innerRole.fn, items: functionItems });
        }
      }
      items.push({ kind: 'aggregate', alias, fields: aggregateFields });
    }
    return items;
  }

  return {
    toParam,
    jsonbParam,
    fromJs,
    readNow,
    enumValue,
    asList,
    planWhere,
    planSelection,
    planAggregate,
    planListQuery,
    collectFields,
    subSelection,
    args: argsOf,
    atArgument,
    roleOf,
    objectType,
    variableValue,
    schemaCollection,
    isReusable: (): boolean => reusable,
  };
}

/**
 * Turns a validated operation into the query IR. Assumes the document passed validation
 * against `schema`; user-value problems (a negative limit, say) become GraphQL errors.
 */
export function planOperation(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  variables: ReadonlyMap<string, unknown>,
  options: PlanOptions,
): PlannedOperation {
  const { collectFields, roleOf, args: argsOf, atArgument, planListQuery, planSelection, planAggregate, subSelection, toParam, isReusable } = planningContext(
    schema,
    operation,
    fragments,
    variables,
    options,
  );
  const rootType = schema.getQueryType()!;
  const rootFields: RootField[] = [];
  for (const [alias, nodes] of collectFields(operation.selectionSet)) {
    const node = nodes[0]!;
    if (node.name.value === '__typename') {
      rootFields.push({ kind: 'typename', alias, value: rootType.name });
      continue;
    }
    if (node.name.value === '__schema' || node.name.value === '__type') continue;
    const role = roleOf(rootType, node);
    if (role.kind !== 'root') throw new Error(`unexpected root field ${node.name.value}`);
    const collection = role.collection;
    if (role.root === 'select') {
      rootFields.push({ kind: 'select', alias, collection, query: planListQuery(collection, node, 'list'), selection: planSelection(collection, subSelection(nodes)) });
    } else if (role.root === 'select_aggregate') {
      rootFields.push({ kind: 'selectAggregate', alias, collection, query: planListQuery(collection, node, 'aggregate'), aggregate: planAggregate(collection, subSelection(nodes)) });
    } else {
      const keyType = SCALAR_FOR_TYPE[collection.primaryKey.type];
      const fieldArgs = argsOf(node);
      rootFields.push({ kind: 'selectByPk', alias, collection, key: atArgument(node, collection.primaryKey.name, () => toParam(fieldArgs[collection.primaryKey.name] ?? null, keyType)), selection: planSelection(collection, subSelection(nodes)) });
    }
  }
  return { plan: { rootFields, sharedScans: [] }, reusable: isReusable() };
}

/** Limits and offsets are whole numbers ≥ 0; a limit is at most MAX_ROWS when that is set. */
export function checkCount(value: unknown, name: 'limit' | 'offset', maxRows: number | null): number {
  // GraphQL's Int already stops values past 2^31 - 1; the bound is restated so no other way in
  // (a const plan, a future caller) can hand PostgreSQL a count past its integer.
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0 || value > 2_147_483_647) {
    throw new GraphQLError(`${name} must be a whole number from 0 to 2147483647, not ${JSON.stringify(value)}`, { extensions: { code: 'validation-failed' } });
  }
  if (name === 'limit' && maxRows !== null && value > maxRows) {
    throw new GraphQLError(`limit ${value} is over the maximum of ${maxRows} rows per list (MAX_ROWS)`, { extensions: { code: 'validation-failed' } });
  }
  return value;
}
