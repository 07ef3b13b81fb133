/**
 * Proleptic Gregorian calendar arithmetic on plain numbers, shared by the schedule (§7) and the
 * ledger (§12): no Date objects, no time zone. Day numbers count days since 1970-01-01
 * (H. Hinnant's days_from_civil / civil_from_days).
 */

export function isLeap(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

export function daysInMonth(y: number, m: number): number {
  return m === 2 ? (isLeap(y) ? 29 : 28) : m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31;
}

/** Whether `text` is `YYYY-MM-DD` naming a real day (2026-02-30 is not; `Date.parse` would take it as March 2). */
export function isCalendarDay(text: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match) return false;
  const [y, m, d] = [Number(match[1]), Number(match[2]), Number(match[3])];
  return m >= 1 && m <= 12 && d >= 1 && d <= daysInMonth(y, m);
}

/**
 * The years a servicing date falls in: a payment's and a manual fee's day (migration 0050), a
 * ledger read's as-of day (REST `?date=`), a loan's Date_Funded, First_Payment_Date and every due
 * date of its schedule (`app/loanWrites.ts`) — so a loan's rows can all be paid and quoted. A day
 * outside them is a slip of the year (0026 for 2026), never a loan.
 */
export const SERVICING_YEARS = { first: 1900, last: 2999 } as const;

/** Whether a `YYYY-MM-DD` day is in SERVICING_YEARS (compared as text: the years have four digits). */
export function inServicingYears(day: string): boolean {
  return day >= `${SERVICING_YEARS.first}-01-01` && day <= `${SERVICING_YEARS.last}-12-31`;
}

/** The day number of (y, m, d). */
export function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** [year, month, day] of a day number. */
export function civilFromDays(days: number): [number, number, number] {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return [yoe + era * 400 + (m <= 2 ? 1 : 0), m, d];
}
