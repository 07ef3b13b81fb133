import { Router } from 'express';
import type { Database } from '../../db/index.js';
import { listApiKeys } from '../../app/apiKeys.js';
import type { EngineHolder } from '../../app/engineHolder.js';
import type { ServiceMetrics } from '../../app/operations/serviceMetrics.js';
import type { CostAdmission } from '../../app/operations/costAdmission.js';
import type { RateLimit } from '../../metadata/index.js';
import { OPERATIONS_PATH, operationsPage } from '../pages/operationsPage.js';
import { sessionOf } from '../session.js';

/** What the operations page reads, from the service as `server/createApp.ts` assembled it. */
export interface OperationsSources {
  readonly metrics: ServiceMetrics | null;
  readonly admission: CostAdmission | null;
  /** `RATE_LIMIT_PER_SECOND` / `RATE_LIMIT_BURST`, or null. */
  readonly defaultRateLimit: RateLimit | null;
  /** Whether `METRICS_TOKEN` is set; the token itself never reaches the dashboard. */
  readonly metricsTokenSet: boolean;
  readonly workers: number;
  /** `PORT`, for the page's Prometheus scrape target. */
  readonly port: number;
}

/** `GET /dashboard/operations`: the session's account's rate limits, traffic and the service's admission and metrics settings. */
export function operationsRoutes(db: Database, engines: EngineHolder, sources: OperationsSources): Router {
  const router = Router();
  router.get(OPERATIONS_PATH.slice('/dashboard'.length), async (_req, res) => {
    const session = sessionOf(res);
    const accountId = session.admin.accountId;
    const keys = (await listApiKeys(db, accountId)).filter((key) => key.active);
    const roles = [...engines.engine.metadata.roles.values()].map((role) => ({ name: role.name, limit: role.rateLimit ?? sources.defaultRateLimit, fromRole: role.rateLimit !== null }));
    const { admission } = sources;
    res.type('html').send(
      operationsPage(session.viewer, {
        traffic: sources.metrics ? sources.metrics.accounts.lastHour(accountId) : null,
        trafficMinutes: sources.metrics ? sources.metrics.accounts.partialWindowMinutes() : null,
        roles,
        defaultLimit: sources.defaultRateLimit,
        keys,
        admission: admission ? { limits: admission.limits, state: admission.state } : null,
        metricsTokenSet: sources.metricsTokenSet,
        workers: sources.workers,
        port: sources.port,
      }),
    );
  });
  return router;
}
