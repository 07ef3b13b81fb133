import { Router } from 'express';
import type { Database, ReadReplicas } from '../../db/index.js';
import type { EngineHolder } from '../../app/engineHolder.js';

/** What the readiness check asks of the running service (see `api/main.ts`). */
export interface ServiceState {
  /** True from SIGTERM on: the service finishes what it has and takes nothing new. */
  stopping: boolean;
}

/**
 * `GET /healthz` (liveness, no auth, no database): 200 while the process serves HTTP at all — a
 * database outage is not a reason to restart the service, which reconnects by itself. With read
 * replicas it also reports the primary and each replica as the last health check saw them
 * (status, lag, replay position, reads served by this process), still without a database call.
 * `GET /readyz` (readiness, no auth): 200 when the database answers `SELECT 1` and the metadata
 * is loaded; 503 when the database does not answer or the service is shutting down.
 */
export function healthRoutes(db: Database, databaseDescription: string, engines: EngineHolder, state: ServiceState = { stopping: false }, replicas?: ReadReplicas): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok', database: { kind: db.kind, description: databaseDescription }, ...(replicas ? replicas.health() : {}), pid: process.pid });
  });
  router.get('/readyz', async (_req, res) => {
    const metadata = { status: 'ok', collections: engines.engine.metadata.collections.size };
    if (state.stopping) {
      res.status(503).json({ status: 'stopping', database: { kind: db.kind, description: databaseDescription }, metadata });
      return;
    }
    const started = process.hrtime.bigint();
    try {
      await db.query('SELECT 1');
      const latencyMs = Number(process.hrtime.bigint() - started) / 1e6;
      res.json({ status: 'ok', database: { status: 'ok', kind: db.kind, description: databaseDescription, latencyMs }, metadata });
    } catch {
      res.status(503).set('Retry-After', '2').json({ status: 'unavailable', database: { status: 'unavailable', kind: db.kind, description: databaseDescription }, metadata });
    }
  });
  return router;
}
