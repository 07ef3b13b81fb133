import { UserInputError } from '../app/errors.js';

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
  for (const [name, value] of given) {
    if (!names.includes(name)) {
      unknown.push(name);
      problems.set(name, `unknown query parameter (${takes})`);
    } else if (typeof value !== 'string') {
      repeated.push(name);
      problems.set(name, `given ${Array.isArray(value) ? `${value.length} times` : 'more than once'}: give it once`);
    }
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
