import { inServicingYears, SERVICING_YEARS } from '../../domain/calendar.js';

/**
 * Why a computed field's `date` argument (`payoff(args: {as_of: …})`, `days_past_due`, …) is
 * refused, or null when it is a day the ledger is read as of: one of SERVICING_YEARS, as REST's
 * `?date=` takes (app/ledgerReads.ts). GraphQL's `date` takes 0001-01-01 and 9999-12-31, which no
 * payment or due date can reach; checked before the database, a literal when planned and a
 * variable when bound.
 */
export function servicingDayProblem(argument: string, day: unknown): string | null {
  if (typeof day !== 'string' || inServicingYears(day)) return null;
  return `${argument}: ${day} is not in the years ${SERVICING_YEARS.first}–${SERVICING_YEARS.last}, the days the ledger is read as of`;
}
