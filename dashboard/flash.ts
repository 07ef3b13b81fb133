import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { Request, Response } from 'express';
import { readCookie } from './session.js';

/**
 * A one-time message from a form's POST to the page it redirects to (Post/Redirect/Get), for
 * what must be shown exactly once — a new API key. It travels in a short-lived cookie limited
 * to that page, encrypted and authenticated (AES-256-GCM) with a key derived from the session
 * token, so it needs no storage (any service process can show it), no other session can read
 * or forge it, and the browser never holds the secret in clear. The page that reads it clears
 * it in the same response: a reload shows nothing, and creates nothing.
 */
const MAX_AGE_MS = 60_000;

export interface FlashCookie {
  /** The cookie's name. */
  readonly name: string;
  /** The one page that reads it (the cookie's Path). */
  readonly path: string;
}

function keyOf(sessionToken: string, cookie: FlashCookie): Buffer {
  return createHash('sha256').update(`loanql dashboard flash\u0000${cookie.name}\u0000${sessionToken}`).digest();
}

/** Sets the flash for the next GET of `cookie.path` in this session. */
export function setFlash(req: Request, res: Response, cookie: FlashCookie, sessionToken: string, value: unknown): void {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyOf(sessionToken, cookie), iv);
  const plain = Buffer.from(JSON.stringify({ value, expires: Date.now() + MAX_AGE_MS }), 'utf8');
  const sealed = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]).toString('base64url');
  res.cookie(cookie.name, sealed, { httpOnly: true, sameSite: 'lax', path: cookie.path, secure: req.secure, maxAge: MAX_AGE_MS, encode: String });
}

/**
 * The flash of this session, if the request carries one that is this session's and fresh; the
 * cookie is cleared in any case, so it is read at most once.
 */
export function takeFlash(req: Request, res: Response, cookie: FlashCookie, sessionToken: string): unknown {
  const sealed = readCookie(req, cookie.name);
  if (sealed === undefined) return undefined;
  res.clearCookie(cookie.name, { httpOnly: true, sameSite: 'lax', path: cookie.path, secure: req.secure });
  try {
    const bytes = Buffer.from(sealed, 'base64url');
    if (bytes.length < 12 + 16 + 1) return undefined;
    const decipher = createDecipheriv('aes-256-gcm', keyOf(sessionToken, cookie), bytes.subarray(0, 12));
    decipher.setAuthTag(bytes.subarray(bytes.length - 16));
    const plain = Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()]).toString('utf8');
    const { value, expires } = JSON.parse(plain) as { value: unknown; expires: number };
    return typeof expires === 'number' && expires > Date.now() ? value : undefined;
  } catch {
    return undefined; // another session's, tampered with, or not ours at all
  }
}
