import type { BoolExpOf, Metadata, Relationship } from '../../../metadata/index.js';
import { assertNever, type AggregateSelection, type ListQuery, type OperationPlan, type RootField, type SelectAggregateField, type Selection, type SelectionItem } from '../ir.js';
import type { MutationField, MutationOutput, MutationPlan } from '../mutationIr.js';

/** The object relationships backed by a checked foreign key (`Metadata.foreignKeyRelationships`). */
export type ForeignKeys = ReadonlySet<Relationship>;

type RelationshipFilter<V> = Extract<BoolExpOf<V>, { kind: 'relationship' }>;

/**
 * A relationship filter that only goes through its target to one of the target's own
 * relationships — `{loan: {funding_sources: {person_id: …}}}` on schedules — written as that
 * inner relationship from the parent row directly (`funding_sources.loan_id = schedules.loan_id`),
 * when the outer relationship is an object relationship backed by a foreign key
 * (`Metadata.foreignKeyRelationships`: the target row exists whenever the columns are not null,
 * and a null column matches nothing either way), the target carries no filter of its own (a
 * role's view of it does), and every column the inner relationship reads of the target is one
 * the outer relationship maps. Null when any of that does not hold. The result is an ordinary
 * relationship node whose relationship is the shortcut (named `loan.funding_sources`).
 */
export function throughForeignKey<V>(expression: RelationshipFilter<V>, foreignKeys: ForeignKeys): RelationshipFilter<V> | null {
  const { relationship, target, where: inner } = expression;
  if (relationship.kind !== 'object' || target.selectFilter || inner.kind !== 'relationship' || !foreignKeys.has(relationship)) return null;
  const parentColumnOf = new Map(relationship.mapping.map(([from, to]) => [to, from]));
  const mapping: (readonly [string, string])[] = [];
  for (const [from, to] of inner.relationship.mapping) {
    const parentColumn = parentColumnOf.get(from);
    if (parentColumn === undefined) return null;
    mapping.push([parentColumn, to]);
  }
  return { ...inner, relationship: { ...inner.relationship, name: `${relationship.name}.${inner.relationship.name}`, mapping } };
}

/**
 * A boolean expression with every relationship filter that can go through a foreign key
 * shortened (`throughForeignKey`), at every depth. A shortcut's own `where` is rewritten too; the
 * shortcut itself is not shortened again (its relationship is made here, backed by no key).
 */
export function shortenFilter<V>(expression: BoolExpOf<V>, foreignKeys: ForeignKeys): BoolExpOf<V> {
  switch (expression.kind) {
    case 'and':
    case 'or':
      return { ...expression, items: expression.items.map((item) => shortenFilter(item, foreignKeys)) };
    case 'not':
      return { ...expression, item: shortenFilter(expression.item, foreignKeys) };
    case 'cast':
    case 'computedValue':
      return { ...expression, where: shortenFilter(expression.where, foreignKeys) };
    case 'compare':
    case 'in':
    case 'isNull':
    case 'jsonb':
    case 'arrayContainment':
    case 'computed':
      return expression;
    case 'columns':
      return expression;
    case 'exists':
      return { ...expression, where: shortenFilter(expression.where, foreignKeys) };
    case 'aggregate':
      return { ...expression, filter: expression.filter && shortenFilter(expression.filter, foreignKeys) };
    case 'relationship': {
      const shorter = throughForeignKey(expression, foreignKeys) ?? expression;
      return { ...shorter, where: shortenFilter(shorter.where, foreignKeys) };
    }
    default:
      return assertNever(expression);
  }
}

const NO_KEYS = {};
const roleFilters = new WeakMap<object, WeakMap<object, unknown>>();

/**
 * A role's filter (select, update, delete, check) through the same rewrite, once per metadata
 * version: the filters belong to the resolved metadata, not to a request, so the result is kept
 * by filter (and by the version's set of foreign keys, which may differ for the same filters
 * before and after the catalogue check).
 */
export function shortenRoleFilter<V>(filter: BoolExpOf<V>, foreignKeys: ForeignKeys): BoolExpOf<V> {
  let byFilter = roleFilters.get(foreignKeys ?? NO_KEYS);
  if (!byFilter) roleFilters.set(foreignKeys ?? NO_KEYS, (byFilter = new WeakMap()));
  let shortened = byFilter.get(filter) as BoolExpOf<V> | undefined;
  if (!shortened) byFilter.set(filter, (shortened = shortenFilter(filter, foreignKeys)));
  return shortened;
}

function shortenSelection(selection: Selection, foreignKeys: ForeignKeys): Selection {
  return selection.map((item): SelectionItem => {
    switch (item.kind) {
      case 'column':
      case 'computed':
      case 'typename':
        return item;
      case 'object':
        return { ...item, selection: shortenSelection(item.selection, foreignKeys) };
      case 'array':
      case 'computedRows':
        return { ...item, query: shortenQuery(item.query, foreignKeys), selection: shortenSelection(item.selection, foreignKeys) };
      case 'arrayAggregate':
        return { ...item, query: shortenQuery(item.query, foreignKeys), aggregate: shortenAggregate(item.aggregate, foreignKeys) };
      default:
        return assertNever(item);
    }
  });
}

function shortenAggregate(aggregate: AggregateSelection, foreignKeys: ForeignKeys): AggregateSelection {
  return aggregate.map((item) => (item.kind === 'nodes' ? { ...item, selection: shortenSelection(item.selection, foreignKeys) } : item));
}

function shortenQuery(query: ListQuery, foreignKeys: ForeignKeys): ListQuery {
  return query.where ? { ...query, where: shortenFilter(query.where, foreignKeys) } : query;
}

const shortenAggregateField = (field: SelectAggregateField, foreignKeys: ForeignKeys): SelectAggregateField => ({
  ...field,
  query: shortenQuery(field.query, foreignKeys),
  aggregate: shortenAggregate(field.aggregate, foreignKeys),
});

/**
 * The pass over a query plan: every `where` of the request (lists, aggregates, nested lists at
 * any depth) with its relationship filters shortened through foreign keys where they can be.
 * A role's filters are rewritten by `shortenRoleFilter`, once per metadata version.
 */
export function foreignKeyShortcuts(plan: OperationPlan, metadata: Metadata): OperationPlan {
  const foreignKeys = metadata.foreignKeyRelationships;
  const rootFields = plan.rootFields.map((field): RootField => {
    switch (field.kind) {
      case 'typename':
      case 'sharedAggregate':
        return field;
      case 'select':
        return { ...field, query: shortenQuery(field.query, foreignKeys), selection: shortenSelection(field.selection, foreignKeys) };
      case 'selectByPk':
        return { ...field, selection: shortenSelection(field.selection, foreignKeys) };
      case 'selectAggregate':
        return shortenAggregateField(field, foreignKeys);
      default:
        return assertNever(field);
    }
  });
  const sharedScans = plan.sharedScans.map((scan) => ({ ...scan, members: scan.members.map((member) => shortenAggregateField(member, foreignKeys)) }));
  return { rootFields, sharedScans };
}

function shortenOutput(output: MutationOutput, foreignKeys: ForeignKeys): MutationOutput {
  if (output.kind === 'one') return { ...output, selection: shortenSelection(output.selection, foreignKeys) };
  return { ...output, items: output.items.map((item) => (item.kind === 'returning' ? { ...item, selection: shortenSelection(item.selection, foreignKeys) } : item)) };
}

/** The same pass over a mutation plan: its `where`s, `on_conflict`'s `where` and every `returning`. */
export function foreignKeyShortcutsInMutation(plan: MutationPlan, metadata: Metadata): MutationPlan {
  const foreignKeys = metadata.foreignKeyRelationships;
  const fields = plan.fields.map((field): MutationField => {
    switch (field.kind) {
      case 'typename':
        return field;
      case 'insert': {
        const { onConflict } = field.insert;
        const insert = onConflict?.where ? { ...field.insert, onConflict: { ...onConflict, where: shortenFilter(onConflict.where, foreignKeys) } } : field.insert;
        return { ...field, insert, output: shortenOutput(field.output, foreignKeys) };
      }
      case 'update':
        return { ...field, updates: field.updates.map((update) => ({ ...update, where: shortenFilter(update.where, foreignKeys) })), output: shortenOutput(field.output, foreignKeys) };
      case 'delete':
        return { ...field, where: shortenFilter(field.where, foreignKeys), output: shortenOutput(field.output, foreignKeys) };
      default:
        return assertNever(field);
    }
  });
  return { ...plan, fields };
}
