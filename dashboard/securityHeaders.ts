import type { NextFunction, Request, Response } from 'express';

/**
 * Scripts and styles only from the dashboard itself (GraphiQL sets inline styles, hence
 * 'unsafe-inline' for styles alone; its fonts are data: URLs), no framing, forms only to here.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * Headers of every dashboard response. Pages show account data and sometimes a new key, so
 * none is stored by a cache (`no-store`); the static assets replace this with their own.
 */
export function securityHeaders(_req: Request, res: Response, next: NextFunction): void {
  res.set({
    'Content-Security-Policy': CONTENT_SECURITY_POLICY,
    'X-Frame-Options': 'DENY',
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'same-origin',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cache-Control': 'no-store',
  });
  next();
}
