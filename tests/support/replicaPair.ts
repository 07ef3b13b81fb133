/**
 * A real PostgreSQL 15 primary and streaming standby for the scale-out tests, started and stopped
 * with `.ci/replica.sh` (as the unprivileged `loanql_pg` when the tests run as root).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort, PROJECT_ROOT } from './processes.js';

const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';
const SCRIPT = join(PROJECT_ROOT, '.ci', 'replica.sh');

/** Why the scale-out tests cannot run here, or null when they can (PostgreSQL 15's server binaries are installed). */
export function replicaPairUnavailable(): string | null {
  for (const binary of ['postgres', 'initdb', 'pg_ctl', 'pg_basebackup']) {
    if (!existsSync(join(PG_BIN, binary))) return `${join(PG_BIN, binary)} is missing (install postgresql-15, or set PG_BIN)`;
  }
  return null;
}

/**
 * The line a skipped scale-out test prints (`.ci/run` fails when it finds it in the embedded run,
 * where CI has PostgreSQL's binaries).
 */
export function skipReason(): string | null {
  const missing = replicaPairUnavailable();
  if (missing) {
    const line = `SKIPPED: the scale-out tests need a real PostgreSQL 15: ${missing}`;
    process.stderr.write(`\n${line}\n`);
    return line;
  }
  if (process.env.TEST_DATABASE_URL) return 'the scale-out tests start their own servers; they run once, in the run without TEST_DATABASE_URL';
  return null;
}

function script(args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('bash', [SCRIPT, ...args], { timeout: 120_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`.ci/replica.sh ${args.join(' ')} failed: ${error.message}\n${stdout}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

export interface ReplicaPair {
  readonly primaryUrl: string;
  readonly standbyUrl: string;
  stopStandby(): Promise<void>;
  startStandby(): Promise<void>;
  /** The standby applies each commit `ms` late from now on (0: at once again). */
  delayStandby(ms: number): Promise<void>;
  /** Sets one of the standby's settings (`postgresql.conf`, reloaded): `max_standby_streaming_delay`, `0`. */
  setStandby(name: string, value: string): Promise<void>;
  /** Runs one statement on a server and returns its rows. */
  sql<R = Record<string, unknown>>(url: string, text: string, values?: unknown[]): Promise<R[]>;
  stop(): Promise<void>;
}

export async function startReplicaPair(): Promise<ReplicaPair> {
  const dir = mkdtempSync(join(tmpdir(), 'loanql-replica-'));
  const [primaryPort, standbyPort] = [await freePort(), await freePort()];
  const lines = (await script(['start', dir, String(primaryPort), String(standbyPort)])).trim().split('\n');
  const [primaryUrl, standbyUrl] = lines.slice(-2) as [string, string];
  return {
    primaryUrl,
    standbyUrl,
    stopStandby: async () => void (await script(['stop-standby', dir])),
    startStandby: async () => void (await script(['start-standby', dir])),
    delayStandby: async (ms: number) => void (await script(['delay-standby', dir, String(ms)])),
    setStandby: async (name: string, value: string) => void (await script(['set-standby', dir, name, value])),
    async sql<R>(url: string, text: string, values: unknown[] = []): Promise<R[]> {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        return (await client.query(text, values)).rows as R[];
      } finally {
        await client.end();
      }
    },
    async stop() {
      await script(['stop', dir]).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
