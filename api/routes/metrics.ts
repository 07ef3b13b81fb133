import { Router } from 'express';
import { hash, timingSafeEqual } from 'node:crypto';
import type { Logger } from '../../app/logger.js';

/** The text Prometheus scrapes, and its Content-Type: this process's, or the cluster's (`server/clusterMetrics.ts`). */
export type ScrapeMetrics = () => Promise<{ readonly text: string; readonly contentType: string }>;

/**
 * `GET /metrics` (issue 35): the Prometheus text format, for `Authorization: Bearer
 * <METRICS_TOKEN>` only. Any other request — no header, another scheme, another token — gets the
 * same 404 as a path that does not exist, so the port does not tell that metrics are there. The
 * token is compared by its SHA-256, in constant time.
 */
export function metricsRoutes(token: string, scrape: ScrapeMetrics, logger: Logger): Router {
  const router = Router();
  const expected = hash('sha256', token, 'buffer');
  router.get('/metrics', async (req, res, next) => {
    const header = req.get('authorization') ?? '';
    // The scheme's name in any case (RFC 9110 §11.1: `bearer`, as some clients and people write it).
    const given = /^bearer +/i.test(header) ? header.replace(/^bearer +/i, '').trim() : '';
    if (!timingSafeEqual(hash('sha256', given, 'buffer'), expected)) return next();
    try {
      const { text, contentType } = await scrape();
      res.set('Cache-Control', 'no-store').type(contentType).send(text);
    } catch (error) {
      logger.warn({ err: error }, 'collecting metrics failed');
      res.status(503).set('Retry-After', '5').type('text/plain').send('metrics are not available now');
    }
  });
  return router;
}
