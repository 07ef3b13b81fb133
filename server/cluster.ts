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
 * on SIGTERM like a single process. A worker that dies unasked after it served is replaced (after
 * a pause that grows while it keeps dying at once). One whose start fails before it serves (it
 * tells why: `tellStartFailure`) is logged once with that reason and started again after 1 s, 2 s,
 * 4 s, … (at most 30 s); after `START_ATTEMPTS` such failures in a row with no worker ever
 * listening, the primary gives up (its start fails: exit 1, one line). SIGTERM/SIGINT: every worker drains and exits, then the
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
  let everListened = false;
  let quickDeaths = 0;
  let failedStarts = 0;
  let giveUp: ((error: Error) => void) | null = null;
  const fork = (): Worker => {
    const forkedAt = Date.now();
    const worker = cluster.fork();
    let startFailure: string | null = null;
    worker.on('message', (message: unknown) => {
      const failure = startFailureOf(message);
      if (failure !== null) startFailure = failure;
    });
    worker.once('listening', () => {
      listening.add(worker.id);
      everListened = true;
      failedStarts = 0;
    });
    worker.once('exit', (code, signal) => {
      const served = listening.delete(worker.id);
      if (stopping) return;
      if (!served) {
        // It never served: a start that failed (the metadata, a setting, the database). Tried again
        // after a pause that doubles; given up when no process of this service has ever started.
        failedStarts += 1;
        const reason = startFailure ?? `exited before serving (${signal ?? `code ${code}`})`;
        if (!everListened && failedStarts >= START_ATTEMPTS) {
          giveUp?.(new Error(`no API process started: ${failedStarts} starts in a row failed, the last: ${reason}`));
          return;
        }
        const pause = startRetryPauseMs(failedStarts);
        logger.error({ pid: worker.process.pid, code, signal, reason, failedStarts, restartInMs: pause }, 'an API process failed to start; trying again');
        setTimeout(() => {
          if (!stopping) fork();
        }, pause).unref();
        return;
      }
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

  // The demo's login and key are printed even when the processes never start (they exist nowhere else).
  await showingDemoIfFails(
    demo,
    () =>
      new Promise<void>((resolve, reject) => {
        const deadline = setTimeout(() => fail(new Error('the API processes did not start listening within 120 s')), 120_000);
        const poll = setInterval(() => {
          if (listening.size >= config.workers) {
            clearInterval(poll);
            clearTimeout(deadline);
            giveUp = null;
            resolve();
          }
        }, 20);
        const fail = (error: Error): void => {
          clearInterval(poll);
          clearTimeout(deadline);
          stopping = true;
          for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGKILL');
          reject(error);
        };
        giveUp = fail;
        for (let index = 0; index < config.workers; index++) fork();
      }),
  );
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

/** How many starts of an API process in a row may fail, while none has ever started, before the primary gives up. */
const START_ATTEMPTS = 5;

/** The pause before another start after `failedStarts` failed in a row: 1 s, doubling, at most 30 s. */
export function startRetryPauseMs(failedStarts: number): number {
  return Math.min(30_000, 1_000 * 2 ** Math.max(0, failedStarts - 1));
}

/** What an API process tells the primary when its start fails (`tellStartFailure`), before it exits. */
interface StartFailureMessage {
  readonly loanqlStartFailure: string;
}

function startFailureOf(message: unknown): string | null {
  return typeof message === 'object' && message !== null && typeof (message as StartFailureMessage).loanqlStartFailure === 'string' ? (message as StartFailureMessage).loanqlStartFailure : null;
}

/**
 * In an API process of a cluster: tells the primary why the start failed, which logs it with the
 * attempt (one line per attempt). Resolves false when this is no cluster's worker (the caller
 * prints the reason itself) or the primary cannot be told.
 */
export function tellStartFailure(reason: string): Promise<boolean> {
  if (!cluster.isWorker || !process.send) return Promise.resolve(false);
  const message: StartFailureMessage = { loanqlStartFailure: reason };
  return new Promise((resolve) => {
    try {
      process.send!(message, undefined, {}, (error) => resolve(!error));
    } catch {
      resolve(false);
    }
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
