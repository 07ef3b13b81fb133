import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Queryable } from '../db/index.js';

/**
 * Dashboard sessions (SPEC §4). The token is 32 random bytes (base64url) that only the
 * admin's cookie holds; the database keeps its SHA-256. Sessions end at logout or after
 * `SESSION_LIFETIME_HOURS`, whichever comes first.
 */
export const SESSION_LIFETIME_HOURS = 12;
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export interface AdminSession {
  readonly sessionId: string;
  readonly accountId: string;
  readonly accountSlug: string;
  readonly accountName: string;
  /** ISO 4217: the dashboard shows every amount in it. */
  readonly accountCurrency: string;
  readonly adminId: string;
  readonly adminEmail: string;
  readonly adminName: string;
}

export interface StartedSession {
  /** The cookie value: the only copy of the token. */
  readonly token: string;
  /** How long the session lasts, for the cookie's Max-Age. */
  readonly lifetimeMs: number;
}

const sha256 = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/** Starts a session for an admin; expired sessions of every admin are cleared on the way. */
export async function startAdminSession(db: Queryable, admin: { readonly accountId: string; readonly id: string }): Promise<StartedSession> {
  await db.query('DELETE FROM admin_sessions WHERE expires_at < now()');
  const token = randomBytes(32).toString('base64url');
  await db.query(
    `INSERT INTO admin_sessions (account_id, admin_id, token_hash, expires_at)
     VALUES ($1, $2, $3, now() + make_interval(hours => $4))`,
    [admin.accountId, admin.id, sha256(token), SESSION_LIFETIME_HOURS],
  );
  return { token, lifetimeMs: SESSION_LIFETIME_HOURS * 3_600_000 };
}

/** The live session a token belongs to, with its admin and account; null for anything else. */
export async function findAdminSession(db: Queryable, token: string | undefined): Promise<AdminSession | null> {
  if (!token || !TOKEN_PATTERN.test(token)) return null;
  const { rows } = await db.query<AdminSession>(
    `SELECT s.id AS "sessionId", s.account_id AS "accountId", acc.slug AS "accountSlug", acc.name AS "accountName", acc.currency AS "accountCurrency",
            s.admin_id AS "adminId", a.email AS "adminEmail", a.name AS "adminName"
       FROM admin_sessions s
       JOIN admins a ON a.account_id = s.account_id AND a.id = s.admin_id
       JOIN accounts acc ON acc.id = s.account_id
      WHERE s.token_hash = $1 AND s.expires_at > now()`,
    [sha256(token)],
  );
  return rows[0] ?? null;
}

/** Ends the session of this token (logout). Ending an unknown or ended session is not an error. */
export async function endAdminSession(db: Queryable, token: string | undefined): Promise<void> {
  if (!token || !TOKEN_PATTERN.test(token)) return;
  await db.query('DELETE FROM admin_sessions WHERE token_hash = $1', [sha256(token)]);
}

/**
 * The CSRF token of a session (synchronizer pattern without extra state): derived from the
 * session token with a purpose label, so it is unguessable without the cookie, differs from
 * the stored hash, and dies with the session.
 */
export function csrfTokenForSession(sessionToken: string): string {
  return sha256(`loanql dashboard csrf\u0000${sessionToken}`).toString('base64url');
}

/** Whether `offered` is the CSRF token of the session, compared in constant time. */
export function isSessionCsrfToken(sessionToken: string, offered: unknown): boolean {
  if (typeof offered !== 'string') return false;
  return sameText(csrfTokenForSession(sessionToken), offered);
}

/** Constant-time comparison of two strings (by their SHA-256, so lengths may differ). */
export function sameText(a: string, b: string): boolean {
  return timingSafeEqual(sha256(a), sha256(b));
}
