/** SPEC §12 "Settings per product": defaults and validation. */
import { LedgerError, toCents, toFraction } from './money.js';
import type { DelinquencyBucket, ServicingSettings } from './types.js';

/** The defaults of §12 (in brackets there). */
export const DEFAULT_SETTINGS: ServicingSettings = Object.freeze({
  allocationOrder: 'interest_principal_then_fees',
  dayCount: 'actual/360',
  lateFeeGraceDays: 10,
  lateFeePercent: '5',
  lateFeeFixed: null,
  lateFeeMin: null,
  lateFeeMax: null,
  nsfFee: '0',
  arrearsTolerance: '0.00',
  delinquencyBuckets: Object.freeze([
    { name: 'current', min: 0, max: 0 },
    { name: '1-29', min: 1, max: 29 },
    { name: '30-59', min: 30, max: 59 },
    { name: '60-89', min: 60, max: 89 },
    { name: '90-119', min: 90, max: 119 },
    { name: '120+', min: 120, max: null },
  ] as DelinquencyBucket[]),
  investorFeeShare: '0',
});

/** The product's settings over the defaults, validated (a LedgerError naming the setting). */
export function resolveSettings(given: Partial<ServicingSettings> | null | undefined): ServicingSettings {
  const s: ServicingSettings = { ...DEFAULT_SETTINGS, ...Object.fromEntries(Object.entries(given ?? {}).filter(([, v]) => v !== undefined)) };
  if (s.allocationOrder !== 'interest_principal_then_fees' && s.allocationOrder !== 'fees_interest_principal') {
    throw new LedgerError(`allocation_order must be interest_principal_then_fees or fees_interest_principal`, 'allocation_order');
  }
  if (s.dayCount !== 'actual/360' && s.dayCount !== 'actual/365' && s.dayCount !== '30/360') {
    throw new LedgerError(`day_count must be actual/360, actual/365 or 30/360`, 'day_count');
  }
  if (!Number.isInteger(s.lateFeeGraceDays) || s.lateFeeGraceDays < 0) throw new LedgerError('late_fee_grace_days must be an integer ≥ 0', 'late_fee_grace_days');
  toFraction(s.lateFeePercent, 'late_fee_percent');
  for (const [key, field] of [
    ['lateFeeFixed', 'late_fee_fixed'],
    ['lateFeeMin', 'late_fee_min'],
    ['lateFeeMax', 'late_fee_max'],
  ] as const) {
    const value = s[key];
    if (value !== null && toCents(value, field) < 0n) throw new LedgerError(`${field} must not be negative`, field);
  }
  if (s.lateFeeMin !== null && s.lateFeeMax !== null && toCents(s.lateFeeMin) > toCents(s.lateFeeMax)) {
    throw new LedgerError('late_fee_min must not exceed late_fee_max', 'late_fee_min');
  }
  if (toCents(s.nsfFee, 'nsf_fee') < 0n) throw new LedgerError('nsf_fee must not be negative', 'nsf_fee');
  if (toCents(s.arrearsTolerance, 'arrears_tolerance') < 0n) throw new LedgerError('arrears_tolerance must not be negative', 'arrears_tolerance');
  const share = toFraction(s.investorFeeShare, 'investor_fee_share');
  if (share.num > share.den) throw new LedgerError('investor_fee_share must be a fraction from 0 to 1', 'investor_fee_share');
  let next = 0;
  for (const b of s.delinquencyBuckets) {
    if (b.min !== next || (b.max !== null && b.max < b.min)) {
      throw new LedgerError('delinquency_buckets must be contiguous ranges starting at 0', 'delinquency_buckets');
    }
    next = b.max === null ? Infinity : b.max + 1;
  }
  if (next !== Infinity) throw new LedgerError('the last delinquency bucket must be open-ended', 'delinquency_buckets');
  return s;
}
