import type { EventPayloadEntryDocument, EventTypeDocument } from './document.js';
import type { Collection, EventOperation, EventPayloadRelationship, EventType } from './model.js';

const OPERATIONS: ReadonlyMap<EventTypeDocument['on'], EventOperation> = new Map([
  ['insert', 'INSERT'],
  ['update', 'UPDATE'],
  ['delete', 'DELETE'],
]);

/**
 * The metadata stage that resolves event types: each names a collection, an operation, an
 * optional condition on fields (only update events have an old row to compare with), and the
 * fields of its payload (default: every column field of the collection). Names are checked
 * against the resolved collections; problems are pushed naming the event type and field.
 */
export function resolveEventTypes(
  document: Readonly<Record<string, EventTypeDocument>> | undefined,
  collections: ReadonlyMap<string, Collection>,
  problems: string[],
): Map<string, EventType> {
  const eventTypes = new Map<string, EventType>();
  for (const [name, spec] of Object.entries(document ?? {})) {
    const where = `event type ${name}`;
    const collection = collections.get(spec.collection);
    if (!collection) {
      problems.push(`${where}: collection ${spec.collection} does not exist`);
      continue;
    }
    const operation = OPERATIONS.get(spec.on)!;
    if (collection.schema !== null) problems.push(`${where}: collection ${collection.name} is in schema ${collection.schema}; events are captured from the current schema's tables only`);
    const columnOf = (fieldName: string, role: string): string | null => columnOfField(collection, fieldName, `${where}, ${role}`, problems);
    if (spec.when && operation !== 'UPDATE') problems.push(`${where}: when applies to update events only (an insert or delete has no old row to compare)`);
    const changed = (spec.when?.changed ?? []).map((f) => columnOf(f, 'when changed')).filter((c): c is string => c !== null);
    const set = (spec.when?.set ?? []).map((f) => columnOf(f, 'when set')).filter((c): c is string => c !== null);
    const becomes = new Map<string, string | number | boolean>();
    for (const [fieldName, value] of Object.entries(spec.when?.becomes ?? {})) {
      const column = columnOf(fieldName, 'when becomes');
      if (column) becomes.set(column, value);
    }
    const { payload, related, amounts } = resolvePayload(spec.payload, collection, collections, `${where}, payload`, problems);
    eventTypes.set(name, {
      name,
      collection: collection.name,
      table: collection.table,
      operation,
      condition: { changed: spec.when?.changed ? changed : null, set: spec.when?.set ? set : null, becomes: spec.when?.becomes ? becomes : null },
      payload,
      related,
      withCurrency: amounts,
      primaryKey: collection.primaryKey.map((field) => field.source.column),
    });
  }
  return eventTypes;
}

/** The column of a column field of `collection`, or null with a problem pushed naming `where`. */
function columnOfField(collection: Collection, fieldName: string, where: string, problems: string[]): string | null {
  const field = collection.fields.get(fieldName);
  if (!field) problems.push(`${where}, field ${fieldName}: not a field of collection ${collection.name}`);
  else if (field.source.kind !== 'column') problems.push(`${where}, field ${fieldName}: a custom field is a key inside ${field.source.column}; name ${field.source.column} instead`);
  else return field.source.column;
  return null;
}

/**
 * A payload as written → its columns and relationships (nested at any depth). A name is a field
 * or a relationship of `collection` (a relationship alone: every column field of its target);
 * `{relationship: [entries]}` or `{relationship: {fields, order_by}}` chooses the target's
 * entries and, for an array, its order. No payload: every column field, no relationship.
 */
function resolvePayload(
  entries: readonly EventPayloadEntryDocument[] | undefined,
  collection: Collection,
  collections: ReadonlyMap<string, Collection>,
  where: string,
  problems: string[],
): { payload: Map<string, string>; related: EventPayloadRelationship[]; amounts: boolean } {
  const payload = new Map<string, string>();
  const related: EventPayloadRelationship[] = [];
  // Whether a numeric field is in the payload, here or in a related row (an amount: the event
  // then carries the account's currency, `EventType.withCurrency`).
  let amounts = false;
  const relationshipEntry = (name: string, choice: Exclude<EventPayloadEntryDocument, string>[string] | null): void => {
    const relationship = collection.relationships.get(name);
    if (!relationship) {
      problems.push(`${where}: ${name} is neither a field nor a relationship of collection ${collection.name}`);
      return;
    }
    const target = collections.get(relationship.target)!;
    const at = `${where}, relationship ${name}`;
    const fields = choice === null ? undefined : Array.isArray(choice) ? (choice as readonly EventPayloadEntryDocument[]) : (choice as { fields?: readonly EventPayloadEntryDocument[] }).fields;
    const orderFields = choice === null || Array.isArray(choice) ? [] : ((choice as { order_by?: readonly string[] }).order_by ?? []);
    if (orderFields.length && relationship.kind === 'object') problems.push(`${at}: order_by applies to array relationships only`);
    const orderBy = orderFields.map((f) => columnOfField(target, f, `${at}, order_by`, problems)).filter((c): c is string => c !== null);
    const mapping = relationship.mapping
      .map(([from, to]) => [columnOfField(collection, from, at, problems), columnOfField(target, to, at, problems)] as const)
      .filter((pair): pair is readonly [string, string] => pair[0] !== null && pair[1] !== null);
    const nested = resolvePayload(fields, target, collections, at, problems);
    amounts ||= nested.amounts;
    const primaryKey = target.primaryKey.map((field) => field.source.column);
    related.push({ key: name, kind: relationship.kind, table: target.table, mapping, payload: nested.payload, related: nested.related, orderBy, primaryKey });
  };
  const keys = new Set<string>();
  for (const entry of entries ?? [...collection.fields.values()].filter((f) => f.source.kind === 'column').map((f) => f.name)) {
    for (const key of typeof entry === 'string' ? [entry] : Object.keys(entry)) {
      if (keys.has(key)) problems.push(`${where}: ${key} is named twice`);
      keys.add(key);
    }
    if (typeof entry === 'string') {
      if (!collection.fields.has(entry) && collection.relationships.has(entry)) relationshipEntry(entry, null);
      else if (!collection.fields.has(entry)) problems.push(`${where}: ${entry} is neither a field nor a relationship of collection ${collection.name}`);
      else {
        const column = columnOfField(collection, entry, where, problems);
        if (column) payload.set(entry, column);
        if (column && collection.fields.get(entry)!.type === 'numeric') amounts = true;
      }
      continue;
    }
    for (const [name, choice] of Object.entries(entry)) relationshipEntry(name, choice);
  }
  return { payload, related, amounts };
}
