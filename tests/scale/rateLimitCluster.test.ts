/**
 * Issue 35, Done when 3: with `WORKERS=2` a key limited to N requests a second admits at most
 * N·T + burst over T seconds across both processes together — the bucket is in PostgreSQL
 * (`rate_limit_buckets`), not in either process — and every 429 carries `Retry-After`. Needs a
 * PostgreSQL server (`TEST_DATABASE_URL`): WORKERS above 1 does.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { startClusterService, type ClusterService } from '../support/clusterService.js';
import type { RunningService } from '../support/processes.js';

const serverUrl = process.env.TEST_DATABASE_URL;
const RATE = 5;
const BURST = 5;

/** One request on a new connection (the cluster's primary hands connections to its processes in turn). */
const fresh = (url: string, headers: Record<string, string>, body: string): Promise<{ status: number; retryAfter: string | undefined; rateLimit: string | undefined }> =>
  new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { connection: 'close', ...headers }, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'], rateLimit: res.headers.ratelimit as string | undefined }));
    });
    req.on('error', reject);
    req.end(body);
  });

describe('Rate limits with WORKERS=2', { skip: serverUrl ? false : 'needs TEST_DATABASE_URL (WORKERS above 1 needs PostgreSQL)', timeout: 240_000 }, () => {
  let cluster: ClusterService;
  let service: RunningService;
  let key: string;

  before(async () => {
    cluster = await startClusterService(serverUrl!, 'rate-cluster', () => ({ WORKERS: '2', RATE_LIMIT_PER_SECOND: String(RATE), RATE_LIMIT_BURST: String(BURST), PG_POOL_SIZE: '3', WEBHOOK_WORKER: '0' }));
    ({ service, key } = cluster);
  });

  after(() => cluster?.close());

  it(`admits at most ${RATE}·T + ${BURST} requests over T seconds from both processes together; every 429 has Retry-After`, async () => {
    const body = JSON.stringify({ query: '{ loans(limit: 1) { id } }' });
    const headers = { authorization: `Token ${key}`, 'content-type': 'application/json' };
    const answers: { status: number; retryAfter: string | undefined; rateLimit: string | undefined }[] = [];
    const started = performance.now();
    let stopping = false;
    // 4 clients for 3 s, each request on a new connection, so both processes take them.
    const clients = Array.from({ length: 4 }, async () => {
      while (!stopping) answers.push(await fresh(`${service.url}/api/graph`, headers, body));
    });
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    stopping = true;
    await Promise.all(clients);
    const seconds = (performance.now() - started) / 1000;
    const granted = answers.filter((a) => a.status === 200).length;
    const refused = answers.filter((a) => a.status === 429);
    assert.equal(granted + refused.length, answers.length, `only 200 and 429: ${JSON.stringify([...new Set(answers.map((a) => a.status))])}`);
    // A whole token per request: the bucket cannot give more than it holds plus what refills.
    assert.ok(granted <= BURST + Math.floor(RATE * seconds), `${granted} granted in ${seconds.toFixed(2)} s (at most ${BURST + Math.floor(RATE * seconds)})`);
    assert.ok(granted >= BURST, `at least the burst was granted: ${granted}`);
    assert.ok(refused.length > granted, `the clients asked for far more than the limit: ${refused.length} refused`);
    for (const answer of refused) {
      assert.ok(Number(answer.retryAfter) >= 1, 'Retry-After on every 429');
      assert.match(answer.rateLimit ?? '', /^"default";r=0;t=\d+$/);
    }
    process.stdout.write(`# WORKERS=2, RATE_LIMIT_PER_SECOND=${RATE}, RATE_LIMIT_BURST=${BURST}: ${answers.length} requests in ${seconds.toFixed(2)} s, ${granted} granted (bound ${BURST + Math.floor(RATE * seconds)}), ${refused.length} refused\n`);
  });
});
