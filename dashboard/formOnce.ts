import type { Request, Response } from 'express';
import { randomBytes } from 'node:crypto';
import { databaseInTransaction, type Database } from '../db/index.js';
import { requestHash, runIdempotently } from '../app/idempotency.js';
import { html, type Html } from './html.js';
import { formFields } from './formFields.js';
import { errorPage } from './pages/errorPage.js';
import { CSRF_FIELD, sessionOf } from './session.js';

/**
 * One-time form tokens for the forms whose second POST would write a second record (a payment, a
 * payoff, a task, a comment, a loan; the remittance mark, refused the second time): README, "Double submits". Each rendering of such a form
 * carries a fresh random token in `_once`; the write claims it in its own transaction, as an
 * `Idempotency-Key` of the API is claimed (`app/idempotency.ts`, the same table, scoped to the
 * admin), so a second POST of the same form — a double click that got past the page's script, a
 * resend after a lost answer — writes nothing and is answered with the first one's outcome (the
 * same 303). A concurrent second POST waits on the claimed token until the first commits.
 */
export const ONCE_FIELD = '_once';
const ONCE_TOKEN = /^[A-Za-z0-9_-]{22,64}$/;

/** The hidden field of a form that is written once: a new token at every rendering. */
export function onceField(): Html {
  return html`<input type="hidden" name="${ONCE_FIELD}" value="${randomBytes(18).toString('base64url')}">`;
}

/** What a guarded write did: it wrote and redirects there, or it declined (wrote nothing) and answers itself afterwards. */
export type OnceWork<T> = { readonly redirect: string } | { readonly declined: T };

/**
 * Runs `work` (given the database to write through: the token's transaction) at most once per
 * form token. Answers `{ redirect }` for the first submission and for every replay of it (the
 * first's location), `{ declined }` when the work wrote nothing (its token is released, so a
 * corrected form can be sent again), or null once it has answered itself: a 409 page when the
 * token was already used with other values (a form sent, changed and sent again from the same
 * page), a 400 page for a malformed token. A form without the field (an older page, a script)
 * is written without the guard. A declined work must write nothing: its transaction commits.
 */
export async function submitOnce<T>(db: Database, req: Request, res: Response, work: (db: Database) => Promise<OnceWork<T>>): Promise<OnceWork<T> | null> {
  const fields = formFields(req);
  const token = fields.get(ONCE_FIELD);
  if (token === undefined) return work(db);
  const { admin, viewer } = sessionOf(res);
  if (typeof token !== 'string' || !ONCE_TOKEN.test(token)) {
    res.status(400).type('html').send(errorPage('The form could not be accepted', 'Its one-time token is not one this dashboard makes. Go back, reload the page and try again.', viewer));
    return null;
  }
  // What makes two submissions "the same form sent again": the address, the admin and every value but the CSRF token.
  const sent = Object.fromEntries([...fields].filter(([name]) => name !== CSRF_FIELD));
  let declined: { readonly declined: T } | undefined;
  const outcome = await runIdempotently(db, { accountId: admin.accountId, scope: `dashboard-form:${admin.adminId}` }, token, requestHash(`POST ${req.originalUrl}`, sent), async (tx) => {
    const done = await work(databaseInTransaction(db, tx));
    if ('declined' in done) {
      declined = done;
      return null;
    }
    return { status: 303, body: done.redirect };
  });
  if (outcome.kind === 'declined') {
    if (!declined) throw new Error('a form write declined without its answer');
    return declined;
  }
  if (outcome.kind === 'mismatch') {
    res
      .status(409)
      .type('html')
      .send(errorPage('This form was already submitted', 'This form was sent before with other values, and that first submission was recorded: nothing was written this time. Reload the page to see it; to send other values, use the form on the reloaded page.', viewer));
    return null;
  }
  return { redirect: outcome.body };
}
