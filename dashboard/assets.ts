import express, { type Router } from 'express';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where `dashboard/client/build.mjs` (run by `npm run build`) put the bundles: beside this
 * module when it runs from `dist/dashboard/`, or in `dist/` when it runs from the sources (tsx).
 */
export function findAssetsDirectory(): string | null {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [join(here, 'assets'), join(here, '..', 'dist', 'dashboard', 'assets')];
  return candidates.find((dir) => existsSync(join(dir, 'console.js'))) ?? null;
}

/** `/dashboard/assets/*`: the bundles, revalidated by ETag/Last-Modified (their names are fixed). */
export function assetRoutes(directory: string | null): Router {
  const router = express.Router();
  // The pages' `no-store` does not apply here: the bundles hold no account data.
  router.use((_req, res, next) => {
    res.removeHeader('Cache-Control');
    next();
  });
  if (directory) router.use(express.static(directory, { index: false, etag: true, lastModified: true, maxAge: 0, dotfiles: 'ignore' }));
  return router;
}
