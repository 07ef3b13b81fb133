import { Kind, type FieldNode, type FragmentDefinitionNode, type SelectionSetNode, type ValueNode } from 'graphql';
import { foldSelections } from '../document/foldSelections.js';

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

  /**
   * GraphQL's CollectFields: response key → the field nodes merged under it, in order. The walk is
   * the engine's one fragment walker (`document/foldSelections.ts`); `memo` remembers the named
   * fragments already folded into `into`, so a second spread adds nothing.
   */
  function collectFields(selectionSet: SelectionSetNode, into = new Map<string, FieldNode[]>(), memo = new Map<string, undefined>()): Map<string, FieldNode[]> {
    const add = (field: FieldNode): undefined => {
      const key = field.alias?.value ?? field.name.value;
      const list = into.get(key);
      if (list) list.push(field);
      else into.set(key, [field]);
      return undefined;
    };
    foldSelections<undefined>(selectionSet, fragments, { field: add, combine: () => undefined, empty: undefined, include: included }, memo);
    return into;
  }

  function subSelection(nodes: readonly FieldNode[]): Map<string, FieldNode[]> {
    const merged = new Map<string, FieldNode[]>();
    // One `memo` for all the merged nodes: a fragment spread under several of them adds its
    // fields once, so the nodes per level stay within the document's size (no fragment bomb).
    const memo = new Map<string, undefined>();
    for (const node of nodes) if (node.selectionSet) collectFields(node.selectionSet, merged, memo);
    return merged;
  }

  return { collectFields, subSelection };
}
