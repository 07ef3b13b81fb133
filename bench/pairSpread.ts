/**
 * How far a ratio moves between measurements of the SAME two servers (issue 36, session 19): the
 * service and the prepared baseline (or either against a second copy of itself, a null pair) are
 * started once, then each query of `--queries` (repeats allowed: `q1,q6,q1`) is measured as
 * `npm run bench` measures it — `measurePair` of `load.ts`, alternating rounds — and printed with
 * its ratio over all rounds, the median of the round ratios, and where the machine's CPU went a
 * request on each side (`CpuSplit`: the server, PostgreSQL — the postmaster's tree, found from
 * the cluster's `postmaster.pid` under `--pgdata` — the runner, the machine). A run of this
 * before a claim that one query "moved" tells whether the move is larger than the measurement's
 * own spread. Not part of `npm run bench`.
 *
 *   DATABASE_URL=… node --import tsx bench/pairSpread.ts --account SLUG --key lq_… --pgdata DIR
 *       [--pairs engine:baseline,baseline:baseline] [--queries q1,q6,q1] [--warmup 2] [--duration 20] [--rounds 20]
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { measurePair, type LoadResult, type LoadTarget } from './load.js';
import { median } from './median.js';
import { roundRatios } from './report.js';
import { freePort, ROOT, SHIPPED_NODE_FLAGS, startServer, stopAll } from './processes.js';
import { ALL_QUERIES, accountIdOf, sampleData } from './queries.js';

const { values: args } = parseArgs({
  options: {
    account: { type: 'string' },
    key: { type: 'string' },
    pgdata: { type: 'string' },
    pairs: { type: 'string', default: 'engine:baseline' },
    queries: { type: 'string', default: 'q1' },
    warmup: { type: 'string', default: '2' },
    duration: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '20' },
  },
});

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl || !args.account || !args.key || !args.pgdata) throw new Error('needs DATABASE_URL, --account, --key and --pgdata (the cluster\'s data directory)');
const key = args.key;
const postmasterPid = Number(readFileSync(join(args.pgdata, 'postmaster.pid'), 'utf8').split('\n')[0]);
const settings = { connections: 16, durationSeconds: Number(args.duration), warmupSeconds: Number(args.warmup), rounds: Number(args.rounds), cpuSplit: { postmasterPid } };

const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
const sample = await sampleData(pool, await accountIdOf(pool, args.account));
await pool.end();

function bodiesOf(id: string): string[] {
  const query = ALL_QUERIES.find((candidate) => candidate.id === id);
  if (!query) throw new Error(`no query ${id}`);
  return Array.from({ length: 500 }, (_, i) => JSON.stringify({ query: query.graphql, operationName: query.operationName, variables: query.variables(sample, i) }));
}

/** Starts a side as `run.ts` starts it (the same environment), with no bodies yet. */
async function start(kind: string): Promise<LoadTarget> {
  const port = await freePort();
  const headers = { authorization: `Token ${key}` };
  if (kind === 'engine') {
    const env = { DATABASE_URL: databaseUrl, METADATA_PATH: join(ROOT, 'metadata', 'loanql.default.yaml'), HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', PG_POOL_SIZE: '10' };
    const server = await startServer('service', [...SHIPPED_NODE_FLAGS, join(ROOT, 'dist', 'server', 'main.js')], env, port, async (url) => (await fetch(`${url}/healthz`)).ok);
    return { pid: server.pid, url: server.url, path: '/api/graph', headers, bodies: [] };
  }
  if (kind !== 'baseline') throw new Error(`a side is engine or baseline, not ${kind}`);
  const env = { DATABASE_URL: databaseUrl, HOST: '127.0.0.1', PORT: String(port), PG_POOL_SIZE: '10' };
  const server = await startServer('baseline', [...SHIPPED_NODE_FLAGS, '--import', 'tsx', join(ROOT, 'bench', 'baselineServer.ts')], env, port, async (url) => (await fetch(`${url}/none`, { method: 'POST' })).status === 404);
  return { pid: server.pid, url: server.url, path: '/graphql', headers, bodies: [] };
}

const split = (result: LoadResult): string => {
  const s = result.cpuSplit!;
  return `server ${s.server.toFixed(1)}, PostgreSQL ${s.postgres.toFixed(1)}, runner ${s.runner.toFixed(1)}, machine ${s.machine.toFixed(1)} µs a request`;
};

try {
  for (const [p, pair] of args.pairs.split(',').entries()) {
    const [kindA, kindB] = pair.split(':') as [string, string];
    const [a, b] = [await start(kindA), await start(kindB)];
    for (const [q, id] of args.queries.split(',').entries()) {
      const bodies = bodiesOf(id);
      const [resultA, resultB] = await measurePair({ ...a, bodies }, { ...b, bodies }, settings, (p + q) % 2 === 0);
      const rounds = roundRatios(resultA, resultB);
      process.stdout.write(
        `${id} ${kindA}/${kindB}: ${(resultA.requestsPerSecond / resultB.requestsPerSecond).toFixed(3)} over all rounds, median of rounds ${median(rounds).toFixed(3)} (${resultA.requestsPerSecond.toFixed(0)} / ${resultB.requestsPerSecond.toFixed(0)} req/s), load ${loadavg()[0]!.toFixed(1)}\n` +
          `  ${kindA}: ${split(resultA)}\n  ${kindB}: ${split(resultB)}\n`,
      );
    }
    await stopAll();
  }
} finally {
  await stopAll();
}
