import { Router, type Request, type Response } from 'express';
import type { Database } from '../../db/index.js';
import type { EngineHolder } from '../../app/engineHolder.js';
import { letterheadOf, readAccountProfile, updateAccountProfile, type AccountWithProfile } from '../../app/accountProfile.js';
import { ADMIN_ROLE } from '../../metadata/index.js';
import { notAuthorized } from '../authenticate.js';
import { roleWith } from '../keyRole.js';
import { methodNotAllowed } from '../methodNotAllowed.js';
import { queryParameters } from '../../http/queryParameters.js';
import type { ReadRouting } from '../readRouting.js';

/** The account as `/api/account` answers it: its slug and name, its profile, and the letterhead its letters print. */
function accountJson(account: AccountWithProfile): Record<string, unknown> {
  const letterhead = letterheadOf(account.name, account.profile);
  return {
    slug: account.slug,
    name: account.name,
    profile: account.profile,
    letterhead: { name: letterhead.name, address_lines: letterhead.addressLines, contact: letterhead.contactLine },
  };
}

/** A request with no body at all is `{}`, like `/api/product`'s. */
function bodyOf(req: Request): unknown {
  return req.body === undefined ? {} : req.body;
}

function refuseNonAdmin(engines: EngineHolder, res: Response): boolean {
  const role = engines.engine.metadata.roles.get(res.locals.auth.role);
  if (!role) {
    notAuthorized(res);
    return true;
  }
  if (role.name === ADMIN_ROLE) return false;
  res.status(403).json({
    error: `changing the account's profile is for the account's admin keys; this key's role is ${role.name}`,
    role: role.name,
    permission: 'account.update',
    code: 'permission-denied',
  });
  return true;
}

/**
 * `/api/account` (session 38): the lender's profile, which heads its payoff letters and investor
 * statements. GET: any key whose role reads loans (a letter it may download prints it); PATCH: the
 * account's admin keys only. Every rule is in `app/accountProfile.ts`. With read replicas
 * (`routing`), a change is recorded as the key's last write, as a settings change is: the key's
 * next read of a letter sees the new letterhead (docs/scaling.md).
 */
export function accountRoutes(db: Database, engines: EngineHolder, routing?: ReadRouting): Router {
  const router = Router();

  router.get('/', async (req, res) => {
    if (!roleWith(engines, res, 'select', '/api/account')) return;
    queryParameters(req.query, []);
    res.json({ account: accountJson(await readAccountProfile(db, res.locals.auth.accountId)) });
  });

  router.patch('/', async (req, res) => {
    if (refuseNonAdmin(engines, res)) return;
    const updated = await updateAccountProfile(db, res.locals.auth.accountId, bodyOf(req));
    if (routing) await routing.wrote(res.locals.auth, res).catch(() => undefined);
    res.json({ account: accountJson(updated), changed: updated.changed });
  });

  router.all('/', methodNotAllowed('GET', 'PATCH'));
  return router;
}
