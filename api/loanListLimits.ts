/**
 * The `limit` of `GET /api/loan` (docs/interface.md): 0–1000, 50 when not given. With `MAX_ROWS`
 * below that, the list honours it as GraphQL does: a larger `limit` is refused (GraphQL's
 * `validation-failed`, here a 400 naming `limit`), a list without one gets at most `MAX_ROWS`.
 */
export interface LoanListLimits {
  /** The largest `limit` accepted. */
  readonly max: number;
  /** The `limit` of a request without one. */
  readonly byDefault: number;
  /** Whether `MAX_ROWS` set `max` (the refusal names it). */
  readonly byMaxRows: boolean;
}

const LARGEST_PAGE = 1000;
const DEFAULT_PAGE = 50;

/** The list's limits under the engine's `maxRows` (`MAX_ROWS`; null: not set). */
export function loanListLimits(maxRows: number | null): LoanListLimits {
  const byMaxRows = maxRows !== null && maxRows < LARGEST_PAGE;
  const max = byMaxRows ? maxRows : LARGEST_PAGE;
  return { max, byDefault: Math.min(DEFAULT_PAGE, max), byMaxRows };
}
