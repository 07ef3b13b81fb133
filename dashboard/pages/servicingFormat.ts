import type { CustomFieldType } from '../../app/products.js';
import { moneyText } from '../../domain/moneyText.js';
import { html, type Html } from '../html.js';
import type { TaskAssignee } from '../taskForm.js';

/** A record of an engine response (lossless-json: numbers are `LosslessNumber`s). */
export type Row = Readonly<Record<string, unknown>>;

/** A response value as text: numbers with PostgreSQL's exact digits, null as ''. */
export function text(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object' && !Array.isArray(value)) return String(value as { toString(): string });
  return String(value);
}

export function rows(value: unknown): readonly Row[] {
  return Array.isArray(value) ? (value as Row[]) : [];
}

export function row(value: unknown): Row | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Row) : null;
}

/** An amount as sent (`100000.00`), its whole part grouped by thousands: `100,000.00`. Never through a float. */
export function money(value: unknown): string {
  const digits = text(value);
  const match = /^(-?)(\d+)(\.\d+)?$/.exec(digits);
  if (!match) return digits;
  return `${match[1]}${match[2]!.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}${match[3] ?? ''}`;
}

/**
 * How a loan is shown and linked: its name, or `Loan <first 8 characters of the id>` when the
 * name is blank — the database refuses blank names since migration 0013, which gave the loans
 * already nameless this same label, so a list row is never an empty link nobody can click.
 */
export function loanLabel(loan: Row): string {
  const name = text(loan.name).trim();
  return name === '' ? `Loan ${text(loan.id).slice(0, 8)}` : name;
}

/** A dash for an empty value, so table cells are never blank. */
export function orDash(value: unknown): Html | string {
  const shown = text(value);
  return shown === '' ? html`<span class="hint" aria-label="none">—</span>` : shown;
}

/** A status as a pill (loan statuses, task statuses), in words (`enumLabel`). */
export function statusPill(value: unknown): Html {
  const status = text(value);
  return html`<span class="status pill-${status.replace(/[^a-z_]/g, '')}">${enumLabel(status)}</span>`;
}

/** Cents of an exact decimal text (`-12.5` → -1250n); null for anything else (more than 2 decimals included). */
export function centsOf(value: unknown): bigint | null {
  const match = /^(-?)(\d+)(?:\.(\d{1,2}))?$/.exec(text(value));
  if (!match) return null;
  const cents = BigInt(match[2]!) * 100n + BigInt((match[3] ?? '0').padEnd(2, '0'));
  return match[1] ? -cents : cents;
}

/** Cents as a decimal text with two decimals: 845n → `8.45`, -5n → `-0.05`. */
export function fromCents(cents: bigint): string {
  const sign = cents < 0n ? '-' : '';
  const whole = cents < 0n ? -cents : cents;
  return `${sign}${whole / 100n}.${String(whole % 100n).padStart(2, '0')}`;
}

/**
 * An amount of money in the account's currency, with two decimals, grouped: `84600.2` →
 * `$84,600.20` (the ledger's as-of figures come with PostgreSQL's own scale; a value with more
 * decimals is shown with them all); a negative one `−$5.00`; a dash for none. Never through a
 * float (`domain/moneyText.ts`).
 */
export function cash(value: unknown, currency: string): Html | string {
  if (text(value) === '') return orDash(null);
  return moneyText(text(value), currency);
}

/** Enum values whose words are not just the value with spaces. */
const ENUM_WORDS: ReadonlyMap<string, string> = new Map([
  ['ach', 'ACH'],
  ['nsf', 'NSF'],
  ['semi_monthly', 'semi-monthly'],
  ['bpo', 'BPO'],
  ['avm', 'AVM'],
  ['photo_id', 'photo ID'],
  ['w9', 'W-9'],
]);

/**
 * An enum value as words for reading (`interest_only` → `interest only`, `deed_of_trust` →
 * `deed of trust`, `ach` → `ACH`): every stored code a page shows (statuses, types, kinds,
 * methods, components) goes through it. Forms keep the stored value as the option's `value`, so
 * only what is shown changes.
 */
export function enumLabel(value: unknown): string {
  const shown = text(value);
  return ENUM_WORDS.get(shown) ?? shown.replace(/_/g, ' ');
}

/** Whether a name is plainly a code (`date_funded`, `dateFunded`), not a word a sentence could hold (`amount`). */
const isCodeName = (name: string): boolean => /_|[a-z][A-Z]/.test(name);

/**
 * A message of the rules (the REST loan rules, the schedule's, the database's) in the page's
 * words: each name in `labels` — a field as the API body, the table or the schedule names it
 * (`Date_Funded`, `date_funded`, `dateFunded`), an enum value (`interest_only`) — becomes the label
 * the page shows for it. Only names that are plainly codes are replaced (with `_` or an inner
 * capital: `amount` or `rate` may be words of the sentence), as whole words, and never inside a
 * double-quoted part, which is what was typed, shown back (`got "1,25.00"`).
 */
export function inPageWords(message: string, labels: ReadonlyMap<string, string>): string {
  const names = [...labels.keys()].filter((name) => isCodeName(name) && labels.get(name) !== name).sort((a, b) => b.length - a.length);
  if (names.length === 0) return message;
  const pattern = new RegExp(`(?<![A-Za-z0-9_])(?:${names.map((name) => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})(?![A-Za-z0-9_])`, 'g');
  return message
    .split(/("(?:[^"\\]|\\.)*")/)
    .map((part, index) => (index % 2 === 1 ? part : part.replace(pattern, (name) => labels.get(name)!)))
    .join('');
}

/**
 * A percent as stored, with its sign, and zeros past two decimals left off: the loan's rate
 * (`numeric` with four places, `11.0000`) as `11.00 %`, `11.1250` as `11.125 %`, a percent custom
 * field's `65` as `65 %` — one form for both (the rate showed `11.0000 %` beside `65 %`).
 */
export function percent(value: unknown): string {
  const digits = text(value);
  const trimmed = /^-?\d+\.\d{2}\d*$/.test(digits) ? digits.replace(/(\.\d{2}\d*?)0+$/, '$1') : digits;
  return `${trimmed} %`;
}

/**
 * A custom field's value shown by the field's type: currency with two decimals, grouped
 * (`2500` → `2,500.00`); percent with its sign (`65 %`); a select's option and a boolean as words;
 * a date as stored (ISO, like every date of the dashboard). A value kept from a field the product
 * no longer has (no type) is shown as stored.
 */
export function customFieldValue(type: CustomFieldType | undefined, value: unknown, currency: string): Html | string {
  if (text(value) === '') return orDash(null);
  switch (type) {
    case 'currency':
      return cash(value, currency);
    case 'percent':
      return percent(value);
    case 'number':
    case 'integer':
      return money(value);
    case 'boolean':
      return value === true ? 'yes' : value === false ? 'no' : text(value);
    case 'select':
      return enumLabel(value);
    default:
      return text(value);
  }
}

/**
 * Dates are ISO (`2026-01-15`) everywhere in the dashboard, shown and typed: a date field is a
 * text input with the format as its placeholder, not `type="date"`, whose picker shows the
 * browser's locale (mm/dd/yyyy in en-US) beside ISO dates everywhere else. The server checks the day.
 */
export const DATE_INPUT_ATTRIBUTES = html` placeholder="YYYY-MM-DD" maxlength="10" autocomplete="off" class="date-input"`;

export function dateInput(id: string, name: string, value: string, required: boolean, attributes: Html | null = null): Html {
  return html`<input id="${id}" name="${name}" type="text"${DATE_INPUT_ATTRIBUTES}${required ? html` required` : null}${attributes} value="${value}">`;
}

/**
 * A task form's Assignee choice (name `assignee_id`): Unassigned (the default), then the account's
 * users as `choices` lists them (the signed-in one first, marked "you"); `chosen` an admin's id or ''.
 */
export function assigneeSelect(id: string, choices: readonly TaskAssignee[], me: string, chosen: string, attributes: Html | null = null): Html {
  return html`<select id="${id}" name="assignee_id"${attributes}>
      <option value=""${chosen === '' ? html` selected` : null}>Unassigned</option>
      ${choices.map((user) => html`<option value="${user.id}"${user.id === chosen ? html` selected` : null}>${user.name}${user.id === me ? ' (you)' : ''}</option>`)}
    </select>`;
}

/** Whom a task is for, in a list: the assignee's name ("you" for the signed-in user), or "unassigned". */
export function assigneeText(task: Row, me: string): Html {
  const assignee = row(task.assignee);
  if (!assignee) return html`<span class="hint">unassigned</span>`;
  return html`${text(assignee.name)}${text(assignee.id) === me ? html` <span class="hint">(you)</span>` : null}`;
}
