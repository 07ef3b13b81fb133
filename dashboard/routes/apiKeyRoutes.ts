import { Router, type Response } from 'express';
import type { Database } from '../../db/index.js';
import type { Logger } from '../../api/logger.js';
import { checkKeyRole, createApiKey, deactivateApiKey, listApiKeys, type ApiKeyListing } from '../../app/apiKeys.js';
import type { EngineHolder } from '../../app/engineHolder.js';
import { ADMIN_ROLE } from '../../metadata/index.js';
import { UserInputError } from '../../app/errors.js';
import { API_KEYS_PATH, apiKeysPage, confirmDeactivationPage, type RoleChoice } from '../pages/apiKeysPages.js';
import { errorPage } from '../pages/errorPage.js';
import { formText } from '../formFields.js';
import { sessionOf, type DashboardSession } from '../session.js';

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
    res.type('html').send(apiKeysPage(session.viewer, { keys, roles: roleChoices(), ...(deactivated ? { notice: `Key “${deactivated.name}” (${deactivated.prefix}) is deactivated.` } : {}) }));
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
      const keyRole = await checkKeyRole(db, session.admin.accountId, roles, role, variables);
      const created = await createApiKey(db, session.admin.accountId, name, keyRole);
      logger.info({ event: 'dashboard.api_key.created', prefix: created.prefix, role: created.role, adminId: session.admin.adminId, accountId: session.admin.accountId }, 'API key created');
      const keys = await listApiKeys(db, session.admin.accountId);
      res.status(201).type('html').send(apiKeysPage(session.viewer, { keys, roles: roleChoices(), created }));
    } catch (error) {
      if (!(error instanceof UserInputError)) throw error;
      const keys = await listApiKeys(db, session.admin.accountId);
      res.status(error.status).type('html').send(apiKeysPage(session.viewer, { keys, roles: roleChoices(), error: error.message, name, role, variables }));
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
    if (!(await deactivateApiKey(db, prefix, session.admin.accountId))) return sendNoSuchKey(res, session);
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
