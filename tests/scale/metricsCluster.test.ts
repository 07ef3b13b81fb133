/**
 * Issue 35: with `WORKERS=2` each API process keeps its own registry, and `GET /metrics` —
 * whichever process answers it — gives the whole service's figures, gathered by the cluster's
 * primary (server/clusterMetrics.ts): every scrape shows every request, the pool figures of both
 * processes added up; while a process killed with `kill -9` is replaced every scrape still
 * answers at once, and no counter of the service goes down (its counts stay in the totals).
 * Needs a PostgreSQL server (`TEST_DATABASE_URL`): WORKERS above 1 does.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { startClusterService, type ClusterService } from '../support/clusterService.js';
import { freePort, type RunningService } from '../support/processes.js';
import { parsePrometheusText, sampleValue } from '../support/prometheusText.js';

const serverUrl = process.env.TEST_DATABASE_URL;
const TOKEN = 'cluster-metrics-token-0123456789';

/** One request on a new connection (the cluster's primary hands connections to its processes in turn). */
const fresh = (url: string, method: string, headers: Record<string, string>, body?: string): Promise<{ status: number; body: string }> =>
  new Promise((resolve, reject) => {
    const req = request(url, { method, headers: { connection: 'close', ...headers }, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });

describe('GET /metrics with WORKERS=2', { skip: serverUrl ? false : 'needs TEST_DATABASE_URL (WORKERS above 1 needs PostgreSQL)', timeout: 240_000 }, () => {
  let cluster: ClusterService;
  let service: RunningService;
  let key: string;

  before(async () => {
    cluster = await startClusterService(serverUrl!, 'metrics-cluster', () => ({ WORKERS: '2', METRICS_TOKEN: TOKEN, PG_POOL_SIZE: '3', WEBHOOK_WORKER: '0' }));
    ({ service, key } = cluster);
  });

  after(() => cluster?.close());

  it('answers every process’s requests from either process', async () => {
    for (let index = 0; index < 6; index++) assert.equal((await fresh(`${service.url}/healthz`, 'GET', {})).status, 200);
    const sent = 10;
    for (let index = 0; index < sent; index++) {
      const answer = await fresh(`${service.url}/api/graph`, 'POST', { authorization: `Token ${key}`, 'content-type': 'application/json' }, JSON.stringify({ query: '{ loans(limit: 1) { id } }' }));
      assert.equal(answer.status, 200);
    }
    // Several scrapes, so both processes answer one: each sees the whole service.
    for (let index = 0; index < 4; index++) {
      const scraped = await fresh(`${service.url}/metrics`, 'GET', { authorization: `Bearer ${TOKEN}` });
      assert.equal(scraped.status, 200);
      const families = parsePrometheusText(scraped.body);
      assert.equal(sampleValue(families, 'loanql_http_requests_total', { route: 'POST /api/graph', operation: 'query', status: '200' }), sent);
      assert.equal(sampleValue(families, 'loanql_http_requests_total', { route: 'GET /healthz', operation: 'none', status: '200' }), 6);
      assert.equal(sampleValue(families, 'loanql_db_pool_max'), 6, 'PG_POOL_SIZE=3 in each of 2 processes');
      // Each process has its own plan cache: the document was a miss once in each, so both served it.
      assert.equal(sampleValue(families, 'loanql_graphql_plan_cache_total', { result: 'miss' }), 2, 'one miss per process');
    }
  });

  it('answers every scrape while a killed process is replaced, and no counter goes down', async () => {
    const scrape = async (): Promise<{ requests: number; healthz: number; ms: number }> => {
      const startedAt = performance.now();
      const scraped = await fresh(`${service.url}/metrics`, 'GET', { authorization: `Bearer ${TOKEN}` });
      const ms = performance.now() - startedAt;
      assert.equal(scraped.status, 200, `a scrape ${Math.round(ms)} ms after asking: ${scraped.status} ${scraped.body.slice(0, 80)}`);
      const families = parsePrometheusText(scraped.body);
      return {
        requests: sampleValue(families, 'loanql_http_requests_total', { route: 'POST /api/graph', operation: 'query', status: '200' }),
        healthz: sampleValue(families, 'loanql_http_requests_total', { route: 'GET /healthz', operation: 'none', status: '200' }),
        ms,
      };
    };
    const pidOf = async (): Promise<number> => (JSON.parse((await fresh(`${service.url}/healthz`, 'GET', { authorization: `Token ${key}` })).body) as { pid: number }).pid;
    const pids = new Set<number>();
    for (let index = 0; index < 6; index++) pids.add(await pidOf());
    assert.equal(pids.size, 2);
    const before = await scrape();
    process.kill([...pids][0]!, 'SIGKILL');
    // The replacement takes seconds to open its database; scrapes meanwhile (before: 5 s each, then 503).
    const startedAt = Date.now();
    let slowest = 0;
    let lowest = before.requests;
    while (Date.now() - startedAt < 8_000) {
      const now = await scrape();
      slowest = Math.max(slowest, now.ms);
      lowest = Math.min(lowest, now.requests);
      assert.ok(now.healthz >= before.healthz, `GET /healthz's count went from ${before.healthz} to ${now.healthz}`);
    }
    assert.equal(lowest, before.requests, 'the graph requests counted before the kill stay counted');
    assert.ok(slowest < 4_500, `the slowest scrape took ${Math.round(slowest)} ms`);
    // Once the new process serves, its requests add to the totals.
    const deadline = Date.now() + 30_000;
    for (;;) {
      assert.ok(Date.now() < deadline, 'no new API process within 30 s');
      const now = new Set<number>();
      for (let index = 0; index < 6; index++) now.add(await pidOf().catch(() => -1));
      if (now.size === 2 && !now.has(-1) && !now.has([...pids][0]!)) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    for (let index = 0; index < 6; index++) {
      const answer = await fresh(`${service.url}/api/graph`, 'POST', { authorization: `Token ${key}`, 'content-type': 'application/json' }, JSON.stringify({ query: '{ loans(limit: 1) { id } }' }));
      assert.equal(answer.status, 200);
    }
    assert.equal((await scrape()).requests, before.requests + 6);
  });
});

/**
 * `loanql_replica_status` with `WORKERS=2` (session 42): each process checks every replica on its
 * own, and a scrape — whichever process takes it — counts, for each replica and status, the
 * processes whose last check saw it so (per replica the statuses add up to the processes). Before,
 * the processes' 1s were combined by their maximum: a replica one process saw `down` and the other
 * `serving` was 1 in both statuses, and a scrape could not tell how many saw which.
 * Two replicas no process can read from, in two ways: a port nobody listens on (`down`) and the
 * primary's own database (`not-standby`).
 */
describe('loanql_replica_status with WORKERS=2', { skip: serverUrl ? false : 'needs TEST_DATABASE_URL (WORKERS above 1 needs PostgreSQL)', timeout: 240_000 }, () => {
  let cluster: ClusterService;
  let service: RunningService;
  let key: string;

  before(async () => {
    cluster = await startClusterService(serverUrl!, 'replica-status-cluster', async (databaseUrl) => ({
      DATABASE_REPLICA_URLS: `postgres://postgres@127.0.0.1:${await freePort()}/postgres,${databaseUrl}`,
      REPLICA_CHECK_INTERVAL_MS: '100',
      WORKERS: '2',
      METRICS_TOKEN: TOKEN,
      PG_POOL_SIZE: '2',
      WEBHOOK_WORKER: '0',
      DEMO_SCALE: '0.001',
      LOG_LEVEL: 'warn',
    }));
    ({ service, key } = cluster);
  });

  after(() => cluster?.close());

  it("counts, per replica and status, the processes whose last check saw it so; each process's /healthz is its own view", async () => {
    // Both processes serve (new connections go to each in turn), and each has checked both replicas.
    const views = new Map<number, string>();
    const deadline = Date.now() + 30_000;
    while (views.size < 2 || [...views.values()].some((view) => view !== 'replica-1 down, replica-2 not-standby')) {
      assert.ok(Date.now() < deadline, `both processes' checks within 30 s: ${JSON.stringify([...views])}`);
      const health = JSON.parse((await fresh(`${service.url}/healthz`, 'GET', { authorization: `Token ${key}` })).body) as { pid: number; replicas: { name: string; status: string }[] };
      views.set(health.pid, health.replicas.map((replica) => `${replica.name} ${replica.status}`).join(', '));
    }
    const statuses = ['serving', 'lagging', 'down', 'not-standby', 'wrong-database', 'unknown'];
    for (let index = 0; index < 4; index++) {
      const scraped = await fresh(`${service.url}/metrics`, 'GET', { authorization: `Bearer ${TOKEN}` });
      assert.equal(scraped.status, 200);
      const families = parsePrometheusText(scraped.body);
      const counts = (replica: string): string =>
        statuses
          .map((status) => [status, sampleValue(families, 'loanql_replica_status', { replica, status })] as const)
          .filter(([, processes]) => processes !== 0)
          .map(([status, processes]) => `${status} ${processes}`)
          .join(', ');
      assert.equal(counts('replica-1'), 'down 2', 'both processes saw replica-1 down');
      assert.equal(counts('replica-2'), 'not-standby 2', 'both processes saw replica-2 not a standby');
      assert.equal(sampleValue(families, 'loanql_replica_serving', { replica: 'replica-1' }), 0);
      assert.equal(sampleValue(families, 'loanql_replica_serving', { replica: 'replica-2' }), 0);
    }
  });
});
