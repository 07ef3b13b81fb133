import cluster, { type Worker } from 'node:cluster';
import { migrate, openServiceDatabase } from '../db/index.js';
import { DEMO_ACCOUNT, setUpDemoIfEmpty, type DemoSetUp } from '../app/demo.js';
import { metadataFileOf, type ServiceConfig } from '../app/config.js';
import type { Logger } from '../app/logger.js';
import { answerClusterMetrics } from './clusterMetrics.js';
import { checkCanListen } from './httpServer.js';

/**
 * `WORKERS=N` (N > 1): this process is the primary of a node:cluster. It migrates and sets up the
 * demo once, makes the metadata file once, then forks N API processes that share the port (the
 * primary accepts connections and hands them out round-robin). Each worker opens its own pool,
 * loads and watches the metadata itself (one reload per process on an edit), runs its own webhook
 * worker (deliveries are claimed with `FOR UPDATE SKIP LOCKED`, so none is sent twice) and drains
 * on SIGTERM like a single process. A worker that dies unasked is replaced (after a pause that
 * grows while it keeps dying at once). SIGTERM/SIGINT: every worker drains and exits, then the
 * primary exits 0. SIGHUP is passed on (every worker reloads the metadata).
 */
export async function runClusterPrimary(config: ServiceConfig, logger: Logger): Promise<void> {
  const started = Date.now();
  const opened = await openServiceDatabase({ ...config.database });
  let demo: DemoSetUp | null;
  try {
    const applied = await migrate(opened.database);
    if (applied.length) logger.info({ migrations: applied }, 'migrations applied');
    demo = await setUpDemoIfEmpty(opened.database, config.demoScale);
  } finally {
    await opened.close();
  }
  metadataFileOf(config);
  await showingDemoIfFails(demo, () => checkCanListen(config.port, config.host));
  // GET /metrics in any API process answers every process's figures, gathered here (clusterMetrics.ts).
  if (config.operations.metricsToken) answerClusterMetrics();

  let stopping = false;
  const listening = new Set<number>();
  let quickDeaths = 0;
  const fork = (): Worker => {
    const forkedAt = Date.now();
    const worker = cluster.fork();
    worker.once('listening', () => listening.add(worker.id));
    worker.once('exit', (code, signal) => {
      listening.delete(worker.id);
      if (stopping) return;
      const lived = Date.now() - forkedAt;
      quickDeaths = lived < 5_000 ? quickDeaths + 1 : 0;
      const pause = Math.min(10_000, quickDeaths === 0 ? 0 : 250 * 2 ** (quickDeaths - 1));
      logger.error({ pid: worker.process.pid, code, signal, restartInMs: pause }, 'an API process died; starting another');
      setTimeout(() => {
        if (!stopping) fork();
      }, pause).unref();
    });
    return worker;
  };
  for (let index = 0; index < config.workers; index++) fork();

  await new Promise<void>((resolve, reject) => {
    const deadline = setTimeout(() => reject(new Error('the API processes did not start listening within 120 s')), 120_000);
    const poll = setInterval(() => {
      if (listening.size >= config.workers) {
        clearInterval(poll);
        clearTimeout(deadline);
        resolve();
      }
    }, 20);
  });
  const url = listeningUrl(config.host, config.port);
  logger.info({ port: config.port, workers: config.workers, database: opened.description, startupMs: Date.now() - started }, 'listening');
  process.stdout.write(`\n${bannerLines(url, `${opened.description}; ${config.workers} API processes`, demo).join('\n')}\n\n`);

  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down the API processes');
    const workers = Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker !== undefined);
    let left = workers.length;
    const done = (): void => {
      logger.info({}, 'stopped');
      process.exit(0);
    };
    if (left === 0) return done();
    for (const worker of workers) {
      worker.once('exit', () => {
        left -= 1;
        if (left === 0) done();
      });
      worker.process.kill('SIGTERM');
    }
    setTimeout(() => {
      for (const worker of workers) worker.process.kill('SIGKILL');
      process.exit(1);
    }, config.shutdownGraceMs + 20_000).unref();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGHUP', () => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGHUP');
  });
}

/**
 * The address the banner gives: the host the service listens on, or `localhost` when it listens
 * on every address (`0.0.0.0`, `::`); an IPv6 address in brackets.
 */
export function listeningUrl(host: string, port: number): string {
  const name = host === '0.0.0.0' || host === '::' || host === '' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return `http://${name}:${port}`;
}

/** The start-up banner: where the service is, and the demo's login and key when it was just set up. */
export function bannerLines(url: string, databaseDescription: string, demo: DemoSetUp | null): string[] {
  const lines = [`loanql is serving at ${url}  (database: ${databaseDescription})`, `Dashboard: ${url}/dashboard`];
  if (demo) {
    lines.push(...demoLines(demo), `  Try: curl -H "Authorization: Token ${demo.apiKey}" ${url}/api/loan`);
  } else {
    lines.push('Existing data kept. To make a new API key for the demo account:', `  npm run loanql -- key create --account ${DEMO_ACCOUNT}`);
  }
  return lines;
}

/**
 * Runs `attempt` (listening on the port); when it fails, prints the demo set up on this start
 * first: its login and key exist nowhere else, and they work once the service starts on a free
 * port. Then the failure goes on to its one line.
 */
export async function showingDemoIfFails(demo: DemoSetUp | null, attempt: () => Promise<void>): Promise<void> {
  try {
    await attempt();
  } catch (error) {
    if (demo) process.stdout.write(`\n${demoLines(demo).join('\n')}\n\n`);
    throw error;
  }
}

/** The demo just set up: its login and key, which exist only in this output (the database keeps hashes). */
function demoLines(demo: DemoSetUp): string[] {
  return [
    `Demo account "${demo.accountSlug}" created with ${demo.loans} loan${demo.loans === 1 ? '' : 's'}.`,
    `  Dashboard login: ${demo.adminEmail} / ${demo.adminPassword}`,
    `  Demo API key:    ${demo.apiKey}`,
    '  Both are shown only this once (they are stored hashed).',
  ];
}
