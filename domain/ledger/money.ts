/**
 * Exact money for the servicing ledger (SPEC §12: "Money is exact … rounded half-up to cents
 * only where a rule says so"). Amounts are bigint cents inside the ledger and strings with
 * exactly two decimals at its edges; rates and percents are exact bigint fractions.
 */

/** A non-negative exact fraction num / den (den > 0). */
export interface Fraction {
  readonly num: bigint;
  readonly den: bigint;
}

/** Thrown for input the ledger refuses (a refund above the credit, a bad amount, …): a 400 for the caller. */
export class LedgerError extends Error {
  constructor(
    message: string,
    readonly field: string | null = null,
  ) {
    super(message);
    this.name = 'LedgerError';
  }
}

const MONEY = /^(-?)(\d+)(?:\.(\d{1,2}))?$/;
const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/** Cents of a money string or number with at most two decimals ("12", "12.5", "12.50"). */
export function toCents(value: string | number, field = 'amount'): bigint {
  const text = typeof value === 'number' ? String(value) : value.trim();
  const match = MONEY.exec(text);
  if (match === null) throw new LedgerError(`${field} must be an amount with at most two decimals, got ${JSON.stringify(value)}`, field);
  const cents = BigInt(match[2] as string) * 100n + BigInt((match[3] ?? '').padEnd(2, '0'));
  return match[1] === '-' ? -cents : cents;
}

/** Cents as a string with exactly two decimals ("-0.05", "1234.50"). */
export function fromCents(cents: bigint): string {
  const negative = cents < 0n;
  const digits = (negative ? -cents : cents).toString().padStart(3, '0');
  return `${negative ? '-' : ''}${digits.slice(0, -2)}.${digits.slice(-2)}`;
}

/** An exact non-negative decimal (a rate, a percent, a fraction) as num / 10^places. */
export function toFraction(value: string | number, field: string): Fraction {
  const text = typeof value === 'number' ? String(value) : value.trim();
  const match = DECIMAL.exec(text);
  if (match === null) throw new LedgerError(`${field} must be a non-negative decimal, got ${JSON.stringify(value)}`, field);
  const places = (match[2] ?? '').length;
  return { num: BigInt(`${match[1] as string}${match[2] ?? ''}`), den: 10n ** BigInt(places) };
}

/** round_half_up(num / den) for den > 0 and any sign of num (half away from zero). */
export function roundHalfUp(num: bigint, den: bigint): bigint {
  if (num < 0n) return -roundHalfUp(-num, den);
  return (2n * num + den) / (2n * den);
}

export function minBig(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}

export function maxBig(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}
