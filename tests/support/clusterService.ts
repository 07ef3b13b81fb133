import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertBuilt, freePort, startService, type RunningService } from './processes.js';
import { createServerDatabase } from './testDatabase.js';

/** A service with `WORKERS` above 1 on a database of its own, and the demo API key it printed. */
export interface ClusterService {
  readonly service: RunningService;
  readonly key: string;
  /** Stops the service, drops its database and removes its directory. */
  close(): Promise<void>;
}

/**
 * Starts the built service with `settingsFor(its database's URL)` (`WORKERS`, limits, replicas…) on
 * a new database of the PostgreSQL server `serverUrl` (`WORKERS` above 1 needs PostgreSQL), in a
 * new temporary directory named after `name`; whatever was made is removed again if it fails.
 */
export async function startClusterService(serverUrl: string, name: string, settingsFor: (databaseUrl: string) => Promise<Record<string, string>> | Record<string, string>): Promise<ClusterService> {
  assertBuilt();
  const database = await createServerDatabase(serverUrl);
  const cwd = mkdtempSync(join(tmpdir(), `loanql-${name}-`));
  const removeAll = async (): Promise<void> => {
    await database.drop();
    rmSync(cwd, { recursive: true, force: true });
  };
  let service: RunningService | undefined;
  try {
    service = await startService({ DATABASE_URL: database.url, ...(await settingsFor(database.url)) }, await freePort(), cwd);
    const key = /Demo API key:\s+(\S+)/.exec(service.output())?.[1];
    if (!key) throw new Error(`the service printed no demo API key:\n${service.output()}`);
    const started = service;
    return {
      service: started,
      key,
      async close() {
        await started.stop();
        await removeAll();
      },
    };
  } catch (error) {
    await service?.stop();
    await removeAll();
    throw error;
  }
}
