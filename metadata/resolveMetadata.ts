import type { CollectionDocument, MetadataDocument, Presets } from './document.js';
import { computedArguments } from './computedArguments.js';
import { resolveEventTypes } from './eventTypes.js';
import { locateProblems, type SourceLines } from './sourceLines.js';
import { ADMIN_ROLE, isArrayType, MetadataError, type Collection, type ComputedField, type TableComputedField, type TrackedFunction, type Field, type InsertPermission, type PresetValue, type Relationship, type ResolvedMetadata, type ResolvedRole, type RootFieldKind, type UpdatePermission } from './model.js';
import { resolveRoles } from './resolveRoles.js';
import { proveVisibleRows, type UnprovenCollection } from './visibleRows.js';

const CUSTOM_FIELDS_COLUMN = 'custom_fields';
const ALL_ROOT_FIELDS: readonly RootFieldKind[] = ['select', 'select_by_pk', 'select_aggregate'];

/**
 * Stage 2: the document as written → `ResolvedMetadata`, in steps: (1) fields of every
 * collection, (2) primary keys, (3) relationships, which may then refer to any collection,
 * (4) the names the GraphQL schema will generate, (5) event types, (6) permissions: each role
 * as the metadata it sees (`resolveRoles.ts`). Nothing is read from the database (stage 3,
 * `checkAgainstDatabase.ts`). Throws `MetadataError` naming every problem.
 */
export function resolveMetadata(document: MetadataDocument, sourceLines?: SourceLines): ResolvedMetadata {
  const problems: string[] = [];
  const unproven = new Map<string, UnprovenCollection>();

  const resolvedFields = new Map<string, Map<string, Field>>();
  for (const [name, collection] of Object.entries(document.collections)) {
    const fields = new Map<string, Field>();
    for (const [fieldName, spec] of Object.entries(collection.fields)) {
      if (typeof spec === 'string') fields.set(fieldName, { name: fieldName, type: spec, source: { kind: 'column', column: fieldName } });
      else if (spec.custom_field)
        fields.set(fieldName, { name: fieldName, type: spec.type, source: { kind: 'customField', column: CUSTOM_FIELDS_COLUMN, key: spec.custom_field } });
      else fields.set(fieldName, { name: fieldName, type: spec.type, source: { kind: 'column', column: spec.column ?? fieldName } });
    }
    resolvedFields.set(name, fields);
  }

  for (const [name, collection] of Object.entries(document.collections)) {
    const fields = resolvedFields.get(name)!;
    const keyColumns = typeof collection.primary_key === 'string' ? [collection.primary_key] : (collection.primary_key ?? []);
    const primaryKey = keyColumns.map((column) => {
      const field = [...fields.values()].find((candidate) => candidate.source.kind === 'column' && candidate.source.column === column);
      if (!field) problems.push(`collection ${name}: primary_key ${column} is not one of its fields`);
      else if (field.source.column === document.tenant_column) problems.push(`collection ${name}: primary_key ${column} is the tenant column (a key identifies a row within an account)`);
      else if (isArrayType(field.type) || field.type === 'json' || field.type === 'jsonb') problems.push(`collection ${name}: primary_key ${column} is of type ${field.type} (a key is a scalar PostgreSQL can compare)`);
      return field;
    });
    const relationships = new Map<string, Relationship>();
    for (const [relName, spec] of Object.entries(collection.relationships ?? {})) {
      const target = spec.object ?? spec.array!;
      if (fields.has(relName)) problems.push(`collection ${name}, relationship ${relName}: a field has the same name`);
      if (!document.collections[target]) {
        problems.push(`collection ${name}, relationship ${relName}: target collection ${target} does not exist`);
        continue;
      }
      relationships.set(relName, { name: relName, kind: spec.object ? 'object' : 'array', target, mapping: Object.entries(spec.on) });
    }
    const computedFields = new Map<string, ComputedField>();
    const tableComputedFields = new Map<string, TableComputedField>();
    for (const [fieldName, spec] of Object.entries(collection.computed_fields ?? {})) {
      if (fields.has(fieldName) || relationships.has(fieldName)) problems.push(`collection ${name}, computed field ${fieldName}: a field or relationship has the same name`);
      if (fieldName.startsWith('__')) problems.push(`collection ${name}, computed field ${fieldName}: names starting with __ are reserved`);
      const { args, argumentRanges } = computedArguments(`collection ${name}, computed field ${fieldName}`, spec.args, problems);
      if (spec.returns !== undefined || spec.type === undefined) {
        if (spec.returns === undefined || !(spec.returns in document.collections)) problems.push(`collection ${name}, computed field ${fieldName}: returns ${String(spec.returns)} is not a collection`);
        tableComputedFields.set(fieldName, { name: fieldName, function: spec.function, args, argumentRanges, returns: spec.returns ?? '', description: spec.description ?? null });
        continue;
      }
      computedFields.set(fieldName, { name: fieldName, type: spec.type, function: spec.function, args, argumentRanges,
        description: spec.description ?? null,
        storedForm: spec.stored_form ? { kind: 'daysSince', column: spec.stored_form.days_since, today: spec.stored_form.today } : null,
      });
      if (spec.stored_form && spec.type !== 'integer') problems.push(`collection ${name}, computed field ${fieldName}: a stored_form days_since is an integer, not ${spec.type}`);
    }
    for (const fieldName of fields.keys()) {
      if (fieldName.startsWith('__')) problems.push(`collection ${name}, field ${fieldName}: names starting with __ are reserved`);
      if (fieldName.endsWith('_aggregate') && relationships.has(fieldName.slice(0, -'_aggregate'.length)))
        problems.push(`collection ${name}, field ${fieldName}: clashes with the generated aggregate of a relationship`);
    }
    // A relationship or computed field named <array relationship>_aggregate took that name from the
    // generated aggregate field, which then silently vanished from the schema.
    for (const [kind, names] of [['relationship', relationships.keys()], ['computed field', [...computedFields.keys(), ...tableComputedFields.keys()]]] as const) {
      for (const other of names) {
        const of = other.endsWith('_aggregate') ? relationships.get(other.slice(0, -'_aggregate'.length)) : undefined;
        if (of?.kind === 'array') problems.push(`collection ${name}, ${kind} ${other}: clashes with the generated aggregate of relationship ${of.name}; rename one`);
      }
    }
    if (!primaryKey.every((field): field is Field => field !== undefined)) continue;
    if (!primaryKey.length) {
      // Without a key no row can be named: no _by_pk, no writes, no computed field (called with the key).
      if (collection.insert || collection.update || collection.delete) problems.push(`collection ${name}: insert, update and delete need a primary_key (the rows a write touched are named by it)`);
      if (computedFields.size || tableComputedFields.size) problems.push(`collection ${name}: computed fields need a primary_key (the function is called with it)`);
    }
    for (const overflowing of collection.overflow?.fields ?? [])
      if (!fields.has(overflowing)) problems.push(`collection ${name}, overflow: ${overflowing} is not a field of the collection`);
    const writable = resolveWritableFields(name, collection, fields, primaryKey, document.tenant_column, problems);
    unproven.set(name, {
      name,
      table: collection.table,
      schema: collection.schema ?? null,
      primaryKey,
      serverMadeKey: primaryKey.length === 1 && primaryKey[0]!.type === 'uuid',
      fields,
      computedFields,
      tableComputedFields,
      relationships,
      overflow: collection.overflow ? { fields: collection.overflow.fields, sentence: collection.overflow.sentence } : null,
      rootFields: new Set((collection.root_fields ?? ALL_ROOT_FIELDS).filter((kind) => kind !== 'select_by_pk' || primaryKey.length)),
      ...writable,
      selectFilter: null,
      selectLimit: null,
      allowAggregations: true,
    });
  }

  // Without filters, every relationship reaches only rows the view lets through.
  const collections = proveVisibleRows(unproven);

  // Generated root names must not collide (e.g. a collection "loans_aggregate").
  const rootNames = new Map<string, string>();
  for (const collection of collections.values()) {
    const mutationNames = [
      ...(collection.insert ? [`insert_${collection.name}`, `insert_${collection.name}_one`] : []),
      ...(collection.update ? [`update_${collection.name}`, `update_${collection.name}_by_pk`, `update_${collection.name}_many`] : []),
      ...(collection.delete ? [`delete_${collection.name}`, `delete_${collection.name}_by_pk`] : []),
    ];
    for (const rootName of [collection.name, `${collection.name}_by_pk`, `${collection.name}_aggregate`, ...mutationNames]) {
      const other = rootNames.get(rootName);
      if (other) problems.push(`collection ${collection.name}: generated name ${rootName} clashes with collection ${other}`);
      rootNames.set(rootName, collection.name);
    }
  }
  const functions = new Map<string, TrackedFunction>();
  for (const [name, spec] of Object.entries(document.functions ?? {})) {
    for (const rootName of [name, `${name}_aggregate`]) {
      const other = rootNames.get(rootName);
      if (other) problems.push(`function ${name}: generated name ${rootName} clashes with collection ${other}`);
    }
    if (!collections.has(spec.returns)) problems.push(`function ${name}: returns ${spec.returns}, which is not a collection`);
    const args = new Map(Object.entries(spec.args ?? {}).map(([arg, type]) => [arg, { type, required: false }] as const));
    if (spec.tenant_argument !== undefined && args.has(spec.tenant_argument)) problems.push(`function ${name}: tenant_argument ${spec.tenant_argument} is the caller's account, not one of args`);
    functions.set(name, { name, function: spec.function, schema: spec.schema ?? null, returns: spec.returns, args, tenantArgument: spec.tenant_argument ?? null, description: spec.description ?? null });
  }
  const eventTypes = resolveEventTypes(document.event_types, collections, problems);
  if (problems.length) throw new MetadataError(locateProblems(problems, sourceLines));
  // Permissions: each role is the metadata as that role sees it.
  const roles = new Map<string, ResolvedRole>();
  const metadata: ResolvedMetadata = { tenantColumn: document.tenant_column, collections, roles, eventTypes, functions, ...(sourceLines ? { sourceLines } : {}) };
  roles.set(ADMIN_ROLE, { name: ADMIN_ROLE, variables: new Map(), rateLimit: null, metadata });
  for (const [name, role] of resolveRoles(metadata, document.roles, problems)) roles.set(name, role);
  if (problems.length) throw new MetadataError(locateProblems(problems, sourceLines));
  return metadata;
}

/**
 * The writable fields of a collection (`insert`, `update`, `delete`). A field that can never be
 * written is refused here, naming collection and field: the primary key in an update or a
 * preset (a request may give a new row's key in `insert.columns`), the tenant column (always the caller's
 * account), and a custom-field path (a key inside a JSON column; write the column itself).
 * Generated columns are refused against the database (`checkAgainstDatabase.ts`).
 */
function resolveWritableFields(
  name: string,
  collection: CollectionDocument,
  fields: ReadonlyMap<string, Field>,
  primaryKey: readonly Field[],
  tenantColumn: string,
  problems: string[],
): Pick<Collection, 'insert' | 'update' | 'delete'> {
  const writableField = (operation: 'insert' | 'update', fieldName: string, role: 'columns' | 'set'): Field | null => {
    const where = `collection ${name}, ${operation} ${role}, field ${fieldName}`;
    const field = fields.get(fieldName);
    if (!field) {
      problems.push(`${where}: not a field of the collection`);
      return null;
    }
    // A request may give a new row's key (Hasura: when the insert permission has the column); never change one.
    if (primaryKey.includes(field) && (operation === 'update' || role === 'set')) problems.push(`${where}: the primary key identifies the row and is never changed or preset`);
    else if (field.source.column === tenantColumn) problems.push(`${where}: the tenant column is always the caller's account`);
    else if (field.source.kind === 'customField') problems.push(`${where}: a custom field is a key inside ${field.source.column}; make ${field.source.column} writable instead`);
    else return field;
    return null;
  };
  const columnsOf = (operation: 'insert' | 'update', names: readonly string[]): Map<string, Field> => {
    const columns = new Map<string, Field>();
    for (const fieldName of names) {
      const field = writableField(operation, fieldName, 'columns');
      if (field) columns.set(fieldName, field);
    }
    return columns;
  };
  const presetsOf = (operation: 'insert' | 'update', presets: Presets | undefined, columns: ReadonlyMap<string, Field>): Map<string, PresetValue> => {
    const set = new Map<string, PresetValue>();
    for (const [fieldName, value] of Object.entries(presets ?? {})) {
      const field = writableField(operation, fieldName, 'set');
      if (!field) continue;
      if (columns.has(fieldName)) problems.push(`collection ${name}, ${operation} set, field ${fieldName}: a preset field cannot also be in columns`);
      set.set(fieldName, { field, value });
    }
    return set;
  };
  let insert: InsertPermission | null = null;
  if (collection.insert) {
    const columns = columnsOf('insert', collection.insert.columns);
    insert = { columns, set: presetsOf('insert', collection.insert.set, columns), conflictConstraints: collection.insert.on_conflict_constraints ?? [], check: null };
  }
  let update: UpdatePermission | null = null;
  if (collection.update) {
    const columns = columnsOf('update', collection.update.columns);
    update = { columns, set: presetsOf('update', collection.update.set, columns), filter: null, check: null };
  }
  return { insert, update, delete: collection.delete ? { allowed: true, filter: null } : null };
}
