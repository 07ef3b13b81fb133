import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { databaseSettingsFromEnv, openCommandDatabase, type Database } from '../../db/index.js';
import { copyMigratedDataDir, createServerDatabase } from './testDatabase.js';

/**
 * What a test of CLI commands as processes runs on: a work directory and the environment of a
 * database of its own — a new database on `TEST_DATABASE_URL`'s server, else a migrated
 * `DATA_DIR` copied into the work directory (a first start is not such a test's subject).
 * `remove` drops the database and the directory.
 */
export interface CommandEnvironment {
  readonly workDir: string;
  readonly env: Record<string, string>;
  remove(): Promise<void>;
}

export async function commandEnvironment(prefix: string): Promise<CommandEnvironment> {
  const workDir = mkdtempSync(join(tmpdir(), prefix));
  const removeDir = (): void => rmSync(workDir, { recursive: true, force: true });
  if (process.env.TEST_DATABASE_URL) {
    const created = await createServerDatabase(process.env.TEST_DATABASE_URL);
    return { workDir, env: { DATABASE_URL: created.url }, remove: async () => { await created.drop(); removeDir(); } };
  }
  const env = { DATA_DIR: join(workDir, 'data') };
  await copyMigratedDataDir(env.DATA_DIR);
  return { workDir, env, remove: async () => removeDir() };
}

/**
 * Runs `work` on the database `env` names, opened as a CLI command opens it (through a running
 * service's share, or the directory itself), and closes it: the embedded database has one user at
 * a time, so a test closes it before a CLI process runs.
 */
export async function withCommandDatabase<T>(env: Record<string, string>, work: (db: Database) => Promise<T>): Promise<T> {
  const opened = await openCommandDatabase(databaseSettingsFromEnv(env));
  try {
    return await work(opened.database);
  } finally {
    await opened.close();
  }
}
