import { GraphQLError, GraphQLString, type FieldNode, type GraphQLObjectType, type GraphQLSchema } from 'graphql';
import type { Collection, ComputedField, Field } from '../../metadata/index.js';
import { fieldRole, type FieldRole } from '../schema/buildSchema.js';
import { SCALAR_FOR_TYPE } from '../schema/scalars.js';
import { Literal, VariableRef, type ArgValue, type ArgumentValues } from './argumentValues.js';
import type { fieldCollector } from './collectFields.js';
import type { AggregateField, AggregateFunctionItem, AggregateSelection, Selection, SelectionItem } from './ir.js';
import type { Param } from './params.js';
import type { listQueryPlanner } from './planListQuery.js';
import type { ErrorCode } from '../errorCode.js';
import { parseJsonPath } from './jsonPath.js';
import { argumentRangeProblem, type BoundedArgument } from './argumentRange.js';

/** Selection sets → `Selection` (columns, computed fields, relationships) and `AggregateSelection`. */
export function selectionPlanner(
  schema: GraphQLSchema,
  { argsOf, atArgument, toParam, fromJs, variableValue, asList, enumValue, readNow, countLimit }: ArgumentValues,
  { subSelection }: Pick<ReturnType<typeof fieldCollector>, 'subSelection'>,
  { planListQuery }: ReturnType<typeof listQueryPlanner>,
) {
  function roleOf(parent: GraphQLObjectType, node: FieldNode): FieldRole {
    const role = fieldRole(parent.getFields()[node.name.value]?.extensions);
    if (!role) throw new Error(`no role for ${parent.name}.${node.name.value}`);
    return role;
  }

  function objectType(name: string): GraphQLObjectType {
    return schema.getType(name) as GraphQLObjectType;
  }

  /** A jsonb field's `path` argument (Hasura's JSON select path) as `#>`'s steps, a parameter; read now (its steps shape nothing but a value). */
  function jsonPathOf(node: FieldNode): Param | null {
    const text = readNow(argsOf(node)['path'], GraphQLString);
    if (text === undefined || text === null) return null;
    const parsed = parseJsonPath(String(text));
    if ('error' in parsed) throw new GraphQLError(`path of ${node.name.value}: ${parsed.error}`, { nodes: node, extensions: { code: 'validation-failed' satisfies ErrorCode } });
    return { kind: 'const', value: parsed.steps };
  }

  /** A computed field's `args`, one parameter each given (a left-out or null one takes the function's default). */
  function computedArgs(node: FieldNode, { args: types, argumentRanges }: Pick<ComputedField, 'args' | 'argumentRanges'>): Map<string, Param> {
    const given = argsOf(node)['args'];
    const values = given && typeof given === 'object' && !Array.isArray(given) && !(given instanceof VariableRef) && !(given instanceof Literal) ? given : {};
    if (given instanceof VariableRef) throw new GraphQLError(`give the arguments of ${node.name.value} one by one (args: {name: $variable}), not as one variable`, { nodes: node, extensions: { code: 'validation-failed' satisfies ErrorCode } });
    const args = new Map<string, Param>();
    for (const [name, type] of types) {
      const value = (values as Record<string, ArgValue>)[name];
      if (value === undefined || value === null) continue;
      const param = atArgument(node, 'args', () => toParam(value, SCALAR_FOR_TYPE[type]));
      const range = argumentRanges.get(name);
      args.set(name, range ? withinRange(node, { argument: `${name} of ${node.name.value}`, range }, param) : param);
    }
    return args;
  }

  /** A date argument its metadata bounds (`range:`): a literal checked now, a variable marked to be checked when bound (argumentRange.ts). */
  function withinRange(node: FieldNode, bounded: BoundedArgument, param: Param): Param {
    if (param.kind === 'var') return { ...param, dayRange: bounded };
    const problem = param.kind === 'const' ? argumentRangeProblem(bounded, param.value) : null;
    if (problem) throw new GraphQLError(problem, { nodes: node.arguments?.find((a) => a.name.value === 'args') ?? node, extensions: { code: 'validation-failed' satisfies ErrorCode } });
    return param;
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
        case 'column': {
          const path = role.field.type === 'jsonb' || role.field.type === 'json' ? jsonPathOf(node) : null;
          items.push(path ? { kind: 'column', alias, field: role.field, path } : { kind: 'column', alias, field: role.field });
          break;
        }
        case 'computed':
          items.push({ kind: 'computed', alias, field: role.field, args: computedArgs(node, role.field) });
          break;
        case 'tableComputed':
          items.push({
            kind: 'computedRows',
            alias,
            field: role.field,
            target: role.target,
            args: computedArgs(node, role.field),
            query: planListQuery(role.target, node, 'list'),
            selection: planSelection(role.target, subSelection(nodes)),
          });
          break;
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
        // `nodes` is a list: with MAX_ROWS set it lists at most that many rows, as any list does.
        items.push({ kind: 'nodes', alias, selection: planSelection(collection, subSelection(nodes)), limit: countLimit(undefined, 'limit', true) });
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
          const distinct = readNow(countArgs.distinct, SCALAR_FOR_TYPE.boolean) === true;
          const json = distinct ? columns.find((field) => field.type === 'json') : undefined;
          if (json) throw new GraphQLError(`count(distinct: true) of ${json.name}: a json field has no equality (PostgreSQL's json)`, { nodes: inner, extensions: { code: 'validation-failed' satisfies ErrorCode } });
          aggregateFields.push({ kind: 'count', alias: innerAlias, columns, distinct });
        } else if (innerRole.kind === 'aggregateFunction') {
          const functionType = objectType(`${collection.name}_${innerRole.fn}_fields`);
          const functionItems: AggregateFunctionItem[] = [];
          for (const [leafAlias, leafNodes] of subSelection(innerNodes)) {
            const leaf = leafNodes[0]!;
            if (leaf.name.value === '__typename') functionItems.push({ kind: 'typename', alias: leafAlias, value: functionType.name });
            else {
              const leafRole = roleOf(functionType, leaf);
              if (leafRole.kind === 'column') functionItems.push({ kind: 'column', alias: leafAlias, field: leafRole.field });
              else if (leafRole.kind === 'computed') functionItems.push({ kind: 'computed', alias: leafAlias, field: leafRole.field });
            }
          }
          aggregateFields.push({ kind: 'function', alias: innerAlias, fn: innerRole.fn, items: functionItems });
        }
      }
      items.push({ kind: 'aggregate', alias, fields: aggregateFields });
    }
    return items;
  }

  return { roleOf, objectType, planSelection, planAggregate };
}
