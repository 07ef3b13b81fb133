import type { Queryable } from '../db/index.js';
import { elementTypeOf, isArrayType, tableKey, type ArrayElementType, type FieldType, type ResolvedMetadata, type ScalarType, type TrackedFunction } from './model.js';

/** PostgreSQL column types each metadata type may be read from. */
export const COMPATIBLE: Readonly<Record<ScalarType, readonly string[]>> = {
  uuid: ['uuid'],
  text: ['text', 'character varying', 'character', 'citext'],
  numeric: ['numeric', 'integer', 'bigint', 'smallint', 'real', 'double precision'],
  integer: ['integer', 'bigint', 'smallint'],
  boolean: ['boolean'],
  date: ['date'],
  timestamptz: ['timestamp with time zone', 'timestamp without time zone'],
  jsonb: ['jsonb'],
  json: ['json'],
  bigint: ['bigint', 'integer', 'smallint'],
  smallint: ['smallint'],
  float8: ['double precision', 'real'],
  real: ['real'],
  citext: ['citext'],
  timestamp: ['timestamp without time zone'],
  time: ['time without time zone'],
};

/**
 * The catalogue's name (`format_type`'s spelling) of each element type: an array field's column
 * must have exactly it (PostgreSQL has no cross-type operators between arrays: `integer[] =
 * bigint[]` does not exist); computed fields' argument checks start from it (checkComputedFields.ts).
 */
export const ARRAY_ELEMENT_COLUMN: Readonly<Record<ArrayElementType, string>> = {
  uuid: 'uuid',
  text: 'text',
  numeric: 'numeric',
  integer: 'integer',
  boolean: 'boolean',
  date: 'date',
  timestamptz: 'timestamp with time zone',
  bigint: 'bigint',
  smallint: 'smallint',
  float8: 'double precision',
  real: 'real',
  citext: 'citext',
  timestamp: 'timestamp without time zone',
  time: 'time without time zone',
};

/** Whether a column of the catalogue's `dataType` (an array: `integer[]`) may be read as a field of `type`. */
export const compatible = (type: FieldType, dataType: string): boolean =>
  isArrayType(type) ? dataType === `${ARRAY_ELEMENT_COLUMN[elementTypeOf(type)]}[]` : COMPATIBLE[type].includes(dataType);

/** Column types PostgreSQL compares with `=` across types (a relationship may join one to another of its family). */
const COMPARABLE_FAMILIES: readonly (readonly string[])[] = [
  ['smallint', 'integer', 'bigint', 'numeric', 'real', 'double precision'],
  ['text', 'character varying', 'character', 'citext'],
  ['date', 'timestamp without time zone', 'timestamp with time zone'],
];

/**
 * Whether a relationship may join a column of catalogue type `a` to one of `b`: the same type, or
 * two of one family above. `uuid = text` does not exist: such a relationship once loaded and every
 * request through it failed (a 500).
 */
export const comparable = (a: string, b: string): boolean => a === b || COMPARABLE_FAMILIES.some((family) => family.includes(a) && family.includes(b));

/**
 * Stage 3's view of the relations the collections name: where each is (its schema, or the
 * current one) and what it is (a table, or a view and which writes PostgreSQL can pass through
 * it). Catalogue rows are read by (schema, name) and keyed by `tableKey`.
 */
export interface CatalogueRelations {
  /** The collections' relations as `[schemas, names]`, for `unnest($1::text[], $2::text[])`. */
  readonly tables: readonly [readonly string[], readonly string[]];
  /** The table key of a catalogue row's (schema, name) (a relation no collection names: `schema.name`). */
  keyOf(schema: string, name: string): string;
  /** What each relation is, by table key (absent: it does not exist). */
  readonly kinds: ReadonlyMap<string, RelationKind>;
  /** `current_schema()`: where an unqualified table or function is. */
  readonly currentSchema: string;
}

export interface RelationKind {
  readonly kind: 'table' | 'view' | 'other';
  /** The writes PostgreSQL passes through the relation (a view: when it is automatically updatable). */
  readonly insert: boolean;
  readonly update: boolean;
  readonly delete: boolean;
}

/** Reads where the collections' relations are and what they are. */
export async function catalogueRelations(db: Queryable, metadata: ResolvedMetadata): Promise<CatalogueRelations> {
  const { rows: current } = await db.query<{ schema: string }>('SELECT current_schema()::text AS schema');
  const currentSchema = current[0]!.schema;
  const keys = new Map<string, string>();
  for (const collection of metadata.collections.values()) keys.set(`${collection.schema ?? currentSchema}\u0000${collection.table}`, tableKey(collection));
  const pairs = [...keys.keys()].map((pair) => pair.split('\u0000') as [string, string]);
  const tables = [pairs.map(([schema]) => schema), pairs.map(([, name]) => name)] as const;
  const keyOf = (schema: string, name: string): string => keys.get(`${schema}\u0000${name}`) ?? `${schema}.${name}`;
  // pg_relation_is_updatable's bits: 4 UPDATE, 8 INSERT, 16 DELETE (a table: all three).
  const { rows } = await db.query<{ schema: string; name: string; relkind: string; events: number }>(
    `SELECT n.nspname::text AS schema, c.relname::text AS name, c.relkind::text AS relkind, pg_relation_is_updatable(c.oid, false) AS events
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE (n.nspname::text, c.relname::text) IN (SELECT * FROM unnest($1::text[], $2::text[]))`,
    tables,
  );
  const kinds = new Map<string, RelationKind>();
  for (const row of rows) {
    const events = Number(row.events);
    const kind = row.relkind === 'r' || row.relkind === 'p' ? 'table' : row.relkind === 'v' ? 'view' : 'other';
    kinds.set(keyOf(row.schema, row.name), { kind, insert: (events & 8) !== 0, update: (events & 4) !== 0, delete: (events & 16) !== 0 });
  }
  return { tables, keyOf, kinds, currentSchema };
}

/**
 * Writes the metadata declares on a view that PostgreSQL cannot pass through it (a view is
 * written only when it is automatically updatable), and relations that are neither tables nor
 * views (a materialized view's columns are not in information_schema).
 */
export function writableViewProblems(metadata: ResolvedMetadata, relations: CatalogueRelations): string[] {
  const problems: string[] = [];
  for (const collection of metadata.collections.values()) {
    const relation = relations.kinds.get(tableKey(collection));
    if (!relation) continue;
    if (relation.kind === 'other') problems.push(`collection ${collection.name}: ${tableKey(collection)} is neither a table nor a view`);
    if (relation.kind !== 'view') continue;
    for (const operation of ['insert', 'update', 'delete'] as const)
      if (collection[operation] && !relation[operation])
        problems.push(`collection ${collection.name}, ${operation}: view ${tableKey(collection)} is not automatically updatable for ${operation} (PostgreSQL); remove ${operation} or write its table`);
  }
  return problems;
}

/**
 * Event types on a collection whose relation is a view: their capture is a trigger on the table
 * (`app/webhooks/eventTriggers.ts`), which PostgreSQL refuses on a view — before, `metadata check`
 * passed such a file and the service refused it in PostgreSQL's words alone (`"x" is a view`).
 */
export function eventTypeViewProblems(metadata: ResolvedMetadata, relations: CatalogueRelations): string[] {
  const problems: string[] = [];
  for (const type of metadata.eventTypes.values()) {
    const collection = metadata.collections.get(type.collection);
    if (collection && relations.kinds.get(tableKey(collection))?.kind === 'view')
      problems.push(`event type ${type.name}: collection ${collection.name} is the view ${tableKey(collection)}; events are captured by triggers on tables: name the collection of the table it writes`);
  }
  return problems;
}

/**
 * Tracked functions (`functions:`) against the catalogue: the function exists, returns SETOF the
 * table (or view) of its collection, is STABLE or IMMUTABLE (a VOLATILE one could write inside a
 * query's statement: refused), takes every declared argument by name with a compatible type,
 * and every argument without a default is declared. Returns them with `required` from the
 * catalogue (an argument without a default).
 */
export async function checkFunctions(
  db: Queryable,
  metadata: ResolvedMetadata,
  relations: CatalogueRelations,
  problems: string[],
): Promise<Map<string, TrackedFunction>> {
  const checked = new Map<string, TrackedFunction>();
  if (!metadata.functions.size) return checked;
  const tracked = [...metadata.functions.values()];
  const { rows } = await db.query<{ schema: string; name: string; retset: boolean; ret_schema: string; ret_name: string; volatility: string; nargs: number; ndefaults: number; arg_names: unknown; arg_types: unknown; modes: unknown }>(
    `SELECT n.nspname::text AS schema, p.proname::text AS name, p.proretset AS retset, rn.nspname::text AS ret_schema, rt.typname::text AS ret_name,
            p.provolatile::text AS volatility, p.pronargs AS nargs, p.pronargdefaults AS ndefaults,
            coalesce(p.proargnames, '{}')::text[] AS arg_names, coalesce(p.proargmodes::text[], '{}') AS modes,
            array(SELECT format_type(t, NULL) FROM unnest(p.proargtypes) WITH ORDINALITY AS a(t, i) ORDER BY i) AS arg_types
       FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace JOIN pg_type rt ON rt.oid = p.prorettype JOIN pg_namespace rn ON rn.oid = rt.typnamespace
      WHERE (n.nspname::text, p.proname::text) IN (SELECT coalesce(s, current_schema()), f FROM unnest($1::text[], $2::text[]) AS w(s, f))`,
    [tracked.map((fn) => fn.schema), tracked.map((fn) => fn.function)],
  );
  const list = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : typeof value === 'string' ? value.replace(/^\{|\}$/g, '').split(',').filter(Boolean).map((v) => v.replace(/^"|"$/g, '')) : []);
  for (const fn of tracked) {
    const where = `function ${fn.name}`;
    const target = metadata.collections.get(fn.returns)!;
    const overloads = rows.filter((row) => row.name === fn.function && (fn.schema === null || row.schema === fn.schema));
    if (overloads.length !== 1) {
      problems.push(`${where}: ${overloads.length ? `${fn.function} is overloaded (${overloads.length} functions); track one name per function` : `function ${fn.function} does not exist`}`);
      continue;
    }
    const row = overloads[0]!;
    if (!row.retset || relations.keyOf(row.ret_schema, row.ret_name) !== tableKey(target)) problems.push(`${where}: ${fn.function} does not return SETOF ${tableKey(target)} (the table of collection ${target.name})`);
    if (row.volatility === 'v') problems.push(`${where}: ${fn.function} is VOLATILE; only STABLE or IMMUTABLE functions are root fields (a query must not write)`);
    // Input arguments: names and types in order (proargnames also lists OUT arguments when modes are given).
    const modes = list(row.modes);
    const names = list(row.arg_names).filter((_, i) => !modes.length || modes[i] === 'i' || modes[i] === 'b' || modes[i] === 'v');
    const types = list(row.arg_types);
    const firstDefault = Number(row.nargs) - Number(row.ndefaults);
    const args = new Map<string, { type: ScalarType; required: boolean }>();
    for (const [arg, { type }] of fn.args) {
      const index = names.indexOf(arg);
      if (index < 0) problems.push(`${where}, argument ${arg}: ${fn.function} has no argument of that name`);
      else if (!COMPATIBLE[type].includes(types[index] ?? '')) problems.push(`${where}, argument ${arg}: ${fn.function} takes ${types[index]}, not ${type}`);
      args.set(arg, { type, required: index >= 0 && index < firstDefault });
    }
    if (fn.tenantArgument !== null) {
      const index = names.indexOf(fn.tenantArgument);
      if (index < 0 || types[index] !== 'uuid') problems.push(`${where}: tenant_argument ${fn.tenantArgument} is not a uuid argument of ${fn.function}`);
    }
    names.forEach((name, index) => {
      if (index < firstDefault && !fn.args.has(name) && name !== fn.tenantArgument) problems.push(`${where}: argument ${name || `$${index + 1}`} of ${fn.function} has no default; declare it in args`);
    });
    checked.set(fn.name, { ...fn, args });
  }
  return checked;
}
