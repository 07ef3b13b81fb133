import express, { type ErrorRequestHandler, type Express, type Request } from 'express';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isStatementTimeout, isWriteConflict, type Database } from '../db/index.js';
import { PermissionRefused, UserInputError } from '../app/errors.js';
import { VerifiedKeyCache } from '../app/apiKeys.js';
import { requireApiKey } from '../api/authenticate.js';
import { bodyProblem } from '../http/bodyErrors.js';
import { exactJsonBody } from '../http/exactJson.js';
import type { ServiceConfig } from '../app/config.js';
import type { Logger } from '../app/logger.js';
import { isDatabaseUnavailable, sendGraphTimeout, sendGraphUnavailable, sendRestTimeout, sendRestUnavailable } from '../http/unavailable.js';
import { graphResponseType } from '../http/graphResponseType.js';
import { healthRoutes, type ServiceState } from '../api/routes/health.js';
import { loanRoutes } from '../api/routes/loans.js';
import { openApiRoutes } from '../api/routes/openapi.js';
import { productRoutes } from '../api/routes/product.js';
import { accountRoutes } from '../api/routes/account.js';
import { investorRoutes } from '../api/routes/investors.js';
import { remittanceRoutes } from '../api/routes/remittances.js';
import { distributionRoutes } from '../api/routes/distributions.js';
import { graphFastPath, graphRoutes, type GraphServices } from '../api/routes/graph.js';
import { CostAdmission, sizeAdmission } from '../app/operations/costAdmission.js';
import { RateLimiter } from '../app/operations/rateLimiter.js';
import { rateLimitCheck, rateLimitMiddleware } from '../api/rateLimit.js';
import type { EngineHolder } from '../app/engineHolder.js';
import { dashboardRoutes, type ConsoleGraphRoutes } from '../dashboard/index.js';
import { consistencyHeader, type ReadRouting } from '../api/readRouting.js';
import { metricsRoutes, type ScrapeMetrics } from '../api/routes/metrics.js';
import { ServiceMetrics } from '../app/operations/serviceMetrics.js';
import { RequestLog } from '../app/operations/requestLog.js';
import { RequestTraces } from '../app/operations/requestTraces.js';
import { observeClientErrors, observeHandshakes, observeRequests } from './observeRequests.js';
import { ObservedResponse, type ServerObservers } from './httpServer.js';

export interface ServiceDeps {
  readonly db: Database;
  readonly logger: Logger;
  readonly config: ServiceConfig;
  readonly databaseDescription: string;
  readonly engines: EngineHolder;
  /** Shared with `main.ts`, which marks the service stopping on SIGTERM (`/readyz` then says 503). */
  readonly state?: ServiceState;
  /** With DATABASE_REPLICA_URLS: reads on replicas with read-your-writes (`readRouting.ts`). */
  readonly routing?: ReadRouting;
  /**
   * The process's metrics (`main.ts` makes them, to count webhook deliveries too); when absent,
   * made here when `METRICS_TOKEN` is set. Null: no metrics.
   */
  readonly metrics?: ServiceMetrics | null;
  /**
   * Admission by cost of this process (`processAdmission`): `main.ts` makes it, to hand the same
   * object to the WebSocket API; when absent, made here. Null: admission is off.
   */
  readonly admission?: CostAdmission | null;
  /** What `GET /metrics` answers: by default this process's metrics; in a cluster, every process's (`clusterMetrics.ts`). */
  readonly scrapeMetrics?: ScrapeMetrics;
}

/** The REST reads that check the key themselves when reads are routed (`api/routes/loans.ts`'s GETs). */
const ROUTED_REST_READS = /^\/loan(\/[^/]+(\/(payoff|ledger))?)?\/?$/i;

/** The Express application: routes are thin, every use case lives in `app/` or `engine/`. */
/** The app, and what counts the requests its HTTP server answers before the app sees them (`createHttpServer`'s observers). */
export type ServiceApp = Express & { readonly serverObservers: ServerObservers };

export function createApp(deps: ServiceDeps): ServiceApp {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  // Behind a TLS proxy: X-Forwarded-For gives req.ip (the login throttle's client address) and
  // X-Forwarded-Proto gives req.secure (the session cookie's Secure flag) — only from trusted hops.
  app.set('trust proxy', deps.config.trustProxy);

  const { metricsToken } = deps.config.operations;
  const metrics = deps.metrics !== undefined ? deps.metrics : metricsToken ? new ServiceMetrics({ db: deps.db, replicas: deps.routing?.replicas ?? null }) : null;
  if (metricsToken && metrics) app.use(metricsRoutes(metricsToken, deps.scrapeMetrics ?? (() => metrics.scrape()), deps.logger));
  app.use(healthRoutes(deps.db, deps.databaseDescription, deps.engines, deps.state, deps.routing?.replicas));
  app.get('/', (_req, res) => res.redirect(302, '/dashboard'));
  // The console's GraphQL is the API's route with the session's account instead of a key's:
  // wired here, so neither `api/` nor `dashboard/` imports the other.
  const admission = deps.admission !== undefined ? deps.admission : processAdmission(deps.db, deps.config, metrics);
  const graphServices: GraphServices = { db: deps.db, engines: deps.engines, logger: deps.logger, routing: undefined, admission };
  const consoleGraphRoutes: ConsoleGraphRoutes = (accountOfSession) => graphRoutes(graphServices, deps.config.bodyLimitBytes, accountOfSession);
  const operations = { metrics, admission, defaultRateLimit: deps.config.operations.rateLimit, metricsTokenSet: metricsToken !== null, workers: deps.config.workers, port: deps.config.port };
  app.use('/dashboard', dashboardRoutes({ db: deps.db, engines: deps.engines, logger: deps.logger, consoleGraphRoutes, allowPrivateWebhooks: deps.config.webhooks.allowPrivate, operations }));

  const api = express.Router();
  // Auth comes before body parsing, so an unauthenticated request costs no parsing. A known key
  // on POST or GET /api/graph skips the key read: its state is checked in the request's one
  // statement. With read replicas, so does a known key on the REST loan reads: the routing's one
  // statement on the primary checks it with the key's last write position (docs/scaling.md).
  const verifiedKeys = new VerifiedKeyCache();
  const checksActiveInStatement = (req: Request): boolean =>
    ((req.method === 'POST' || req.method === 'GET') && (req.path === '/graph' || req.path === '/graph/')) ||
    (deps.routing !== undefined && req.method === 'GET' && ROUTED_REST_READS.test(req.path));
  api.use(requireApiKey(deps.db, { verifiedKeys, checksActiveInStatement }));
  // Rate limits per key (README "Operations"): after the key is known, before any work.
  const rateLimit = rateLimitCheck(new RateLimiter(deps.db, deps.config.operations.rateLimit), deps.engines);
  api.use(rateLimitMiddleware(rateLimit));
  if (deps.routing) api.use(consistencyHeader());
  const apiGraphServices: GraphServices = { ...graphServices, routing: deps.routing, rateLimit };
  api.use('/graph', graphRoutes(apiGraphServices, deps.config.bodyLimitBytes));
  api.use(exactJsonBody(deps.config.bodyLimitBytes));
  api.use('/loan', loanRoutes(deps.db, deps.engines, deps.routing));
  api.use('/product', productRoutes(deps.db, deps.engines, deps.routing));
  api.use('/account', accountRoutes(deps.db, deps.engines, deps.routing));
  api.use('/investors', investorRoutes(deps.db, deps.engines));
  api.use('/remittances', remittanceRoutes(deps.db, deps.engines, deps.routing));
  api.use('/distributions', distributionRoutes(deps.db, deps.engines));
  api.use(openApiRoutes(deps.db, deps.engines));
  api.use((_req, res) => {
    res.status(404).json({ error: 'not found' });
  });
  app.use('/api', api);

  app.use(errorHandler(deps.logger));

  // Most POST /api/graph requests are answered before Express's per-request set-up (see
  // graphFastPath); whatever the fast path does not take goes through the app as assembled above.
  // Express's app function dispatches every request to `app.handle`, which is not in its types.
  const fastPath = graphFastPath(apiGraphServices, deps.config.bodyLimitBytes, verifiedKeys, rateLimit);
  const dispatch = app as unknown as { handle: (req: IncomingMessage, res: ServerResponse, callback?: unknown) => void };
  const withExpress = dispatch.handle.bind(app);
  // Metrics, the request log and traces see every request, the fast path's too (observeRequests.ts).
  const requestLog = new RequestLog(deps.logger, deps.config.operations.requestLog);
  const observe = observeRequests({ metrics, requestLog, traces: deps.config.operations.tracing ? new RequestTraces() : null });
  const observeClientError = observeClientErrors({ metrics, requestLog });
  dispatch.handle = observe
    ? (req, res, callback) => {
        observe(req, res);
        if (fastPath(req, res)) return;
        ObservedResponse.toExpress(res);
        withExpress(req, res, callback);
      }
    : (req, res, callback) => {
        if (!fastPath(req, res)) withExpress(req, res, callback);
      };
  return Object.assign(app, { serverObservers: { clientError: observeClientError, handshake: observeHandshakes({ metrics, requestLog }) } });
}

/**
 * Admission by cost of one process (README "Operations"): sized from its pool (PGlite: one
 * statement at a time), counted in its metrics, and made once — the HTTP routes and the
 * WebSocket API (its queries, its subscriptions' runs) ask the same object. Null when
 * `ADMISSION_COST_BUDGET=0`.
 */
export function processAdmission(db: Database, config: ServiceConfig, metrics: ServiceMetrics | null): CostAdmission | null {
  const settings = config.operations.admission;
  if (!settings) return null;
  const admission = new CostAdmission(sizeAdmission(settings, db.poolStatus?.().max ?? 1, config.maxQueryCost), metrics?.observeAdmission);
  metrics?.watchAdmission(admission);
  return admission;
}

/** The answer to a write undone as a conflict each time it ran (REST: 409, `code: conflict`). */
const WRITE_CONFLICT_MESSAGE = 'the write collided with concurrent writes and was undone each time it ran; nothing was written: send it again';

/**
 * Client mistakes get their 4xx; anything else is logged with an id and censored on the wire
 * (never a stack). On `/api/graph` every answer is GraphQL's `errors` shape in the type the
 * request's `Accept` ranks first (`graphResponseType`), as the route's own answers; elsewhere the
 * REST routes' JSON. (The dashboard's pages answer their own, as HTML: `dashboard/dashboardRoutes.ts`.)
 */
function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error, req, res, _next) => {
    if (res.headersSent) return res.end();
    const graphType = /^\/api\/graph(\/|$|\?)/.test(req.originalUrl) ? graphResponseType(req.get('accept')) : null;
    const graphError = (status: number, message: string, code: string, extensions: Record<string, unknown> = {}): void =>
      void res.status(status).type(graphType!).send(JSON.stringify({ errors: [{ message, extensions: { code, ...extensions } }] }));
    if (isDatabaseUnavailable(error)) return graphType ? sendGraphUnavailable(res, graphType) : sendRestUnavailable(res);
    if (isStatementTimeout(error)) {
      // Not a fault of ours: the operator sees what ran long (a warning, not an internal error).
      logger.warn({ event: 'statement.timeout', method: req.method, path: req.path }, 'a request ran past the statement timeout');
      return graphType ? sendGraphTimeout(res, graphType) : sendRestTimeout(res);
    }
    if (error instanceof UserInputError) {
      if (graphType) return graphError(error.status, error.message, 'invalid-request');
      res.status(error.status).json({
        error: error.message,
        ...(error instanceof PermissionRefused ? { role: error.role, permission: error.permission } : {}),
        ...(error.fields ? { fields: error.fields } : {}),
      });
      return;
    }
    const problem = bodyProblem(error, req, 'JSON');
    if (problem) {
      if (graphType) return graphError(problem.status, problem.message, problem.kind === 'too-large' ? 'request-too-large' : 'invalid-request');
      res.status(problem.status).json(problem.kind === 'too-large' ? { error: problem.message } : { error: problem.message, fields: {} });
      return;
    }
    // A write PostgreSQL undid as a deadlock or serialization failure on each of its runs
    // (`retryWriteConflicts`): nothing was written, and the same request may be sent again.
    if (isWriteConflict(error)) return graphType ? graphError(409, WRITE_CONFLICT_MESSAGE, 'conflict') : void res.status(409).json({ error: WRITE_CONFLICT_MESSAGE, code: 'conflict' });
    const id = randomUUID();
    logger.error({ errorId: id, method: req.method, path: req.path, err: error }, 'internal error');
    if (graphType) return graphError(500, 'internal error', 'internal', { id });
    res.status(500).json({ error: 'internal error', id });
  };
}
