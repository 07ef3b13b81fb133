import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { propagation, trace, SpanKind } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { core } from '@opentelemetry/sdk-node';
import { configFromEnv } from '../../app/config.js';
import { tracingWantedByEnv } from '../../app/operations/requestTraces.js';
import { createAccountWithKey, startTestServer, type TestServer } from '../support/http.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';
import { PROJECT_ROOT } from '../support/processes.js';
import { execFile } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Issue 35, traces: with a tracer provider registered in this process (an in-memory exporter) and
 * tracing on, each request is one trace — a SERVER span named by its route template, the child
 * of the incoming `traceparent` when there is one, with child spans parse, plan, statement and
 * response (the statement's carrying the operation name and the SQL's hash) — and no attribute
 * holds a variable's value, a literal of the document, the document or the key. With tracing
 * off the same provider records nothing: the server made no span.
 */
const DEFAULT_OPERATIONS = configFromEnv({}).operations;
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
let database: TestDatabase;
let server: TestServer;
let apiKey: { key: string; prefix: string };

before(async () => {
  trace.setGlobalTracerProvider(provider);
  propagation.setGlobalPropagator(new core.W3CTraceContextPropagator());
  database = await openTestDatabase();
  // Metrics and the request log off: traces alone observe requests.
  server = await startTestServer(database.db, { operations: { ...DEFAULT_OPERATIONS, metricsToken: null, requestLog: { level: 'silent', sample: 1 }, tracing: true } });
  apiKey = (await createAccountWithKey(database.db)).apiKey;
});

after(async () => {
  await server?.close();
  await database?.close();
  await provider.shutdown();
  trace.disable();
  propagation.disable();
});

beforeEach(() => exporter.reset());

const graph = (target: TestServer, body: unknown, headers: Record<string, string> = {}): Promise<Response> =>
  fetch(`${target.url}/api/graph`, { method: 'POST', headers: { authorization: `Token ${apiKey.key}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

/** A span's parent span id (the SDK 2.x field). */
const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;

/** The finished spans by trace id. */
function traces(): Map<string, ReadableSpan[]> {
  const byTrace = new Map<string, ReadableSpan[]>();
  for (const span of exporter.getFinishedSpans()) {
    const { traceId } = span.spanContext();
    byTrace.set(traceId, [...(byTrace.get(traceId) ?? []), span]);
  }
  return byTrace;
}

/** The one trace's root and its children by name (each name once). */
function shapeOf(spans: readonly ReadableSpan[]): { root: ReadableSpan; children: Map<string, ReadableSpan> } {
  const roots = spans.filter((span) => span.kind === SpanKind.SERVER);
  assert.equal(roots.length, 1, `one SERVER span: ${spans.map((span) => span.name).join(', ')}`);
  const root = roots[0]!;
  const children = new Map<string, ReadableSpan>();
  for (const span of spans) {
    if (span === root) continue;
    assert.equal(parentOf(span), root.spanContext().spanId, `${span.name} is a child of the request's span`);
    assert.ok(!children.has(span.name), `${span.name} once`);
    children.set(span.name, span);
  }
  return { root, children };
}

const hrMs = ([seconds, nanos]: readonly [number, number]): number => seconds * 1000 + nanos / 1e6;

describe('Traces (OpenTelemetry)', () => {
  it('makes one trace per request, under the incoming traceparent, with parse, plan, statement and response spans', async () => {
    const traceId = randomBytes(16).toString('hex');
    const parentId = randomBytes(8).toString('hex');
    const name = `zqname${randomBytes(4).toString('hex')}`;
    const document = 'query TracedLoans($name: String) { loans(where: {name: {_eq: $name}}, limit: 2) { id name } }';
    const response = await graph(server, { query: document, variables: { name }, operationName: 'TracedLoans' }, { traceparent: `00-${traceId}-${parentId}-01` });
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { data: { loans: [] } });

    const byTrace = traces();
    assert.deepEqual([...byTrace.keys()], [traceId], 'one trace, the incoming one');
    const { root, children } = shapeOf(byTrace.get(traceId)!);
    assert.equal(parentOf(root), parentId);
    assert.equal(root.name, 'POST /api/graph');
    // Admission by cost is on by default: a query with a statement is admitted (here at once, the cheap lane).
    assert.deepEqual([...children.keys()].sort(), ['db.statement', 'graphql.parse', 'graphql.plan', 'http.response', 'loanql.admission']);
    assert.equal(root.attributes['http.route'], 'POST /api/graph');
    assert.equal(root.attributes['http.response.status_code'], 200);
    assert.equal(root.attributes['graphql.operation.name'], 'TracedLoans');
    assert.equal(root.attributes['graphql.operation.type'], 'query');
    const statement = children.get('db.statement')!;
    assert.equal(statement.attributes['graphql.operation.name'], 'TracedLoans');
    assert.match(String(statement.attributes['db.query.hash']), /^[0-9a-f]{16}$/);
    assert.equal(children.get('graphql.parse')!.attributes['loanql.plan_cache.hit'], false);
    // In order, within the request: parse ≤ plan ≤ statement ≤ response.
    const order = ['graphql.parse', 'graphql.plan', 'loanql.admission', 'db.statement', 'http.response'].map((spanName) => children.get(spanName)!);
    const times = order.map((span) => `${span.name} ${hrMs(span.startTime).toFixed(3)}–${hrMs(span.endTime).toFixed(3)}`).join(', ') + ` in ${hrMs(root.startTime).toFixed(3)}–${hrMs(root.endTime).toFixed(3)}`;
    for (let index = 1; index < order.length; index++) assert.ok(hrMs(order[index]!.startTime) >= hrMs(order[index - 1]!.endTime) - 0.001, times);
    assert.ok(hrMs(order[0]!.startTime) >= hrMs(root.startTime) - 0.001 && hrMs(order[4]!.endTime) <= hrMs(root.endTime) + 0.001, times);
  });

  it('starts a new trace without a traceparent, and a repeated query is a plan-cache hit with the same statement hash', async () => {
    const document = 'query Again { loans(limit: 1) { id } }';
    await graph(server, { query: document });
    await graph(server, { query: document });
    const byTrace = [...traces().values()];
    assert.equal(byTrace.length, 2, 'a trace per request');
    const [first, second] = byTrace.map((spans) => shapeOf(spans));
    assert.equal(parentOf(first!.root), undefined, 'a root span: no parent');
    assert.equal(second!.children.get('graphql.parse')!.attributes['loanql.plan_cache.hit'], true);
    assert.equal(first!.children.get('db.statement')!.attributes['db.query.hash'], second!.children.get('db.statement')!.attributes['db.query.hash']);
  });

  it('traces a mutation (its transaction is the statement span) and a refused document (no plan, no statement)', async () => {
    const added = await graph(server, { query: 'mutation Add($n: String!) { insert_tasks_one(object: {name: $n}) { id } }', variables: { n: 'zqtraced loan' } });
    assert.equal(added.status, 200);
    const addedBody = (await added.json()) as { data?: { insert_tasks_one?: { id?: string } } };
    assert.ok(addedBody.data?.insert_tasks_one?.id, JSON.stringify(addedBody));
    assert.equal((await graph(server, { query: 'query Broken { no_such_field { id } }' })).status, 200);
    const [mutation, refused] = [...traces().values()].map((spans) => shapeOf(spans));
    assert.deepEqual([...mutation!.children.keys()].sort(), ['db.statement', 'graphql.parse', 'graphql.plan', 'http.response']);
    assert.equal(mutation!.children.get('db.statement')!.attributes['graphql.operation.type'], 'mutation');
    assert.equal(mutation!.children.get('db.statement')!.attributes['db.query.hash'], undefined, 'a transaction of several statements has no one hash');
    assert.deepEqual([...refused!.children.keys()].sort(), ['graphql.parse', 'http.response']);
  });

  it('traces a mutation sent with an Idempotency-Key as any mutation (parse, plan, statement), and a query with one once', async () => {
    const key = `zqkey-${randomBytes(6).toString('hex')}`;
    const body = { query: 'mutation AddOnce($n: String!) { insert_tasks_one(object: {name: $n}) { id } }', variables: { n: 'zqtraced once' }, operationName: 'AddOnce' };
    const first = await graph(server, body, { 'idempotency-key': key });
    assert.equal(first.status, 200);
    const firstBody = (await first.json()) as { data?: { insert_tasks_one?: { id?: string } } };
    assert.ok(firstBody.data?.insert_tasks_one?.id, JSON.stringify(firstBody));
    // Sent again: the stored response, and the same spans (its transaction finds the key's answer).
    const again = await graph(server, body, { 'idempotency-key': key });
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    // A query's key means nothing: it is prepared once more on the usual path, and traced once.
    assert.equal((await graph(server, { query: 'query ReadOnce { loans(limit: 1) { id } }' }, { 'idempotency-key': `${key}-q` })).status, 200);
    const [sent, replayed, read] = [...traces().values()].map((spans) => shapeOf(spans));
    for (const mutation of [sent!, replayed!]) {
      assert.equal(mutation.root.attributes['http.route'], 'POST /api/graph');
      assert.deepEqual([...mutation.children.keys()].sort(), ['db.statement', 'graphql.parse', 'graphql.plan', 'http.response']);
      assert.equal(mutation.children.get('graphql.plan')!.attributes['graphql.operation.name'], 'AddOnce');
      assert.equal(mutation.children.get('db.statement')!.attributes['graphql.operation.type'], 'mutation');
      const order = ['graphql.parse', 'graphql.plan', 'db.statement', 'http.response'].map((spanName) => mutation.children.get(spanName)!);
      for (let index = 1; index < order.length; index++) assert.ok(hrMs(order[index]!.startTime) >= hrMs(order[index - 1]!.endTime) - 0.001, `${order[index]!.name} after ${order[index - 1]!.name}`);
    }
    assert.deepEqual([...read!.children.keys()].sort(), ['db.statement', 'graphql.parse', 'graphql.plan', 'http.response', 'loanql.admission']);
  });

  it('traces REST and other routes by their template, never their path', async () => {
    const id = '3f1c2a9e-0000-4000-8000-00000000abcd';
    assert.equal((await fetch(`${server.url}/api/loan/${id}`, { headers: { authorization: `Token ${apiKey.key}` } })).status, 404);
    const [only] = [...traces().values()].map((spans) => shapeOf(spans));
    assert.equal(only!.root.name, 'GET /api/loan/:id');
    assert.equal(only!.root.attributes['http.response.status_code'], 404);
    assert.deepEqual([...only!.children.keys()], ['http.response']);
  });

  it('puts no variable value, literal, document text or key in any attribute (random values)', async () => {
    const secrets = new Set<string>([apiKey.key]);
    for (let round = 0; round < 12; round++) {
      const word = (): string => `zq${randomBytes(5).toString('hex')}`;
      const [variable, literal, pathWord] = [word(), word(), word()];
      for (const secret of [variable, literal, pathWord]) secrets.add(secret);
      const document = `query Fuzz($v: String) { loans(where: {name: {_eq: $v}}, limit: 1) { id } other: loans(where: {name: {_eq: "${literal}"}}, limit: 1) { id } }`;
      secrets.add(document);
      await graph(server, { query: document, variables: { v: variable } }, { 'x-request-id': pathWord });
      await fetch(`${server.url}/api/loan/${pathWord}?${literal}=${variable}`, { headers: { authorization: `Token ${apiKey.key}` } });
      await graph(server, { query: `{ ${literal} }`, variables: { v: variable } });
    }
    const spans = exporter.getFinishedSpans();
    assert.ok(spans.length >= 12 * 3 * 2);
    for (const span of spans) {
      const text = JSON.stringify({ name: span.name, attributes: span.attributes, events: span.events, status: span.status });
      for (const secret of secrets) assert.ok(!text.includes(secret), `span ${text} holds ${secret}`);
    }
  });

  it('makes no span at all when tracing is off, the provider registered or not', async () => {
    const untraced = await startTestServer(database.db, { operations: { ...DEFAULT_OPERATIONS, tracing: false } });
    try {
      const traceId = randomBytes(16).toString('hex');
      const response = await graph(untraced, { query: '{ loans(limit: 1) { id } }' }, { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` });
      assert.equal(response.status, 200);
      await fetch(`${untraced.url}/api/loan?limit=1`, { headers: { authorization: `Token ${apiKey.key}` } });
      assert.deepEqual(exporter.getFinishedSpans(), []);
    } finally {
      await untraced.close();
    }
  });

  it('is on only when the OTEL_* variables ask for an exporter', () => {
    assert.equal(tracingWantedByEnv({}), false);
    assert.equal(tracingWantedByEnv({ OTEL_TRACES_EXPORTER: 'none' }), false);
    assert.equal(tracingWantedByEnv({ OTEL_TRACES_EXPORTER: 'otlp' }), true);
    assert.equal(tracingWantedByEnv({ OTEL_TRACES_EXPORTER: ' otlp , console' }), true);
    assert.equal(tracingWantedByEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), true);
    assert.equal(tracingWantedByEnv({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }), true);
    assert.equal(tracingWantedByEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' }), false);
    assert.equal(tracingWantedByEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }), false);
    assert.equal(configFromEnv({ OTEL_TRACES_EXPORTER: 'console' }).operations.tracing, true);
    assert.equal(configFromEnv({}).operations.tracing, false);
  });

  it('refuses at start an exporter name the SDK would skip in silence (requests traced, nothing exported), naming OTEL_TRACES_EXPORTER', () => {
    // `none, console`: the SDK reads a leading none as no exporter at all; `console, none` as otlp.
    for (const value of ['otlp-http', 'OTLP', 'jaeger', 'none, console', 'console,none', 'otlp,bogus']) {
      assert.throws(() => configFromEnv({ OTEL_TRACES_EXPORTER: value }), /^Error: OTEL_TRACES_EXPORTER must be otlp, zipkin, console \(one or more, comma-separated\) or none alone, not "/, value);
    }
    assert.equal(configFromEnv({ OTEL_TRACES_EXPORTER: 'bogus', OTEL_SDK_DISABLED: 'true' }).operations.tracing, false);
  });

  it("writes the SDK's own errors to the log — a collector refusing its exports — with the error's message and code, once a minute at most", async () => {
    // A process of its own: the SDK registers global providers.
    const script = `
      import { trace } from '@opentelemetry/api';
      import { createLogger, flushLog } from './dist/app/logger.js';
      import { startTracing } from './dist/server/tracing.js';
      const logger = createLogger('info');
      const stop = startTracing(logger);
      for (let i = 0; i < 3; i++) {
        trace.getTracer('audit').startSpan('request ' + i).end();
        await new Promise((resolve) => setTimeout(resolve, 400));
      }
      await stop().catch(() => {});
      flushLog(logger);
    `;
    const closedPort = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${closedPort}`, OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-key=collector-secret-0123', OTEL_BSP_SCHEDULE_DELAY: '100', OTEL_EXPORTER_OTLP_TIMEOUT: '1000' },
      timeout: 60_000,
    });
    const lines = stdout.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as { level: number; msg: string; detail?: unknown });
    const refused = lines.filter((line) => line.level === 50 && /^OpenTelemetry: .*ECONNREFUSED/.test(line.msg));
    assert.equal(refused.length, 1, `one line for the repeated failure: ${stdout}`);
    assert.match(refused[0]!.msg, /connect ECONNREFUSED 127\.0\.0\.1:\d+ \(ECONNREFUSED\)/);
    assert.doesNotMatch(stdout, /collector-secret-0123|    at /, 'no header value, no stack');
  });
});
