import { Decimal } from 'decimal.js';
import type { Database, Queryable } from '../db/index.js';
import { hasNulCharacter, NUL_PROBLEM, UserInputError } from './errors.js';
import { ensureDefaultProduct } from './products.js';
import { LEDGER_WRITERS_LOCK } from '../db/index.js';

/**
 * The servicing settings of the account's default product (SPEC §12 "Settings per product",
 * issue 29): one table of descriptors, read and written here for every path — `GET`/`PATCH
 * /api/product`, its OpenAPI schema, `loanql product settings|set` and the dashboard's Settings >
 * Servicing page. Each setting is a column of `products` (migrations 0012, 0014, 0015), whose
 * CHECKs hold the same rules for any other writer; this module names a problem to the user first
 * and writes nothing when any value is wrong.
 *
 * A change of a setting that the replay reads (`replays`) replays the product's loans in the same
 * transaction (the trigger `products_replay_loans`, 0012 and 0015): their allocations, late fees,
 * balances and statuses follow the new value.
 */

/** A delinquency bucket (R3): its name and the first day past due it holds. */
export interface DelinquencyBucket {
  readonly name: string;
  readonly from: number;
}

/** A setting's value as JSON carries it: decimals as exact decimal text. */
export type SettingValue = string | number | null | readonly DelinquencyBucket[];

export type SettingKind =
  | { readonly kind: 'enum'; readonly values: readonly string[] }
  | { readonly kind: 'integer'; readonly min: number; readonly max: number }
  /** A decimal with at most `scale` decimal places, from `min` to `max` (money: scale 2; a fraction: 0 to 1). */
  | { readonly kind: 'decimal'; readonly scale: number; readonly min: string; readonly max: string; readonly unit: 'percent' | 'money' | 'fraction' }
  /** A list of buckets by their first day (R3; the rules of `loanql_delinquency_buckets_valid`, 0014). */
  | { readonly kind: 'buckets'; readonly maxBuckets: number; readonly maxName: number; readonly maxFrom: number };

export interface SettingDescriptor {
  /** The name clients use; also the `products` column it is stored in. */
  readonly name: string;
  readonly kind: SettingKind;
  /** Whether null is a value (the setting unset). */
  readonly nullable: boolean;
  /** SPEC §12's default, as JSON carries it. */
  readonly default: SettingValue;
  /** What it changes, in one sentence. */
  readonly description: string;
  /** Whether changing it replays the product's loans (the replay reads it). */
  readonly replays: boolean;
}

/** The largest amount numeric(14, 2) holds. */
const MONEY_MAX = '999999999999.99';
const money = { kind: 'decimal', scale: 2, min: '0', max: MONEY_MAX, unit: 'money' } as const;

export const DEFAULT_BUCKETS: readonly DelinquencyBucket[] = [
  { name: 'current', from: 0 },
  { name: '1-29', from: 1 },
  { name: '30-59', from: 30 },
  { name: '60-89', from: 60 },
  { name: '90-119', from: 90 },
  { name: '120+', from: 120 },
];

/** Every setting, in SPEC §12's order. */
export const PRODUCT_SETTINGS: readonly SettingDescriptor[] = [
  {
    name: 'allocation_order',
    kind: { kind: 'enum', values: ['interest_principal_then_fees', 'fees_interest_principal'] },
    nullable: false,
    default: 'interest_principal_then_fees',
    description: "How a payment is applied (R1): each due row's interest and principal, then fees; or each due row's own fees first, then its interest and principal.",
    replays: true,
  },
  {
    name: 'day_count',
    kind: { kind: 'enum', values: ['actual/360', 'actual/365', '30/360'] },
    nullable: false,
    default: 'actual/360',
    description: 'How interest accrues between due dates (R2): payoff quotes, accrued interest and per diem.',
    replays: true,
  },
  {
    name: 'late_fee_grace_days',
    kind: { kind: 'integer', min: 0, max: 365 },
    nullable: false,
    default: 10,
    description: 'Days after a due date before a row not fully paid gets its late fee, dated the day after (R4).',
    replays: true,
  },
  {
    name: 'late_fee_percent',
    kind: { kind: 'decimal', scale: 4, min: '0', max: '100', unit: 'percent' },
    nullable: true,
    default: '5',
    description: "A late fee as a percent of the row's scheduled payment (R4). Either this or late_fee_fixed, not both; null: no percent fee.",
    replays: true,
  },
  {
    name: 'late_fee_fixed',
    kind: money,
    nullable: true,
    default: null,
    description: 'A late fee as a fixed amount (R4). Either this or late_fee_percent, not both; null: no fixed fee.',
    replays: true,
  },
  {
    name: 'late_fee_min',
    kind: money,
    nullable: true,
    default: null,
    description: 'The smallest late fee (R4); null: no minimum. At most late_fee_max.',
    replays: true,
  },
  {
    name: 'late_fee_max',
    kind: money,
    nullable: true,
    default: null,
    description: 'The largest late fee (R4); null: no maximum. At least late_fee_min.',
    replays: true,
  },
  {
    name: 'nsf_fee',
    kind: money,
    nullable: false,
    default: '0.00',
    description: 'The fee a reversal for insufficient funds adds, dated the reversal (R8); 0.00: none. Fees already recorded keep their amount.',
    replays: false,
  },
  {
    name: 'arrears_tolerance',
    kind: money,
    nullable: false,
    default: '0.00',
    description: 'A row owing at most this much principal and interest counts as paid for days past due (R3).',
    replays: true,
  },
  {
    name: 'delinquency_buckets',
    kind: { kind: 'buckets', maxBuckets: 12, maxName: 40, maxFrom: 3650 },
    nullable: false,
    default: DEFAULT_BUCKETS,
    description: 'The aging buckets by days past due (R3): each a name and its first day; the first starts at 0, each later than the one before.',
    replays: false,
  },
  {
    name: 'investor_fee_share',
    kind: { kind: 'decimal', scale: 4, min: '0', max: '1', unit: 'fraction' },
    nullable: false,
    default: '0',
    description: "The fraction (0 to 1) of fees that goes to a loan's investors, pro rata (R10).",
    replays: false,
  },
];

const BY_NAME = new Map(PRODUCT_SETTINGS.map((setting) => [setting.name, setting]));
const SETTING_NAMES = PRODUCT_SETTINGS.map((setting) => setting.name).join(', ');

/** The settings by name. */
export type ProductSettings = ReadonlyMap<string, SettingValue>;

export interface ProductSettingsView {
  readonly productId: string;
  readonly settings: ProductSettings;
}

/** What a setting accepts, in words (`one of actual/360, actual/365, 30/360`). */
export function describeSetting(setting: SettingDescriptor): string {
  const kind = setting.kind;
  const orNull = setting.nullable ? ', or null (none)' : '';
  switch (kind.kind) {
    case 'enum':
      return `one of ${kind.values.join(', ')}`;
    case 'integer':
      return `a whole number from ${kind.min} to ${kind.max}${orNull}`;
    case 'decimal':
      return `a number from ${kind.min} to ${kind.unit === 'money' ? '999,999,999,999.99' : kind.max} with at most ${kind.scale} decimal places${orNull}`;
    case 'buckets':
      return `a list of 1 to ${kind.maxBuckets} buckets {"name", "from"}: names not blank, distinct, at most ${kind.maxName} characters; "from" whole days from 0 to ${kind.maxFrom}, the first 0, each greater than the one before`;
  }
}

/** The setting of that name, or undefined. */
export function productSetting(name: string): SettingDescriptor | undefined {
  return BY_NAME.get(name);
}

type Checked = { ok: true; value: SettingValue } | { ok: false; problem: string };

const DECIMAL_TEXT = /^-?\d+(\.\d+)?$/;

/** Checks one value as JSON gives it; returns it normalised (decimals as exact text). */
export function checkSettingValue(setting: SettingDescriptor, value: unknown): Checked {
  const wrong = (detail?: string): Checked => ({ ok: false, problem: `must be ${describeSetting(setting)}${detail ? ` (${detail})` : ''}` });
  if (value === null) return setting.nullable ? { ok: true, value: null } : wrong('it cannot be null');
  if (typeof value === 'string' && hasNulCharacter(value)) return { ok: false, problem: NUL_PROBLEM };
  const kind = setting.kind;
  switch (kind.kind) {
    case 'enum':
      return typeof value === 'string' && kind.values.includes(value) ? { ok: true, value } : wrong();
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value) && value >= kind.min && value <= kind.max ? { ok: true, value } : wrong();
    case 'decimal': {
      let decimal: Decimal;
      if (typeof value === 'number' && Number.isFinite(value)) decimal = new Decimal(value);
      else if (typeof value === 'string' && DECIMAL_TEXT.test(value.trim())) decimal = new Decimal(value.trim());
      else return wrong();
      if (decimal.decimalPlaces() > kind.scale || decimal.lt(kind.min) || decimal.gt(kind.max)) return wrong();
      return { ok: true, value: kind.unit === 'money' ? decimal.toFixed(2) : decimal.toFixed() };
    }
    case 'buckets':
      return checkBuckets(setting, kind, value);
  }
}

function checkBuckets(setting: SettingDescriptor, kind: Extract<SettingKind, { kind: 'buckets' }>, value: unknown): Checked {
  const wrong = (detail: string): Checked => ({ ok: false, problem: `must be ${describeSetting(setting)} (${detail})` });
  if (!Array.isArray(value)) return wrong('not a list');
  if (value.length < 1 || value.length > kind.maxBuckets) return wrong(`${value.length} buckets`);
  const buckets: DelinquencyBucket[] = [];
  const names = new Set<string>();
  for (const [index, item] of value.entries()) {
    const which = `bucket ${index + 1}`;
    if (item === null || typeof item !== 'object' || Array.isArray(item)) return wrong(`${which} is not an object`);
    const entries = new Map(Object.entries(item as object));
    const extra = [...entries.keys()].filter((key) => key !== 'name' && key !== 'from');
    if (extra.length) return wrong(`${which} has ${extra.map((key) => JSON.stringify(key)).join(', ')}; a bucket is exactly a name and a from`);
    const name = entries.get('name');
    const from = entries.get('from');
    if (typeof name !== 'string' || !name.trim()) return wrong(`${which} needs a name`);
    if (hasNulCharacter(name)) return { ok: false, problem: `${which}'s name ${NUL_PROBLEM}` };
    const trimmed = name.trim();
    if (trimmed.length > kind.maxName) return wrong(`${which}'s name is longer than ${kind.maxName} characters`);
    if (names.has(trimmed)) return wrong(`the name ${JSON.stringify(trimmed)} is given twice`);
    if (typeof from !== 'number' || !Number.isInteger(from) || from < 0 || from > kind.maxFrom) return wrong(`${which}'s from is not a whole number from 0 to ${kind.maxFrom}`);
    const previous = buckets[buckets.length - 1];
    if (!previous && from !== 0) return wrong('the first bucket must start at 0');
    if (previous && from <= previous.from) return wrong(`${which} starts at ${from}, not after ${previous.from}`);
    names.add(trimmed);
    buckets.push({ name: trimmed, from });
  }
  return { ok: true, value: buckets };
}

/**
 * A value typed as text (the CLI's `name=value`, the dashboard's form) read as JSON would give
 * it: for a nullable setting an empty text (or `null`, `none`) is null; buckets are `name: from`
 * entries, one a line or separated by commas (or a JSON list).
 */
export function settingFromText(setting: SettingDescriptor, text: string): Checked {
  const trimmed = text.trim();
  if (setting.nullable && (trimmed === '' || trimmed === 'null' || trimmed === 'none')) return { ok: true, value: null };
  const kind = setting.kind;
  if (kind.kind === 'integer') return checkSettingValue(setting, /^-?\d{1,15}$/.test(trimmed) ? Number(trimmed) : trimmed);
  if (kind.kind !== 'buckets') return checkSettingValue(setting, trimmed);
  if (trimmed.startsWith('[')) {
    try {
      return checkSettingValue(setting, JSON.parse(trimmed));
    } catch {
      return { ok: false, problem: `must be ${describeSetting(setting)} (the list is not valid JSON)` };
    }
  }
  const entries = trimmed.split(/\r?\n|,/).map((line) => line.trim()).filter(Boolean);
  const buckets: { name: string; from: unknown }[] = [];
  for (const entry of entries) {
    const colon = entry.lastIndexOf(':');
    const from = colon < 0 ? '' : entry.slice(colon + 1).trim();
    if (!/^\d{1,5}$/.test(from)) return { ok: false, problem: `must be lines of "name: first day" (${JSON.stringify(entry)} is not)` };
    buckets.push({ name: entry.slice(0, colon), from: Number(from) });
  }
  return checkSettingValue(setting, buckets);
}

/** A value as one line of text (the CLI, the dashboard's inputs): buckets as `name: from` entries. */
export function settingText(value: SettingValue, separator = ', '): string {
  if (value === null) return '';
  if (Array.isArray(value)) return (value as readonly DelinquencyBucket[]).map((bucket) => `${bucket.name}: ${bucket.from}`).join(separator);
  return String(value);
}

function sameValue(a: SettingValue, b: SettingValue): boolean {
  if (a === null || b === null) return a === b;
  if (typeof a === 'string' && typeof b === 'string' && DECIMAL_TEXT.test(a) && DECIMAL_TEXT.test(b)) return new Decimal(a).eq(b);
  return JSON.stringify(a) === JSON.stringify(b);
}

interface SettingsRow {
  id: string;
  [column: string]: unknown;
}

/** The columns as the read takes them: numerics and JSON as text, so no digit is lost. */
const SELECT_LIST = PRODUCT_SETTINGS.map((setting) => `${setting.name}${setting.kind.kind === 'integer' ? '' : '::text'} AS ${setting.name}`).join(', ');

function settingsOf(row: SettingsRow): Map<string, SettingValue> {
  const settings = new Map<string, SettingValue>();
  for (const setting of PRODUCT_SETTINGS) {
    const raw = row[setting.name];
    if (raw === null || raw === undefined) settings.set(setting.name, null);
    // jsonb keeps an object's keys in its own order: each bucket is rebuilt as {name, from}.
    else if (setting.kind.kind === 'buckets') settings.set(setting.name, (JSON.parse(String(raw)) as DelinquencyBucket[]).map(({ name, from }) => ({ name, from })));
    else if (setting.kind.kind === 'integer') settings.set(setting.name, Number(raw));
    else if (setting.kind.kind === 'decimal') settings.set(setting.name, setting.kind.unit === 'money' ? new Decimal(String(raw)).toFixed(2) : new Decimal(String(raw)).toFixed());
    else settings.set(setting.name, String(raw));
  }
  return settings;
}

async function readRow(db: Queryable, accountId: string, lock: boolean): Promise<ProductSettingsView> {
  const productId = await ensureDefaultProduct(db, accountId);
  // The select list is made of the descriptors' own names (a closed table), never of a client's text.
  const { rows } = await db.query<SettingsRow>(`SELECT id, ${SELECT_LIST} FROM products WHERE account_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`, [accountId, productId]);
  return { productId, settings: settingsOf(rows[0]!) };
}

/** The default product's settings (the product is created, with SPEC §12's defaults, when the account has none). */
export async function readProductSettings(db: Queryable, accountId: string): Promise<ProductSettingsView> {
  return readRow(db, accountId, false);
}

export interface SettingsUpdate extends ProductSettingsView {
  /** The settings whose value changed, in the table's order. */
  readonly changed: readonly string[];
  /** Loans whose ledgers were replayed (0 when no changed setting replays). */
  readonly replayedLoans: number;
}

/**
 * Checks each of `changes` (a JSON object of settings, or with `valuesAre: 'text'` a map of typed
 * texts) on its own against the descriptors, reading nothing: the values as stored, or one
 * `UserInputError` whose `fields` name every bad setting. `updateProductSettings` starts with it;
 * the CLI calls it before it opens the database.
 */
export function checkSettingChanges(changes: unknown, options: { readonly valuesAre?: 'json' | 'text' } = {}): ReadonlyMap<string, SettingValue> {
  if (changes === null || typeof changes !== 'object' || Array.isArray(changes)) {
    throw new UserInputError('the body must be a JSON object of settings, such as {"day_count": "actual/365"}', 400, new Map([['body', 'expected a JSON object of settings']]));
  }
  const given = changes instanceof Map ? (changes as ReadonlyMap<string, unknown>) : new Map(Object.entries(changes));
  const problems = new Problems();
  const values = new Map<string, SettingValue>();
  for (const [name, value] of given) {
    const setting = BY_NAME.get(name);
    if (!setting) {
      problems.add([name], `unknown setting ${JSON.stringify(name)}; the settings are ${SETTING_NAMES}`, `unknown setting; the settings are ${SETTING_NAMES}`);
      continue;
    }
    const checked = options.valuesAre === 'text' ? settingFromText(setting, typeof value === 'string' ? value : String(value)) : checkSettingValue(setting, value);
    if (checked.ok) values.set(name, checked.value);
    else problems.add([name], `${name} ${checked.problem}`, checked.problem);
  }
  if (problems.size) throw problems.refusal();
  return values;
}

/**
 * Validates `changes` (`checkSettingChanges`) and the rules between settings, then writes them to
 * the default product in one transaction, which replays its loans. Every problem is collected
 * into one `UserInputError` whose `fields` name each setting; nothing is written then.
 */
export async function updateProductSettings(
  db: Database,
  accountId: string,
  changes: unknown,
  options: { readonly valuesAre?: 'json' | 'text' } = {},
): Promise<SettingsUpdate> {
  const values = checkSettingChanges(changes, options);
  return db.transaction(async (tx) => {
    // First: the account's ledger-writers lock, EXCLUSIVE — the payments under way commit first and
    // later ones wait, so the replay below and a payment naming the loans in another order take
    // turns instead of deadlocking (migration 0067; payment writes take it SHARE).
    await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2::text))', [LEDGER_WRITERS_LOCK, accountId]);
    // Inside the transaction's work: a run undone as a deadlock runs again, whole (db/conflictRetry.ts).
    const problems = new Problems();
    const current = await readRow(tx, accountId, true);
    const merged = new Map([...current.settings, ...values]);
    refuseConflicts(merged, values, problems);
    if (problems.size) throw problems.refusal();
    const changed = PRODUCT_SETTINGS.filter((setting) => values.has(setting.name) && !sameValue(values.get(setting.name)!, current.settings.get(setting.name)!));
    if (!changed.length) return { ...current, changed: [], replayedLoans: 0 };
    // Column names come from the descriptors (a closed table); every value is a parameter.
    const assignments = changed.map((setting, index) => `${setting.name} = $${index + 3}::${columnType(setting)}`);
    const parameters = changed.map((setting) => {
      const value = values.get(setting.name)!;
      return setting.kind.kind === 'buckets' && value !== null ? JSON.stringify(value) : value;
    });
    try {
      await tx.query(`UPDATE products SET ${assignments.join(', ')} WHERE account_id = $1 AND id = $2`, [accountId, current.productId, ...parameters]);
    } catch (error) {
      // The CHECKs of 0012–0015 hold the same rules; should one still refuse, it is the request's 400.
      if ((error as { code?: string }).code === '23514') {
        const refused = new Problems();
        refused.add(changed.map((setting) => setting.name), `the database refused the settings: ${(error as Error).message}`, `refused by the database: ${(error as Error).message}`);
        throw refused.refusal();
      }
      // The replay of the product's loans (in this UPDATE) computed an amount past numeric(14,2):
      // a loan's fees, balance or credit past 999,999,999,999.99 under the new late-fee rule.
      if ((error as { code?: string }).code === '22003') {
        const refused = new Problems();
        const problem = "would make a loan's fees, a balance or the credit past 999,999,999,999.99, too large to store";
        refused.add(changed.map((setting) => setting.name), `the new settings ${problem}; nothing was written`, problem);
        throw refused.refusal();
      }
      throw error;
    }
    let replayedLoans = 0;
    if (changed.some((setting) => setting.replays)) {
      const { rows } = await tx.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM loans l JOIN products p ON p.account_id = l.account_id AND p.id = $2
          WHERE l.account_id = $1 AND (l.product_id = p.id OR (l.product_id IS NULL AND p.is_default))`,
        [accountId, current.productId],
      );
      replayedLoans = rows[0]?.n ?? 0;
    }
    return { ...(await readRow(tx, accountId, false)), changed: changed.map((setting) => setting.name), replayedLoans };
  });
}

function columnType(setting: SettingDescriptor): string {
  switch (setting.kind.kind) {
    case 'enum':
      return 'text';
    case 'integer':
      return 'integer';
    case 'decimal':
      return 'numeric';
    case 'buckets':
      return 'jsonb';
  }
}

/**
 * The rules between settings, on the settings as they would be (migration 0015 holds them too):
 * late_fee_min ≤ late_fee_max; a late fee is a percent or a fixed amount, not both; and a minimum
 * or maximum needs one of them (the replay would otherwise make a fee of the bound alone). Each
 * names every setting involved.
 */
function refuseConflicts(merged: ReadonlyMap<string, SettingValue>, given: ReadonlyMap<string, SettingValue>, problems: Problems): void {
  const min = merged.get('late_fee_min');
  const max = merged.get('late_fee_max');
  if (typeof min === 'string' && typeof max === 'string' && new Decimal(min).gt(max)) {
    problems.add(['late_fee_min', 'late_fee_max'], `late_fee_min must not exceed late_fee_max (${min} > ${max})`, `late_fee_min (${min}) must not exceed late_fee_max (${max})`);
  }
  const percent = merged.get('late_fee_percent');
  const fixed = merged.get('late_fee_fixed');
  if (percent !== null && fixed !== null) {
    const clear = given.has('late_fee_fixed') && !given.has('late_fee_percent') ? 'late_fee_percent' : 'late_fee_fixed';
    const problem = `a late fee is a percent of the row's payment (late_fee_percent) or a fixed amount (late_fee_fixed), not both: set ${clear} to null in the same change`;
    problems.add(['late_fee_percent', 'late_fee_fixed'], `late_fee_percent and late_fee_fixed: ${problem}`, problem);
  }
  const bounds = (['late_fee_min', 'late_fee_max'] as const).filter((name) => merged.get(name) !== null);
  if (percent === null && fixed === null && bounds.length) {
    const [verb, pronoun] = bounds.length > 1 ? ['hold', 'they need'] : ['holds', 'it needs'];
    const problem = `${bounds.join(' and ')} ${verb} a late fee within bounds, so ${pronoun} late_fee_percent or late_fee_fixed; with neither there is no late fee: set ${bounds.join(' and ')} to null too`;
    problems.add(['late_fee_percent', 'late_fee_fixed', ...bounds], problem, problem);
  }
}

/** Problems collected over a whole change: a sentence each, and what each setting named is told. */
class Problems {
  readonly fields = new Map<string, string>();
  private readonly sentences: string[] = [];

  get size(): number {
    return this.fields.size;
  }

  add(names: readonly string[], sentence: string, problem: string): void {
    for (const name of names) this.fields.set(name, problem);
    this.sentences.push(sentence);
  }

  refusal(): UserInputError {
    return new UserInputError(this.sentences.join('; '), 400, this.fields);
  }
}
