import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { configFromEnv } from '../../app/config.js';
import { routeOf } from '../../server/observeRequests.js';
import { createAccountWithKey, startTestServer, type TestServer } from '../support/http.js';
import { openTestDatabase, testDatabaseKind, type TestDatabase } from '../support/testDatabase.js';
import { allLabelValues, parsePrometheusText, sampleValue, type MetricFamily } from '../support/prometheusText.js';
import { connect, subscribe } from '../support/graphSocket.js';
import { connect as connectTcp } from 'node:net';

/** The operations settings of an unset environment (admission by cost on, sized by default). */
const DEFAULT_OPERATIONS = configFromEnv({}).operations;

/**
 * Issue 35, metrics and the request log: `GET /metrics` answers the Prometheus text format to the
 * bearer of `METRICS_TOKEN` only; after known traffic the counters hold exactly what was sent
 * (read with a strict text-format parser); each request writes one log line with its id, the
 * key's prefix and role, its operation and document hash, status, times and bytes; and a fuzzed
 * run finds no key, value, query text or variable in any label or log line.
 */
const TOKEN = 'metrics-token-0123456789abcdef';
let database: TestDatabase;
let server: TestServer;
let apiKey: { key: string; prefix: string };

before(async () => {
  database = await openTestDatabase();
  server = await startTestServer(database.db, { logLevel: 'info', operations: { ...DEFAULT_OPERATIONS, metricsToken: TOKEN, requestLog: { level: 'info', sample: 1 } } });
  apiKey = (await createAccountWithKey(database.db)).apiKey;
});

after(async () => {
  await server?.close();
  await database?.close();
});

async function scrape(): Promise<Map<string, MetricFamily>> {
  const response = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return parsePrometheusText(await response.text());
}

const graph = (body: unknown, headers: Record<string, string> = {}): Promise<Response> =>
  fetch(`${server.url}/api/graph`, { method: 'POST', headers: { authorization: `Token ${apiKey.key}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

const requestLines = (): Record<string, unknown>[] => server.logs.filter((line) => line.msg === 'request');

describe('GET /metrics', () => {
  it('is 404 without the bearer token, with another one, or another scheme', async () => {
    for (const authorization of [undefined, 'Bearer wrong-token-0123456789abcdef', `Token ${TOKEN}`, `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}`, `Bearer ${TOKEN}x`]) {
      const response = await fetch(`${server.url}/metrics`, { headers: authorization ? { authorization } : {} });
      assert.equal(response.status, 404, String(authorization));
      assert.doesNotMatch(await response.text(), /loanql_/);
    }
  });

  it('takes the Bearer scheme in any case, as HTTP schemes are (RFC 9110 §11.1): `bearer` was a 404', async () => {
    for (const authorization of [`bearer ${TOKEN}`, `BEARER ${TOKEN}`, `Bearer  ${TOKEN}`]) {
      const response = await fetch(`${server.url}/metrics`, { headers: { authorization } });
      assert.equal(response.status, 200, authorization);
      assert.match(await response.text(), /^# HELP /m);
    }
  });

  it('is not served at all when METRICS_TOKEN is unset', async () => {
    const plain = await startTestServer(database.db);
    try {
      const response = await fetch(`${plain.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(response.status, 404);
    } finally {
      await plain.close();
    }
  });

  it('counts the requests sent, by route, operation type and status, with plan-cache hits and statement times', async () => {
    const before = await scrape();
    const document = `query CountedLoans { counted_${process.pid}: loans(limit: 1) { id } }`;
    for (let index = 0; index < 3; index++) assert.equal((await graph({ query: document })).status, 200);
    // Refused by validation (200 with errors): no operation was chosen, so its type is `none`.
    const refused = await graph({ query: 'mutation { no_such_field { id } }' });
    assert.equal(refused.status, 200);
    for (let index = 0; index < 2; index++) assert.equal((await fetch(`${server.url}/api/loan?limit=1`, { headers: { authorization: `Token ${apiKey.key}` } })).status, 200);
    assert.equal((await fetch(`${server.url}/api/loan`, { headers: { authorization: 'Token lq_nothing0_unknown' } })).status, 403);
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string>): number => sampleValue(after, name, labels) - sampleValue(before, name, labels);

    assert.equal(delta('loanql_http_requests_total', { route: 'POST /api/graph', operation: 'query', status: '200' }), 3);
    assert.equal(delta('loanql_http_requests_total', { route: 'POST /api/graph', operation: 'none', status: '200' }), 1);
    assert.equal(delta('loanql_http_requests_total', { route: 'GET /api/loan', operation: 'none', status: '200' }), 2);
    assert.equal(delta('loanql_http_requests_total', { route: 'GET /api/loan', operation: 'none', status: '403' }), 1);
    assert.equal(delta('loanql_http_request_duration_seconds_count', { route: 'POST /api/graph', operation: 'query' }), 3);
    assert.equal(delta('loanql_http_request_duration_seconds_bucket', { route: 'GET /api/loan', operation: 'none', le: '+Inf' }), 3);
    // The document's first run parses it (a miss), the next two find it; the refused document was a miss too.
    assert.equal(delta('loanql_graphql_plan_cache_total', { result: 'miss' }), 2);
    assert.equal(delta('loanql_graphql_plan_cache_total', { result: 'hit' }), 2);
    assert.equal(delta('loanql_database_statement_duration_seconds_count', { operation: 'query' }), 3);
    assert.ok(delta('loanql_database_statement_duration_seconds_sum', { operation: 'query' }) > 0);
    // The scrape itself was counted by the one before... and process metrics are there.
    assert.equal(delta('loanql_http_requests_total', { route: 'GET /metrics', operation: 'none', status: '200' }), 1);
    assert.ok(sampleValue(after, 'process_cpu_user_seconds_total') > 0);
    assert.equal(after.get('loanql_webhook_backlog')?.type, 'gauge');
    assert.equal(sampleValue(after, 'loanql_webhook_backlog', { queue: 'pending' }), 0);
    if (testDatabaseKind === 'postgres') {
      // node-postgres: the pool's figures (PGlite has one connection and no pool: none are reported).
      assert.ok(sampleValue(after, 'loanql_db_pool_max') > 0);
      assert.ok(delta('loanql_db_pool_acquired_total', {}) >= 5, 'each statement took a connection');
      assert.equal(sampleValue(after, 'loanql_db_pool_waiting'), 0);
      assert.ok(sampleValue(after, 'loanql_db_pool_wait_seconds_total') >= 0);
    } else assert.equal(after.get('loanql_db_pool_max'), undefined);
  });

  it('counts and logs a mutation sent with an Idempotency-Key as a mutation (it was `none`, with no name, hash or database time: on the operations page, a REST route)', async () => {
    const before = await scrape();
    const document = `mutation AccountTask${process.pid} { insert_tasks_one(object: {name: "renew the licence"}) { id } }`;
    const idempotencyKey = `task-${process.pid}-${Date.now()}`;
    const first = await graph({ query: document }, { 'idempotency-key': idempotencyKey });
    assert.equal(first.status, 200);
    const firstBody = await first.text();
    assert.doesNotMatch(firstBody, /"errors"/);
    // Sent again: the stored answer, and still a mutation.
    const again = await graph({ query: document }, { 'idempotency-key': idempotencyKey });
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(await again.text(), firstBody);
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string>): number => sampleValue(after, name, labels) - sampleValue(before, name, labels);
    assert.equal(delta('loanql_http_requests_total', { route: 'POST /api/graph', operation: 'mutation', status: '200' }), 2);
    assert.equal(delta('loanql_http_requests_total', { route: 'POST /api/graph', operation: 'none', status: '200' }), 0);
    assert.equal(delta('loanql_database_statement_duration_seconds_count', { operation: 'mutation' }), 2);
    const lines = requestLines().filter((line) => line.operationName === `AccountTask${process.pid}`);
    const hash = createHash('sha256').update(document).digest('hex').slice(0, 16);
    assert.deepEqual(
      lines.map((line) => [line.operationType, line.documentHash, typeof line.databaseMs === 'number' && line.databaseMs > 0]),
      [
        ['mutation', hash, true],
        ['mutation', hash, true],
      ],
    );
  });
});

describe('GET /metrics while the database is slow to answer', () => {
  it('answers within a few seconds, without the webhook backlog, while the outbox is locked (it waited for the lock), and with it again after', async () => {
    assert.ok(familyNames(await scrape()).includes('loanql_webhook_backlog'));
    let unlock!: () => void;
    const held = new Promise<void>((resolve) => (unlock = resolve));
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    // On PGlite the open transaction holds the database's one session: every statement waits.
    const holding = database.db.transaction(async (tx) => {
      await tx.query('LOCK TABLE webhook_outbox IN ACCESS EXCLUSIVE MODE');
      locked();
      await held;
    });
    try {
      await lockTaken;
      const started = Date.now();
      const scraping = scrape();
      const answered = await Promise.race([scraping, new Promise<null>((resolve) => setTimeout(() => resolve(null), 8_000).unref())]);
      assert.ok(answered, 'the scrape answered within 8 s while the outbox was locked');
      const elapsed = Date.now() - started;
      assert.equal(answered.get('loanql_webhook_backlog')?.samples.length ?? 0, 0, 'no backlog sample while its count cannot be read');
      assert.ok(familyNames(answered).includes('loanql_http_requests_total'), `the other metrics are there (${elapsed} ms)`);
    } finally {
      unlock();
      await holding;
    }
    const after = await scrape();
    assert.equal(after.get('loanql_webhook_backlog')?.samples.length, 2);
  });
});

describe('Requests the server could not read', () => {
  /** Sends raw bytes on a new connection and resolves with what came back before it closed. */
  const raw = (bytes: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const socket = connectTcp(Number(new URL(server.url).port), '127.0.0.1', () => socket.end(bytes));
      let answer = '';
      socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
      socket.on('close', () => resolve(answer));
      socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' || error.code === 'EPIPE' ? resolve(answer) : reject(error)));
    });

  it('counts and logs a 431 (headers too large) and a 400 (not HTTP) under the route unread: before, Node answered them unseen', async () => {
    const before = await scrape();
    const linesBefore = requestLines().length;
    const huge = await raw(`GET /api/loan HTTP/1.1\r\nHost: x\r\nAuthorization: Token ${apiKey.key}\r\nX-Filler: ${'a'.repeat(20_000)}\r\n\r\n`);
    assert.match(huge, /^HTTP\/1\.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n$/);
    const garbage = await raw(`NOT HTTP ${apiKey.key}\r\n\r\n`);
    assert.match(garbage, /^HTTP\/1\.1 400 Bad Request\r\n/);
    const after = await scrape();
    for (const status of ['431', '400']) {
      const delta = sampleValue(after, 'loanql_http_requests_total', { route: 'unread', operation: 'none', status }) - sampleValue(before, 'loanql_http_requests_total', { route: 'unread', operation: 'none', status });
      assert.equal(delta, 1, status);
    }
    const lines = requestLines().slice(linesBefore).filter((line) => line.route === 'unread');
    assert.deepEqual(lines.map((line) => line.status).sort(), [400, 431]);
    for (const line of lines) {
      assert.match(String(line.requestId), /^[0-9a-f-]{36}$/);
      assert.equal(line.keyPrefix, null);
      assert.ok(!JSON.stringify(line).includes(apiKey.key.slice(12)), 'no part of the key');
    }
  });
});

describe('WebSocket handshakes', () => {
  /** Sends a handshake on a new connection, ends it, and resolves with the answer's status line. */
  const handshake = (path: string, requestId: string, headers: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const socket = connectTcp(Number(new URL(server.url).port), '127.0.0.1', () =>
        socket.end(`GET ${path} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nX-Request-Id: ${requestId}\r\n${headers}\r\n`),
      );
      let answer = '';
      socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
      socket.on('close', () => resolve(answer.split('\r\n')[0]!));
      socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' || error.code === 'EPIPE' ? resolve(answer.split('\r\n')[0]!) : reject(error)));
    });
  const key = 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n';

  it('are counted and logged, refused ones (400) and switched ones (101): before, a refused handshake was in no log line and no metric', async () => {
    const before = await scrape();
    const linesBefore = requestLines().length;
    assert.equal(await handshake('/api/graph', 'ws-bad-version', `${key}Sec-WebSocket-Version: 99\r\n`), 'HTTP/1.1 400 Bad Request');
    assert.equal(await handshake('/api/graph', 'ws-no-key', 'Sec-WebSocket-Version: 13\r\n'), 'HTTP/1.1 400 Bad Request');
    assert.equal(await handshake('/api/loan', 'ws-elsewhere', `${key}Sec-WebSocket-Version: 13\r\n`), 'HTTP/1.1 400 Bad Request');
    assert.equal(await handshake('/api/graph', 'ws-switched', `${key}Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: graphql-transport-ws\r\n`), 'HTTP/1.1 101 Switching Protocols');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const after = await scrape();
    const delta = (route: string, status: string): number =>
      sampleValue(after, 'loanql_http_requests_total', { route, operation: 'none', status }) - sampleValue(before, 'loanql_http_requests_total', { route, operation: 'none', status });
    assert.deepEqual(
      { graph400: delta('GET /api/graph', '400'), loan400: delta('GET /api/loan', '400'), graph101: delta('GET /api/graph', '101') },
      { graph400: 2, loan400: 1, graph101: 1 },
    );
    const lines = requestLines().slice(linesBefore).filter((line) => line.route !== 'GET /metrics');
    assert.deepEqual(
      lines.map((line) => [line.requestId, line.method, line.route, line.status]),
      [
        ['ws-bad-version', 'GET', 'GET /api/graph', 400],
        ['ws-no-key', 'GET', 'GET /api/graph', 400],
        ['ws-elsewhere', 'GET', 'GET /api/loan', 400],
        ['ws-switched', 'GET', 'GET /api/graph', 101],
      ],
    );
    for (const line of lines) assert.ok(typeof line.responseBytes === 'number' && line.responseBytes > 0, JSON.stringify(line));
  });
});

describe('A request its client abandons mid-body', () => {
  /** Sends the head and part of the body of a POST, then closes the connection (FIN) and waits for it to close. */
  const abandon = (path: string, requestId: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const socket = connectTcp(Number(new URL(server.url).port), '127.0.0.1', () => {
        socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Token ${apiKey.key}\r\nContent-Type: application/json\r\nContent-Length: 500\r\nX-Request-Id: ${requestId}\r\n\r\n{"query":`);
        setTimeout(() => socket.end(), 100);
      });
      let answer = '';
      socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
      socket.on('close', () => resolve(answer));
      socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' || error.code === 'EPIPE' ? resolve(answer) : reject(error)));
    });

  it('is one request: one 499 line and one 499 sample, not also an "unread" 400 (it was read, and counted twice)', async () => {
    // A key verified once takes the fast path (api/routes/graph.ts) from its next request on: both paths.
    assert.equal((await graph({ query: '{ loans(limit: 1) { id } }' })).status, 200);
    const before = await scrape();
    const linesBefore = requestLines().length;
    await abandon('/api/graph', 'abandoned-graph');
    await abandon('/api/loan', 'abandoned-rest');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const after = await scrape();
    const delta = (route: string, status: string): number =>
      sampleValue(after, 'loanql_http_requests_total', { route, operation: 'none', status }) - sampleValue(before, 'loanql_http_requests_total', { route, operation: 'none', status });
    assert.deepEqual(
      { graph499: delta('POST /api/graph', '499'), rest499: delta('POST /api/loan', '499'), unread400: delta('unread', '400') },
      { graph499: 1, rest499: 1, unread400: 0 },
    );
    const lines = requestLines().slice(linesBefore).filter((line) => line.route !== 'GET /metrics');
    assert.deepEqual(
      lines.map((line) => [line.requestId, line.route, line.status, line.keyPrefix]),
      [
        ['abandoned-graph', 'POST /api/graph', 499, apiKey.prefix],
        ['abandoned-rest', 'POST /api/loan', 499, apiKey.prefix],
      ],
    );
    for (const line of lines) assert.equal(line.responseBytes, 0, 'nothing was answered to a client that left');
  });

  it('a body the parser refuses mid-request (a bad chunk) is one 400 line under its route, answered 400 — not a 503 database-unavailable', async () => {
    const sendBadChunk = (path: string, requestId: string): Promise<string> =>
      new Promise<string>((resolve, reject) => {
        const socket = connectTcp(Number(new URL(server.url).port), '127.0.0.1', () => {
          socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Token ${apiKey.key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nX-Request-Id: ${requestId}\r\n\r\n2\r\n{"\r\n`);
          setTimeout(() => socket.write('zz\r\nnot a chunk\r\n'), 100);
        });
        let text = '';
        socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
        socket.on('close', () => resolve(text));
        socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' || error.code === 'EPIPE' ? resolve(text) : reject(error)));
      });
    const before = await scrape();
    const linesBefore = requestLines().length;
    assert.match(await sendBadChunk('/api/graph', 'bad-chunk-graph'), /^HTTP\/1\.1 400 Bad Request\r\n/);
    assert.match(await sendBadChunk('/api/loan', 'bad-chunk-rest'), /^HTTP\/1\.1 400 Bad Request\r\n/);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const after = await scrape();
    const delta = (route: string, status: string): number =>
      sampleValue(after, 'loanql_http_requests_total', { route, operation: 'none', status }) - sampleValue(before, 'loanql_http_requests_total', { route, operation: 'none', status });
    assert.deepEqual(
      { graph400: delta('POST /api/graph', '400'), graph503: delta('POST /api/graph', '503'), rest400: delta('POST /api/loan', '400'), rest503: delta('POST /api/loan', '503'), unread400: delta('unread', '400') },
      { graph400: 1, graph503: 0, rest400: 1, rest503: 0, unread400: 0 },
    );
    const lines = requestLines().slice(linesBefore).filter((line) => line.route !== 'GET /metrics');
    assert.deepEqual(
      lines.map((line) => [line.requestId, line.route, line.status]),
      [
        ['bad-chunk-graph', 'POST /api/graph', 400],
        ['bad-chunk-rest', 'POST /api/loan', 400],
      ],
    );
  });
});

describe('The request log', () => {
  it('writes one line per request: id, key prefix and role, operation and document hash, status, times, bytes', async () => {
    const document = 'query OneLoan($limit: Int!) { loans(limit: $limit) { id } }';
    const response = await graph({ query: document, variables: { limit: 1 } }, { 'x-request-id': 'trace-me-42' });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('x-request-id'), 'trace-me-42');
    const text = await response.text();
    const lines = requestLines().filter((line) => line.requestId === 'trace-me-42');
    assert.equal(lines.length, 1);
    const line = lines[0]!;
    assert.equal(line.level, 30);
    assert.equal(line.method, 'POST');
    assert.equal(line.route, 'POST /api/graph');
    assert.equal(line.status, 200);
    assert.equal(line.keyPrefix, apiKey.prefix);
    assert.equal(line.role, 'admin');
    assert.equal(line.operationType, 'query');
    assert.equal(line.operationName, 'OneLoan');
    assert.equal(line.documentHash, createHash('sha256').update(document).digest('hex').slice(0, 16));
    assert.ok(typeof line.durationMs === 'number' && line.durationMs > 0);
    assert.ok(typeof line.databaseMs === 'number' && line.databaseMs > 0 && line.databaseMs <= (line.durationMs as number));
    assert.ok(typeof line.responseBytes === 'number' && line.responseBytes > Buffer.byteLength(text));
  });

  it('names the key of a refused POST /api/graph too: a body that is not JSON (400)', async () => {
    // A key verified once takes the fast path (api/routes/graph.ts) from its next request on.
    assert.equal((await graph({ query: '{ loans(limit: 1) { id } }' })).status, 200);
    const response = await fetch(`${server.url}/api/graph`, { method: 'POST', headers: { authorization: `Token ${apiKey.key}`, 'content-type': 'application/json', 'x-request-id': 'not-json-1' }, body: '{"query": ' });
    assert.equal(response.status, 400);
    const [line] = requestLines().filter((entry) => entry.requestId === 'not-json-1');
    assert.equal(line?.status, 400);
    assert.equal(line?.keyPrefix, apiKey.prefix);
    assert.equal(line?.role, 'admin');
  });

  it('gives a request without a usable X-Request-Id a new UUID', async () => {
    const response = await graph({ query: '{ loans(limit: 1) { id } }' }, { 'x-request-id': 'has spaces and is not a token' });
    const id = response.headers.get('x-request-id') ?? '';
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.equal(requestLines().filter((line) => line.requestId === id).length, 1);
  });

  it('samples successful requests only: with REQUEST_LOG_SAMPLE=0 a 2xx gets no line and a 4xx still does', async () => {
    const sampled = await startTestServer(database.db, { logLevel: 'info', operations: { ...DEFAULT_OPERATIONS, metricsToken: null, requestLog: { level: 'info', sample: 0 } } });
    try {
      const ok = await fetch(`${sampled.url}/api/loan?limit=1`, { headers: { authorization: `Token ${apiKey.key}` } });
      const bad = await fetch(`${sampled.url}/api/loan?limit=-1`, { headers: { authorization: `Token ${apiKey.key}` } });
      assert.deepEqual([ok.status, bad.status], [200, 400]);
      const lines = sampled.logs.filter((line) => line.msg === 'request');
      assert.deepEqual(lines.map((line) => [line.requestId, line.status]), [[bad.headers.get('x-request-id'), 400]]);
    } finally {
      await sampled.close();
    }
  });

  it('is written at REQUEST_LOG_LEVEL, and not at all below LOG_LEVEL', async () => {
    const quiet = await startTestServer(database.db, { logLevel: 'warn', operations: { ...DEFAULT_OPERATIONS, metricsToken: null, requestLog: { level: 'info', sample: 1 } } });
    const loud = await startTestServer(database.db, { logLevel: 'warn', operations: { ...DEFAULT_OPERATIONS, metricsToken: null, requestLog: { level: 'warn', sample: 1 } } });
    try {
      for (const service of [quiet, loud]) await fetch(`${service.url}/api/loan?limit=1`, { headers: { authorization: `Token ${apiKey.key}` } });
      assert.equal(quiet.logs.filter((line) => line.msg === 'request').length, 0);
      assert.deepEqual(loud.logs.filter((line) => line.msg === 'request').map((line) => line.level), [40]);
    } finally {
      await quiet.close();
      await loud.close();
    }
  });
});

describe('No label and no log line carries a key, a value, a query text or a variable (fuzzed)', () => {
  it('holds for random paths, documents, operation names, variables and headers', async () => {
    const secrets = new Set<string>([apiKey.key]);
    const namesSent = new Set<string>();
    // Words of 6+ characters that no metric or log field would hold by chance.
    const word = fc.stringMatching(/^[a-z][a-z0-9]{5,11}$/).map((text) => `zq${text}`);
    await fc.assert(
      fc.asyncProperty(word, word, word, word, fc.constantFrom('GET', 'POST', 'PATCH', 'PUT'), async (pathWord, literal, variable, name, method) => {
        for (const secret of [pathWord, literal, variable, name]) secrets.add(secret);
        namesSent.add(name);
        const headers = { authorization: `Token ${apiKey.key}`, 'content-type': 'application/json', 'x-custom': pathWord };
        await fetch(`${server.url}/api/loan/${pathWord}`, { method, headers, ...(method === 'GET' ? {} : { body: JSON.stringify({ Name: literal }) }) });
        await fetch(`${server.url}/${pathWord}?${literal}=${variable}`, { headers });
        await graph({ query: `query ${name}($v: String) { loans(where: {name: {_eq: $v}}, limit: 1) { id } other: loans(where: {name: {_eq: "${literal}"}}, limit: 1) { id } }`, variables: { v: variable }, operationName: name });
        await graph({ query: `{ ${literal} }`, variables: { v: variable } });
        await fetch(`${server.url}/api/graph?query=${encodeURIComponent(`{ loans(where: {name: {_eq: "${literal}"}}) { id } }`)}`, { headers: { authorization: `Token ${apiKey.key}` } });
      }),
      { numRuns: 15 },
    );
    const families = await scrape();
    const labels = allLabelValues(families);
    for (const value of labels) for (const secret of secrets) assert.ok(!value.includes(secret), `label value ${JSON.stringify(value)} holds ${secret}`);
    const routes = new Set(families.get('loanql_http_requests_total')!.samples.map((sample) => sample.labels.get('route')));
    for (const route of routes) assert.match(route ?? '', /^((GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS|OTHER) (\/[a-z/:.*_]*|other)|unread)$/);
    for (const line of server.logs) {
      // A GraphQL operation's name is logged by design (operationName), and only a name the client
      // sent; nothing else in the line may hold any word sent (one word may begin another, so the
      // name's field is set aside rather than the words it holds).
      const { operationName, ...rest } = line as { operationName?: unknown };
      // (Earlier tests of this file name their operations without the fuzzed words' `zq`.)
      if (typeof operationName === 'string' && operationName.startsWith('zq')) assert.ok(namesSent.has(operationName), `operationName ${JSON.stringify(operationName)} was not sent as one`);
      const text = JSON.stringify(rest);
      for (const secret of secrets) assert.ok(!text.includes(secret), `log line ${text} holds ${secret}`);
    }
  });
});

describe('WebSocket subscriptions in /metrics', () => {
  it('reports connections, open subscriptions and cohorts as traffic makes them, and counts cohort statements (they were only in /healthz)', async () => {
    const now = async (): Promise<{ connections: number; subscriptions: number; cohorts: number; statements: number }> => {
      const families = await scrape();
      return {
        connections: sampleValue(families, 'loanql_websocket_connections'),
        subscriptions: sampleValue(families, 'loanql_subscriptions_open'),
        cohorts: sampleValue(families, 'loanql_subscription_cohorts'),
        statements: sampleValue(families, 'loanql_subscription_statements_total'),
      };
    };
    const idle = await now();
    assert.deepEqual({ ...idle, statements: 0 }, { connections: 0, subscriptions: 0, cohorts: 0, statements: 0 });
    assert.ok(familyNames(await scrape()).includes('loanql_subscription_statements_total'));
    const client = connect(server.url, apiKey.key);
    try {
      // Two subscribers of one document (one cohort), one of another.
      const document = 'subscription { loans_aggregate { aggregate { count } } }';
      const live = [subscribe(client.client, document), subscribe(client.client, document), subscribe(client.client, 'subscription { loans(limit: 1) { id } }')];
      await Promise.all(live.map((one) => one.next()));
      const open = await now();
      assert.deepEqual({ connections: open.connections, subscriptions: open.subscriptions, cohorts: open.cohorts }, { connections: 1, subscriptions: 3, cohorts: 2 });
      assert.ok(open.statements >= idle.statements + 2, `cohort statements ${idle.statements} → ${open.statements}`);
      // Each operation started is counted by type and outcome: a query answered once, a document refused before its type was known.
      const once = subscribe(client.client, '{ loans(limit: 1) { id } }');
      await once.next();
      const bad = subscribe(client.client, '{ no_such_field }');
      assert.ok(Array.isArray(await bad.ended));
      const operations = await scrape();
      const counted = (operation: string, outcome: string): number => sampleValue(operations, 'loanql_websocket_operations_total', { operation, outcome });
      assert.deepEqual([counted('subscription', 'started'), counted('query', 'started'), counted('none', 'refused')], [3, 1, 1]);
      // And the request log has a line for each, naming the key by its prefix (they had none).
      const lines = server.logs.filter((line) => line.msg === 'websocket operation');
      assert.deepEqual(
        lines.map((line) => [line.operationType, line.outcome, line.keyPrefix, line.role, line.code]),
        [
          ['subscription', 'started', apiKey.prefix, 'admin', null],
          ['subscription', 'started', apiKey.prefix, 'admin', null],
          ['subscription', 'started', apiKey.prefix, 'admin', null],
          ['query', 'started', apiKey.prefix, 'admin', null],
          [null, 'refused', apiKey.prefix, 'admin', 'validation-failed'],
        ],
      );
      for (const line of lines) assert.ok(!JSON.stringify(line).includes(apiKey.key.slice(12)), 'no part of the key');
      for (const one of live) one.stop();
    } finally {
      await client.dispose();
    }
    for (let tries = 0; (await now()).connections !== 0; tries++) {
      assert.ok(tries < 100, 'the connection closed');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const closed = await now();
    assert.deepEqual({ subscriptions: closed.subscriptions, cohorts: closed.cohorts }, { subscriptions: 0, cohorts: 0 });
  });
});

const familyNames = (families: Map<string, MetricFamily>): string[] => [...families.keys()];

describe('Route templates and settings', () => {
  it('names a route by its template, from a closed list', () => {
    assert.equal(routeOf('GET', '/api/loan/3f1c2a9e-0000-4000-8000-000000000001/payoff?date=2026-01-01'), 'GET /api/loan/:id/payoff');
    assert.equal(routeOf('PATCH', '/api/loan/abc'), 'PATCH /api/loan/:id');
    assert.equal(routeOf('POST', '/api/graph'), 'POST /api/graph');
    assert.equal(routeOf('GET', '/dashboard/loans/1'), 'GET /dashboard/*');
    assert.equal(routeOf('GET', '/wp-admin/secret-thing'), 'GET other');
    assert.equal(routeOf('BREW', '/api/secret'), 'OTHER /api/*');
  });

  it('refuses bad METRICS_TOKEN, REQUEST_LOG_LEVEL and REQUEST_LOG_SAMPLE values, naming the setting', () => {
    assert.throws(() => configFromEnv({ METRICS_TOKEN: 'short' }), /METRICS_TOKEN must be at least 16/);
    assert.throws(() => configFromEnv({ METRICS_TOKEN: 'has a space in it, sixteen+' }), /METRICS_TOKEN/);
    assert.throws(() => configFromEnv({ REQUEST_LOG_LEVEL: 'loud' }), /REQUEST_LOG_LEVEL must be one of/);
    assert.throws(() => configFromEnv({ REQUEST_LOG_SAMPLE: '1.5' }), /REQUEST_LOG_SAMPLE must be a number from 0 to 1/);
    assert.throws(() => configFromEnv({ REQUEST_LOG_SAMPLE: 'half' }), /REQUEST_LOG_SAMPLE/);
    assert.deepEqual(configFromEnv({ REQUEST_LOG_SAMPLE: '0.25', REQUEST_LOG_LEVEL: 'debug', METRICS_TOKEN: TOKEN }).operations, { ...DEFAULT_OPERATIONS, metricsToken: TOKEN, requestLog: { level: 'debug', sample: 0.25 } });
    assert.deepEqual(configFromEnv({}).operations, { metricsToken: null, requestLog: { level: 'info', sample: 1 }, admission: { cheapCost: 1_000, budget: null, queueSize: 100, queueWaitMs: 5_000 }, rateLimit: null, tracing: false });
  });
});
