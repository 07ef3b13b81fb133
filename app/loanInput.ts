import { UserInputError } from './errors.js';
import { describeRule, normalizeValue, validatorFor, type ValueRule } from './fieldValues.js';
import { bodyName, BUILT_IN_FIELDS, CONTACT_PREFIXES, fieldKey, type BuiltInField, type CustomField, type Product } from './products.js';

/**
 * Turns a `POST`/`PATCH /api/loan` body into checked changes (SPEC §6): keys name product
 * fields (spaces as underscores, any case); values are checked with an ajv schema generated
 * from the product. Every offending key is reported at once, and nothing is written.
 */

export type ContactRole = 'borrower' | 'guarantor';

/** The contact parameters of one prefix, as the body gave them (absent and null are the same). */
export interface ContactParameters {
  readonly id?: string;
  readonly name?: string;
  readonly email?: string;
  readonly company?: string;
  readonly isCompany?: boolean;
}

/** What to attach, after the rules of interface §4.2 and SPEC §6. */
export type ContactRequest =
  | { readonly kind: 'id'; readonly id: string }
  | { readonly kind: 'company'; readonly name: string; readonly email: string | null }
  | { readonly kind: 'individual'; readonly name: string; readonly email: string | null; readonly company: string | null };

export interface LoanChanges {
  /** Loan columns to set (null clears). */
  readonly columns: ReadonlyMap<string, unknown>;
  /** Custom-field keys to set (null removes the key). */
  readonly customFields: ReadonlyMap<string, unknown>;
  readonly contacts: Readonly<Partial<Record<ContactRole, ContactRequest>>>;
}

/** The contact parameters (`Borrower_…`, `Guarantor_…`) by suffix, with their rules (OpenAPI's `LoanCreate` shows them). */
export const CONTACT_PARAMETERS: readonly { readonly suffix: string; readonly property: keyof ContactParameters; readonly rule: ValueRule }[] = [
  { suffix: 'Id', property: 'id', rule: { kind: 'text', maxLength: 100 } },
  { suffix: 'Name', property: 'name', rule: { kind: 'text', maxLength: 500 } },
  { suffix: 'Email', property: 'email', rule: { kind: 'text', maxLength: 320 } },
  { suffix: 'Company', property: 'company', rule: { kind: 'text', maxLength: 500 } },
  { suffix: 'Is_Company', property: 'isCompany', rule: { kind: 'boolean' } },
];
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
/**
 * `EMAIL` as a JSON Schema pattern for OpenAPI: the same rule, and the text rule's no-NUL; an empty
 * `_Email` counts as none (`contactRequest`), so it is accepted too.
 */
export const EMAIL_SCHEMA_PATTERN = '^$|^[^\\s@\\u0000]+@[^\\s@\\u0000]+\\.[^\\s@\\u0000]+$';

/**
 * A loan is found by its name in every list and page (issue 28), so it needs one that is not
 * blank: required when creating, and never cleared or blanked by an update. The database holds
 * the same rule for every other writer (migration 0013, `loans_name_not_blank`).
 */
const NAME_KEY = fieldKey('Name');
const NAME_REQUIRED = 'is required: a loan needs a name that is not blank';

function isBlankName(value: unknown): boolean {
  return value === null || (typeof value === 'string' && value.trim() === '');
}

type Known =
  | { readonly kind: 'builtIn'; readonly field: BuiltInField }
  | { readonly kind: 'custom'; readonly field: CustomField }
  | { readonly kind: 'contact'; readonly role: ContactRole; readonly property: keyof ContactParameters; readonly name: string; readonly rule: ValueRule };

const knownByProduct = new Map<string, ReadonlyMap<string, Known>>();

/** The body fields a product accepts, keyed by lower-case key, with their rules. */
function knownFields(product: Product): ReadonlyMap<string, Known> {
  const signature = JSON.stringify(product.customFields);
  const cached = knownByProduct.get(signature);
  if (cached) return cached;
  const known = new Map<string, Known>();
  for (const field of BUILT_IN_FIELDS) known.set(field.key, { kind: 'builtIn', field });
  for (const field of product.customFields) known.set(field.key, { kind: 'custom', field });
  for (const prefix of CONTACT_PREFIXES) {
    const role: ContactRole = prefix === 'borrower_' ? 'borrower' : 'guarantor';
    for (const parameter of CONTACT_PARAMETERS) {
      const name = `${role === 'borrower' ? 'Borrower' : 'Guarantor'}_${parameter.suffix}`;
      known.set(fieldKey(name), { kind: 'contact', role, property: parameter.property, name, rule: parameter.rule });
    }
  }
  if (knownByProduct.size > 500) knownByProduct.clear();
  knownByProduct.set(signature, known);
  return known;
}

function ruleOf(entry: Known): ValueRule {
  return entry.kind === 'contact' ? entry.rule : entry.field.rule;
}

/** The database's sentence for `overpaid` set by hand (`loans_overpaid_by_ledger`, migration 0012). */
const OVERPAID_BY_LEDGER = 'overpaid is set by the ledger (when a loan is paid off with money to spare), not by hand';

/** A problem with the body as a whole (not an object). */
function notAnObject(): UserInputError {
  return new UserInputError('the request body must be a JSON object whose keys name loan fields', 400, {});
}

/**
 * Checks a body against the product. `create` applies required fields and defaults and allows
 * contact parameters; `update` refuses contact parameters (interface §4.3) and required
 * custom fields may not be cleared.
 *
 * Every name the body sends is looked up in `Map`s, never in plain objects: a key such as
 * `__proto__`, `constructor` or `toString` is an ordinary name here — unknown unless the
 * product has a field of that key. (`JSON.parse` makes `__proto__` an own property, so
 * `Object.entries` sees it.)
 */
export function parseLoanBody(product: Product, body: unknown, mode: 'create' | 'update'): LoanChanges {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw notAnObject();
  const known = knownFields(product);
  /** Offending keys as sent → what is wrong, in the order found. */
  const problems = new Map<string, string>();
  const sentName = new Map<string, string>();
  const checked = new Map<string, unknown>();

  for (const [sent, value] of Object.entries(body as Record<string, unknown>)) {
    const key = fieldKey(sent);
    const entry = known.get(key);
    if (!entry) {
      problems.set(sent, 'unknown field: not a field of the default product');
      continue;
    }
    if (sentName.has(key)) {
      problems.set(sent, `given twice (also as ${sentName.get(key)}; keys are matched without regard to case)`);
      continue;
    }
    if (mode === 'update' && entry.kind === 'contact') {
      problems.set(sent, 'contacts cannot be attached or changed through PATCH; Borrower_ and Guarantor_ parameters apply only when creating a loan');
      continue;
    }
    sentName.set(key, sent);
    if (key === NAME_KEY && isBlankName(value)) {
      problems.set(sent, NAME_REQUIRED);
      continue;
    }
    if (value !== null && !validatorFor(ruleOf(entry))(value)) {
      problems.set(sent, `expected ${describeRule(ruleOf(entry))}, got ${summarize(value)}`);
      continue;
    }
    checked.set(key, value);
  }

  const columns = new Map<string, unknown>();
  const customFields = new Map<string, unknown>();
  const contactParameters = new Map<ContactRole, Map<keyof ContactParameters, unknown>>();
  for (const [key, value] of checked) {
    const entry = known.get(key)!;
    const sent = sentName.get(key)!;
    if (entry.kind === 'builtIn') {
      if (value === null && !entry.field.nullable) problems.set(sent, `may not be null; expected ${describeRule(entry.field.rule)}`);
      // A new loan is never overpaid: the ledger sets that (R9), and the database refuses it
      // (migration 0012) — named here with the body's other problems, not after them.
      else if (mode === 'create' && entry.field.column === 'status' && value === 'overpaid') problems.set(sent, OVERPAID_BY_LEDGER);
      else columns.set(entry.field.column, value === null ? null : normalizeValue(entry.field.rule, value));
    } else if (entry.kind === 'custom') {
      if (value === null && entry.field.required) problems.set(sent, 'is a required field of the product and may not be null');
      else customFields.set(entry.field.key, value === null ? null : normalizeValue(entry.field.rule, value));
    } else if (value !== null) {
      let parameters = contactParameters.get(entry.role);
      if (!parameters) contactParameters.set(entry.role, (parameters = new Map()));
      parameters.set(entry.property, normalizeValue(entry.rule, value));
    }
  }

  if (mode === 'create') {
    if (!sentName.has(NAME_KEY)) problems.set('Name', `${NAME_REQUIRED}, and was not given`);
    for (const field of product.customFields) {
      if (customFields.has(field.key) || sentName.has(field.key)) continue;
      if (field.defaultValue !== undefined) customFields.set(field.key, field.defaultValue);
      else if (field.required) problems.set(bodyName(field.name), 'is a required field of the product and was not given');
    }
  }

  const contacts: Partial<Record<ContactRole, ContactRequest>> = {};
  for (const [role, parameters] of contactParameters) {
    const request = contactRequest(role, contactParametersOf(parameters), problems);
    if (request) contacts[role] = request;
  }

  if (problems.size) {
    const names = [...problems.keys()];
    throw new UserInputError(`invalid field${names.length > 1 ? 's' : ''}: ${names.join(', ')}`, 400, problems);
  }
  return { columns, customFields, contacts };
}

/**
 * The `Status` a body gives — the key as sent and its value — when it is one key and a status
 * (`parseLoanBody` finds nothing wrong with it by itself); undefined otherwise. `updateLoan` asks
 * the ledger about it when the body is refused for other fields, to name every bad field at once.
 */
export function sentStatus(body: unknown): { readonly sent: string; readonly value: string } | undefined {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const status = BUILT_IN_FIELDS.find((field) => field.column === 'status')!;
  const given = Object.entries(body as Record<string, unknown>).filter(([sent]) => fieldKey(sent) === status.key);
  if (given.length !== 1) return undefined;
  const [sent, value] = given[0]!;
  return typeof value === 'string' && validatorFor(status.rule)(value) ? { sent, value } : undefined;
}

function contactParametersOf(parameters: ReadonlyMap<keyof ContactParameters, unknown>): ContactParameters {
  const text = (property: keyof ContactParameters) => parameters.get(property) as string | undefined;
  return {
    ...(parameters.has('id') ? { id: text('id') } : {}),
    ...(parameters.has('name') ? { name: text('name') } : {}),
    ...(parameters.has('email') ? { email: text('email') } : {}),
    ...(parameters.has('company') ? { company: text('company') } : {}),
    ...(parameters.has('isCompany') ? { isCompany: parameters.get('isCompany') as boolean } : {}),
  };
}

/** The rules of interface §4.2 / SPEC §6 for one prefix; problems are added under the sent names. */
function contactRequest(role: ContactRole, parameters: ContactParameters, problems: Map<string, string>): ContactRequest | null {
  const prefix = role === 'borrower' ? 'Borrower' : 'Guarantor';
  // `_Id` wins over the other parameters of its prefix.
  if (parameters.id !== undefined) return { kind: 'id', id: parameters.id };
  const name = parameters.name || null;
  const email = parameters.email || null;
  const company = parameters.company || null;
  if (email !== null && !EMAIL.test(email)) {
    problems.set(`${prefix}_Email`, `expected an e-mail address, got ${JSON.stringify(email)}`);
    return null;
  }
  if (parameters.isCompany === true) {
    if (company !== null) {
      problems.set(`${prefix}_Company`, `cannot be combined with ${prefix}_Is_Company: true (then ${prefix}_Name is the company's name)`);
      return null;
    }
    if (name === null) {
      problems.set(`${prefix}_Name`, `is needed with ${prefix}_Is_Company: true (the company's name)`);
      return null;
    }
    return { kind: 'company', name, email };
  }
  if (name === null) {
    if (email !== null || company !== null) problems.set(`${prefix}_Name`, `is needed with ${email !== null ? `${prefix}_Email` : `${prefix}_Company`} (the individual's name)`);
    return null;
  }
  return { kind: 'individual', name, email, company };
}

/** A short description of a refused value; lists and objects only by kind (they may nest deeper than JSON.stringify can go). */
function summarize(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object' && value !== null) return 'an object';
  const text = JSON.stringify(value);
  return text === undefined ? String(value) : text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
