/**
 * Subscriptions benchmark (issue 34, Done when 2; bench/README.md "Subscriptions"). Not part of
 * `npm run bench`; about 3 minutes.
 *
 *   npm run build && node --import tsx bench/subscriptions.ts [--subscriptions 5000] [--loans 500]
 *       [--connections 50] [--idle-seconds 20] [--write-seconds 20] [--writes-per-second 50] [--modes changes,poll]
 *
 * A throwaway PostgreSQL 15 (`.ci/postgres.sh`, restarted once with pg_stat_statements loaded),
 * an account seeded through the CLI (`seed --scale 0.08`: ~500 servicing loans), then per mode
 * the built service as one process (WEBHOOK_WORKER=0, SUBSCRIPTIONS_PER_KEY above the count):
 *   - `changes`: loanql's scheduler, refreshed by change notices (the fallback set beyond the run);
 *   - `poll`: Hasura's design, `SUBSCRIPTION_POLL_MS=1000` (every cohort re-run every second).
 * Each mode: open the live queries (5 documents × 500 loans × 2 subscribers) over `graphql-ws`
 * clients in this process; wait for every first result; then an **idle** phase (no writes) and a
 * **writing** phase (payments of 0.01 at a steady rate, each an INSERT with an id chosen here, so
 * that a subscriber's message showing it as the loan's newest payment is matched to its commit).
 * Counted per phase: the cohort statements the service ran (its counter on `/healthz`) and the
 * calls PostgreSQL recorded for them (pg_stat_statements, `json_to_recordset`), commits
 * (pg_stat_database), CPU of the service and of every PostgreSQL process (/proc), messages, and
 * the time from each write's commit (its INSERT's answer) to every subscriber message showing it.
 * Writes `bench/results-subscriptions.json` and the "Subscriptions" section of RESULTS.md.
 */
import { randomUUID } from 'node:crypto';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { freePort, ROOT, runCli, startThrowawayPostgres, stopAll } from './processes.js';
import { keepSubscriptionsSection, renderSubscriptionsSection, type ModeResult, type PhaseResult, type SubscriptionsBench } from './subscriptionsReport.js';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
const SUBSCRIPTIONS = Number(args.get('subscriptions') ?? 5000);
const LOANS = Number(args.get('loans') ?? 500);
const CONNECTIONS = Number(args.get('connections') ?? 50);
const IDLE_SECONDS = Number(args.get('idle-seconds') ?? 20);
const WRITE_SECONDS = Number(args.get('write-seconds') ?? 20);
const WRITES_PER_SECOND = Number(args.get('writes-per-second') ?? 50);
const MODES = (args.get('modes') ?? 'changes,poll').split(',') as ('changes' | 'poll')[];
const REFRESH_WINDOW_MS = 50;
const log = (line: string): void => void process.stderr.write(`${line}\n`);

/** The documents: each a different plan, each showing the loan's newest payment (to match messages to writes). */
const NEWEST = 'payments(order_by: {posted_at: desc}, limit: 1) { id }';
const DOCUMENTS = [
  `subscription($id: uuid!) { loans_by_pk(id: $id) { id schedules(where: {is_next: {_eq: true}}) { number due payment } ${NEWEST} } }`,
  `subscription($id: uuid!) { loans_by_pk(id: $id) { id principal_outstanding interest_due fees_due status ${NEWEST} } }`,
  `subscription($id: uuid!) { loans_by_pk(id: $id) { id payments_aggregate { aggregate { count sum { amount } } } ${NEWEST} } }`,
  `subscription($id: uuid!) { loans_by_pk(id: $id) { id name payments(order_by: {posted_at: desc}, limit: 3) { id amount date } } }`,
  `subscription($id: uuid!) { loans_by_pk(id: $id) { id borrows { person { name } } ${NEWEST} } }`,
];

const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
/** CPU seconds of a process and its descendants (reaped children included), from /proc. */
function treeCpu(root: number): number {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone
    }
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) for (const [pid, parent] of parents) if (parent === tree[i]) tree.push(pid);
  let ticks = 0;
  for (const pid of tree) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    } catch {
      // ended meanwhile
    }
  }
  return ticks / CLOCK_TICKS;
}

const percentile = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

async function startService(databaseUrl: string, mode: 'changes' | 'poll'): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    PG_POOL_SIZE: '10',
    WEBHOOK_WORKER: '0',
    WORKERS: '1',
    METADATA_PATH: join(ROOT, 'metadata', 'loanql.default.yaml'),
    SUBSCRIPTIONS_PER_KEY: String(SUBSCRIPTIONS * 2),
    SUBSCRIPTION_REFRESH_WINDOW_MS: String(REFRESH_WINDOW_MS),
    // The 30 s fallback would land in the idle phase: set beyond the run (its cost: one statement per cohort per 30 s).
    SUBSCRIPTION_FALLBACK_MS: '600000',
    ...(mode === 'poll' ? { SUBSCRIPTION_POLL_MS: '1000' } : {}),
  };
  delete env.DATABASE_REPLICA_URLS;
  const child = spawn(process.execPath, [join(ROOT, 'dist', 'server', 'main.js')], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const deadline = Date.now() + 90_000;
  while (!output.includes('loanql is serving at')) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the service did not start: ${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { url: `http://127.0.0.1:${port}`, child };
}

async function main(): Promise<void> {
  const postgres = await startThrowawayPostgres();
  const script = join(ROOT, '.ci', 'postgres.sh');
  // pg_stat_statements needs a restart to load.
  const admin = new pg.Client({ connectionString: postgres.url });
  await admin.connect();
  await admin.query(`ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'`);
  await admin.end();
  spawnSync('bash', [script, 'stop', postgres.dir], { stdio: 'ignore' });
  if (spawnSync('bash', [script, 'resume', postgres.dir], { stdio: 'ignore' }).status !== 0) throw new Error('PostgreSQL did not restart');
  const pool = new pg.Pool({ connectionString: postgres.url, max: 12 });
  await pool.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  const postmaster = Number(readFileSync(join(postgres.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
  const postgresVersion = (await pool.query<{ v: string }>(`SELECT current_setting('server_version') AS v`)).rows[0]!.v;

  log('seeding (scale 0.08)…');
  runCli(postgres.url, ['migrate']);
  const created = runCli(postgres.url, ['account', 'create', 'bench']);
  const accountId = /\(([0-9a-f-]{36})\)/.exec(created)![1]!;
  const key = runCli(postgres.url, ['key', 'create', '--account', 'bench', '--name', 'bench']).trim().split('\n').pop()!;
  runCli(postgres.url, ['seed', '--account', 'bench', '--scale', '0.08']);
  await pool.query('VACUUM ANALYZE');
  const loans = (await pool.query<{ id: string }>(`SELECT id FROM loans WHERE account_id = $1 AND status = 'servicing' ORDER BY id LIMIT $2`, [accountId, LOANS])).rows.map((row) => row.id);
  log(`${loans.length} servicing loans`);
  const perPair = Math.max(1, Math.round(SUBSCRIPTIONS / (DOCUMENTS.length * loans.length)));

  const modes: ModeResult[] = [];
  for (const mode of MODES) {
    log(`mode ${mode}: starting the service`);
    const service = await startService(postgres.url, mode);
    const usage = async (): Promise<{ statementsRun: number; cohorts: number; subscriptions: number }> =>
      ((await (await fetch(`${service.url}/healthz`, { headers: { authorization: `Token ${key}` } })).json()) as { subscriptions: { statementsRun: number; cohorts: number; subscriptions: number } }).subscriptions;
    const clients: Client[] = Array.from({ length: CONNECTIONS }, () =>
      createClient({ url: `${service.url.replace(/^http/, 'ws')}/api/graph`, webSocketImpl: WebSocket, lazy: false, retryAttempts: 0, connectionParams: { Authorization: `Token ${key}` } }),
    );
    /** Per write id: its commit time; per subscriber: the newest payment id it was shown. */
    const committedAt = new Map<string, number>();
    const latencies: number[] = [];
    let measuring = false;
    let messages = 0;
    const shownPairs = new Set<string>();
    /** Messages that showed a write before its INSERT answered here (see the phase). */
    const shownBeforeAnswer: { id: string; subscriber: number; arrived: number }[] = [];
    let firstResults = 0;
    const subscribeStarted = performance.now();
    const allFirst = new Promise<void>((resolve) => {
      let index = 0;
      for (let copy = 0; copy < perPair; copy++)
        for (const [doc, query] of DOCUMENTS.entries())
          for (const loan of loans) {
            const subscriber = index++;
            let first = true;
            let newest: string | undefined;
            clients[subscriber % clients.length]!.subscribe<{ loans_by_pk: { payments?: { id: string }[] } }>(
              { query, variables: { id: loan } },
              {
                next: (message) => {
                  const arrived = performance.now();
                  messages += 1;
                  if (first) {
                    first = false;
                    if (++firstResults === index) resolve();
                  }
                  const id = message.data?.loans_by_pk?.payments?.[0]?.id;
                  if (!id || id === newest) return;
                  newest = id;
                  const at = committedAt.get(id);
                  if (measuring && at !== undefined) {
                    latencies.push(arrived - at);
                    shownPairs.add(`${id} ${subscriber}`);
                  } else if (measuring) shownBeforeAnswer.push({ id, subscriber, arrived });
                },
                error: (error) => log(`subscription ${subscriber} (document ${doc}) failed: ${JSON.stringify(error)}`),
                complete: () => undefined,
              },
            );
          }
    });
    await allFirst;
    const subscribeSeconds = (performance.now() - subscribeStarted) / 1000;
    const opened = await usage();
    log(`  ${opened.subscriptions} subscriptions in ${opened.cohorts} cohorts, first results in ${subscribeSeconds.toFixed(1)} s`);
    await new Promise((resolve) => setTimeout(resolve, 2_000));

    const phase = async (seconds: number, write: boolean): Promise<PhaseResult> => {
      await pool.query('SELECT pg_stat_statements_reset()');
      const statsBefore = (await pool.query<{ commits: string }>(`SELECT xact_commit::text AS commits FROM pg_stat_database WHERE datname = current_database()`)).rows[0]!.commits;
      const before = { usage: await usage(), service: treeCpu(service.child.pid!), postgres: treeCpu(postmaster), messages, at: performance.now() };
      let writes = 0;
      const expected = new Map<string, number>();
      if (write) {
        measuring = true;
        const inFlight: Promise<unknown>[] = [];
        const interval = 1000 / WRITES_PER_SECOND;
        const end = before.at + seconds * 1000;
        for (let next = performance.now(); next < end; next += interval) {
          const wait = next - performance.now();
          if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
          const id = randomUUID();
          const loanIndex = writes++ % loans.length;
          inFlight.push(
            pool.query(`INSERT INTO payments (id, account_id, loan_id, date, amount, type, method) VALUES ($1, $2, $3, current_date, 0.01, 'regular', 'ach')`, [id, accountId, loans[loanIndex]]).then(() => {
              committedAt.set(id, performance.now());
              expected.set(id, loanIndex);
            }),
          );
        }
        await Promise.all(inFlight);
        // Let the last refreshes arrive (not in the phase's rates).
        await new Promise((resolve) => setTimeout(resolve, 3_000));
        measuring = false;
        // A message can beat the INSERT's answer to this process (notice → refresh → message while
        // the answer waits in a busy event loop): shown at once, so counted with latency 0.
        for (const early of shownBeforeAnswer.splice(0)) {
          const at = committedAt.get(early.id);
          if (at === undefined) continue;
          latencies.push(Math.max(0, early.arrived - at));
          shownPairs.add(`${early.id} ${early.subscriber}`);
        }
      } else await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
      const after = { usage: await usage(), service: treeCpu(service.child.pid!), postgres: treeCpu(postmaster), messages };
      const seen = Number((await pool.query<{ calls: string | null }>(`SELECT sum(calls)::text AS calls FROM pg_stat_statements WHERE query LIKE '%json_to_recordset%' AND query NOT LIKE '%pg_stat_statements%'`)).rows[0]!.calls ?? 0);
      const statsAfter = (await pool.query<{ commits: string }>(`SELECT xact_commit::text AS commits FROM pg_stat_database WHERE datname = current_database()`)).rows[0]!.commits;
      const wall = (performance.now() - before.at) / 1000;
      const sorted = [...latencies].sort((a, b) => a - b);
      // A write is shown to every subscriber of its loan: each document shows the loan's newest payment.
      const pairsExpected = expected.size * DOCUMENTS.length * perPair;
      const result: PhaseResult = {
        seconds: wall,
        statements: after.usage.statementsRun - before.usage.statementsRun,
        statementsSeen: seen,
        commits: Number(statsAfter) - Number(statsBefore),
        serviceCpu: (after.service - before.service) / wall,
        postgresCpu: (after.postgres - before.postgres) / wall,
        messages: after.messages - before.messages,
        writes,
        latency: write && sorted.length ? { samples: sorted.length, missing: pairsExpected - shownPairs.size, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1)! } : null,
        load1: loadavg()[0]!,
      };
      latencies.length = 0;
      return result;
    };
    log(`  idle ${IDLE_SECONDS} s…`);
    const idle = await phase(IDLE_SECONDS, false);
    log(`  ${JSON.stringify(idle)}`);
    log(`  writing ${WRITE_SECONDS} s at ${WRITES_PER_SECOND}/s…`);
    const writing = await phase(WRITE_SECONDS, true);
    log(`  ${JSON.stringify(writing)}`);
    modes.push({ mode, description: mode === 'changes' ? 'refreshed by change notices' : 'every cohort re-run every 1 s (Hasura)', subscribeSeconds, cohorts: opened.cohorts, idle, writing });
    for (const client of clients) await client.dispose();
    service.child.kill('SIGTERM');
    await new Promise((resolve) => service.child.once('exit', resolve));
  }
  await pool.end();

  const results: SubscriptionsBench = {
    at: new Date().toISOString(),
    postgresVersion,
    subscriptions: perPair * DOCUMENTS.length * loans.length,
    loans: loans.length,
    documents: DOCUMENTS.length,
    connections: CONNECTIONS,
    writesPerSecond: WRITES_PER_SECOND,
    refreshWindowMs: REFRESH_WINDOW_MS,
    modes,
  };
  writeFileSync(join(ROOT, 'bench', 'results-subscriptions.json'), `${JSON.stringify(results, null, 2)}\n`);
  const resultsPath = join(ROOT, 'bench', 'RESULTS.md');
  writeFileSync(resultsPath, keepSubscriptionsSection(readFileSync(resultsPath, 'utf8'), renderSubscriptionsSection(results)));
  log(`wrote bench/results-subscriptions.json and the Subscriptions section of bench/RESULTS.md`);
}

process.on('SIGINT', () => void stopAll().then(() => process.exit(130)));
process.on('SIGTERM', () => void stopAll().then(() => process.exit(143)));
main()
  .catch((error: unknown) => {
    process.exitCode = 1;
    log(error instanceof Error ? (error.stack ?? error.message) : String(error));
  })
  .finally(() => stopAll());
