import type { NextFunction, Request, Response } from 'express';
import { repeatedParameters } from '../http/queryParameters.js';
import { errorPage } from './pages/errorPage.js';

/**
 * Every dashboard page's query string, checked before the page reads it: a parameter given more
 * than once (`/dashboard/loans?status=late&status=servicing`, `?page=2&page=3`) is a 400 page
 * naming each such parameter, never read as missing nor as one of its values — the pages read
 * single values only, as the REST routes do (`http/queryParameters.ts`, "give X once"). Only GET
 * and HEAD: the writes read their form, not the address.
 */
export function refuseRepeatedQueryParameters(req: Request, res: Response, next: NextFunction): void {
  if (req.method !== 'GET' && req.method !== 'HEAD') return next();
  const repeated = repeatedParameters(req.query as Readonly<Record<string, unknown>>);
  if (!repeated.length) return next();
  const each = repeated.map(({ name, times }) => `“${name}” is given ${times === null ? 'more than once' : `${times} times`}`);
  const names = repeated.map(({ name }) => name).join(', ');
  res
    .status(400)
    .type('html')
    .send(
      errorPage(
        'This address repeats a parameter',
        `In this address the parameter ${each.join(', the parameter ')}: give ${names} once. The page was not shown, so that nothing is read as missing or as one of the values. Go back, or open the page from the menu.`,
        res.locals.dashboard?.viewer,
      ),
    );
}
