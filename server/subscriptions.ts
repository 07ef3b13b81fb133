import { randomUUID } from 'node:crypto';
import type { Database } from '../db/index.js';
import { isMetadataMismatch, LiveQueries } from '../engine/index.js';
import type { EngineHolder } from '../app/engineHolder.js';
import type { ServiceConfig } from '../app/config.js';
import type { Logger } from '../app/logger.js';
import { listenForChanges } from '../app/changeNotices.js';
import { GraphSockets, type SocketOperationFacts, type SocketOperationType, type SocketOutcome } from '../api/graphSocket.js';
import type { ReadRouting } from '../api/readRouting.js';
import { RateLimiter } from '../app/operations/rateLimiter.js';
import { liveAdmission, type CostAdmission } from '../app/operations/costAdmission.js';
import type { ServiceMetrics } from '../app/operations/serviceMetrics.js';

/** GraphQL subscriptions of one process: the WebSocket API, its live queries, and the change notices that drive them. */
export interface Subscriptions {
  readonly sockets: GraphSockets;
  readonly live: LiveQueries;
  /** Closes every connection and stops listening. */
  close(): Promise<void>;
}

/**
 * Starts the subscriptions of a process (README "Subscriptions"): `LiveQueries` over the
 * database (reads on the replicas with `routing`), the WebSocket API (`api/graphSocket.ts`) for
 * the HTTP server's upgrades, and the LISTEN that feeds both — a write notice refreshes the
 * cohorts reading its table, an `api_keys` notice re-checks the keys of open connections.
 */
export async function startSubscriptions(deps: {
  readonly db: Database;
  readonly engines: EngineHolder;
  readonly logger: Logger;
  readonly config: ServiceConfig;
  readonly routing?: ReadRouting | undefined;
  /** The process's admission by cost, the HTTP routes' own (`processAdmission`): every run of a subscription and every query over the socket asks it. */
  readonly admission?: CostAdmission | null | undefined;
  /** The process's metrics: the operations clients start are counted there. */
  readonly metrics?: ServiceMetrics | null | undefined;
}): Promise<Subscriptions> {
  const { db, engines, logger, config, routing } = deps;
  const admission = deps.admission ?? null;
  const settings = config.subscriptions;
  const replicas = routing?.replicas;
  // SUBSCRIPTION_POLL_MS: Hasura's design (every cohort re-run on a timer, notices ignored), for bench/subscriptions.ts.
  const polling = settings.pollIntervalMs > 0;
  const live = new LiveQueries(db, {
    refreshWindowMs: settings.refreshWindowMs,
    fallbackIntervalMs: polling ? settings.pollIntervalMs : settings.fallbackIntervalMs,
    admission: admission ? liveAdmission(admission) : null,
    ...(replicas ? { reads: { forRead: (atLeast: bigint | null) => replicas.forRequest(atLeast), primaryPosition: () => replicas.primaryPosition() } } : {}),
    onFailure: (error) => {
      logger.warn({ err: error }, 'a live query refresh failed; it runs again on the next change');
      // A table or column gone from under the metadata: /readyz names it (app/engineHolder.ts).
      if (isMetadataMismatch(error)) engines.noteMismatch();
    },
  });
  const sockets = new GraphSockets({
    db,
    engines,
    logger,
    live,
    admission,
    onOperation: socketOperationObserver(logger, config, deps.metrics ?? null),
    ...(routing ? { routing } : {}),
    // The buckets are rows of the database: this limiter and the HTTP routes' share each key's.
    rateLimiter: new RateLimiter(db, config.operations.rateLimit),
    limits: { perKey: settings.perKey, perProcess: settings.perProcess, maxBufferedBytes: settings.maxBufferedBytes, maxMessageBytes: config.bodyLimitBytes },
  });
  const checkKeys = (accountId: string | null): void => void sockets.noticeKeyChange(accountId).catch((error: unknown) => logger.warn({ err: error }, 'checking the keys of WebSocket connections failed'));
  const stopListening = await listenForChanges(
    db,
    (table, accountId, loans) => {
      if (table === 'api_keys') checkKeys(accountId);
      if (!polling) live.noticeChange(table, accountId, loans);
    },
    () => {
      checkKeys(null);
      if (!polling) live.refreshEverything();
    },
  );
  // A reloaded metadata: subscriptions it plans otherwise are told to subscribe again (1012).
  const stopWatchingMetadata = engines.onSwap(() => sockets.noticeMetadataReload());
  // What a notice cannot see (a key whose account went away, say) is caught at the fallback's pace.
  const keySweep = settings.fallbackIntervalMs > 0 ? setInterval(() => checkKeys(null), settings.fallbackIntervalMs) : null;
  keySweep?.unref();
  return {
    sockets,
    live,
    async close() {
      if (keySweep) clearInterval(keySweep);
      stopWatchingMetadata();
      live.close();
      await sockets.close();
      await stopListening();
    },
  };
}

/**
 * Each operation a WebSocket client starts: counted in the metrics and written to the request log
 * (README "Operations", "Request log": message `websocket operation`, at `REQUEST_LOG_LEVEL`, a
 * started one sampled by `REQUEST_LOG_SAMPLE`, a refused one always). Undefined when neither is on.
 */
function socketOperationObserver(
  logger: Logger,
  config: ServiceConfig,
  metrics: ServiceMetrics | null,
): ((operation: SocketOperationType, outcome: SocketOutcome, facts: SocketOperationFacts) => void) | undefined {
  const { level, sample } = config.operations.requestLog;
  const logging = level !== 'silent' && logger.isLevelEnabled(level);
  if (!metrics && !logging) return undefined;
  return (operation, outcome, facts) => {
    metrics?.observeSocketOperation(operation, outcome);
    if (!logging || (outcome === 'started' && sample < 1 && Math.random() >= sample)) return;
    logger[level]({ requestId: randomUUID(), route: 'WS /api/graph', operationType: operation === 'none' ? null : operation, outcome, ...facts }, 'websocket operation');
  };
}
