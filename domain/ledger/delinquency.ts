/** SPEC §12 R3: days past due and the delinquency bucket. */
import { toCents } from './money.js';
import { type LedgerState, rowUnpaid } from './state.js';
import type { DelinquencyBucket } from './types.js';

/**
 * DPD(D) = D − the due date of the earliest row whose unpaid principal and interest is above
 * `arrears_tolerance`, when that is before D; else 0. Fees never make a loan past due.
 */
export function daysPastDue(state: LedgerState, day: number): number {
  const tolerance = toCents(state.loan.settings.arrearsTolerance, 'arrears_tolerance');
  const oldest = state.rows.find((r) => rowUnpaid(r) > tolerance);
  return oldest !== undefined && oldest.due < day ? day - oldest.due : 0;
}

/** The bucket whose range holds `dpd`. */
export function bucketOf(dpd: number, buckets: readonly DelinquencyBucket[]): string {
  const bucket = buckets.find((b) => dpd >= b.min && (b.max === null || dpd <= b.max));
  return bucket?.name ?? '';
}
