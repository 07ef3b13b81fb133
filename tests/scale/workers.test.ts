/**
 * `WORKERS=2` (issue 18, Done when 3): the built service as a real node:cluster of two API
 * processes on one port, over a real PostgreSQL 15 primary with a streaming standby for reads.
 * Every answer here comes over a fresh connection (`agent: false`), which the cluster's primary
 * hands to its workers in turn, so a check made N times reaches both processes.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { assertBuilt, freePort, runCli, startService, type ProcessResult, type RunningService } from '../support/processes.js';
import { METADATA_PATH } from '../support/http.js';
import { skipReason, startReplicaPair, type ReplicaPair } from '../support/replicaPair.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.js';

const skip = skipReason();
/**
 * The mixed load's length: 5 s in `npm test` (15 s until issue 28's 5-minute run; the same
 * assertions, a third of the requests). Done when 3 says 60 s: the chaos suite (`npm run
 * chaos`, also `--short` in .ci/run) runs this file again with SCALE_LOAD_SECONDS=60.
 */
const LOAD_SECONDS = Number(process.env.SCALE_LOAD_SECONDS || 5);

interface Answer {
  readonly status: number;
  readonly body: string;
  readonly headers: Record<string, string | string[] | undefined>;
}

const lastLine = (text: string): string => text.trimEnd().split('\n').at(-1) ?? '';

describe('Scale-out: WORKERS=2 keeps the README acceptance', { skip: skip ?? false, timeout: 600_000 }, () => {
  let pair: ReplicaPair;
  let service: RunningService;
  let receiver: WebhookReceiver;
  let key: string;
  let cwd: string;
  let metadataPath: string;
  let env: Record<string, string>;
  const cli = (...args: string[]): Promise<ProcessResult> => runCli(args, { DATABASE_URL: pair.primaryUrl, METADATA_PATH: metadataPath, WEBHOOK_ALLOW_PRIVATE: '1' }, cwd);

  /** One request on a new connection, closed afterwards. */
  const fresh = (method: string, path: string, options: { key?: string | null; body?: unknown; headers?: Record<string, string> } = {}): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const body = options.body === undefined ? undefined : JSON.stringify(options.body);
      const headers: Record<string, string> = { connection: 'close', ...(body ? { 'content-type': 'application/json' } : {}), ...options.headers };
      const as = options.key === undefined ? key : options.key;
      if (as !== null) headers.authorization = `Token ${as}`;
      const req = request(`${service.url}${path}`, { method, headers, agent: false }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, headers: res.headers }));
      });
      req.on('error', reject);
      // A connection handed to a process as it is killed (kill -9) is never answered.
      req.setTimeout(10_000, () => req.destroy(new Error(`no answer to ${method} ${path} within 10 s`)));
      req.end(body);
    });
  const graph = (query: string, variables: Record<string, unknown> = {}, as?: string): Promise<Answer> =>
    fresh('POST', '/api/graph', { body: { query, variables }, ...(as === undefined ? {} : { key: as }) });
  const pidOf = async (): Promise<number> => (JSON.parse((await fresh('GET', '/healthz')).body) as { pid: number }).pid;

  before(async () => {
    assertBuilt();
    pair = await startReplicaPair();
    cwd = mkdtempSync(join(tmpdir(), 'loanql-workers-'));
    metadataPath = join(cwd, 'loanql.yaml');
    copyFileSync(METADATA_PATH, metadataPath);
    receiver = await startWebhookReceiver();
    env = {
      DATABASE_URL: pair.primaryUrl,
      DATABASE_REPLICA_URLS: pair.standbyUrl,
      WORKERS: '2',
      METADATA_PATH: metadataPath,
      LOG_LEVEL: 'info',
      WEBHOOK_ALLOW_PRIVATE: '1',
      WEBHOOK_POLL_MS: '50',
    };
    service = await startService(env, await freePort(), cwd);
    key = /Demo API key:\s+(\S+)/.exec(service.output())![1]!;
  });

  after(async () => {
    await service?.stop();
    await receiver?.close();
    await pair?.stop();
    if (cwd) rmSync(cwd, { recursive: true, force: true });
  });

  it('runs two API processes on one port, each answering in turn', async () => {
    const pids = new Set<number>();
    for (let index = 0; index < 10; index++) pids.add(await pidOf());
    assert.equal(pids.size, 2, `pids seen: ${[...pids].join(', ')}`);
    assert.ok(!pids.has(service.process.pid!), 'the cluster primary itself serves no request');
  });

  it('refuses a missing, malformed or unknown key on every process with the one 403', async () => {
    const attempts = [null, 'not a key', 'lq_abcdefgh_' + 'A'.repeat(43)];
    for (let index = 0; index < 12; index++) {
      const answer = await fresh(index % 2 ? 'GET' : 'POST', index % 2 ? '/api/loan' : '/api/graph', { key: attempts[index % 3]!, ...(index % 2 ? {} : { body: { query: '{ loans { id } }' } }) });
      assert.equal(answer.status, 403);
      assert.equal(answer.headers['content-type'], 'text/plain');
      assert.equal(answer.body, 'Not authorized');
    }
  });

  it('a revoked key is refused by every process on its next request', async () => {
    const created = await cli('key', 'create', '--account', 'demo', '--name', 'to revoke');
    assert.equal(created.code, 0, created.stderr);
    const doomed = lastLine(created.stdout);
    // Used on both processes (twice each, so each also knows it verified: the fast path).
    for (let index = 0; index < 8; index++) assert.equal((await graph('{ loans(limit: 1) { id } }', {}, doomed)).status, 200);
    assert.equal((await cli('key', 'revoke', doomed.slice(0, 11))).code, 0);
    for (let index = 0; index < 8; index++) {
      const answer = index % 2 ? await fresh('GET', '/api/loan?limit=1', { key: doomed }) : await graph('{ loans(limit: 1) { id } }', {}, doomed);
      assert.equal(answer.status, 403, `request ${index} after revocation: ${answer.status} ${answer.body}`);
    }
  });

  it('a metadata edit is reloaded once by each process and served by both', async () => {
    const before = await graph('{ loans(limit: 1) { ltv } }');
    assert.match(before.body, /Cannot query field .{0,2}ltv/);
    const reloadsBefore = service.output().split('metadata reloaded; new schema serving').length - 1;
    writeFileSync(metadataPath, readFileSync(metadataPath, 'utf8').replace('      name: text\n', '      name: text\n      ltv: { type: numeric, custom_field: ltv }\n'));
    const deadline = Date.now() + 15_000;
    let consecutive = 0;
    while (consecutive < 10) {
      assert.ok(Date.now() < deadline, 'the edit did not reach both processes within 15 s');
      const answer = await graph('{ loans(limit: 1) { ltv } }');
      consecutive = answer.status === 200 && !answer.body.includes('"errors"') ? consecutive + 1 : 0;
      if (!consecutive) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // The log is written in batches at least once a second (app/logger.ts): wait for both lines, then a little more for a third.
    const reloads = (): number => service.output().split('metadata reloaded; new schema serving').length - 1 - reloadsBefore;
    const logged = Date.now() + 5_000;
    while (reloads() < 2 && Date.now() < logged) await new Promise((resolve) => setTimeout(resolve, 100));
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    assert.equal(reloads(), 2, 'one reload per process');
  });

  it('delivers each webhook event once with two processes each running the delivery worker', async () => {
    const added = await cli('webhook', 'add', '--account', 'demo', '--url', receiver.url, '--events', 'loan.created');
    assert.equal(added.code, 0, added.stderr);
    const secret = lastLine(added.stdout);
    const ids = new Set<string>();
    for (let index = 0; index < 40; index++) {
      const answer = await fresh('POST', '/api/loan', { body: { Name: `hooked ${index}`, Amount: 1000 } });
      assert.equal(answer.status, 201, answer.body);
      ids.add((JSON.parse(answer.body) as { loan: { id: string } }).loan.id);
    }
    await receiver.waitFor((received) => received.length >= 40, 30_000);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const webhookIds = receiver.received.map((webhook) => webhook.headers['webhook-id']);
    assert.equal(new Set(webhookIds).size, webhookIds.length, 'no event was sent twice');
    const loans = new Set(receiver.received.map((webhook) => (new Webhook(secret).verify(webhook.body, webhook.headers) as { data: { new: { id: string } } }).data.new.id));
    assert.deepEqual([...ids].filter((id) => !loans.has(id)), []);
  });

  it(`serves a ${LOAD_SECONDS} s mixed load of reads and writes with no error`, async () => {
    const list = JSON.parse((await fresh('GET', '/api/loan?limit=50')).body) as { loans: { id: string }[] };
    const ids = list.loans.map((loan) => loan.id);
    const counts = new Map<string, number>();
    const failures: string[] = [];
    const end = Date.now() + LOAD_SECONDS * 1_000;
    const call = async (kind: string, url: string, init: RequestInit): Promise<void> => {
      const response = await fetch(`${service.url}${url}`, { ...init, headers: { authorization: `Token ${key}`, 'content-type': 'application/json' } });
      const text = await response.text();
      counts.set(kind, (counts.get(kind) ?? 0) + 1);
      if (response.status >= 300 || text.includes('"errors"')) failures.push(`${kind} ${response.status} ${text.slice(0, 200)}`);
    };
    await Promise.all(
      Array.from({ length: 8 }, async (_, worker) => {
        for (let step = worker; Date.now() < end; step++) {
          const id = ids[step % ids.length]!;
          switch (step % 6) {
            case 0:
              await call('graph query', '/api/graph', { method: 'POST', body: JSON.stringify({ query: 'query($id: uuid!) { loans_by_pk(id: $id) { name schedules(limit: 3) { due } } }', variables: { id } }) });
              break;
            case 1:
              await call('graph aggregate', '/api/graph', { method: 'POST', body: JSON.stringify({ query: '{ loans_aggregate(where: {status: {_eq: "servicing"}}) { aggregate { count sum { amount } } } }' }) });
              break;
            case 2:
              await call('REST list', '/api/loan?limit=10', { method: 'GET' });
              break;
            case 3:
              await call('REST get', `/api/loan/${id}`, { method: 'GET' });
              break;
            case 4:
              await call('graph mutation', '/api/graph', { method: 'POST', body: JSON.stringify({ query: 'mutation($id: uuid!, $name: String!) { update_loans_by_pk(pk_columns: {id: $id}, _set: {name: $name}) { name } }', variables: { id, name: `load ${step}` } }) });
              break;
            default:
              await call('REST patch', `/api/loan/${id}`, { method: 'PATCH', body: JSON.stringify({ Name: `patched ${step}` }) });
          }
        }
      }),
    );
    const total = [...counts.values()].reduce((sum, count) => sum + count, 0);
    process.stdout.write(`# WORKERS=2 mixed load, ${LOAD_SECONDS} s: ${total} requests (${[...counts].map(([kind, count]) => `${kind} ${count}`).join(', ')}), ${failures.length} errors\n`);
    assert.deepEqual(failures.slice(0, 5), []);
    assert.ok(total > LOAD_SECONDS * 10);
  });

  it('replaces an API process that dies', async () => {
    const pids = new Set<number>();
    for (let index = 0; index < 6; index++) pids.add(await pidOf());
    const victim = [...pids][0]!;
    process.kill(victim, 'SIGKILL');
    const deadline = Date.now() + 20_000;
    for (;;) {
      assert.ok(Date.now() < deadline, 'no new API process within 20 s');
      const now = new Set<number>();
      for (let index = 0; index < 6; index++) now.add(await pidOf().catch(() => -1));
      if (now.size === 2 && !now.has(victim) && !now.has(-1)) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    for (let index = 0; index < 6; index++) assert.equal((await graph('{ loans(limit: 1) { id } }')).status, 200);
  });

  it('SIGTERM lets requests in flight finish, then every process exits and the service exits 0', async () => {
    // Requests certainly in flight: 8 writes of one loan wait on a row lock held here, seen waiting
    // in pg_stat_activity; SIGTERM comes while they wait, and the lock is released after it.
    const loanId = (JSON.parse((await fresh('GET', '/api/loan?limit=1')).body) as { loans: { id: string }[] }).loans[0]!.id;
    const locker = new pg.Client({ connectionString: pair.primaryUrl });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('SELECT id FROM loans WHERE id = $1 FOR UPDATE', [loanId]);
      const inFlight = Array.from({ length: 8 }, (_, index) =>
        graph('mutation($id: uuid!, $name: String!) { update_loans_by_pk(pk_columns: {id: $id}, _set: {name: $name}) { name } }', { id: loanId, name: `drained ${index}` }),
      );
      const deadline = Date.now() + 20_000;
      for (;;) {
        // Asked outside the locker's transaction, which would keep seeing its first snapshot of pg_stat_activity.
        const waiting = (await pair.sql<{ n: string }>(pair.primaryUrl, `SELECT count(*)::text AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock'`))[0]!;
        if (Number(waiting.n) >= 8) break;
        assert.ok(Date.now() < deadline, `only ${waiting.n} of 8 writes reached the database within 20 s`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      service.process.kill('SIGTERM');
      await new Promise((resolve) => setTimeout(resolve, 500));
      await locker.query('COMMIT');
      const answers = await Promise.all(inFlight);
      assert.deepEqual(answers.map((answer) => answer.status), Array(8).fill(200));
      assert.equal(await service.exited, 0);
    } finally {
      await locker.end();
    }
  });
});
