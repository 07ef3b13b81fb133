import type { FragmentDefinitionNode, GraphQLSchema, OperationDefinitionNode } from 'graphql';
import { SCALAR_FOR_TYPE } from '../schema/scalars.js';
import type { PlanOptions } from './argumentValues.js';
import type { OperationPlan, RootField } from './ir.js';
import { planningContext } from './planningContext.js';

export { checkCount, type PlanOptions } from './argumentValues.js';

export interface PlannedOperation {
  readonly plan: OperationPlan;
  /**
   * False when the plan depends on variable values (a variable used as a whole filter or
   * ordering, or in @skip/@include): such a plan is made per request and not cached.
   */
  readonly reusable: boolean;
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
      const fieldArgs = argsOf(node);
      const key = collection.primaryKey.map((field) => ({ field, value: atArgument(node, field.name, () => toParam(fieldArgs[field.name] ?? null, SCALAR_FOR_TYPE[field.type])) }));
      rootFields.push({ kind: 'selectByPk', alias, collection, key, selection: planSelection(collection, subSelection(nodes)) });
    }
  }
  return { plan: { rootFields, sharedScans: [] }, reusable: isReusable() };
}
