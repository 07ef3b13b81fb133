/**
 * A fingerprint of everything stored for one account, to show that a refused request wrote
 * nothing: per table with an `account_id` column, the row count and a checksum of the rows'
 * text (the sum of their 64-bit hashes), and the account's own row (its settings and profile), in one statement. `admin_sessions` and `api_keys.last_used_at` are left
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
  // One array of scalar subqueries (PGlite plans it faster than a UNION of as many selects).
  const parts = tables.map((table) => {
    const row = table === 'api_keys' ? `jsonb_build_object('id', t.id, 'name', t.name, 'prefix', t.prefix, 'active', t.active)::text` : 't::text';
    // An order-independent checksum: the sum of 64-bit hashes of each row's text (no sort needed).
    return `(SELECT count(*)::text || ':' || coalesce(sum(hashtextextended(${row}, 0)), 0)::text FROM "${table.replace(/"/g, '""')}" t WHERE t.account_id = $1)`;
  });
  // The number of accounts, and the account's own row (its name, settings and profile: migration 0068).
  parts.push(`((SELECT count(*) FROM accounts)::text || ':' || coalesce((SELECT hashtextextended(a::text, 0) FROM accounts a WHERE a.id = $1), 0)::text)`);
  return { tables: [...tables, 'accounts'], text: `SELECT ARRAY[${parts.join(',\n')}] AS fingerprint` };
}

/** `{table: "count:checksum"}` for the account, plus the number of accounts with the checksum of the account's own row. */
export async function accountFingerprint(db: Queryable, accountId: string): Promise<Record<string, string>> {
  let statement = statements.get(db);
  if (!statement) statements.set(db, (statement = fingerprintStatement(db)));
  const { tables, text } = await statement;
  const { rows } = await db.query<{ fingerprint: string[] }>(text, [accountId]);
  return Object.fromEntries(tables.map((table, i) => [table, rows[0]!.fingerprint[i]!]));
}
