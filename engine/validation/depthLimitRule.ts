import { GraphQLError, Kind, type ASTVisitor, type FragmentDefinitionNode, type SelectionSetNode, type ValidationContext } from 'graphql';

/**
 * Rejects operations whose selections nest deeper than `maxDepth` (fragments followed).
 * Introspection fields are not counted: GraphiQL's standard introspection query is deep.
 *
 * Linear in the document: the depth of each fragment is computed once and remembered by name,
 * so a fragment spread many times (`fragment G0 { ...G1 ...G1 }`, `G1 { ...G2 ...G2 }`, …) costs
 * one walk, not one per spread. A fragment inside a cycle counts as depth 0 here (graphql-js's
 * NoFragmentCyclesRule reports the cycle).
 */
export function depthLimitRule(maxDepth: number) {
  return (context: ValidationContext): ASTVisitor => {
    const fragments = new Map<string, FragmentDefinitionNode>();
    for (const definition of context.getDocument().definitions) {
      if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
    }
    const fragmentDepths = new Map<string, number>();
    const visiting = new Set<string>();
    const fragmentDepth = (name: string): number => {
      const known = fragmentDepths.get(name);
      if (known !== undefined) return known;
      const fragment = fragments.get(name);
      if (!fragment || visiting.has(name)) return 0;
      visiting.add(name);
      const depth = depthOf(fragment.selectionSet);
      visiting.delete(name);
      fragmentDepths.set(name, depth);
      return depth;
    };
    const depthOf = (selectionSet: SelectionSetNode): number => {
      let deepest = 0;
      for (const selection of selectionSet.selections) {
        if (selection.kind === Kind.FIELD) {
          if (selection.name.value.startsWith('__')) continue;
          const depth = selection.selectionSet ? 1 + depthOf(selection.selectionSet) : 1;
          deepest = Math.max(deepest, depth);
        } else if (selection.kind === Kind.INLINE_FRAGMENT) {
          deepest = Math.max(deepest, depthOf(selection.selectionSet));
        } else {
          deepest = Math.max(deepest, fragmentDepth(selection.name.value));
        }
      }
      return deepest;
    };
    return {
      OperationDefinition(node) {
        const depth = depthOf(node.selectionSet);
        if (depth > maxDepth) {
          context.reportError(
            new GraphQLError(`query depth ${depth} is over the limit of ${maxDepth} (MAX_QUERY_DEPTH)`, { nodes: [node], extensions: { code: 'validation-failed' } }),
          );
        }
      },
    };
  };
}
