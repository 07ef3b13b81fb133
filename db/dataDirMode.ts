import { chmodSync, lstatSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The embedded database's files are readable and writable by the service's user only (issue 26,
 * finding 7: PGlite unpacks its initial cluster — `pg_authid` and the first WAL segment
 * included — with mode 0666, whatever the umask). `DATA_DIR` is created 0700 (and made 0700
 * when it exists), PGlite starts under umask 077, and every file and directory below it loses
 * its group and other bits on every start (`chmod -R go-rwx`), which also repairs a directory an
 * earlier version left open. Files PostgreSQL creates later are 0600 (its own file mode).
 */
export function secureDataDir(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chmodSync(dataDir, 0o700);
}

/** `chmod -R go-rwx` below `dir` (symbolic links are left alone: they are not followed). */
export function restrictTree(dir: string): void {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) continue;
    if ((stat.mode & 0o077) !== 0) chmodSync(path, stat.mode & 0o7700);
    if (stat.isDirectory()) restrictTree(path);
  }
}

/** Runs `work` with the process umask 077, restoring the previous one afterwards. */
export async function withPrivateUmask<T>(work: () => Promise<T>): Promise<T> {
  const previous = process.umask(0o077);
  try {
    return await work();
  } finally {
    process.umask(previous);
  }
}
