import { Router, type Response } from 'express';
import type { Database } from '../../db/index.js';
import type { Logger } from '../../app/logger.js';
import { checkKeyName, checkKeyRole, createApiKey, deactivateApiKey, listApiKeys, type ApiKeyListing, type CreatedApiKey } from '../../app/apiKeys.js';
import type { EngineHolder } from '../../app/engineHolder.js';
import { ADMIN_ROLE } from '../../metadata/index.js';
import { UserInputError } from '../../app/errors.js';
import { API_KEYS_PATH, apiKeysPage, confirmDeactivationPage, type RoleChoice } from '../pages/apiKeysPages.js';
import { errorPage } from '../pages/errorPage.js';
import { formText } from '../formFields.js';
import { setFlash, takeFlash, type FlashCookie } from '../flash.js';
import { sessionOf, type DashboardSession } from '../session.js';
import { submitOnce } from '../formOnce.js';

/** The new key, carried from the create POST to the page it redirects to, and shown there once. */
const NEW_KEY_FLASH: FlashCookie = { name: 'loanql_new_key', path: API_KEYS_PATH };

/**
 * Settings > API keys (SPEC §4), always scoped to the session's account: a key of another
 * account is answered exactly like a key that does not exist (404).
 */
export function apiKeyRoutes(db: Database, logger: Logger, engines: EngineHolder): Router {
  const router = Router();
  /** The roles of the metadata in service, for the create form. */
  const roleChoices = (): RoleChoice[] => [...engines.engine.metadata.roles.values()].map((role) => ({ name: role.name, variables: [...role.variables.keys()] }));

  router.get('/', (_req, res) => res.redirect(303, API_KEYS_PATH));

  router.get('/api-keys', async (req, res) => {
    const session = sessionOf(res);
    const keys = await listApiKeys(db, session.admin.accountId);
    const deactivated = keys.find((key) => key.prefix === req.query.deactivated && !key.active);
    // Post/Redirect/Get: the key just created is in a one-time flash; a reload finds none.
    const flash = takeFlash(req, res, NEW_KEY_FLASH, session.token) as CreatedApiKey | undefined;
    const created = flash && keys.some((key) => key.prefix === flash.prefix) ? flash : undefined;
    const createdEarlier = created ? undefined : keys.find((key) => key.prefix === req.query.created);
    const notice = deactivated
      ? req.query.already === '1'
        ? `Key “${deactivated.name}” (${deactivated.prefix}) was already deactivated; nothing changed.`
        : `Key “${deactivated.name}” (${deactivated.prefix}) is deactivated.`
      : createdEarlier
        ? `Key “${createdEarlier.name}” (${createdEarlier.prefix}) was created. It was shown only once and cannot be shown again; if it was not copied, deactivate it and create another.`
        : undefined;
    res.type('html').send(apiKeysPage(session.viewer, { keys, roles: roleChoices(), ...(created ? { created } : {}), ...(notice ? { notice } : {}) }));
  });

  router.post('/api-keys', async (req, res) => {
    const session = sessionOf(res);
    const name = formText(req, 'name');
    const role = formText(req, 'role') || ADMIN_ROLE;
    const roles = engines.engine.metadata.roles;
    // The form has one input per variable name (`var_<name>`); the chosen role's are taken.
    const variables = new Map<string, string>();
    for (const variable of roles.get(role)?.variables.keys() ?? []) {
      const value = formText(req, `var_${variable}`);
      if (value.trim()) variables.set(variable, value);
    }
    try {
      // Written once per form (`_once`): the same form sent again is answered with the first's
      // redirect and no flash, so its page says the key was created and shown once (README, "Double submits").
      let created: CreatedApiKey | undefined;
      const outcome = await submitOnce<never>(db, req, res, async (on) => {
        checkKeyName(name); // first, so a blank name is told even when the role is wrong too
        const keyRole = await checkKeyRole(on, session.admin.accountId, roles, role, variables);
        created = await createApiKey(on, session.admin.accountId, name, keyRole);
        return { redirect: `${API_KEYS_PATH}?created=${encodeURIComponent(created.prefix)}` };
      });
      if (outcome === null || !('redirect' in outcome)) return;
      if (created) {
        logger.info({ event: 'dashboard.api_key.created', prefix: created.prefix, role: created.role, adminId: session.admin.adminId, accountId: session.admin.accountId }, 'API key created');
        setFlash(req, res, NEW_KEY_FLASH, session.token, created);
      }
      res.redirect(303, outcome.redirect);
    } catch (error) {
      if (!(error instanceof UserInputError)) throw error;
      const keys = await listApiKeys(db, session.admin.accountId);
      const nameError = error.fields?.name;
      res
        .status(error.status)
        .type('html')
        .send(apiKeysPage(session.viewer, { keys, roles: roleChoices(), error: error.message, ...(nameError ? { nameError } : {}), name, role, variables }));
    }
  });

  router.get('/api-keys/:prefix/deactivate', async (req, res) => {
    const session = sessionOf(res);
    const key = await findAccountKey(db, session, req.params.prefix);
    if (!key) return sendNoSuchKey(res, session);
    res.type('html').send(confirmDeactivationPage(session.viewer, key));
  });

  router.post('/api-keys/:prefix/deactivate', async (req, res) => {
    const session = sessionOf(res);
    const prefix = req.params.prefix;
    const done = await deactivateApiKey(db, prefix, session.admin.accountId);
    if (!done) return sendNoSuchKey(res, session);
    // A key deactivated meanwhile (another tab, the CLI) is said so, as `key revoke` does.
    if (!done.wasActive) return void res.redirect(303, `${API_KEYS_PATH}?deactivated=${encodeURIComponent(prefix)}&already=1`);
    logger.info({ event: 'dashboard.api_key.deactivated', prefix, adminId: session.admin.adminId, accountId: session.admin.accountId }, 'API key deactivated');
    res.redirect(303, `${API_KEYS_PATH}?deactivated=${encodeURIComponent(prefix)}`);
  });
  return router;
}

async function findAccountKey(db: Database, session: DashboardSession, prefix: string): Promise<ApiKeyListing | undefined> {
  return (await listApiKeys(db, session.admin.accountId)).find((key) => key.prefix === prefix);
}

function sendNoSuchKey(res: Response, session: DashboardSession): void {
  res.status(404).type('html').send(errorPage('No such API key', 'This account has no API key with that prefix.', session.viewer));
}
