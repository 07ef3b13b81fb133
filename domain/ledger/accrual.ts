/** SPEC §12 R2: accrued interest and per diem, for the three day counts. */
import { days30E360 } from './dates.js';
import { roundHalfUp } from './money.js';
import type { LedgerState, RowState } from './state.js';
import type { ServicingSettings } from './types.js';

export type DayCount = ServicingSettings['dayCount'];

/** Days of the period from `start` to `day` and the year basis, per day count (R2's t(s, D)). */
export function yearFraction(start: number, day: number, dayCount: DayCount): { days: number; basis: number } {
  if (dayCount === '30/360') return { days: days30E360(start, day), basis: 360 };
  return { days: day - start, basis: dayCount === 'actual/365' ? 365 : 360 };
}

/** The row k of R2 (first row due after `day`) and the start s of its period, or null after maturity. */
export function accrualPeriod(state: LedgerState, day: number): { row: RowState; start: number } | null {
  const index = state.nextRowIndex(day);
  if (index < 0) return null;
  const row = state.rows[index] as RowState;
  const start = index === 0 ? state.loan.firstPeriodStart : (state.rows[index - 1] as RowState).due;
  return { row, start };
}

/**
 * R2 accrued(D) = round(B × rate/100 × t(s, D)), at most row k's interest as it stands; 0 after
 * maturity (no default interest) and before the period starts.
 */
export function accruedInterest(state: LedgerState, day: number, dayCount: DayCount = state.loan.settings.dayCount): bigint {
  const period = accrualPeriod(state, day);
  if (period === null) return 0n;
  const { days, basis } = yearFraction(period.start, day, dayCount);
  if (days <= 0) return 0n;
  const { num, den } = state.loan.rate;
  const exact = roundHalfUp(period.row.before * num * BigInt(days), den * 100n * BigInt(basis));
  return exact < period.row.interest ? exact : period.row.interest;
}

/** R2 per_diem = round(B × rate/100 / 360 or 365) (30/360 uses 360); 0 after maturity. */
export function perDiem(state: LedgerState, day: number, dayCount: DayCount = state.loan.settings.dayCount): bigint {
  const period = accrualPeriod(state, day);
  if (period === null) return 0n;
  const basis = dayCount === 'actual/365' ? 365n : 360n;
  const { num, den } = state.loan.rate;
  return roundHalfUp(period.row.before * num, den * 100n * basis);
}
