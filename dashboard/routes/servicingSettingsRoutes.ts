import { Router } from 'express';
import type { Database } from '../../db/index.js';
import type { Logger } from '../../app/logger.js';
import { UserInputError } from '../../app/errors.js';
import { PRODUCT_SETTINGS, productSetting, readProductSettings, updateProductSettings } from '../../app/productSettings.js';
import { inputText, servicingSettingsPage } from '../pages/servicingSettingsPage.js';
import { SERVICING_PATH } from '../pages/settingsFrame.js';
import { formFields } from '../formFields.js';
import { plainAmount } from '../moneyInput.js';
import { sessionOf } from '../session.js';

/**
 * Settings > Servicing (issue 29): the default product's servicing settings, read and written by
 * `app/productSettings.ts` — the rules and messages of `PATCH /api/product`. A save answers 303
 * (Post/Redirect/Get) to the page, which says what changed; a refusal is the form again (400).
 */
export function servicingSettingsRoutes(db: Database, logger: Logger): Router {
  const router = Router();

  router.get('/servicing', async (req, res) => {
    const session = sessionOf(res);
    const { settings } = await readProductSettings(db, session.admin.accountId);
    const values = new Map(PRODUCT_SETTINGS.map((setting) => [setting.name, inputText(setting, settings.get(setting.name)!)]));
    res.type('html').send(servicingSettingsPage(session.viewer, { values, problems: new Map(), ...savedNotice(req.query) }));
  });

  router.post('/servicing', async (req, res) => {
    const session = sessionOf(res);
    const fields = formFields(req);
    // The form's inputs, by the settings' names (anything else the form carries is not a setting);
    // amounts of money as their plain decimals (`1,250.00` → `1250.00`; what is not plainly an
    // amount is handed on as typed, for the settings' rules to refuse).
    const typed = new Map<string, string>();
    const sent = new Map<string, string>();
    for (const setting of PRODUCT_SETTINGS) {
      const value = fields.get(setting.name);
      if (typeof value !== 'string') continue;
      typed.set(setting.name, value);
      const money = setting.kind.kind === 'decimal' && setting.kind.unit === 'money';
      sent.set(setting.name, money ? (plainAmount(value) ?? value) : value);
    }
    try {
      const updated = await updateProductSettings(db, session.admin.accountId, sent, { valuesAre: 'text' });
      if (updated.changed.length) {
        logger.info({ event: 'dashboard.product_settings.changed', changed: updated.changed, replayedLoans: updated.replayedLoans, adminId: session.admin.adminId, accountId: session.admin.accountId }, 'product settings changed');
      }
      res.redirect(303, `${SERVICING_PATH}?saved=${encodeURIComponent(updated.changed.join(','))}&replayed=${updated.replayedLoans}`);
    } catch (error) {
      if (!(error instanceof UserInputError)) throw error;
      const values = new Map(PRODUCT_SETTINGS.map((setting) => [setting.name, typed.get(setting.name) ?? '']));
      res.status(error.status).type('html').send(servicingSettingsPage(session.viewer, { values, problems: new Map(Object.entries(error.fields ?? {})), error: error.message }));
    }
  });
  return router;
}

/** What `?saved=<names>&replayed=<n>` says: only the settings' own names and a count are read from it. */
function savedNotice(query: Record<string, unknown>): { notice?: string } {
  const saved = query.saved;
  if (typeof saved !== 'string') return {};
  const names = saved.split(',').filter((name) => productSetting(name) !== undefined);
  if (!names.length) return { notice: 'Nothing to save: the settings already had these values.' };
  const replayed = typeof query.replayed === 'string' && /^\d{1,9}$/.test(query.replayed) ? Number(query.replayed) : 0;
  return { notice: `Saved ${names.join(', ')}.${replayed ? ` The ledgers of ${replayed} loan${replayed === 1 ? '' : 's'} were replayed with the new values.` : ''}` };
}
