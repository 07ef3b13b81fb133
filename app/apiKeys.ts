import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Database, Queryable } from '../db/index.js';
import { UserInputError } from './errors.js';

/**
 * API keys (SPEC §4): `lq_<8 id characters>_<43 characters of 32 random bytes>`.
 * The first part (`lq_xxxxxxxx`) is the visible prefix that names a key without showing it;
 * only the SHA-256 of the whole key is stored, and it is compared in constant time.
 */
const KEY_PATTERN = /^(lq_[a-z0-9]{8})_[A-Za-z0-9_-]{43}$/;
const PREFIX_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
/** last_used_at is written at most this often per key, so reads are not turned into writes. */
const LAST_USED_RESOLUTION_MS = 60_000;

export interface CreatedApiKey {
  readonly id: string;
  readonly name: string;
  readonly prefix: string;
  /** The whole key: shown once, never stored. */
  readonly key: string;
}

export interface ApiKeyListing {
  readonly id: string;
  readonly accountSlug: string;
  readonly name: string;
  readonly prefix: string;
  readonly createdAt: string;
  readonly lastUsedAt: string | null;
  readonly active: boolean;
}

export interface AuthenticatedKey {
  readonly accountId: string;
  readonly keyId: string;
}

const sha256 = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

function randomPrefix(): string {
  const bytes = randomBytes(8);
  let id = '';
  for (const byte of bytes) id += PREFIX_ALPHABET[byte % PREFIX_ALPHABET.length];
  return `lq_${id}`;
}

/** Creates a key for the account; the result carries the only copy of the whole key. */
export async function createApiKey(db: Queryable, accountId: string, name: string): Promise<CreatedApiKey> {
  const cleanName = name.trim();
  if (!cleanName || cleanName.length > 100) throw new UserInputError('a key name is 1 to 100 characters');
  const prefix = randomPrefix();
  const key = `${prefix}_${randomBytes(32).toString('base64url')}`;
  const { rows } = await db.query<{ id: string }>(
    'INSERT INTO api_keys (account_id, name, prefix, key_hash) VALUES ($1, $2, $3, $4) RETURNING id',
    [accountId, cleanName, prefix, sha256(key)],
  );
  return { id: rows[0]!.id, name: cleanName, prefix, key };
}

/** Every key (of one account, when given), newest first. Never returns key material. */
export async function listApiKeys(db: Queryable, accountId?: string): Promise<ApiKeyListing[]> {
  const { rows } = await db.query<ApiKeyListing>(
    `SELECT k.id, a.slug AS "accountSlug", k.name, k.prefix, k.created_at::text AS "createdAt",
            k.last_used_at::text AS "lastUsedAt", k.active
       FROM api_keys k JOIN accounts a ON a.id = k.account_id
      WHERE $1::uuid IS NULL OR k.account_id = $1::uuid
      ORDER BY k.created_at DESC, k.id`,
    [accountId ?? null],
  );
  return rows;
}

/**
 * Deactivates the key with this prefix (of one account, when given). Effective on the key's
 * next request, since every request reads the key's state. Returns false when there is none.
 */
export async function deactivateApiKey(db: Queryable, prefix: string, accountId?: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE api_keys SET active = false, deactivated_at = coalesce(deactivated_at, now())
      WHERE prefix = $1 AND ($2::uuid IS NULL OR account_id = $2::uuid)`,
    [prefix, accountId ?? null],
  );
  return rowCount > 0;
}

/**
 * Checks an `Authorization` header value. Returns the key's account, or null for a missing,
 * malformed, unknown or inactive key — the caller answers all of these the same way.
 */
export async function authenticateApiKey(db: Database, header: string | undefined): Promise<AuthenticatedKey | null> {
  if (!header || !header.startsWith('Token ')) return null;
  const key = header.slice('Token '.length).trim();
  const match = KEY_PATTERN.exec(key);
  if (!match) return null;
  const { rows } = await db.query<{ account_id: string; id: string; key_hash: Uint8Array; active: boolean; stale: boolean }>(
    `SELECT account_id, id, key_hash, active,
            (last_used_at IS NULL OR last_used_at < now() - make_interval(secs => $2)) AS stale
       FROM api_keys WHERE prefix = $1`,
    [match[1], LAST_USED_RESOLUTION_MS / 1000],
  );
  const row = rows[0];
  const expected = row ? Buffer.from(row.key_hash) : sha256('');
  const matches = timingSafeEqual(expected, sha256(key)) && row !== undefined;
  if (!matches || !row.active) return null;
  if (row.stale) {
    // Recording use must never fail or slow the request it belongs to.
    db.query('UPDATE api_keys SET last_used_at = now() WHERE account_id = $1 AND id = $2', [row.account_id, row.id]).catch(() => undefined);
  }
  return { accountId: row.account_id, keyId: row.id };
}
