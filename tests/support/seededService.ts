/**
 * A seeded database behind the real application on a real socket, for the engine tests:
 * one account filled by `seedPortfolio` (deterministic demo data), an API key of it, and
 * `graph(query, variables)` doing `POST /api/graph` with that key.
 *
 * The server is started here rather than with `startTestServer` because the engine tests need
 * the `EngineHolder` themselves (to call the engine directly, e.g. when counting statements).
 */
import type { Database } from '../../db/index.js';
import { seedPortfolio, type SeedSummary } from '../../app/seed/index.js';
import { createAdmin, type Account } from '../../app/accounts.js';
import { createApiKey } from '../../app/apiKeys.js';
import { addProductField, createDefaultProduct, DEMO_CUSTOM_FIELDS, type CustomFieldDefinition } from '../../app/products.js';
import type { ServiceConfig } from '../../app/config.js';
import type { EngineHolder } from '../../app/engineHolder.js';
import type { GraphEngine } from '../../engine/index.js';
import { openBuiltTestDatabase, openTestDatabase, type TestDatabase } from './testDatabase.js';
import { createAccountWithKey, METADATA_PATH, startTestServer, uniqueSlug, type TestServer } from './http.js';
import { parseExact } from './exactJson.js';
import { restClient, type RestClient } from './restClient.js';

export { METADATA_PATH };
export { JsonNumber, num, parseExact, stringifyExact } from './exactJson.js';


/** Small enough that a file seeds in about a second, big enough for every shape of data. */
export const DEFAULT_SCALE = 0.02;

export interface SeededAccount {
  readonly account: Account;
  readonly apiKey: string;
  readonly adminId: string;
  readonly summary: SeedSummary;
}

export interface SeedAccountOptions {
  readonly slug?: string;
  readonly scale?: number;
  readonly seed?: number;
  /** A fixed account id (golden tests): the seed's ids derive from seed and account id. */
  readonly accountId?: string;
  /** A fixed admin id, for the same reason. */
  readonly adminId?: string;
}

/** A new account with an admin, the demo default product and an API key, seeded with `seedPortfolio`. */
export async function seedAccount(db: Database, options: SeedAccountOptions = {}): Promise<SeededAccount> {
  const slug = options.slug ?? uniqueSlug('seeded');
  const { rows } = await db.query<Account>(
    'INSERT INTO accounts (id, slug, name) VALUES (coalesce($1::uuid, gen_random_uuid()), $2, $2) RETURNING id, slug, name',
    [options.accountId ?? null, slug],
  );
  const account = rows[0]!;
  let adminId: string;
  if (options.adminId) {
    await db.query(`INSERT INTO admins (account_id, id, email, name, password_hash) VALUES ($1, $2, $3, 'Avery Admin', 'not-a-password-hash')`, [
      account.id,
      options.adminId,
      `admin@${slug}.test`,
    ]);
    adminId = options.adminId;
  } else {
    adminId = (await createAdmin(db, account.id, { email: `admin@${slug}.test`, password: 'correct horse battery', name: 'Avery Admin' })).id;
  }
  const productId = await createDefaultProduct(db, account.id, DEMO_CUSTOM_FIELDS);
  const summary = await seedPortfolio(db, {
    accountId: account.id,
    scale: options.scale ?? DEFAULT_SCALE,
    seed: options.seed ?? 1,
    adminIds: [adminId],
    productId,
  });
  const apiKey = (await createApiKey(db, account.id, 'engine tests')).key;
  return { account, apiKey, adminId, summary };
}

/** A response of the service, read as text once and parsed when it is JSON. */
export interface Answer<T = unknown> {
  readonly status: number;
  readonly contentType: string | null;
  /** The raw body text (numeric digits are checked on it). */
  readonly text: string;
  /** The parsed body, or undefined when the body is not JSON. */
  readonly body: T;
}

/** A GraphQL response body. */
export interface GraphBody<D = any> {
  readonly data?: D;
  readonly errors?: readonly { message: string; extensions?: { code?: string }; locations?: unknown; path?: unknown }[];
}

export interface RunningService {
  readonly url: string;
  readonly engines: EngineHolder;
  readonly engine: GraphEngine;
  /** GraphQL over WebSocket and its live queries (server/subscriptions.ts). */
  readonly subscriptions: TestServer['subscriptions'];
  /** The process's admission by cost (null when off), asked by the HTTP routes and the WebSocket API. */
  readonly admission: TestServer['admission'];
  /** Every log line the service wrote (pino JSON), to check that nothing failed inside. */
  readonly logs: readonly Record<string, unknown>[];
  close(): Promise<void>;
}

/** The real application (`createApp` with an `EngineHolder` over the default metadata) on 127.0.0.1:0. */
export async function startService(db: Database, overrides: Partial<ServiceConfig> = {}): Promise<RunningService> {
  const server = await startTestServer(db, overrides);
  return {
    ...server,
    get engine() {
      return server.engines.engine;
    },
  };
}

/** Sends a request and reads the answer (JSON parsed when it parses). */
export async function send(url: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(url, init);
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, contentType: response.headers.get('content-type'), text, body };
}

export interface SeededService extends SeededAccount {
  /** The accounts of the `others` option, seeded in the same database. */
  readonly others: readonly SeededAccount[];
  readonly db: Database;
  readonly service: RunningService;
  readonly url: string;
  /** `POST /api/graph` with this account's key. */
  graph<D = any>(query: string, variables?: Record<string, unknown>, extra?: { operationName?: string }): Promise<Answer<GraphBody<D>>>;
  /** `POST <path>` with this account's key and `body` sent as is (a string) or as JSON. */
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<Answer>;
  /** Rows of an independent SQL query, to compare the engine's answers with. */
  sql<R = Record<string, unknown>>(text: string, values?: readonly unknown[]): Promise<R[]>;
  close(): Promise<void>;
}

/** What a seeded account's rows depend on, besides the options: the cached seed is rebuilt when one of them changes. */
const SEED_SOURCES = ['app', 'domain', 'db', 'tests/support/seededService.ts', 'tests/support/http.ts'];

/**
 * A migrated test database with accounts seeded by `seedAccount`, one per options given, in
 * order. Seeding costs seconds of CPU (a scale-0.02 account about 4), so on PGlite the result
 * is built once and kept as a dump (`openBuiltTestDatabase`, keyed by the options and
 * `SEED_SOURCES`): every later database with the same accounts loads it. Options that seed the
 * same account are one key (`{}` and `{ scale: 0.02, seed: 1 }`, in any order of fields), and
 * the accounts but the last are the dump of their own list, built from: `[{ scale: 0.01 }, {
 * scale: 0.01, seed: 2 }]` seeds its second account on the dump of `[{ scale: 0.01 }]`. An
 * account without a `slug` gets `seeded-cached-<n>` (its place in the list), which no
 * `uniqueSlug` can give. With `TEST_DATABASE_URL` the accounts are seeded afresh.
 */
export async function openSeededTestDatabase<const A extends readonly SeedAccountOptions[]>(
  accounts: A,
): Promise<{ database: TestDatabase; seeded: { -readonly [K in keyof A]: SeededAccount } }> {
  const { database, built } = await openSeededAccountList(accounts.map(canonicalSeedOptions));
  return { database, seeded: built as { -readonly [K in keyof A]: SeededAccount } };
}

/** The options with the defaults `seedAccount` would apply written out, fields in name order (a dump's key). */
function canonicalSeedOptions(options: SeedAccountOptions): SeedAccountOptions {
  const full: Record<string, unknown> = { ...options, scale: options.scale ?? DEFAULT_SCALE, seed: options.seed ?? 1 };
  return Object.fromEntries(Object.keys(full).sort().filter((field) => full[field] !== undefined).map((field) => [field, full[field]])) as SeedAccountOptions;
}

function openSeededAccountList(accounts: readonly SeedAccountOptions[]): Promise<{ database: TestDatabase; built: SeededAccount[] }> {
  const earlier = accounts.slice(0, -1);
  return openBuiltTestDatabase<SeededAccount[], SeededAccount[]>(
    `seeded accounts ${JSON.stringify(accounts)}`,
    SEED_SOURCES,
    async (db, base = []) => {
      // The accounts the base does not hold yet (all of them without a base).
      const seeded = [...base];
      for (let index = seeded.length; index < accounts.length; index++) seeded.push(await seedAccount(db, { slug: `seeded-cached-${index + 1}`, ...accounts[index] }));
      return seeded;
    },
    { gzip: false, ...(earlier.length > 0 ? { base: () => openSeededAccountList(earlier) } : {}) },
  );
}

/**
 * A migrated test database with one seeded account, and the service running over it. Close it
 * in `after`. `others` are more accounts seeded in the same database (`others` of the result);
 * later ones can be seeded on `db` with `seedAccount`.
 */
export async function startSeededService(
  options: SeedAccountOptions & { config?: Partial<ServiceConfig>; others?: readonly SeedAccountOptions[] } = {},
): Promise<SeededService> {
  const { config, others = [], ...seedOptions } = options;
  const { database, seeded: [seeded, ...more] } = await openSeededTestDatabase([seedOptions, ...others]);
  try {
    const service = await startService(database.db, config);
    const post = (path: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> =>
      send(`${service.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Token ${seeded!.apiKey}`, ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
    return {
      ...seeded!,
      others: more,
      db: database.db,
      service,
      url: service.url,
      graph: (query, variables, extra) =>
        post('/api/graph', { query, ...(variables ? { variables } : {}), ...(extra?.operationName ? { operationName: extra.operationName } : {}) }) as Promise<Answer<GraphBody>>,
      post,
      sql: async (text, values) => (await database.db.query(text, values)).rows as never,
      async close() {
        await service.close();
        await database.close();
      },
    };
  } catch (error) {
    await database.close();
    throw error;
  }
}

/** The `data` of a successful GraphQL answer; fails with the whole answer otherwise. */
export function dataOf<D = any>(answer: Answer<unknown>): D {
  const body = answer.body as GraphBody<D> | undefined;
  if (answer.status !== 200 || !body || body.errors || body.data === undefined) {
    throw new Error(`expected data, got ${answer.status}: ${answer.text.slice(0, 2000)}`);
  }
  return body.data;
}

/** The `data` of a successful answer, read with `parseExact` (numbers keep their digits). */
export function exactDataOf(answer: Answer<unknown>): any {
  dataOf(answer);
  return (parseExact(answer.text) as { data: unknown }).data;
}

/** An account with an API key (and no data), and the REST client of that key. */
export interface KeyedAccount {
  readonly account: Account;
  readonly accountId: string;
  readonly key: string;
  /** The REST client of `key`, checking every answer against the account's OpenAPI document. */
  readonly rest: RestClient;
}

export interface KeyedService extends KeyedAccount {
  readonly db: Database;
  readonly server: TestServer;
  readonly url: string;
  /** Another account on the same service, with its own key, fields and client. */
  newAccount(fields?: readonly CustomFieldDefinition[]): Promise<KeyedAccount>;
  close(): Promise<void>;
}

export interface KeyedServiceOptions {
  /** Custom fields added to the account's default product, in order, before its REST client reads the OpenAPI document. */
  readonly fields?: readonly CustomFieldDefinition[];
  readonly config?: Partial<ServiceConfig>;
}

/**
 * The set-up of the REST and input tests: a migrated test database, the real application over
 * it, and one new, empty account with an API key, its custom fields and its REST client. Close it
 * in `after`. (`startSeededService` is the same with the demo portfolio, for the engine tests.)
 */
export async function startKeyedService(options: KeyedServiceOptions = {}): Promise<KeyedService> {
  const database: TestDatabase = await openTestDatabase();
  let server: TestServer | undefined;
  try {
    server = await startTestServer(database.db, options.config);
    const url = server.url;
    const newAccount = async (fields: readonly CustomFieldDefinition[] = []): Promise<KeyedAccount> => {
      const made = await createAccountWithKey(database.db);
      for (const field of fields) await addProductField(database.db, made.account.id, field);
      return { account: made.account, accountId: made.account.id, key: made.apiKey.key, rest: await restClient(url, made.apiKey.key) };
    };
    const first = await newAccount(options.fields);
    const running = server;
    return {
      ...first,
      db: database.db,
      server: running,
      url,
      newAccount,
      async close() {
        await running.close();
        await database.close();
      },
    };
  } catch (error) {
    await server?.close();
    await database.close();
    throw error;
  }
}

/** An account to seed bare (no admins, no product) with `openSeededAccounts`: its id, slug and scale. */
export interface BareAccount {
  readonly id: string;
  readonly slug: string;
  readonly scale: number;
}

/**
 * A database holding `accounts`, each seeded with `seedPortfolio` (seed `seed`), built once and
 * kept as a dump keyed by `name` and the sources under app/, domain/, db/, this file and `testFile`
 * (`openBuiltTestDatabase`): seeding costs seconds of CPU, a dump half a second.
 */
export async function openSeededAccounts(name: string, testFile: string, accounts: readonly BareAccount[], seed: number): Promise<TestDatabase> {
  const { database } = await openBuiltTestDatabase(
    name,
    ['app', 'domain', 'db', 'tests/support/seededService.ts', testFile],
    async (db) => {
      for (const { id, slug, scale } of accounts) {
        await db.query('INSERT INTO accounts (id, slug, name) VALUES ($1, $2, $2)', [id, slug]);
        await seedPortfolio(db, { accountId: id, scale, seed, adminIds: [] });
      }
    },
    { gzip: false },
  );
  return database;
}

/** The role tests' two accounts (`openRoleAccounts`): A at scale 0.01, B at 0.005, both seed 15. */
export const ROLE_ACCOUNTS = { a: 'a1500000-0000-4000-8000-00000000000a', b: 'b1500000-0000-4000-8000-00000000000b' } as const;

/**
 * The two accounts of the role tests that compare a role's answers with plain SQL
 * (`roles/generatedRoles`, `roles/sharedScanRoles`): one dump for both files (each seeded its own
 * pair, 4–6 CPU-seconds when the dumps are built).
 */
export function openRoleAccounts(): Promise<TestDatabase> {
  return openSeededAccounts(
    'role tests: accounts A and B',
    'tests/support/seededService.ts',
    [
      { id: ROLE_ACCOUNTS.a, slug: `roles-${ROLE_ACCOUNTS.a.slice(0, 4)}`, scale: 0.01 },
      { id: ROLE_ACCOUNTS.b, slug: `roles-${ROLE_ACCOUNTS.b.slice(0, 4)}`, scale: 0.005 },
    ],
    15,
  );
}

/** `query` POSTed to the service's `/api/graph` with `key`: the answer's status and text, whatever they are. */
export async function postGraph(service: { readonly url: string; readonly key: string }, query: string): Promise<{ status: number; text: string }> {
  const reply = await fetch(`${service.url}/api/graph`, {
    method: 'POST',
    headers: { authorization: `Token ${service.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  return { status: reply.status, text: await reply.text() };
}

/** A GraphQL request with the service's key whose answer must hold no errors: its `data`. */
export async function graphData(service: { readonly url: string; readonly key: string }, query: string, variables: Record<string, unknown> = {}): Promise<any> {
  const response = await fetch(`${service.url}/api/graph`, {
    method: 'POST',
    headers: { authorization: `Token ${service.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { data?: any; errors?: unknown };
  if (body.errors !== undefined) throw new Error(`GraphQL errors: ${JSON.stringify(body.errors)}`);
  return body.data;
}

/**
 * PostgreSQL's count of deadlocks in the service's database. A backend reports its statistics
 * when it goes idle, at most once a second (else within 10 s): so first a pause of over a second,
 * then every connection of the service's pool is made busy and idle again, which reports what each
 * has pending; then a new statement reads the counters (a fresh snapshot of them).
 */
export async function deadlocksCounted(service: { readonly db: Database }): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, 1100));
  await Promise.all(Array.from({ length: 10 }, () => service.db.query('SELECT pg_sleep(0.05)')));
  await new Promise((resolve) => setTimeout(resolve, 50));
  const { rows } = await service.db.query<{ deadlocks: string }>(`SELECT deadlocks::text FROM pg_stat_database WHERE datname = current_database()`);
  return Number(rows[0]!.deadlocks);
}

/** One mutation paying each of `ids` 50.00 on `date`, one root per loan in the order given (`p0: insert_payments_one …`). */
export function payEachMutation(ids: readonly string[], date: string): string {
  return `mutation { ${ids.map((id, i) => `p${i}: insert_payments_one(object: {loan_id: "${id}", date: "${date}", amount: 50}) { id }`).join(' ')} }`;
}

/**
 * `count` servicing loans made over REST (100,000 at 12 % for 12 months, funded 2026-01-15, named
 * `${name} 0`, `${name} 1` …), each 60 % funded by one investor of the account: their ids in id
 * order, the order a replay locks them in.
 */
export async function createFundedLoans(service: KeyedService, count: number, name: string): Promise<string[]> {
  const investor = (await service.db.query<{ id: string }>(`INSERT INTO people (account_id, name) VALUES ($1, 'Ivy Investor') RETURNING id`, [service.accountId])).rows[0]!.id;
  const loans: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const created = await service.rest.post('/api/loan', { Amount: 100000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing', Name: `${name} ${i}` });
    if (created.status !== 201) throw new Error(`POST /api/loan answered ${created.status}: ${created.text}`);
    const id = created.json.loan.id as string;
    await service.db.query(`INSERT INTO funding_sources (account_id, person_id, loan_id, original_amount, rate, date_funded) VALUES ($1, $2, $3, 60000, 10, '2025-12-15')`, [service.accountId, investor, id]);
    loans.push(id);
  }
  return loans.sort();
}
