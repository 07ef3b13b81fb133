import { createHash } from 'node:crypto';
import type { Database, Queryable } from '../db/index.js';
import { UserInputError } from './errors.js';

/** How long a stored response is replayed (Stripe: 24 hours). */
export const IDEMPOTENCY_WINDOW_HOURS = 24;

/** A response a write produced, as it is stored and replayed. */
export interface StoredResponse {
  readonly status: number;
  readonly body: string;
}

export type IdempotentOutcome =
  | (StoredResponse & { readonly kind: 'done'; readonly replayed: boolean })
  /** The key was used within the window for another request body. */
  | { readonly kind: 'mismatch' }
  /** The work declined to run (e.g. the API key was deactivated): nothing stored. */
  | { readonly kind: 'declined' };

const KEY = /^[\x21-\x7e]{1,255}$/;

/** The `Idempotency-Key` header's value, checked: 1–255 visible ASCII characters. */
export function idempotencyKeyOf(header: string | undefined): string | null {
  if (header === undefined) return null;
  const key = header.trim();
  if (!KEY.test(key)) throw new UserInputError('Idempotency-Key must be 1 to 255 visible ASCII characters', 400, { 'Idempotency-Key': 'expected 1 to 255 visible ASCII characters' });
  return key;
}

/** What makes two requests "the same": the route and the body (as parsed, re-serialised). */
export function requestHash(route: string, body: unknown): Buffer {
  return createHash('sha256').update(route).update('\u0000').update(JSON.stringify(body ?? null)).digest();
}

/** Who a stored response belongs to: the API key (its id), or the dashboard's console. */
export interface IdempotencyScope {
  readonly accountId: string;
  /** The API key's id; `dashboard` for the dashboard's console (its admins act as the account). */
  readonly scope: string;
  /**
   * Whether the caller may still be answered at all (the API key is active), checked inside the
   * transaction before anything is claimed, replayed or refused as a mismatch: a revoked key
   * learns nothing, not even which idempotency keys it used (issue 26, finding 3).
   */
  readonly stillAuthorized?: (tx: Queryable) => Promise<boolean>;
}

/**
 * Runs a write at most once per (account, scope, key) within 24 hours, with Stripe's semantics: the
 * same key and body again get the stored response (`replayed`), nothing written; the same key
 * with another body is a `mismatch`. The key row is inserted first, in the write's own
 * transaction: a concurrent request with the same key waits on the unique key until the first
 * commits (then replays its response) or rolls back (then runs itself). Only a completed write
 * is stored: a request that fails leaves no key behind, so it can be corrected and sent again.
 * A caller no longer authorized gets `declined` before any of this.
 */
export async function runIdempotently(
  db: Database,
  owner: IdempotencyScope,
  key: string,
  hash: Buffer,
  work: (tx: Queryable) => Promise<StoredResponse | null>,
): Promise<IdempotentOutcome> {
  const { accountId, scope } = owner;
  return db.transaction(async (tx): Promise<IdempotentOutcome> => {
    if (owner.stillAuthorized && !(await owner.stillAuthorized(tx))) return { kind: 'declined' };
    const claimed = await tx.query(
      `INSERT INTO idempotency_keys (account_id, scope, key, request_hash) VALUES ($1, $2, $3, $4)
       ON CONFLICT (account_id, scope, key) DO UPDATE SET request_hash = EXCLUDED.request_hash, status = NULL, response = NULL, created_at = now()
         WHERE idempotency_keys.created_at < now() - make_interval(hours => $5::int)
       RETURNING 1`,
      [accountId, scope, key, hash, IDEMPOTENCY_WINDOW_HOURS],
    );
    if (!claimed.rows.length) {
      const { rows } = await tx.query<{ request_hash: Uint8Array | Buffer; status: number | null; response: string | null }>(
        'SELECT request_hash, status, response FROM idempotency_keys WHERE account_id = $1 AND scope = $2 AND key = $3',
        [accountId, scope, key],
      );
      const stored = rows[0];
      if (!stored || stored.status === null || stored.response === null) throw new Error('an idempotency key row without its response');
      if (!Buffer.from(stored.request_hash).equals(hash)) return { kind: 'mismatch' };
      return { kind: 'done', status: stored.status, body: stored.response, replayed: true };
    }
    const response = await work(tx);
    if (!response) {
      await tx.query('DELETE FROM idempotency_keys WHERE account_id = $1 AND scope = $2 AND key = $3', [accountId, scope, key]);
      return { kind: 'declined' };
    }
    await tx.query('UPDATE idempotency_keys SET status = $4, response = $5 WHERE account_id = $1 AND scope = $2 AND key = $3', [accountId, scope, key, response.status, response.body]);
    return { kind: 'done', ...response, replayed: false };
  });
}

/** Removes keys past the window (the service calls it now and then). */
export async function purgeExpiredIdempotencyKeys(db: Queryable): Promise<number> {
  const { rowCount } = await db.query(`DELETE FROM idempotency_keys WHERE created_at < now() - make_interval(hours => $1::int)`, [IDEMPOTENCY_WINDOW_HOURS]);
  return rowCount;
}
