import type { Request } from 'express';
import { UserInputError } from '../app/errors.js';

/**
 * Which format a report route answers in (issue 32): `?format=json|csv|pdf` when given (another
 * value is a 400 naming `format`), else the `Accept` header (JSON when it allows anything or is
 * absent); a header that allows none of the route's formats is a 406 — or, for a route that
 * had one format before it had more (`GET /api/loan/{id}/payoff`, JSON then a PDF letter),
 * `otherwise`, so a client's Accept that route always answered keeps its answer. `query` is the
 * route's checked query string (`http/queryParameters.ts`).
 */
export type DownloadFormat = 'json' | 'csv' | 'pdf';

const MEDIA_TYPES: ReadonlyMap<DownloadFormat, string> = new Map([
  ['json', 'application/json'],
  ['csv', 'text/csv'],
  ['pdf', 'application/pdf'],
]);

export function downloadFormat(req: Request, query: ReadonlyMap<string, string>, formats: readonly DownloadFormat[], otherwise?: DownloadFormat): DownloadFormat {
  const given = query.get('format');
  if (given !== undefined) {
    if (!(formats as readonly string[]).includes(given)) {
      throw new UserInputError(`format must be one of ${formats.join(', ')}`, 400, new Map([['format', `expected one of ${formats.join(', ')}`]]));
    }
    return given as DownloadFormat;
  }
  const chosen = req.accepts(formats.map((format) => MEDIA_TYPES.get(format)!));
  const format = formats.find((candidate) => MEDIA_TYPES.get(candidate) === chosen);
  if (!format && otherwise) return otherwise;
  if (!format) throw new NotAcceptable(formats.map((candidate) => MEDIA_TYPES.get(candidate)!));
  return format;
}

/** The Accept header allows none of a route's formats: answered 406 with the ones it has. */
export class NotAcceptable extends Error {
  constructor(readonly offered: readonly string[]) {
    super(`this route answers ${offered.join(', ')} (or ?format=)`);
  }
}
