import { GraphQLError } from 'graphql';
import { tableKey, type Catalogue } from '../../metadata/index.js';
import type { ValueCheck } from '../sql/compileMutation.js';
import type { ErrorCode } from '../errorCode.js';

/**
 * Checks the values a mutation writes before anything runs, so the error names the field:
 * text without NUL characters (PostgreSQL cannot store them), numerics within their column's
 * digits (PostgreSQL would round a longer fraction silently, or fail without naming the column).
 */
export function checkWrittenValue(check: ValueCheck, value: unknown, catalogue: Catalogue | null): GraphQLError | null {
  const where = `${check.alias}: ${check.collection.name}.${check.field.name}`;
  const problem = (message: string) => new GraphQLError(`${where}: ${message}`, { path: [check.alias], extensions: { code: 'validation-failed' satisfies ErrorCode } });
  if (typeof value === 'string' && value.includes('\u0000')) return problem('text cannot contain NUL characters (\\u0000)');
  if ((check.field.type === 'jsonb' || check.field.type === 'json') && typeof value === 'string' && value.includes('\\u0000')) return problem('JSON text cannot contain NUL characters (\\u0000)');
  if (check.field.type !== 'numeric' || value === null || value === undefined) return null;
  const limits = catalogue?.numericLimits.get(`${tableKey(check.collection)}.${check.field.source.column}`);
  if (!limits) return null;
  const digits = digitsOf(String(value));
  if (!digits) return problem('expected a number');
  if (digits.integer > limits.precision - limits.scale || digits.fraction > limits.scale)
    return problem(`at most ${limits.precision - limits.scale} digits before the decimal point and ${limits.scale} after it`);
  return null;
}

/** Significant digits before and after the decimal point of a numeric text (exponent applied). */
function digitsOf(text: string): { integer: number; fraction: number } | null {
  const match = /^[+-]?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text.trim());
  if (!match || (!match[1] && !match[2])) return null;
  const exponent = Number(match[3] ?? 0);
  if (!Number.isSafeInteger(exponent) || Math.abs(exponent) > 1000) return { integer: Infinity, fraction: Infinity };
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
  return { integer: integer.replace(/^0+/, '').length, fraction: fraction.replace(/0+$/, '').length };
}
