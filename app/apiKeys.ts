import { createHash, hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Database, Queryable } from '../db/index.js';
import { keyVariableProblem, type ScalarType } from '../metadata/index.js';
import { refuseNulCharacter, UserInputError } from './errors.js';

/**
 * API keys (SPEC §4): `lq_<8 id characters>_<43 characters of 32 random bytes>`.
 * The first part (`lq_xxxxxxxx`) is the visible prefix that names a key without showing it;
 * only the SHA-256 of the whole key is stored, and it is compared in constant time.
 */
const KEY_PATTERN = /^(lq_[a-z0-9]{8})_[A-Za-z0-9_-]{43}$/;
const PREFIX_PATTERN = /^lq_[a-z0-9]{8}$/;
const PREFIX_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
/** last_used_at is written at most this often per key, so reads are not turned into writes. */
const LAST_USED_RESOLUTION_MS = 60_000;

export interface CreatedApiKey {
  readonly id: string;
  readonly name: string;
  readonly prefix: string;
  readonly role: string;
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
  readonly role: string;
  readonly variables: Readonly<Record<string, string>>;
}

export interface AuthenticatedKey {
  readonly accountId: string;
  readonly keyId: string;
  /** The key's visible prefix (`lq_xxxxxxxx`), which names it in logs without showing it. */
  readonly prefix: string;
  /** The metadata role the key carries (`admin` for keys made before roles). */
  readonly role: string;
  /** The values of the role's key variables, by name. */
  readonly variables: ReadonlyMap<string, string>;
}

/** What a new key carries: a role of the metadata and its variables (checked by `checkKeyRole`). */
export interface KeyRole {
  readonly role: string;
  readonly variables: ReadonlyMap<string, string>;
}

export const ADMIN_KEY_ROLE: KeyRole = { role: 'admin', variables: new Map() };

const sha256 = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

function randomPrefix(): string {
  const bytes = randomBytes(8);
  let id = '';
  for (const byte of bytes) id += PREFIX_ALPHABET[byte % PREFIX_ALPHABET.length];
  return `lq_${id}`;
}

/** Creates a key for the account; the result carries the only copy of the whole key. */
export async function createApiKey(db: Queryable, accountId: string, name: string, keyRole: KeyRole = ADMIN_KEY_ROLE): Promise<CreatedApiKey> {
  const cleanName = checkKeyName(name);
  const prefix = randomPrefix();
  const key = `${prefix}_${randomBytes(32).toString('base64url')}`;
  const { rows } = await db.query<{ id: string }>(
    'INSERT INTO api_keys (account_id, name, prefix, key_hash, role, variables) VALUES ($1, $2, $3, $4, $5, $6::jsonb) RETURNING id',
    [accountId, cleanName, prefix, sha256(key), keyRole.role, JSON.stringify(Object.fromEntries(keyRole.variables))],
  );
  return { id: rows[0]!.id, name: cleanName, prefix, key, role: keyRole.role };
}

/** A key's name as stored (trimmed), or a `UserInputError` naming the field `name`. */
export function checkKeyName(name: string): string {
  const cleanName = name.trim();
  if (!cleanName) throw new UserInputError('a key name must not be blank', 400, { name: 'must not be blank' });
  if (cleanName.length > 100) throw new UserInputError('a key name is at most 100 characters', 400, { name: 'at most 100 characters' });
  refuseNulCharacter('name', cleanName);
  return cleanName;
}

/**
 * Checks what a new key of an account would carry against the metadata's roles: the role
 * exists, every variable of the role is given (and nothing else), each a valid value of its
 * type (`checkKeyRoleShape`), and a uuid variable naming a person (`person_id`) is a person of
 * the account. Throws `UserInputError` naming the field.
 */
export async function checkKeyRole(
  db: Queryable,
  accountId: string,
  roles: ReadonlyMap<string, { readonly variables: ReadonlyMap<string, string> }>,
  role: string,
  variables: ReadonlyMap<string, string>,
): Promise<KeyRole> {
  return checkKeyPerson(db, accountId, checkKeyRoleShape(roles, role, variables));
}

/** The part of `checkKeyRole` only the database answers: a `person_id` names a person of the account. */
export async function checkKeyPerson(db: Queryable, accountId: string, keyRole: KeyRole): Promise<KeyRole> {
  const personId = keyRole.variables.get('person_id');
  if (personId !== undefined) {
    const { rows } = await db.query('SELECT 1 FROM people WHERE account_id = $1 AND id = $2::uuid', [accountId, personId]);
    if (!rows.length) throw new UserInputError(`variables: person_id ${personId} is not a person of the account`);
  }
  return keyRole;
}

/**
 * What `checkKeyRole` checks without the database — the role is one of `roles`, its variables
 * are the role's, each given and a valid value of its type — in the same words; `loanql key
 * create` runs it before it opens the database. The key's role and its trimmed variables.
 */
export function checkKeyRoleShape(roles: ReadonlyMap<string, { readonly variables: ReadonlyMap<string, string> }>, role: string, variables: ReadonlyMap<string, string>): KeyRole {
  const definition = roles.get(role);
  if (!definition) throw new UserInputError(`role: "${role}" is not a role of the metadata (one of ${[...roles.keys()].join(', ')})`);
  for (const name of variables.keys()) if (!definition.variables.has(name)) throw new UserInputError(`variables: role ${role} has no variable ${name}`);
  for (const [name, type] of definition.variables) {
    const value = variables.get(name)?.trim();
    if (!value) throw new UserInputError(`variables: role ${role} needs ${name}`);
    const wrong = keyVariableProblem(type as ScalarType, value);
    if (wrong) throw new UserInputError(`variables: ${name} ${wrong}`);
  }
  return { role, variables: new Map([...variables].map(([name, value]) => [name, value.trim()])) };
}

/** Every key (of one account, when given), newest first. Never returns key material. */
export async function listApiKeys(db: Queryable, accountId?: string): Promise<ApiKeyListing[]> {
  const { rows } = await db.query<ApiKeyListing>(
    `SELECT k.id, a.slug AS "accountSlug", k.name, k.prefix, k.created_at::text AS "createdAt",
            k.last_used_at::text AS "lastUsedAt", k.active, k.role, k.variables
       FROM api_keys k JOIN accounts a ON a.id = k.account_id
      WHERE $1::uuid IS NULL OR k.account_id = $1::uuid
      ORDER BY k.created_at DESC, k.id`,
    [accountId ?? null],
  );
  return rows;
}

/**
 * Warnings for a metadata about to serve: for each role that active API keys carry and `roles`
 * (the metadata's, `admin` included) lacks, how many keys and their prefixes — those keys are
 * refused (403 `Not authorized`) while the role is missing. A role renamed or removed in the
 * file is not an invalid edit (revoking a role's keys that way is the admin's choice), so a
 * reload is not refused; before, nothing told the admin that keys had just stopped working.
 * With `accountId`, only that account's keys (the dashboard's metadata page).
 */
export async function keysWithoutRole(db: Queryable, roles: Iterable<string>, accountId?: string): Promise<string[]> {
  const { rows } = await db.query<{ role: string; keys: number; prefixes: string[] | string }>(
    `SELECT role, count(*)::int AS keys, (array_agg(prefix ORDER BY created_at, prefix))[1:5] AS prefixes
       FROM api_keys WHERE active AND NOT (role = ANY ($1::text[])) AND ($2::uuid IS NULL OR account_id = $2::uuid) GROUP BY role ORDER BY role`,
    [[...roles], accountId ?? null],
  );
  return rows.map(({ role, keys, prefixes }) => {
    const shown = Array.isArray(prefixes) ? prefixes : prefixes.replace(/^\{|\}$/g, '').split(',');
    return `role ${role}: ${keys} active API key${keys === 1 ? '' : 's'} (${shown.join(', ')}${keys > shown.length ? ', …' : ''}) ${keys === 1 ? 'carries' : 'carry'} it, and the metadata has no such role: ${keys === 1 ? 'it is' : 'they are'} refused (403) until the role is back or ${keys === 1 ? 'the key is' : 'the keys are'} revoked`;
  });
}

/**
 * Active keys whose variables no longer fit their role as the metadata declares it — a variable
 * the role now declares and the key lacks (its filters then match no rows), or a value the
 * variable's type (changed since) cannot hold (its requests then fail) — one warning per role
 * and problem, naming the keys by prefix. Before, such an edit loaded with no word, and those
 * keys answered nothing, or `invalid input syntax for type uuid: "Acme"`, from then on.
 * With `accountId`, only that account's keys.
 */
export async function keysWhoseVariablesDoNotFit(db: Queryable, roles: ReadonlyMap<string, { readonly variables: ReadonlyMap<string, ScalarType> }>, accountId?: string): Promise<string[]> {
  const withVariables = [...roles].filter(([, role]) => role.variables.size > 0).map(([name]) => name);
  if (!withVariables.length) return [];
  const { rows } = await db.query<{ role: string; prefix: string; variables: unknown }>(
    `SELECT role, prefix, variables FROM api_keys WHERE active AND role = ANY ($1::text[]) AND ($2::uuid IS NULL OR account_id = $2::uuid) ORDER BY role, created_at, prefix`,
    [withVariables, accountId ?? null],
  );
  /** The keys of each misfit, by role, variable and what is wrong (`lacks`, or the value it carries). */
  const misfits = new Map<string, { role: string; name: string; type: ScalarType; value: string | null; prefixes: string[] }>();
  for (const row of rows) {
    const stored = (typeof row.variables === 'string' ? JSON.parse(row.variables) : row.variables ?? {}) as Record<string, unknown>;
    for (const [name, type] of roles.get(row.role)!.variables) {
      const carried = stored[name];
      const value = typeof carried === 'string' && carried ? carried : null;
      if (value !== null && !keyVariableProblem(type, value)) continue;
      const at = JSON.stringify([row.role, name, value]);
      const misfit = misfits.get(at) ?? { role: row.role, name, type, value, prefixes: [] };
      misfit.prefixes.push(row.prefix);
      misfits.set(at, misfit);
    }
  }
  return [...misfits.values()].map(({ role, name, type, value, prefixes }) => {
    const one = prefixes.length === 1;
    const keys = `${prefixes.length} active API key${one ? '' : 's'} (${prefixes.slice(0, 5).join(', ')}${prefixes.length > 5 ? ', …' : ''})`;
    const what =
      value === null
        ? `${one ? 'lacks' : 'lack'} the variable ${name} (${type}) the role declares: ${one ? 'its' : 'their'} filters match no rows`
        : `${one ? 'carries' : 'carry'} ${name} ${JSON.stringify(value)}, which the role declares ${type}: ${one ? 'its' : 'their'} requests fail`;
    return `role ${role}: ${keys} ${what}, until ${one ? 'the key is' : 'the keys are'} replaced (key create) or the role declares ${name} as before`;
  });
}

/** Whether `text` is a key's visible prefix (`lq_xxxxxxxx`), the name `key revoke` and the dashboard use. */
export function isKeyPrefix(text: string): boolean {
  return PREFIX_PATTERN.test(text);
}

/** The prefix of a whole key (secret included), or null when `text` is not one. */
export function prefixOfKey(text: string): string | null {
  return KEY_PATTERN.exec(text)?.[1] ?? null;
}

/** What `deactivateApiKey` did: deactivated the key now, or found it deactivated already. */
export interface KeyDeactivation {
  /** False when the key was inactive already (nothing changed). */
  readonly wasActive: boolean;
  /** When it was deactivated (now, or earlier); null only for a key made inactive before this was recorded. */
  readonly deactivatedAt: string | null;
}

/**
 * Deactivates the key with this prefix (of one account, when given). Effective on the key's
 * next request, since every request reads the key's state. Returns null when there is no such
 * key; a key already inactive is left as it is (`wasActive: false`, its first deactivation kept).
 */
export async function deactivateApiKey(db: Queryable, prefix: string, accountId?: string): Promise<KeyDeactivation | null> {
  // Anything but a prefix in the key format names no key (and never reaches the database).
  if (!PREFIX_PATTERN.test(prefix)) return null;
  // One statement: of two revocations at once, the one that waits for the other's row lock
  // finds the key inactive on its re-check and reports it so.
  const { rows } = await db.query<KeyDeactivation>(
    `WITH key AS (SELECT id, deactivated_at FROM api_keys WHERE prefix = $1 AND ($2::uuid IS NULL OR account_id = $2::uuid)),
          deactivated AS (
            UPDATE api_keys k SET active = false, deactivated_at = coalesce(k.deactivated_at, now())
              FROM key WHERE k.id = key.id AND k.active
            RETURNING k.id, k.deactivated_at)
     SELECT d.id IS NOT NULL AS "wasActive", coalesce(d.deactivated_at, key.deactivated_at)::text AS "deactivatedAt"
       FROM key LEFT JOIN deactivated d ON d.id = key.id`,
    [prefix, accountId ?? null],
  );
  return rows[0] ?? null;
}

/** The key of an `Authorization` header value, when it is `Token <key>` with a key in the key format. */
function keyOfHeader(header: string | undefined): { key: string; prefix: string } | null {
  if (!header || !header.startsWith('Token ')) return null;
  const key = header.slice('Token '.length).trim();
  const match = KEY_PATTERN.exec(key);
  return match ? { key, prefix: match[1]! } : null;
}

interface VerifiedKey {
  readonly key: AuthenticatedKey;
  /** When this process last wrote (or found fresh) the key's `last_used_at`, in ms. */
  lastUseRecordedAt: number;
}

/**
 * What a key's secret proves once it has matched the stored hash, and what never changes
 * afterwards: which key of which account it is. Entries are keyed by the SHA-256 of the key (the
 * secret itself is not kept). The key's STATE is never cached: a caller that identifies a key
 * from here must have its `active` flag checked by the database in the same request — the
 * statement guard `activeKeyGuard` (`keyGuards.ts`) — so a key deactivated by any process (CLI, dashboard,
 * another service) is refused on its next request.
 */
export class VerifiedKeyCache {
  readonly #entries = new LRUCache<string, VerifiedKey>({ max: 10_000 });

  /** The key an `Authorization` header carries, if it was verified before; records its use when due. */
  identify(db: Database, header: string | undefined): AuthenticatedKey | null {
    const parsed = keyOfHeader(header);
    if (!parsed) return null;
    // The one-shot hash: the hot path of every API request (createHash costs ~3× as much).
    const entry = this.#entries.get(hash('sha256', parsed.key, 'base64'));
    if (!entry) return null;
    const now = Date.now();
    if (now - entry.lastUseRecordedAt >= LAST_USED_RESOLUTION_MS) {
      entry.lastUseRecordedAt = now;
      recordUse(db, entry.key);
    }
    return entry.key;
  }

  remember(hash: Buffer, key: AuthenticatedKey, lastUseRecordedAt: number): void {
    this.#entries.set(hash.toString('base64'), { key, lastUseRecordedAt });
  }
}

/** `last_used_at`, at most once a minute per key; recording use must never fail or slow the request it belongs to. */
function recordUse(db: Database, key: AuthenticatedKey): void {
  db.query(
    `UPDATE api_keys SET last_used_at = now()
      WHERE account_id = $1 AND id = $2 AND (last_used_at IS NULL OR last_used_at < now() - make_interval(secs => $3))`,
    [key.accountId, key.keyId, LAST_USED_RESOLUTION_MS / 1000],
  ).catch(() => undefined);
}

/**
 * Checks an `Authorization` header value against the database, key state included. Returns the
 * key's account, or null for a missing, malformed, unknown or inactive key — the caller answers
 * all of these the same way. A verified key is remembered in `verified`, when given.
 */
export async function authenticateApiKey(db: Database, header: string | undefined, verified?: VerifiedKeyCache): Promise<AuthenticatedKey | null> {
  const parsed = keyOfHeader(header);
  if (!parsed) return null;
  const { key, prefix } = parsed;
  const { rows } = await db.query<{ account_id: string; id: string; key_hash: Uint8Array; active: boolean; stale: boolean; role: string; variables: unknown }>(
    `SELECT account_id, id, key_hash, active, role, variables,
            (last_used_at IS NULL OR last_used_at < now() - make_interval(secs => $2)) AS stale
       FROM api_keys WHERE prefix = $1`,
    [prefix, LAST_USED_RESOLUTION_MS / 1000],
  );
  const row = rows[0];
  const expected = row ? Buffer.from(row.key_hash) : sha256('');
  const hash = sha256(key);
  const matches = timingSafeEqual(expected, hash) && row !== undefined;
  if (!matches || !row.active) return null;
  const stored = (typeof row.variables === 'string' ? JSON.parse(row.variables) : row.variables) as Record<string, string>;
  const authenticated: AuthenticatedKey = { accountId: row.account_id, keyId: row.id, prefix, role: row.role, variables: new Map(Object.entries(stored)) };
  if (row.stale) recordUse(db, authenticated);
  verified?.remember(hash, authenticated, Date.now());
  return authenticated;
}

/** Which of these keys (by id) are still active: a live connection's keys, checked again on a change notice. */
export async function activeKeyIds(db: Database, ids: readonly string[]): Promise<ReadonlySet<string>> {
  const { rows } = await db.query<{ id: string }>('SELECT id FROM api_keys WHERE id = ANY($1::uuid[]) AND active', [ids]);
  return new Set(rows.map((row) => row.id));
}
