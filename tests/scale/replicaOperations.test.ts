/**
 * An operator's read replica (session 38's audit): a real PostgreSQL 15 primary and streaming
 * standby (`.ci/replica.sh`). A REST write other than a loan's — a product's settings, a
 * remittance mark — is read by the key that made it; a standby whose replay has stopped shows its
 * real lag, not one capped at the samples' span; a replica URL naming another database than the
 * primary's is never read from; a replica that has not replayed what the service's start wrote
 * (migrations, the demo) serves none of the first reads; a stopped standby's lag gauge keeps
 * growing and its status metric says down, and a read its recovery cancels runs again on the
 * primary, the replica kept (session 39).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { openPostgresDatabase, ReadReplicas, type Database, type ReplicaHealth } from '../../db/index.js';
import { ServiceMetrics } from '../../app/operations/serviceMetrics.js';
import { assertBuilt, freePort, startService, type RunningService } from '../support/processes.js';
import { parsePrometheusText } from '../support/prometheusText.js';
import { skipReason, startReplicaPair, type ReplicaPair } from '../support/replicaPair.js';

const skip = skipReason();
const METRICS_TOKEN = 'replica-metrics-token-0123456789';

describe('Read replicas as an operator runs them', { skip: skip ?? false, timeout: 300_000 }, () => {
  let pair: ReplicaPair;
  let service: RunningService;
  let key: string;
  let cwd: string;
  let primary: Database;

  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${service.url}${path}`, {
      method,
      headers: { authorization: `Token ${key}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, text: await response.text(), headers: response.headers };
  };

  before(async () => {
    assertBuilt();
    pair = await startReplicaPair();
    cwd = mkdtempSync(join(tmpdir(), 'loanql-replica-ops-'));
    service = await startService(
      { DATABASE_URL: pair.primaryUrl, DATABASE_REPLICA_URLS: pair.standbyUrl, REPLICA_CHECK_INTERVAL_MS: '100', REPLICA_MAX_LAG_MS: '5000', DEMO_SCALE: '0.005', METRICS_TOKEN },
      await freePort(),
      cwd,
    );
    key = /Demo API key:\s+(\S+)/.exec(service.output())![1]!;
    primary = openPostgresDatabase({ connectionString: pair.primaryUrl, maxConnections: 2 });
  });

  after(async () => {
    await primary?.close();
    await service?.stop();
    await pair?.stop();
    if (cwd) rmSync(cwd, { recursive: true, force: true });
  });

  it("a remittance mark and a product's settings change answer with LoanQL-Consistency, and the key's next read sees the mark (standby 600 ms late)", async () => {
    await pair.delayStandby(600);
    try {
      // The standby, 600 ms late, stays within REPLICA_MAX_LAG_MS (5 s): reads without a position go to it.
      const settled = await call('POST', '/api/graph', { query: '{ remittances { id } }' });
      assert.equal(settled.status, 200, settled.text);

      const marked = await call('POST', '/api/remittances', { from: '2026-10-01', to: '2026-10-31' });
      assert.equal(marked.status, 201, marked.text);
      assert.match(marked.headers.get('loanql-consistency') ?? '', /^[0-9A-F]+\/[0-9A-F]+$/, 'POST /api/remittances answers with the position of its write');
      const id = (JSON.parse(marked.text) as { remittance: { id: string } }).remittance.id;
      const read = await call('POST', '/api/graph', { query: '{ remittances { id } }' });
      assert.equal(read.status, 200, read.text);
      const ids = (JSON.parse(read.text) as { data: { remittances: { id: string }[] } }).data.remittances.map((row) => row.id);
      assert.ok(ids.includes(id), `the key's read right after its mark (from ${read.headers.get('loanql-read-from')}) sees it: ${read.text}`);

      const changed = await call('PATCH', '/api/product', { late_fee_percent: '4.5' });
      assert.equal(changed.status, 200, changed.text);
      assert.match(changed.headers.get('loanql-consistency') ?? '', /^[0-9A-F]+\/[0-9A-F]+$/, 'PATCH /api/product answers with the position of its write');
    } finally {
      await pair.delayStandby(0);
    }
  });

  it('a standby whose replay is paused shows a lag that keeps growing past the samples kept (10 s), and is not read from', async () => {
    const replicas = new ReadReplicas(primary, { urls: [pair.standbyUrl], maxLagMs: 100, checkIntervalMs: 100 });
    await pair.sql(pair.standbyUrl, 'SELECT pg_wal_replay_pause()');
    try {
      await replicas.start();
      await pair.sql(pair.primaryUrl, 'CREATE TABLE IF NOT EXISTS replica_lag_probe (at timestamptz); INSERT INTO replica_lag_probe VALUES (now())');
      const wroteAt = Date.now();
      // 10 s of samples are kept (max(10 s, 4 × 100 ms)); 13 s after the write the replica is 13 s late.
      await new Promise((resolve) => setTimeout(resolve, 13_000));
      await replicas.check();
      const [health] = replicas.health().replicas;
      assert.equal(health!.status, 'lagging');
      const lagMs = health!.lagMs!;
      assert.ok(lagMs >= Date.now() - wroteAt - 1_000, `the lag (${lagMs} ms) is the time since the write the standby has not replayed (${Date.now() - wroteAt} ms)`);
      const routed = replicas.forRequest(null);
      await routed.query('SELECT 1');
      assert.equal(routed.source, 'primary');
    } finally {
      await pair.sql(pair.standbyUrl, 'SELECT pg_wal_replay_resume()');
      await replicas.close();
    }
  });

  it("a replica URL naming another database than the primary's (the standby's `other`) is never read from; the right one is", async () => {
    await pair.sql(pair.primaryUrl, 'CREATE DATABASE other');
    const otherUrl = pair.standbyUrl.replace(/\/postgres$/, '/other');
    await untilConnects(otherUrl);
    const replicas = new ReadReplicas(primary, { urls: [otherUrl, pair.standbyUrl], maxLagMs: 5_000, checkIntervalMs: 100 });
    try {
      await replicas.start();
      const [wrong, right] = replicas.health().replicas;
      assert.equal(wrong!.status, 'wrong-database', JSON.stringify(wrong));
      assert.match(wrong!.error ?? '', /database "other".*not the primary's "postgres"/);
      assert.equal(right!.status, 'serving', JSON.stringify(right));
      // Every read goes to the right standby (the wrong one has no `loans`: a read there failed, a 500).
      for (let index = 0; index < 4; index++) {
        const routed = replicas.forRequest(null);
        const { rows } = await routed.query<{ count: string }>('SELECT count(*)::text AS count FROM loans');
        assert.ok(Number(rows[0]!.count) > 0);
        assert.equal(routed.source, 'replica-2');
      }
    } finally {
      await replicas.close();
    }
  });

  it('the first reads after a start that migrated and set up the demo wait for a replica that has replayed them (standby 3 s late): no 500, no empty list', async () => {
    await pair.sql(pair.primaryUrl, 'CREATE DATABASE fresh');
    const freshPrimary = pair.primaryUrl.replace(/\/postgres$/, '/fresh');
    const freshStandby = pair.standbyUrl.replace(/\/postgres$/, '/fresh');
    await untilConnects(freshStandby);
    await pair.delayStandby(3_000);
    const freshCwd = mkdtempSync(join(tmpdir(), 'loanql-replica-fresh-'));
    let fresh: RunningService | null = null;
    try {
      fresh = await startService({ DATABASE_URL: freshPrimary, DATABASE_REPLICA_URLS: freshStandby, REPLICA_CHECK_INTERVAL_MS: '100', REPLICA_MAX_LAG_MS: '5000', DEMO_SCALE: '0.001' }, await freePort(), freshCwd);
      const demoKey = /Demo API key:\s+(\S+)/.exec(fresh.output())![1]!;
      const headers = { authorization: `Token ${demoKey}`, 'content-type': 'application/json' };
      const graph = await fetch(`${fresh.url}/api/graph`, { method: 'POST', headers, body: JSON.stringify({ query: '{ loans(limit: 1) { id } }' }) });
      const graphText = await graph.text();
      assert.equal(graph.status, 200, graphText);
      assert.equal((JSON.parse(graphText) as { data: { loans: unknown[] } }).data.loans.length, 1, `read from ${graph.headers.get('loanql-read-from')}: ${graphText}`);
      const rest = await fetch(`${fresh.url}/api/loan?limit=1`, { headers });
      const restText = await rest.text();
      assert.equal(rest.status, 200, restText);
      assert.equal((JSON.parse(restText) as { loans: unknown[] }).loans.length, 1, `read from ${rest.headers.get('loanql-read-from')}: ${restText}`);
    } finally {
      await fresh?.stop();
      await pair.delayStandby(0);
      rmSync(freshCwd, { recursive: true, force: true });
    }
  });

  it('a stopped standby: loanql_replica_status says down and loanql_replica_lag_seconds keeps growing while the primary writes (it kept its last value)', async () => {
    const scrape = async () => {
      const response = await fetch(`${service.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      assert.equal(response.status, 200);
      const families = parsePrometheusText(await response.text());
      const value = (name: string, labels: Record<string, string>) =>
        families.get(name)?.samples.find((sample) => Object.entries(labels).every(([label, wanted]) => sample.labels.get(label) === wanted))?.value;
      return {
        lag: value('loanql_replica_lag_seconds', { replica: 'replica-1' }),
        serving: value('loanql_replica_serving', { replica: 'replica-1' }),
        down: value('loanql_replica_status', { replica: 'replica-1', status: 'down' }),
        servingStatus: value('loanql_replica_status', { replica: 'replica-1', status: 'serving' }),
      };
    };
    const before = await scrape();
    assert.equal(before.serving, 1, JSON.stringify(before));
    assert.equal(before.servingStatus, 1, JSON.stringify(before));
    assert.equal(before.down, 0, JSON.stringify(before));
    assert.ok(before.lag !== undefined && before.lag < 5, JSON.stringify(before));
    await pair.stopStandby();
    try {
      // The primary keeps writing (a standby that were up would replay it); the stopped one falls behind.
      await pair.sql(pair.primaryUrl, 'CREATE TABLE IF NOT EXISTS replica_down_probe (at timestamptz)');
      const deadline = Date.now() + 4_000;
      while (Date.now() < deadline) {
        await pair.sql(pair.primaryUrl, 'INSERT INTO replica_down_probe VALUES (now())');
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const during = await scrape();
      assert.equal(during.down, 1, `the status metric says down: ${JSON.stringify(during)}`);
      assert.equal(during.servingStatus, 0, JSON.stringify(during));
      assert.equal(during.serving, 0, JSON.stringify(during));
      assert.ok(during.lag !== undefined && during.lag >= 3, `the lag counts the primary's writes the stopped standby has not seen (≥ 3 s of the 4 s): ${JSON.stringify(during)}`);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const later = await scrape();
      assert.ok(later.lag! > during.lag!, `and keeps growing: ${during.lag} s, then ${later.lag} s`);
      // /healthz (to an admin key, as the demo key is) says the same (its lagMs was the last check's that answered, too).
      const health = (await (await fetch(`${service.url}/healthz`, { headers: { authorization: `Token ${key}` } })).json()) as { replicas: { status: string; lagMs: number | null }[] };
      assert.ok(health.replicas[0]!.status === 'down' && health.replicas[0]!.lagMs! >= 3_000, JSON.stringify(health.replicas));
    } finally {
      await pair.startStandby();
    }
    for (let attempt = 0; (await scrape()).serving !== 1; attempt++) {
      assert.ok(attempt < 100, 'the restarted standby is read from again');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const back = await scrape();
    assert.equal(back.down, 0, JSON.stringify(back));
    assert.ok(back.lag! < 5, `back in service its lag is its real one again: ${JSON.stringify(back)}`);
  });

  it("a read the standby's recovery cancels (a lock replayed, max_standby_streaming_delay = 0) runs again on the primary; the replica stays in, the conflict counted and told once", async () => {
    await pair.setStandby('max_standby_streaming_delay', '0');
    const conflicts: { replica: ReplicaHealth; code: unknown }[] = [];
    const changes: ReplicaHealth[] = [];
    const replicas = new ReadReplicas(primary, {
      urls: [pair.standbyUrl],
      maxLagMs: 5_000,
      checkIntervalMs: 100,
      onConflict: (replica, error) => conflicts.push({ replica, code: (error as { code?: unknown }).code }),
      onChange: (replica) => changes.push(replica),
    });
    const metrics = new ServiceMetrics({ db: primary, replicas });
    try {
      await pair.sql(pair.primaryUrl, 'CREATE TABLE IF NOT EXISTS conflict_probe (n int); TRUNCATE conflict_probe; INSERT INTO conflict_probe VALUES (1)');
      // Raises what a standby's recovery raises, only on a server in recovery: the other SQLSTATEs of a recovery conflict.
      await pair.sql(
        pair.primaryUrl,
        `CREATE OR REPLACE FUNCTION conflict_probe_on_standby(state text) RETURNS int LANGUAGE plpgsql AS $$
         BEGIN IF pg_is_in_recovery() THEN RAISE EXCEPTION 'canceling statement due to conflict with recovery' USING ERRCODE = state; END IF; RETURN 1; END $$`,
      );
      await replicas.start();
      // Until the standby has replayed the set-up above (the process's first check's position), reads go to the primary.
      for (let attempt = 0; ; attempt++) {
        const probe = replicas.forRequest(null);
        await probe.query('SELECT 1');
        if (probe.source === 'replica-1') break;
        assert.ok(attempt < 100, JSON.stringify(replicas.health()));
        await new Promise((resolve) => setTimeout(resolve, 100));
      }

      // 40001: the standby's read holds a lock the primary's LOCK TABLE takes; its replay cancels the read at once.
      const routed = replicas.forRequest(null);
      const reading = routed.query<{ n: string }>('SELECT pg_sleep(3)::text AS slept, count(*)::text AS n FROM conflict_probe');
      await new Promise((resolve) => setTimeout(resolve, 700));
      await pair.sql(pair.primaryUrl, 'BEGIN; LOCK TABLE conflict_probe IN ACCESS EXCLUSIVE MODE; COMMIT');
      const { rows } = await reading;
      assert.equal(rows[0]!.n, '1', 'the client gets its rows, not the conflict');
      assert.equal(routed.source, 'primary');
      // The replica is healthy: not taken out (before session 39 it was, and logged down, then serving again).
      assert.deepEqual(changes.map((change) => change.status), ['serving'], 'no status change but the first check');
      assert.deepEqual(conflicts.map(({ replica, code }) => [replica.name, code, replica.conflicts]), [['replica-1', '40001', 1]], 'told once');

      // 40P01 (a buffer pin deadlock with replay) and 57P04 (its database dropped) run again on the primary too.
      for (const state of ['40P01', '57P04']) {
        const again = replicas.forRequest(null);
        const { rows: answered } = await again.query<{ n: number }>('SELECT conflict_probe_on_standby($1) AS n', [state]);
        assert.equal(answered[0]!.n, 1, state);
        assert.equal(again.source, 'primary', state);
      }
      assert.deepEqual(conflicts.map(({ code }) => code), ['40001', '40P01', '57P04']);

      // Still never taken out, and the next read is served there.
      assert.deepEqual(changes.map((change) => change.status), ['serving']);
      const [health] = replicas.health().replicas;
      assert.equal(health!.status, 'serving');
      assert.equal(health!.conflicts, 3);
      const next = replicas.forRequest(null);
      await next.query('SELECT 1');
      assert.equal(next.source, 'replica-1');
      const families = parsePrometheusText(await metrics.registry.metrics());
      assert.equal(families.get('loanql_replica_conflicts_total')?.samples.find((sample) => sample.labels.get('replica') === 'replica-1')?.value, 3);
    } finally {
      await replicas.close();
      await pair.setStandby('max_standby_streaming_delay', '30s');
    }
  });
});

/** Waits until `url` accepts a connection (a database the standby has not replayed yet does not exist there). */
async function untilConnects(url: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      return;
    } catch (error) {
      if (attempt > 100) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}
