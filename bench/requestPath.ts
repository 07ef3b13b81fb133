/**
 * Where a request's CPU goes on each side (issue 36, session 16): two or more servers side by
 * side — the service (with environment changes, or another build's dist) and the hand-written
 * baseline — driven in alternating rounds of a fixed number of requests (A, B, B, A, …), each
 * round divided into µs of CPU a request of the server process AND of the PostgreSQL backends
 * of its pool (every backend whose `application_name` is the side's tag, set with `PGAPPNAME`;
 * their on-CPU nanoseconds from `/proc/<pid>/schedstat`). While a round runs, the side's backends
 * are sampled in `pg_stat_activity` every 5 ms: the statements seen (`SELECT set_config(…)` shows the
 * service running a statement on its generic plan, `planChoice.ts`; builds before session 16 sent
 * `SET plan_cache_mode …` and `RESET …` around it).
 * Throughput depends on the share of the cores a process gets; CPU time per request much less, so
 * this holds on a loaded machine. Not part of `npm run bench`.
 *
 *   DATABASE_URL=… node --import tsx bench/requestPath.ts --account SLUG [--only q2] [--rounds 10] [--requests 4000]
 *       [--side engine] [--side baseline] [--side 'engine:ADMISSION_COST_BUDGET=0'] [--side 'engine@/path/to/dist']
 *
 * A side is `baseline`, or `engine[@DIST][:NAME=VALUE,…]` (`NAME=` removes a variable).
 */
import autocannon from 'autocannon';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { cpuSeconds, freePort, ROOT, runCli, SHIPPED_NODE_FLAGS, startServer, stopAll, type ServerProcess } from './processes.js';
import { ALL_QUERIES, accountIdOf, sampleData } from './queries.js';
import { median } from './median.js';

const { values: args } = parseArgs({
  options: {
    account: { type: 'string' },
    only: { type: 'string', default: 'q2' },
    rounds: { type: 'string', default: '10' },
    requests: { type: 'string', default: '4000' },
    connections: { type: 'string', default: '16' },
    side: { type: 'string', multiple: true, default: ['engine', 'baseline'] },
  },
});

interface Side {
  readonly label: string;
  readonly tag: string;
  readonly server: ServerProcess;
  readonly path: string;
  readonly serverUs: number[];
  readonly backendUs: number[];
  readonly seen: Map<string, number>;
}

/** On-CPU seconds of the backends whose application_name is `tag`, by pid. */
async function backendSeconds(pool: pg.Pool, tag: string): Promise<Map<number, number>> {
  const { rows } = await pool.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [tag]);
  const seconds = new Map<number, number>();
  for (const { pid } of rows) {
    try {
      seconds.set(pid, Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e9);
    } catch {
      // A backend that ended meanwhile.
    }
  }
  return seconds;
}

/** What the side's backends are running, sampled: the first words of each statement seen active. */
function sampleStatements(pool: pg.Pool, tag: string, seen: Map<string, number>): () => Promise<void> {
  let running = true;
  const loop = (async () => {
    while (running) {
      const { rows } = await pool.query<{ query: string }>("SELECT query FROM pg_stat_activity WHERE application_name = $1 AND state = 'active'", [tag]);
      for (const { query } of rows) {
        const head = /^\s*(SET plan_cache_mode|RESET plan_cache_mode|SELECT set_config|EXPLAIN|SELECT CASE WHEN EXISTS|SELECT concat|\S+)/.exec(query)?.[1] ?? query.slice(0, 20);
        seen.set(head, (seen.get(head) ?? 0) + 1);
      }
      await new Promise((done) => setTimeout(done, 5));
    }
  })();
  return async () => {
    running = false;
    await loop;
  };
}

async function round(side: Side, monitor: pg.Pool, key: string, bodies: readonly string[], requests: number, record: boolean): Promise<void> {
  let next = 0;
  const backendsBefore = await backendSeconds(monitor, side.tag);
  const before = cpuSeconds(side.server.pid);
  const stopSampling = record ? sampleStatements(monitor, side.tag, side.seen) : null;
  const result = await autocannon({
    url: side.server.url,
    connections: Number(args.connections),
    amount: requests,
    requests: [{ method: 'POST', path: side.path, headers: { 'content-type': 'application/json', authorization: `Token ${key}` }, setupRequest: (request) => ({ ...request, body: bodies[next++ % bodies.length]! }) }],
  });
  await stopSampling?.();
  const spent = cpuSeconds(side.server.pid) - before;
  let backend = 0;
  for (const [pid, seconds] of await backendSeconds(monitor, side.tag)) backend += seconds - (backendsBefore.get(pid) ?? 0);
  if (result.non2xx || result.errors) throw new Error(`${side.label}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  if (!record) return;
  side.serverUs.push((spent * 1e6) / result.requests.total);
  side.backendUs.push((backend * 1e6) / result.requests.total);
}

async function startSide(spec: string, index: number, databaseUrl: string): Promise<Side> {
  const tag = `requestpath-${index}`;
  const port = await freePort();
  const common = { DATABASE_URL: databaseUrl, HOST: '127.0.0.1', PORT: String(port), PG_POOL_SIZE: '10', PGAPPNAME: tag };
  const sideOf = (server: ServerProcess, path: string): Side => ({ label: spec, tag, server, path, serverUs: [], backendUs: [], seen: new Map() });
  if (spec === 'baseline') {
    const server = await startServer(tag, [...SHIPPED_NODE_FLAGS, '--import', 'tsx', join(ROOT, 'bench', 'baselineServer.ts')], common, port, async (url) => (await fetch(`${url}/none`, { method: 'POST' })).status === 404);
    return sideOf(server, '/graphql');
  }
  const match = /^engine(?:@([^:]+))?(?::(.*))?$/.exec(spec);
  if (!match) throw new Error(`--side ${spec}: not "baseline" nor "engine[@DIST][:NAME=VALUE,…]"`);
  const dist = resolve(match[1] ?? join(ROOT, 'dist'));
  const env: NodeJS.ProcessEnv = { ...common, METADATA_PATH: join(ROOT, 'metadata', 'loanql.default.yaml'), LOG_LEVEL: 'warn', WEBHOOK_WORKER: '0' };
  for (const pair of (match[2] ?? '').split(',').filter(Boolean)) {
    const [name, value] = [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)];
    if (value === '') delete env[name];
    else env[name] = value;
  }
  const server = await startServer(tag, [...SHIPPED_NODE_FLAGS, join(dist, 'server', 'main.js')], env, port, async (url) => (await fetch(`${url}/healthz`)).ok);
  return sideOf(server, '/api/graph');
}

async function main(): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl || !args.account) throw new Error('DATABASE_URL and --account are required');
  const monitor = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  try {
    const accountId = await accountIdOf(monitor, args.account);
    const sample = await sampleData(monitor, accountId);
    const key = runCli(databaseUrl, ['key', 'create', '--account', args.account, '--name', 'request path']).trim().split('\n').pop()!;
    const sides: Side[] = [];
    for (const [index, spec] of args.side.entries()) sides.push(await startSide(spec, index, databaseUrl));
    const requests = Number(args.requests);
    for (const query of ALL_QUERIES.filter((q) => args.only.split(',').includes(q.id))) {
      const bodies = Array.from({ length: 500 }, (_, i) => JSON.stringify({ query: query.graphql, operationName: query.operationName, variables: query.variables(sample, i) }));
      for (const side of sides) {
        side.serverUs.length = side.backendUs.length = 0;
        side.seen.clear();
        // Warm-up: plan checks, prepared statements, V8's optimised code.
        await round(side, monitor, key, bodies, requests, false);
      }
      for (let r = 0; r < Number(args.rounds); r++) {
        const order = r % 2 === 0 ? sides : [...sides].reverse();
        for (const side of order) await round(side, monitor, key, bodies, requests, true);
      }
      for (const side of sides) {
        const total = [...side.seen.values()].reduce((a, b) => a + b, 0) || 1;
        process.stdout.write(
          `${query.id} ${side.label}: server ${median(side.serverUs).toFixed(1)} µs, backends ${median(side.backendUs).toFixed(1)} µs a request (medians of ${side.serverUs.length} rounds; server ${Math.min(...side.serverUs).toFixed(0)}–${Math.max(...side.serverUs).toFixed(0)}, backends ${Math.min(...side.backendUs).toFixed(0)}–${Math.max(...side.backendUs).toFixed(0)}); ` +
            `statements seen: ${[...side.seen].sort((a, b) => b[1] - a[1]).map(([head, n]) => `${head} ${((100 * n) / total).toFixed(0)} %`).join(', ')}\n`,
        );
      }
      process.stdout.write(`${query.id}: load ${loadavg().map((l) => l.toFixed(1)).join(' ')}\n`);
    }
  } finally {
    await monitor.end();
    await stopAll();
  }
}

main().catch(async (error: unknown) => {
  process.stderr.write(`requestPath failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
  await stopAll();
});
