import type { NextFunction, Request, Response } from 'express';
import { hasNulCharacter } from '../app/errors.js';
import { errorPage } from './pages/errorPage.js';

/**
 * The fields of a parsed form (`express.urlencoded`), read through a `Map`: field names are the
 * client's, so a name such as `__proto__` or `constructor` is just an unknown field here. A
 * field sent twice has a list of values; the routes read only single values.
 */
export function formFields(req: Request): ReadonlyMap<string, unknown> {
  const body: unknown = req.body;
  return body !== null && typeof body === 'object' ? new Map(Object.entries(body)) : new Map();
}

/** A single text value of a form field, or `fallback` when absent or sent several times. */
export function formText(req: Request, name: string, fallback = ''): string {
  const value = formFields(req).get(name);
  return typeof value === 'string' ? value : fallback;
}

/** The first field whose name or value holds a NUL character (U+0000), which no text column can hold. */
export function fieldWithNul(req: Request): string | null {
  for (const [name, value] of formFields(req)) {
    const values = Array.isArray(value) ? value : [value];
    if (hasNulCharacter(name) || values.some((item) => typeof item === 'string' && hasNulCharacter(item))) return name.replace(/\u0000/g, '\\u0000');
  }
  return null;
}

/** Refuses a form carrying a NUL character with a 400 page naming the field, before any use case runs. */
export function refuseNulInForm(req: Request, res: Response, next: NextFunction): void {
  const field = fieldWithNul(req);
  if (field === null) return next();
  res
    .status(400)
    .type('html')
    .send(errorPage('The form could not be accepted', `The field “${field}” contains a NUL character (\\u0000), which cannot be stored. Go back, remove it and try again.`, res.locals.dashboard?.viewer));
}
