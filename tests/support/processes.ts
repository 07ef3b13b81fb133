/**
 * The built service and CLI as real processes (`node dist/server/main.js`, `node dist/cli/main.js`),
 * as a user runs them. `npm test` builds `dist/` first (the `pretest` script).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { countForTestFileCpu } from './testTally.js';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { METADATA_PATH } from './http.js';
import { TEST_SHARED_BUFFERS } from './testDatabase.js';

export const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SERVICE = fileURLToPath(new URL('../../dist/server/main.js', import.meta.url));
const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

/** Fails clearly when `dist/` is missing (the tests were started without `npm test`). */
export function assertBuilt(): void {
  for (const file of [SERVICE, CLI]) {
    if (!existsSync(file)) throw new Error(`${file} is missing: run \`npm run build\` (npm test does it first)`);
  }
}

/**
 * The environment of a child: this process's, without any database or service setting that
 * would leak in from the developer's shell, plus `env`. The metadata is the shipped one, never
 * the `metadata/loanql.yaml` an admin edits; the demo a first start writes is 50 loans.
 */
export function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const clean: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['DATABASE_URL', 'TEST_DATABASE_URL', 'DATA_DIR', 'PORT', 'HOST', 'METADATA_PATH', 'NODE_OPTIONS', 'NODE_TEST_CONTEXT']) delete clean[name];
  // DEMO_SCALE: a first start on an empty database writes a demo of 50 loans, not 500 — the same
  // code path at a tenth of the cost (db/seed.test.ts covers the seeder at larger scales).
  // EMBEDDED_SHARED_BUFFERS: the tests' own databases' pool (`TEST_SHARED_BUFFERS`), not 128MB zeroed at every start.
  return { ...clean, LOG_LEVEL: 'warn', METADATA_PATH: METADATA_PATH, DEMO_SCALE: '0.005', EMBEDDED_SHARED_BUFFERS: TEST_SHARED_BUFFERS, ...env };
}

/**
 * The environment of a CLI command: `childEnv`'s, but the embedded pool left to the command's own
 * default (16MB, `db/openDatabase.ts`) unless `env` gives `EMBEDDED_SHARED_BUFFERS`: the default a
 * user's command runs with, and half the pool zeroed at each of the suite's ~200 command starts.
 */
function commandEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const environment = childEnv(env);
  if (!('EMBEDDED_SHARED_BUFFERS' in env)) delete environment.EMBEDDED_SHARED_BUFFERS;
  return environment;
}

/**
 * V8 flags of the children tests start: `--liftoff-only` compiles PGlite's WebAssembly with V8's
 * baseline compiler alone. A child lives for a few requests or one command, and optimising the
 * WebAssembly it runs at start-up (PostgreSQL starting, the catalogue read) cost it about 0.3
 * CPU-seconds on a background thread that it never earned back: `cli/ledger`'s nine commands took
 * 33.7 CPU-seconds with the optimising tier and 22.9 without, `webhooks/processes` with
 * `cli/lifecycle` 34.5 and 25.8. `--interrupt-budget=1000000` does the same for JavaScript, later
 * (`npm test` gives the test processes the same budget): three entries of process tests 61.0 →
 * 57.4 (tests/README.md, "How long"). They change how fast the code runs, never what it does. A
 * child that does heavy work in PostgreSQL (the 500-loan demo of the real first start, the chaos
 * suite's services under load) is started with `FULL_COMPILER` instead, as a user runs it.
 */
export const SHORT_LIVED_NODE_FLAGS: readonly string[] = ['--liftoff-only', '--interrupt-budget=1000000'];

/** No V8 flag: the service as a user starts it. */
export const FULL_COMPILER: readonly string[] = [];

export interface ProcessResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `node <script> <args>` to completion. */
function runToCompletion(script: string, args: readonly string[], env: NodeJS.ProcessEnv, cwd: string, timeoutMs: number): Promise<ProcessResult> {
  countForTestFileCpu('children');
  return new Promise((resolve) => {
    execFile(process.execPath, [...SHORT_LIVED_NODE_FLAGS, script, ...args], { env, cwd, timeout: timeoutMs }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs `loanql <args>` to completion. `cwd` is a directory other than the project's on purpose. */
export function runCli(args: readonly string[], env: Record<string, string>, cwd: string): Promise<ProcessResult> {
  return runToCompletion(CLI, args, commandEnv(env), cwd, 120_000);
}

/**
 * `loanql <args>` in this process, through `runCommandLine` (what `cli/main.ts` runs and exits
 * with), with the environment `runCli` gives a child and its output kept: for a file that checks
 * many answers of the CLI where the process is not the subject — a child costs about a
 * CPU-second to start (Node, the CLI's modules, a database connection), this a few milliseconds.
 * A command opening an embedded `DATA_DIR` opens it here, so run those as processes.
 */
export function runCliInProcess(args: readonly string[], env: Record<string, string>): Promise<ProcessResult> {
  return runCommandLineHere(args, commandEnv(env));
}

/** `runCommandLine(args)` in this process with exactly `env` (no child's defaults), its output kept. */
export async function runCommandLineHere(args: readonly string[], env: NodeJS.ProcessEnv): Promise<ProcessResult> {
  const { runCommandLine } = await import('../../cli/commandLine.js');
  const collected = { stdout: '', stderr: '' };
  const stream = (name: 'stdout' | 'stderr') =>
    new Writable({
      write(chunk: Buffer | string, _encoding, done) {
        collected[name] += chunk.toString();
        done();
      },
    }) as unknown as NodeJS.WriteStream;
  const code = await runCommandLine(args, { out: stream('stdout'), err: stream('stderr'), env });
  return { code, ...collected };
}

/** A free TCP port on 127.0.0.1 (free when asked; the service takes it a moment later). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (address && typeof address === 'object' ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

export interface RunningService {
  readonly url: string;
  readonly process: ChildProcess;
  /** Everything the process wrote so far (stdout and stderr together). */
  output(): string;
  /** Resolves with the exit code once the process has ended. */
  readonly exited: Promise<number | null>;
  /** SIGTERM, then the exit code (SIGKILL after `graceMs`). */
  stop(graceMs?: number): Promise<number | null>;
}

/**
 * Starts `node dist/server/main.js` (or another build's `script`) on `port`, with V8's `nodeFlags`, and waits for the start-up banner. Rejects with the
 * process's output if it exits first or does not serve within `timeoutMs`.
 */
export async function startService(
  env: Record<string, string>,
  port: number,
  cwd: string,
  timeoutMs = 120_000,
  script = SERVICE,
  nodeFlags: readonly string[] = SHORT_LIVED_NODE_FLAGS,
): Promise<RunningService> {
  countForTestFileCpu('children');
  const child = spawn(process.execPath, [...nodeFlags, script], { env: serviceEnv(env, port), cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const service: RunningService = {
    url: `http://127.0.0.1:${port}`,
    process: child,
    output: () => output,
    exited,
    async stop(graceMs = 15_000) {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
  const deadline = Date.now() + timeoutMs;
  while (!output.includes('loanql is serving at')) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the service exited (${child.exitCode ?? child.signalCode}) before serving:\n${output}`);
    if (Date.now() > deadline) {
      await service.stop(1_000);
      throw new Error(`the service did not serve within ${timeoutMs} ms:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return service;
}

/** Starts `loanql <args>` as a long-running process (e.g. `loanql worker`); stop it with `.kill()`. */
export function spawnCli(args: readonly string[], env: Record<string, string>, cwd: string): { process: ChildProcess; output(): string } {
  countForTestFileCpu('children');
  const child = spawn(process.execPath, [...SHORT_LIVED_NODE_FLAGS, CLI, ...args], { env: commandEnv(env), cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  return { process: child, output: () => output };
}

/** Runs the service when it is expected to refuse to start; resolves with its exit code and output. */
export function runServiceToExit(env: Record<string, string>, port: number, cwd: string, timeoutMs = 60_000): Promise<ProcessResult> {
  return runToCompletion(SERVICE, [], serviceEnv(env, port), cwd, timeoutMs);
}

function serviceEnv(env: Record<string, string>, port: number): NodeJS.ProcessEnv {
  return childEnv({ ...env, PORT: String(port), HOST: '127.0.0.1' });
}
