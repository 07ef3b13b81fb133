import { UserInputError } from '../app/errors.js';

/** A query parameter the query parser made a list (or an object) of: its name and how many times it came. */
export interface RepeatedParameter {
  readonly name: string;
  /** The number of values, or null when the parser made something other than a list of them. */
  readonly times: number | null;
}

/**
 * Every parameter of a parsed query string (`express` with the `simple` parser: a parameter given
 * twice becomes a list) that is not one text, in the order given. Both HTTP layers refuse these
 * rather than read one of the values or none: the REST routes (`queryParameters` below) and every
 * dashboard page (`dashboard/queryCheck.ts`).
 */
export function repeatedParameters(query: Readonly<Record<string, unknown>>): readonly RepeatedParameter[] {
  const repeated: RepeatedParameter[] = [];
  for (const [name, value] of new Map(Object.entries(query))) {
    if (value !== undefined && typeof value !== 'string') repeated.push({ name, times: Array.isArray(value) ? value.length : null });
  }
  return repeated;
}

/**
 * The query string of a REST GET route, checked once for every route that reads one (the loan
 * list and ledger reads, distributions, statements, remittances): each parameter the route takes,
 * given once, as text. Everything else is one 400 naming each offending parameter, so a mistake is
 * never read as something else:
 *
 * - a parameter the route does not take (`loan=` for `loan_id=`): ignored, a misspelt filter
 *   would answer for the whole account;
 * - a parameter given twice (`loan_id=A&loan_id=B`): the query parser makes it a list, which the
 *   value's own check used to call "not a uuid" or "must be one of…" — true of neither value.
 *
 * The names are the client's, so they are looked up in a `Map` (README, "Input rules").
 */
export function queryParameters(query: Readonly<Record<string, unknown>>, names: readonly string[]): ReadonlyMap<string, string> {
  const given = new Map(Object.entries(query));
  const problems = new Map<string, string>();
  const unknown: string[] = [];
  const repeated: string[] = [];
  const takes = names.length ? names.join(', ') : 'none';
  for (const name of given.keys()) {
    if (!names.includes(name)) {
      unknown.push(name);
      problems.set(name, `unknown query parameter (${takes})`);
    }
  }
  for (const { name, times } of repeatedParameters(query)) {
    if (!names.includes(name)) continue;
    repeated.push(name);
    problems.set(name, `given ${times === null ? 'more than once' : `${times} times`}: give it once`);
  }
  if (problems.size) {
    const parts = [
      ...(unknown.length ? [`unknown query parameter${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`] : []),
      ...repeated.map((name) => `give ${name} once`),
    ];
    throw new UserInputError(parts.join('; '), 400, problems);
  }
  return given as Map<string, string>;
}
