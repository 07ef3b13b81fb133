import { isCalendarDay } from '../domain/calendar.js';
import type { ScalarType } from './model.js';

/**
 * Whether a literal written in a role filter (or a preset) can be a value of a field's type, as
 * PostgreSQL will read it: a literal of the wrong type passed the metadata's checks and then
 * failed every request of the role with the database's words ("invalid input syntax for type
 * uuid"), which named neither the role nor the filter. Returns what is wrong, or null. Lenient
 * where PostgreSQL is (a number may be written as a string); json and jsonb take any value.
 */
export function literalProblem(type: ScalarType, value: unknown): string | null {
  const shown = JSON.stringify(value) ?? String(value);
  const ok = LITERAL_CHECKS[type](value);
  return ok ? null : `${shown} is not ${type === 'integer' ? 'an' : 'a'} ${type}`;
}

/**
 * Whether an API key's variable (text, as `key create --var` and the dashboard store it) can be
 * a value of the role's variable type, as PostgreSQL will read it: `must be an integer`, or null
 * when it can. Before, any text was taken (only a uuid was checked), and every request of the key
 * failed with the database's words (`invalid input syntax for type bigint: "twelve"`).
 */
export function keyVariableProblem(type: ScalarType, value: string): string | null {
  const article = type === 'integer' ? 'an' : 'a';
  if (type === 'boolean') return /^(t|true|f|false|yes|no|on|off|1|0)$/i.test(value.trim()) ? null : 'must be a boolean (true or false)';
  if (type === 'json' || type === 'jsonb') {
    try {
      JSON.parse(value);
      return null;
    } catch {
      return `must be ${type} (a JSON value)`;
    }
  }
  return literalProblem(type, value) === null ? null : `must be ${article} ${type}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const INTEGER_TEXT = /^[+-]?\d+$/;
const DECIMAL_TEXT = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const TIME = /^([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,6})?)?$/;


function wholeNumberWithin(value: unknown, bits: 16 | 32 | 64): boolean {
  const text = typeof value === 'number' ? (Number.isInteger(value) ? BigInt(value).toString() : null) : typeof value === 'string' && INTEGER_TEXT.test(value.trim()) ? value.trim() : null;
  if (text === null) return false;
  const limit = 2n ** BigInt(bits - 1);
  const n = BigInt(text);
  return n >= -limit && n < limit;
}

const decimal = (value: unknown): boolean => (typeof value === 'number' ? Number.isFinite(value) : typeof value === 'string' && DECIMAL_TEXT.test(value.trim()));
// YAML reads `code: {_eq: 123}` as a number; PostgreSQL takes it as the text 123.
const text = (value: unknown): boolean => typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
const timestamp = (value: unknown): boolean => typeof value === 'string' && isCalendarDay(value.slice(0, 10)) && !Number.isNaN(Date.parse(value.length === 10 ? `${value}T00:00:00Z` : value.replace(' ', 'T')));

const LITERAL_CHECKS: Record<ScalarType, (value: unknown) => boolean> = {
  uuid: (value) => typeof value === 'string' && UUID.test(value),
  text,
  citext: text,
  numeric: decimal,
  float8: decimal,
  real: decimal,
  integer: (value) => wholeNumberWithin(value, 32),
  smallint: (value) => wholeNumberWithin(value, 16),
  bigint: (value) => wholeNumberWithin(value, 64),
  boolean: (value) => typeof value === 'boolean',
  date: (value) => typeof value === 'string' && isCalendarDay(value),
  timestamptz: timestamp,
  timestamp,
  time: (value) => typeof value === 'string' && TIME.test(value),
  json: () => true,
  jsonb: () => true,
};
