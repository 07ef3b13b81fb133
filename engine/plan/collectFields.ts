import { Kind, type FieldNode, type FragmentDefinitionNode, type SelectionSetNode, type ValueNode } from 'graphql';

/**
 * GraphQL's CollectFields over an operation's selection sets, with `@skip`/`@include` read from
 * the request's values (`variableValue` marks the plan as per request).
 */
export function fieldCollector(fragments: ReadonlyMap<string, FragmentDefinitionNode>, variableValue: (name: string) => unknown) {
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

  return { collectFields, subSelection };
}
