import { chmodSync, openSync, readFileSync, statSync, unlinkSync, writeFileSync, closeSync } from 'node:fs';
import { secureDataDir } from './dataDirMode.js';
import { join } from 'node:path';

/**
 * PGlite admits one process per data directory. The process that opens it writes
 * `DATA_DIR/loanql.lock`: its pid and, when it is the service, the loopback port on which it
 * shares the database (see `embeddedShare.ts`) with that share's per-start password. The file is
 * created with mode 0600, so only the service's user can read the password. Other processes read
 * it to connect through the service, or to refuse clearly, never to open the directory a second time.
 * The lock names the directory it was written in (its device and inode): a copy of `DATA_DIR` made
 * while the service ran — a backup, or one restored beside it — carries the file, and its pid is alive,
 * but it is not that directory's lock. Before, a command on the copy went through the share to the
 * running service's database, and wrote there; a service on the copy refused, naming that process.
 */
export interface DataDirLock {
  readonly pid: number;
  readonly port: number | null;
  readonly role: 'service' | 'cli';
  /** The loopback share's password (random per start). */
  readonly password?: string;
  /** The locked directory's `device:inode` (absent in a lock written before session 37: not checked). */
  readonly directory?: string;
}

export class DataDirBusyError extends Error {
  constructor(dataDir: string, lock: DataDirLock) {
    super(
      lock.role === 'service'
        ? `DATA_DIR ${dataDir} is in use by a running loanql service (pid ${lock.pid}); stop it first`
        : `DATA_DIR ${dataDir} is in use by another loanql command (pid ${lock.pid}); wait for it to finish`,
    );
    this.name = 'DataDirBusyError';
  }
}

const lockPath = (dataDir: string): string => join(dataDir, 'loanql.lock');

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** `dataDir`'s device and inode: the same for the directory moved or renamed, new for a copy of it. */
function directoryIdentity(dataDir: string): string {
  const { dev, ino } = statSync(dataDir, { bigint: true });
  return `${dev}:${ino}`;
}

/**
 * The lock of a live process on `dataDir`, or null (a stale lock is removed: its process is gone,
 * or it was copied from another directory).
 */
export function readLiveLock(dataDir: string): DataDirLock | null {
  let lock: DataDirLock;
  try {
    lock = JSON.parse(readFileSync(lockPath(dataDir), 'utf8')) as DataDirLock;
  } catch {
    return null;
  }
  const copied = lock.directory !== undefined && lock.directory !== directoryIdentity(dataDir);
  if (!copied && (lock.pid === process.pid || isAlive(lock.pid))) return lock;
  try {
    unlinkSync(lockPath(dataDir));
  } catch {
    /* already gone */
  }
  return null;
}

/** Takes the lock atomically; throws `DataDirBusyError` when a live process holds it. */
export function acquireDataDirLock(dataDir: string, role: DataDirLock['role']): { update(port: number, password: string): void; release(): void } {
  secureDataDir(dataDir);
  const path = lockPath(dataDir);
  const directory = directoryIdentity(dataDir);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeFileSync(fd, JSON.stringify({ pid: process.pid, port: null, role, directory } satisfies DataDirLock));
      closeSync(fd);
      let released = false;
      return {
        update(port, password) {
          chmodSync(path, 0o600);
          writeFileSync(path, JSON.stringify({ pid: process.pid, port, role, password, directory } satisfies DataDirLock), { mode: 0o600 });
        },
        release() {
          if (released) return;
          released = true;
          try {
            unlinkSync(path);
          } catch {
            /* already gone */
          }
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const live = readLiveLock(dataDir);
      if (live) throw new DataDirBusyError(dataDir, live);
    }
  }
  throw new Error(`could not take the lock ${path}`);
}
