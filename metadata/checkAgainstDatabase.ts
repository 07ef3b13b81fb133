import type { Queryable } from '../db/index.js';
import { MetadataError, type Metadata, type ScalarType } from './model.js';

/** PostgreSQL column types each metadata type may be read from. */
const COMPATIBLE: Readonly<Record<ScalarType, readonly string[]>> = {
  uuid: ['uuid'],
  text: ['text', 'character varying', 'character', 'citext'],
  numeric: ['numeric', 'integer', 'bigint', 'smallint', 'real', 'double precision'],
  integer: ['integer', 'bigint', 'smallint'],
  boolean: ['boolean'],
  date: ['date'],
  timestamptz: ['timestamp with time zone', 'timestamp without time zone'],
  jsonb: ['jsonb', 'json'],
};

/**
 * Checks the resolved metadata against the live catalogue: every table and column exists,
 * with a compatible type, every table has the tenant column, and relationship columns exist.
 * Throws `MetadataError` naming collection and field. Returns the metadata with what the
 * catalogue adds: which columns are NOT NULL.
 */
export async function checkMetadataAgainstDatabase(metadata: Metadata, db: Queryable): Promise<Metadata> {
  const { rows } = await db.query<{ table_name: string; column_name: string; data_type: string; is_nullable: string }>(
    `SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns
      WHERE table_schema = current_schema() AND table_name = ANY($1::text[])`,
    [[...new Set([...metadata.collections.values()].map((c) => c.table))]],
  );
  const columns = new Map<string, Map<string, string>>();
  const notNullColumns = new Set<string>();
  for (const row of rows) {
    if (row.is_nullable === 'NO') notNullColumns.add(`${row.table_name}.${row.column_name}`);
    if (!columns.has(row.table_name)) columns.set(row.table_name, new Map());
    columns.get(row.table_name)!.set(row.column_name, row.data_type);
  }
  const problems: string[] = [];
  for (const collection of metadata.collections.values()) {
    const table = columns.get(collection.table);
    if (!table) {
      problems.push(`collection ${collection.name}: table ${collection.table} does not exist`);
      continue;
    }
    if (!table.has(metadata.tenantColumn)) problems.push(`collection ${collection.name}: table ${collection.table} has no tenant column ${metadata.tenantColumn}`);
    for (const field of collection.fields.values()) {
      const dataType = table.get(field.source.column);
      if (!dataType) {
        problems.push(`collection ${collection.name}, field ${field.name}: column ${collection.table}.${field.source.column} does not exist`);
      } else if (field.source.kind === 'customField' ? dataType !== 'jsonb' : !COMPATIBLE[field.type].includes(dataType)) {
        problems.push(`collection ${collection.name}, field ${field.name}: column ${collection.table}.${field.source.column} is ${dataType}, not ${field.source.kind === 'customField' ? 'jsonb' : field.type}`);
      }
    }
    for (const relationship of collection.relationships.values()) {
      const target = metadata.collections.get(relationship.target)!;
      const targetTable = columns.get(target.table);
      for (const [from, to] of relationship.mapping) {
        if (!table.has(from)) problems.push(`collection ${collection.name}, relationship ${relationship.name}: column ${collection.table}.${from} does not exist`);
        if (targetTable && !targetTable.has(to)) problems.push(`collection ${collection.name}, relationship ${relationship.name}: column ${target.table}.${to} does not exist`);
      }
    }
  }
  if (problems.length) throw new MetadataError(problems);
  return { ...metadata, notNullColumns };
}
