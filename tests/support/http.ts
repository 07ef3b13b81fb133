/**
 * The real Express application on a real socket (127.0.0.1, any free port), for tests that
 * speak HTTP with `fetch`; and the account + API key most of them need.
 */
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { Database } from '../../db/index.js';
import { createAccount, type Account } from '../../app/accounts.js';
import { createApiKey, type CreatedApiKey } from '../../app/apiKeys.js';
import { buildServingEngine, EngineHolder } from '../../app/engineHolder.js';
import { configFromEnv, engineOptionsOf, type ServiceConfig } from '../../app/config.js';
import { createHttpServer, listen } from '../../server/httpServer.js';
import { createApp, processAdmission } from '../../server/createApp.js';
import { ServiceMetrics } from '../../app/operations/serviceMetrics.js';
import type { CostAdmission } from '../../app/operations/costAdmission.js';
import { createLogger } from '../../app/logger.js';
import { startSubscriptions, type Subscriptions } from '../../server/subscriptions.js';
import type { ServiceState } from '../../api/routes/health.js';

export interface TestServer {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  readonly url: string;
  /** Every log line the service wrote, parsed (pino JSON). */
  readonly logs: readonly Record<string, unknown>[];
  /** The engine holder the app serves from (reload it, or read `.engine`). */
  readonly engines: EngineHolder;
  /** GraphQL over WebSocket on `/api/graph` and its live queries (server/subscriptions.ts). */
  readonly subscriptions: Subscriptions;
  /** The process's admission by cost (null when off): the one the HTTP routes and the WebSocket API ask. */
  readonly admission: CostAdmission | null;
  close(): Promise<void>;
}

/** The project's metadata file, wherever the tests are started from. */
export const METADATA_PATH = fileURLToPath(new URL('../../metadata/loanql.default.yaml', import.meta.url));

/**
 * Serves `createApp` over `db` with the project's metadata; the configuration is the defaults
 * with `overrides` applied. Logs are captured from level `warn` unless `overrides.logLevel` says otherwise.
 */
export async function startTestServer(db: Database, overrides: Partial<ServiceConfig> = {}): Promise<TestServer> {
  const logs: Record<string, unknown>[] = [];
  const capture = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const defaults = configFromEnv({});
  // Keep-alive and idle limits far above any pause of a test: the app and its client share one
  // event loop with PGlite, so on a busy machine a statement can hold both past the service's
  // 5 s keep-alive, and the client would reuse a connection the server has just closed
  // (ECONNRESET). The tests of those limits (api/httpServer) set their own.
  const http = { ...defaults.http, keepAliveTimeoutMs: 120_000, idleSocketTimeoutMs: 240_000 };
  const config: ServiceConfig = { ...defaults, port: 0, host: '127.0.0.1', metadataPath: METADATA_PATH, http, ...overrides };
  const engineOptions = engineOptionsOf(config);
  const engines = new EngineHolder(await buildServingEngine(config.metadataPath, db, engineOptions), config.metadataPath, db, engineOptions);
  const logger = createLogger(overrides.logLevel ?? 'warn', capture);
  const state: ServiceState = { stopping: false };
  // As main.ts: one metrics registry and one admission by cost for the HTTP routes and the sockets.
  const metrics = config.operations.metricsToken ? new ServiceMetrics({ db }) : null;
  const admission = processAdmission(db, config, metrics);
  const app = createApp({ db, logger, config, databaseDescription: `test ${db.kind} database`, engines, state, metrics, admission });
  const subscriptions = await startSubscriptions({ db, engines, logger, config, admission, metrics });
  state.subscriptions = () => subscriptions.sockets.usage;
  metrics?.watchSubscriptions(() => subscriptions.sockets.usage);
  const server = createHttpServer(app, config.http, subscriptions.sockets, app.serverObservers);
  await listen(server, 0, '127.0.0.1');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    logs,
    engines,
    subscriptions,
    admission,
    close: async () => {
      engines.close();
      await subscriptions.close();
      await new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      });
    },
  };
}

let counter = 0;

/** A unique account slug for this test process (tests share a database, never an account). */
export function uniqueSlug(stem = 'acct'): string {
  counter += 1;
  return `${stem}-${process.pid}-${counter}`;
}

/** A new account and one API key of it (the key text is only in the result). */
export async function createAccountWithKey(db: Database, slug = uniqueSlug()): Promise<{ account: Account; apiKey: CreatedApiKey }> {
  const account = await createAccount(db, slug);
  const apiKey = await createApiKey(db, account.id, 'test key');
  return { account, apiKey };
}

/** The `Authorization` header the interface defines (§5). */
export function tokenHeader(key: string): Record<string, string> {
  return { authorization: `Token ${key}` };
}
