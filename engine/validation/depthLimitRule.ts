import { GraphQLError, type ASTVisitor, type ValidationContext } from 'graphql';
import { foldSelections, fragmentsOf, type SelectionFold } from '../document/foldSelections.js';
import type { ErrorCode } from '../errorCode.js';

/** Depth of a selection set: introspection fields (`__schema`, `__type`, `__typename`) count 0. */
const DEPTH: SelectionFold<number> = {
  field: (field, nested) => (field.name.value.startsWith('__') ? 0 : field.selectionSet ? 1 + nested(field.selectionSet) : 1),
  combine: Math.max,
  empty: 0,
};

/**
 * Rejects operations whose selections nest deeper than `maxDepth` (fragments followed).
 * Introspection fields are not counted: GraphiQL's standard introspection query is deep.
 *
 * Linear in the document: the depth of each fragment is computed once and remembered by name
 * for the whole document (`foldSelections`), so a fragment spread many times (`fragment G0 {
 * ...G1 ...G1 }`, `G1 { ...G2 ...G2 }`, …) costs one walk, not one per spread. A fragment inside
 * a cycle counts as depth 0 here (graphql-js's NoFragmentCyclesRule reports the cycle).
 */
export function depthLimitRule(maxDepth: number) {
  return (context: ValidationContext): ASTVisitor => {
    const fragments = fragmentsOf(context.getDocument());
    const fragmentDepths = new Map<string, number>();
    return {
      OperationDefinition(node) {
        const depth = foldSelections(node.selectionSet, fragments, DEPTH, fragmentDepths);
        if (depth > maxDepth) {
          context.reportError(
            new GraphQLError(`query depth ${depth} is over the limit of ${maxDepth} (MAX_QUERY_DEPTH)`, { nodes: [node], extensions: { code: 'validation-failed' satisfies ErrorCode } }),
          );
        }
      },
    };
  };
}
