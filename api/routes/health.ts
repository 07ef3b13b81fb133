import { Router } from 'express';
import type { Database } from '../../db/index.js';

/** `GET /healthz` (no auth): the service and database state; 503 when the database does not answer. */
export function healthRoutes(db: Database, databaseDescription: string): Router {
  const router = Router();
  router.get('/healthz', async (_req, res) => {
    const started = process.hrtime.bigint();
    try {
      await db.query('SELECT 1');
      const latencyMs = Number(process.hrtime.bigint() - started) / 1e6;
      res.json({ status: 'ok', database: { status: 'ok', kind: db.kind, description: databaseDescription, latencyMs } });
    } catch {
      res.status(503).json({ status: 'degraded', database: { status: 'unavailable', kind: db.kind, description: databaseDescription } });
    }
  });
  return router;
}
