import type { NextFunction, Request, Response } from 'express';
import type { Database } from '../db/index.js';
import { authenticateApiKey, type AuthenticatedKey } from '../app/apiKeys.js';

declare module 'express-serve-static-core' {
  interface Locals {
    auth: AuthenticatedKey;
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

/** `Authorization: Token <key>` on every `/api/*` request; the account lands in `res.locals.auth`. */
export function requireApiKey(db: Database) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const auth = await authenticateApiKey(db, req.get('authorization'));
    if (!auth) return notAuthorized(res);
    res.locals.auth = auth;
    next();
  };
}
