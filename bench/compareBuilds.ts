/**
 * Two builds of the service measured in ONE run (issue 27: a restructure must not change the SQL
 * nor cost throughput). `--before DIR` is another checkout of loanql with its dependencies
 * installed (a `git worktree` with `node_modules` linked is enough); this checkout is "after".
 *
 * 1. A throwaway PostgreSQL 15 (or `DATABASE_URL`), migrated and seeded at scale 1 by this
 *    checkout's CLI, with an admin key and an investor key.
 * 2. SQL: each checkout prints the statement its engine compiles for every benchmark query and
 *    its first five variable sets (`printStatements.ts`, copied into the other checkout when it
 *    lacks it); the texts and values must be identical, or the run stops.
 * 3. Both services built (`node build.mjs` in each) and started as shipped (each checkout's own
 *    `npm start` flags and entry), then per query the same answers from both, and throughput
 *    measured in alternating rounds (`load.ts`), as `npm run bench` measures engine and baseline.
 * 4. A table on stdout and in `bench/RESULTS-compare.md`: req/s of each build, the after/before
 *    ratio over all rounds, and the median and range of the per-round ratios.
 *
 * `node --import tsx bench/compareBuilds.ts --before ../loanql-old [--only q1,q2] [--duration 20] [--rounds 20]`
 * `--account SLUG` (with `DATABASE_URL`): an account already seeded there instead of a new one
 * (seeding scale 1 takes 10–30 min on a busy machine); it gets two new keys and is kept.
 * Only the selected queries that both checkouts know are compared and measured (a query added
 * since, such as q9, is listed as skipped).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import pg from 'pg';
import { closeAgent, postJson } from './latency.js';
import { measurePair, type LoadSettings } from './load.js';
import { freePort, ROOT, runCli, startServer, startThrowawayPostgres, stopAll, type ServerProcess } from './processes.js';
import { ALL_QUERIES, sampleData, type BenchQuery, type DataSample } from './queries.js';
import { roundRatios } from './report.js';
import { median } from './median.js';

const { values: args } = parseArgs({
  options: {
    before: { type: 'string' },
    only: { type: 'string' },
    duration: { type: 'string', default: '20' },
    warmup: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '20' },
    connections: { type: 'string', default: '16' },
    account: { type: 'string' },
  },
});
const log = (line: string): void => void process.stderr.write(`compare: ${line}\n`);
/** The node flags and entry file of a checkout's `npm start` (`node [flags] dist/…/main.js`). */
function startCommand(root: string): string[] {
  const start = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  const words = start.trim().split(/\s+/);
  if (words[0] !== 'node' || !words.at(-1)!.endsWith('main.js')) throw new Error(`${root}: start script is not "node [flags] …/main.js": ${start}`);
  return [...words.slice(1, -1), join(root, words.at(-1)!)];
}

type Statements = Record<string, unknown>;

function statementsOf(root: string, databaseUrl: string, accountId: string): Statements {
  const script = join(root, 'bench', 'printStatements.ts');
  if (!existsSync(script)) copyFileSync(join(ROOT, 'bench', 'printStatements.ts'), script);
  const out = spawnSync(process.execPath, ['--import', 'tsx', script, '--account', accountId], { cwd: root, env: { ...process.env, DATABASE_URL: databaseUrl }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (out.status !== 0) throw new Error(`${root}: printStatements failed: ${out.stderr}`);
  return JSON.parse(out.stdout) as Statements;
}

async function startService(name: string, root: string, databaseUrl: string): Promise<ServerProcess> {
  const port = await freePort();
  return startServer(
    name,
    startCommand(root),
    { DATABASE_URL: databaseUrl, METADATA_PATH: join(root, 'metadata', 'loanql.default.yaml'), HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', PG_POOL_SIZE: '10' },
    port,
    async (url) => (await fetch(`${url}/healthz`)).ok,
  );
}

const bodiesOf = (query: BenchQuery, sample: DataSample, count: number): string[] =>
  Array.from({ length: count }, (_, i) => JSON.stringify({ query: query.graphql, operationName: query.operationName, variables: query.variables(sample, i) }));

async function main(): Promise<void> {
  if (!args.before) throw new Error('--before DIR (another checkout of loanql, dependencies installed) is required');
  const before = resolve(args.before);
  const settings: LoadSettings = { connections: Number(args.connections), durationSeconds: Number(args.duration), warmupSeconds: Number(args.warmup), rounds: Number(args.rounds) };
  for (const root of [before, ROOT]) {
    log(`building ${root}`);
    execFileSync(process.execPath, ['build.mjs'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  const databaseUrl = process.env.DATABASE_URL ?? (await startThrowawayPostgres()).url;
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  pool.on('error', () => undefined);
  try {
    let slug: string;
    let accountId: string | undefined;
    if (args.account) {
      if (!process.env.DATABASE_URL) throw new Error('--account needs DATABASE_URL (the database holding that account)');
      slug = args.account;
      accountId = (await pool.query<{ id: string }>('SELECT id FROM accounts WHERE slug = $1', [slug])).rows[0]?.id;
      if (!accountId) throw new Error(`no account ${slug} in DATABASE_URL`);
      log(`using the seeded account ${slug}`);
    } else {
      slug = `compare-${Date.now().toString(36)}`;
      runCli(databaseUrl, ['migrate']);
      const created = runCli(databaseUrl, ['account', 'create', slug, '--name', 'Compare builds']);
      accountId = /\(([0-9a-f-]{36})\)/.exec(created)?.[1];
      if (!accountId) throw new Error(`no account id in: ${created}`);
      runCli(databaseUrl, ['admin', 'create', '--account', slug, '--email', `${slug}@bench.loanql.test`, '--password', 'bench-password', '--name', 'Bench Admin']);
      log('seeding at scale 1…');
      runCli(databaseUrl, ['seed', '--account', slug, '--scale', '1']);
      await pool.query('VACUUM ANALYZE');
    }
    const key = runCli(databaseUrl, ['key', 'create', '--account', slug, '--name', 'bench']).trim().split('\n').pop()!;
    const sample = await sampleData(pool, accountId);
    const investorKey = runCli(databaseUrl, ['key', 'create', '--account', slug, '--name', 'investor', '--role', 'investor', '--var', `person_id=${sample.investorPersonId}`]).trim().split('\n').pop()!;

    const wanted = (id: string): boolean => !args.only || args.only.split(',').includes(id);
    const [allBefore, allAfter] = [statementsOf(before, databaseUrl, accountId), statementsOf(ROOT, databaseUrl, accountId)];
    const common = (id: string): boolean => id in allBefore && id in allAfter;
    const pick = (all: Statements): Statements => Object.fromEntries(Object.entries(all).filter(([id]) => wanted(id) && common(id)));
    const [statementsBefore, statementsAfter] = [pick(allBefore), pick(allAfter)];
    if (!isDeepStrictEqual(statementsBefore, statementsAfter)) {
      writeFileSync(join(ROOT, 'bench', '.work-statements-before.json'), JSON.stringify(statementsBefore, null, 1));
      writeFileSync(join(ROOT, 'bench', '.work-statements-after.json'), JSON.stringify(statementsAfter, null, 1));
      throw new Error('the two builds compile different statements (written to bench/.work-statements-*.json)');
    }
    log(`statements identical: ${Object.keys(statementsAfter).length} queries × 5 variable sets`);
    // A query one checkout lacks (its queries.ts predates it) is not measured.
    const skipped = ALL_QUERIES.filter((query) => wanted(query.id) && query.id in allAfter && !(query.id in allBefore)).map((query) => query.id);
    if (skipped.length) log(`skipped (not in the before checkout): ${skipped.join(', ')}`);

    const old = await startService('before', before, databaseUrl);
    const now = await startService('after', ROOT, databaseUrl);
    const selected = ALL_QUERIES.filter((query) => wanted(query.id) && !skipped.includes(query.id));
    const rows: string[] = [];
    for (const [index, query] of selected.entries()) {
      const headers = { authorization: `Token ${query.role === 'investor' ? investorKey : key}` };
      const bodies = bodiesOf(query, sample, 500);
      const [a, b] = [await postJson(`${old.url}/api/graph`, headers, bodies[0]!), await postJson(`${now.url}/api/graph`, headers, bodies[0]!)];
      if (a.status !== 200 || b.status !== 200 || (query.baselineWriteSql === undefined && a.body !== b.body)) throw new Error(`${query.id}: the builds answer differently (${a.status}/${b.status})`);
      const [resultBefore, resultAfter] = await measurePair(
        { pid: old.pid, url: old.url, path: '/api/graph', headers, bodies },
        { pid: now.pid, url: now.url, path: '/api/graph', headers, bodies },
        settings,
        index % 2 === 0,
      );
      const ratios = roundRatios(resultAfter, resultBefore);
      // CPU per request of each service process: what a build's own code costs, far steadier on
      // a shared machine than req/s (the statements are identical, so the database's share is too).
      const [cpuBefore, cpuAfter] = [cpuMicrosPerRequest(resultBefore), cpuMicrosPerRequest(resultAfter)];
      const row = `| ${query.id} | ${resultBefore.requestsPerSecond.toFixed(0)} | ${resultAfter.requestsPerSecond.toFixed(0)} | ${(resultAfter.requestsPerSecond / resultBefore.requestsPerSecond).toFixed(2)} | ${median(ratios).toFixed(2)} | ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)} | ${cpuBefore.toFixed(0)} | ${cpuAfter.toFixed(0)} | ${(cpuBefore / cpuAfter).toFixed(2)} | ${resultBefore.errors + resultAfter.errors} |`;
      rows.push(row);
      log(row);
    }
    const report = [
      `# Two builds in one run`,
      '',
      `before: ${before} (${gitHead(before)}), after: ${ROOT} (${gitHead(ROOT)}); ${new Date().toISOString()}; PostgreSQL ${process.env.DATABASE_URL ? 'given (DATABASE_URL)' : 'throwaway'}, ${args.account ? `the seeded account ${args.account}, ${sample.loanCount} loans` : 'scale 1'}, load average (1 min) ${loadavg()[0]!.toFixed(1)} at the end, ${settings.connections} connections, ${settings.durationSeconds} s per build and query in ${settings.rounds} alternating rounds.`,
      '',
      'Statements: identical for every query and its first five variable sets.',
      '',
      'CPU µs/req: the service process\'s CPU time per request over all its rounds; "CPU before/after" above 1 means the new build',
      'spends less.',
      '',
      '| query | before req/s | after req/s | after/before | median of round ratios | range | before CPU µs/req | after CPU µs/req | CPU before/after | errors |',
      '|---|---|---|---|---|---|---|---|---|---|',
      ...rows,
      '',
    ].join('\n');
    writeFileSync(join(ROOT, 'bench', 'RESULTS-compare.md'), report);
    process.stdout.write(report);
  } finally {
    await pool.end();
    closeAgent();
    await stopAll();
  }
}

function cpuMicrosPerRequest(result: { requestsPerSecond: number; server: { cpu: number } }): number {
  return (result.server.cpu / result.requestsPerSecond) * 1e6;
}

function gitHead(root: string): string {
  const out = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' });
  return out.stdout.trim() || 'unknown';
}

await main();
