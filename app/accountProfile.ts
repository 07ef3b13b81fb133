import { Ajv, type ErrorObject } from 'ajv';
import type { Queryable } from '../db/index.js';
import { NUL_PROBLEM, hasNulCharacter, UserInputError } from './errors.js';

/**
 * The lender's profile (session 38, migration 0068): what a letter needs besides the account's
 * name — the legal name, the postal address, a phone and an e-mail, and the payment instructions
 * the payoff letter gives (wire details). Every field is optional; the letters print the letterhead
 * from it (`letterheadOf`), and an empty profile prints the account's name alone, as before.
 * `PATCH /api/account`, the dashboard's Settings > Lender profile and `loanql account profile`
 * change it through `updateAccountProfile`; the database's CHECKs hold the same rules.
 */

/** One field of the profile: its name (the column's and the API's), its longest value, its label. */
export interface ProfileField {
  readonly name: ProfileFieldName;
  readonly label: string;
  readonly maxLength: number;
  /** Whether a value may hold line breaks (the payment instructions); the others are one line. */
  readonly multiline: boolean;
  readonly description: string;
  /** A further shape (JSON Schema `pattern`, also the column's CHECK in 0068) and how to say it. */
  readonly shape?: { readonly pattern: string; readonly said: string };
}

export type ProfileFieldName =
  | 'legal_name'
  | 'address_line1'
  | 'address_line2'
  | 'city'
  | 'region'
  | 'postal_code'
  | 'country'
  | 'phone'
  | 'email'
  | 'payment_instructions';

/** One line: no control character (a line break would move what follows it on a letter). */
const ONE_LINE = '^[^\\x00-\\x1f\\x7f]*$';
/** Line breaks (`\n`) but no other control character. */
const LINES = '^[^\\x00-\\x09\\x0b-\\x1f\\x7f]*$';

export const PROFILE_FIELDS: readonly ProfileField[] = [
  { name: 'legal_name', label: 'Legal name', maxLength: 200, multiline: false, description: "The lender's legal name at the top of its letters; empty: the account's name." },
  { name: 'address_line1', label: 'Address line 1', maxLength: 200, multiline: false, description: 'Street and number, or a post-office box.' },
  { name: 'address_line2', label: 'Address line 2', maxLength: 200, multiline: false, description: 'Suite, floor or building.' },
  { name: 'city', label: 'City', maxLength: 100, multiline: false, description: 'City or town.' },
  { name: 'region', label: 'State or region', maxLength: 100, multiline: false, description: 'State, province or region (IL, Ontario).' },
  { name: 'postal_code', label: 'Postal code', maxLength: 20, multiline: false, description: 'ZIP or postal code.' },
  { name: 'country', label: 'Country', maxLength: 100, multiline: false, description: 'Country, when letters go abroad.' },
  {
    name: 'phone',
    label: 'Phone',
    maxLength: 40,
    multiline: false,
    description: 'The phone a borrower or investor calls.',
    shape: { pattern: '^[+]?[-0-9 ().]*[0-9][-0-9 ().]*( ?(x|ext[.]?) ?[0-9]{1,6})?$', said: 'a phone number: digits, spaces and + ( ) - . with an optional extension (x 12, ext. 12)' },
  },
  {
    name: 'email',
    label: 'E-mail',
    maxLength: 254,
    multiline: false,
    description: 'The e-mail a borrower or investor writes to.',
    shape: { pattern: '^[^\\s@]+@[^\\s@]+[.][^\\s@]+$', said: 'an e-mail address (name@example.com)' },
  },
  {
    name: 'payment_instructions',
    label: 'Payment instructions',
    maxLength: 2000,
    multiline: true,
    description: 'How to pay the loan off (wire details, where to send a cheque): printed on the payoff letter.',
  },
];

const BY_NAME: ReadonlyMap<string, ProfileField> = new Map(PROFILE_FIELDS.map((field) => [field.name, field]));
const FIELD_NAMES = PROFILE_FIELDS.map((field) => field.name).join(', ');

/** The profile as stored: a field not given is null. */
export type AccountProfile = Readonly<Record<ProfileFieldName, string | null>>;

/** What a field accepts, in words: the API's message and the dashboard's hint. */
export function describeProfileField(field: ProfileField): string {
  const lines = field.multiline ? 'text (line breaks allowed)' : 'text on one line';
  return `${field.shape ? `${field.shape.said}, ` : ''}${lines} of at most ${field.maxLength.toLocaleString('en-US')} characters`;
}

/** What the API accepts for a field: its text, or null (or an empty string) to clear it. */
function acceptedValues(field: ProfileField): string {
  return `${describeProfileField(field)}, or null (or an empty string) to clear it`;
}

/**
 * A field's stored values as a JSON Schema (the OpenAPI document's and the check's): a string with
 * the field's length and shape, or null. What is checked is the value trimmed (`\r\n` read as `\n`),
 * an empty one being null.
 */
export function profileFieldSchema(field: ProfileField): Record<string, unknown> {
  const patterns = [field.multiline ? LINES : ONE_LINE, ...(field.shape ? [field.shape.pattern] : [])];
  const text = patterns.length === 1 ? { pattern: patterns[0] } : { allOf: patterns.map((pattern) => ({ pattern })) };
  return { type: ['string', 'null'], minLength: 1, maxLength: field.maxLength, ...text, description: `${field.description} Accepts ${acceptedValues(field)}.` };
}

const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
const checkStored = ajv.compile({
  type: 'object',
  additionalProperties: false,
  properties: Object.fromEntries(PROFILE_FIELDS.map((field) => [field.name, profileFieldSchema(field)])),
});

/** The field an ajv error is about (`/email` → `email`, or `/email/allOf/1` is still `email`). */
function fieldOf(error: ErrorObject): string {
  return error.instancePath.split('/')[1] ?? '';
}

/**
 * A change of the profile, checked (a `UserInputError` naming every bad field, nothing written):
 * a JSON object (or a form's fields) of profile fields, each a string or null. A value is trimmed
 * (the payment instructions' `\r\n` read as `\n`); an empty one clears the field.
 */
export function checkProfileChange(change: unknown): ReadonlyMap<ProfileFieldName, string | null> {
  if (change === null || typeof change !== 'object' || Array.isArray(change)) {
    throw new UserInputError('the body must be a JSON object of profile fields, such as {"phone": "+1 312 555 0100"}', 400, new Map([['body', 'expected a JSON object of profile fields']]));
  }
  const given = change instanceof Map ? (change as ReadonlyMap<string, unknown>) : new Map(Object.entries(change));
  const problems = new Map<string, string>();
  const values = new Map<ProfileFieldName, string | null>();
  for (const [name, value] of given) {
    const field = BY_NAME.get(name);
    if (!field) problems.set(name, `unknown field; the profile's fields are ${FIELD_NAMES}`);
    else if (value === null) values.set(field.name, null);
    else if (typeof value !== 'string') problems.set(name, `expected ${acceptedValues(field)}, got ${Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : `a ${typeof value}`}`);
    else if (hasNulCharacter(value)) problems.set(name, NUL_PROBLEM);
    else {
      const text = (field.multiline ? value.replace(/\r\n?/g, '\n').replace(/ +\n/g, '\n') : value).trim();
      values.set(field.name, text === '' ? null : text);
    }
  }
  if (!checkStored(Object.fromEntries(values))) {
    for (const error of checkStored.errors ?? []) {
      const field = BY_NAME.get(fieldOf(error));
      if (!field || problems.has(field.name)) continue;
      const length = values.get(field.name)?.length ?? 0;
      problems.set(field.name, error.keyword === 'maxLength' ? `is ${length.toLocaleString('en-US')} characters long; at most ${field.maxLength.toLocaleString('en-US')}` : `expected ${acceptedValues(field)}`);
    }
  }
  if (problems.size) {
    throw new UserInputError(
      [...problems].map(([name, problem]) => `${name}: ${problem}`).join('; '),
      400,
      problems,
    );
  }
  return values;
}

/** The profile's columns, a closed list (names from `PROFILE_FIELDS`, never from a request). */
const COLUMNS = PROFILE_FIELDS.map((field) => field.name);

/** The profile of an account, with its name (what an empty legal name prints). */
export interface AccountWithProfile {
  readonly name: string;
  readonly slug: string;
  readonly profile: AccountProfile;
}

function profileOf(row: Record<string, unknown>): AccountProfile {
  return Object.fromEntries(COLUMNS.map((name) => [name, typeof row[name] === 'string' ? row[name] : null])) as AccountProfile;
}

export async function readAccountProfile(db: Queryable, accountId: string): Promise<AccountWithProfile> {
  const { rows } = await db.query<Record<string, unknown>>(`SELECT name, slug, ${COLUMNS.join(', ')} FROM accounts WHERE id = $1`, [accountId]);
  const row = rows[0];
  if (!row) throw new UserInputError('no such account', 404);
  return { name: String(row.name), slug: String(row.slug), profile: profileOf(row) };
}

/**
 * Checks the change (`checkProfileChange`) and writes the fields that differ in one statement;
 * returns the account as it now is and the fields that changed (none: nothing written).
 */
export async function updateAccountProfile(db: Queryable, accountId: string, change: unknown): Promise<AccountWithProfile & { readonly changed: readonly ProfileFieldName[] }> {
  const values = checkProfileChange(change);
  const current = await readAccountProfile(db, accountId);
  const changed = [...values].filter(([name, value]) => current.profile[name] !== value).map(([name]) => name);
  if (!changed.length) return { ...current, changed };
  // Column names from the closed table; every value a parameter.
  const assignments = changed.map((name, index) => `${name} = $${index + 2}`);
  let rows: Record<string, unknown>[];
  try {
    ({ rows } = await db.query<Record<string, unknown>>(
      `UPDATE accounts SET ${assignments.join(', ')} WHERE id = $1 RETURNING name, slug, ${COLUMNS.join(', ')}`,
      [accountId, ...changed.map((name) => values.get(name)!)],
    ));
  } catch (error) {
    // 0068's CHECKs hold the same rules: should one still refuse, it is the request's 400.
    if ((error as { code?: string }).code !== '23514') throw error;
    const problem = `refused by the database: ${(error as Error).message}`;
    throw new UserInputError(`the database refused the profile: ${(error as Error).message}`, 400, new Map(changed.map((name) => [name, problem])));
  }
  const row = rows[0]!;
  return { name: String(row.name), slug: String(row.slug), profile: profileOf(row), changed };
}

/** The profile's columns of `accounts` under `alias` as one JSON object, for a letter's statement. */
export function profileJsonSql(alias: string): string {
  return `json_build_object(${COLUMNS.map((name) => `'${name}', ${alias}.${name}`).join(', ')})`;
}

/** What heads a letter: the lender's name, its postal address a line each, and how to reach it. */
export interface Letterhead {
  readonly name: string;
  readonly addressLines: readonly string[];
  /** `Phone +1 312 555 0100 | loans@example.com`; null when neither is given. */
  readonly contactLine: string | null;
}

/**
 * The letterhead of a profile (as `profileJsonSql` reads it, or `readAccountProfile`'s) and the
 * account's name: the legal name or else the account's name; `city, region postal code` on one
 * line, as a property's address is written on the payoff letter.
 */
export function letterheadOf(accountName: string, profile: Partial<Record<ProfileFieldName, unknown>> | null): Letterhead {
  const text = (name: ProfileFieldName): string => {
    const value = profile?.[name];
    return typeof value === 'string' ? value.replace(/\s+/g, ' ').trim() : '';
  };
  const regionPostal = [text('region'), text('postal_code')].filter(Boolean).join(' ');
  const cityLine = [text('city'), regionPostal].filter(Boolean).join(', ');
  const contact = [text('phone') && `Phone ${text('phone')}`, text('email')].filter(Boolean);
  return {
    name: text('legal_name') || accountName.replace(/\s+/g, ' ').trim(),
    addressLines: [text('address_line1'), text('address_line2'), cityLine, text('country')].filter(Boolean),
    contactLine: contact.length ? contact.join(' | ') : null,
  };
}

/** The payment instructions as the payoff letter prints them (null when not given). */
export function paymentInstructionsOf(profile: Partial<Record<ProfileFieldName, unknown>> | null): string | null {
  const value = profile?.payment_instructions;
  return typeof value === 'string' && value.trim() !== '' ? value : null;
}
