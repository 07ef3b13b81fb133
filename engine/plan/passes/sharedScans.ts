import type { Collection, ComputedField, Field, FieldType } from '../../../metadata/index.js';
import type { OperationPlan, RootField, SelectAggregateField, SharedScan } from '../ir.js';

/** Root aggregates one shared scan computes at most (a select list holds at most 1664 entries). */
export const MAX_SHARED_SCAN_AGGREGATES = 50;

/**
 * Whether a root aggregate can be read in a scan shared with others: no `nodes` (rows, not one
 * row), no paging or `distinct_on` (the scan reads every row of the predicate), no role `limit`
 * (it caps the rows each aggregate reads).
 */
function shareable(field: RootField): field is SelectAggregateField {
  return (
    field.kind === 'selectAggregate' &&
    !field.query.rowsFrom &&
    !field.query.limit &&
    !field.query.offset &&
    !field.query.distinctOn.length &&
    field.collection.selectLimit === null &&
    !field.aggregate.some((item) => item.kind === 'nodes')
  );
}

/**
 * Whether a shared scan's aggregates can read the table directly: no member's `where` is
 * read by more than one of its aggregate calls (`count`, each `sum { a b }` leaf, …) and no
 * computed value (a custom field's `->>` and cast) by more than one call. PostgreSQL does
 * not share a repeated expression, so anything read twice is computed once in an inner query
 * instead; a plain column costs nothing to read twice, while the inner query's flags make the
 * scan project them for every row (q4: ~2 % of its time, bench/README.md).
 */
export function sharedScanShape(members: readonly SelectAggregateField[]): 'direct' | 'flags' {
  const uses = new Map<Field | ComputedField, number>();
  const read = (field: Field | ComputedField): void => {
    uses.set(field, (uses.get(field) ?? 0) + 1);
  };
  for (const member of members) {
    let calls = 0;
    for (const item of member.aggregate) {
      if (item.kind !== 'aggregate') continue;
      for (const field of item.fields) {
        if (field.kind === 'count') {
          field.columns.forEach(read);
          calls += 1;
        } else if (field.kind === 'function') {
          for (const leaf of field.items) if (leaf.kind !== 'typename') read(leaf.field);
          calls += field.items.filter((leaf) => leaf.kind !== 'typename').length;
        }
      }
    }
    if (member.query.where && calls > 1) return 'flags';
  }
  // A computed field's call (or stored form) is a computed value, as a custom field's cast is.
  return [...uses].every(([field, reads]) => reads <= 1 || ('source' in field && field.source.kind === 'column')) ? 'direct' : 'flags';
}

/** Types whose `sum` is exact, so a sum of the groups' sums has the same digits as the sum of the rows. */
const EXACT_SUM_TYPES: ReadonlySet<FieldType> = new Set<FieldType>(['integer', 'bigint', 'smallint', 'numeric']);
/** Types a scan may group by: equality and ordering as PostgreSQL's `=` for them (no json, arrays or floats). */
const GROUPABLE_TYPES: ReadonlySet<FieldType> = new Set<FieldType>(['text', 'citext', 'uuid', 'integer', 'bigint', 'smallint', 'numeric', 'boolean', 'date', 'timestamptz', 'timestamp', 'time']);

/**
 * The column a shared scan can group its rows by, or null: at least two members filter by
 * `column: {_eq: value}` on the same plain column and the others by nothing, and every call
 * combines across groups — `count` (of rows), `sum` of an integer or numeric column, `min`,
 * `max` — so the answer is the one the FILTERs give, digit for digit. "Counts per status and a
 * total" then costs one equality a row (the group's boundary, in the index's order when an index
 * leads with the column) instead of one per member, and one count: q4 18.8 → 16.1 million
 * instructions (bench/README.md, "Counts per value as one GROUP BY"). Not under a role's row
 * filter: it keeps few rows (an investor's loans), and the GROUP BY's own start at each execution
 * then costs more than it saves (q4i 750 → 821 thousand). A column of many values with an
 * unfiltered member makes many small groups (a GROUP BY over the account's rows): the form is
 * meant for a few categories, as `status`, and never takes a primary-key column.
 */
export function groupedBy(members: readonly SelectAggregateField[]): Field | null {
  if (members.some((member) => member.collection.selectFilter !== null)) return null;
  let field: Field | null = null;
  let filtered = 0;
  for (const member of members) {
    const where = member.query.where;
    if (where) {
      if (where.kind !== 'compare' || where.operator !== '_eq' || where.field.source.kind !== 'column' || !GROUPABLE_TYPES.has(where.field.type)) return null;
      // A key column would make a group of every row.
      if (member.collection.primaryKey.includes(where.field)) return null;
      if (field && where.field !== field) return null;
      field = where.field;
      filtered += 1;
    }
    for (const item of member.aggregate) {
      if (item.kind === 'nodes') return null;
      if (item.kind !== 'aggregate') continue;
      for (const call of item.fields) {
        if (call.kind === 'count' && (call.columns.length || call.distinct)) return null;
        if (call.kind !== 'function') continue;
        if (call.fn !== 'sum' && call.fn !== 'min' && call.fn !== 'max') return null;
        for (const leaf of call.items) {
          if (leaf.kind === 'typename') continue;
          if (leaf.kind === 'computed' || leaf.field.source.kind !== 'column' || (call.fn === 'sum' && !EXACT_SUM_TYPES.has(leaf.field.type))) return null;
        }
      }
    }
  }
  return filtered >= 2 ? field : null;
}

/**
 * The pass: root aggregates of one collection in one request (2 to `MAX_SHARED_SCAN_AGGREGATES`
 * of them, each `shareable`) become one `SharedScan`, for `admin` and every role alike; their
 * root fields become `sharedAggregate`s in place, so the response keeps the document's order.
 * Scans are listed in the order their collections first appear among the shareable aggregates.
 */
export function sharedScans(plan: OperationPlan): OperationPlan {
  const byCollection = new Map<Collection, SelectAggregateField[]>();
  for (const field of plan.rootFields) {
    if (!shareable(field)) continue;
    byCollection.set(field.collection, [...(byCollection.get(field.collection) ?? []), field]);
  }
  const scans: SharedScan[] = [...plan.sharedScans];
  const placed = new Map<RootField, RootField>();
  for (const [collection, members] of byCollection) {
    if (members.length < 2 || members.length > MAX_SHARED_SCAN_AGGREGATES) continue;
    const groupBy = groupedBy(members);
    const scan = scans.push(groupBy ? { collection, members, shape: 'grouped', groupBy } : { collection, members, shape: sharedScanShape(members) }) - 1;
    members.forEach((member, index) => placed.set(member, { kind: 'sharedAggregate', alias: member.alias, scan, member: index }));
  }
  if (!placed.size) return plan;
  return { rootFields: plan.rootFields.map((field) => placed.get(field) ?? field), sharedScans: scans };
}
