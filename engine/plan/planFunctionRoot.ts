import type { FieldNode } from 'graphql';
import type { FieldRole } from '../schema/buildSchema.js';
import { SCALAR_FOR_TYPE } from '../schema/scalars.js';
import { Literal, type ArgValue } from './argumentValues.js';
import type { Param } from './params.js';
import type { RootField } from './ir.js';
import type { PlanningContext } from './planningContext.js';

/**
 * A tracked function's root field (`branches_near(args: {min_score: 1}, where: …)` or its
 * `_aggregate`) → the collection's list or aggregate whose rows come from the function's call
 * (`ListQuery.rowsFrom`); `where`, `order_by`, paging and the role's filter apply as to the table.
 * An argument given as `null` or left out takes the function's default (a required one cannot be
 * left out: its GraphQL type is non-null).
 */
export function planFunctionRoot(context: PlanningContext, role: Extract<FieldRole, { kind: 'functionRoot' }>, alias: string, nodes: readonly FieldNode[]): RootField {
  const node = nodes[0]!;
  const { fn, collection } = role;
  // `args: $a` (an input-object variable) arrives as its value: that plan is made per request.
  const given = context.args(node)['args'];
  const values = given && typeof given === 'object' && !Array.isArray(given) && !(given instanceof Literal) ? (given as Record<string, ArgValue>) : {};
  const args = new Map<string, Param>();
  for (const [name, { type }] of fn.args) {
    const value = values[name];
    if (value !== undefined && value !== null) args.set(name, context.atArgument(node, 'args', () => context.toParam(value, SCALAR_FOR_TYPE[type])));
  }
  const rowsFrom = { fn, args };
  if (role.root === 'select') {
    const query = context.planListQuery(collection, node, 'list');
    return { kind: 'select', alias, collection, query: { ...query, rowsFrom }, selection: context.planSelection(collection, context.subSelection(nodes)) };
  }
  const query = context.planListQuery(collection, node, 'aggregate');
  return { kind: 'selectAggregate', alias, collection, query: { ...query, rowsFrom }, aggregate: context.planAggregate(collection, context.subSelection(nodes)) };
}
