import type { Queryable } from '../db/index.js';
import { withCatalogueFacts } from './catalogueFacts.js';
import { computedFieldProblems } from './checkComputedFields.js';
import { catalogueRelations, checkFunctions, comparable, compatible, eventTypeViewProblems, writableViewProblems, type CatalogueRelations } from './checkRelations.js';
import { MetadataError, tableKey, type Metadata, type Relationship, type ResolvedMetadata } from './model.js';
import { locateProblems } from './sourceLines.js';

/** A constraint of a collection's table, as the catalogue has it. */
export interface CatalogueConstraint {
  readonly table: string;
  /** p primary key, u unique (a constraint or a unique index), f foreign key, c check. */
  readonly kind: 'p' | 'u' | 'f' | 'c';
  readonly columns: readonly string[];
  /**
   * A unique index that backs no constraint (`people_individual_identity` on `lower(name)`):
   * named in write errors like a constraint, but `ON CONFLICT ON CONSTRAINT` cannot name it.
   */
  readonly indexOnly?: true;
  /**
   * A CHECK constraint's sentence for a write that breaks it, from its comment (`COMMENT ON
   * CONSTRAINT … IS '…'`; `constraintSentence`): a client is told it instead of "the value breaks
   * the rule <name>". Read with the catalogue, so a changed comment is told from the next reload.
   */
  readonly sentence?: ConstraintSentence;
}

/** What a CHECK constraint's comment says: the sentence, and the columns it is about. */
export interface ConstraintSentence {
  /** One column, when the comment names it (`amount: a payment is more than 0.00`); else the constraint's columns. */
  readonly columns: readonly string[];
  readonly text: string;
}

/**
 * What the engine's writes need from the catalogue, read once per metadata version: constraints
 * by table and name (to name the fields of a violation) and the precision of numeric columns (a value
 * with more digits is refused before PostgreSQL would round or overflow it).
 */
export interface Catalogue {
  /**
   * Table key (`tableKey`: `lender.plans`) → constraint name → constraint. By table first: a
   * constraint's name is unique only within its table (`plans_pkey` of `public.plans` and of
   * `lender.plans`; before session 35 one replaced the other, and a collection lost its key).
   * The tables under the collections' views are here too, keyed `schema.table` when no
   * collection is theirs (a write through a view breaks its table's constraints), and a domain's
   * CHECK constraints as ones of each relation with columns of that domain (those columns).
   */
  readonly constraints: ReadonlyMap<string, ReadonlyMap<string, CatalogueConstraint>>;
  /** `table.column` → digits in all and after the point, for `numeric(p, s)` columns. */
  readonly numericLimits: ReadonlyMap<string, { readonly precision: number; readonly scale: number }>;
  /** `table.column` → the type of `smallint`, `integer` and `bigint` columns (a value past its bounds is refused naming them). */
  readonly wholeNumberColumns: ReadonlyMap<string, WholeNumberType>;
}

/** The catalogue's whole-number column types, and the values each holds. */
export type WholeNumberType = 'smallint' | 'integer' | 'bigint';
export const WHOLE_NUMBER_BOUNDS: Readonly<Record<WholeNumberType, readonly [bigint, bigint]>> = {
  smallint: [-32768n, 32767n],
  integer: [-2147483648n, 2147483647n],
  bigint: [-9223372036854775808n, 9223372036854775807n],
};

/**
 * Stage 3: checks the resolved metadata against the live catalogue: every table (or view, in its
 * schema: `checkRelations.ts`) and column exists, with a compatible type, every table has the
 * tenant column, and relationship columns exist; a view's writes are ones PostgreSQL passes
 * through it, and tracked functions return SETOF their collection's relation (`checkFunctions`);
 * writable fields are not generated columns, and `on_conflict` constraints are unique
 * constraints of the table that include the tenant column. Throws `MetadataError` naming
 * collection and field. Returns the checked metadata (`Metadata`: every view with the facts the
 * catalogue adds, `CatalogueFacts`) and what the engine's writes need from the catalogue.
 */
export async function checkMetadataAgainstDatabase(metadata: ResolvedMetadata, db: Queryable): Promise<{ readonly metadata: Metadata; readonly catalogue: Catalogue }> {
  const relations = await catalogueRelations(db, metadata);
  const { tables } = relations;
  const { rows } = await keyed(relations, await db.query<CatalogueColumn>(CATALOGUE_COLUMNS, tables));
  const columns = new Map<string, Map<string, string>>();
  const notNullColumns = new Set<string>();
  const generated = new Set<string>();
  const identityAlways = new Set<string>();
  const numericLimits = new Map<string, { precision: number; scale: number }>();
  const wholeNumberColumns = new Map<string, WholeNumberType>();
  for (const row of rows) {
    if (row.is_nullable === 'NO') notNullColumns.add(`${row.table_name}.${row.column_name}`);
    if (!columns.has(row.table_name)) columns.set(row.table_name, new Map());
    columns.get(row.table_name)!.set(row.column_name, row.data_type);
    if (row.is_generated === 'ALWAYS') generated.add(`${row.table_name}.${row.column_name}`);
    if (row.identity_generation === 'ALWAYS') identityAlways.add(`${row.table_name}.${row.column_name}`);
    if (row.data_type === 'numeric' && row.numeric_precision !== null && row.numeric_scale !== null)
      numericLimits.set(`${row.table_name}.${row.column_name}`, { precision: Number(row.numeric_precision), scale: Number(row.numeric_scale) });
    if (row.data_type in WHOLE_NUMBER_BOUNDS) wholeNumberColumns.set(`${row.table_name}.${row.column_name}`, row.data_type as WholeNumberType);
  }
  const { rows: constraintRows } = await keyed(relations, await db.query<{ name: string; table_schema: string; table_name: string; kind: CatalogueConstraint['kind']; columns: string[]; comment: string | null }>(
    `SELECT c.conname AS name, (SELECT nspname::text FROM pg_namespace WHERE oid = t.relnamespace) AS table_schema, t.relname::text AS table_name, c.contype AS kind,
            coalesce((SELECT array_agg(a.attname::text ORDER BY k.ord) FROM unnest(c.conkey) WITH ORDINALITY AS k(num, ord)
                      JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.num), '{}') AS columns,
            CASE WHEN c.contype = 'c' THEN obj_description(c.oid, 'pg_constraint') END AS comment
       FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
      WHERE (${RELATION_IN} OR t.oid IN (${UNDER_VIEWS})) AND c.contype IN ('p', 'u', 'f', 'c')`,
    tables,
  ));
  // A domain's CHECK constraints, as constraints of each relation with columns of that domain
  // (PostgreSQL's error names the domain's constraint, neither table nor column).
  const { rows: domainRows } = await keyed(relations, await db.query<{ name: string; table_schema: string; table_name: string; columns: string[]; comment: string | null }>(
    `SELECT c.conname AS name, (SELECT nspname::text FROM pg_namespace WHERE oid = t.relnamespace) AS table_schema, t.relname::text AS table_name,
            array_agg(a.attname::text ORDER BY a.attnum) AS columns, obj_description(c.oid, 'pg_constraint') AS comment
       FROM pg_class t JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum > 0 AND NOT a.attisdropped
       JOIN pg_constraint c ON c.contypid = a.atttypid AND c.contype = 'c'
      WHERE ${RELATION_IN}
      GROUP BY t.relnamespace, t.relname, c.oid, c.conname`,
    tables,
  ));
  // Unique indexes that back no constraint (e.g. on lower(name)) are reported by name like one.
  const { rows: indexRows } = await keyed(relations, await db.query<{ name: string; table_schema: string; table_name: string; columns: string[] }>(
    `SELECT ic.relname AS name, (SELECT nspname::text FROM pg_namespace WHERE oid = t.relnamespace) AS table_schema, t.relname::text AS table_name,
            coalesce((SELECT array_agg(a.attname::text ORDER BY a.attnum) FROM pg_attribute a
                       WHERE a.attrelid = i.indrelid AND a.attnum > 0 AND NOT a.attisdropped
                         AND (a.attnum = ANY(i.indkey) OR pg_get_indexdef(i.indexrelid) ~ ('\\m' || a.attname || '\\M'))), '{}') AS columns
       FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid
      WHERE i.indisunique AND ${RELATION_IN}
        AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)`,
    tables,
  ));
  const indexConstants = await partialIndexConstants(db, tables);
  const valueLists = await checkedValueLists(db, relations);
  const foreignKeyRelationships = await relationshipsWithForeignKey(db, metadata, relations);
  const tablesFinalAtReturning = await tablesWhoseRowsAreFinalAtReturning(db, relations);
  const announcesSeveralWrites = (await db.query<{ has: boolean }>(`SELECT to_regprocedure('loanql_several_writes(uuid,text[])') IS NOT NULL AS has`)).rows[0]!.has;
  const changeNoticeKeys = await changeNoticeKeysOf(db, relations);
  const tablesUnderViews = await tablesUnderViewsOf(db, relations);
  const constraints = new Map<string, Map<string, CatalogueConstraint>>();
  const addConstraint = (name: string, constraint: CatalogueConstraint): void => {
    if (!constraints.has(constraint.table)) constraints.set(constraint.table, new Map());
    constraints.get(constraint.table)!.set(name, constraint);
  };
  for (const row of indexRows) addConstraint(row.name, { table: row.table_name, kind: 'u', columns: parseNameArray(row.columns), indexOnly: true });
  // A table's own constraint of a domain constraint's name is the one kept.
  for (const row of [...domainRows.map((domain) => ({ ...domain, kind: 'c' as const })), ...constraintRows]) {
    const columns = parseNameArray(row.columns);
    const sentence = row.comment === null ? undefined : constraintSentence(row.comment, columns);
    addConstraint(row.name, { table: row.table_name, kind: row.kind, columns, ...(sentence ? { sentence } : {}) });
  }
  const problems: string[] = [...writableViewProblems(metadata, relations), ...eventTypeViewProblems(metadata, relations)];
  /** Columns of another type than their field's: a problem each, with a hint when the type is an enum. */
  const mistyped: { readonly at: number; readonly type: string }[] = [];
  const functions = await checkFunctions(db, metadata, relations, problems);
  problems.push(...(await computedFieldProblems(db, metadata, relations, columns)));
  problems.push(...(await storedFormProblems(metadata, columns, db, relations)));
  for (const collection of metadata.collections.values()) {
    const table = columns.get(tableKey(collection));
    if (!table) {
      problems.push(`collection ${collection.name}: table ${tableKey(collection)} does not exist`);
      continue;
    }
    if (!table.has(metadata.tenantColumn)) problems.push(`collection ${collection.name}: table ${collection.table} has no tenant column ${metadata.tenantColumn}`);
    for (const field of collection.fields.values()) {
      const dataType = table.get(field.source.column);
      if (!dataType) {
        problems.push(`collection ${collection.name}, field ${field.name}: column ${collection.table}.${field.source.column} does not exist`);
      } else if (field.source.kind === 'customField' ? dataType !== 'jsonb' : !compatible(field.type, dataType)) {
        mistyped.push({ at: problems.length, type: dataType.replace(/\[\]$/, '') });
        problems.push(`collection ${collection.name}, field ${field.name}: column ${collection.table}.${field.source.column} is ${dataType}, not ${field.source.kind === 'customField' ? 'jsonb' : field.type}`);
      }
    }
    for (const relationship of collection.relationships.values()) {
      const target = metadata.collections.get(relationship.target)!;
      const targetTable = columns.get(tableKey(target));
      // Every join also pairs the two tenant columns.
      for (const [from, to] of [[metadata.tenantColumn, metadata.tenantColumn] as const, ...relationship.mapping]) {
        const fromType = table.get(from);
        const toType = targetTable?.get(to);
        if (!fromType) {
          if (from !== metadata.tenantColumn) problems.push(`collection ${collection.name}, relationship ${relationship.name}: column ${collection.table}.${from} does not exist`);
        } else if (targetTable && !toType) {
          if (to !== metadata.tenantColumn) problems.push(`collection ${collection.name}, relationship ${relationship.name}: column ${target.table}.${to} does not exist`);
        } else if (toType && !comparable(fromType, toType))
          problems.push(`collection ${collection.name}, relationship ${relationship.name}: column ${collection.table}.${from} is ${fromType} and ${target.table}.${to} is ${toType}; PostgreSQL cannot compare them — join columns of one type (or cast one in a view)`);
      }
    }
  }
  for (const collection of metadata.collections.values()) {
    for (const [operation, permission] of [['insert', collection.insert], ['update', collection.update]] as const) {
      if (!permission) continue;
      for (const field of [...permission.columns.values(), ...[...permission.set.values()].map((preset) => preset.field)]) {
        if (generated.has(`${tableKey(collection)}.${field.source.column}`))
          problems.push(`collection ${collection.name}, ${operation}, field ${field.name}: column ${collection.table}.${field.source.column} is generated by the database`);
        // Before session 35 such a column loaded and every write giving it was a 500 (428C9).
        else if (identityAlways.has(`${tableKey(collection)}.${field.source.column}`))
          problems.push(`collection ${collection.name}, ${operation}, field ${field.name}: column ${collection.table}.${field.source.column} is GENERATED ALWAYS AS IDENTITY: the database makes every value (leave it out, or declare the column GENERATED BY DEFAULT to take a given one)`);
      }
    }
    // The declared key identifies a row within an account: some primary key or unique
    // constraint of the table lies within (tenant column, key columns). A view has no
    // constraints: its declared key is the admin's word (metadata/README.md, "Views").
    const key = tableKey(collection);
    const keyColumns = new Set([metadata.tenantColumn, ...collection.primaryKey.map((field) => field.source.column)]);
    const identifying = [...(constraints.get(key)?.values() ?? [])].some(
      (constraint) => (constraint.kind === 'p' || constraint.kind === 'u') && constraint.columns.length > 0 && constraint.columns.every((column) => keyColumns.has(column)),
    );
    if (columns.has(key) && collection.primaryKey.length && relations.kinds.get(key)?.kind !== 'view' && !identifying)
      problems.push(`collection ${collection.name}: primary_key ${collection.primaryKey.map((field) => field.source.column).join(', ')} does not identify a row: no primary key or unique constraint of ${collection.table} lies within (${[...keyColumns].join(', ')})`);
    for (const name of collection.insert?.conflictConstraints ?? []) {
      const constraint = constraints.get(key)?.get(name);
      if (!constraint || (constraint.kind !== 'u' && constraint.kind !== 'p'))
        problems.push(`collection ${collection.name}, insert on_conflict_constraints: ${name} is not a unique constraint of table ${collection.table}`);
      else if (constraint.indexOnly)
        problems.push(`collection ${collection.name}, insert on_conflict_constraints: ${name} is a unique index of table ${collection.table}, not a constraint (ON CONFLICT ON CONSTRAINT cannot name it; ALTER TABLE … ADD CONSTRAINT … UNIQUE USING INDEX makes one of a plain-column index)`);
      else if (!constraint.columns.includes(metadata.tenantColumn))
        problems.push(`collection ${collection.name}, insert on_conflict_constraints: ${name} does not include the tenant column ${metadata.tenantColumn}`);
    }
  }
  if (mistyped.length) {
    const enumTypes = await enumTypeNames(db, mistyped.map(({ type }) => type));
    for (const { at, type } of mistyped) if (enumTypes.has(type)) problems[at] += ENUM_HINT;
  }
  if (problems.length) throw new MetadataError(locateProblems(problems, metadata.sourceLines));
  const uniqueConstraints = new Map<string, string[]>();
  for (const [table, named] of constraints)
    for (const [name, constraint] of [...named].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      // Only real constraints: an upsert is `ON CONFLICT ON CONSTRAINT <name>` (Hasura offers its table's constraints too).
      if ((constraint.kind === 'p' || constraint.kind === 'u') && !constraint.indexOnly && constraint.columns.includes(metadata.tenantColumn))
        uniqueConstraints.set(table, [...(uniqueConstraints.get(table) ?? []), name]);
  const checked = withCatalogueFacts(metadata, { notNullColumns, indexConstants, valueLists, foreignKeyRelationships, uniqueConstraints, functions, tablesFinalAtReturning, announcesSeveralWrites, changeNoticeKeys, tablesUnderViews });
  return { metadata: checked, catalogue: { constraints, numericLimits, wholeNumberColumns } };
}

/**
 * The object relationships of the metadata whose column pairs, with the tenant column's pair,
 * are exactly those of a validated, not deferrable foreign key from the collection's table to
 * the target's table (in any column order).
 */
async function relationshipsWithForeignKey(db: Queryable, metadata: ResolvedMetadata, relations: CatalogueRelations): Promise<Set<Relationship>> {
  const { rows } = await db.query<{ table_schema: string; table_name: string; ref_schema: string; ref_table: string; columns: unknown; ref_columns: unknown }>(
    `SELECT (SELECT nspname::text FROM pg_namespace WHERE oid = t.relnamespace) AS table_schema, t.relname::text AS table_name, (SELECT nspname::text FROM pg_namespace WHERE oid = r.relnamespace) AS ref_schema, r.relname::text AS ref_table,
            array(SELECT a.attname::text FROM unnest(c.conkey) WITH ORDINALITY AS k(num, ord) JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.num ORDER BY k.ord) AS columns,
            array(SELECT a.attname::text FROM unnest(c.confkey) WITH ORDINALITY AS k(num, ord) JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.num ORDER BY k.ord) AS ref_columns
       FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid JOIN pg_class r ON r.oid = c.confrelid
      WHERE c.contype = 'f' AND c.convalidated AND NOT c.condeferrable AND ${RELATION_IN}`,
    relations.tables,
  );
  const pairsKey = (pairs: readonly (readonly [string, string])[]): string =>
    pairs
      .map(([from, to]) => `${from}=${to}`)
      .sort()
      .join(',');
  const keys = new Set<string>();
  for (const row of rows) {
    const columns = parseNameArray(row.columns);
    const refColumns = parseNameArray(row.ref_columns);
    if (columns.length !== refColumns.length) continue;
    keys.add(`${relations.keyOf(row.table_schema, row.table_name)}>${relations.keyOf(row.ref_schema, row.ref_table)}:${pairsKey(columns.map((column, i) => [column, refColumns[i]!] as const))}`);
  }
  const backed = new Set<Relationship>();
  for (const collection of metadata.collections.values()) {
    for (const relationship of collection.relationships.values()) {
      if (relationship.kind !== 'object') continue;
      const target = metadata.collections.get(relationship.target);
      if (!target) continue;
      const pairs = [[metadata.tenantColumn, metadata.tenantColumn] as const, ...relationship.mapping];
      if (keys.has(`${tableKey(collection)}>${tableKey(target)}:${pairsKey(pairs)}`)) backed.add(relationship);
    }
  }
  return backed;
}

/** loanql's own AFTER triggers that write other tables only: webhook capture (app/webhooks) and change notices (0029/0031/0039). */
const OWN_TRIGGERS = ['loanql_events', 'loanql_events_at_commit', 'loanql_notice_insert', 'loanql_notice_update', 'loanql_notice_delete'];

/** The change-notice triggers of a table (migrations 0029/0031) and the functions they call. */
const NOTICE_TRIGGERS = ['loanql_notice_insert', 'loanql_notice_update', 'loanql_notice_delete'];
const NOTICE_FUNCTIONS = ['loanql_notice_changes', 'loanql_notice_updates'];

/**
 * `CatalogueFacts.changeNoticeKeys`: the tables whose three change-notice triggers all name one
 * column of the table as their argument (the key their notices name), and that column. A table
 * missing a trigger, or whose triggers disagree or name no column, is left out (not keyed: every
 * notice of it refreshes all its account's subscribers, which never misses a write).
 */
async function changeNoticeKeysOf(db: Queryable, relations: CatalogueRelations): Promise<Map<string, string>> {
  const { rows } = await keyed(relations, await db.query<{ table_schema: string; table_name: string; key_column: string }>(
    `SELECT (SELECT nspname::text FROM pg_namespace WHERE oid = t.relnamespace) AS table_schema, t.relname::text AS table_name, min(n.argument) AS key_column
       FROM pg_class t
       JOIN LATERAL (SELECT CASE WHEN g.tgnargs = 1 THEN split_part(encode(g.tgargs, 'escape'), '\\000', 1) END AS argument
                       FROM pg_trigger g JOIN pg_proc f ON f.oid = g.tgfoid
                      WHERE g.tgrelid = t.oid AND g.tgname = ANY ($3::text[]) AND f.proname = ANY ($4::text[])) AS n ON true
      WHERE ${RELATION_IN} AND t.relkind = 'r'
      GROUP BY t.oid, t.relnamespace, t.relname
     HAVING count(*) = 3 AND count(n.argument) = 3 AND min(n.argument) = max(n.argument)
        AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = t.oid AND a.attname = min(n.argument) AND a.attnum > 0 AND NOT a.attisdropped)`,
    [...relations.tables, NOTICE_TRIGGERS, NOTICE_FUNCTIONS],
  ));
  return new Map(rows.map((row) => [row.table_name, row.key_column]));
}

/**
 * `CatalogueFacts.tablesUnderViews`: for each collection's view (`$1` schemas, `$2` names), the
 * plain and partitioned tables its rule reads, through the views it reads at any depth (pg_depend
 * of each view's `_RETURN` rule), by their own names — what their change notices say.
 */
async function tablesUnderViewsOf(db: Queryable, relations: CatalogueRelations): Promise<Map<string, readonly string[]>> {
  const { rows } = await keyed(relations, await db.query<{ table_schema: string; table_name: string; tables: unknown }>(
    `WITH RECURSIVE under(view_oid, oid) AS (
         SELECT t.oid, t.oid FROM pg_class t WHERE t.relkind = 'v' AND ${RELATION_IN}
         UNION
         SELECT u.view_oid, d.refobjid FROM under u JOIN pg_class uc ON uc.oid = u.oid AND uc.relkind = 'v'
           JOIN pg_rewrite r ON r.ev_class = u.oid
           JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid AND d.refclassid = 'pg_class'::regclass AND d.refobjid <> u.oid)
     SELECT (SELECT nspname::text FROM pg_namespace WHERE oid = v.relnamespace) AS table_schema, v.relname::text AS table_name,
            array_agg(DISTINCT b.relname::text ORDER BY b.relname::text) AS tables
       FROM under u JOIN pg_class v ON v.oid = u.view_oid JOIN pg_class b ON b.oid = u.oid AND b.relkind IN ('r', 'p')
      GROUP BY v.oid, v.relnamespace, v.relname`,
    relations.tables,
  ));
  return new Map(rows.map((row) => [row.table_name, parseNameArray(row.tables)]));
}

/**
 * The tables (`tableKey`) whose written rows are final at RETURNING (`CatalogueFacts.tablesFinalAtReturning`):
 * plain tables without rules whose every trigger is a BEFORE trigger, one of loanql's own
 * (`OWN_TRIGGERS`, calling a `loanql_` function), or an internal foreign-key trigger of a key that
 * does not reference its own table (a cascade could otherwise change the written rows). None
 * when the database lacks `loanql_assert` (migration 0041).
 */
async function tablesWhoseRowsAreFinalAtReturning(db: Queryable, relations: CatalogueRelations): Promise<Set<string>> {
  const { rows } = await keyed(relations, await db.query<{ table_schema: string; table_name: string }>(
    `SELECT (SELECT nspname::text FROM pg_namespace WHERE oid = t.relnamespace) AS table_schema, t.relname::text AS table_name
       FROM pg_class t
      WHERE ${RELATION_IN} AND t.relkind = 'r' AND NOT t.relhasrules AND to_regprocedure('loanql_assert(boolean,text)') IS NOT NULL
        AND NOT EXISTS (
          SELECT 1 FROM pg_trigger g JOIN pg_proc f ON f.oid = g.tgfoid
           WHERE g.tgrelid = t.oid
             AND NOT ((g.tgtype & 2) <> 0 AND NOT g.tgisinternal)
             AND NOT (NOT g.tgisinternal AND g.tgname = ANY ($3::text[]) AND f.proname LIKE 'loanql\_%')
             AND NOT (g.tgisinternal AND EXISTS (SELECT 1 FROM pg_constraint c WHERE c.oid = g.tgconstraint AND c.contype = 'f' AND c.conrelid <> c.confrelid)))`,
    [...relations.tables, OWN_TRIGGERS],
  ));
  return new Set(rows.map((row) => row.table_name));
}

/** A text constant the compiler may write as SQL text: plain words only (`sql.catalogueConstant`). */
const PLAIN_CONSTANT = /^[A-Za-z0-9_.:-]{1,100}$/;

/**
 * The text constants compared with a column (`col = '…'::text`, `col <> '…'::text`) in the
 * predicates of the partial indexes on these tables, by column name. Only plain words are kept.
 */
async function partialIndexConstants(db: Queryable, tables: readonly (readonly string[])[]): Promise<Map<string, Set<string>>> {
  const { rows } = await db.query<{ predicate: string }>(
    `SELECT pg_get_expr(i.indpred, i.indrelid) AS predicate
       FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid
      WHERE i.indpred IS NOT NULL AND ${RELATION_IN}`,
    tables,
  );
  const constants = new Map<string, Set<string>>();
  for (const { predicate } of rows) {
    for (const match of predicate.matchAll(/(?:^|[\s(])"?([a-z_][a-z0-9_]*)"?\s*(?:=|<>)\s*'((?:[^']|'')*)'::text\b/g)) {
      const value = match[2]!.replace(/''/g, "'");
      if (!PLAIN_CONSTANT.test(value)) continue;
      const column = match[1]!;
      if (!constants.has(column)) constants.set(column, new Set());
      constants.get(column)!.add(value);
    }
  }
  return constants;
}

/**
 * The values a CHECK constraint allows a text column, by `table.column`: constraints of the form
 * `CHECK (col = ANY (ARRAY['a'::text, …]))` (how PostgreSQL shows `col IN ('a', …)`), plain
 * words only.
 */
async function checkedValueLists(db: Queryable, relations: CatalogueRelations): Promise<Map<string, readonly string[]>> {
  const { rows } = await keyed(relations, await db.query<{ table_schema: string; table_name: string; definition: string }>(
    `SELECT (SELECT nspname::text FROM pg_namespace WHERE oid = t.relnamespace) AS table_schema, t.relname::text AS table_name, pg_get_constraintdef(c.oid) AS definition
       FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
      WHERE c.contype = 'c' AND c.convalidated AND ${RELATION_IN}`,
    relations.tables,
  ));
  const lists = new Map<string, readonly string[]>();
  for (const { table_name: table, definition } of rows) {
    const match = /^CHECK \(\("?([a-z_][a-z0-9_]*)"? = ANY \(ARRAY\[(.*)\]\)\)\)$/.exec(definition);
    if (!match) continue;
    const items = match[2]!.split(', ').map((item) => /^'((?:[^']|'')*)'::text$/.exec(item)?.[1]?.replace(/''/g, "'"));
    if (items.length && items.every((item): item is string => item !== undefined && PLAIN_CONSTANT.test(item))) lists.set(`${table}.${match[1]!}`, items);
  }
  return lists;
}

/**
 * What a column of a PostgreSQL enum type needs (Hasura's native enum scalars have no loanql
 * type: a field's value is cast to its declared type, and an enum compares with neither text
 * nor another enum). Before session 35 the refusal said only `is borrower_status, not text`.
 */
const ENUM_HINT =
  ' (an enum type, which loanql does not map: make the column text with a CHECK of its values — ALTER COLUMN … TYPE text — or a foreign key to a table of the values, as Hasura recommends; or read it through a view as <column>::text)';

/** Which of these type names (as `CATALOGUE_COLUMNS` writes them) are enum types (`pg_type.typtype = 'e'`); read only for a refused file. */
async function enumTypeNames(db: Queryable, types: readonly string[]): Promise<Set<string>> {
  const { rows: enums } = await db.query<{ name: string }>(`SELECT DISTINCT typname::text AS name FROM pg_type WHERE typtype = 'e' AND typname = ANY($1::text[])`, [[...new Set(types)]]);
  return new Set(enums.map((row) => row.name));
}

/** A column as `CATALOGUE_COLUMNS` reads it: information_schema.columns' names and values. */
export interface CatalogueColumn {
  readonly table_schema: string;
  readonly table_name: string;
  readonly column_name: string;
  /** As information_schema writes it (`integer`, `timestamp with time zone`); an extension's type (citext) by its name; an array as its element's name with `[]`. */
  readonly data_type: string;
  readonly is_nullable: 'YES' | 'NO';
  readonly is_generated: 'ALWAYS' | 'NEVER';
  /** An identity column's kind: `GENERATED ALWAYS AS IDENTITY` refuses a given value (PostgreSQL's 428C9), `BY DEFAULT` takes one. */
  readonly identity_generation: 'ALWAYS' | 'BY DEFAULT' | null;
  readonly numeric_precision: number | null;
  readonly numeric_scale: number | null;
}

/**
 * The columns of the collections' relations (`$1` schemas, `$2` names), read from pg_catalog with
 * information_schema.columns' rules: the relation kinds it lists (tables, views, foreign and
 * partitioned tables), only columns the current role may use, a domain's base type and a NOT
 * NULL domain counted as NOT NULL. (information_schema.columns itself answers the same rows but
 * cost 55 ms a check on PGlite, paid at every start and metadata reload: it joins every column of
 * the database before filtering. `tests/engine/catalogueColumns.test.ts` holds the two equal.)
 */
export const CATALOGUE_COLUMNS = `SELECT n.nspname::text AS table_schema, c.relname::text AS table_name, a.attname::text AS column_name,
        CASE WHEN e.oid IS NOT NULL THEN CASE WHEN e.typnamespace = 'pg_catalog'::regnamespace THEN format_type(e.oid, NULL) ELSE e.typname::text END || '[]'
             WHEN b.typnamespace = 'pg_catalog'::regnamespace THEN format_type(b.oid, NULL)
             ELSE b.typname::text END AS data_type,
        CASE WHEN a.attnotnull OR (t.typtype = 'd' AND t.typnotnull) THEN 'NO' ELSE 'YES' END AS is_nullable,
        CASE WHEN a.attgenerated <> '' THEN 'ALWAYS' ELSE 'NEVER' END AS is_generated,
        CASE a.attidentity WHEN 'a' THEN 'ALWAYS' WHEN 'd' THEN 'BY DEFAULT' END AS identity_generation,
        information_schema._pg_numeric_precision(b.oid, CASE WHEN t.typtype = 'd' THEN t.typtypmod ELSE a.atttypmod END) AS numeric_precision,
        information_schema._pg_numeric_scale(b.oid, CASE WHEN t.typtype = 'd' THEN t.typtypmod ELSE a.atttypmod END) AS numeric_scale
   FROM (SELECT DISTINCT * FROM unnest($1::text[], $2::text[])) AS wanted(schema_name, relation_name)
   JOIN pg_namespace n ON n.nspname = wanted.schema_name
   JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = wanted.relation_name AND c.relkind IN ('r', 'v', 'f', 'p')
   JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
   JOIN pg_type t ON t.oid = a.atttypid
   JOIN pg_type b ON b.oid = CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END
   LEFT JOIN pg_type e ON b.typelem <> 0 AND b.typlen = -1 AND e.oid = b.typelem
  WHERE pg_has_role(c.relowner, 'USAGE') OR has_column_privilege(c.oid, a.attnum, 'SELECT, INSERT, UPDATE, REFERENCES')`;

/** `t` (a pg_class row of a table) is one of the collections' relations (`$1` schemas, `$2` names). */
const RELATION_IN = `((SELECT nspname::text FROM pg_namespace WHERE oid = t.relnamespace), t.relname::text) IN (SELECT * FROM unnest($1::text[], $2::text[]))`;

/**
 * What a CHECK constraint's comment tells a client whose write breaks it: `<column>: <sentence>`,
 * when the text before the first `: ` is one of the constraint's columns, is that sentence about
 * that column (`date_reversed: a payment is reversed on or after its own date, not before`, of
 * a constraint on `date_reversed` and `date`); any other comment is the sentence, about all of
 * the constraint's columns. A blank comment says nothing (the generic answer stays).
 */
function constraintSentence(comment: string, columns: readonly string[]): ConstraintSentence | undefined {
  const text = comment.trim();
  if (text === '') return undefined;
  const colon = text.indexOf(': ');
  const column = colon > 0 ? text.slice(0, colon) : '';
  const sentence = colon > 0 ? text.slice(colon + 2).trim() : '';
  if (columns.includes(column) && sentence !== '') return { columns: [column], text: sentence };
  return { columns, text };
}

/**
 * The relations under the collections' views (`$1` schemas, `$2` names), at any depth: what a
 * view's rule reads (pg_depend). A write through a view is refused by its table's constraints,
 * which PostgreSQL names with that table: their rows are keyed `schema.table` when the table is
 * no collection (`keyed`), so a write error finds them by the table PostgreSQL names.
 */
const UNDER_VIEWS = `WITH RECURSIVE under(oid) AS (
    SELECT v.oid FROM pg_class v WHERE v.relkind = 'v' AND ((SELECT nspname::text FROM pg_namespace WHERE oid = v.relnamespace), v.relname::text) IN (SELECT * FROM unnest($1::text[], $2::text[]))
    UNION
    SELECT d.refobjid FROM under u JOIN pg_rewrite r ON r.ev_class = u.oid
      JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid AND d.refclassid = 'pg_class'::regclass AND d.refobjid <> u.oid)
  SELECT oid FROM under`;

/** Rows whose (table_schema, table_name) are rewritten to the collections' table key (`tableKey`): `table_name` holds the key. */
function keyed<T extends { table_schema: string; table_name: string }>(relations: CatalogueRelations, result: { rows: T[] }): { rows: T[] } {
  return { rows: result.rows.map((row) => ({ ...row, table_name: relations.keyOf(row.table_schema, row.table_name) })) };
}

/** node-postgres parses name[] into an array; PGlite may hand over the literal `{a,b}`. */
function parseNameArray(value: unknown): string[] {
  if (Array.isArray(value)) return value.map(String);
  if (typeof value === 'string') return value.replace(/^\{|\}$/g, '').split(',').filter(Boolean).map((name) => name.replace(/^"|"$/g, ''));
  return [];
}

/**
 * A computed field's `stored_form` (`daysSince`): its date column exists and is a date, its
 * `today` function exists, and an index leads with (tenant column, date column) — the filter and
 * the order it promises use that index.
 */
async function storedFormProblems(metadata: ResolvedMetadata, columns: ReadonlyMap<string, ReadonlyMap<string, string>>, db: Queryable, relations: CatalogueRelations): Promise<string[]> {
  // A collection whose table is missing is refused as that, once (not also as its forms' columns).
  const forms = [...metadata.collections.values()].filter((collection) => columns.has(tableKey(collection))).flatMap((collection) =>
    [...collection.computedFields.values()].flatMap((field) => (field.storedForm ? [{ collection, field, form: field.storedForm }] : [])),
  );
  if (!forms.length) return [];
  const { rows: indexRows } = await keyed(relations, await db.query<{ table_schema: string; table_name: string; leading: string[] | string }>(
    `SELECT (SELECT nspname::text FROM pg_namespace WHERE oid = t.relnamespace) AS table_schema, t.relname::text AS table_name, ARRAY[a1.attname, a2.attname]::text[] AS leading
       FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid
       JOIN pg_attribute a1 ON a1.attrelid = t.oid AND a1.attnum = i.indkey[0]
       JOIN pg_attribute a2 ON a2.attrelid = t.oid AND a2.attnum = i.indkey[1]
      WHERE ${RELATION_IN} AND i.indnatts >= 2 AND i.indpred IS NULL`,
    relations.tables,
  ));
  const leadingPairs = new Set(indexRows.map((row) => `${row.table_name}.${parseNameArray(row.leading).join(',')}`));
  const { rows: functionRows } = await db.query<{ name: string }>(
    `SELECT p.proname AS name FROM pg_proc p WHERE p.pronamespace = current_schema()::regnamespace AND p.proname = ANY($1::text[]) AND p.prorettype = 'date'::regtype`,
    [[...new Set(forms.map(({ form }) => form.today))]],
  );
  const todayFunctions = new Set(functionRows.map((row) => row.name));
  const problems: string[] = [];
  for (const { collection, field, form } of forms) {
    const where = `collection ${collection.name}, computed field ${field.name}, stored_form`;
    const type = columns.get(tableKey(collection))?.get(form.column);
    if (type !== 'date') problems.push(`${where}: column ${collection.table}.${form.column} ${type ? `is ${type}, not date` : 'does not exist'}`);
    else if (!leadingPairs.has(`${tableKey(collection)}.${metadata.tenantColumn},${form.column}`))
      problems.push(`${where}: no index of ${collection.table} starts with (${metadata.tenantColumn}, ${form.column})`);
    if (!todayFunctions.has(form.today)) problems.push(`${where}: function ${form.today} returning date does not exist`);
  }
  return problems;
}
