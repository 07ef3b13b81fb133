import type { FragmentDefinitionNode, GraphQLSchema, OperationDefinitionNode } from 'graphql';
import { argumentValues, type PlanOptions } from './argumentValues.js';
import { fieldCollector } from './collectFields.js';
import { listQueryPlanner } from './planListQuery.js';
import { selectionPlanner } from './planSelection.js';
import { wherePlanner } from './planWhere.js';

/**
 * The planner's pieces for one operation (arguments, filters, selections), shared by the query
 * planner (`planOperation`) and the mutation planner (`planMutation.ts`).
 */
export type PlanningContext = ReturnType<typeof planningContext>;

export function planningContext(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  /** The request's coerced variable values, by name (a `Map`: the names are the client's). */
  variables: ReadonlyMap<string, unknown>,
  options: PlanOptions,
) {
  const values = argumentValues(schema, operation, variables, options);
  const { collectFields, subSelection } = fieldCollector(fragments, values.variableValue);
  const { planWhere } = wherePlanner(values);
  const { planListQuery } = listQueryPlanner(values, { planWhere });
  const { roleOf, objectType, planSelection, planAggregate } = selectionPlanner(schema, values, { subSelection }, { planListQuery });
  const { toParam, jsonbParam, fromJs, readNow, enumValue, asList, argsOf, atArgument, variableValue, schemaCollection, isReusable, countLimit } = values;
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
    isReusable,
    countLimit,
  };
}
