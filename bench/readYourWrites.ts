/**
 * What read-your-writes across processes and hosts costs per read (issue 33, Done when 3),
 * against the per-process memory it replaced, in ONE run. Not part of `npm run bench`:
 *
 *   npm run build && node --import tsx bench/readYourWrites.ts --before DIR [--duration 20] [--rounds 20] [--scale 0.1]
 *
 * `--before DIR` is a built checkout of the code before (per-process memory of each key's last
 * write: `git archive <commit> | tar -x -C DIR`, `node_modules` linked, `node build.mjs`); this
 * checkout is "after" (the key's position kept in the primary, read by the key check).
 *
 * 1. A PostgreSQL 15 primary and a streaming standby (`.ci/replica.sh`), migrated by this
 *    checkout, one account seeded at `--scale`, VACUUM ANALYZE, replayed by the standby.
 * 2. Statements, on one connection to the primary, interleaved (before, after, after, before, …)
 *    after 200 warm-up runs each: the key check before a routed read — before: the key's `active`
 *    flag (`EXISTS … api_keys`); after: the same and the key's last write position, one statement
 *    — and what a write adds — before: `pg_current_wal_insert_lsn()`; after: the upsert into
 *    `key_write_positions`. Median and p90 in µs; and the rows each check reads
 *    (`pg_stat_user_tables`).
 * 3. q1 over HTTP: both builds as services at once, `WORKERS=2`, the standby in
 *    `DATABASE_REPLICA_URLS`, PG_POOL_SIZE=10, on the same database, the key having written (so
 *    "after" finds a position on every read); autocannon with alternating rounds (`load.ts`).
 *
 * Writes `bench/RESULTS-ryw.md` and `bench/results-ryw.json`.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { measurePair } from './load.js';
import { freePort, ROOT } from './processes.js';
import { QUERIES, sampleData } from './queries.js';

const { values: args } = parseArgs({
  options: {
    before: { type: 'string' },
    duration: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '20' },
    scale: { type: 'string', default: '0.1' },
    connections: { type: 'string', default: '16' },
    statements: { type: 'string', default: '3000' },
  },
});
const log = (line: string): void => void process.stderr.write(`ryw: ${line}\n`);
const cleanups: (() => void)[] = [];
const cleanUp = (): void => {
  while (cleanups.length) {
    try {
      cleanups.pop()!();
    } catch {
      // keep cleaning
    }
  }
};
process.on('SIGINT', () => {
  cleanUp();
  process.exit(130);
});

function cli(databaseUrl: string, cliArgs: readonly string[]): string {
  return execFileSync(process.execPath, [join(ROOT, 'dist', 'cli', 'main.js'), ...cliArgs], { env: { ...process.env, DATABASE_URL: databaseUrl }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 16 * 1024 * 1024 });
}

async function startService(root: string, primaryUrl: string, standbyUrl: string): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: primaryUrl,
    DATABASE_REPLICA_URLS: standbyUrl,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    PG_POOL_SIZE: '10',
    WEBHOOK_WORKER: '0',
    WORKERS: '2',
    METADATA_PATH: join(ROOT, 'metadata', 'loanql.default.yaml'),
  };
  const child = spawn(process.execPath, ['--max-semi-space-size=32', join(root, 'dist', 'server', 'main.js')], { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] });
  cleanups.push(() => void child.kill('SIGTERM'));
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const deadline = Date.now() + 90_000;
  while (!output.includes('loanql is serving at')) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`${root} did not start: ${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { url: `http://127.0.0.1:${port}`, child };
}

const percentile = (values: readonly number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};

/** Two statements on one connection, interleaved A B B A …, `runs` each after a warm-up: µs per run. */
async function interleaved(client: pg.Client, a: pg.QueryConfig, b: pg.QueryConfig, runs: number): Promise<{ a: number[]; b: number[] }> {
  for (let i = 0; i < 200; i++) {
    await client.query(a);
    await client.query(b);
  }
  const times = { a: [] as number[], b: [] as number[] };
  for (let i = 0; i < runs; i++) {
    const order: ('a' | 'b')[] = i % 2 ? ['b', 'a'] : ['a', 'b'];
    for (const side of order) {
      const started = process.hrtime.bigint();
      await client.query(side === 'a' ? a : b);
      times[side].push(Number(process.hrtime.bigint() - started) / 1000);
    }
  }
  return times;
}

async function tableRowsRead(client: pg.Client, run: () => Promise<unknown>, times: number): Promise<number> {
  // A statement's table counts reach pg_stat_user_tables at its transaction's end in this backend
  // only when flushed: pg_stat_force_next_flush() (PostgreSQL 15) makes the next one do it.
  const read = async (): Promise<number> => {
    await client.query('SELECT pg_stat_force_next_flush()');
    await client.query('SELECT 1');
    const { rows } = await client.query<{ n: string }>(`SELECT sum(coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0))::text AS n FROM pg_stat_user_tables WHERE relname IN ('api_keys', 'key_write_positions')`);
    return Number(rows[0]!.n);
  };
  const before = await read();
  for (let i = 0; i < times; i++) await run();
  return ((await read()) - before) / times;
}

async function main(): Promise<void> {
  if (!args.before) throw new Error('--before DIR: a built checkout of the code before (see the comment at the top)');
  const beforeRoot = resolve(args.before);
  if (!existsSync(join(beforeRoot, 'dist', 'server', 'main.js'))) throw new Error(`${beforeRoot} is not built (node build.mjs there)`);
  if (!existsSync(join(ROOT, 'dist', 'server', 'main.js'))) throw new Error('this checkout is not built (npm run build)');
  const dir = mkdtempSync(join(tmpdir(), 'loanql-bench-ryw.'));
  const script = join(ROOT, '.ci', 'replica.sh');
  cleanups.push(() => {
    spawnSync('bash', [script, 'stop', dir], { stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  });
  const [primaryPort, standbyPort] = [await freePort(), await freePort()];
  log('starting a PostgreSQL 15 primary and standby…');
  const lines = execFileSync('bash', [script, 'start', dir, String(primaryPort), String(standbyPort)], { encoding: 'utf8' }).trim().split('\n');
  const [primaryUrl, standbyUrl] = lines.slice(-2) as [string, string];

  cli(primaryUrl, ['migrate']);
  const created = cli(primaryUrl, ['account', 'create', 'bench']);
  const accountId = /\(([0-9a-f-]{36})\)/.exec(created)![1]!;
  const key = cli(primaryUrl, ['key', 'create', '--account', 'bench', '--name', 'bench']).trim().split('\n').pop()!;
  log(`seeding at scale ${args.scale}…`);
  cli(primaryUrl, ['seed', '--account', 'bench', '--scale', args.scale!]);
  const pool = new pg.Pool({ connectionString: primaryUrl, max: 2 });
  await pool.query('VACUUM ANALYZE');
  const sample = await sampleData(pool, accountId);
  const keyId = (await pool.query<{ id: string }>('SELECT id FROM api_keys WHERE account_id = $1', [accountId])).rows[0]!.id;
  await pool.end();

  // 2. The statements.
  const primary = new pg.Client({ connectionString: primaryUrl });
  await primary.connect();
  cleanups.push(() => void primary.end());
  await primary.query('INSERT INTO key_write_positions (account_id, id, lsn, at) VALUES ($1, $2, pg_current_wal_insert_lsn(), now())', [accountId, keyId]);
  const runs = Number(args.statements);
  const checkBefore: pg.QueryConfig = { name: 'check-before', text: 'SELECT (EXISTS (SELECT 1 FROM api_keys WHERE account_id = $1 AND id = $2 AND active)) AS "holds"', values: [accountId, keyId] };
  const checkAfter: pg.QueryConfig = {
    name: 'check-after',
    text: `SELECT EXISTS (SELECT 1 FROM api_keys WHERE account_id = $1 AND id = $2 AND active) AS active,
            (SELECT lsn::text FROM key_write_positions WHERE account_id = $1 AND id = $2 AND at > now() - make_interval(secs => $3)) AS lsn`,
    values: [accountId, keyId, 60],
  };
  const writeBefore: pg.QueryConfig = { name: 'write-before', text: 'SELECT pg_current_wal_insert_lsn()::text AS lsn' };
  const writeAfter: pg.QueryConfig = {
    name: 'write-after',
    text: `INSERT INTO key_write_positions AS kept (account_id, id, lsn, at) VALUES ($1, $2, pg_current_wal_insert_lsn(), now())
     ON CONFLICT (account_id, id) DO UPDATE SET lsn = greatest(kept.lsn, excluded.lsn), at = excluded.at
     RETURNING lsn::text AS lsn`,
    values: [accountId, keyId],
  };
  log(`statements: ${runs} runs each, interleaved…`);
  const checks = await interleaved(primary, checkBefore, checkAfter, runs);
  const writes = await interleaved(primary, writeBefore, writeAfter, runs);
  const rowsBefore = await tableRowsRead(primary, () => primary.query(checkBefore), 100);
  const rowsAfter = await tableRowsRead(primary, () => primary.query(checkAfter), 100);
  const statementRows = [
    { what: 'key check before a routed read', before: checks.a, after: checks.b },
    { what: 'after a write: the position', before: writes.a, after: writes.b },
  ].map((row) => ({ what: row.what, beforeP50: percentile(row.before, 50), beforeP90: percentile(row.before, 90), afterP50: percentile(row.after, 50), afterP90: percentile(row.after, 90) }));

  // 3. q1 over HTTP, both builds at once.
  const standby = new pg.Client({ connectionString: standbyUrl });
  await standby.connect();
  const { rows: lsnRows } = await primary.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn');
  while (!(await standby.query<{ caught: boolean }>('SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS caught', [lsnRows[0]!.lsn])).rows[0]!.caught) await new Promise((r) => setTimeout(r, 200));
  await standby.end();
  log('starting both services (WORKERS=2, 1 replica)…');
  const before = await startService(beforeRoot, primaryUrl, standbyUrl);
  const after = await startService(ROOT, primaryUrl, standbyUrl);
  const q1 = QUERIES.find((query) => query.id === 'q1')!;
  const bodies = Array.from({ length: 200 }, (_, i) => JSON.stringify({ query: q1.graphql, operationName: q1.operationName, variables: q1.variables(sample, i) }));
  // The key writes through both (an update that changes nothing still commits a transaction).
  for (const service of [before, after]) {
    const response = await fetch(`${service.url}/api/graph`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Token ${key}` },
      body: JSON.stringify({ query: 'mutation($id: uuid!) { update_loans(where: {id: {_eq: $id}, name: {_eq: "no such name"}}, _set: {name: "x"}) { affected_rows } }', variables: { id: sample.loanIds[0] } }),
    });
    if (!response.headers.get('loanql-consistency')) throw new Error(`${service.url}: the write carried no LoanQL-Consistency`);
    const read = await fetch(`${service.url}/api/graph`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Token ${key}` }, body: bodies[0] });
    await read.text();
    log(`${service.url}: q1 read from ${read.headers.get('loanql-read-from')}`);
  }
  const target = (service: { url: string; child: ChildProcess }) => ({ pid: service.child.pid!, url: service.url, path: '/api/graph', headers: { authorization: `Token ${key}` }, bodies });
  log(`q1: ${args.duration} s per build in ${args.rounds} alternating rounds…`);
  const [resultBefore, resultAfter] = await measurePair(target(before), target(after), { connections: Number(args.connections), durationSeconds: Number(args.duration), warmupSeconds: 2, rounds: Number(args.rounds) }, true);
  const roundRatios = resultAfter.roundRequestsPerSecond.map((rps, i) => rps / resultBefore.roundRequestsPerSecond[i]!);

  const report = {
    at: new Date().toISOString(),
    cores: cpus().length,
    loadAverage: loadavg(),
    scale: Number(args.scale),
    statements: { runs, rows: statementRows, rowsReadPerCheck: { before: rowsBefore, after: rowsAfter } },
    q1: {
      before: { rps: resultBefore.requestsPerSecond, p50: resultBefore.latencyP50Ms, p99: resultBefore.latencyP99Ms, errors: resultBefore.errors },
      after: { rps: resultAfter.requestsPerSecond, p50: resultAfter.latencyP50Ms, p99: resultAfter.latencyP99Ms, errors: resultAfter.errors },
      ratio: resultAfter.requestsPerSecond / resultBefore.requestsPerSecond,
      roundRatioMedian: percentile(roundRatios, 50),
      roundRatioRange: [Math.min(...roundRatios), Math.max(...roundRatios)],
    },
  };
  writeFileSync(join(ROOT, 'bench', 'results-ryw.json'), `${JSON.stringify(report, null, 2)}\n`);
  const f = (n: number, digits = 0): string => n.toFixed(digits);
  const md = [
    '# Read-your-writes across processes: the cost per read (bench/readYourWrites.ts)',
    '',
    `${report.at}: ${report.cores} cores, load average ${report.loadAverage.map((n) => n.toFixed(1)).join(' ')} at the end; scale ${report.scale}. "Before": each process remembers its own keys' last writes (no statement); "after": the key's position is kept in the primary and read by the key check.`,
    '',
    `Statements on one connection to the primary, ${runs} runs each, interleaved (µs, client round trip on loopback included):`,
    '',
    '| statement | before p50 | before p90 | after p50 | after p90 | after − before (p50) |',
    '|---|---|---|---|---|---|',
    ...statementRows.map((row) => `| ${row.what} | ${f(row.beforeP50)} | ${f(row.beforeP90)} | ${f(row.afterP50)} | ${f(row.afterP90)} | ${f(row.afterP50 - row.beforeP50)} |`),
    '',
    `Table rows the key check reads on the primary (pg_stat_user_tables): before ${f(rowsBefore, 2)}, after ${f(rowsAfter, 2)}.`,
    '',
    `q1 with 1 replica, WORKERS=2, ${args.connections} connections, ${args.duration} s per build in ${args.rounds} alternating rounds:`,
    '',
    '| build | req/s | p50 ms | p99 ms | errors |',
    '|---|---|---|---|---|',
    `| before (per-process memory) | ${f(report.q1.before.rps)} | ${f(report.q1.before.p50, 1)} | ${f(report.q1.before.p99, 1)} | ${report.q1.before.errors} |`,
    `| after (position in the primary) | ${f(report.q1.after.rps)} | ${f(report.q1.after.p50, 1)} | ${f(report.q1.after.p99, 1)} | ${report.q1.after.errors} |`,
    '',
    `after/before: ${f(report.q1.ratio, 3)} over all rounds; per-round ratios median ${f(report.q1.roundRatioMedian, 3)}, range ${f(report.q1.roundRatioRange[0]!, 2)}–${f(report.q1.roundRatioRange[1]!, 2)}.`,
    '',
  ].join('\n');
  writeFileSync(join(ROOT, 'bench', 'RESULTS-ryw.md'), md);
  process.stdout.write(md);
}

main()
  .catch((error: unknown) => {
    process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
    process.exitCode = 1;
  })
  .finally(cleanUp);
