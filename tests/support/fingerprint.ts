/**
 * A fingerprint of everything stored for one account, to show that a refused request wrote
 * nothing: per table with an `account_id` column, the row count and an MD5 of the rows' text
 * (in a fixed order), in one statement. `admin_sessions` and `api_keys.last_used_at` are left
 * out: the service writes them beside requests (a login, any authenticated request).
 */
import type { Queryable } from '../../db/index.js';

const VOLATILE_TABLES = new Set(['admin_sessions']);

interface FingerprintStatement {
  readonly tables: readonly string[];
  readonly text: string;
}

const statements = new WeakMap<Queryable, Promise<FingerprintStatement>>();

async function fingerprintStatement(db: Queryable): Promise<FingerprintStatement> {
  const { rows } = await db.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.columns
      WHERE table_schema = current_schema() AND column_name = 'account_id'
      ORDER BY table_name`,
  );
  const tables = rows.map((row) => row.table_name).filter((name) => !VOLATILE_TABLES.has(name));
  // Table names come from the catalogue and are quoted; the account id is the one parameter.
  const parts = tables.map((table, i) => {
    const row = table === 'api_keys' ? `jsonb_build_object('id', t.id, 'name', t.name, 'prefix', t.prefix, 'active', t.active)::text` : 't::text';
    return `SELECT ${i}::int AS i, count(*)::int AS n, md5(string_agg(${row}, '|' ORDER BY ${row})) AS digest FROM "${table.replace(/"/g, '""')}" t WHERE t.account_id = $1`;
  });
  parts.push(`SELECT ${tables.length}::int AS i, count(*)::int AS n, NULL AS digest FROM accounts`);
  return { tables: [...tables, 'accounts'], text: parts.join('\nUNION ALL\n') };
}

/** `{table: "count:md5"}` for the account, plus the number of accounts. */
export async function accountFingerprint(db: Queryable, accountId: string): Promise<Record<string, string>> {
  let statement = statements.get(db);
  if (!statement) statements.set(db, (statement = fingerprintStatement(db)));
  const { tables, text } = await statement;
  const { rows } = await db.query<{ i: number; n: number; digest: string | null }>(text, [accountId]);
  const fingerprint: Record<string, string> = {};
  for (const row of [...rows].sort((a, b) => a.i - b.i)) fingerprint[tables[row.i]!] = `${row.n}:${row.digest ?? '-'}`;
  return fingerprint;
}
