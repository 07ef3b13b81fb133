import { Kind, type DocumentNode, type FieldNode, type FragmentDefinitionNode, type OperationDefinitionNode, type SelectionNode, type SelectionSetNode } from 'graphql';

/**
 * How `foldSelections` turns a selection set into one value: each field's part, and how parts
 * add up (`combine`, starting from `empty`).
 */
export interface SelectionFold<T> {
  /** A field's part; `nested` folds a selection set (the field's own, when the part needs it). */
  readonly field: (field: FieldNode, nested: (selectionSet: SelectionSetNode) => T) => T;
  readonly combine: (sum: T, part: T) => T;
  readonly empty: T;
  /** Whether a selection counts at all (`@skip`/`@include` for a planner that knows the variables); all do when absent. */
  readonly include?: (selection: SelectionNode) => boolean;
}

/** The named fragments of a document, by name. */
export function fragmentsOf(document: DocumentNode): ReadonlyMap<string, FragmentDefinitionNode> {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  return fragments;
}

/**
 * The one walk of a selection set through inline fragments and fragment spreads. A named fragment
 * is folded once and its value remembered by name (in `memo`, which a caller may share between
 * the operations of one document), so the walk is linear in the document: a fragment spread twice
 * at every level would otherwise be walked 2^levels times. A spread of an unknown fragment, or one
 * inside a cycle, adds `empty` (graphql-js's rules report both).
 */
export function foldSelections<T>(
  selectionSet: SelectionSetNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  fold: SelectionFold<T>,
  memo: Map<string, T> = new Map(),
): T {
  const visiting = new Set<string>();
  const walk = (set: SelectionSetNode): T => {
    let sum = fold.empty;
    for (const selection of set.selections) {
      if (fold.include && !fold.include(selection)) continue;
      if (selection.kind === Kind.FIELD) sum = fold.combine(sum, fold.field(selection, walk));
      else if (selection.kind === Kind.INLINE_FRAGMENT) sum = fold.combine(sum, walk(selection.selectionSet));
      else {
        const name = selection.name.value;
        if (memo.has(name)) {
          sum = fold.combine(sum, memo.get(name) as T);
          continue;
        }
        const fragment = fragments.get(name);
        if (!fragment || visiting.has(name)) continue;
        visiting.add(name);
        const part = walk(fragment.selectionSet);
        visiting.delete(name);
        memo.set(name, part);
        sum = fold.combine(sum, part);
      }
    }
    return sum;
  };
  return walk(selectionSet);
}

/**
 * The fields of an operation's root selection, in document order, through inline fragments and
 * fragment spreads — each named fragment once (a second spread of it adds nothing).
 */
export function rootFields(operation: OperationDefinitionNode, fragments: ReadonlyMap<string, FragmentDefinitionNode>): readonly FieldNode[] {
  const fields: FieldNode[] = [];
  foldSelections<undefined>(operation.selectionSet, fragments, { field: (field) => void fields.push(field), combine: () => undefined, empty: undefined });
  return fields;
}
