/**
 * Webhook benchmark (issue 16, Done-when 8): the cost of event capture on writes, and delivery
 * throughput to a local receiver. Not part of `npm run bench`.
 *
 *   node --import tsx bench/webhooks.ts                              # in-memory PGlite, 1 writer
 *   DATABASE_URL=postgres://… node --import tsx bench/webhooks.ts     # PostgreSQL, 8 writers (creates an account, deletes it at the end)
 *   … bench/webhooks.ts --pairs 4 --service-pairs 8 --round-seconds 3 [--modes …] --json out.json
 *
 * Writes: `WRITERS` concurrent writers each post payments (one INSERT per transaction, the
 * `is_next` triggers included) to their own loans. The receiver is a separate process on
 * 127.0.0.1 answering 200 at once (it stands in for the subscriber's machine, but shares these
 * cores).
 *
 * (a) Capture cost, in two modes, each as alternating pairs of rounds (without an endpoint, with
 *     an active endpoint subscribed to `payment.posted`; which comes first alternates per pair):
 *     - `worker in process`: the delivery worker runs in this process on the writers' pool, as
 *       the service runs it by default (WEBHOOK_WORKER=1, default settings), during every round;
 *       it delivers while the writers write.
 *     - `worker off`: no worker during the rounds (as with WEBHOOK_WORKER=0 and `loanql worker`
 *       stopped): what capture itself costs the write.
 *     Before every round the backlog of the previous one is delivered (not timed), so a round
 *     without an endpoint never carries deliveries. Per pair the ratio with/without; reported:
 *     the median of the ratios, the rounds, CPU of this process and of the PostgreSQL backends
 *     per round, and the load average.
 * (c) Through the service (PostgreSQL only, `webhooksService.ts`): the built service answers
 *     GraphQL payment posts (`insert_payments_one`, 16 autocannon connections) — worker off, worker
 *     as its own process (`loanql worker`), worker in the service; `--service-pairs 8` pairs.
 * (b) Deliveries/s: events captured with no worker running, then one worker sends them all to
 *     the receiver; the rate from its start to the last one received — with the default settings
 *     (at most 4 in flight per endpoint, the bench's one endpoint) and with 16 per endpoint.
 * Backlogs between rounds are emptied with the help of a second worker with wide limits.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { migrate, openPgliteDatabase, openPostgresDatabase, type Database } from '../db/index.js';
import { createAccount } from '../app/accounts.js';
import { applyEventTriggers, createWebhookEndpoint, setWebhookEndpointActive, WebhookWorker, webhookSettingsFromEnv, type WebhookSettings } from '../app/webhooks/index.js';
import { loadMetadataFile } from '../metadata/index.js';
import { measureThroughService, SERVICE_MODES, type ServiceMode, type ServiceModeResult } from './webhooksService.js';

const argument = (name: string, fallback: string): string => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 && process.argv[at + 1] ? process.argv[at + 1]! : fallback;
};
const PAIRS = Number(argument('pairs', '4'));
const SERVICE_PAIRS = Number(argument('service-pairs', '8'));
const ROUND_MS = Number(argument('round-seconds', '3')) * 1000;
const DELIVERY_EVENTS = Number(argument('delivery-events', '5000'));
const url = process.env.DATABASE_URL;
const WRITERS = Number(argument('writers', url ? '8' : '1'));

/** The receiver: another process, so its work is not on the writers' event loop. */
const RECEIVER = `
const http = require('node:http');
let received = 0;
const server = http.createServer((request, response) => { request.resume(); request.on('end', () => { received += 1; response.end('ok'); }); });
server.keepAliveTimeout = 5000;
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('message', (m) => { if (m === 'count') process.send({ received }); else if (m === 'exit') server.close(() => process.exit(0)); });
`;

class Receiver {
  private constructor(private readonly child: ChildProcess, readonly url: string) {}
  static async start(): Promise<Receiver> {
    const child = spawn(process.execPath, ['-e', RECEIVER], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const port = await new Promise<number>((resolve) => child.once('message', (m) => resolve((m as { port: number }).port)));
    return new Receiver(child, `http://127.0.0.1:${port}/hooks`);
  }
  count(): Promise<number> {
    return new Promise((resolve) => {
      this.child.once('message', (m) => resolve((m as { received: number }).received));
      this.child.send('count');
    });
  }
  get pid(): number {
    return this.child.pid!;
  }
  stop(): void {
    this.child.send('exit');
  }
}

/** utime+stime of a process, in seconds (Linux). */
function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

interface Round {
  endpoint: boolean;
  writesPerSecond: number;
  /** Events the receiver got during the round. */
  delivered: number;
  /** CPU seconds per second of wall time. */
  cpu: { bench: number; postgres: number; receiver: number };
  load1: number;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

async function main(): Promise<void> {
  const db: Database = url ? openPostgresDatabase({ connectionString: url, maxConnections: WRITERS + 4 }) : await openPgliteDatabase(undefined);
  await migrate(db);
  const metadataPath = fileURLToPath(new URL('../metadata/loanql.default.yaml', import.meta.url));
  const metadata = loadMetadataFile(metadataPath);
  await applyEventTriggers(db, metadata.eventTypes);
  const account = await createAccount(db, `bench-hooks-${process.pid}`);
  const loans = (await db.query<{ id: string }>(`INSERT INTO loans (account_id, name) SELECT $1, 'bench ' || g FROM generate_series(1, $2) g RETURNING id`, [account.id, WRITERS * 4])).rows.map((r) => r.id);
  const receiver = await Receiver.start();
  const endpoint = await createWebhookEndpoint(db, account.id, { url: receiver.url, eventTypes: ['payment.posted'] }, { knownEventTypes: new Set(metadata.eventTypes.keys()), allowPrivate: true });
  await setWebhookEndpointActive(db, endpoint.id, false, account.id);
  const settings: WebhookSettings = { ...webhookSettingsFromEnv({}), allowPrivate: true };

  // Every process of the PostgreSQL server (backends come and go with the pool: they are found
  // anew, as the children of the postmaster, at every reading). On PGlite the database is in this process.
  const backend = url ? (await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid : 0;
  const postmaster = url ? Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${backend}/status`, 'utf8'))![1]) : 0;
  let exitedCpu = 0;
  const lastSeen = new Map<number, number>();
  const postgresCpu = (): number => {
    if (!url) return 0;
    const now = new Map<number, number>([[postmaster, cpuSeconds(postmaster)]]);
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        if (Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${entry}/status`, 'utf8'))?.[1]) === postmaster) now.set(Number(entry), cpuSeconds(Number(entry)));
      } catch {
        // gone meanwhile
      }
    }
    for (const [pid, seconds] of lastSeen) if (!now.has(pid)) exitedCpu += seconds; // a backend that exited keeps its last reading
    lastSeen.clear();
    for (const [pid, seconds] of now) lastSeen.set(pid, seconds);
    return exitedCpu + [...now.values()].reduce((a, b) => a + b, 0);
  };
  postgresCpu();

  /** Waits until every captured event was delivered: nothing in the outbox, nothing pending. */
  const drain = async (): Promise<void> => {
    const waiting = async (): Promise<boolean> =>
      (
        await db.query<{ waiting: boolean }>(
          `SELECT EXISTS (SELECT 1 FROM webhook_outbox WHERE account_id = $1) OR EXISTS (SELECT 1 FROM webhook_deliveries WHERE account_id = $1 AND status = 'pending') AS waiting`,
          [account.id],
        )
      ).rows[0]!.waiting;
    // A helper worker with wide limits empties the backlog sooner (the drain is not measured).
    const helper = new WebhookWorker(db, { ...settings, concurrency: 64, perEndpointConcurrency: 64, pollMs: 20 }, { warn: (o, m) => console.error(m, o) });
    helper.start();
    while (await waiting()) await new Promise((resolve) => setTimeout(resolve, 50));
    await helper.stop();
  };

  const writeRound = async (endpointActive: boolean): Promise<Round> => {
    await setWebhookEndpointActive(db, endpoint.id, endpointActive, account.id);
    const receivedBefore = await receiver.count();
    const cpuBefore = { bench: process.cpuUsage(), postgres: postgresCpu(), receiver: cpuSeconds(receiver.pid) };
    const started = performance.now();
    let writes = 0;
    const until = Date.now() + ROUND_MS;
    await Promise.all(
      Array.from({ length: WRITERS }, async (_, w) => {
        for (let i = 0; Date.now() < until; i++) {
          await db.query(`INSERT INTO payments (account_id, loan_id, date, amount) VALUES ($1, $2, '2026-01-15', 10)`, [account.id, loans[(w * 4 + (i % 4)) % loans.length]]);
          writes += 1;
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const bench = process.cpuUsage(cpuBefore.bench);
    return {
      endpoint: endpointActive,
      writesPerSecond: writes / seconds,
      delivered: (await receiver.count()) - receivedBefore,
      cpu: {
        bench: (bench.user + bench.system) / 1e6 / seconds,
        postgres: (postgresCpu() - cpuBefore.postgres) / seconds,
        receiver: (cpuSeconds(receiver.pid) - cpuBefore.receiver) / seconds,
      },
      load1: loadavg()[0]!,
    };
  };

  const measure = async (workerInProcess: boolean): Promise<{ pairs: { without: Round; with: Round; ratio: number }[]; medianRatio: number }> => {
    const worker = new WebhookWorker(db, settings, { warn: (o, m) => console.error(m, o) });
    await drain(); // what an earlier mode left
    if (workerInProcess) worker.start();
    await writeRound(false); // warm-up
    const pairs: { without: Round; with: Round; ratio: number }[] = [];
    for (let pair = 0; pair < PAIRS; pair++) {
      const order = pair % 2 === 0 ? [false, true] : [true, false];
      const rounds = new Map<boolean, Round>();
      for (const active of order) {
        rounds.set(active, await writeRound(active));
        if (active) await drain(); // the round's backlog, before the next round (not timed)
      }
      const without = rounds.get(false)!;
      const withHook = rounds.get(true)!;
      pairs.push({ without, with: withHook, ratio: withHook.writesPerSecond / without.writesPerSecond });
    }
    await worker.stop();
    return { pairs, medianRatio: median(pairs.map((p) => p.ratio)) };
  };

  const modes = argument('modes', url ? `in-process,off,${SERVICE_MODES.join(',')}` : 'in-process,off').split(',');
  const inProcess = modes.includes('in-process') ? await measure(true) : null;
  const workerOff = modes.includes('off') ? await measure(false) : null;

  // (c) Through the service (PostgreSQL only): GraphQL payment posts over HTTP (webhooksService.ts).
  const serviceModes = SERVICE_MODES.filter((mode) => modes.includes(mode));
  let service: ServiceModeResult[] = [];
  if (serviceModes.length && url) {
    const serviceLoans = (await db.query<{ id: string }>(`INSERT INTO loans (account_id, name) SELECT $1, 'bench service ' || g FROM generate_series(1, 256) g RETURNING id`, [account.id])).rows.map((r) => r.id);
    service = await measureThroughService(
      {
        databaseUrl: url,
        metadataPath,
        accountSlug: account.slug,
        loans: serviceLoans,
        pairs: SERVICE_PAIRS,
        roundMs: ROUND_MS,
        setEndpointActive: (active) => setWebhookEndpointActive(db, endpoint.id, active, account.id).then(() => undefined),
        drain,
        receivedCount: () => receiver.count(),
        paymentCount: async () => Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM payments WHERE account_id = $1', [account.id])).rows[0]!.n),
        postgresCpu,
        receiverPid: receiver.pid,
      },
      serviceModes as ServiceMode[],
    );
  }

  // (b) Deliveries/s: capture DELIVERY_EVENTS with no worker running, then time one worker:
  // default settings (at most 4 deliveries in flight to the one endpoint), then 16 per endpoint.
  await setWebhookEndpointActive(db, endpoint.id, true, account.id);
  const deliveryRate = async (perEndpointConcurrency: number) => {
    await db.query(
      `INSERT INTO payments (account_id, loan_id, date, amount) SELECT $1, ($2::uuid[])[1 + g % cardinality($2::uuid[])], '2026-01-15', 10 FROM generate_series(1, $3) g`,
      [account.id, loans, DELIVERY_EVENTS],
    );
    const cpuBefore = { bench: process.cpuUsage(), postgres: postgresCpu(), receiver: cpuSeconds(receiver.pid) };
    const receivedBefore = await receiver.count();
    const deliveryWorker = new WebhookWorker(db, { ...settings, perEndpointConcurrency }, { warn: (o, m) => console.error(m, o) });
    const started = performance.now();
    deliveryWorker.start();
    while ((await receiver.count()) - receivedBefore < DELIVERY_EVENTS) await new Promise((resolve) => setTimeout(resolve, 20));
    const seconds = (performance.now() - started) / 1000;
    const benchCpu = process.cpuUsage(cpuBefore.bench);
    await deliveryWorker.stop();
    return {
      perEndpointConcurrency,
      events: DELIVERY_EVENTS,
      seconds,
      perSecond: DELIVERY_EVENTS / seconds,
      cpu: {
        bench: (benchCpu.user + benchCpu.system) / 1e6 / seconds,
        postgres: (postgresCpu() - cpuBefore.postgres) / seconds,
        receiver: (cpuSeconds(receiver.pid) - cpuBefore.receiver) / seconds,
      },
      load1: loadavg()[0]!,
    };
  };
  const deliveries = [await deliveryRate(settings.perEndpointConcurrency), await deliveryRate(16)];

  const f0 = (n: number): string => n.toFixed(0);
  const f2 = (n: number): string => n.toFixed(2);
  const describe = (name: string, result: Awaited<ReturnType<typeof measure>> | null): string[] => !result ? [] : [
    `${name}: median of ${result.pairs.length} ratios with/without = ${f2(result.medianRatio)} → capture cost ${((1 - result.medianRatio) * 100).toFixed(1)} % fewer writes/s (target <= 10 %)`,
    ...result.pairs.map(
      (p, i) =>
        `  pair ${i + 1}: without ${f0(p.without.writesPerSecond)}/s (cpu bench ${f2(p.without.cpu.bench)} pg ${f2(p.without.cpu.postgres)}), ` +
        `with ${f0(p.with.writesPerSecond)}/s, ${f0(p.with.delivered / (ROUND_MS / 1000))} delivered/s during the round (cpu bench ${f2(p.with.cpu.bench)} pg ${f2(p.with.cpu.postgres)} receiver ${f2(p.with.cpu.receiver)}), ` +
        `ratio ${f2(p.ratio)}, load ${p.without.load1.toFixed(1)}/${p.with.load1.toFixed(1)}`,
    ),
  ];
  const serviceName: Record<ServiceMode, string> = {
    'service-off': 'through the service, no worker during the rounds (capture alone)',
    'service-worker-process': 'through the service, worker as its own process (`loanql worker`)',
    'service-worker-in-process': 'through the service, worker in the service (WEBHOOK_WORKER=1)',
  };
  // CPU per write (service, worker, PostgreSQL, receiver): less at the mercy of other load than the rate.
  const cpuPerWrite = (r: ServiceModeResult['pairs'][number]['with']): number =>
    ((r.cpu.service + r.cpu.worker + r.cpu.postgres + r.cpu.receiver) / r.writesPerSecond) * 1e6;
  const describeService = (result: ServiceModeResult): string[] => [
    `${serviceName[result.mode]}: median of ${result.pairs.length} ratios with/without = ${f2(result.medianRatio)} → ${((1 - result.medianRatio) * 100).toFixed(1)} % fewer writes/s (target <= 10 %); ` +
      `CPU per write (service, worker, PostgreSQL, receiver) median ${f0(median(result.pairs.map((p) => cpuPerWrite(p.without))))} µs without, ${f0(median(result.pairs.map((p) => cpuPerWrite(p.with))))} µs with, ` +
      `median ratio ${f2(median(result.pairs.map((p) => cpuPerWrite(p.with) / cpuPerWrite(p.without))))}`,
    ...result.pairs.map(
      (p, i) =>
        `  pair ${i + 1}: without ${f0(p.without.writesPerSecond)}/s (p50 ${f0(p.without.latencyP50Ms)} ms; cpu service ${f2(p.without.cpu.service)} worker ${f2(p.without.cpu.worker)} pg ${f2(p.without.cpu.postgres)}), ` +
        `with ${f0(p.with.writesPerSecond)}/s (p50 ${f0(p.with.latencyP50Ms)} ms), ${f0(p.with.delivered / (ROUND_MS / 1000))} delivered/s (cpu service ${f2(p.with.cpu.service)} worker ${f2(p.with.cpu.worker)} pg ${f2(p.with.cpu.postgres)} receiver ${f2(p.with.cpu.receiver)}), ` +
        `ratio ${f2(p.ratio)}, failed ${p.without.failed + p.with.failed}, load ${p.without.load1.toFixed(1)}/${p.with.load1.toFixed(1)}`,
    ),
  ];
  const lines = [
    `database: ${url ? 'PostgreSQL' : 'PGlite (in memory)'}, ${WRITERS} writer${WRITERS > 1 ? 's' : ''}, ${PAIRS} pairs of ${ROUND_MS / 1000} s rounds per mode; load average at start of report ${loadavg().map((n) => n.toFixed(1)).join(' ')}`,
    ...describe('worker in process (as the service runs it)', inProcess),
    ...describe('worker off during the rounds (capture alone)', workerOff),
    ...service.flatMap(describeService),
    ...deliveries.map(
      (d) =>
        `deliveries (${d.perEndpointConcurrency} in flight per endpoint): ${d.events} events to a local receiver in ${d.seconds.toFixed(1)} s = ${f0(d.perSecond)} events/s ` +
        `(cpu bench ${f2(d.cpu.bench)} pg ${f2(d.cpu.postgres)} receiver ${f2(d.cpu.receiver)}, load ${d.load1.toFixed(1)})`,
    ),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  const jsonOut = argument('json', '');
  if (jsonOut) writeFileSync(jsonOut, JSON.stringify({ database: url ? 'postgresql' : 'pglite', writers: WRITERS, roundMs: ROUND_MS, loadAverage: loadavg(), inProcess, workerOff, service, deliveries }, null, 2));
  receiver.stop();
  await db.query('DELETE FROM accounts WHERE id = $1', [account.id]);
  await db.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
