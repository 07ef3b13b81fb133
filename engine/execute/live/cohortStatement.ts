import type { Queryable } from '../../../db/index.js';

/**
 * A type name as PostgreSQL writes it (`uuid`, `timestamp with time zone`, `text[]`): the only
 * shape written into a cohort statement's column list. It comes from the catalogue
 * (`pg_prepared_statements`), never from a client; anything else throws.
 */
const TYPE_NAME = /^[a-z_][a-z0-9_ ]{0,62}(\[\])?$/;

/** The parameter types PostgreSQL infers for a statement (`PREPARE`, read back, `DEALLOCATE`), in order. */
export async function parameterTypes(db: { transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> }, text: string): Promise<readonly string[]> {
  return db.transaction(async (tx) => {
    // The statement's own text, compiled by the engine from fragments: no client value in it.
    await tx.script(`PREPARE loanql_cohort_types AS ${text}`);
    try {
      const { rows } = await tx.query<{ types: string[] | string }>("SELECT parameter_types::text[] AS types FROM pg_prepared_statements WHERE name = 'loanql_cohort_types'");
      const types = rows[0]!.types;
      return Array.isArray(types) ? types : parseTextArray(types);
    } finally {
      await tx.script('DEALLOCATE loanql_cohort_types');
    }
  });
}

/** `{uuid,"timestamp with time zone"}` → its items (the array's text form, in case a driver does not parse it). */
function parseTextArray(text: string): string[] {
  const inner = text.replace(/^\{|\}$/g, '');
  if (!inner) return [];
  return inner.match(/"[^"]*"|[^,]+/g)!.map((item) => item.replace(/^"|"$/g, ''));
}

/**
 * The statement that answers a whole cohort at once (Hasura's "multiplexed" query): every
 * subscriber's parameter values arrive as ONE json parameter, a row per subscriber, and the
 * plan's statement runs LATERAL for each:
 *
 *   SELECT s."subscriber", q."response" FROM json_to_recordset($1::json) AS s("subscriber" integer, "p1" text, …)
 *   CROSS JOIN LATERAL (<the plan's statement, $n read as s."pn"::type>) AS q
 *
 * A value travels as text and is cast to the type PostgreSQL inferred for its parameter (exact:
 * numeric from its digits, jsonb from its JSON text), an array as a JSON array into a column of
 * its array type. `$n` occurs in the compiled text only as a parameter: the compiler writes
 * identifiers quoted and checked, and literals of JSON punctuation and name characters only
 * (engine/sql/fragment.ts), none of which holds a `$`. `withPosition` adds the WAL position the
 * read saw at least (read replicas: a result is never older than one sent before).
 */
export function cohortStatement(text: string, types: readonly string[], { withPosition = false }: { readonly withPosition?: boolean } = {}): string {
  for (const type of types) if (!TYPE_NAME.test(type)) throw new TypeError(`cohortStatement: parameter type "${type}" is not a plain type name`);
  const columns = ['"subscriber" integer', ...types.map((type, index) => `"p${index + 1}" ${isArrayType(type) ? type : 'text'}`)];
  const inner = text.replace(/\$(\d+)/g, (_, digits: string) => {
    const index = Number(digits);
    const type = types[index - 1];
    if (type === undefined) throw new TypeError(`cohortStatement: $${digits} has no parameter type`);
    return isArrayType(type) ? `s."p${index}"` : `(s."p${index}"::${type})`;
  });
  const position = withPosition ? ', coalesce(pg_last_wal_replay_lsn(), pg_current_wal_insert_lsn())::text AS "position"' : '';
  return `SELECT s."subscriber", q."response"${position} FROM json_to_recordset($1::json) AS s(${columns.join(', ')}) CROSS JOIN LATERAL (${inner}) AS q`;
}

const isArrayType = (type: string): boolean => type.endsWith('[]');

/** One subscriber's values as the cohort statement's json row: text, or a JSON array for an array parameter. */
export function cohortRow(subscriber: number, values: readonly unknown[], types: readonly string[]): Record<string, unknown> {
  const row: Record<string, unknown> = { subscriber };
  values.forEach((value, index) => {
    row[`p${index + 1}`] = isArrayType(types[index]!) ? value : asText(value);
  });
  return row;
}

function asText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (value instanceof Date) return value.toISOString();
  return JSON.stringify(value);
}

/**
 * The tables a statement reads: the metadata's tables named in its text (the compiler quotes
 * every identifier), and for a view among them the tables under it (`underViews`, view → the
 * tables it reads at any depth: notices name those, never the view). A column that shares a
 * table's name adds that table too — a refresh more, never one less. A statement that calls one
 * of `functions` (a computed field's SQL function, which may read any table) reads every table.
 */
export function tablesRead(text: string, tables: ReadonlySet<string>, functions: ReadonlySet<string>, underViews: ReadonlyMap<string, readonly string[]> = new Map()): ReadonlySet<string> {
  const read = new Set<string>();
  const add = (table: string): void => {
    read.add(table);
    for (const under of underViews.get(table) ?? []) read.add(under);
  };
  for (const match of text.matchAll(/"([A-Za-z_][A-Za-z0-9_]*)"/g)) {
    if (functions.has(match[1]!)) {
      for (const table of tables) add(table);
      return read;
    }
    if (tables.has(match[1]!)) add(match[1]!);
  }
  return read;
}
