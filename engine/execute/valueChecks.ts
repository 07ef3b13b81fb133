import { GraphQLError } from 'graphql';
import { tableKey, WHOLE_NUMBER_BOUNDS, type Catalogue } from '../../metadata/index.js';
import type { ValueCheck } from '../sql/compileMutation.js';
import type { ErrorCode } from '../errorCode.js';

/**
 * Checks the values a mutation writes before anything runs, so the error names the field:
 * text without NUL characters (PostgreSQL cannot store them), numerics within their column's
 * digits (PostgreSQL would round a longer fraction silently, or fail without naming the column),
 * and a value for a `smallint`, `integer` or `bigint` column (a field of a wider type: `integer`
 * on a smallint column, `numeric` on an integer one) a whole number within the column's bounds —
 * PostgreSQL would round `2.5` to 3, or fail with "smallint out of range" naming no column. An
 * `_inc` is left to the database: the sum may fit where the increment alone would not.
 */
export function checkWrittenValue(check: ValueCheck, value: unknown, catalogue: Catalogue | null): GraphQLError | null {
  const where = `${check.alias}: ${check.collection.name}.${check.field.name}`;
  const problem = (message: string) => new GraphQLError(`${where}: ${message}`, { path: [check.alias], extensions: { code: 'validation-failed' satisfies ErrorCode } });
  if (typeof value === 'string' && value.includes('\u0000')) return problem('text cannot contain NUL characters (\\u0000)');
  if ((check.field.type === 'jsonb' || check.field.type === 'json') && typeof value === 'string' && value.includes('\\u0000')) return problem('JSON text cannot contain NUL characters (\\u0000)');
  if (value === null || value === undefined) return null;
  const column = `${tableKey(check.collection)}.${check.field.source.column}`;
  const wholeType = check.increment ? undefined : catalogue?.wholeNumberColumns.get(column);
  if (wholeType && (typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint')) {
    const [least, most] = WHOLE_NUMBER_BOUNDS[wholeType];
    const whole = wholeNumberOf(String(value));
    if (whole === null || whole < least || whole > most) return problem(`a whole number from ${least} to ${most} (its column is ${wholeType})`);
  }
  if (check.field.type !== 'numeric') return null;
  const limits = catalogue?.numericLimits.get(column);
  if (!limits) return null;
  const digits = digitsOf(String(value));
  if (!digits) return problem('expected a number');
  if (digits.integer > limits.precision - limits.scale || digits.fraction > limits.scale)
    return problem(`at most ${limits.precision - limits.scale} digits before the decimal point and ${limits.scale} after it`);
  return null;
}

/** The whole number a numeric text is (`12`, `1.2e3`, `7.000`), or null for a fraction or no number; past 2^64, a bound's stand-in. */
function wholeNumberOf(text: string): bigint | null {
  const parts = shiftedDigits(text);
  if (!parts || parts.fraction.replace(/0+$/, '') !== '') return null;
  const digits = parts.integer.replace(/^0+/, '') || '0';
  if (digits.length > 20) return parts.negative ? -(2n ** 64n) : 2n ** 64n;
  return parts.negative ? -BigInt(digits) : BigInt(digits);
}

/** Significant digits before and after the decimal point of a numeric text (exponent applied). */
function digitsOf(text: string): { integer: number; fraction: number } | null {
  const parts = shiftedDigits(text);
  if (!parts) return null;
  return { integer: parts.integer.replace(/^0+/, '').length, fraction: parts.fraction.replace(/0+$/, '').length };
}

/** A numeric text's digits before and after its decimal point, its exponent applied (Infinity-long past ±1000). */
function shiftedDigits(text: string): { negative: boolean; integer: string; fraction: string } | null {
  const match = /^[+-]?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text.trim());
  if (!match || (!match[1] && !match[2])) return null;
  const exponent = Number(match[3] ?? 0);
  const negative = text.trim().startsWith('-');
  if (!Number.isSafeInteger(exponent) || Math.abs(exponent) > 1000) return { negative, integer: '9'.repeat(1001), fraction: '9'.repeat(1001) };
  let integer = match[1] ?? '';
  let fraction = match[2] ?? '';
  if (exponent > 0) {
    const moved = fraction.padEnd(exponent, '0');
    integer += moved.slice(0, exponent);
    fraction = moved.slice(exponent);
  } else if (exponent < 0) {
    const moved = integer.padStart(-exponent, '0');
    fraction = moved.slice(moved.length + exponent) + fraction;
    integer = moved.slice(0, moved.length + exponent);
  }
  return { negative, integer, fraction };
}
