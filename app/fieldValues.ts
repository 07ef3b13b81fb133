import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Decimal } from 'decimal.js';
import { LosslessNumber } from 'lossless-json';

/**
 * Typed field values (SPEC §6): each loan field has a rule; rules become JSON Schema, checked
 * with ajv. Decimals are accepted as JSON numbers or decimal strings and kept as exact text, so
 * `"100000.10"` stays `100000.10` all the way to PostgreSQL.
 */
export type ValueRule =
  | { readonly kind: 'text'; readonly maxLength: number }
  | {
      readonly kind: 'decimal';
      /** `positive`: > 0; `zero`: >= 0; null: any sign. */
      readonly min: 'positive' | 'zero' | null;
      readonly maxDecimals: number;
      readonly maxIntegerDigits: number;
    }
  | { readonly kind: 'integer'; readonly min: number; readonly max: number }
  | { readonly kind: 'enum'; readonly values: readonly string[] }
  | { readonly kind: 'date' }
  | { readonly kind: 'boolean' };

type DecimalRule = Extract<ValueRule, { kind: 'decimal' }>;

const DECIMAL_TEXT = /^-?\d+(\.\d+)?$/;
/** A JSON Schema pattern: no U+0000 anywhere in the string. */
const NO_NUL_PATTERN = '^[^\\u0000]*$';
const DATE_TEXT = /^(\d{4})-(\d{2})-(\d{2})$/;

function decimalProblem(rule: DecimalRule, value: unknown): boolean {
  let text: string;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return true;
    text = new Decimal(value).toFixed();
  } else if (typeof value === 'string' && DECIMAL_TEXT.test(value.trim())) {
    text = value.trim();
  } else {
    return true;
  }
  const decimal = new Decimal(text);
  if (decimal.decimalPlaces() > rule.maxDecimals) return true;
  if (decimal.abs().trunc().toFixed().replace(/^0$/, '').length > rule.maxIntegerDigits) return true;
  if (rule.min === 'positive' && !decimal.gt(0)) return true;
  if (rule.min === 'zero' && decimal.isNegative() && !decimal.isZero()) return true;
  return false;
}

function isRealDate(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const match = DATE_TEXT.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  date.setUTCFullYear(year);
  return year >= 1 && date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** One ajv instance for every field schema, with the two keywords JSON Schema lacks. */
export const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
ajv.addKeyword({
  keyword: 'x-decimal',
  schemaType: 'object',
  errors: false,
  validate: (rule: DecimalRule, value: unknown) => !decimalProblem(rule, value),
});
ajv.addKeyword({ keyword: 'x-real-date', schemaType: 'boolean', errors: false, validate: (_: boolean, value: unknown) => isRealDate(value) });

/** The JSON Schema of a rule (the OpenAPI document shows the same schema without `x-` checks). */
export function schemaForRule(rule: ValueRule): Record<string, unknown> {
  switch (rule.kind) {
    case 'text':
      // PostgreSQL's text cannot hold U+0000 (NUL): such a string is refused here, not by the database.
      return { type: 'string', maxLength: rule.maxLength, pattern: NO_NUL_PATTERN };
    case 'decimal':
      return { type: ['number', 'string'], 'x-decimal': rule };
    case 'integer':
      return { type: 'integer', minimum: rule.min, maximum: rule.max };
    case 'enum':
      return { type: 'string', enum: [...rule.values] };
    case 'date':
      return { type: 'string', pattern: DATE_TEXT.source, 'x-real-date': true };
    case 'boolean':
      return { type: 'boolean' };
  }
}

/** What a rule expects, in words, for error messages. */
export function describeRule(rule: ValueRule): string {
  switch (rule.kind) {
    case 'text':
      return `a string of at most ${rule.maxLength} characters, without NUL (\\u0000)`;
    case 'decimal': {
      const sign = rule.min === 'positive' ? 'greater than 0' : rule.min === 'zero' ? '0 or more' : null;
      return [
        'a number (or a decimal string)',
        sign,
        `with at most ${rule.maxDecimals} decimal places`,
        `and at most ${rule.maxIntegerDigits} digits before the point`,
      ]
        .filter(Boolean)
        .join(', ');
    }
    case 'integer':
      return rule.min === Number.MIN_SAFE_INTEGER ? 'a whole number' : `a whole number from ${rule.min} to ${rule.max}`;
    case 'enum':
      return `one of ${rule.values.map((value) => JSON.stringify(value)).join(', ')}`;
    case 'date':
      return 'a calendar date written YYYY-MM-DD';
    case 'boolean':
      return 'true or false';
  }
}

/**
 * A checked value in the form it is stored: decimals as exact text (columns) or a
 * `LosslessNumber` (custom-fields JSON), everything else as given.
 */
export function normalizeValue(rule: ValueRule, value: unknown): unknown {
  if (rule.kind === 'decimal') return typeof value === 'number' ? new Decimal(value).toFixed() : String(value).trim();
  if (rule.kind === 'text' && typeof value === 'string') return value.trim();
  return value;
}

/** The value as it goes into JSON text (custom fields): decimals keep their exact digits. */
export function jsonValue(rule: ValueRule, normalized: unknown): unknown {
  return rule.kind === 'decimal' ? new LosslessNumber(String(normalized)) : normalized;
}

const single = new Map<string, ValidateFunction>();

/** The ajv validator of one rule's values, compiled once per distinct rule. */
export function validatorFor(rule: ValueRule): ValidateFunction {
  const key = JSON.stringify(rule);
  let validate = single.get(key);
  if (!validate) {
    validate = ajv.compile(schemaForRule(rule));
    if (single.size > 1000) single.clear();
    single.set(key, validate);
  }
  return validate;
}

/** Checks one value against a rule (request bodies, product default values). */
export function checkFieldValue(rule: ValueRule, value: unknown): { ok: true; value: unknown } | { ok: false; expected: string } {
  if (!validatorFor(rule)(value)) return { ok: false, expected: describeRule(rule) };
  return { ok: true, value: normalizeValue(rule, value) };
}

/** The top-level property each ajv error is about (`/Amount` → `Amount`). */
export function propertyOf(error: ErrorObject): string | null {
  if (error.keyword === 'additionalProperties') return String((error.params as { additionalProperty: string }).additionalProperty);
  const match = /^\/([^/]+)/.exec(error.instancePath);
  return match ? match[1]!.replace(/~1/g, '/').replace(/~0/g, '~') : null;
}
