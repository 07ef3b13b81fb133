import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import type { Database } from './database.js';
import { acquireDataDirLock, DataDirBusyError, readLiveLock } from './dataDirLock.js';
import { startEmbeddedShare, type EmbeddedShare } from './embeddedShare.js';
import { openPostgresDatabase } from './postgresDatabase.js';

export interface DatabaseSettings {
  /** PostgreSQL server to use; when absent, embedded PGlite in `dataDir`. */
  readonly databaseUrl?: string | undefined;
  readonly dataDir: string;
  readonly statementTimeoutMs?: number;
  readonly maxConnections?: number;
  /** The embedded database's `shared_buffers` (`EMBEDDED_SHARED_BUFFERS`); unset: PostgreSQL's default (128MB). */
  readonly embeddedSharedBuffers?: string | undefined;
  /** Told of every lost connection of a PostgreSQL pool (they never crash the process). */
  readonly onConnectionError?: (error: Error) => void;
}

/**
 * `DATABASE_URL`, `DATA_DIR` (default `./data`), `STATEMENT_TIMEOUT_MS` (default 10000),
 * `PG_POOL_SIZE` (default 10), `EMBEDDED_SHARED_BUFFERS` (default unset). Throws naming the
 * variable when a number or `EMBEDDED_SHARED_BUFFERS` is not one it can use.
 */
export function databaseSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): DatabaseSettings {
  return {
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir: resolve(env.DATA_DIR || './data'),
    // PostgreSQL's statement_timeout is an integer of milliseconds; 0 turns it off.
    statementTimeoutMs: wholeNumberOf(env, 'STATEMENT_TIMEOUT_MS', 10_000, 0, 2_147_483_647),
    maxConnections: wholeNumberOf(env, 'PG_POOL_SIZE', 10, 1, 10_000),
    embeddedSharedBuffers: sharedBuffersOf((env.EMBEDDED_SHARED_BUFFERS ?? '').trim()),
  };
}

/**
 * A whole number from `min` to `max`, or `fallback` when unset or empty; anything else throws
 * naming the variable (`abc` used to turn the statement timeout off, `-5` to fail at the first
 * connection in PostgreSQL's words). app/envSettings.ts reads the service's other settings so.
 */
function wholeNumberOf(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = (env[name] ?? '').trim();
  if (raw === '') return fallback;
  const value = /^\d{1,16}$/.test(raw) ? Number(raw) : NaN;
  if (!(value >= min && value <= max)) throw new Error(`${name} must be a whole number from ${min} to ${max}, not ${JSON.stringify(raw.slice(0, 40))}`);
  return value;
}

/** The units PostgreSQL takes for a memory setting, as multiples of a kB. */
const SIZE_UNITS = new Map([
  ['kB', 1],
  ['MB', 1024],
  ['GB', 1024 * 1024],
]);

/**
 * A `shared_buffers` size for the embedded database: a whole number and a unit (`kB`, `MB`,
 * `GB`, as PostgreSQL writes them) from 1MB to 1GB (PGlite's memory ends at 2 GB); undefined
 * for an empty setting. Anything else throws naming the variable, before PGlite starts.
 */
export function sharedBuffersOf(raw: string): string | undefined {
  if (raw === '') return undefined;
  const match = /^(\d{1,10})(kB|MB|GB)$/.exec(raw);
  const kb = match ? Number(match[1]) * SIZE_UNITS.get(match[2]!)! : NaN;
  if (!(kb >= 1024 && kb <= 1024 * 1024)) throw new Error(`EMBEDDED_SHARED_BUFFERS must be a size from 1MB to 1GB written as PostgreSQL writes one (e.g. 32MB, 65536kB), not "${raw.slice(0, 40)}"`);
  return raw;
}

/**
 * `pgliteDatabase.ts`'s `openPgliteDatabase`, whose module (and PGlite's) is loaded at the first
 * call: a process on PostgreSQL, or a CLI command going through the running service, never loads
 * PGlite (about 0.07 CPU-seconds of every such process's start).
 */
export async function openPgliteDatabase(...args: Parameters<typeof import('./pgliteDatabase.js').openPgliteDatabase>): ReturnType<typeof import('./pgliteDatabase.js').openPgliteDatabase> {
  return (await import('./pgliteDatabase.js')).openPgliteDatabase(...args);
}

export interface OpenedDatabase {
  readonly database: Database;
  /** How it was reached, for the start-up banner and `/healthz`. */
  readonly description: string;
  close(): Promise<void>;
}

/**
 * Opens the database for the service: PostgreSQL when configured; otherwise PGlite in
 * `dataDir`, shared on loopback so the CLI can work beside the running service.
 */
export async function openServiceDatabase(settings: DatabaseSettings): Promise<OpenedDatabase> {
  if (settings.databaseUrl) return openServer(settings);
  const lock = acquireDataDirLock(settings.dataDir, 'service');
  try {
    const embedded = await openPgliteDatabase(settings.dataDir, undefined, { sharedBuffers: settings.embeddedSharedBuffers });
    let share: EmbeddedShare;
    // A new random password every start, readable only through the 0600 lock file.
    const password = randomBytes(24).toString('base64url');
    try {
      share = await startEmbeddedShare(embedded.pglite, { password, onNotice: (channel, payload) => embedded.deliverNotice(channel, payload) });
    } catch (error) {
      await embedded.close();
      throw error;
    }
    lock.update(share.port, password);
    return {
      database: embedded,
      description: `embedded PGlite in ${settings.dataDir} (shared on 127.0.0.1:${share.port})`,
      async close() {
        await share.close();
        await embedded.close();
        lock.release();
      },
    };
  } catch (error) {
    lock.release();
    throw error;
  }
}

/**
 * The `shared_buffers` of a CLI command that opens the embedded data directory itself, when
 * `EMBEDDED_SHARED_BUFFERS` is unset. PGlite zeroes its whole pool at every start: at PostgreSQL's
 * 128MB about 0.45 CPU-seconds of every command (`key list` 1.5 CPU-seconds in all, 1.1 with
 * 16MB). A command is one short process that reads a data directory PGlite keeps in its own
 * files: a 500-loan `seed` and `ledger rebuild` took no more CPU with 16MB than with 128MB
 * (README "Configuration"). The service keeps PostgreSQL's default.
 */
const COMMAND_SHARED_BUFFERS = '16MB';

/**
 * Opens the database for a CLI command: PostgreSQL when configured; through the running
 * service when it holds `dataDir`; otherwise PGlite in `dataDir` itself (holding its lock),
 * with `COMMAND_SHARED_BUFFERS` unless `EMBEDDED_SHARED_BUFFERS` says otherwise.
 */
export async function openCommandDatabase(settings: DatabaseSettings): Promise<OpenedDatabase> {
  if (settings.databaseUrl) return openServer(settings);
  const live = readLiveLock(settings.dataDir);
  if (live?.role === 'service' && live.port) {
    const database = openPostgresDatabase({
      // node-postgres takes the connection string's password over a separate `password` option.
      connectionString: `postgres://postgres:${encodeURIComponent(live.password ?? '')}@127.0.0.1:${live.port}/postgres`,
      maxConnections: 2,
      kind: 'pglite-shared',
    });
    return {
      database,
      description: `the running service's embedded database (pid ${live.pid})`,
      close: () => database.close(),
    };
  }
  if (live) throw new DataDirBusyError(settings.dataDir, live);
  const lock = acquireDataDirLock(settings.dataDir, 'cli');
  try {
    const embedded = await openPgliteDatabase(settings.dataDir, undefined, { sharedBuffers: settings.embeddedSharedBuffers ?? COMMAND_SHARED_BUFFERS });
    return {
      database: embedded,
      description: `embedded PGlite in ${settings.dataDir}`,
      async close() {
        await embedded.close();
        lock.release();
      },
    };
  } catch (error) {
    lock.release();
    throw error;
  }
}

function openServer(settings: DatabaseSettings): OpenedDatabase {
  const database = openPostgresDatabase({
    connectionString: settings.databaseUrl!,
    ...(settings.statementTimeoutMs ? { statementTimeoutMs: settings.statementTimeoutMs } : {}),
    ...(settings.maxConnections ? { maxConnections: settings.maxConnections } : {}),
    ...(settings.onConnectionError ? { onConnectionError: settings.onConnectionError } : {}),
  });
  const url = new URL(settings.databaseUrl!);
  return {
    database,
    description: `PostgreSQL at ${url.hostname}:${url.port || 5432}${url.pathname}`,
    close: () => database.close(),
  };
}
