import { GraphQLError, type FieldNode, type FragmentDefinitionNode, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import type { Collection } from '../../metadata/index.js';
import { graphqlTypeOf, SCALAR_FOR_TYPE } from '../schema/scalars.js';
import type { ErrorCode } from '../errorCode.js';
import type { PlanOptions } from './argumentValues.js';
import type { BoolExp, OperationPlan, RootField, StreamCursor } from './ir.js';
import { planningContext, type PlanningContext } from './planningContext.js';
import { planFunctionRoot } from './planFunctionRoot.js';

export { checkCount, type PlanOptions } from './argumentValues.js';

export interface PlannedOperation {
  readonly plan: OperationPlan;
  /**
   * False when the plan depends on variable values (a variable used as a whole filter or
   * ordering, or in @skip/@include): such a plan is made per request and not cached.
   */
  readonly reusable: boolean;
  /** A streaming subscription's cursor (`<collection>_stream`), else null. */
  readonly stream: StreamCursor | null;
}

/**
 * The name of the parameter that carries a stream's cursor: a variable no document can declare
 * (GraphQL names cannot hold a space), bound by the subscription to the last value it sent.
 */
export const STREAM_CURSOR_VARIABLE = 'stream cursor';

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
  const context = planningContext(schema, operation, fragments, variables, options);
  const { collectFields, roleOf, args: argsOf, atArgument, planListQuery, planSelection, planAggregate, subSelection, toParam, isReusable } = context;
  const rootType = operation.operation === 'subscription' ? schema.getSubscriptionType()! : schema.getQueryType()!;
  const rootFields: RootField[] = [];
  let stream: StreamCursor | null = null;
  const fields = collectFields(operation.selectionSet);
  for (const [alias, nodes] of fields) {
    const node = nodes[0]!;
    if (node.name.value === '__typename') {
      rootFields.push({ kind: 'typename', alias, value: rootType.name });
      continue;
    }
    if (node.name.value === '__schema' || node.name.value === '__type') continue;
    const role = roleOf(rootType, node);
    if (role.kind === 'functionRoot') {
      rootFields.push(planFunctionRoot(context, role, alias, nodes));
      continue;
    }
    if (role.kind !== 'root') throw new Error(`unexpected root field ${node.name.value}`);
    const collection = role.collection;
    if (role.root === 'select_stream') {
      if (fields.size !== 1) throw new GraphQLError('a streaming subscription has exactly one root field', { nodes: node, extensions: { code: 'validation-failed' satisfies ErrorCode } });
      const planned = planStream(context, collection, node, alias);
      const selection = planSelection(collection, subSelection(nodes));
      const cursorItem = selection.find((item) => item.kind === 'column' && item.field === planned.cursor.field);
      if (!cursorItem) throw new GraphQLError(`a stream must select its cursor field ${planned.cursor.field.name}, from which it resumes`, { nodes: node, extensions: { code: 'validation-failed' satisfies ErrorCode } });
      stream = { ...planned.cursor, cursorAlias: cursorItem.alias };
      rootFields.push({ kind: 'select', alias, collection, query: planned.query, selection });
    } else if (role.root === 'select') {
      rootFields.push({ kind: 'select', alias, collection, query: planListQuery(collection, node, 'list'), selection: planSelection(collection, subSelection(nodes)) });
    } else if (role.root === 'select_aggregate') {
      rootFields.push({ kind: 'selectAggregate', alias, collection, query: planListQuery(collection, node, 'aggregate'), aggregate: planAggregate(collection, subSelection(nodes)) });
    } else {
      const fieldArgs = argsOf(node);
      const key = collection.primaryKey.map((field) => ({ field, value: atArgument(node, field.name, () => toParam(fieldArgs[field.name] ?? null, graphqlTypeOf(field.type))) }));
      rootFields.push({ kind: 'selectByPk', alias, collection, key, selection: planSelection(collection, subSelection(nodes)) });
    }
  }
  return { plan: { rootFields, sharedScans: [] }, reusable: isReusable(), stream };
}

/**
 * `<c>_stream(batch_size:, cursor: [{initial_value: {<field>: v}, ordering: ASC|DESC}], where:)`
 * as a list: the rows after the cursor (`<field> > cursor`, or `<` descending) that pass `where`,
 * ordered by the cursor field, `batch_size` of them and the rows that tie with the last one on the
 * cursor (which the next batch, after that value, would skip). The cursor is the parameter
 * `STREAM_CURSOR_VARIABLE`, so one plan serves every position of every subscriber.
 */
function planStream(context: PlanningContext, collection: Collection, node: FieldNode, alias: string): { query: ReturnType<PlanningContext['planListQuery']>; cursor: Omit<StreamCursor, 'cursorAlias'> } {
  const { args: argsOf, asList, atArgument, enumValue, planWhere, toParam } = context;
  const args = argsOf(node);
  const refuse = (message: string): never => {
    throw new GraphQLError(message, { extensions: { code: 'validation-failed' satisfies ErrorCode } });
  };
  return atArgument(node, 'cursor', () => {
    const cursors = asList(args.cursor);
    if (cursors.length !== 1) refuse('a stream takes exactly one cursor');
    const cursor = cursors[0] as { initial_value?: Record<string, unknown>; ordering?: unknown };
    const initial = cursor.initial_value;
    const names = initial && typeof initial === 'object' ? Object.keys(initial) : [];
    if (names.length !== 1) refuse('a stream cursor\'s initial_value names exactly one field');
    const field = collection.fields.get(names[0]!)!;
    const ordering = (enumValue(cursor.ordering as never) ?? 'ASC') === 'DESC' ? 'DESC' : 'ASC';
    const initialValue = toParam((initial as Record<string, never>)[field.name] ?? null, graphqlTypeOf(field.type));
    // Rows are read after the cursor: after null, none ever is (a variable's null is refused when bound).
    if (initialValue.kind === 'const' && initialValue.value === null) refuse(`a stream cursor's initial_value cannot be null: give the ${field.name} to read after`);
    const after: BoolExp = { kind: 'compare', field, operator: ordering === 'ASC' ? '_gt' : '_lt', value: { kind: 'var', name: STREAM_CURSOR_VARIABLE, cast: 'value' } };
    const where = atArgument(node, 'where', () => (args.where === undefined || args.where === null ? null : planWhere(collection, args.where)));
    const batchSize = atArgument(node, 'batch_size', () => context.countLimit(args.batch_size, 'batch_size'));
    return {
      query: { where: where ? { kind: 'and', items: [where, after] } : after, distinctOn: [], orderBy: [{ kind: 'column', path: [], field, direction: ordering === 'ASC' ? 'asc' : 'desc' }], limit: batchSize, offset: null, withTies: true },
      cursor: { alias, field, ordering, initialValue },
    };
  });
}
