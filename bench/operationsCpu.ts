/**
 * What metrics and the request log cost a request in CPU (issue 35, done-when 5), measured so
 * that other work on the machine moves it little: the "on" and "off" servers of
 * `run.ts --operations` side by side, driven in alternating rounds of a fixed number of requests
 * (on, off, off, on, …), each round's server CPU time (user + system, /proc) divided by the
 * requests it answered. Throughput depends on the share of the cores a process gets; CPU time per
 * request much less so. Not part of `npm run bench`.
 *
 *   DATABASE_URL=… node --import tsx bench/operationsCpu.ts --account SLUG --key lq_… [--only q1,q6] [--rounds 10] [--requests 4000] [--dist DIR] [--on-env A=1,B=] [--perf DIR] [--cpu-prof DIR]
 *
 * `--dist` runs another build's `server/main.js` (say, main's) to compare builds; `--on-env` changes
 * the "on" server's environment (`REQUEST_LOG_SAMPLE=0,METRICS_TOKEN=`: the wrapper alone). Prints
 * per query the median µs a request on and off, their difference per round, the on/off ratio of
 * CPU a request, and the CPU by thread (the main thread, the rest). `--perf DIR` also records both
 * servers with `perf record` during each query's rounds (on-CPU samples of every thread, the kernel
 * included; JIT frames named by `--perf-basic-prof`) and prints the symbols whose self time a request
 * differs most, on − off; `--cpu-prof DIR` does the same with V8's profiler (wall-time samples,
 * start-up included). This is how the costs in bench/README.md (session ops6) were found.
 */
import autocannon from 'autocannon';
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { readdirSync, readFileSync } from 'node:fs';
import { cpuSeconds, freePort, ROOT, SHIPPED_NODE_FLAGS, startServer, stopAll, type ServerProcess } from './processes.js';
import { QUERIES, accountIdOf, sampleData } from './queries.js';
import { median } from './median.js';

const { values: args } = parseArgs({
  options: {
    account: { type: 'string' },
    key: { type: 'string' },
    only: { type: 'string', default: 'q1,q6' },
    rounds: { type: 'string', default: '10' },
    requests: { type: 'string', default: '4000' },
    connections: { type: 'string', default: '16' },
    dist: { type: 'string', default: join(ROOT, 'dist') },
    /** Variables to add to (or, `NAME=`, take from) the "on" server's environment, `A=1,B=2`: to tell apart what costs. */
    'on-env': { type: 'string', default: '' },
    /** A directory: both servers run under `node --cpu-prof` into DIR/on and DIR/off; at the end, self time by function a request, on − off. */
    'cpu-prof': { type: 'string' },
    /** A directory: `perf record` (on-CPU samples, kernel included) of each server during each query's rounds; then self time by symbol a request, on − off. */
    perf: { type: 'string' },
  },
});

/** CPU seconds of each thread of a process by name (`node` is the main thread), from /proc. */
function threadSeconds(pid: number): Map<string, number> {
  const byName = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = tid === String(pid) ? 'main' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      byName.set(name, (byName.get(name) ?? 0) + (Number(fields[11]) + Number(fields[12])) / 100);
    } catch {
      // A thread that ended meanwhile.
    }
  }
  return byName;
}

const threadTotals = new Map<string, Map<string, number>>();

/** Sends `requests` requests to `server` and returns the CPU µs it spent on each. */
async function cpuPerRequest(server: ServerProcess, key: string, bodies: readonly string[], requests: number): Promise<number> {
  let next = 0;
  const threadsBefore = threadSeconds(server.pid);
  const before = cpuSeconds(server.pid);
  const result = await autocannon({
    url: server.url,
    connections: Number(args.connections),
    amount: requests,
    requests: [{ method: 'POST', path: '/api/graph', headers: { 'content-type': 'application/json', authorization: `Token ${key}` }, setupRequest: (request) => ({ ...request, body: bodies[next++ % bodies.length]! }) }],
  });
  const spent = cpuSeconds(server.pid) - before;
  answered.set(server.name, (answered.get(server.name) ?? 0) + result.requests.total);
  const totals = threadTotals.get(server.name) ?? new Map<string, number>();
  threadTotals.set(server.name, totals);
  for (const [name, seconds] of threadSeconds(server.pid)) totals.set(name, (totals.get(name) ?? 0) + ((seconds - (threadsBefore.get(name) ?? 0)) * 1e6) / result.requests.total);
  if (result.non2xx || result.errors) throw new Error(`${server.name}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return (spent * 1e6) / result.requests.total;
}

async function main(): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl || !args.account || !args.key) throw new Error('DATABASE_URL, --account and --key are required');
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  const accountId = await accountIdOf(pool, args.account);
  const sample = await sampleData(pool, accountId);
  await pool.end();
  const main = join(resolve(args.dist), 'server', 'main.js');
  const common = { DATABASE_URL: databaseUrl, METADATA_PATH: join(ROOT, 'metadata', 'loanql.default.yaml'), HOST: '127.0.0.1', LOG_LEVEL: 'info', PG_POOL_SIZE: '10', WEBHOOK_WORKER: '0' };
  const ready = async (url: string): Promise<boolean> => (await fetch(`${url}/healthz`)).ok;
  const logPath = join(tmpdir(), `loanql-operations-cpu-${process.pid}.jsonl`);
  const logFile = openSync(logPath, 'w');
  try {
    const onPort = await freePort();
    const onEnv: NodeJS.ProcessEnv = { ...common, PORT: String(onPort), METRICS_TOKEN: 'bench-metrics-token-0123456789', REQUEST_LOG_LEVEL: 'info', REQUEST_LOG_SAMPLE: '1' };
    for (const pair of args['on-env'].split(',').filter(Boolean)) {
      const [name, value] = [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)];
      if (value === '') delete onEnv[name];
      else onEnv[name] = value;
    }
    const profileDir = args['cpu-prof'] ? resolve(args['cpu-prof']) : null;
    const flags = (name: string): string[] => [
      ...SHIPPED_NODE_FLAGS,
      ...(profileDir ? ['--cpu-prof', '--cpu-prof-dir', join(profileDir, name)] : []),
      ...(args.perf ? ['--perf-basic-prof'] : []),
    ];
    const on = await startServer('on', [...flags('on'), main], onEnv, onPort, ready, logFile);
    const offPort = await freePort();
    const off = await startServer('off', [...flags('off'), main], { ...common, PORT: String(offPort), REQUEST_LOG_LEVEL: 'silent' }, offPort, ready);
    const requests = Number(args.requests);
    for (const query of QUERIES.filter((q) => args.only.split(',').includes(q.id))) {
      const bodies = Array.from({ length: 500 }, (_, i) => JSON.stringify({ query: query.graphql, operationName: query.operationName, variables: query.variables(sample, i) }));
      // Warm-up: the plan cache, prepared statements, V8's optimised code.
      await cpuPerRequest(on, args.key, bodies, requests);
      await cpuPerRequest(off, args.key, bodies, requests);
      threadTotals.clear();
      const recordings = args.perf ? [on, off].map((server) => recordPerf(server, join(resolve(args.perf!), `${query.id}-${server.name}.data`))) : [];
      const counted = new Map(answered);
      const onUs: number[] = [];
      const offUs: number[] = [];
      for (let round = 0; round < Number(args.rounds); round++) {
        const order = round % 2 === 0 ? [on, off] : [off, on];
        for (const server of order) (server === on ? onUs : offUs).push(await cpuPerRequest(server, args.key, bodies, requests));
      }
      for (const recording of recordings) await recording.stop();
      if (args.perf) {
        const requestsOf = (name: string): number => (answered.get(name) ?? 0) - (counted.get(name) ?? 0);
        process.stdout.write(perfDifference(join(resolve(args.perf), query.id), requestsOf('on'), requestsOf('off')));
      }
      const [medianOn, medianOff] = [median(onUs), median(offUs)];
      const differences = onUs.map((us, i) => us - offUs[i]!);
      process.stdout.write(
        `${query.id} threads (µs a request, summed over rounds): ${[...threadTotals].map(([server, totals]) => `${server}: ${[...totals].map(([name, us]) => `${name} ${(us / Number(args.rounds)).toFixed(1)}`).join(', ')}`).join('; ')}\n` +
        `${query.id}: CPU µs a request on ${medianOn.toFixed(1)}, off ${medianOff.toFixed(1)}; on − off per round: median ${median(differences).toFixed(1)} (${Math.min(...differences).toFixed(1)} to ${Math.max(...differences).toFixed(1)}); ratio off/on ${(medianOff / medianOn).toFixed(3)}; load ${loadavg()[0]!.toFixed(1)}\n`,
      );
    }
  } finally {
    closeSync(logFile);
    rmSync(logPath, { force: true });
    await stopAll();
  }
  if (args['cpu-prof']) {
    process.stdout.write(profileDifference(resolve(args['cpu-prof']), answered.get('on') ?? 0, answered.get('off') ?? 0));
  }
}

/** `perf record` of a process until `stop`. */
function recordPerf(server: ServerProcess, output: string): { stop: () => Promise<void> } {
  mkdirSync(dirname(output), { recursive: true });
  const child = spawn('perf', ['record', '-F', '1999', '-g', '-p', String(server.pid), '-o', output], { stdio: 'ignore' });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  return { stop: async () => (child.kill('SIGINT'), await exited) };
}

/** Self time by symbol of `perf report`: each symbol's share, and the µs of CPU sampled in all. */
function perfSelf(file: string): { total: number; bySymbol: Map<string, number> } {
  const report = execFileSync('perf', ['report', '-i', file, '--no-children', '--sort', 'dso,sym', '--stdio', '-g', 'none', '--percent-limit', '0.01'], { encoding: 'utf8', maxBuffer: 1 << 28 });
  // cpu-clock counts nanoseconds.
  const total = Number(/Event count \(approx\.\): (\d+)/.exec(report)?.[1] ?? 0) / 1000;
  const bySymbol = new Map<string, number>();
  for (const line of report.split('\n')) {
    const match = /^\s+([\d.]+)%\s+(\[JIT\] tid \d+|\S+)\s+\[[.k]\]\s+(.*)$/.exec(line);
    if (!match) continue;
    // JIT frames keyed by name, not by the process's thread id (else "on" and "off" never match);
    // a function compiled more than once shows once per version: summed.
    const symbol = `${match[2]!.startsWith('[JIT]') ? 'JIT' : match[2]} ${match[3]!.trim()}`;
    bySymbol.set(symbol, (bySymbol.get(symbol) ?? 0) + Number(match[1]) / 100);
  }
  return { total, bySymbol };
}

/** µs of CPU a request by symbol, on − off, largest differences first. */
function perfDifference(prefix: string, onRequests: number, offRequests: number): string {
  const [on, off] = [perfSelf(`${prefix}-on.data`), perfSelf(`${prefix}-off.data`)];
  const usOf = (run: { total: number; bySymbol: Map<string, number> }, symbol: string, requests: number): number => ((run.bySymbol.get(symbol) ?? 0) * run.total) / requests;
  const rows = [...new Set([...on.bySymbol.keys(), ...off.bySymbol.keys()])]
    .map((symbol) => ({ symbol, on: usOf(on, symbol, onRequests), off: usOf(off, symbol, offRequests) }))
    .sort((a, b) => Math.abs(b.on - b.off) - Math.abs(a.on - a.off))
    .slice(0, 50);
  return (
    `perf (every thread, µs a request): on ${(on.total / onRequests).toFixed(1)} (${onRequests} requests), off ${(off.total / offRequests).toFixed(1)} (${offRequests})\n` +
    rows.map((row) => `${(row.on - row.off).toFixed(2).padStart(7)}  on ${row.on.toFixed(2).padStart(6)}  off ${row.off.toFixed(2).padStart(6)}  ${row.symbol.slice(0, 150)}`).join('\n') +
    '\n'
  );
}

/** Requests each server answered (warm-up included), to divide its profile by. */
const answered = new Map<string, number>();

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
}

/** Self time (µs) by function (`name url:line`) of the one profile in `dir`. */
function selfTimes(dir: string): Map<string, number> {
  const [file] = readdirSync(dir).filter((name) => name.endsWith('.cpuprofile'));
  if (!file) throw new Error(`no profile in ${dir}`);
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
  const nameOf = new Map(profile.nodes.map((node) => [node.id, `${node.callFrame.functionName || '(anonymous)'} ${node.callFrame.url.replace(/^.*\/(dist|node_modules)\//, '$1/')}:${node.callFrame.lineNumber + 1}`]));
  const times = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const name = nameOf.get(id)!;
    if (!name.startsWith('(idle)')) times.set(name, (times.get(name) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  return times;
}

/** The functions whose self time a request differs most between "on" and "off" (µs a request), and the totals. */
function profileDifference(dir: string, onRequests: number, offRequests: number): string {
  const [on, off] = [selfTimes(join(dir, 'on')), selfTimes(join(dir, 'off'))];
  const sum = (times: Map<string, number>): number => [...times.values()].reduce((a, b) => a + b, 0);
  const rows = [...new Set([...on.keys(), ...off.keys()])]
    .map((name) => ({ name, on: (on.get(name) ?? 0) / onRequests, off: (off.get(name) ?? 0) / offRequests }))
    .sort((a, b) => Math.abs(b.on - b.off) - Math.abs(a.on - a.off))
    .slice(0, 40);
  return (
    `profiles (main thread, µs a request, start-up included): on ${(sum(on) / onRequests).toFixed(1)} (${onRequests} requests), off ${(sum(off) / offRequests).toFixed(1)} (${offRequests})\n` +
    rows.map((row) => `${(row.on - row.off).toFixed(2).padStart(7)}  on ${row.on.toFixed(2).padStart(6)}  off ${row.off.toFixed(2).padStart(6)}  ${row.name}`).join('\n') +
    '\n'
  );
}

main().catch(async (error: unknown) => {
  process.stderr.write(`operationsCpu failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
  await stopAll();
});
