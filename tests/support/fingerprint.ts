/**
 * A fingerprint of everything stored for one account, to show that a refused request wrote
 * nothing: per table with an `account_id` column, the row count and an MD5 of the rows' text
 * (in a fixed order). `api_keys.last_used_at` and `admin_sessions` are left out: the service
 * writes them beside any authenticated request, refused or not.
 */
import type { Queryable } from '../../db/index.js';

const VOLATILE_TABLES = new Set(['admin_sessions']);

const tablesOf = new WeakMap<Queryable, Promise<readonly string[]>>();

async function tenantTables(db: Queryable): Promise<readonly string[]> {
  const { rows } = await db.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.columns
      WHERE table_schema = current_schema() AND column_name = 'account_id'
      ORDER BY table_name`,
  );
  return rows.map((row) => row.table_name).filter((name) => !VOLATILE_TABLES.has(name));
}

/** `{table: "count:md5"}` for the account, plus the number of accounts. */
export async function accountFingerprint(db: Queryable, accountId: string): Promise<Record<string, string>> {
  let tables = tablesOf.get(db);
  if (!tables) tablesOf.set(db, (tables = tenantTables(db)));
  const fingerprint: Record<string, string> = {};
  for (const table of await tables) {
    // Table names come from the catalogue and are quoted; the account id is a parameter.
    const quoted = `"${table.replace(/"/g, '""')}"`;
    const row = table === 'api_keys' ? `jsonb_build_object('id', t.id, 'name', t.name, 'prefix', t.prefix, 'active', t.active)::text` : 't::text';
    const { rows } = await db.query<{ n: number; digest: string | null }>(
      `SELECT count(*)::int AS n, md5(string_agg(${row}, '|' ORDER BY ${row})) AS digest FROM ${quoted} t WHERE t.account_id = $1`,
      [accountId],
    );
    fingerprint[table] = `${rows[0]!.n}:${rows[0]!.digest ?? '-'}`;
  }
  const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM accounts');
  fingerprint.accounts = String(rows[0]!.n);
  return fingerprint;
}
