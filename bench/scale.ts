/**
 * Scale-out benchmark (issue 18, Done when 4): throughput of q1, q2 and q5 with 1 and 2 API
 * processes (`WORKERS`) and with 0 and 1 streaming replica (`DATABASE_REPLICA_URLS`), on this
 * machine. Not part of `npm run bench`:
 *
 *   npm run build && node --import tsx bench/scale.ts [--seconds 4] [--rounds 3] [--scale 0.5] [--connections 16]
 *
 * 1. A PostgreSQL 15 primary and a `pg_basebackup -R` standby (`.ci/replica.sh`) in a temp
 *    directory, stopped and removed at the end.
 * 2. Through the CLI: an account, a key, `seed --scale S`, then VACUUM ANALYZE (the standby
 *    replays it all before timing starts).
 * 3. Four services at once, idle but for the one being measured: 1 process / no replica,
 *    2 processes / no replica, 1 process / 1 replica, 2 processes / 1 replica (PG_POOL_SIZE=10 per
 *    process, WEBHOOK_WORKER=0, LOG_LEVEL=warn).
 * 4. Per query: a warm-up of each service, then `rounds` rounds in which every service gets
 *    `seconds` of autocannon load (`connections` keep-alive connections on loopback, bodies rotating
 *    through 200 variable sets), the order rotating between rounds so that background load on the
 *    shared machine falls on all four alike. Measured per configuration: req/s, p50/p99 latency,
 *    errors, and CPU over wall time of the service's processes, of the primary's PostgreSQL
 *    processes and of the standby's, and of the whole machine (from /proc).
 *
 * Writes `bench/RESULTS-scale.md` and `bench/results-scale.json` (or into `--out DIR`).
 */
import autocannon from 'autocannon';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort, ROOT } from './processes.js';
import { QUERIES, sampleData } from './queries.js';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
const SECONDS = Number(args.get('seconds') ?? 4);
const ROUNDS = Number(args.get('rounds') ?? 3);
const SCALE = Number(args.get('scale') ?? 0.5);
const CONNECTIONS = Number(args.get('connections') ?? 16);
const OUT = args.get('out') ?? join(ROOT, 'bench');
const QUERY_IDS = ['q1', 'q2', 'q5'];

const log = (line: string): void => void process.stderr.write(`${line}\n`);
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

interface Config {
  readonly name: string;
  readonly workers: number;
  readonly replica: boolean;
}
const CONFIGS: readonly Config[] = [
  { name: '1 process, no replica', workers: 1, replica: false },
  { name: '2 processes, no replica', workers: 2, replica: false },
  { name: '1 process, 1 replica', workers: 1, replica: true },
  { name: '2 processes, 1 replica', workers: 2, replica: true },
];

function cli(databaseUrl: string, cliArgs: readonly string[]): string {
  return execFileSync(process.execPath, [join(ROOT, 'dist', 'cli', 'main.js'), ...cliArgs], { env: { ...process.env, DATABASE_URL: databaseUrl }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 16 * 1024 * 1024 });
}

/** Every process whose parent chain leads to `root` (a postmaster's backends, a cluster's workers), `root` included. */
function processTree(root: number): number[] {
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
  return tree;
}
/**
 * CPU seconds of a process tree: each live process's own time plus the time of its children that
 * have ended and been reaped (cutime + cstime), so backends and workers that come and go
 * between two readings are still counted.
 */
function treeCpu(root: number): number {
  let ticks = 0;
  for (const pid of processTree(root)) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    } catch {
      // ended meanwhile: counted by its parent once reaped
    }
  }
  return ticks / CLOCK_TICKS;
}
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
/** Busy and total jiffies of the whole machine (/proc/stat). */
function machineTicks(): { busy: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = fields[3]! + fields[4]!;
  const total = fields.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

interface Service {
  readonly config: Config;
  readonly url: string;
  readonly child: ChildProcess;
}

async function startService(config: Config, primaryUrl: string, standbyUrl: string): Promise<Service> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: primaryUrl, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', PG_POOL_SIZE: '10', WEBHOOK_WORKER: '0', WORKERS: String(config.workers), METADATA_PATH: join(ROOT, 'metadata', 'loanql.default.yaml') };
  delete env.DATABASE_REPLICA_URLS;
  if (config.replica) env.DATABASE_REPLICA_URLS = standbyUrl;
  const child = spawn(process.execPath, [join(ROOT, 'dist', 'server', 'main.js')], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
  cleanups.push(() => void child.kill('SIGTERM'));
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const deadline = Date.now() + 90_000;
  while (!output.includes('loanql is serving at')) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`${config.name} did not start: ${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { config, url: `http://127.0.0.1:${port}`, child };
}

interface Tally {
  requests: number;
  seconds: number;
  errors: number;
  serviceCpu: number;
  primaryCpu: number;
  standbyCpu: number;
  machineBusy: number;
  latencies: number[];
}

async function round(service: Service, key: string, bodies: readonly string[], seconds: number, tally: Tally | null, postmasters: { primary: number; standby: number }): Promise<void> {
  let next = 0;
  const before = { service: treeCpu(service.child.pid!), primary: treeCpu(postmasters.primary), standby: treeCpu(postmasters.standby), machine: machineTicks() };
  const instance = autocannon({
    url: service.url,
    connections: CONNECTIONS,
    duration: seconds,
    timeout: 30,
    requests: [{ method: 'POST', path: '/api/graph', headers: { 'content-type': 'application/json', authorization: `Token ${key}` }, setupRequest: (request) => ({ ...request, body: bodies[next++ % bodies.length]! }) }],
  });
  const latencies: number[] = [];
  (instance as unknown as import('node:events').EventEmitter).on('response', (_c: unknown, _s: number, _b: number, ms: number) => void latencies.push(ms));
  const result = await instance;
  if (!tally) return;
  const machine = machineTicks();
  tally.requests += result.requests.total;
  tally.seconds += result.duration;
  tally.errors += result.non2xx + result.errors + result.timeouts;
  tally.serviceCpu += treeCpu(service.child.pid!) - before.service;
  tally.primaryCpu += treeCpu(postmasters.primary) - before.primary;
  tally.standbyCpu += treeCpu(postmasters.standby) - before.standby;
  tally.machineBusy += ((machine.busy - before.machine.busy) / (machine.total - before.machine.total)) * result.duration;
  tally.latencies.push(...latencies);
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'loanql-bench-scale.'));
  const script = join(ROOT, '.ci', 'replica.sh');
  cleanups.push(() => {
    spawnSync('bash', [script, 'stop', dir], { stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  });
  const [primaryPort, standbyPort] = [await freePort(), await freePort()];
  log('starting a PostgreSQL 15 primary and standby…');
  const lines = execFileSync('bash', [script, 'start', dir, String(primaryPort), String(standbyPort)], { encoding: 'utf8' }).trim().split('\n');
  const [primaryUrl, standbyUrl] = lines.slice(-2) as [string, string];
  const postmasters = {
    primary: Number(readFileSync(join(dir, 'primary', 'postmaster.pid'), 'utf8').split('\n')[0]),
    standby: Number(readFileSync(join(dir, 'standby', 'postmaster.pid'), 'utf8').split('\n')[0]),
  };

  cli(primaryUrl, ['migrate']);
  const created = cli(primaryUrl, ['account', 'create', 'bench']);
  const accountId = /\(([0-9a-f-]{36})\)/.exec(created)![1]!;
  const key = cli(primaryUrl, ['key', 'create', '--account', 'bench', '--name', 'bench']).trim().split('\n').pop()!;
  log(`seeding at scale ${SCALE}…`);
  log(cli(primaryUrl, ['seed', '--account', 'bench', '--scale', String(SCALE)]).trim());
  const pool = new pg.Pool({ connectionString: primaryUrl, max: 2 });
  await pool.query('VACUUM ANALYZE');
  const sample = await sampleData(pool, accountId);
  const { rows } = await pool.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn');
  await pool.end();
  const standby = new pg.Client({ connectionString: standbyUrl });
  await standby.connect();
  for (;;) {
    const replayed = await standby.query<{ caught: boolean }>('SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS caught', [rows[0]!.lsn]);
    if (replayed.rows[0]!.caught) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  await standby.end();

  const services: Service[] = [];
  for (const config of CONFIGS) services.push(await startService(config, primaryUrl, standbyUrl));
  log(`services up: ${services.map((s) => `${s.config.name} ${s.url}`).join('; ')}`);

  const results: { query: string; config: string; rps: number; p50: number; p99: number; errors: number; serviceCpu: number; primaryCpu: number; standbyCpu: number; machineBusy: number }[] = [];
  for (const queryId of QUERY_IDS) {
    const query = QUERIES.find((q) => q.id === queryId)!;
    const bodies = Array.from({ length: 200 }, (_, i) => JSON.stringify({ query: query.graphql, operationName: query.operationName, variables: query.variables(sample, i) }));
    for (const service of services) await round(service, key, bodies, 2, null, postmasters);
    const tallies = new Map(services.map((s) => [s, { requests: 0, seconds: 0, errors: 0, serviceCpu: 0, primaryCpu: 0, standbyCpu: 0, machineBusy: 0, latencies: [] } as Tally]));
    for (let r = 0; r < ROUNDS; r++) {
      for (let i = 0; i < services.length; i++) {
        const service = services[(i + r) % services.length]!;
        await round(service, key, bodies, SECONDS, tallies.get(service)!, postmasters);
      }
    }
    for (const [service, tally] of tallies) {
      const sorted = Float64Array.from(tally.latencies).sort();
      const pct = (p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
      const row = {
        query: queryId,
        config: service.config.name,
        rps: tally.requests / tally.seconds,
        p50: pct(50),
        p99: pct(99),
        errors: tally.errors,
        serviceCpu: tally.serviceCpu / tally.seconds,
        primaryCpu: tally.primaryCpu / tally.seconds,
        standbyCpu: tally.standbyCpu / tally.seconds,
        machineBusy: tally.machineBusy / tally.seconds,
      };
      results.push(row);
      log(`${queryId} ${row.config}: ${row.rps.toFixed(0)} req/s, p50 ${row.p50} ms, p99 ${row.p99} ms, errors ${row.errors}, CPU service ${row.serviceCpu.toFixed(2)} primary ${row.primaryCpu.toFixed(2)} standby ${row.standbyCpu.toFixed(2)}, machine ${(row.machineBusy * 100).toFixed(0)} % busy`);
    }
  }

  const machine = { cores: cpus().length, model: cpus()[0]?.model ?? 'unknown', loadAverage: loadavg(), scale: SCALE, loans: sample.loanCount, seconds: SECONDS * ROUNDS, connections: CONNECTIONS, at: new Date().toISOString() };
  mkdirSync(OUT, { recursive: true });
  writeFileSync(join(OUT, 'results-scale.json'), `${JSON.stringify({ machine, results }, null, 2)}\n`);
  const table = [
    `# Scale-out benchmark (bench/scale.ts)`,
    '',
    `${machine.at}: ${machine.cores} cores (${machine.model}), load average before the report ${machine.loadAverage.map((n) => n.toFixed(1)).join(' ')}; ${machine.loans} loans (scale ${SCALE}); ${CONNECTIONS} connections; ${ROUNDS} rounds × ${SECONDS} s per configuration and query. CPU columns: CPU seconds per wall second (1.00 = one core busy) of the service's processes, the primary's and the standby's PostgreSQL processes; "machine" is the whole machine's busy share over the same time, other engineers' work included.`,
    '',
    '| query | configuration | req/s | vs 1 process, no replica | p50 ms | p99 ms | errors | CPU service | CPU primary | CPU standby | machine busy |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...results.map((row) => {
      const base = results.find((r) => r.query === row.query && r.config === CONFIGS[0]!.name)!;
      return `| ${row.query} | ${row.config} | ${row.rps.toFixed(0)} | ${(row.rps / base.rps).toFixed(2)}× | ${row.p50.toFixed(1)} | ${row.p99.toFixed(1)} | ${row.errors} | ${row.serviceCpu.toFixed(2)} | ${row.primaryCpu.toFixed(2)} | ${row.standbyCpu.toFixed(2)} | ${(row.machineBusy * 100).toFixed(0)} % |`;
    }),
    '',
  ];
  writeFileSync(join(OUT, 'RESULTS-scale.md'), table.join('\n'));
  process.stdout.write(table.join('\n'));
}

main()
  .catch((error: unknown) => {
    process.stderr.write(`bench/scale.ts failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exitCode = 1;
  })
  .finally(cleanUp);
