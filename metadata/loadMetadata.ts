import { readFileSync } from 'node:fs';
import AjvModule, { type ErrorObject } from 'ajv';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import metadataSchema from './metadata.schema.json' with { type: 'json' };
import { MetadataError, SCALAR_TYPES, type Collection, type Field, type Metadata, type Relationship, type RootFieldKind, type ScalarType } from './model.js';

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
  if (!validateDocument(document)) throw new MetadataError(describeSchemaErrors(document, validateDocument.errors ?? []));
  return resolveMetadata(document as unknown as MetadataDocument);
}

/**
 * ajv's errors, one line per place. A field spec is a `oneOf` (a type name, `{type, column}`,
 * `{type, custom_field}`), whose raw errors say little; they are replaced by one plain sentence.
 */
function describeSchemaErrors(document: unknown, errors: readonly ErrorObject[]): string[] {
  const lines: string[] = [];
  const seenFields = new Set<string>();
  for (const error of errors) {
    const field = /^\/collections\/[^/]+\/fields\/[^/]+/.exec(error.instancePath)?.[0];
    if (field) {
      if (seenFields.has(field)) continue;
      seenFields.add(field);
      lines.push(`${describePath(field)}: ${describeFieldProblem(valueAt(document, field))}`);
    } else {
      lines.push(`${describePath(error.instancePath)}: ${error.message ?? 'is invalid'}`);
    }
  }
  return lines;
}

function describeFieldProblem(spec: unknown): string {
  const types = SCALAR_TYPES.join(', ');
  const type = typeof spec === 'string' ? spec : typeof spec === 'object' && spec !== null ? (spec as { type?: unknown }).type : undefined;
  if (typeof type !== 'string') return `give a type (one of ${types})`;
  if (!SCALAR_TYPES.includes(type as ScalarType)) return `type "${type}" is not one of ${types}`;
  if (typeof spec === 'object' && spec !== null) {
    const keys = Object.keys(spec);
    const unknown = keys.filter((key) => !['type', 'column', 'custom_field'].includes(key));
    if (unknown.length) return `unknown key ${unknown.join(', ')} (a field has type and either column or custom_field)`;
    if (keys.includes('column') && keys.includes('custom_field')) return 'give either column or custom_field, not both';
    return 'column must be a lower-case SQL name, custom_field a lower-case key';
  }
  return 'is invalid';
}

function valueAt(document: unknown, pointer: string): unknown {
  return pointer
    .split('/')
    .slice(1)
    .reduce<unknown>((value, part) => (typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[part] : undefined), document);
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
