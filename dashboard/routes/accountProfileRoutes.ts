import { Router } from 'express';
import type { Database } from '../../db/index.js';
import type { Logger } from '../../app/logger.js';
import { UserInputError } from '../../app/errors.js';
import { PROFILE_FIELDS, readAccountProfile, updateAccountProfile } from '../../app/accountProfile.js';
import { accountProfilePage } from '../pages/accountProfilePage.js';
import { PROFILE_PATH } from '../pages/settingsFrame.js';
import { formFields } from '../formFields.js';
import { sessionOf } from '../session.js';

const FIELD_NAMES: ReadonlySet<string> = new Set(PROFILE_FIELDS.map((field) => field.name));

/**
 * Settings > Lender profile (session 38): the account's letterhead, read and written by
 * `app/accountProfile.ts` — the rules and messages of `PATCH /api/account`. A save answers 303
 * (Post/Redirect/Get) to the page, which says what changed; a refusal is the form again (400),
 * nothing saved.
 */
export function accountProfileRoutes(db: Database, logger: Logger): Router {
  const router = Router();

  router.get('/profile', async (req, res) => {
    const session = sessionOf(res);
    const account = await readAccountProfile(db, session.admin.accountId);
    const values = new Map(PROFILE_FIELDS.map((field) => [field.name, account.profile[field.name] ?? '']));
    res.type('html').send(accountProfilePage(session.viewer, { accountName: account.name, values, problems: new Map(), ...savedNotice(req.query) }));
  });

  router.post('/profile', async (req, res) => {
    const session = sessionOf(res);
    const fields = formFields(req);
    // The form's inputs, by the profile's names (the CSRF token and anything else are not fields);
    // a field sent twice is handed on as its list, for the profile's rules to refuse by name.
    const sent = new Map<string, unknown>();
    for (const [name, value] of fields) if (FIELD_NAMES.has(name)) sent.set(name, value);
    try {
      const updated = await updateAccountProfile(db, session.admin.accountId, sent);
      if (updated.changed.length) {
        logger.info({ event: 'dashboard.account_profile.changed', changed: updated.changed, adminId: session.admin.adminId, accountId: session.admin.accountId }, 'account profile changed');
      }
      res.redirect(303, `${PROFILE_PATH}?saved=${encodeURIComponent(updated.changed.join(','))}`);
    } catch (error) {
      if (!(error instanceof UserInputError)) throw error;
      const account = await readAccountProfile(db, session.admin.accountId);
      const values = new Map(PROFILE_FIELDS.map((field) => [field.name, typeof sent.get(field.name) === 'string' ? (sent.get(field.name) as string) : '']));
      res.status(error.status).type('html').send(accountProfilePage(session.viewer, { accountName: account.name, values, problems: new Map(Object.entries(error.fields ?? {})), error: error.message }));
    }
  });
  return router;
}

/** What `?saved=<names>` says: only the profile's own field names are read from it. */
function savedNotice(query: Record<string, unknown>): { notice?: string } {
  const saved = query.saved;
  if (typeof saved !== 'string') return {};
  const labels = saved.split(',').flatMap((name) => PROFILE_FIELDS.filter((field) => field.name === name).map((field) => field.label.toLowerCase()));
  if (!labels.length) return { notice: 'Nothing to save: the profile already had these values.' };
  return { notice: `Saved ${labels.join(', ')}. Payoff letters and investor statements made from now on carry them.` };
}
