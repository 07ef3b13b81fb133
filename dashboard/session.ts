import type { CookieOptions, NextFunction, Request, Response } from 'express';
import type { Database } from '../db/index.js';
import { csrfTokenForSession, findAdminSession, isSessionCsrfToken, type AdminSession } from '../app/adminSessions.js';
import type { Viewer } from './pages/layout.js';
import { errorPage } from './pages/errorPage.js';
import { formFields } from './formFields.js';

/** The logged-in admin of a dashboard request, set by `loadSession`. */
export interface DashboardSession {
  readonly admin: AdminSession;
  /** The cookie's session token (never logged, never rendered). */
  readonly token: string;
  readonly viewer: Viewer;
}

declare module 'express-serve-static-core' {
  interface Locals {
    dashboard?: DashboardSession;
  }
}

export const SESSION_COOKIE = 'loanql_session';
export const CSRF_HEADER = 'x-csrf-token';
export const CSRF_FIELD = '_csrf';

/** httpOnly (no script reads it), SameSite=Lax (no cross-site POST carries it), only under /dashboard. */
export function sessionCookieOptions(req: Request, maxAgeMs?: number): CookieOptions {
  return { httpOnly: true, sameSite: 'lax', path: '/dashboard', secure: req.secure, ...(maxAgeMs ? { maxAge: maxAgeMs } : {}) };
}

/** One cookie's value from the `Cookie` header (our tokens are base64url: nothing to decode). */
export function readCookie(req: Request, name: string): string | undefined {
  for (const part of (req.get('cookie') ?? '').split(';')) {
    const separator = part.indexOf('=');
    if (separator > 0 && part.slice(0, separator).trim() === name) return part.slice(separator + 1).trim();
  }
  return undefined;
}

/** The request's session, or undefined; used by the checks below and by the login page. */
export async function sessionOfRequest(db: Database, req: Request): Promise<DashboardSession | undefined> {
  const token = readCookie(req, SESSION_COOKIE);
  const admin = token ? await findAdminSession(db, token) : null;
  if (!token || !admin) return undefined;
  return { admin, token, viewer: { accountName: admin.accountName, currency: admin.accountCurrency, adminEmail: admin.adminEmail, csrfToken: csrfTokenForSession(token) } };
}

/** The session of a request that passed `requirePageSession` or `requireJsonSession`. */
export function sessionOf(res: Response): DashboardSession {
  const session = res.locals.dashboard;
  if (!session) throw new Error('dashboard route mounted without a session check');
  return session;
}

/** Pages: without a live session, off to the login page (and back here afterwards, for a GET). */
export function requirePageSession(db: Database) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const session = await sessionOfRequest(db, req);
    if (session) {
      res.locals.dashboard = session;
      return next();
    }
    if (readCookie(req, SESSION_COOKIE) !== undefined) res.clearCookie(SESSION_COOKIE, sessionCookieOptions(req));
    const back = req.method === 'GET' ? `?next=${encodeURIComponent(req.originalUrl)}` : '';
    res.redirect(303, `/dashboard/login${back}`);
  };
}

/** The console's JSON endpoints: without a live session, 401 in GraphQL's error shape. */
export function requireJsonSession(db: Database) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const session = await sessionOfRequest(db, req);
    if (session) {
      res.locals.dashboard = session;
      return next();
    }
    res.status(401).json({ errors: [{ message: 'log in to the dashboard again', extensions: { code: 'session-ended' } }] });
  };
}

/** Every form POST carries the session's CSRF token in `_csrf` (synchronizer token). */
export function requireFormCsrfToken(req: Request, res: Response, next: NextFunction): void {
  if (req.method === 'GET' || req.method === 'HEAD') return next();
  const session = sessionOf(res);
  const offered = formFields(req).get(CSRF_FIELD);
  if (isSessionCsrfToken(session.token, offered)) return next();
  res
    .status(403)
    .type('html')
    .send(errorPage('The form could not be accepted', 'It did not carry this session’s security token (it may be from an older page or another site). Go back, reload the page and try again.', session.viewer));
}

/** The console's fetches send the session's CSRF token in the `X-CSRF-Token` header. */
export function requireCsrfHeader(req: Request, res: Response, next: NextFunction): void {
  if (req.method === 'GET' || req.method === 'HEAD') return next();
  if (isSessionCsrfToken(sessionOf(res).token, req.get(CSRF_HEADER))) return next();
  res.status(403).json({ errors: [{ message: `send the session's CSRF token in the ${CSRF_HEADER} header`, extensions: { code: 'csrf-token-missing' } }] });
}

/** A `next` value for after login: only a path inside the dashboard, so no open redirect. */
export function safeNextPath(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 500) return undefined;
  if (!/^\/dashboard(?:[/?][^\\\s]*)?$/.test(value) || value.startsWith('/dashboard/login') || value.startsWith('/dashboard/logout')) return undefined;
  return value;
}
