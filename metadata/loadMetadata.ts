import { readFileSync } from 'node:fs';
import AjvModule from 'ajv';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import metadataSchema from './metadata.schema.json' with { type: 'json' };
import { MetadataError, type Collection, type Field, type Metadata, type Relationship, type RootFieldKind, type ScalarType } from './model.js';

const Ajv = AjvModule.default;
const validateDocument = new Ajv({ allErrors: true }).compile(metadataSchema);

/** The file as written (after JSON Schema validation). */
interface MetadataDocument {
  version: 1;
  tenant_column: string;
  collections: Record<string, CollectionDocument>;
}
interface CollectionDocument {
  table: string;
  primary_key: string;
  root_fields?: RootFieldKind[];
  fields: Record<string, ScalarType | { type: ScalarType; column?: string; custom_field?: string }>;
  relationships?: Record<string, { object?: string; array?: string; on: Record<string, string> }>;
}

const CUSTOM_FIELDS_COLUMN = 'custom_fields';
const ALL_ROOT_FIELDS: readonly RootFieldKind[] = ['select', 'select_by_pk', 'select_aggregate'];

/** Reads, validates and resolves a metadata file. Throws `MetadataError` naming every problem. */
export function loadMetadataFile(path: string): Metadata {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new MetadataError([`cannot read ${path}: ${(error as Error).message}`]);
  }
  return parseMetadata(text, path);
}

export function parseMetadata(text: string, source = 'metadata'): Metadata {
  let document: unknown;
  try {
    document = parseYaml(text);
  } catch (error) {
    const where = error instanceof YAMLParseError && error.linePos ? ` at line ${error.linePos[0].line}` : '';
    throw new MetadataError([`${source} is not valid YAML${where}: ${(error as Error).message.split('\n')[0]}`]);
  }
  if (!validateDocument(document)) {
    throw new MetadataError(
      (validateDocument.errors ?? []).map((error) => `${describePath(error.instancePath)}: ${error.message ?? 'is invalid'}`),
    );
  }
  return resolveMetadata(document as unknown as MetadataDocument);
}

/** "/collections/loans/fields/amount" → "collection loans, field amount". */
function describePath(pointer: string): string {
  const parts = pointer.split('/').slice(1);
  if (parts[0] !== 'collections') return pointer ? `metadata ${pointer}` : 'metadata';
  const words = [`collection ${parts[1]}`];
  if (parts[2] === 'fields' && parts[3]) words.push(`field ${parts[3]}`);
  else if (parts[2] === 'relationships' && parts[3]) words.push(`relationship ${parts[3]}`);
  else if (parts[2]) words.push(parts[2]);
  return words.join(', ');
}

/**
 * Resolves in stages: (1) fields of every collection, (2) primary keys, (3) relationships,
 * which may then refer to any collection, (4) the names the GraphQL schema will generate.
 */
function resolveMetadata(document: MetadataDocument): Metadata {
  const problems: string[] = [];
  const collections = new Map<string, Collection>();

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
    const primaryKey = [...fields.values()].find((field) => field.source.kind === 'column' && field.source.column === collection.primary_key);
    if (!primaryKey) problems.push(`collection ${name}: primary_key ${collection.primary_key} is not one of its fields`);
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
    for (const fieldName of fields.keys()) {
      if (fieldName.startsWith('__')) problems.push(`collection ${name}, field ${fieldName}: names starting with __ are reserved`);
      if (fieldName.endsWith('_aggregate') && relationships.has(fieldName.slice(0, -'_aggregate'.length)))
        problems.push(`collection ${name}, field ${fieldName}: clashes with the generated aggregate of a relationship`);
    }
    if (!primaryKey) continue;
    collections.set(name, {
      name,
      table: collection.table,
      primaryKey,
      fields,
      relationships,
      rootFields: new Set(collection.root_fields ?? ALL_ROOT_FIELDS),
    });
  }

  // Generated root names must not collide (e.g. a collection "loans_aggregate").
  const rootNames = new Map<string, string>();
  for (const collection of collections.values()) {
    for (const rootName of [collection.name, `${collection.name}_by_pk`, `${collection.name}_aggregate`]) {
      const other = rootNames.get(rootName);
      if (other) problems.push(`collection ${collection.name}: generated name ${rootName} clashes with collection ${other}`);
      rootNames.set(rootName, collection.name);
    }
  }
  if (problems.length) throw new MetadataError(problems);
  return { tenantColumn: document.tenant_column, collections };
}
