import { tableKey, type Collection, type ComputedField, type Field, type FieldType, type Metadata, type Relationship } from '../../metadata/index.js';
import type { Param } from '../plan/params.js';
import { sql, type Fragment } from './fragment.js';
import { jsonOf } from './jsonText.js';
import { castOf } from './sqlTables.js';

const ACCOUNT = sql.param({ kind: 'account' });

/**
 * What every part of the select compiler shares while it renders ONE statement: the metadata,
 * the alias counter (aliases `_t1`, `_r2`, … in the order they are asked for, so the same plan
 * always gives the same text) and the small renderings of a row's values and predicates.
 */
export interface CompileContext {
  readonly metadata: Metadata;
  /** A new alias of this statement: `_<prefix><n>`. */
  readonly nextAlias: (prefix: string) => Fragment;
  /** The tenant column's name. */
  readonly tenant: Fragment;
  /** A text key (a custom field's JSON key) as a bound parameter. */
  readonly key: (text: string) => Fragment;
  readonly fieldOutput: (collection: Collection, table: Fragment, field: Field) => Fragment;
  readonly fieldValue: (table: Fragment, field: Field) => Fragment;
  readonly tenantPredicate: (table: Fragment) => Fragment;
  readonly joinPredicate: (relationship: Relationship, parent: Fragment, child: Fragment) => Fragment;
  readonly param: (value: Param, type: FieldType) => Fragment;
  /** A computed field's value for the row `table` of `collection`: `fn(tenant, key…, args…)` (named arguments given by the caller). */
  readonly computedCall: (collection: Collection, field: Pick<ComputedField, 'function'>, table: Fragment, args?: readonly Fragment[]) => Fragment;
}

export function compileContext(metadata: Metadata): CompileContext {
  let aliasCounter = 0;
  const tenant = sql.ident(metadata.tenantColumn);
  const key = (text: string): Fragment => sql`${sql.value(text)}::text`;
  return {
    metadata,
    nextAlias: (prefix) => sql.ident(`_${prefix}${++aliasCounter}`),
    tenant,
    key,
    /**
     * A field's value for output, as JSON text (custom fields keep their JSON type). A NOT NULL
     * column needs no null fallback; leaving it out keeps the statement as quick to parse as
     * `json_build_object` was (PGlite parses every statement it runs).
     */
    fieldOutput: (collection, table, field) => {
      const column = sql`${table}.${sql.ident(field.source.column)}`;
      if (field.source.kind === 'customField') return sql`coalesce((${column} -> ${key(field.source.key)})::text, 'null')`;
      return metadata.notNullColumns.has(`${tableKey(collection)}.${field.source.column}`) ? sql`to_json(${column})` : jsonOf(column);
    },
    /** A field's value for comparison and ordering, typed. */
    fieldValue: (table, field) =>
      field.source.kind === 'column'
        ? sql`${table}.${sql.ident(field.source.column)}`
        : sql`((${table}.${sql.ident(field.source.column)} ->> ${key(field.source.key)})::${castOf(field.type)})`,
    tenantPredicate: (table) => sql`${table}.${tenant} = ${ACCOUNT}`,
    joinPredicate: (relationship, parent, child) =>
      sql.join(
        relationship.mapping.map(([from, to]) => sql`${child}.${sql.ident(to)} = ${parent}.${sql.ident(from)}`),
        sql` AND `,
      ),
    computedCall: (collection, field, table, args = []) =>
      sql`${sql.qualified(collection.schema, field.function)}(${sql.join([sql`${table}.${tenant}`, ...collection.primaryKey.map((key) => sql`${table}.${sql.ident(key.source.column)}`), ...args], sql`, `)})`,
    /** A value of a comparison; a boolean written in the document is SQL text (`sql.boolean`), anything else a parameter. */
    param: (value, type) =>
      value.kind === 'const' && type === 'boolean' && typeof value.value === 'boolean' ? sql.boolean(value.value) : sql`${sql.param(value)}::${castOf(type)}`,
  };
}
