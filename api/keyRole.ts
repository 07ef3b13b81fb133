import type { Response } from 'express';
import type { EngineHolder } from '../app/engineHolder.js';
import type { Principal } from '../engine/index.js';
import { ADMIN_ROLE, type Role } from '../metadata/index.js';
import { notAuthorized } from './authenticate.js';

export type LoanPermission = 'select' | 'insert' | 'update' | 'delete';
const METHOD_NEEDS: Readonly<Record<LoanPermission, string>> = { select: 'GET', insert: 'POST', update: 'PATCH', delete: 'DELETE' };

/**
 * The key's role (from the metadata in service) when it has the loans permission a route needs;
 * otherwise answers 403 — `Not authorized` for a key whose role the metadata no longer has, a
 * JSON error naming the missing permission otherwise — and returns null. `route` names the route
 * in the refusal (`/api/loan`).
 */
export function roleWith(engines: EngineHolder, res: Response, permission: LoanPermission, route: string): { role: Role; principal: Principal } | null {
  const auth = res.locals.auth;
  const role = engines.engine.metadata.roles.get(auth.role);
  if (!role) {
    notAuthorized(res);
    return null;
  }
  const loans = role.metadata.collections.get('loans');
  const allowed = role.name === ADMIN_ROLE || (loans !== undefined && (permission === 'select' || loans[permission] !== null));
  if (!allowed) {
    res.status(403).json({
      error: `this API key's role ${role.name} has no ${permission} permission on loans, which ${METHOD_NEEDS[permission]} ${route} needs`,
      role: role.name,
      permission: `loans.${permission}`,
    });
    return null;
  }
  return { role, principal: { accountId: auth.accountId, keyVariables: auth.variables } };
}
