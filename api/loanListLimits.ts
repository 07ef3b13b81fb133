import { UserInputError } from '../app/errors.js';

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
/** `GET /api/distributions`: a line is small, and a client of the unpaged route got up to a page whole. */
const DEFAULT_LINES_PAGE = 1000;

function listLimits(maxRows: number | null, byDefault: number): LoanListLimits {
  const byMaxRows = maxRows !== null && maxRows < LARGEST_PAGE;
  const max = byMaxRows ? maxRows : LARGEST_PAGE;
  return { max, byDefault: Math.min(byDefault, max), byMaxRows };
}

/** The list's limits under the engine's `maxRows` (`MAX_ROWS`; null: not set). */
export function loanListLimits(maxRows: number | null): LoanListLimits {
  return listLimits(maxRows, DEFAULT_PAGE);
}

/** The `limit` of `GET /api/distributions`: 0–1000, 1000 when not given; under `MAX_ROWS` as the loan list. */
export function distributionListLimits(maxRows: number | null): LoanListLimits {
  return listLimits(maxRows, DEFAULT_LINES_PAGE);
}

/** PostgreSQL's integer (and GraphQL's Int): the largest limit or offset a statement takes. */
const INT32_MAX = 2_147_483_647;

/** A whole number from 0 to `max`; `why` names the setting that makes `max` (`MAX_ROWS`). */
function intParam(query: ReadonlyMap<string, unknown>, name: string, fallback: number, max: number, why?: string): number {
  const value = query.get(name);
  if (value === undefined) return fallback;
  const parsed = typeof value === 'string' && /^\d{1,10}$/.test(value) ? Number(value) : NaN;
  const range = `a whole number from 0 to ${max}${why ? ` (${why})` : ''}`;
  if (!(parsed <= max)) throw new UserInputError(`${name} must be ${range}`, 400, new Map([[name, `expected ${range}`]]));
  return parsed;
}

/** A list's page from its query string (`limit`, `offset`), or a 400 naming the parameter. */
export function pageOf(query: ReadonlyMap<string, unknown>, limits: LoanListLimits): { limit: number; offset: number } {
  return {
    limit: intParam(query, 'limit', limits.byDefault, limits.max, limits.byMaxRows ? 'MAX_ROWS' : undefined),
    offset: intParam(query, 'offset', 0, INT32_MAX),
  };
}
