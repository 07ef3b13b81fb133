import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServiceConfig } from '../../app/config.js';
import { createAccountWithKey, startTestServer, type TestServer } from './http.js';
import { openTestDatabase, type TestDatabase } from './testDatabase.js';

/** A lender's own tables behind the app, with an account and its admin key. */
export interface LenderSchemaService {
  readonly database: TestDatabase;
  readonly server: TestServer;
  readonly key: string;
  readonly accountId: string;
  /** Stops the app, closes the database and removes the metadata file. */
  close(): Promise<void>;
}

/**
 * For issue 30's tests of tables no one shaped for loanql: a migrated test database with
 * `schemaSql` run on it, `metadataYaml` written as the metadata file of the app started on it,
 * and a new account with its admin key. `overrides`: the app's settings that differ from the
 * defaults (as `startTestServer` takes them).
 */
export async function startLenderSchemaService(schemaSql: string, metadataYaml: string, overrides: Partial<ServiceConfig> = {}): Promise<LenderSchemaService> {
  const database = await openTestDatabase();
  const directory = mkdtempSync(join(tmpdir(), 'loanql-lender-'));
  let server: TestServer | undefined;
  const close = async (): Promise<void> => {
    await server?.close();
    await database.close();
    rmSync(directory, { recursive: true, force: true });
  };
  try {
    await database.db.script(schemaSql);
    const metadataPath = join(directory, 'lender.yaml');
    writeFileSync(metadataPath, metadataYaml);
    server = await startTestServer(database.db, { ...overrides, metadataPath });
    const made = await createAccountWithKey(database.db);
    return { database, server, key: made.apiKey.key, accountId: made.account.id, close };
  } catch (error) {
    await close();
    throw error;
  }
}
