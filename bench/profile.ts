/**
 * Where the service's CPU goes per request (issue 20): runs the built service under
 * `node --cpu-prof` once per query, drives it with autocannon (16 connections) for a few seconds,
 * stops it (the profile is written on exit) and sums the profile's self time by component,
 * divided by the requests served. Not part of `npm run bench` (profiling slows the service).
 *
 *   DATABASE_URL=… node --import tsx bench/profile.ts --account SLUG --key lq_… [--only q1,q5,q6] [--seconds 8] [--operations]
 *
 * `--operations` profiles the service as `run.ts --operations` runs its "on" server: metrics on
 * (`METRICS_TOKEN`), a request-log line per request written to a file (issue 35).
 *
 * The account must be seeded (scale 1); the key must be an admin key of it. Prints one Markdown
 * table per query: component, µs of CPU per request, share.
 */
import autocannon from 'autocannon';
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { cpuSeconds, freePort, ROOT, SHIPPED_NODE_FLAGS, startServer, stopAll } from './processes.js';
import { QUERIES, accountIdOf, sampleData } from './queries.js';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string };
}
interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** The component a profile node's code belongs to. */
function componentOf(node: ProfileNode): string | null {
  const { url, functionName } = node.callFrame;
  if (functionName === '(idle)') return null;
  if (functionName === '(garbage collector)') return 'garbage collection';
  if (functionName === '(program)' || (!url && functionName === '')) return 'V8/native (program)';
  if (/node_modules\/(pg|pg-protocol|pg-pool|pg-types|postgres-\w+)\//.test(url)) return 'node-postgres';
  if (url.includes('node_modules/graphql/')) return 'graphql-js (variable coercion)';
  if (url.includes('node_modules/pino') || url.includes('node_modules/fast-redact') || url.includes('node_modules/sonic-boom')) return 'logging (pino)';
  if (url.includes('node_modules/prom-client')) return 'metrics (prom-client)';
  if (url.includes('/dist/server/observeRequests') || url.includes('/dist/app/operations/')) return 'operations (observeRequests, request log, metrics)';
  if (url.includes('node_modules/lru-cache')) return 'plan/key caches (lru-cache)';
  if (url.includes('/node_modules/')) return `other packages (${/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1] ?? '?'})`;
  if (url.includes('/dist/engine/')) return 'engine (prepare, bind, respond)';
  if (url.includes('/dist/api/') || url.includes('/dist/server/') || url.includes('/dist/http/')) return 'api (fast path, HTTP handling)';
  if (url.includes('/dist/')) return 'other loanql code';
  if (/^node:(_http|http|net|stream|internal\/(http|stream|net|streams))/.test(url) || url.startsWith('node:internal/http')) return 'Node HTTP/net/streams';
  if (url.startsWith('node:internal/crypto') || url.startsWith('node:crypto')) return 'Node crypto (key hash)';
  if (url.startsWith('node:')) return 'Node other';
  if (!url) return `native (${functionName || 'anonymous'})`;
  return 'other';
}

/**
 * Self time by component, over the samples between the first and the last one taken in the
 * GraphQL route (so start-up — metadata parsing, schema building — and shutdown are left out).
 */
function breakdown(profile: CpuProfile): Map<string, number> {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const inRoute = (id: number): boolean => byId.get(id)!.callFrame.url.includes('/dist/api/routes/graph');
  const first = profile.samples.findIndex(inRoute);
  const last = profile.samples.length - 1 - [...profile.samples].reverse().findIndex(inRoute);
  const totals = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    if (i < first || i > last) return;
    const component = componentOf(byId.get(id)!);
    if (component) totals.set(component, (totals.get(component) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  return totals;
}

async function main(): Promise<void> {
  const { values: args } = parseArgs({ options: { account: { type: 'string' }, key: { type: 'string' }, only: { type: 'string', default: 'q1,q5,q6' }, seconds: { type: 'string', default: '8' }, operations: { type: 'boolean', default: false } } });
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl || !args.account || !args.key) throw new Error('DATABASE_URL, --account and --key are required');
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  const accountId = await accountIdOf(pool, args.account);
  const sample = await sampleData(pool, accountId);
  await pool.end();
  for (const query of QUERIES.filter((q) => args.only.split(',').includes(q.id))) {
    const dir = mkdtempSync(join(tmpdir(), 'loanql-prof.'));
    const port = await freePort();
    const operations = args.operations ? { LOG_LEVEL: 'info', METRICS_TOKEN: 'profile-metrics-token-0123456789', REQUEST_LOG_LEVEL: 'info', REQUEST_LOG_SAMPLE: '1' } : { LOG_LEVEL: 'warn' };
    const logFile = args.operations ? openSync(join(dir, 'request.log'), 'w') : undefined;
    const service = await startServer(
      'service',
      ['--cpu-prof', `--cpu-prof-dir=${dir}`, ...SHIPPED_NODE_FLAGS, join(ROOT, 'dist', 'server', 'main.js')],
      { DATABASE_URL: databaseUrl, METADATA_PATH: join(ROOT, 'metadata', 'loanql.default.yaml'), HOST: '127.0.0.1', PORT: String(port), PG_POOL_SIZE: '10', ...operations },
      port,
      async (url) => (await fetch(`${url}/healthz`)).ok,
      logFile,
    );
    let next = 0;
    const bodies = Array.from({ length: 500 }, (_, i) => JSON.stringify({ query: query.graphql, operationName: query.operationName, variables: query.variables(sample, i) }));
    const cpuBefore = cpuSeconds(service.pid);
    const result = await autocannon({
      url: service.url,
      connections: 16,
      duration: Number(args.seconds),
      requests: [{ method: 'POST', path: '/api/graph', headers: { 'content-type': 'application/json', authorization: `Token ${args.key}` }, setupRequest: (request) => ({ ...request, body: bodies[next++ % bodies.length]! }) }],
    });
    const cpuUs = (cpuSeconds(service.pid) - cpuBefore) * 1e6;
    await service.stop();
    if (logFile !== undefined) closeSync(logFile);
    const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'));
    if (!file) throw new Error('no profile written');
    const totals = breakdown(JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile);
    rmSync(dir, { recursive: true, force: true });
    // The profiler's samples are wall-clock intervals (a descheduled process charges its wait to
    // the frame it stopped in), so the profile gives the shares; the process's CPU time from
    // /proc (user + system) over the load gives the µs they are shares of.
    const requests = result.requests.total;
    const perRequest = cpuUs / requests;
    const all = [...totals.values()].reduce((a, b) => a + b, 0);
    process.stdout.write(`\n${query.id}: ${requests} requests, ${perRequest.toFixed(0)} µs of server CPU per request (user + system, profiler running)\n\n| component | µs/request | share |\n|---|---:|---:|\n`);
    for (const [component, us] of [...totals].sort((a, b) => b[1] - a[1])) {
      if (us / all < 0.01) continue;
      process.stdout.write(`| ${component} | ${((us / all) * perRequest).toFixed(0)} | ${((us / all) * 100).toFixed(0)} % |\n`);
    }
  }
}

main()
  .catch((error: unknown) => {
    process.stderr.write(`profile failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  })
  .finally(() => stopAll());
