import type { Queryable } from '../db/index.js';
import { AMORTIZATIONS, FREQUENCIES, MAX_TERM, type Amortization } from '../domain/schedule.js';
import { refuseNulCharacter, UserInputError } from './errors.js';
import { checkFieldValue, type ValueRule } from './fieldValues.js';
import { CUSTOM_FIELD_TYPES, type CustomFieldType } from './customFieldTypes.js';

/**
 * Products (SPEC §6): each account has one default product. Its fields decide what
 * `POST`/`PATCH /api/loan` accept: the built-in fields below, which map to loan columns and
 * exist on every product, and the product's custom fields (rows of `product_fields`), typed,
 * stored in the loan's `custom_fields` JSON under their key.
 */

export { CUSTOM_FIELD_TYPES, type CustomFieldType } from './customFieldTypes.js';

/** Every loan status; `overpaid` (and `closed` once paid off) are the ledger's to set (SPEC §12 R9). */
export const LOAN_STATUSES = ['lead', 'servicing', 'closed', 'overpaid'] as const;
export type LoanStatus = (typeof LOAN_STATUSES)[number];

/** The body key of a field: spaces become underscores, matched without regard to case (SPEC §6). */
export function fieldKey(name: string): string {
  return name.trim().replace(/\s+/g, '_').toLowerCase();
}

/** A field as a request body names it (`Foo Bar` → `Foo_Bar`). */
export function bodyName(name: string): string {
  return name.trim().replace(/\s+/g, '_');
}

export interface BuiltInField {
  /** The field's name, as the body sends it (`Regular_Payment`). */
  readonly name: string;
  readonly key: string;
  /** The loan column it is stored in. */
  readonly column: string;
  readonly rule: ValueRule;
  /** Whether null is accepted (clears the column). */
  readonly nullable: boolean;
  /** The value a new loan gets when the body does not give the field. */
  readonly defaultValue?: string;
}

/** What a new loan is when the body does not say (SPEC §6). */
export const DEFAULT_STATUS: LoanStatus = 'lead';
export const DEFAULT_AMORTIZATION: Amortization = 'amortizing';

const builtIn = (name: string, column: string, rule: ValueRule, nullable = true, defaultValue?: string): BuiltInField => ({
  name,
  key: fieldKey(name),
  column,
  rule,
  nullable,
  ...(defaultValue === undefined ? {} : { defaultValue }),
});

/** The built-in fields of every product, in the order SPEC §6 lists them. */
export const BUILT_IN_FIELDS: readonly BuiltInField[] = [
  builtIn('Name', 'name', { kind: 'text', maxLength: 500 }, false),
  builtIn('Amount', 'amount', { kind: 'decimal', min: 'positive', maxDecimals: 2, maxIntegerDigits: 12 }),
  builtIn('Status', 'status', { kind: 'enum', values: LOAN_STATUSES }, false, DEFAULT_STATUS),
  builtIn('Rate', 'rate', { kind: 'decimal', min: 'zero', maxDecimals: 4, maxIntegerDigits: 4 }),
  builtIn('Term', 'term', { kind: 'integer', min: 1, max: MAX_TERM }),
  builtIn('Frequency', 'frequency', { kind: 'enum', values: FREQUENCIES }),
  builtIn('Amortization', 'amortization', { kind: 'enum', values: AMORTIZATIONS }, false, DEFAULT_AMORTIZATION),
  builtIn('Regular_Payment', 'regular_payment', { kind: 'decimal', min: 'positive', maxDecimals: 2, maxIntegerDigits: 12 }),
  builtIn('Date_Funded', 'date_funded', { kind: 'date' }),
  builtIn('First_Payment_Date', 'first_payment_date', { kind: 'date' }),
  builtIn('Date_Maturity', 'date_maturity', { kind: 'date' }),
];

const BUILT_IN_KEYS = new Set(BUILT_IN_FIELDS.map((field) => field.key));
/** Prefixes of the contact parameters of `POST /api/loan`; no product field may start with them. */
export const CONTACT_PREFIXES = ['borrower_', 'guarantor_'] as const;

export interface CustomFieldDefinition {
  readonly name: string;
  readonly type: CustomFieldType;
  readonly options?: readonly string[];
  readonly required?: boolean;
  /** Applied on creation when the body does not give the field. */
  readonly defaultValue?: unknown;
}

export interface CustomField extends CustomFieldDefinition {
  readonly key: string;
  readonly rule: ValueRule;
  readonly position: number;
}

export interface Product {
  /** null when the account has no product yet: built-in fields only. */
  readonly id: string | null;
  readonly customFields: readonly CustomField[];
}

/** How a custom field's values are checked. */
export function ruleForCustomField(type: CustomFieldType, options?: readonly string[] | null): ValueRule {
  switch (type) {
    case 'text':
      return { kind: 'text', maxLength: 10_000 };
    case 'number':
      return { kind: 'decimal', min: null, maxDecimals: 10, maxIntegerDigits: 15 };
    case 'currency':
      return { kind: 'decimal', min: null, maxDecimals: 2, maxIntegerDigits: 13 };
    case 'percent':
      return { kind: 'decimal', min: null, maxDecimals: 6, maxIntegerDigits: 6 };
    case 'integer':
      return { kind: 'integer', min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER };
    case 'date':
      return { kind: 'date' };
    case 'boolean':
      return { kind: 'boolean' };
    case 'select':
      return { kind: 'enum', values: options ?? [] };
  }
}

/** The GraphQL metadata type a custom field is exposed with (metadata/loanql.yaml `custom_field:`). */
export function metadataTypeFor(type: CustomFieldType): string {
  switch (type) {
    case 'number':
    case 'currency':
    case 'percent':
      return 'numeric';
    case 'integer':
      return 'integer';
    case 'date':
      return 'date';
    case 'boolean':
      return 'boolean';
    case 'text':
    case 'select':
      return 'text';
  }
}

const FIELD_NAME = /^[A-Za-z][A-Za-z0-9 _-]{0,59}$/;
/**
 * Keys that name a member of `Object.prototype` (`constructor`, `tostring`, `valueof`, …),
 * lower-cased as keys are. Lookups of field names use `Map`s, so such a field would work; it
 * is refused anyway, so that no code or client that reads a loan's `custom_fields` into a
 * plain object can mistake an inherited member for it (issue #11).
 */
const PROTOTYPE_MEMBER_KEYS = new Set(Object.getOwnPropertyNames(Object.prototype).map((name) => name.toLowerCase()));

/** Checks a new custom field; returns it resolved or throws `UserInputError` naming the problem. */
export function checkCustomFieldDefinition(definition: CustomFieldDefinition): CustomField {
  const name = definition.name.trim().replace(/\s+/g, ' ');
  if (!FIELD_NAME.test(name)) {
    throw new UserInputError(`field name "${definition.name}" must start with a letter and use letters, digits, spaces, _ or - (at most 60 characters)`);
  }
  const key = fieldKey(name);
  if (BUILT_IN_KEYS.has(key)) throw new UserInputError(`"${name}" is a built-in field of every product (${BUILT_IN_FIELDS.map((f) => f.name).join(', ')})`, 409);
  if (CONTACT_PREFIXES.some((prefix) => key.startsWith(prefix))) throw new UserInputError(`a field name may not start with Borrower_ or Guarantor_ (those are contact parameters)`);
  if (PROTOTYPE_MEMBER_KEYS.has(key)) throw new UserInputError(`"${name}" is reserved: it names a member every JavaScript object has (${[...PROTOTYPE_MEMBER_KEYS].filter((k) => /^[a-z]/.test(k)).join(', ')}, matched without regard to case)`);
  if (!CUSTOM_FIELD_TYPES.includes(definition.type)) throw new UserInputError(`field type "${definition.type}" is not one of ${CUSTOM_FIELD_TYPES.join(', ')}`);
  let options: string[] | undefined;
  if (definition.type === 'select') {
    options = (definition.options ?? []).map((option) => option.trim());
    if (!options.length || options.some((option) => !option || option.length > 200)) throw new UserInputError('a select field needs options: a list of 1 to 200-character values');
    for (const option of options) refuseNulCharacter('--options', option);
    if (new Set(options).size !== options.length) throw new UserInputError('the options of a select field must differ from each other');
  } else if (definition.options?.length) {
    throw new UserInputError('options are only for select fields');
  }
  const rule = ruleForCustomField(definition.type, options);
  let defaultValue: unknown;
  if (definition.defaultValue !== undefined) {
    const checked = checkFieldValue(rule, definition.defaultValue);
    if (!checked.ok) throw new UserInputError(`default value ${JSON.stringify(definition.defaultValue)} is not valid for a field of type ${definition.type}: expected ${checked.expected}`);
    defaultValue = checked.value;
  }
  return {
    name,
    key,
    type: definition.type,
    ...(options ? { options } : {}),
    required: definition.required ?? false,
    ...(defaultValue !== undefined ? { defaultValue } : {}),
    rule,
    position: 0,
  };
}

/** The account's default product, creating an empty one when the account has none. */
export async function ensureDefaultProduct(db: Queryable, accountId: string): Promise<string> {
  await db.query(`INSERT INTO products (account_id, name, is_default) VALUES ($1, 'Default', true) ON CONFLICT (account_id) WHERE is_default DO NOTHING`, [accountId]);
  const { rows } = await db.query<{ id: string }>('SELECT id FROM products WHERE account_id = $1 AND is_default', [accountId]);
  return rows[0]!.id;
}

interface ProductFieldRow {
  product_id: string | null;
  name: string | null;
  key: string | null;
  type: CustomFieldType | null;
  options: string[] | null;
  required: boolean | null;
  default_value: unknown;
  position: number | null;
}

/** The account's default product with its custom fields, in position order. */
export async function loadDefaultProduct(db: Queryable, accountId: string): Promise<Product> {
  const { rows } = await db.query<ProductFieldRow>(
    `SELECT p.id AS product_id, f.name, f.key, f.type, f.options, f.required, f.default_value, f.position
       FROM products p LEFT JOIN product_fields f ON f.account_id = p.account_id AND f.product_id = p.id
      WHERE p.account_id = $1 AND p.is_default
      ORDER BY f.position, f.key`,
    [accountId],
  );
  const customFields: CustomField[] = [];
  for (const row of rows) {
    if (row.key === null || row.type === null || row.name === null) continue;
    customFields.push({
      name: row.name,
      key: row.key,
      type: row.type,
      ...(row.options ? { options: row.options } : {}),
      required: row.required ?? false,
      ...(row.default_value !== null && row.default_value !== undefined ? { defaultValue: row.default_value } : {}),
      rule: ruleForCustomField(row.type, row.options),
      position: row.position ?? 0,
    });
  }
  return { id: rows[0]?.product_id ?? null, customFields };
}

/** A field of the product as `loanql product field list` and `GET /api/product` show it. */
export interface ProductFieldListing {
  /** The name a request body uses (`Loan_Officer`). */
  readonly bodyKey: string;
  /** `select` for an enum built-in field. */
  readonly type: string;
  readonly required: boolean;
  /** The value a new loan gets when the body does not give the field, or null. */
  readonly defaultValue: unknown;
  /** A select field's options, or null. */
  readonly options: readonly string[] | null;
  /** Where it is stored: `loans.<column>` or `loans.custom_fields.<key>`. */
  readonly storedIn: string;
  readonly custom: boolean;
}

/** The product's fields, built-in first (SPEC §6's order), then custom ones in position order. */
export function productFieldListing(product: Product): ProductFieldListing[] {
  return [
    ...BUILT_IN_FIELDS.map((field) => ({
      bodyKey: field.name,
      type: field.rule.kind === 'enum' ? 'select' : field.rule.kind,
      // A loan needs a name on POST (issue 28, migration 0013), as the OpenAPI document says.
      required: field.name === 'Name',
      defaultValue: field.defaultValue ?? null,
      options: field.rule.kind === 'enum' ? field.rule.values : null,
      storedIn: `loans.${field.column}`,
      custom: false,
    })),
    ...product.customFields.map((field) => ({
      bodyKey: bodyName(field.name),
      type: field.type,
      required: field.required ?? false,
      defaultValue: field.defaultValue ?? null,
      options: field.options ?? null,
      storedIn: `loans.custom_fields.${field.key}`,
      custom: true,
    })),
  ];
}

/** Adds a custom field to the account's default product (created when missing). */
export async function addProductField(db: Queryable, accountId: string, definition: CustomFieldDefinition): Promise<CustomField> {
  const field = checkCustomFieldDefinition(definition);
  const productId = await ensureDefaultProduct(db, accountId);
  const { rows } = await db.query<{ position: number }>(
    `INSERT INTO product_fields (account_id, product_id, name, key, type, options, required, default_value, position)
     SELECT $1, $2, $3, $4, $5, $6::jsonb, $7, $8::jsonb, coalesce(max(position) + 1, 0)
       FROM product_fields WHERE account_id = $1 AND product_id = $2
     ON CONFLICT (account_id, product_id, key) DO NOTHING
     RETURNING position`,
    [
      accountId,
      productId,
      field.name,
      field.key,
      field.type,
      field.options ? JSON.stringify(field.options) : null,
      field.required ?? false,
      field.defaultValue !== undefined ? JSON.stringify(field.defaultValue) : null,
    ],
  );
  if (!rows[0]) throw new UserInputError(`the default product already has a field "${bodyName(field.name)}"`, 409);
  return { ...field, position: rows[0].position };
}

/**
 * Removes a custom field (named as created or as a body key) from the default product. Values
 * already stored in loans are kept — nothing is lost — but are no longer accepted in writes.
 */
export async function removeProductField(db: Queryable, accountId: string, name: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `DELETE FROM product_fields f USING products p
      WHERE p.account_id = $1 AND p.is_default AND f.account_id = p.account_id AND f.product_id = p.id AND f.key = $2`,
    [accountId, fieldKey(name)],
  );
  return rowCount > 0;
}

/**
 * The custom fields of the demo account's default product: every key the demo portfolio writes
 * (`app/seed/generate.ts`: `loan_officer`, `broker`) is one, so its data obeys the product and a
 * clerk can edit each value.
 */
export const DEMO_CUSTOM_FIELDS: readonly CustomFieldDefinition[] = [
  { name: 'Loan Officer', type: 'text' },
  { name: 'Property Type', type: 'select', options: ['residential', 'commercial', 'land', 'mixed_use'] },
  { name: 'LTV', type: 'percent' },
  { name: 'Origination Fee', type: 'currency' },
  { name: 'Broker', type: 'text' },
];

/** Creates the account's default product with these custom fields; returns its id. */
export async function createDefaultProduct(db: Queryable, accountId: string, fields: readonly CustomFieldDefinition[]): Promise<string> {
  const productId = await ensureDefaultProduct(db, accountId);
  for (const field of fields) await addProductField(db, accountId, field);
  return productId;
}
