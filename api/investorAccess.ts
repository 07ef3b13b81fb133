import type { Response } from 'express';
import type { EngineHolder } from '../app/engineHolder.js';
import { ADMIN_ROLE } from '../metadata/index.js';
import { notAuthorized } from './authenticate.js';

/**
 * Whose investor statements a key may read (issue 32): a role that reads every distribution line
 * of the account (`admin`, or a role whose `distributions` select has no row filter: read_only,
 * servicer) reads anyone's; a role that reads distribution lines under a filter and carries the key
 * variable `person_id` (investor) reads only that person's — any other person is answered as one
 * that does not exist (404), so a key never learns who else the account has.
 */
export type InvestorReach = { readonly kind: 'any' } | { readonly kind: 'own'; readonly personId: string };

/** The key's reach, or null (after answering 403) when its role reads no distribution lines. */
export function investorReach(engines: EngineHolder, res: Response, route: string): InvestorReach | null {
  const auth = res.locals.auth;
  const role = engines.engine.metadata.roles.get(auth.role);
  if (!role) {
    notAuthorized(res);
    return null;
  }
  const distributions = role.metadata.collections.get('distributions');
  if (role.name === ADMIN_ROLE || (distributions !== undefined && distributions.selectFilter === null)) return { kind: 'any' };
  const personId = auth.variables.get('person_id');
  if (distributions !== undefined && personId !== undefined) return { kind: 'own', personId };
  refuse(res, role.name, 'distributions.select', `this API key's role ${role.name} reads no distribution lines, which ${route} needs`);
  return null;
}

/** Whether the key's role reads every investor's lines (a remittance run shows them all); else answers 403. */
export function readsEveryInvestor(engines: EngineHolder, res: Response, route: string): boolean {
  const auth = res.locals.auth;
  const role = engines.engine.metadata.roles.get(auth.role);
  if (!role) {
    notAuthorized(res);
    return false;
  }
  const distributions = role.metadata.collections.get('distributions');
  if (role.name === ADMIN_ROLE || (distributions !== undefined && distributions.selectFilter === null)) return true;
  refuse(res, role.name, 'distributions.select', `${route} shows every investor's distribution lines; this API key's role ${role.name} does not read them all`);
  return false;
}

/** Whether the key is an admin key (marking a period remitted); else answers 403. */
export function isAdminKey(engines: EngineHolder, res: Response, what: string): boolean {
  const role = engines.engine.metadata.roles.get(res.locals.auth.role);
  if (!role) {
    notAuthorized(res);
    return false;
  }
  if (role.name === ADMIN_ROLE) return true;
  refuse(res, role.name, 'remittances.insert', `${what} is for the account's admin keys; this key's role is ${role.name}`);
  return false;
}

function refuse(res: Response, role: string, permission: string, error: string): void {
  res.status(403).json({ error, role, permission, code: 'permission-denied' });
}
