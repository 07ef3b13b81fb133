#!/usr/bin/env node
/**
 * `npm start`: migrate, set up the demo on an empty database, serve, and shut down cleanly.
 */
import type { Server } from 'node:http';
import { migrate, openServiceDatabase } from '../db/index.js';
import { setUpDemoIfEmpty, DEMO_ACCOUNT } from '../app/demo.js';
import { purgeExpiredIdempotencyKeys } from '../app/idempotency.js';
import { buildServingEngine, EngineHolder } from '../app/engineHolder.js';
import { WebhookWorker } from '../app/webhooks/index.js';
import { configFromEnv } from './config.js';
import { createApp } from './createApp.js';
import { createLogger } from './logger.js';

async function main(): Promise<void> {
  const config = configFromEnv();
  const logger = createLogger(config.logLevel);
  const started = Date.now();
  const opened = await openServiceDatabase(config.database);
  const applied = await migrate(opened.database);
  if (applied.length) logger.info({ migrations: applied }, 'migrations applied');
  const demo = await setUpDemoIfEmpty(opened.database);

  const engineOptions = { maxDepth: config.maxDepth, maxRows: config.maxRows, planCacheSize: config.planCacheSize, maxInsertObjects: config.maxInsertObjects };
  const engines = new EngineHolder(await buildServingEngine(config.metadataPath, opened.database, engineOptions), config.metadataPath, opened.database, engineOptions, (outcome) => {
    if (outcome.ok) logger.info({ metadata: config.metadataPath }, 'metadata reloaded; new schema serving');
    else logger.error({ metadata: config.metadataPath, problems: outcome.problems }, 'metadata edit refused; previous schema keeps serving');
  });
  engines.watch();
  process.on('SIGHUP', () => void engines.reload());
  // Idempotency keys older than their 24 h window are replaced when reused; this removes the rest.
  const purge = (): void => void purgeExpiredIdempotencyKeys(opened.database).catch((error: unknown) => logger.warn({ err: error }, 'purging idempotency keys failed'));
  setInterval(purge, 60 * 60 * 1000).unref();

  // Webhook deliveries (README "Webhooks"); WEBHOOK_WORKER=0 leaves them to `loanql worker`.
  const worker = config.webhooks.workerInService ? new WebhookWorker(opened.database, config.webhooks, logger) : null;
  worker?.start();

  const app = createApp({ db: opened.database, logger, config, databaseDescription: opened.description, engines });
  const server: Server = await new Promise((resolve, reject) => {
    const listening = app.listen(config.port, config.host, (error?: Error) => (error ? reject(error) : resolve(listening)));
  });
  const url = `http://localhost:${config.port}`;
  logger.info({ port: config.port, database: opened.description, startupMs: Date.now() - started }, 'listening');

  const lines = [`loanql is serving at ${url}  (database: ${opened.description})`, `Dashboard: ${url}/dashboard`];
  if (demo) {
    lines.push(
      `Demo account "${demo.accountSlug}" created with ${demo.loans} loans.`,
      `  Dashboard login: ${demo.adminEmail} / ${demo.adminPassword}`,
      `  Demo API key:    ${demo.apiKey}`,
      '  Both are shown only this once (they are stored hashed).',
      `  Try: curl -H "Authorization: Token ${demo.apiKey}" ${url}/api/loan`,
    );
  } else {
    lines.push(
      'Existing data kept. To make a new API key for the demo account:',
      `  npm run loanql -- key create --account ${DEMO_ACCOUNT}`,
    );
  }
  process.stdout.write(`\n${lines.join('\n')}\n\n`);

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    engines.close();
    server.close(() => {
      (worker ? worker.stop() : Promise.resolve())
        .then(() => opened.close())
        .then(() => process.exit(0))
        .catch(() => process.exit(1));
    });
    server.closeIdleConnections();
    setTimeout(() => process.exit(1), 10_000).unref();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(`loanql failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
