import type { Collection, Field, Metadata, Relationship, RowFilter } from './model.js';

/** A collection before the permissions stage has worked out which relationships reach only visible rows. */
export type UnprovenCollection = Omit<Collection, 'relationshipsOnlyToVisibleRows'>;

/**
 * Part of the permissions stage: each collection of one view (a role's, or a view without
 * filters) with `relationshipsOnlyToVisibleRows` worked out against the view's other
 * collections, once per metadata version, so the compiler reads a recorded fact instead of
 * comparing filters on every compile.
 */
export function proveVisibleRows(collections: ReadonlyMap<string, UnprovenCollection>): Map<string, Collection> {
  const proven = new Map<string, Collection>();
  for (const [name, collection] of collections) {
    const relationshipsOnlyToVisibleRows = new Set<string>();
    for (const relationship of collection.relationships.values()) {
      const target = collections.get(relationship.target);
      if (target && filterImpliedByPath(collection, relationship, target)) relationshipsOnlyToVisibleRows.add(relationship.name);
    }
    proven.set(name, { ...collection, relationshipsOnlyToVisibleRows });
  }
  return proven;
}

/**
 * A checked view whose collections read with other select filters (by collection name; a name
 * not in `selectFilters` keeps its filter), the visible-rows facts worked out again for them.
 * For the server's own fixed views (`app/loanReads.ts`: the REST view as a role sees it).
 */
export function withSelectFilters(view: Metadata, selectFilters: ReadonlyMap<string, RowFilter | null>): Metadata {
  const collections = new Map<string, UnprovenCollection>();
  for (const [name, collection] of view.collections) collections.set(name, selectFilters.has(name) ? { ...collection, selectFilter: selectFilters.get(name)! } : collection);
  return { ...view, collections: proveVisibleRows(collections) };
}

/**
 * Whether every row of `target` reached through `relationship` from a row of `parent` that the
 * role may see is one the role may see too, so its select filter need not be checked again
 * (the compiler checks it on every OTHER reference, so a parent row is always visible). Two
 * shapes, both proven from the filters' text alone:
 *
 * - back to the parent: `target`'s filter is `{<relationship back to parent>: <parent's filter>}`
 *   — "rows whose parent is visible" (investor: a loan's `payments`, `schedules`, `borrows`,
 *   `loan_documents`; a loan document's `document`, whose filter is `{loan_documents: …}`). The
 *   relationship back must have the inverse mapping, so the row it finds is the parent itself.
 * - through an object relationship: `parent`'s filter is `{<this relationship>: <target's
 *   filter>}` and the relationship ends at `target`'s primary key, so the one row it reaches is
 *   the one the parent's filter saw (investor: a payment's or schedule's `loan`).
 *
 * Anything else (filters of other shapes, other relationships) keeps the check.
 */
function filterImpliedByPath(parent: UnprovenCollection, relationship: Relationship, target: UnprovenCollection): boolean {
  const targetFilter = target.selectFilter;
  if (!targetFilter) return true;
  if (
    parent.selectFilter &&
    targetFilter.kind === 'relationship' &&
    targetFilter.target.name === parent.name &&
    isInverse(targetFilter.relationship.mapping, relationship.mapping) &&
    sameFilter(targetFilter.where, parent.selectFilter)
  ) {
    return true;
  }
  const parentFilter = parent.selectFilter;
  return (
    relationship.kind === 'object' &&
    parentFilter !== null &&
    parentFilter.kind === 'relationship' &&
    parentFilter.relationship.name === relationship.name &&
    parentFilter.target.name === target.name &&
    sameMapping(parentFilter.relationship.mapping, relationship.mapping) &&
    endsAtPrimaryKey(relationship, target) &&
    sameFilter(parentFilter.where, targetFilter)
  );
}

/** The relationship's target columns are exactly the target's primary key (it reaches one row). */
const endsAtPrimaryKey = (relationship: Relationship, target: UnprovenCollection): boolean =>
  relationship.mapping.length === target.primaryKey.length && target.primaryKey.every((key) => relationship.mapping.some(([, to]) => to === key.source.column));

type Mapping = Relationship['mapping'];
const sameMapping = (a: Mapping, b: Mapping): boolean => a.length === b.length && a.every(([from, to], i) => b[i]![0] === from && b[i]![1] === to);
const isInverse = (a: Mapping, b: Mapping): boolean => a.length === b.length && a.every(([from, to], i) => b[i]![0] === to && b[i]![1] === from);

const sameField = (a: Field, b: Field): boolean => a.name === b.name && JSON.stringify(a.source) === JSON.stringify(b.source);
const sameValue = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** Structural equality of two role filters (fields, relationships and targets by name, values by content). */
function sameFilter(a: RowFilter, b: RowFilter): boolean {
  switch (a.kind) {
    case 'and':
    case 'or':
      return b.kind === a.kind && a.items.length === b.items.length && a.items.every((item, i) => sameFilter(item, b.items[i]!));
    case 'not':
      return b.kind === 'not' && sameFilter(a.item, b.item);
    case 'compare':
      return b.kind === 'compare' && a.operator === b.operator && sameField(a.field, b.field) && sameValue(a.value, b.value);
    case 'in':
      return b.kind === 'in' && a.negated === b.negated && sameField(a.field, b.field) && sameValue(a.values, b.values);
    case 'isNull':
      return b.kind === 'isNull' && sameField(a.field, b.field) && sameValue(a.value, b.value);
    case 'jsonb':
      return b.kind === 'jsonb' && a.operator === b.operator && sameField(a.field, b.field) && sameValue(a.value, b.value);
    case 'computedValue':
      return b.kind === 'computedValue' && a.collection.name === b.collection.name && a.field.name === b.field.name && sameFilter(a.where, b.where);
    case 'arrayContainment':
      return b.kind === 'arrayContainment' && a.operator === b.operator && sameField(a.field, b.field) && sameValue(a.value, b.value);
    case 'computed':
      return b.kind === 'computed' && a.operator === b.operator && a.field.name === b.field.name && sameValue(a.value, b.value);
    case 'cast':
      return b.kind === 'cast' && sameField(a.field, b.field) && sameField(a.as, b.as) && sameFilter(a.where, b.where);
    case 'columns':
      return b.kind === 'columns' && a.operator === b.operator && sameField(a.field, b.field) && sameField(a.other, b.other);
    case 'exists':
      return b.kind === 'exists' && a.target.name === b.target.name && sameFilter(a.where, b.where);
    case 'aggregate':
      return (
        b.kind === 'aggregate' &&
        a.fn === b.fn &&
        a.distinct === b.distinct &&
        a.relationship.name === b.relationship.name &&
        a.target.name === b.target.name &&
        sameMapping(a.relationship.mapping, b.relationship.mapping) &&
        a.arguments.length === b.arguments.length &&
        a.arguments.every((field, i) => sameField(field, b.arguments[i]!)) &&
        (a.filter === null ? b.filter === null : b.filter !== null && sameFilter(a.filter, b.filter)) &&
        sameFilter(a.predicate, b.predicate)
      );
    case 'relationship':
      return (
        b.kind === 'relationship' &&
        a.relationship.name === b.relationship.name &&
        a.target.name === b.target.name &&
        sameMapping(a.relationship.mapping, b.relationship.mapping) &&
        sameFilter(a.where, b.where)
      );
    default: {
      const unexpected: never = a;
      throw new Error(`unexpected filter ${JSON.stringify(unexpected)}`);
    }
  }
}
