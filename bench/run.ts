/**
 * `npm run bench`: the whole benchmark of issue #6, from a fresh clone, in one command.
 *
 * 1. PostgreSQL: `DATABASE_URL` when set, else a throwaway PostgreSQL 15 (`.ci/postgres.sh`).
 * 2. Data: an account (with an admin, so comments have authors) seeded by the CLI at scale 1.
 * 3. Servers: the built service (`dist/server/main.js`) and the baseline (`baselineServer.ts`),
 *    each with a pool of `PG_POOL_SIZE` connections.
 * 4. Correctness: engine and baseline must return the same data for a sample of variable sets.
 * 5. Throughput: autocannon on loopback, per query: a warm-up of each server, then measured
 *    rounds that alternate between the engine and the baseline (`load.ts`).
 * 6. Micro-benchmarks of the engine in process (cold compile, plan-cache hit).
 * 7. Growth: two more accounts at scale 0.1 and 10 in the same database; unloaded latency of
 *    the by-primary-key, list-page and aggregate queries per scale, with their plans.
 * 8. `bench/RESULTS.md` and `bench/results.json`.
 *
 * Options: --duration S (20, per server, split over the rounds), --warmup S (2), --rounds N (20),
 * --connections N (16), --growth-scales 0.1,1,10,
 * --growth-seconds S (6), --no-growth, --out DIR (bench/). Every process started is stopped on
 * exit, failure, SIGINT and SIGTERM.
 *
 * `--operations` (issue 35) measures something else: the service with metrics and the request log
 * on against the same build with both off, for q1 and q6 (`--only` to change), in alternating
 * rounds, on an account seeded at `--scale` (1); it writes `results-operations.json` and the
 * operations section of RESULTS.md only. `--operations --null` configures both servers "off" and
 * otherwise runs the same (ports, start order, stdout files, scraping): its ratio is the
 * measurement's own bias, written to `results-operations-null.json` only.
 */
import { closeSync, existsSync, openSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { cpus, loadavg, totalmem, release, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { isDeepStrictEqual } from 'node:util';
import pg from 'pg';
import { GraphEngine } from '../engine/index.js';
import { closeAgent, percentile, postJson, sequentialLatency } from './latency.js';
import { measureGroups, measurePair, type LoadResult, type LoadSettings, type LoadTarget } from './load.js';
import { runMicroBenchmarks } from './micro.js';
import { cpuSnapshot, freePort, otherWorkShare, parentPidOf, ROOT, runCli, SHIPPED_NODE_FLAGS, startServer, startThrowawayPostgres, stopAll, type ServerProcess } from './processes.js';
import { ALL_QUERIES, isMutation, QUERIES, sampleData, type BenchQuery, type DataSample } from './queries.js';
import { engineStatement, measureSqlOnly, servedMetadata } from './sqlOnly.js';
import { renderResults, roundRatios, type BenchResults, type GrowthRow, type PlanExcerpt, type ThroughputRow } from './report.js';
import { collectionsSectionOf, keepCollectionsSection } from './collectionsReport.js';
import { keepSubscriptionsSection, subscriptionsSectionOf } from './subscriptionsReport.js';
import { keepOperationsSection, operationsSectionOf, renderOperationsSection, type OperationsRow } from './operationsReport.js';
import { dropSingleLender } from './singleLender.js';
import { singleLenderQueries, startSingleLender, type SingleLenderResults } from './singleLenderRun.js';
import { measureSingleLenderSqlOnly } from './singleLenderSqlOnly.js';
import { median } from './median.js';

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '20' },
    warmup: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '20' },
    connections: { type: 'string', default: '16' },
    'growth-scales': { type: 'string', default: '0.1,1,10' },
    'growth-seconds': { type: 'string', default: '6' },
    'no-growth': { type: 'boolean', default: false },
    'no-single-lender': { type: 'boolean', default: false },
    only: { type: 'string' },
    'no-sql-only': { type: 'boolean', default: false },
    'sql-only-seconds': { type: 'string', default: '4' },
    out: { type: 'string', default: 'bench' },
    operations: { type: 'boolean', default: false },
    // --operations --null: both servers configured "off", otherwise as the real run (a bias check).
    null: { type: 'boolean', default: false },
    // --operations --off-first: start "off" before "on" (to tell a start-order bias from the configuration's cost).
    'off-first': { type: 'boolean', default: false },
    // --operations --no-scrape: nobody scrapes "on"'s /metrics (a bias check: is the scrape what the "on" slot pays?).
    'no-scrape': { type: 'boolean', default: false },
    // --operations --pairs N: N processes of each configuration (started on, off, off, on, …), every round measuring each pair.
    pairs: { type: 'string', default: '2' },
    scale: { type: 'string', default: '1' },
    // an account already seeded (with DATABASE_URL), kept after the run, and optionally an admin key of it.
    account: { type: 'string' },
    key: { type: 'string' },
  },
});

const POOL_SIZE = 10;
/** The main account's scale: 1 (10,000 loans) unless `--scale` says otherwise (e.g. 0.1 when seeding 1 takes too long on a busy machine). */
const MAIN_SCALE = Number(args.scale);
const METADATA_PATH = join(ROOT, 'metadata', 'loanql.default.yaml');
const settings: LoadSettings = {
  connections: Number(args.connections),
  durationSeconds: Number(args.duration),
  warmupSeconds: Number(args.warmup),
  rounds: Math.max(1, Math.round(Number(args.rounds))),
};
const log = (line: string): void => void process.stderr.write(`bench: ${line}\n`);

interface BenchAccount {
  readonly slug: string;
  readonly id: string;
  readonly key: string;
  readonly scale: number;
  readonly loans: number;
  /** A key of the `investor` role for the sample's investor (main account only). */
  investorKey?: string;
}

/** Creates an account with an admin and a key through the CLI, and seeds it. */
function createSeededAccount(databaseUrl: string, slug: string, scale: number): BenchAccount {
  const created = runCli(databaseUrl, ['account', 'create', slug, '--name', `Benchmark scale ${scale}`]);
  const id = /\(([0-9a-f-]{36})\)/.exec(created)?.[1];
  if (!id) throw new Error(`no account id in: ${created}`);
  runCli(databaseUrl, ['admin', 'create', '--account', slug, '--email', `${slug}@bench.loanql.test`, '--password', 'bench-password', '--name', 'Bench Admin']);
  const key = runCli(databaseUrl, ['key', 'create', '--account', slug, '--name', 'bench']).trim().split('\n').pop() ?? '';
  log(`seeding ${slug} at scale ${scale}…`);
  const started = Date.now();
  const seeded = runCli(databaseUrl, ['seed', '--account', slug, '--scale', String(scale)]);
  log(`${seeded.trim()} (${((Date.now() - started) / 1000).toFixed(0)} s wall)`);
  const loans = Number(/(\d+) loans/.exec(seeded)?.[1] ?? 0);
  return { slug, id, key, scale, loans };
}

/**
 * An account seeded before (`--account SLUG`, kept afterwards): its id and how many loans it has,
 * with `--key` if given, else a new admin key for this run. Its scale is what was asked
 * (`--scale`), else what its loans say (10,000 loans = 1).
 */
async function existingAccount(pool: pg.Pool, databaseUrl: string, slug: string, key: string | undefined, scale?: number): Promise<BenchAccount> {
  const { rows } = await pool.query<{ id: string; loans: number }>('SELECT a.id, (SELECT count(*)::int FROM loans l WHERE l.account_id = a.id) AS loans FROM accounts a WHERE a.slug = $1', [slug]);
  if (!rows[0]) throw new Error(`no account ${slug}`);
  log(`using the seeded account ${slug} (${rows[0].loans} loans)`);
  const usedKey = key ?? runCli(databaseUrl, ['key', 'create', '--account', slug, '--name', `bench ${Date.now().toString(36)}`]).trim().split('\n').pop() ?? '';
  return { slug, id: rows[0].id, key: usedKey, scale: scale ?? rows[0].loans / 10_000, loans: rows[0].loans };
}

function engineBodies(query: BenchQuery, sample: DataSample, count: number): string[] {
  return Array.from({ length: count }, (_, i) => JSON.stringify({ query: query.graphql, operationName: query.operationName, variables: query.variables(sample, i) }));
}

/** The key a query runs with, on both servers: the account's admin key, or its investor key. */
const keyOf = (account: BenchAccount, query: BenchQuery): string => (query.role === 'investor' ? account.investorKey! : account.key);

/** Engine and baseline must agree, as parsed JSON, for the first `count` variable sets. Throws otherwise. */
async function checkSameData(service: ServerProcess, baseline: ServerProcess, account: BenchAccount, query: BenchQuery, sample: DataSample, count: number): Promise<void> {
  const fromEngine = engineBodies(query, sample, count);
  let nonEmpty = 0;
  for (let i = 0; i < count; i++) {
    const headers = { authorization: `Token ${keyOf(account, query)}` };
    const engine = await postJson(`${service.url}/api/graph`, headers, fromEngine[i]!);
    const base = await postJson(`${baseline.url}/graphql`, headers, fromEngine[i]!);
    if (engine.status !== 200 || base.status !== 200) throw new Error(`${query.id} #${i}: engine ${engine.status}, baseline ${base.status}: ${engine.body.slice(0, 300)}`);
    const engineJson = JSON.parse(engine.body) as { data?: Record<string, unknown>; errors?: unknown };
    if (engineJson.errors || !engineJson.data) throw new Error(`${query.id} #${i}: the engine answered ${engine.body.slice(0, 500)}`);
    const comparable = query.comparable ?? ((answer: unknown) => answer);
    if (!isDeepStrictEqual(comparable(engineJson), comparable(JSON.parse(base.body)))) {
      const where = join(ROOT, 'bench', '.work');
      mkdirSync(where, { recursive: true });
      writeFileSync(join(where, `${query.id}-engine.json`), engine.body);
      writeFileSync(join(where, `${query.id}-baseline.json`), base.body);
      throw new Error(`${query.id} #${i}: engine and baseline answers differ (both written to bench/.work/${query.id}-*.json)`);
    }
    if (JSON.stringify(engineJson.data).length > 40) nonEmpty++;
  }
  if (nonEmpty === 0) throw new Error(`${query.id}: every checked answer is empty; the sample does not exercise the query`);
}

/** The scan and aggregate lines of PostgreSQL's plan for the engine's statement, plus its execution time. */
async function planExcerpt(pool: pg.Pool, engine: GraphEngine, query: BenchQuery, sample: DataSample, account: BenchAccount): Promise<PlanExcerpt> {
  const prepared = engineStatement(engine, query, sample, account.id, 0);
  const { rows } = await pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) ${prepared.text}`, prepared.values);
  const lines = rows.map((row) => row['QUERY PLAN']);
  const relevant = lines.filter((line) => /Scan|Index Cond|Execution Time|Sort Method|Limit/.test(line)).map((line) => line.replace(/\s+$/, ''));
  return { query: query.id, scale: account.scale, lines: relevant, full: lines };
}

async function versionOf(pool: pg.Pool): Promise<string> {
  const { rows } = await pool.query<{ server_version: string }>('SHOW server_version');
  return rows[0]?.server_version ?? 'unknown';
}

function packageVersion(name: string): string {
  return (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
}

async function main(): Promise<void> {
  const outDir = resolve(ROOT, args.out);
  const runId = Date.now().toString(36);
  const external = process.env.DATABASE_URL;
  const databaseUrl = external ?? (await startThrowawayPostgres()).url;
  log(external ? 'using DATABASE_URL' : `throwaway PostgreSQL at ${databaseUrl}`);
  const slugPrefix = `bench-${runId}`;
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  pool.on('error', () => undefined);
  const accounts: BenchAccount[] = [];
  try {
    runCli(databaseUrl, ['migrate']);
    // `--account SLUG` (with DATABASE_URL): an account seeded before at `--scale`, kept afterwards; a new key is made for the run.
    const main = args.account ? await existingAccount(pool, databaseUrl, args.account, args.key, MAIN_SCALE) : createSeededAccount(databaseUrl, `${slugPrefix}-s${MAIN_SCALE}`, MAIN_SCALE);
    if (!args.account) accounts.push(main);
    await pool.query('VACUUM ANALYZE');
    const sample = await sampleData(pool, main.id);
    main.investorKey = runCli(databaseUrl, ['key', 'create', '--account', main.slug, '--name', 'bench investor', '--role', 'investor', '--var', `person_id=${sample.investorPersonId}`])
      .trim()
      .split('\n')
      .pop();

    const servicePort = await freePort();
    const service = await startServer(
      'service',
      [...SHIPPED_NODE_FLAGS, join(ROOT, 'dist', 'server', 'main.js')],
      { DATABASE_URL: databaseUrl, METADATA_PATH, HOST: '127.0.0.1', PORT: String(servicePort), LOG_LEVEL: 'warn', PG_POOL_SIZE: String(POOL_SIZE) },
      servicePort,
      async (url) => (await fetch(`${url}/healthz`)).ok,
    );
    const baselinePort = await freePort();
    const baseline = await startServer(
      'baseline',
      [...SHIPPED_NODE_FLAGS, '--import', 'tsx', join(ROOT, 'bench', 'baselineServer.ts')],
      { DATABASE_URL: databaseUrl, HOST: '127.0.0.1', PORT: String(baselinePort), PG_POOL_SIZE: String(POOL_SIZE) },
      baselinePort,
      async (url) => (await fetch(`${url}/none`, { method: 'POST' })).status === 404,
    );

    const selected = ALL_QUERIES.filter((query) => !args.only || args.only.split(',').includes(query.id));
    for (const query of selected) await checkSameData(service, baseline, main, query, sample, 20);
    log(`engine and baseline agree on ${selected.length} queries × 20 variable sets`);
    // Issue 36: the single-lender server, on its own schema holding a copy of the account.
    const single = args['no-single-lender'] ? null : await startSingleLender(pool, databaseUrl, main.id, POOL_SIZE);
    const singleSelected = single ? singleLenderQueries(selected) : [];
    if (single) {
      for (const query of singleSelected) await checkSameData(service, single.server, main, query, sample, 20);
      log(`engine and the single-lender server agree on ${singleSelected.length} queries × 20 variable sets`);
    }
    // The single-lender SQL-only comparison runs now, while the copy equals the account: m1's
    // rounds below post payments into the account only, and a statement listing a loan's
    // payments (q7) would then answer differently from the copy's.
    const singleSqlOnly = single && !args['no-sql-only']
      ? await measureSingleLenderSqlOnly(databaseUrl, main.id, sample, singleSelected, { maxRuns: 1000, seconds: Number(args['sql-only-seconds']), warmupRuns: 10 }, log)
      : [];
    const singleThroughput: ThroughputRow[] = [];

    const throughput: ThroughputRow[] = [];
    const loadSamples: number[] = [loadavg()[0]!];
    const serverPids = single ? [service.pid, baseline.pid, single.server.pid] : [service.pid, baseline.pid];
    const cpuBefore = cpuSnapshot(serverPids);
    for (const [index, query] of selected.entries()) {
      const headers = { authorization: `Token ${keyOf(main, query)}` };
      // Both servers get the very same request bodies (bench/baselineServer.ts).
      const bodies = engineBodies(query, sample, 500);
      const engineTarget = { pid: service.pid, url: service.url, path: '/api/graph', headers, bodies };
      const baselineTarget = { pid: baseline.pid, url: baseline.url, path: '/graphql', headers, bodies };
      // Alternating rounds; which side starts also alternates from query to query.
      const [engine, base] = await measurePair(engineTarget, baselineTarget, settings, index % 2 === 0);
      const loadAverage = loadavg()[0]!;
      loadSamples.push(loadAverage);
      const row: ThroughputRow = { id: query.id, role: query.role ?? 'admin', title: query.title, engine, baseline: base, ratio: engine.requestsPerSecond / base.requestsPerSecond, roundRatios: roundRatios(engine, base), loadAverage };
      throughput.push(row);
      log(`${query.id}: engine ${engine.requestsPerSecond.toFixed(0)} req/s, baseline ${base.requestsPerSecond.toFixed(0)} req/s, ratio ${row.ratio.toFixed(2)} (rounds ${row.roundRatios.map((r) => r.toFixed(2)).join(' ')}), load ${loadAverage.toFixed(1)}, rss ${engine.server.rssPeakMb.toFixed(0)} MB`);
      if (single && singleSelected.includes(query)) {
        const singleTarget = { pid: single.server.pid, url: single.server.url, path: '/graphql', headers, bodies };
        const [engineAgain, alone] = await measurePair(engineTarget, singleTarget, settings, index % 2 === 1);
        const load = loadavg()[0]!;
        loadSamples.push(load);
        const singleRow: ThroughputRow = { id: query.id, role: 'admin', title: query.title, engine: engineAgain, baseline: alone, ratio: engineAgain.requestsPerSecond / alone.requestsPerSecond, roundRatios: roundRatios(engineAgain, alone), loadAverage: load };
        singleThroughput.push(singleRow);
        log(`${query.id}: engine ${engineAgain.requestsPerSecond.toFixed(0)} req/s, single-lender ${alone.requestsPerSecond.toFixed(0)} req/s, ratio ${singleRow.ratio.toFixed(2)} (rounds ${singleRow.roundRatios.map((r) => r.toFixed(2)).join(' ')}), load ${load.toFixed(1)}`);
      }
    }
    const otherWork = otherWorkShare(cpuBefore, cpuSnapshot(serverPids), cpus().length);
    log(`other work on the machine during the throughput runs: ${(otherWork * 100).toFixed(1)} % of its CPU`);
    await baseline.stop();
    await single?.server.stop();

    const sqlOnly = args['no-sql-only']
      ? []
      : await measureSqlOnly(databaseUrl, main.id, sample, selected, { maxRuns: 1000, seconds: Number(args['sql-only-seconds']), warmupRuns: 10 }, log);
    const singleLender: SingleLenderResults | undefined = single
      ? {
          tables: single.tables,
          throughput: singleThroughput,
          sqlOnly: singleSqlOnly,
        }
      : undefined;
    loadSamples.push(loadavg()[0]!);

    log('micro-benchmarks…');
    const micro = runMicroBenchmarks(METADATA_PATH, sample, main.id, { coldIterations: 300, hitIterations: 20_000 });

    const explainEngine = new GraphEngine(await servedMetadata(pool), { maxDepth: 12, maxRows: null, planCacheSize: 100 });
    const plans: PlanExcerpt[] = [];
    for (const query of selected) if (!isMutation(query)) plans.push(await planExcerpt(pool, explainEngine, query, sample, main));

    const growth: GrowthRow[] = [];
    const growthPlans: PlanExcerpt[] = [];
    const growthScales = args['no-growth'] ? [] : args['growth-scales'].split(',').map(Number);
    if (growthScales.length) {
      const byScale = new Map<number, BenchAccount>([[MAIN_SCALE, main]]);
      for (const scale of growthScales) {
        if (byScale.has(scale)) continue;
        const account = createSeededAccount(databaseUrl, `${slugPrefix}-s${String(scale).replace('.', '_')}`, scale);
        accounts.push(account);
        byScale.set(scale, account);
      }
      await pool.query('VACUUM ANALYZE');
      const growthQueries = QUERIES.filter((query) => ['q1', 'q2', 'q3'].includes(query.id));
      const samples = new Map<number, DataSample>();
      for (const scale of growthScales) samples.set(scale, await sampleData(pool, byScale.get(scale)!.id));
      const seconds = Number(args['growth-seconds']);
      const rounds = 3;
      const collected = new Map<string, { samples: number[]; errors: number }>();
      for (let round = 0; round < rounds; round++) {
        for (const query of growthQueries) {
          for (const scale of growthScales) {
            const account = byScale.get(scale)!;
            const bodies = engineBodies(query, samples.get(scale)!, 500);
            const headers = { authorization: `Token ${account.key}` };
            if (round === 0) await sequentialLatency(`${service.url}/api/graph`, headers, bodies, 1);
            const measured = await sequentialLatency(`${service.url}/api/graph`, headers, bodies, seconds / rounds, round * 1000);
            const key = `${query.id}@${scale}`;
            const entry = collected.get(key) ?? { samples: [], errors: 0 };
            entry.samples.push(...measured.samplesMs);
            entry.errors += measured.errors;
            collected.set(key, entry);
          }
        }
      }
      for (const query of growthQueries) {
        for (const scale of growthScales) {
          const entry = collected.get(`${query.id}@${scale}`)!;
          growth.push({
            query: query.id,
            scale,
            loans: byScale.get(scale)!.loans,
            requests: entry.samples.length,
            p50Ms: percentile(entry.samples, 0.5),
            p99Ms: percentile(entry.samples, 0.99),
            errors: entry.errors,
          });
          growthPlans.push(await planExcerpt(pool, explainEngine, query, samples.get(scale)!, byScale.get(scale)!));
        }
      }
    }
    await service.stop();

    const results: BenchResults = {
      generatedAt: new Date().toISOString(),
      machine: {
        cpuModel: cpus()[0]?.model ?? 'unknown',
        cores: cpus().length,
        ramGiB: totalmem() / 1024 ** 3,
        kernel: release(),
        loadAverageAtEnd: loadavg(),
        loadAverageDuringThroughput: loadSamples,
        otherWorkShareDuringThroughput: otherWork,
      },
      versions: {
        node: process.version,
        postgres: await versionOf(pool),
        loanql: (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version,
        pg: packageVersion('pg'),
        autocannon: packageVersion('autocannon'),
        express: packageVersion('express'),
        graphql: packageVersion('graphql'),
      },
      settings: {
        database: external ? 'DATABASE_URL (given)' : 'throwaway PostgreSQL via .ci/postgres.sh (fsync off, shared_buffers 256MB)',
        connections: settings.connections,
        durationSeconds: settings.durationSeconds,
        warmupSeconds: settings.warmupSeconds,
        rounds: settings.rounds,
        poolSize: POOL_SIZE,
        mainScale: MAIN_SCALE,
        mainLoans: main.loans,
        growthSeconds: Number(args['growth-seconds']),
        variableSets: 500,
      },
      throughput,
      ...(singleLender ? { singleLender } : {}),
      sqlOnly,
      micro,
      plans,
      growth,
      growthPlans,
    };
    mkdirSync(outDir, { recursive: true });
    writeFileSync(join(outDir, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
    // The collections section (bench/collections.ts) is not in results.json: it is carried over.
    const previous = existsSync(join(outDir, 'RESULTS.md')) ? readFileSync(join(outDir, 'RESULTS.md'), 'utf8') : '';
    writeFileSync(
      join(outDir, 'RESULTS.md'),
      keepOperationsSection(keepSubscriptionsSection(keepCollectionsSection(renderResults(results), collectionsSectionOf(previous)), subscriptionsSectionOf(previous)), operationsSectionOf(previous)),
    );
    log(`wrote ${join(outDir, 'RESULTS.md')} and results.json`);
  } finally {
    closeAgent();
    if (external) {
      // Leave a given database as it was found: the benchmark accounts go (rows cascade).
      for (const account of accounts) await pool.query('DELETE FROM accounts WHERE id = $1', [account.id]).catch(() => undefined);
      await dropSingleLender(pool).catch(() => undefined);
    }
    await pool.end().catch(() => undefined);
    await stopAll();
  }
}

/** The metrics token of the `--operations` run's "on" server. */
const BENCH_METRICS_TOKEN = 'bench-metrics-token-0123456789';
/** How often the "on" server is scraped: more often than Prometheus's default 15 s, to be on the safe side. */
const SCRAPE_SECONDS = 5;

/**
 * `--operations` (issue 35, done-when 5): two processes of the built service on one seeded
 * database — "on" with `METRICS_TOKEN` (scraped every `SCRAPE_SECONDS`) and the request log at
 * `info` for every request (its stdout, the log, to a file as in production), "off" with neither —
 * measured in alternating rounds for q1 and q6.
 */
async function operationsMode(): Promise<void> {
  const outDir = resolve(ROOT, args.out);
  const external = process.env.DATABASE_URL;
  const databaseUrl = external ?? (await startThrowawayPostgres()).url;
  log(external ? 'using DATABASE_URL' : `throwaway PostgreSQL at ${databaseUrl}`);
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  pool.on('error', () => undefined);
  let account: BenchAccount | null = null;
  const logPath = join(tmpdir(), `loanql-bench-request-log-${process.pid}.jsonl`);
  const logFile = openSync(logPath, 'w');
  // "off"'s stdout goes to a file too (its startup lines only), so neither server writes into a pipe to this runner.
  const offLogPath = join(tmpdir(), `loanql-bench-request-log-${process.pid}-off.jsonl`);
  const offLogFile = openSync(offLogPath, 'w');
  const nullRun = args.null;
  let scraper: NodeJS.Timeout | undefined;
  try {
    runCli(databaseUrl, ['migrate']);
    // --scale: the seeded portfolio (1 = 10,000 loans, as the main run; 0.1 seeds in a tenth of the time on a busy machine).
    // --account [--key]: an account seeded before (seeding scale 0.1 takes 8 min at load 30), kept afterwards.
    const reused = args.account ? await existingAccount(pool, databaseUrl, args.account, args.key) : null;
    account = reused ?? createSeededAccount(databaseUrl, `bench-ops-${Date.now().toString(36)}`, Number(args.scale));
    await pool.query('VACUUM ANALYZE');
    const sample = await sampleData(pool, account.id);
    // PostgreSQL's CPU in the per-round split: this server's postmaster and its children.
    const postmasterPid = parentPidOf((await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid);
    const common = { DATABASE_URL: databaseUrl, METADATA_PATH, HOST: '127.0.0.1', LOG_LEVEL: 'info', PG_POOL_SIZE: String(POOL_SIZE), WEBHOOK_WORKER: '0' };
    const ready = async (url: string): Promise<boolean> => (await fetch(`${url}/healthz`)).ok;
    const offEnv = { ...common, REQUEST_LOG_LEVEL: 'silent' };
    const onEnv = nullRun ? offEnv : { ...common, METRICS_TOKEN: BENCH_METRICS_TOKEN, REQUEST_LOG_LEVEL: 'info', REQUEST_LOG_SAMPLE: '1' };
    if (nullRun) log('--null: both servers "off"; the ratio is the measurement\'s own bias');
    const startOn = async (): Promise<ServerProcess> => {
      const port = await freePort();
      return startServer('on', [...SHIPPED_NODE_FLAGS, join(ROOT, 'dist', 'server', 'main.js')], { ...onEnv, PORT: String(port) }, port, ready, logFile);
    };
    const startOff = async (): Promise<ServerProcess> => {
      const port = await freePort();
      return startServer('off', [...SHIPPED_NODE_FLAGS, join(ROOT, 'dist', 'server', 'main.js')], { ...offEnv, PORT: String(port) }, port, ready, offLogFile);
    };
    // Pairs of processes, started on then off, off then on, … (--off-first: off first): two
    // processes of one configuration can differ by several per cent for a whole run, whatever
    // they run (bench/README.md, session 33), so a side's figure is over several processes.
    const pairCount = Math.max(1, Math.round(Number(args.pairs)));
    const ons: ServerProcess[] = [];
    const offs: ServerProcess[] = [];
    for (let pair = 0; pair < pairCount; pair++) {
      if ((pair % 2 === 0) !== args['off-first']) {
        ons.push(await startOn());
        offs.push(await startOff());
      } else {
        offs.push(await startOff());
        ons.push(await startOn());
      }
    }
    const servers = [...ons, ...offs];
    let scrapes = 0;
    if (!args['no-scrape']) {
      scraper = setInterval(() => {
        for (const on of ons) {
          void fetch(`${on.url}/metrics`, { headers: { authorization: `Bearer ${BENCH_METRICS_TOKEN}` } })
            .then(async (response) => {
              await response.text();
              if (response.ok) scrapes++;
            })
            .catch(() => undefined);
        }
      }, SCRAPE_SECONDS * 1000);
    }

    const ids = args.only ? args.only.split(',') : ['q1', 'q6'];
    const selected = ALL_QUERIES.filter((query) => ids.includes(query.id));
    const rows: OperationsRow[] = [];
    const loadSamples: number[] = [];
    const cpuBefore = cpuSnapshot(servers.map((server) => server.pid));
    for (const [index, query] of selected.entries()) {
      const headers = { authorization: `Token ${keyOf(account, query)}` };
      const bodies = engineBodies(query, sample, 500);
      const target = (server: ServerProcess): LoadTarget => ({ pid: server.pid, url: server.url, path: '/api/graph', headers, bodies });
      const [measuredOn, measuredOff] = await measureGroups(ons.map(target), offs.map(target), { ...settings, cpuSplit: { postmasterPid } }, index % 2 === 0);
      const loadAverage = loadavg()[0]!;
      loadSamples.push(loadAverage);
      const row: OperationsRow = { id: query.id, title: query.title, on: measuredOn, off: measuredOff, ratio: measuredOn.requestsPerSecond / measuredOff.requestsPerSecond, roundRatios: roundRatios(measuredOn, measuredOff), loadAverage };
      rows.push(row);
      log(`${query.id}: on ${measuredOn.requestsPerSecond.toFixed(0)} req/s, off ${measuredOff.requestsPerSecond.toFixed(0)} req/s, ratio ${row.ratio.toFixed(3)}, median of rounds ${median(row.roundRatios).toFixed(3)} (rounds ${row.roundRatios.map((r) => r.toFixed(2)).join(' ')}), load ${loadAverage.toFixed(1)}`);
      for (const [side, measured] of [['on', measuredOn], ['off', measuredOff]] as const) {
        const split = measured.cpuSplit;
        if (split) log(`${query.id} ${side}: µs a request — server ${split.server.toFixed(1)}, postgres ${split.postgres.toFixed(1)}, runner ${split.runner.toFixed(1)}, machine busy ${split.machine.toFixed(1)} (kernel ${split.kernel.toFixed(1)}), rest ${split.rest.toFixed(1)}`);
      }
    }
    const otherWork = otherWorkShare(cpuBefore, cpuSnapshot(servers.map((server) => server.pid)), cpus().length);
    clearInterval(scraper);
    for (const server of servers) await server.stop();
    const logText = readFileSync(logPath, 'utf8');
    const bench = {
      at: new Date().toISOString(),
      ...(nullRun ? { null: true } : {}),
      ...(args['off-first'] ? { offFirst: true } : {}),
      postgresVersion: await versionOf(pool),
      loans: account.loans,
      connections: settings.connections,
      durationSeconds: settings.durationSeconds,
      rounds: settings.rounds,
      pairs: pairCount,
      warmupSeconds: settings.warmupSeconds,
      scrapeSeconds: SCRAPE_SECONDS,
      scrapes,
      logLines: logText.split('\n').filter((line) => line.includes('"msg":"request"')).length,
      logBytes: statSync(logPath).size,
      otherWorkShare: otherWork,
      rows,
    };
    mkdirSync(outDir, { recursive: true });
    if (nullRun) {
      writeFileSync(join(outDir, 'results-operations-null.json'), `${JSON.stringify(bench, null, 2)}\n`);
      log(`wrote ${join(outDir, 'results-operations-null.json')} (RESULTS.md unchanged)`);
      return;
    }
    writeFileSync(join(outDir, 'results-operations.json'), `${JSON.stringify(bench, null, 2)}\n`);
    const resultsPath = join(outDir, 'RESULTS.md');
    const previous = existsSync(resultsPath) ? readFileSync(resultsPath, 'utf8') : '';
    writeFileSync(resultsPath, keepOperationsSection(previous, renderOperationsSection(bench)));
    log(`wrote the operations section of ${resultsPath} and results-operations.json`);
  } finally {
    clearInterval(scraper);
    closeAgent();
    closeSync(logFile);
    closeSync(offLogFile);
    rmSync(logPath, { force: true });
    rmSync(offLogPath, { force: true });
    if (external && account && !args.account) await pool.query('DELETE FROM accounts WHERE id = $1', [account.id]).catch(() => undefined);
    await pool.end().catch(() => undefined);
    await stopAll();
  }
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    log(`${signal}: stopping every process started`);
    void stopAll().finally(() => process.exit(130));
  });
}

(args.operations ? operationsMode() : main()).catch(async (error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  await stopAll();
  process.exit(1);
});
