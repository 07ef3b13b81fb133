/**
 * Calendar dates for the ledger as day numbers (days since 1970-01-01, proleptic Gregorian),
 * no Date objects and no time zone: a business date is already a day in the account's zone
 * (SPEC §12).
 */
import type { Frequency } from '../schedule.js';
import { civilFromDays, daysFromCivil, daysInMonth } from '../calendar.js';
import { LedgerError } from './money.js';

const ISO = /^(\d{4})-(\d{2})-(\d{2})$/;

const fromCivil = daysFromCivil;
/** [year, month, day] of a day number. */
export const toCivil = civilFromDays;

/** Day number of a `YYYY-MM-DD` date; a LedgerError naming `field` otherwise. */
export function toDay(iso: string, field = 'date'): number {
  const match = typeof iso === 'string' ? ISO.exec(iso) : null;
  if (match === null) throw new LedgerError(`${field} must be a YYYY-MM-DD date, got ${JSON.stringify(iso)}`, field);
  const [y, m, d] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (m < 1 || m > 12 || d < 1 || d > daysInMonth(y, m)) throw new LedgerError(`${field} is not a calendar date: ${iso}`, field);
  return fromCivil(y, m, d);
}

/** `YYYY-MM-DD` of a day number. */
export function toIso(day: number): string {
  const [y, m, d] = toCivil(day);
  return `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

/** The day `months` months from `day`, on the same day of the month clamped to the month's end. */
export function addMonths(day: number, months: number): number {
  const [y, m, d] = toCivil(day);
  const total = y * 12 + (m - 1) + months;
  const ny = Math.floor(total / 12);
  const nm = total - ny * 12 + 1;
  return fromCivil(ny, nm, Math.min(d, daysInMonth(ny, nm)));
}

/**
 * One period before `day` for a frequency (SPEC §12 R2: row 1's period starts at Date_Funded,
 * else one period before the first due date). Semi-monthly steps back 15 days, the inverse of
 * §7's "Date_Funded + 15 days".
 */
export function periodBefore(day: number, frequency: Frequency): number {
  switch (frequency) {
    case 'monthly':
      return addMonths(day, -1);
    case 'quarterly':
      return addMonths(day, -3);
    case 'annually':
      return addMonths(day, -12);
    case 'weekly':
      return day - 7;
    case 'biweekly':
      return day - 14;
    case 'semi_monthly':
      return day - 15;
  }
}

/** 30E/360 day count (Eurobond basis): both day-of-month 31s become 30. */
export function days30E360(from: number, to: number): number {
  const [y1, m1, d1] = toCivil(from);
  const [y2, m2, d2] = toCivil(to);
  return 360 * (y2 - y1) + 30 * (m2 - m1) + (Math.min(d2, 30) - Math.min(d1, 30));
}
