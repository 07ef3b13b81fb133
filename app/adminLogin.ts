import type { Queryable } from '../db/index.js';
import { refuseNulCharacter } from './errors.js';
import { hashPassword, verifyPassword } from './passwords.js';

export interface LoggedInAdmin {
  readonly id: string;
  readonly accountId: string;
  readonly email: string;
}

/** A hash of a password nobody has, verified for unknown e-mails so they take as long as known ones. */
let decoyHash: Promise<string> | null = null;

/**
 * Checks an admin's e-mail (case-insensitive) and password. Returns the admin, or null for an
 * unknown e-mail and a wrong password alike; both cost one scrypt verification, so the answer
 * time does not tell which e-mails exist.
 */
export async function verifyAdminLogin(db: Queryable, email: string, password: string): Promise<LoggedInAdmin | null> {
  refuseNulCharacter('email', email);
  refuseNulCharacter('password', password);
  const { rows } = await db.query<LoggedInAdmin & { passwordHash: string }>(
    `SELECT id, account_id AS "accountId", email, password_hash AS "passwordHash"
       FROM admins WHERE lower(email) = lower($1)`,
    [email.trim()],
  );
  const admin = rows[0];
  decoyHash ??= hashPassword('decoy password that matches no admin');
  const matches = await verifyPassword(password, admin?.passwordHash ?? (await decoyHash));
  if (!admin || !matches) return null;
  return { id: admin.id, accountId: admin.accountId, email: admin.email };
}
