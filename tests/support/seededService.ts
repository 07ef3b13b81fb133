/**
 * A seeded database behind the real application on a real socket, for the engine tests:
 * one account filled by `seedPortfolio` (deterministic demo data), an API key of it, and
 * `graph(query, variables)` doing `POST /api/graph` with that key.
 *
 * The server is started here rather than with `startTestServer` because the engine tests need
 * the `EngineHolder` themselves (to call the engine directly, e.g. when counting statements).
 */
import type { Database } from '../../db/index.js';
import { seedPortfolio, type SeedSummary } from '../../db/seed/index.js';
import { createAdmin, type Account } from '../../app/accounts.js';
import { createApiKey } from '../../app/apiKeys.js';
import { createDefaultProduct, DEMO_CUSTOM_FIELDS } from '../../app/products.js';
import type { ServiceConfig } from '../../api/config.js';
import type { EngineHolder } from '../../app/engineHolder.js';
import type { GraphEngine } from '../../engine/index.js';
import { openTestDatabase, type TestDatabase } from './testDatabase.js';
import { METADATA_PATH, startTestServer, uniqueSlug } from './http.js';

export { METADATA_PATH };


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

/**
 * A migrated test database with one seeded account, and the service running over it. Close it
 * in `after`. Extra accounts can be seeded on `db` with `seedAccount`.
 */
export async function startSeededService(options: SeedAccountOptions & { config?: Partial<ServiceConfig> } = {}): Promise<SeededService> {
  const database: TestDatabase = await openTestDatabase();
  try {
    const seeded = await seedAccount(database.db, options);
    const service = await startService(database.db, options.config);
    const post = (path: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> =>
      send(`${service.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Token ${seeded.apiKey}`, ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
    return {
      ...seeded,
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

/**
 * A JSON number as written in the response text. `JSON.parse` turns `65000.00` into `65000`;
 * the engine promises PostgreSQL's exact digits, so tests read numbers with `parseExact`.
 */
export class JsonNumber {
  constructor(readonly text: string) {}
  toJSON(): number {
    return Number(this.text);
  }
}

/** `new JsonNumber(text)`, written short for expectations. */
export const num = (text: string | number | bigint): JsonNumber => new JsonNumber(String(text));

/** JSON.parse, except that every number becomes a `JsonNumber` carrying its exact text. */
export function parseExact(text: string): unknown {
  let at = 0;
  const fail = (what: string): never => {
    throw new SyntaxError(`parseExact: ${what} at ${at}: ${JSON.stringify(text.slice(at, at + 40))}`);
  };
  const space = (): void => {
    while (at < text.length && ' \t\n\r'.includes(text[at]!)) at++;
  };
  const value = (): unknown => {
    space();
    const c = text[at];
    if (c === '{') {
      at++;
      const object: Record<string, unknown> = {};
      space();
      if (text[at] === '}') {
        at++;
        return object;
      }
      for (;;) {
        space();
        if (text[at] !== '"') fail('expected a key');
        const key = string();
        space();
        if (text[at++] !== ':') fail('expected ":"');
        object[key] = value();
        space();
        const next = text[at++];
        if (next === '}') return object;
        if (next !== ',') fail('expected "," or "}"');
      }
    }
    if (c === '[') {
      at++;
      const array: unknown[] = [];
      space();
      if (text[at] === ']') {
        at++;
        return array;
      }
      for (;;) {
        array.push(value());
        space();
        const next = text[at++];
        if (next === ']') return array;
        if (next !== ',') fail('expected "," or "]"');
      }
    }
    if (c === '"') return string();
    const literal = /^(?:true|false|null)/.exec(text.slice(at, at + 5));
    if (literal) {
      at += literal[0].length;
      return literal[0] === 'null' ? null : literal[0] === 'true';
    }
    const number = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(at, at + 400));
    if (!number) return fail('unexpected text');
    at += number[0].length;
    return new JsonNumber(number[0]);
  };
  const string = (): string => {
    const start = at;
    at++;
    while (at < text.length && text[at] !== '"') at += text[at] === '\\' ? 2 : 1;
    at++;
    return JSON.parse(text.slice(start, at)) as string;
  };
  const result = value();
  space();
  if (at !== text.length) fail('trailing text');
  return result;
}

/** JSON.stringify with two-space indentation that writes a `JsonNumber` with its exact text. */
export function stringifyExact(value: unknown, indent = ''): string {
  if (value instanceof JsonNumber) return value.text;
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (!value.length) return '[]';
    return `[\n${value.map((item) => inner + stringifyExact(item, inner)).join(',\n')}\n${indent}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (!entries.length) return '{}';
  return `{\n${entries.map(([key, item]) => `${inner}${JSON.stringify(key)}: ${stringifyExact(item, inner)}`).join(',\n')}\n${indent}}`;
}

/** The `data` of a successful answer, read with `parseExact` (numbers keep their digits). */
export function exactDataOf(answer: Answer<unknown>): any {
  dataOf(answer);
  return (parseExact(answer.text) as { data: unknown }).data;
}
