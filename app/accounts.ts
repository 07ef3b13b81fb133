import type { Database, Queryable } from '../db/index.js';
import { refuseNulCharacter, UserInputError } from './errors.js';
import { hashPassword } from './passwords.js';

export interface Account {
  readonly id: string;
  readonly slug: string;
  readonly name: string;
  /** ISO 4217 (`USD`): what the dashboard shows every amount in. */
  readonly currency: string;
  /** IANA time zone (`America/Chicago`): the account's business date (SPEC §12) is a day there. */
  readonly timezone: string;
}

/** What an account may be created with or changed to (`loanql account create|set`). */
export interface AccountSettings {
  readonly name?: string;
  readonly currency?: string;
  readonly timezone?: string;
}

const SLUG = /^[a-z0-9][a-z0-9_-]{0,62}$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const ACCOUNT_COLUMNS = 'id, slug, name, currency, timezone';
/** The ISO 4217 codes this Node's Intl knows (and can therefore show with their symbol). */
const CURRENCIES: ReadonlySet<string> = new Set(Intl.supportedValuesOf('currency'));
/**
 * The ISO 4217 codes whose minor unit is not a hundredth (ISO 4217's own table, not Intl's
 * display digits, which differ: CLDR shows HUF or IDR without decimals, ISO gives them two). The
 * ledger keeps every amount to the cent (`numeric(14,2)`, SPEC §7/§12), so in these it would make
 * amounts the currency does not have (¥0.19) or could not take the ones it has (BHD 0.005).
 */
const MINOR_UNIT_NOT_CENTS: ReadonlyMap<string, string> = new Map([
  ...['BIF', 'CLP', 'DJF', 'GNF', 'ISK', 'JPY', 'KMF', 'KRW', 'PYG', 'RWF', 'UGX', 'UYI', 'VND', 'VUV', 'XAF', 'XOF', 'XPF'].map((code) => [code, 'no minor unit'] as const),
  ...['BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND'].map((code) => [code, 'three decimals'] as const),
  ...['CLF', 'UYW'].map((code) => [code, 'four decimals'] as const),
  ...['XAG', 'XAU', 'XBA', 'XBB', 'XBC', 'XBD', 'XDR', 'XPD', 'XPT', 'XSU', 'XTS', 'XUA', 'XXX'].map((code) => [code, 'no minor unit (a metal, a unit of account or a testing code)'] as const),
]);

/** A new account's slug, or a `UserInputError` saying how one is written. */
export function checkAccountSlug(slug: string): string {
  if (!SLUG.test(slug)) throw new UserInputError(`account slug "${slug}" must be lower-case letters, digits, - or _ (at most 63)`);
  return slug;
}

/**
 * What can be checked of the settings without the database (a clear `UserInputError` naming the
 * first bad one): the name and the currency; the time zone is looked up in the database's list
 * when it is written (`checkAccountSettings`). The CLI checks its options with it before it opens the database.
 */
export function checkAccountSettingsText(settings: AccountSettings): void {
  if (settings.name !== undefined) refuseNulCharacter('name', settings.name);
  if (settings.currency !== undefined) {
    refuseNulCharacter('currency', settings.currency);
    // ISO 4217's own table first: Node's Intl does not list every code of it (CLF, XAU, XXX), and
    // one without cents is refused for that, not as a code unknown.
    const minorUnit = MINOR_UNIT_NOT_CENTS.get(settings.currency);
    if (minorUnit !== undefined) {
      throw new UserInputError(
        `currency "${settings.currency}" has ${minorUnit} in ISO 4217, but the ledger keeps every amount to the cent (two decimals): an account's currency is one with cents (e.g. USD, EUR, GBP, CHF, CAD)`,
      );
    }
    if (!/^[A-Z]{3}$/.test(settings.currency) || !CURRENCIES.has(settings.currency)) {
      throw new UserInputError(`currency "${settings.currency}" is not an ISO 4217 code this service knows (three capital letters, e.g. USD, EUR, GBP, CAD)`);
    }
  }
  if (settings.timezone !== undefined) refuseNulCharacter('timezone', settings.timezone);
}

/** Checks the settings given (a clear `UserInputError` naming the first bad one); trims the name. */
async function checkAccountSettings(db: Queryable, settings: AccountSettings): Promise<AccountSettings> {
  checkAccountSettingsText(settings);
  if (settings.timezone !== undefined) {
    // The database's own list: the business date is computed there (loanql_business_date).
    const known = settings.timezone.length <= 64 && (await db.query('SELECT 1 FROM pg_timezone_names WHERE name = $1', [settings.timezone])).rows.length > 0;
    if (!known) throw new UserInputError(`timezone "${settings.timezone}" is not a time zone the database knows (an IANA name, e.g. UTC, America/New_York, Europe/Berlin)`);
  }
  return { ...settings, ...(settings.name !== undefined ? { name: settings.name.trim() } : {}) };
}

export async function createAccount(db: Queryable, slug: string, name?: string, settings: Omit<AccountSettings, 'name'> = {}): Promise<Account> {
  checkAccountSlug(slug);
  const checked = await checkAccountSettings(db, { ...settings, ...(name !== undefined ? { name } : {}) });
  const { rows } = await db.query<Account>(
    `INSERT INTO accounts (slug, name, currency, timezone) VALUES ($1, $2, coalesce($3, 'USD'), coalesce($4, 'UTC'))
     ON CONFLICT (slug) DO NOTHING RETURNING ${ACCOUNT_COLUMNS}`,
    [slug, checked.name || slug, checked.currency ?? null, checked.timezone ?? null],
  );
  if (!rows[0]) throw new UserInputError(`account "${slug}" already exists`, 409);
  return rows[0];
}

/**
 * Changes an account's name, currency or time zone (what is given); returns the account as it now
 * is. A time zone that puts the business date back (Pacific/Kiritimati to Pacific/Honolulu: a day)
 * reopens the days the daily jobs recorded after the new date (`ledger_job_days.complete`,
 * migration 0075): they have not begun in the new zone, and a write dated the new day brings its
 * loan's stored ledger back to it, so when the day comes again the job brings that loan forward.
 * Before, the day counted as done: the loan's interest due, days past due and a late fee falling
 * due that day stayed a day behind until the day after.
 */
export async function updateAccount(db: Database, slug: string, settings: AccountSettings): Promise<Account> {
  const account = await findAccount(db, slug);
  if (settings.name !== undefined && settings.name.trim() === '') throw new UserInputError('an account name may not be blank');
  const checked = await checkAccountSettings(db, settings);
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<Account>(
      `UPDATE accounts SET name = coalesce($2, name), currency = coalesce($3, currency), timezone = coalesce($4, timezone)
        WHERE id = $1 RETURNING ${ACCOUNT_COLUMNS}`,
      [account.id, checked.name ?? null, checked.currency ?? null, checked.timezone ?? null],
    );
    if (checked.timezone !== undefined && checked.timezone !== account.timezone) {
      await tx.query('UPDATE ledger_job_days SET complete = false WHERE account_id = $1 AND complete AND business_date > loanql_business_date($1)', [account.id]);
    }
    return rows[0]!;
  });
}

export async function findAccount(db: Queryable, slug: string): Promise<Account> {
  if (!SLUG.test(slug)) throw new UserInputError(`no account "${slug}"`, 404);
  const { rows } = await db.query<Account>(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE slug = $1`, [slug]);
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

/** What is checked of a new admin without the database: the e-mail (trimmed) and the password's length. */
export function checkAdminCredentials(input: { email: string; password: string; name?: string }): { email: string; password: string; name?: string } {
  refuseNulCharacter('email', input.email);
  refuseNulCharacter('password', input.password);
  if (input.name !== undefined) refuseNulCharacter('name', input.name);
  const email = input.email.trim();
  if (!EMAIL.test(email)) throw new UserInputError(`"${email}" is not an e-mail address`);
  if (input.password.length < 8) throw new UserInputError('a password has at least 8 characters');
  return { ...input, email };
}

export async function createAdmin(db: Queryable, accountId: string, given: { email: string; password: string; name?: string }): Promise<Admin> {
  const input = checkAdminCredentials(given);
  const email = input.email;
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
