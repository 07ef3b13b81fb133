import type { NextFunction, Request, Response } from 'express';
import type { Database } from '../db/index.js';
import { guardHolds, type StatementGuard } from '../engine/index.js';
import { noteCaller } from '../http/requestFacts.js';
import { authenticateApiKey, type AuthenticatedKey, type VerifiedKeyCache } from '../app/apiKeys.js';
import { activeKeyGuard } from '../app/keyGuards.js';

declare module 'express-serve-static-core' {
  interface Locals {
    auth: AuthenticatedKey;
    /**
     * Set when the key was identified from the verified-key cache without reading its state:
     * the route must have the database check this condition (in its statement, or before any
     * other answer) and refuse the request when it is false.
     */
    keyStillActive?: StatementGuard;
  }
}

const NOT_AUTHORIZED = Buffer.from('Not authorized', 'utf8');

/**
 * The one answer to every kind of auth failure (interface §5, SPEC §4): 403, `Content-Type:
 * text/plain` exactly as SPEC writes it, body `Not authorized`. Node's own `setHeader` and a
 * Buffer body keep Express from appending `; charset=utf-8` (the body is ASCII either way).
 */
export function notAuthorized(res: Response): void {
  res.status(403).setHeader('Content-Type', 'text/plain');
  res.send(NOT_AUTHORIZED);
}

export interface ApiKeyOptions {
  /** Keys verified before; with it, requests `checksActiveInStatement` accepts skip the key read. */
  readonly verifiedKeys?: VerifiedKeyCache;
  /** Requests whose route checks `res.locals.keyStillActive` itself (`POST /api/graph`: in its own statement). */
  readonly checksActiveInStatement?: (req: Request) => boolean;
}

/** `Authorization: Token <key>` on every `/api/*` request; the account lands in `res.locals.auth`. */
export function requireApiKey(db: Database, options: ApiKeyOptions = {}) {
  const { verifiedKeys, checksActiveInStatement } = options;
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    if (verifiedKeys && checksActiveInStatement?.(req)) {
      const known = verifiedKeys.identify(db, req.get('authorization'));
      if (known) {
        noteCaller(res, known);
        res.locals.auth = known;
        res.locals.keyStillActive = activeKeyGuard(known);
        return next();
      }
    }
    const auth = await authenticateApiKey(db, req.get('authorization'), verifiedKeys);
    if (!auth) return notAuthorized(res);
    noteCaller(res, auth);
    res.locals.auth = auth;
    next();
  };
}

/**
 * For a route that defers the key's state check: answers 403 and returns true when the key is
 * no longer active. Used before answers that run no statement (errors), so that a deactivated
 * key gets 403 on every path, not only on the one that runs the engine's statement.
 */
export async function refusedAsInactive(db: Database, res: Response): Promise<boolean> {
  const guard = res.locals.keyStillActive;
  if (!guard || (await guardHolds(db, guard))) return false;
  notAuthorized(res);
  return true;
}

/** Asks the database whether a statement guard holds now (its own small statement): the engine's. */
export { guardHolds };
