import type { EventTypeDocument } from './document.js';
import type { Collection, EventOperation, EventType } from './model.js';

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
    const columnOf = (fieldName: string, role: string): string | null => {
      const field = collection.fields.get(fieldName);
      if (!field) problems.push(`${where}, ${role}, field ${fieldName}: not a field of collection ${collection.name}`);
      else if (field.source.kind !== 'column') problems.push(`${where}, ${role}, field ${fieldName}: a custom field is a key inside ${field.source.column}; name ${field.source.column} instead`);
      else return field.source.column;
      return null;
    };
    if (spec.when && operation !== 'UPDATE') problems.push(`${where}: when applies to update events only (an insert or delete has no old row to compare)`);
    const changed = (spec.when?.changed ?? []).map((f) => columnOf(f, 'when changed')).filter((c): c is string => c !== null);
    const set = (spec.when?.set ?? []).map((f) => columnOf(f, 'when set')).filter((c): c is string => c !== null);
    const becomes = new Map<string, string | number | boolean>();
    for (const [fieldName, value] of Object.entries(spec.when?.becomes ?? {})) {
      const column = columnOf(fieldName, 'when becomes');
      if (column) becomes.set(column, value);
    }
    const payload = new Map<string, string>();
    const payloadFields = spec.payload ?? [...collection.fields.values()].filter((f) => f.source.kind === 'column').map((f) => f.name);
    for (const fieldName of payloadFields) {
      const column = columnOf(fieldName, 'payload');
      if (column) payload.set(fieldName, column);
    }
    eventTypes.set(name, {
      name,
      collection: collection.name,
      table: collection.table,
      operation,
      condition: { changed: spec.when?.changed ? changed : null, set: spec.when?.set ? set : null, becomes: spec.when?.becomes ? becomes : null },
      payload,
    });
  }
  return eventTypes;
}
