import { Router, type Request } from 'express';
import { authenticateApiKey } from '../../app/apiKeys.js';
import { ping, type Database, type ReadReplicas } from '../../db/index.js';
import type { EngineHolder } from '../../app/engineHolder.js';

/** What the readiness check asks of the running service (see `server/main.ts`). */
export interface ServiceState {
  /** True from SIGTERM on: the service finishes what it has and takes nothing new. */
  stopping: boolean;
  /** This process's WebSocket connections, open subscriptions, live-query cohorts and the cohort statements run so far (set once subscriptions start). */
  subscriptions?: () => Readonly<Record<string, number>>;
}

/**
 * `GET /healthz` (liveness, no database): 200 while the process serves HTTP at all — a database
 * outage is not a reason to restart the service, which reconnects by itself. Without a key it
 * says only `{"status":"ok"}` (issue 26, finding 8: it used to show anyone the data directory's
 * path, the embedded share's port and the process id). With an `admin` role's API key
 * (`Authorization: Token …`, checked as on `/api/*`; a key that is not one, or a database that
 * cannot check it, gets the short answer) it adds the database's kind and description, the
 * process id, with read replicas the primary and each replica as the last health check saw
 * them (status, lag, replay position, reads served by this process), and this process's
 * subscriptions (`GraphSockets.usage`: connections, open subscriptions, cohorts, statements run).
 * `GET /readyz` (readiness): 200 when the database answers `SELECT 1` and the metadata is loaded
 * (its `metadata.status` is `mismatch` after a statement found a table, column or function of the
 * metadata gone from the database, with what is missing for an admin key, until they match again;
 * `metadata.lastEditRefused` says when the file's last edit was refused, with its problems for an
 * admin key, until an edit loads);
 * 503 when the database does not answer or the service is shutting down. The database's kind and
 * description likewise only for an admin key.
 */
export function healthRoutes(db: Database, databaseDescription: string, engines: EngineHolder, state: ServiceState = { stopping: false }, replicas?: ReadReplicas): Router {
  const router = Router();
  /** Whether the request carries an admin role's valid API key (no header: false, without a database call). */
  const detailed = async (req: Request): Promise<boolean> => {
    const header = req.get('authorization');
    if (!header) return false;
    try {
      return (await authenticateApiKey(db, header))?.role === 'admin';
    } catch {
      return false;
    }
  };
  const about = { kind: db.kind, description: databaseDescription };
  router.get('/healthz', async (req, res) => {
    if (!(await detailed(req))) {
      res.json({ status: 'ok' });
      return;
    }
    res.json({ status: 'ok', database: about, ...(replicas ? replicas.health() : {}), ...(state.subscriptions ? { subscriptions: state.subscriptions() } : {}), pid: process.pid });
  });
  router.get('/readyz', async (req, res) => {
    const details = await detailed(req);
    // A statement found the database changed under the metadata (`metadata-mismatch`): still
    // ready (every other collection answers), but said, with what the check found missing.
    const mismatch = engines.mismatch;
    // Checked again (at most every 5 s): a database put back clears it without a reload.
    if (mismatch) engines.noteMismatch();
    // The file's last edit refused (the metadata loaded before it keeps serving): still ready, but
    // said — before, only the log and the dashboard's Metadata page did.
    const { lastRefused, loadedAt } = engines.status;
    const refused = lastRefused && lastRefused.at >= loadedAt ? { lastEditRefused: { at: lastRefused.at.toISOString(), ...(details ? { problems: lastRefused.problems } : {}) } } : {};
    const metadata = mismatch
      ? { status: 'mismatch', collections: engines.engine.metadata.collections.size, since: mismatch.at.toISOString(), ...(details ? { problems: mismatch.problems } : {}), ...refused }
      : { status: 'ok', collections: engines.engine.metadata.collections.size, ...refused };
    if (state.stopping) {
      res.status(503).json({ status: 'stopping', ...(details ? { database: about } : {}), metadata });
      return;
    }
    const started = process.hrtime.bigint();
    try {
      await ping(db);
      const latencyMs = Number(process.hrtime.bigint() - started) / 1e6;
      res.json({ status: 'ok', database: { status: 'ok', ...(details ? about : {}), latencyMs }, metadata });
    } catch {
      res.status(503).set('Retry-After', '2').json({ status: 'unavailable', database: { status: 'unavailable', ...(details ? about : {}) }, metadata });
    }
  });
  return router;
}
