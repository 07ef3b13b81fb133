import type { Request } from 'express';
import { UserInputError } from '../app/errors.js';

/**
 * Which format a report route answers in (issue 32): `?format=json|csv|pdf` when given (another
 * value is a 400 naming `format`), else the `Accept` header (JSON when it allows anything or is
 * absent); a header that allows none of the route's formats is a 406.
 */
export type DownloadFormat = 'json' | 'csv' | 'pdf';

const MEDIA_TYPES: ReadonlyMap<DownloadFormat, string> = new Map([
  ['json', 'application/json'],
  ['csv', 'text/csv'],
  ['pdf', 'application/pdf'],
]);

export function downloadFormat(req: Request, formats: readonly DownloadFormat[]): DownloadFormat {
  const given = new Map(Object.entries(req.query)).get('format');
  if (given !== undefined) {
    if (typeof given !== 'string' || !(formats as readonly string[]).includes(given)) {
      throw new UserInputError(`format must be one of ${formats.join(', ')}`, 400, new Map([['format', `expected one of ${formats.join(', ')}`]]));
    }
    return given as DownloadFormat;
  }
  const chosen = req.accepts(formats.map((format) => MEDIA_TYPES.get(format)!));
  const format = formats.find((candidate) => MEDIA_TYPES.get(candidate) === chosen);
  if (!format) throw new NotAcceptable(formats.map((candidate) => MEDIA_TYPES.get(candidate)!));
  return format;
}

/** The Accept header allows none of a route's formats: answered 406 with the ones it has. */
export class NotAcceptable extends Error {
  constructor(readonly offered: readonly string[]) {
    super(`this route answers ${offered.join(', ')} (or ?format=)`);
  }
}

/** A query parameter given once as text, else undefined (given twice: a 400 naming it). */
export function singleQuery(req: Request, name: string): string | undefined {
  const value = new Map(Object.entries(req.query)).get(name);
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new UserInputError(`${name} must be given once`, 400, new Map([[name, 'give it once']]));
  return value;
}

/**
 * A 400 naming each query parameter a route does not take (every GET route of the REST API that
 * reads a query): a misspelt filter (`loan=` for `loan_id=`) ignored would answer for the whole account.
 */
export function onlyQuery(query: Readonly<Record<string, unknown>>, names: readonly string[]): void {
  const unknown = Object.keys(query).filter((name) => !names.includes(name));
  if (!unknown.length) return;
  const takes = names.length ? names.join(', ') : 'none';
  throw new UserInputError(
    `unknown query parameter${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`,
    400,
    new Map(unknown.map((name) => [name, `unknown query parameter (${takes})`])),
  );
}
