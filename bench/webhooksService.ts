/**
 * The webhook bench's measure of what users feel (issue 16, Done-when 8): payment posts per second
 * THROUGH THE SERVICE, with and without an active endpoint. Used by `bench/webhooks.ts`
 * (`--modes service-off,service-worker-process,service-worker-in-process`, PostgreSQL only).
 *
 * The built service (`dist/server/main.js`, started as `npm run bench` starts it, with an admin key
 * of the bench's account) gets autocannon's load: `CONNECTIONS` connections posting the
 * `insert_payments_one` mutation of `queries.ts` (m1: a payment, returning the loan's next
 * scheduled row), the bodies rotating over the bench's loans. Rounds alternate without / with the
 * bench's endpoint active (subscribed to `payment.posted`), the order alternating per pair; per
 * pair the ratio with/without; reported: the median of the ratios. Three modes:
 * - `service-off`: WEBHOOK_WORKER=0 and no worker: what capture itself costs a posted payment;
 * - `service-worker-process`: WEBHOOK_WORKER=0 and `loanql worker` (`dist/cli/main.js worker`,
 *   default settings) as its own process during the rounds, as the deployment README recommends
 *   for busy writers;
 * - `service-worker-in-process`: WEBHOOK_WORKER=1 (the default: the service delivers too).
 * Before every round the backlog of the previous one is delivered (`drain`, not timed).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { cpuSeconds, freePort, ROOT, runCli, SHIPPED_NODE_FLAGS, startServer, type ServerProcess } from './processes.js';
import { QUERIES } from './queries.js';

const CONNECTIONS = 16;
export const SERVICE_MODES = ['service-off', 'service-worker-process', 'service-worker-in-process'] as const;
export type ServiceMode = (typeof SERVICE_MODES)[number];

export interface ServiceBenchContext {
  readonly databaseUrl: string;
  readonly metadataPath: string;
  readonly accountSlug: string;
  readonly loans: readonly string[];
  readonly pairs: number;
  readonly roundMs: number;
  setEndpointActive(active: boolean): Promise<void>;
  /** Delivers every captured event of the account (not timed). */
  drain(): Promise<void>;
  receivedCount(): Promise<number>;
  /** Payments of the bench's account so far (what a round wrote is the difference). */
  paymentCount(): Promise<number>;
  /** CPU seconds of the PostgreSQL server's processes so far. */
  postgresCpu(): number;
  receiverPid: number;
}

export interface ServiceRound {
  endpoint: boolean;
  writesPerSecond: number;
  /** Requests that wrote no payment (non-2xx, socket errors, GraphQL errors): must be 0. */
  failed: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  delivered: number;
  /** CPU seconds per second of wall time. */
  cpu: { service: number; worker: number; postgres: number; receiver: number };
  load1: number;
}

export interface ServiceModeResult {
  mode: ServiceMode;
  pairs: { without: ServiceRound; with: ServiceRound; ratio: number }[];
  medianRatio: number;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/** `loanql worker` as its own process; resolves once it says it runs. */
async function startWorkerProcess(databaseUrl: string, metadataPath: string): Promise<{ child: ChildProcess; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [join(ROOT, 'dist', 'cli', 'main.js'), 'worker'], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl, METADATA_PATH: metadataPath, WEBHOOK_ALLOW_PRIVATE: '1', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (output.includes('webhook worker running')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`loanql worker exited with ${code}: ${output}`)));
  });
  return {
    child,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 8_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

async function startService(context: ServiceBenchContext, workerInProcess: boolean): Promise<ServerProcess> {
  const port = await freePort();
  return startServer(
    `service${workerInProcess ? ' (worker in process)' : ''}`,
    [...SHIPPED_NODE_FLAGS, join(ROOT, 'dist', 'server', 'main.js')],
    {
      DATABASE_URL: context.databaseUrl,
      METADATA_PATH: context.metadataPath,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      WEBHOOK_WORKER: workerInProcess ? '1' : '0',
      WEBHOOK_ALLOW_PRIVATE: '1',
    },
    port,
    async (url) => (await fetch(`${url}/healthz`)).ok,
  );
}

/** Runs the three modes (or those asked for) and returns their results. */
export async function measureThroughService(context: ServiceBenchContext, modes: readonly ServiceMode[]): Promise<ServiceModeResult[]> {
  process.env.METADATA_PATH = context.metadataPath; // for the CLI (`runCli` passes this process's environment)
  const key = runCli(context.databaseUrl, ['key', 'create', '--account', context.accountSlug, '--name', 'bench webhooks']).trim().split('\n').pop() ?? '';
  if (!key.startsWith('lq_')) throw new Error(`no key from loanql key create: ${key}`);
  const m1 = QUERIES.find((query) => query.id === 'm1')!;
  const bodies = context.loans.map((loan) =>
    JSON.stringify({ query: m1.graphql, operationName: m1.operationName, variables: { loan, date: '2026-11-20', amount: '0.01' } }),
  );
  const results: ServiceModeResult[] = [];
  for (const mode of SERVICE_MODES.filter((m) => modes.includes(m))) {
    const service = await startService(context, mode === 'service-worker-in-process');
    const worker = mode === 'service-worker-process' ? await startWorkerProcess(context.databaseUrl, context.metadataPath) : null;
    try {
      const round = async (active: boolean, seconds: number): Promise<ServiceRound> => {
        await context.setEndpointActive(active);
        const receivedBefore = await context.receivedCount();
        const before = { service: cpuSeconds(service.pid), worker: worker ? cpuSeconds(worker.child.pid!) : 0, postgres: context.postgresCpu(), receiver: cpuSeconds(context.receiverPid) };
        const paymentsBefore = await context.paymentCount();
        let next = 0;
        const started = performance.now();
        const instance = autocannon({
          url: service.url,
          connections: CONNECTIONS,
          duration: seconds,
          timeout: 30,
          requests: [
            {
              method: 'POST',
              path: '/api/graph',
              headers: { 'content-type': 'application/json', authorization: `Token ${key}` },
              setupRequest: (request) => ({ ...request, body: bodies[next++ % bodies.length]! }),
            },
          ],
        });
        const result = await instance;
        const wall = (performance.now() - started) / 1000;
        // Writes are the payments the round stored (a GraphQL error answers 200 too).
        const written = (await context.paymentCount()) - paymentsBefore;
        return {
          endpoint: active,
          writesPerSecond: written / result.duration,
          failed: Math.max(0, result.requests.total - written) + result.errors,
          latencyP50Ms: result.latency.p50,
          latencyP99Ms: result.latency.p99,
          delivered: (await context.receivedCount()) - receivedBefore,
          cpu: {
            service: (cpuSeconds(service.pid) - before.service) / wall,
            worker: worker ? (cpuSeconds(worker.child.pid!) - before.worker) / wall : 0,
            postgres: (context.postgresCpu() - before.postgres) / wall,
            receiver: (cpuSeconds(context.receiverPid) - before.receiver) / wall,
          },
          load1: loadavg()[0]!,
        };
      };
      await context.drain();
      await round(false, 2); // warm-up: plans cached, pool connected
      const pairs: ServiceModeResult['pairs'] = [];
      for (let pair = 0; pair < context.pairs; pair++) {
        const order = pair % 2 === 0 ? [false, true] : [true, false];
        const rounds = new Map<boolean, ServiceRound>();
        for (const active of order) {
          rounds.set(active, await round(active, context.roundMs / 1000));
          if (active) await context.drain(); // the round's backlog, before the next round (not timed)
        }
        const without = rounds.get(false)!;
        const withHook = rounds.get(true)!;
        pairs.push({ without, with: withHook, ratio: withHook.writesPerSecond / without.writesPerSecond });
        process.stderr.write(`bench webhooks: ${mode} pair ${pair + 1}: ${without.writesPerSecond.toFixed(0)} → ${withHook.writesPerSecond.toFixed(0)} posts/s\n`);
      }
      results.push({ mode, pairs, medianRatio: median(pairs.map((p) => p.ratio)) });
    } finally {
      await worker?.stop();
      await service.stop();
    }
  }
  return results;
}
