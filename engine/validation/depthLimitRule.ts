import { GraphQLError, Kind, type ASTVisitor, type FragmentDefinitionNode, type SelectionSetNode, type ValidationContext } from 'graphql';

/**
 * Rejects operations whose selections nest deeper than `maxDepth` (fragments followed).
 * Introspection fields are not counted: GraphiQL's standard introspection query is deep.
 */
export function depthLimitRule(maxDepth: number) {
  return (context: ValidationContext): ASTVisitor => {
    const fragments = new Map<string, FragmentDefinitionNode>();
    for (const definition of context.getDocument().definitions) {
      if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
    }
    const depthOf = (selectionSet: SelectionSetNode, visiting: Set<string>): number => {
      let deepest = 0;
      for (const selection of selectionSet.selections) {
        if (selection.kind === Kind.FIELD) {
          if (selection.name.value.startsWith('__')) continue;
          const depth = selection.selectionSet ? 1 + depthOf(selection.selectionSet, visiting) : 1;
          deepest = Math.max(deepest, depth);
        } else if (selection.kind === Kind.INLINE_FRAGMENT) {
          deepest = Math.max(deepest, depthOf(selection.selectionSet, visiting));
        } else {
          const name = selection.name.value;
          const fragment = fragments.get(name);
          if (!fragment || visiting.has(name)) continue;
          visiting.add(name);
          deepest = Math.max(deepest, depthOf(fragment.selectionSet, visiting));
          visiting.delete(name);
        }
      }
      return deepest;
    };
    return {
      OperationDefinition(node) {
        const depth = depthOf(node.selectionSet, new Set());
        if (depth > maxDepth) {
          context.reportError(
            new GraphQLError(`query depth ${depth} is over the limit of ${maxDepth} (MAX_QUERY_DEPTH)`, { nodes: [node], extensions: { code: 'validation-failed' } }),
          );
        }
      },
    };
  };
}
