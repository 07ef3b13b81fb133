import type { Queryable } from '../db/index.js';
import { refuseNulCharacter, UserInputError } from './errors.js';
import { hashPassword } from './passwords.js';

export interface Account {
  readonly id: string;
  readonly slug: string;
  readonly name: string;
}

const SLUG = /^[a-z0-9][a-z0-9_-]{0,62}$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export async function createAccount(db: Queryable, slug: string, name?: string): Promise<Account> {
  if (!SLUG.test(slug)) throw new UserInputError(`account slug "${slug}" must be lower-case letters, digits, - or _ (at most 63)`);
  if (name !== undefined) refuseNulCharacter('name', name);
  const { rows } = await db.query<Account>(
    `INSERT INTO accounts (slug, name) VALUES ($1, $2) ON CONFLICT (slug) DO NOTHING RETURNING id, slug, name`,
    [slug, name?.trim() || slug],
  );
  if (!rows[0]) throw new UserInputError(`account "${slug}" already exists`, 409);
  return rows[0];
}

export async function findAccount(db: Queryable, slug: string): Promise<Account> {
  if (!SLUG.test(slug)) throw new UserInputError(`no account "${slug}"`, 404);
  const { rows } = await db.query<Account>('SELECT id, slug, name FROM accounts WHERE slug = $1', [slug]);
  if (!rows[0]) throw new UserInputError(`no account "${slug}"`, 404);
  return rows[0];
}

export async function countAccounts(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ count: string }>('SELECT count(*) AS count FROM accounts');
  return Number(rows[0]!.count);
}

export interface Admin {
  readonly id: string;
  readonly accountId: string;
  readonly email: string;
  readonly name: string;
}

export async function createAdmin(db: Queryable, accountId: string, input: { email: string; password: string; name?: string }): Promise<Admin> {
  refuseNulCharacter('email', input.email);
  refuseNulCharacter('password', input.password);
  if (input.name !== undefined) refuseNulCharacter('name', input.name);
  const email = input.email.trim();
  if (!EMAIL.test(email)) throw new UserInputError(`"${email}" is not an e-mail address`);
  if (input.password.length < 8) throw new UserInputError('a password has at least 8 characters');
  const passwordHash = await hashPassword(input.password);
  const { rows } = await db.query<Admin>(
    `INSERT INTO admins (account_id, email, name, password_hash) VALUES ($1, $2, $3, $4)
     ON CONFLICT DO NOTHING
     RETURNING id, account_id AS "accountId", email, name`,
    [accountId, email, input.name?.trim() || email.split('@')[0], passwordHash],
  );
  if (!rows[0]) throw new UserInputError(`an admin with e-mail ${email} already exists`, 409);
  return rows[0];
}
