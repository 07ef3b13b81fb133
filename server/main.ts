#!/usr/bin/env node
/**
 * `npm start`: migrate, set up the demo on an empty database, serve, and shut down cleanly.
 */
import cluster from 'node:cluster';
import { keepStatisticsFresh, migrate, openServiceDatabase, ReadReplicas, type OpenedDatabase } from '../db/index.js';
import { setUpDemoIfEmpty } from '../app/demo.js';
import { startFeeJob } from '../app/feeJob.js';
import { purgeExpiredIdempotencyKeys } from '../app/idempotency.js';
import { buildServingEngine, EngineHolder, metadataWarnings } from '../app/engineHolder.js';
import { WebhookWorker } from '../app/webhooks/index.js';
import { configFromEnv, engineOptionsOf, metadataFileOf } from '../app/config.js';
import { createApp, processAdmission } from './createApp.js';
import { createHttpServer, listen } from './httpServer.js';
import type { ServiceState } from '../api/routes/health.js';
import { createLogger, flushLog } from '../app/logger.js';
import { bannerLines, listeningUrl, runClusterPrimary, showingDemoIfFails, tellStartFailure } from './cluster.js';
import { ReadRouting } from '../api/readRouting.js';
import { ServiceMetrics } from '../app/operations/serviceMetrics.js';
import { clusterScrape } from './clusterMetrics.js';
import { startSubscriptions } from './subscriptions.js';

/**
 * The database while the start is under way: a start that fails before it serves (a migration, a
 * database a newer version migrated, the metadata, the port) closes it on the way out — PGlite
 * shut down cleanly and `DATA_DIR`'s lock released, as a stop does — instead of leaving the
 * embedded database to crash recovery at its next open.
 */
let starting: OpenedDatabase | null = null;

async function main(): Promise<void> {
  const config = configFromEnv();
  const logger = createLogger(config.logLevel);
  // A rejection nobody awaited (say, a background write while the database restarts) is logged,
  // never a reason to take the whole service down.
  process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled rejection'));
  // WORKERS > 1: this process only starts, watches and stops the API processes (server/cluster.ts).
  if (config.workers > 1 && cluster.isPrimary) return runClusterPrimary(config, logger);
  const started = Date.now();
  // Traces (OTEL_*, README "Operations"): the SDK is started only when an exporter is asked for.
  // Loaded only then: OpenTelemetry's SDK costs about 0.15 CPU-seconds to load.
  const stopTracing = config.operations.tracing ? (await import('./tracing.js')).startTracing(logger) : null;
  const opened = await openServiceDatabase({
    ...config.database,
    onConnectionError: (error) => logger.warn({ err: { message: error.message, code: (error as { code?: unknown }).code } }, 'database connection lost'),
  });
  starting = opened;
  const applied = await migrate(opened.database);
  if (applied.length) logger.info({ migrations: applied }, 'migrations applied');
  // In a cluster the primary process has set up the demo (and prints the banner).
  const demo = cluster.isWorker ? null : await setUpDemoIfEmpty(opened.database, config.demoScale);
  // DATABASE_REPLICA_URLS: reads on streaming replicas, with read-your-writes (README "Scaling out").
  const { readReplicas } = config;
  const replicas = readReplicas.urls.length
    ? new ReadReplicas(opened.database, {
        urls: readReplicas.urls,
        maxLagMs: readReplicas.maxLagMs,
        checkIntervalMs: readReplicas.checkIntervalMs,
        ...(config.database.statementTimeoutMs ? { statementTimeoutMs: config.database.statementTimeoutMs } : {}),
        ...(config.database.maxConnections ? { maxConnections: config.database.maxConnections } : {}),
        onConnectionError: (error) => logger.warn({ err: { message: error.message, code: (error as { code?: unknown }).code } }, 'read replica connection lost'),
        onConflict: (replica, error) =>
          logger.warn({ replica: replica.name, address: replica.address, err: { message: error.message, code: (error as { code?: unknown }).code }, conflicts: replica.conflicts }, 'a read on a replica was cancelled by its recovery; it ran again on the primary'),
        onChange: (replica) => logger[replica.status === 'serving' ? 'info' : 'warn']({ replica: replica.name, address: replica.address, status: replica.status, lagMs: replica.lagMs, error: replica.error }, 'read replica status changed'),
      })
    : null;
  await replicas?.start();
  const routing = replicas ? new ReadRouting(replicas, opened.database, readReplicas.windowMs) : undefined;

  const engineOptions = engineOptionsOf(config);
  const metadataPath = metadataFileOf(
    config,
    (path) => logger.info({ metadata: path, from: config.shippedMetadataPath }, 'metadata file created from the shipped default; edit it to change the query interface'),
    (path, reason) => logger.warn({ metadata: path, reason, serving: config.shippedMetadataPath }, 'cannot create the metadata file; serving the shipped default (create the file to edit it)'),
    (path, section, names) =>
      logger.warn({ metadata: path, section, missing: names, shipped: config.shippedMetadataPath }, `the metadata file has no ${section} ${names.join(', ')} of the shipped default (made from an older version, or removed on purpose); copy them from the shipped file to use them`),
  );
  const warnAboutKeys = (warnings: readonly string[] | undefined): void => {
    if (warnings?.length) logger.warn({ metadata: metadataPath, warnings }, 'the metadata leaves active API keys or webhook endpoints without a role, variable or event type they use (see warnings)');
  };
  const engines = new EngineHolder(await buildServingEngine(metadataPath, opened.database, engineOptions), metadataPath, opened.database, engineOptions, (outcome) => {
    if (outcome.ok) logger.info({ metadata: metadataPath }, 'metadata reloaded; new schema serving');
    else logger.error({ metadata: metadataPath, problems: outcome.problems }, 'metadata edit refused; previous schema keeps serving');
    warnAboutKeys(outcome.warnings);
  });
  warnAboutKeys(await metadataWarnings(engines.engine, opened.database));
  engines.watch();
  process.on('SIGHUP', () => void engines.reload());
  // Idempotency keys older than their 24 h window are replaced when reused; this removes the rest.
  const purge = (): void => void purgeExpiredIdempotencyKeys(opened.database).catch((error: unknown) => logger.warn({ err: error }, 'purging idempotency keys failed'));
  setInterval(purge, 60 * 60 * 1000).unref();

  // Webhook deliveries (README "Webhooks"); WEBHOOK_WORKER=0 leaves them to `loanql worker`.
  // Metrics (METRICS_TOKEN, README "Operations"): this process's registry; in a cluster, scraped through the primary.
  const metrics = config.operations.metricsToken ? new ServiceMetrics({ db: opened.database, replicas }) : null;
  const scrapeMetrics = metrics && cluster.isWorker ? clusterScrape(metrics.registry) : undefined;
  const worker = config.webhooks.workerInService ? new WebhookWorker(opened.database, config.webhooks, logger, metrics?.observeDelivery) : null;
  worker?.start();
  // The daily fee job (late fees, delinquency, interest due): where the webhook worker runs (app/feeJob.ts).
  const stopFeeJob = config.webhooks.workerInService ? startFeeJob(opened.database, logger) : null;
  // The embedded database has no autovacuum: its tables are analyzed as they grow (db/statisticsUpkeep.ts).
  keepStatisticsFresh(opened.database, { onError: (error) => logger.warn({ err: error }, 'analyzing the grown tables failed; the next look tries again') });

  // Admission by cost: one per process, asked by the HTTP routes and the WebSocket API alike.
  const admission = processAdmission(opened.database, config, metrics);
  const state: ServiceState = { stopping: false };
  const app = createApp({ db: opened.database, logger, config, databaseDescription: opened.description, engines, state, ...(routing ? { routing } : {}), metrics, admission, ...(scrapeMetrics ? { scrapeMetrics } : {}) });
  const subscriptions = await startSubscriptions({ db: opened.database, engines, logger, config, routing, admission, metrics });
  state.subscriptions = () => subscriptions.sockets.usage;
  metrics?.watchSubscriptions(() => subscriptions.sockets.usage);
  const server = createHttpServer(app, config.http, subscriptions.sockets, app.serverObservers);
  await showingDemoIfFails(demo, () => listen(server, config.port, config.host));
  const url = listeningUrl(config.host, config.port);
  starting = null;
  logger.info({ port: config.port, database: opened.description, startupMs: Date.now() - started }, 'listening');

  const replicaNote = replicas ? `; reads on ${replicas.count} replica${replicas.count > 1 ? 's' : ''}` : '';
  if (!cluster.isWorker) process.stdout.write(`\n${bannerLines(url, opened.description + replicaNote, demo).join('\n')}\n\n`);

  // Graceful shutdown: stop accepting connections (`/readyz` says 503 meanwhile), let requests in
  // flight finish for up to SHUTDOWN_GRACE_MS (idle keep-alive sockets are closed at once, busy
  // ones after their response), then cut what is left, close the pool or checkpoint and close
  // PGlite (releasing the data-directory lock), and exit 0.
  const stop = (signal: string): void => {
    if (state.stopping) return;
    state.stopping = true;
    const stopStarted = Date.now();
    logger.info({ signal, graceMs: config.shutdownGraceMs }, 'shutting down');
    engines.close();
    // WebSocket connections are told the service is going away (1001); their clients reconnect elsewhere.
    const socketsClosed = subscriptions.close().catch((error: unknown) => logger.warn({ err: error }, 'closing the WebSocket connections failed'));
    const drained = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const idleSweep = setInterval(() => server.closeIdleConnections(), 100);
    const grace = new Promise<void>((resolve) => setTimeout(resolve, config.shutdownGraceMs).unref());
    void Promise.race([drained, grace])
      .then(async () => {
        clearInterval(idleSweep);
        server.closeAllConnections();
        await socketsClosed;
        // Deliveries in flight finish or are left leased; the next start retries them (at least once).
        if (worker) await worker.stop();
        // A fee run under way ends (its transactions commit or roll back) before the database closes.
        await stopFeeJob?.();
        await replicas?.close();
        await opened.close();
        await stopTracing?.().catch((error: unknown) => logger.warn({ err: error }, 'flushing traces failed'));
        logger.info({ shutdownMs: Date.now() - stopStarted }, 'stopped');
        // The log's destination is asynchronous (app/logger.ts): its last lines go out before the exit.
        flushLog(logger);
        process.exit(0);
      })
      .catch((error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        flushLog(logger);
        process.exit(1);
      });
    setTimeout(() => {
      flushLog(logger);
      process.exit(1);
    }, config.shutdownGraceMs + 15_000).unref();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch(async (error: unknown) => {
  const reason = error instanceof Error ? error.message : String(error);
  // An API process of a cluster tells its primary, which logs the attempt and tries again later.
  if (!(await tellStartFailure(reason))) process.stderr.write(`loanql failed to start: ${reason}\n`);
  const closing = starting?.close().catch(() => undefined);
  if (closing) await Promise.race([closing, new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
  process.exit(1);
});
