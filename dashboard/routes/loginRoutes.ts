import express, { Router, type Request, type Response } from 'express';
import { randomBytes } from 'node:crypto';
import type { Database } from '../../db/index.js';
import type { Logger } from '../../app/logger.js';
import { verifyAdminLogin } from '../../app/adminLogin.js';
import { endAdminSession, sameText, startAdminSession } from '../../app/adminSessions.js';
import type { LoginThrottle } from '../../app/loginThrottle.js';
import { fieldWithNul, formFields, formText } from '../formFields.js';
import { loginPage, type LoginForm } from '../pages/loginPage.js';
import { CSRF_FIELD, readCookie, requireFormCsrfToken, requirePageSession, safeNextPath, SESSION_COOKIE, sessionCookieOptions, sessionOfRequest } from '../session.js';

/**
 * Before login there is no session to tie a CSRF token to, so the login form uses a
 * double-submit token: a random value in a Strict, httpOnly cookie that only the login path
 * receives, repeated in the form. A cross-site page can neither read nor set it.
 */
const LOGIN_CSRF_COOKIE = 'loanql_login_csrf';
const LOGIN_CSRF_PATTERN = /^[A-Za-z0-9_-]{43}$/;

interface LoginDeps {
  readonly db: Database;
  readonly logger: Logger;
  readonly throttle: LoginThrottle;
}

/** `GET/POST /login` and `POST /logout`. */
export function loginRoutes({ db, logger, throttle }: LoginDeps): Router {
  const router = Router();
  const parseForm = express.urlencoded({ extended: false, limit: '16kb' });

  router.get('/login', async (req, res) => {
    const next = safeNextPath(req.query.next);
    if (await sessionOfRequest(db, req)) return res.redirect(303, next ?? '/dashboard');
    const notice = req.query.logged_out === '1' ? 'You are logged out.' : undefined;
    sendLoginPage(req, res, 200, { ...(next ? { next } : {}), ...(notice ? { notice } : {}) });
  });

  router.post('/login', parseForm, async (req, res) => {
    const next = safeNextPath(req.query.next);
    const nulField = fieldWithNul(req);
    const email = nulField === null ? formText(req, 'email').trim() : '';
    const password = formText(req, 'password');
    const form = { email, ...(next ? { next } : {}) };
    const address = req.ip ?? 'unknown';

    const cookieToken = readCookie(req, LOGIN_CSRF_COOKIE);
    const formToken = formFields(req).get(CSRF_FIELD);
    if (!cookieToken || typeof formToken !== 'string' || !sameText(cookieToken, formToken)) {
      logger.warn({ event: 'dashboard.login.refused', reason: 'csrf', address }, 'dashboard login refused: no valid CSRF token');
      return sendLoginPage(req, res, 403, { ...form, error: 'The login form expired or did not come from this site. Please try again.' });
    }
    // PostgreSQL's text cannot hold NUL: refused here, before the throttle or the database sees it.
    if (nulField !== null) return sendLoginPage(req, res, 400, { ...form, error: `The field “${nulField}” contains a NUL character (\\u0000), which is not allowed.` });
    if (!email || !password) return sendLoginPage(req, res, 400, { ...form, error: 'Enter your e-mail and your password.' });

    const waitMs = throttle.retryAfterMs(email, address);
    if (waitMs > 0) {
      const minutes = Math.ceil(waitMs / 60_000);
      logger.warn({ event: 'dashboard.login.refused', reason: 'throttled', email: loggableEmail(email), address }, 'dashboard login refused: too many failures');
      res.set('Retry-After', String(Math.ceil(waitMs / 1000)));
      return sendLoginPage(req, res, 429, { ...form, error: `Too many failed logins. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.` });
    }

    const admin = await verifyAdminLogin(db, email, password);
    if (!admin) {
      throttle.recordFailure(email, address);
      logger.warn({ event: 'dashboard.login.refused', reason: 'credentials', email: loggableEmail(email), address }, 'dashboard login refused: wrong e-mail or password');
      return sendLoginPage(req, res, 401, { ...form, error: 'The e-mail or the password is wrong.' });
    }
    throttle.recordSuccess(email, address);
    const session = await startAdminSession(db, admin);
    logger.info({ event: 'dashboard.login', adminId: admin.id, accountId: admin.accountId, address }, 'dashboard login');
    res.cookie(SESSION_COOKIE, session.token, sessionCookieOptions(req, session.lifetimeMs));
    res.clearCookie(LOGIN_CSRF_COOKIE, loginCsrfCookieOptions(req));
    res.redirect(303, next ?? '/dashboard');
  });

  router.post('/logout', requirePageSession(db), parseForm, requireFormCsrfToken, async (req, res) => {
    const token = readCookie(req, SESSION_COOKIE);
    await endAdminSession(db, token);
    logger.info({ event: 'dashboard.logout', adminId: res.locals.dashboard?.admin.adminId }, 'dashboard logout');
    res.clearCookie(SESSION_COOKIE, sessionCookieOptions(req));
    res.redirect(303, '/dashboard/login?logged_out=1');
  });
  return router;
}

function loginCsrfCookieOptions(req: Request) {
  return { httpOnly: true, sameSite: 'strict' as const, path: '/dashboard/login', secure: req.secure };
}

/** Renders the login form with a double-submit token (the cookie's, or a new one). */
function sendLoginPage(req: Request, res: Response, status: number, form: Omit<LoginForm, 'csrfToken'>): void {
  let token = readCookie(req, LOGIN_CSRF_COOKIE);
  if (!token || !LOGIN_CSRF_PATTERN.test(token)) {
    token = randomBytes(32).toString('base64url');
    res.cookie(LOGIN_CSRF_COOKIE, token, { ...loginCsrfCookieOptions(req), maxAge: 3_600_000 });
  }
  res.status(status).type('html').send(loginPage({ ...form, csrfToken: token }));
}

/** An e-mail as typed, for the log; anything else (a password typed into the wrong field, say) is not logged. */
function loggableEmail(email: string): string {
  return /^[^\s@]{1,64}@[^\s@]{1,255}$/.test(email) ? email.toLowerCase() : '(not an e-mail address)';
}
