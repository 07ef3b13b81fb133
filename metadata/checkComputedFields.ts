import type { Queryable } from '../db/index.js';
import { ARRAY_ELEMENT_COLUMN, compatible, type CatalogueRelations } from './checkRelations.js';
import { tableKey, type Collection, type ResolvedMetadata, type ScalarType } from './model.js';

/**
 * The catalogue type (`format_type`'s spelling) of the value the engine passes to a computed
 * field's argument of each metadata type (`argumentCast` in engine/sql/sqlTables.ts).
 */
const ARGUMENT_TYPE: Readonly<Record<ScalarType, string>> = { ...ARRAY_ELEMENT_COLUMN, jsonb: 'jsonb', json: 'json' };

/** The implicit casts PostgreSQL applies when it resolves a call: a value of the key's type reaches a parameter of these. */
const WIDENS_TO: Readonly<Record<string, readonly string[]>> = {
  smallint: ['integer', 'bigint', 'numeric', 'real', 'double precision'],
  integer: ['bigint', 'numeric', 'real', 'double precision'],
  bigint: ['numeric', 'real', 'double precision'],
  numeric: ['real', 'double precision'],
  real: ['double precision'],
  'character varying': ['text'],
  character: ['text'],
  citext: ['text'],
  date: ['timestamp without time zone', 'timestamp with time zone'],
  'timestamp without time zone': ['timestamp with time zone'],
};

/** Whether a parameter of type `parameter` takes a value of type `value` (the same type, or one PostgreSQL casts to it when it resolves a call). */
const takes = (parameter: string, value: string): boolean => parameter === value || (WIDENS_TO[value] ?? []).includes(parameter);

/** One function of that name, as pg_proc has it: its input arguments (names and types), how many have defaults, what it returns. */
interface Overload {
  readonly names: readonly string[];
  readonly types: readonly string[];
  readonly firstDefault: number;
  readonly returns: string;
  readonly retset: boolean;
  readonly volatile: boolean;
}

/**
 * Computed fields against the catalogue (Hasura checks a computed field's function the same
 * way): the function, in the collection's schema, takes the row's tenant value and key columns
 * first — each parameter of the column's type or one it widens to —, then every declared
 * argument by name, of the type the engine passes it (`ARGUMENT_TYPE`), and has a default for
 * every other argument; a scalar one returns one value its `type` may be read from, a table one
 * (`returns:`) SETOF the returned collection's relation; neither is VOLATILE. Before, only the
 * argument names were compared, so a function of another key type or return type loaded and
 * every request that selected the field failed (a 500, `metadata-mismatch`, or a value of
 * another type than the schema said). `columns`: each relation's column types by table key.
 */
export async function computedFieldProblems(
  db: Queryable,
  metadata: ResolvedMetadata,
  relations: CatalogueRelations,
  columns: ReadonlyMap<string, ReadonlyMap<string, string>>,
): Promise<string[]> {
  // A collection whose table, tenant column or key column is missing (or a table computed field
  // returning such a collection's rows) is not compared: that is refused once, as the table or
  // column it is, rather than as every function "taking uuid first, where the engine passes ,"
  // (before, a typo'd table name was refused first by each computed field of the collection).
  const rowsReadable = (collection: Collection): boolean => {
    const table = columns.get(tableKey(collection));
    return table !== undefined && [metadata.tenantColumn, ...collection.primaryKey.map((key) => key.source.column)].every((column) => table.has(column));
  };
  const wanted = [...metadata.collections.values()]
    .filter(rowsReadable)
    .flatMap((collection) =>
      [...collection.computedFields.values(), ...collection.tableComputedFields.values()]
        .filter((field) => !('returns' in field) || columns.has(tableKey(metadata.collections.get(field.returns)!)))
        .map((field) => ({ collection, field, schema: collection.schema ?? relations.currentSchema })),
    );
  if (!wanted.length) return [];
  const { rows } = await db.query<{ schema: string; name: string; arg_names: unknown; arg_types: unknown; modes: unknown; nargs: number; ndefaults: number; returns: string; retset: boolean; volatile: boolean }>(
    `SELECT n.nspname::text AS schema, p.proname::text AS name, coalesce(p.proargnames, '{}')::text[] AS arg_names, coalesce(p.proargmodes::text[], '{}') AS modes,
            array(SELECT format_type(t, NULL) FROM unnest(p.proargtypes) WITH ORDINALITY AS a(t, i) ORDER BY i) AS arg_types,
            p.pronargs AS nargs, p.pronargdefaults AS ndefaults, format_type(p.prorettype, NULL) AS returns, p.proretset AS retset, p.provolatile = 'v' AS volatile
       FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE (n.nspname::text, p.proname::text) IN (SELECT * FROM unnest($1::text[], $2::text[]))`,
    [wanted.map(({ schema }) => schema), wanted.map(({ field }) => field.function)],
  );
  const overloads = new Map<string, Overload[]>();
  for (const row of rows) {
    const modes = list(row.modes);
    const names = list(row.arg_names).filter((_, i) => !modes.length || modes[i] === 'i' || modes[i] === 'b' || modes[i] === 'v');
    const overload = { names, types: list(row.arg_types), firstDefault: Number(row.nargs) - Number(row.ndefaults), returns: row.returns, retset: row.retset, volatile: row.volatile };
    overloads.set(`${row.schema}.${row.name}`, [...(overloads.get(`${row.schema}.${row.name}`) ?? []), overload]);
  }
  const problems: string[] = [];
  for (const { collection, field, schema } of wanted) {
    const where = `collection ${collection.name}, computed field ${field.name}`;
    const found = overloads.get(`${schema}.${field.function}`);
    const name = `${collection.schema === null ? '' : `${collection.schema}.`}${field.function}`;
    if (!found) {
      problems.push(`${where}: function ${name} does not exist`);
      continue;
    }
    const target = 'returns' in field ? metadata.collections.get(field.returns)! : null;
    const returned: Expected['returned'] =
      'type' in field ? { kind: 'value', type: field.type } : { kind: 'rows', relation: `${target!.schema ?? relations.currentSchema}.${target!.table}`, type: (await relationType(db, target!, relations)) ?? '' };
    const expected: Expected = { collection, tenant: columns.get(tableKey(collection))?.get(metadata.tenantColumn) ?? '', keys: collection.primaryKey.map((key) => ({ column: key.source.column, type: columns.get(tableKey(collection))?.get(key.source.column) ?? '' })), args: field.args, returned };
    const mismatches = found.map((overload) => mismatch(overload, expected, metadata.tenantColumn));
    if (mismatches.includes(null)) continue;
    if (found.length > 1 && target) problems.push(`${where}: function ${name} is overloaded`);
    else problems.push(`${where}: function ${field.function} ${mismatches[0]!} (${found.length > 1 ? `the first of ${found.length} functions of that name, none of which fits, is` : 'it is'} ${field.function}(${signature(found[0]!)}) returning ${found[0]!.retset ? 'SETOF ' : ''}${found[0]!.returns})`);
  }
  return problems;
}

/** What a computed field passes its function and needs back. */
interface Expected {
  readonly collection: Collection;
  readonly tenant: string;
  readonly keys: readonly { readonly column: string; readonly type: string }[];
  readonly args: ReadonlyMap<string, ScalarType>;
  readonly returned: { readonly kind: 'value'; readonly type: ScalarType } | { readonly kind: 'rows'; readonly relation: string; readonly type: string };
}

/** Why `overload` does not fit the call the engine writes, or null when it does. */
function mismatch(overload: Overload, expected: Expected, tenantColumn: string): string | null {
  const { collection, keys, args, returned } = expected;
  const leading = 1 + keys.length;
  const passes = `the engine passes (${tenantColumn} ${expected.tenant}${keys.map((key) => `, ${key.column} ${key.type}`).join('')}) first, then ${args.size ? [...args.keys()].join(', ') : 'nothing'} by name`;
  if (returned.kind === 'value') {
    if (overload.retset) return `returns SETOF ${overload.returns}; a computed field with type: returns one value (a set of rows: returns: <collection>)`;
    if (!compatible(returned.type, overload.returns)) return `returns ${overload.returns}, not ${returned.type} (the computed field's type)`;
  } else {
    if (!overload.retset || overload.returns !== returned.type) return `does not return SETOF ${returned.relation} (collection ${collection.name}'s computed field returns that collection's rows)`;
  }
  // As Hasura: a query's one statement must not write (and a replica refuses a write).
  if (overload.volatile) return `is VOLATILE (a query must not write: declare it STABLE)`;
  if (overload.types.length < leading) return `takes ${overload.types.length} argument${overload.types.length === 1 ? '' : 's'}: ${passes}`;
  if (!takes(overload.types[0]!, expected.tenant)) return `takes ${overload.types[0]} first, where the engine passes the tenant column ${collection.table}.${tenantColumn}, ${expected.tenant}`;
  for (const [index, key] of keys.entries()) {
    const type = overload.types[1 + index]!;
    if (!takes(type, key.type)) return `takes ${type} as argument ${2 + index}${overload.names[1 + index] ? ` (${overload.names[1 + index]})` : ''}, where the engine passes the key column ${collection.table}.${key.column}, ${key.type}`;
  }
  for (const [arg, type] of args) {
    const index = overload.names.indexOf(arg);
    if (index < leading) return `has no argument ${arg} after the tenant and key ones: ${passes}`;
    if (overload.types[index] !== ARGUMENT_TYPE[type]) return `takes ${arg} as ${overload.types[index]}, not ${type} as args declares it`;
  }
  for (let index = leading; index < overload.firstDefault; index++)
    if (!args.has(overload.names[index] ?? '')) return `has no default for argument ${overload.names[index] || `$${index + 1}`}: declare it in args`;
  return null;
}

/** A function's input arguments as `name type, …`. */
const signature = (overload: Overload): string => overload.types.map((type, i) => `${overload.names[i] ? `${overload.names[i]} ` : ''}${type}`).join(', ');

/** The row type of a collection's table or view, as `format_type` spells it (what SETOF it is). */
async function relationType(db: Queryable, collection: Collection, relations: CatalogueRelations): Promise<string | null> {
  const { rows } = await db.query<{ type: string }>(
    `SELECT format_type(c.reltype, NULL) AS type FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2`,
    [collection.schema ?? relations.currentSchema, collection.table],
  );
  return rows[0]?.type ?? null;
}

/** node-postgres parses text[] into an array; PGlite may hand over the literal `{a,b}`. */
function list(value: unknown): string[] {
  if (Array.isArray(value)) return value.map(String);
  if (typeof value === 'string') return value.replace(/^\{|\}$/g, '').split(',').filter(Boolean).map((v) => v.replace(/^"|"$/g, ''));
  return [];
}
