import { parseLsn, type Lsn, type Queryable } from '../db/index.js';
import type { AuthenticatedKey } from './apiKeys.js';

/**
 * Where each API key last wrote, kept in the primary (`key_write_positions`, migration 0027) so
 * that every process of every host serving that primary knows it (docs/scaling.md,
 * "Read-your-writes: the guarantee"). Written once per write, after it committed; read by the one
 * statement that checks the key on the primary before a read goes to a replica — no round trip
 * of its own, one index probe more.
 */

/**
 * Records that `key` wrote: the primary's WAL insert position now — past the commit of every
 * transaction that has committed, the key's write included — never lowering what a concurrent
 * write of the same key recorded. Returns the position kept for the key.
 */
export async function recordKeyWrite(primary: Queryable, key: Pick<AuthenticatedKey, 'accountId' | 'keyId'>): Promise<Lsn> {
  const { rows } = await primary.query<{ lsn: string }>(
    `INSERT INTO key_write_positions AS kept (account_id, id, lsn, at) VALUES ($1, $2, pg_current_wal_insert_lsn(), now())
     ON CONFLICT (account_id, id) DO UPDATE SET lsn = greatest(kept.lsn, excluded.lsn), at = excluded.at
     RETURNING lsn::text AS lsn`,
    [key.accountId, key.keyId],
  );
  return parseLsn(rows[0]!.lsn)!;
}

/** The key check before a routed read: is the key still active, and where did it last write within the window. */
export interface KeyForRead {
  readonly active: boolean;
  /** The key's last write position if it wrote less than `windowMs` ago (by the primary's clock), else null. */
  readonly lastWrite: Lsn | null;
}

/**
 * One statement on the primary: the key's `active` flag (a replica may not have replayed a
 * revocation yet) and its last write position within `windowMs`.
 */
export async function checkKeyForRead(primary: Queryable, key: Pick<AuthenticatedKey, 'accountId' | 'keyId'>, windowMs: number): Promise<KeyForRead> {
  const { rows } = await primary.query<{ active: boolean; lsn: string | null }>(
    `SELECT EXISTS (SELECT 1 FROM api_keys WHERE account_id = $1 AND id = $2 AND active) AS active,
            (SELECT lsn::text FROM key_write_positions WHERE account_id = $1 AND id = $2 AND at > now() - make_interval(secs => $3)) AS lsn`,
    [key.accountId, key.keyId, windowMs / 1000],
  );
  const row = rows[0]!;
  return { active: row.active, lastWrite: row.lsn === null ? null : parseLsn(row.lsn) };
}
