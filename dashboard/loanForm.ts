import type { ValueRule } from '../app/fieldValues.js';
import { bodyName, BUILT_IN_FIELDS, type Product } from '../app/products.js';
import { plainAmount } from './moneyInput.js';

/**
 * The create and edit forms of a loan: one input per field of the account's product, named as
 * the `POST`/`PATCH /api/loan` body names it, so the form's values become that body and the
 * very same rules (`app/loanInput.ts`, `app/loanWrites.ts`) check them and name the field.
 */
export interface LoanFormField {
  /** The body name, also the input's name (`Amount`, `Loan_Officer`, `Borrower_Name`). */
  readonly name: string;
  readonly label: string;
  readonly rule: ValueRule;
  readonly required: boolean;
  readonly hint?: string;
  /** An amount of money: typed with or without thousands separators (`plainAmount`). */
  readonly money?: boolean;
  /** Where the current value is read from on the edit form. */
  readonly source: { readonly kind: 'column'; readonly column: string } | { readonly kind: 'custom'; readonly key: string } | { readonly kind: 'contact' };
}

const HINTS: ReadonlyMap<string, string> = new Map([
  ['Rate', 'Annual percent, e.g. 12 or 9.5.'],
  ['Term', 'Number of payments.'],
  ['Regular_Payment', 'Leave empty to have it computed from the schedule.'],
  ['Date_Maturity', 'Leave empty to have it computed from the schedule.'],
  ['First_Payment_Date', 'Leave empty: one period after Date Funded.'],
]);

/** The built-in fields that are amounts of money (SPEC §6); a custom field is one when its type is `currency`. */
const MONEY_FIELDS: ReadonlySet<string> = new Set(['Amount', 'Regular_Payment']);

const CONTACT_FIELDS: readonly LoanFormField[] = ['Borrower', 'Guarantor'].flatMap((prefix) => [
  { name: `${prefix}_Name`, label: `${prefix} name`, rule: { kind: 'text', maxLength: 500 }, required: false, source: { kind: 'contact' } },
  { name: `${prefix}_Email`, label: `${prefix} e-mail`, rule: { kind: 'text', maxLength: 320 }, required: false, hint: 'An existing person with this e-mail is linked instead of a new one.', source: { kind: 'contact' } },
  { name: `${prefix}_Company`, label: `${prefix} company`, rule: { kind: 'text', maxLength: 500 }, required: false, source: { kind: 'contact' } },
] satisfies LoanFormField[]);

/** The product's fields in the order SPEC §6 lists the built-in ones, then the custom ones; contacts only when creating. */
export function loanFormFields(product: Product, mode: 'create' | 'update'): readonly LoanFormField[] {
  const fields: LoanFormField[] = BUILT_IN_FIELDS.map((field) => ({
    name: field.name,
    label: field.name.replace(/_/g, ' '),
    rule: field.rule,
    required: field.name === 'Name',
    ...(HINTS.has(field.name) ? { hint: HINTS.get(field.name)! } : {}),
    ...(MONEY_FIELDS.has(field.name) ? { money: true } : {}),
    source: { kind: 'column', column: field.column },
  }));
  for (const field of product.customFields) {
    fields.push({
      name: bodyName(field.name),
      label: field.name,
      rule: field.rule,
      required: field.required === true && field.defaultValue === undefined,
      ...(field.defaultValue !== undefined && mode === 'create' ? { hint: `Default: ${String(field.defaultValue)}.` } : {}),
      ...(field.type === 'currency' ? { money: true } : {}),
      source: { kind: 'custom', key: field.key },
    });
  }
  return mode === 'create' ? [...fields, ...CONTACT_FIELDS] : fields;
}

/**
 * A value typed into an input, as the JSON body carries it (the rules then check it): an amount
 * of money as its plain decimal (`1,250.00` → `1250.00`; what `plainAmount` does not read is sent
 * as typed, for the rules to refuse).
 */
function bodyValue(field: LoanFormField, text: string): unknown {
  const rule = field.rule;
  const trimmed = text.trim();
  if (field.money) return plainAmount(trimmed) ?? trimmed;
  if (rule.kind === 'integer' && /^-?\d{1,15}$/.test(trimmed)) return Number(trimmed);
  if (rule.kind === 'boolean' && (trimmed === 'true' || trimmed === 'false')) return trimmed === 'true';
  return rule.kind === 'text' ? text : trimmed;
}

/** What an input says, to compare with what the form showed: an amount by its plain decimal (`1,250.00` is `1250.00`). */
function comparable(field: LoanFormField, text: string): string {
  const trimmed = text.trim();
  return field.money ? (plainAmount(trimmed) ?? trimmed) : trimmed;
}

/**
 * The `POST /api/loan` body of a create form: every non-empty input. `typed` holds the inputs
 * by name (read through a Map; other names of the form are ignored).
 */
export function createBody(fields: readonly LoanFormField[], typed: ReadonlyMap<string, string>): Record<string, unknown> {
  const body = new Map<string, unknown>();
  for (const field of fields) {
    const text = typed.get(field.name) ?? '';
    if (text.trim() !== '') body.set(field.name, bodyValue(field, text));
  }
  return Object.fromEntries(body);
}

/**
 * The `PATCH /api/loan/{id}` body of an edit form: only the inputs that differ from the loan as
 * the form showed it — an untouched computed Regular_Payment or Date_Maturity is not sent back as
 * a given value — with an emptied input as null (clears the field, or computes it again).
 */
export function updateBody(fields: readonly LoanFormField[], typed: ReadonlyMap<string, string>, current: ReadonlyMap<string, string>): Record<string, unknown> {
  const body = new Map<string, unknown>();
  for (const field of fields) {
    const text = typed.get(field.name);
    if (text === undefined) continue;
    const before = current.get(field.name) ?? '';
    if (comparable(field, text) === comparable(field, before)) continue;
    body.set(field.name, text.trim() === '' ? null : bodyValue(field, text));
  }
  return Object.fromEntries(body);
}
