/**
 * The processes a benchmark run starts, and how it watches them: a throwaway PostgreSQL (via
 * `.ci/postgres.sh`), the built service, the baseline server and the `loanql` CLI. Every process
 * started here is registered and stopped by `stopAll()` (the runner calls it in `finally` and on
 * SIGINT/SIGTERM).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
const cleanups: (() => Promise<void> | void)[] = [];

/** Stops everything started so far, newest first. Safe to call twice. */
export async function stopAll(): Promise<void> {
  while (cleanups.length) {
    const cleanup = cleanups.pop()!;
    try {
      await cleanup();
    } catch (error) {
      process.stderr.write(`cleanup failed: ${error instanceof Error ? error.message : String(error)}\n`);
    }
  }
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

export interface ThrowawayPostgres {
  readonly url: string;
  readonly dir: string;
}

/** PostgreSQL 15 in a fresh temp directory on 127.0.0.1, stopped and removed by `stopAll()`. */
export async function startThrowawayPostgres(): Promise<ThrowawayPostgres> {
  // Not under the project: as root, postgres.sh runs the server as an unprivileged user who must reach the directory.
  const dir = mkdtempSync(join(tmpdir(), 'loanql-bench-pg.'));
  const port = await freePort();
  const script = join(ROOT, '.ci', 'postgres.sh');
  cleanups.push(() => {
    spawnSync('bash', [script, 'stop', dir], { stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  });
  const started = spawnSync('bash', [script, 'start', dir, String(port)], { encoding: 'utf8' });
  if (started.status !== 0) throw new Error(`PostgreSQL did not start: ${started.stderr || started.stdout}`);
  const url = started.stdout.trim().split('\n').pop() ?? '';
  if (!url.startsWith('postgres://')) throw new Error(`unexpected output of postgres.sh: ${started.stdout}`);
  return { url, dir };
}

/** Runs the built CLI (`dist/cli/main.js`) to completion; returns its stdout. Progress (stderr) is shown. */
export function runCli(databaseUrl: string, args: readonly string[]): string {
  const result = spawnSync(process.execPath, [join(ROOT, 'dist', 'cli', 'main.js'), ...args], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 16 * 1024 * 1024,
  });
  if (result.status !== 0) throw new Error(`loanql ${args.join(' ')} failed (${result.status}): ${result.stdout}`);
  return result.stdout;
}

export interface ServerProcess {
  readonly name: string;
  readonly pid: number;
  readonly url: string;
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * The Node flags the service is shipped with: those of `npm start` (package.json's `start`
 * script, `node <flags> dist/server/main.js`; the Dockerfile's CMD has the same, a unit test checks
 * it). The benchmarks start the service — and the baseline, so both run on the same runtime
 * settings — with them.
 */
export const SHIPPED_NODE_FLAGS: readonly string[] = (() => {
  const start = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  const words = start.trim().split(/\s+/);
  if (words[0] !== 'node' || words.at(-1) !== 'dist/server/main.js') throw new Error(`package.json start script is not "node [flags] dist/server/main.js": ${start}`);
  return words.slice(1, -1);
})();

/**
 * Starts a long-running server process and resolves once `ready(url)` answers true. With
 * `stdoutFile` (a file descriptor open for writing) its stdout goes there instead of through this
 * process, as a service's log goes to a file or the journal (`run.ts --operations`).
 */
export async function startServer(
  name: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  port: number,
  ready: (url: string) => Promise<boolean>,
  stdoutFile?: number,
): Promise<ServerProcess> {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', stdoutFile ?? 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', (chunk: Buffer) => {
    keep(chunk);
    process.stderr.write(`[${name}] ${chunk.toString('utf8')}`);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 8_000);
    await exited;
    clearTimeout(timer);
  };
  cleanups.push(stop);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}: ${output}`);
    if (await ready(url).catch(() => false)) return { name, pid: child.pid!, url, child, stop };
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${name} did not become ready within 60 s: ${output}`);
}

const CLOCK_TICKS_PER_SECOND = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** CPU seconds (user + system) the process has used so far, from /proc/<pid>/stat. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}

/** CPU seconds the whole machine has spent busy so far (every core; not idle, not I/O wait), from /proc/stat. */
export function machineBusySeconds(): number {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal …
  const busy = fields[0]! + fields[1]! + fields[2]! + fields[5]! + fields[6]! + (fields[7] ?? 0);
  return busy / CLOCK_TICKS_PER_SECOND;
}

/** The machine's CPU seconds so far, every core: busy (as `machineBusySeconds`) and of it the kernel's (system, irq, softirq). */
export function machineCpuSeconds(): { readonly busy: number; readonly kernel: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const busy = fields[0]! + fields[1]! + fields[2]! + fields[5]! + fields[6]! + (fields[7] ?? 0);
  return { busy: busy / CLOCK_TICKS_PER_SECOND, kernel: (fields[2]! + fields[5]! + fields[6]!) / CLOCK_TICKS_PER_SECOND };
}

/**
 * CPU seconds of `parent` and every process whose parent it is (for a PostgreSQL postmaster: its
 * backends and background workers — one server's, not every `postgres` on the machine).
 */
export function processTreeCpuSeconds(parent: number): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (entry !== String(parent) && Number(fields[1]) !== parent) continue;
      total += (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
    } catch {
      // The process ended meanwhile.
    }
  }
  return total;
}

/** The parent process of `pid` (/proc/<pid>/stat): for a PostgreSQL backend (`pg_backend_pid()`), its postmaster. */
export function parentPidOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

/** CPU seconds of every running process named `postgres` (PostgreSQL's server processes on this machine). */
export function postgresCpuSeconds(): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) !== 'postgres') continue;
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      total += (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
    } catch {
      // The process ended meanwhile.
    }
  }
  return total;
}

/** The machine's busy CPU seconds and the benchmark's own, at one moment (`cpuSnapshot`). */
export interface CpuSnapshot {
  readonly at: number;
  readonly busy: number;
  readonly own: number;
}
/** A snapshot counting as the benchmark's own: this runner (autocannon runs in it), `pids` and every `postgres` process. */
export function cpuSnapshot(pids: readonly number[]): CpuSnapshot {
  const runner = process.cpuUsage();
  const own = (runner.user + runner.system) / 1e6 + pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0) + postgresCpuSeconds();
  return { at: performance.now() / 1000, busy: machineBusySeconds(), own };
}
/**
 * The share of the machine's CPU that went to work other than the benchmark's own processes
 * between two snapshots: 0 on an otherwise idle machine, whatever load the benchmark itself makes.
 */
export function otherWorkShare(from: CpuSnapshot, to: CpuSnapshot, cores: number): number {
  const wall = to.at - from.at;
  return wall > 0 ? Math.max(0, to.busy - from.busy - (to.own - from.own)) / (wall * cores) : 0;
}

/** Resident set size in MB, from /proc/<pid>/status. */
export function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : Number.NaN;
}

export interface ProcessUsage {
  /** CPU time over wall time: 1 = one core busy the whole time. */
  readonly cpu: number;
  readonly rssPeakMb: number;
  readonly rssMeanMb: number;
}

/** Samples a process's RSS every 100 ms and its CPU time at both ends while `work` runs. */
export async function measureUsage<T>(pid: number, work: () => Promise<T>): Promise<{ result: T; usage: ProcessUsage }> {
  const samples: number[] = [rssMb(pid)];
  const timer = setInterval(() => samples.push(rssMb(pid)), 100);
  const cpuStart = cpuSeconds(pid);
  const wallStart = process.hrtime.bigint();
  try {
    const result = await work();
    const wall = Number(process.hrtime.bigint() - wallStart) / 1e9;
    const cpu = (cpuSeconds(pid) - cpuStart) / wall;
    samples.push(rssMb(pid));
    return { result, usage: { cpu, rssPeakMb: Math.max(...samples), rssMeanMb: samples.reduce((a, b) => a + b, 0) / samples.length } };
  } finally {
    clearInterval(timer);
  }
}
