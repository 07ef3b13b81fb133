/**
 * Reads on a real streaming standby (issue 18, Done when 1 and 2): a PostgreSQL 15 primary and a
 * `pg_basebackup -R` standby (`.ci/replica.sh`), the built service as a real process with
 * DATABASE_REPLICA_URLS, and per-server statement counts from pg_stat_statements.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { assertBuilt, freePort, runCli, startService, type RunningService } from '../support/processes.js';
import { skipReason, startReplicaPair, type ReplicaPair } from '../support/replicaPair.js';

const skip = skipReason();

interface Answer {
  readonly status: number;
  readonly body: string;
  readonly headers: Headers;
}

describe('Scale-out: reads on a streaming standby with read-your-writes', { skip: skip ?? false, timeout: 300_000 }, () => {
  let pair: ReplicaPair;
  let service: RunningService;
  let key: string;
  let otherKey: string;
  let loanIds: string[];
  let cwd: string;

  const post = async (path: string, body: unknown, headers: Record<string, string> = {}, as = key): Promise<Answer> => {
    const response = await fetch(`${service.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Token ${as}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: await response.text(), headers: response.headers };
  };
  const graph = (query: string, variables: Record<string, unknown> = {}, headers: Record<string, string> = {}, as = key): Promise<Answer> => post('/api/graph', { query, variables }, headers, as);
  const rest = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> => {
    const response = await fetch(`${service.url}${path}`, {
      method,
      headers: { authorization: `Token ${key}`, 'content-type': 'application/json', ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: await response.text(), headers: response.headers };
  };
  /** Calls of statements reading "loans" on one server since the last reset. */
  const loanStatements = async (url: string, like: string): Promise<number> => {
    const rows = await pair.sql<{ calls: string | null }>(url, `SELECT sum(calls)::text AS calls FROM pg_stat_statements WHERE query LIKE $1 AND query NOT LIKE '%pg_stat_statements%'`, [like]);
    return Number(rows[0]?.calls ?? 0);
  };

  before(async () => {
    assertBuilt();
    pair = await startReplicaPair();
    await pair.sql(pair.primaryUrl, 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    cwd = mkdtempSync(join(tmpdir(), 'loanql-scale-'));
    const env = { DATABASE_URL: pair.primaryUrl, DATABASE_REPLICA_URLS: pair.standbyUrl, REPLICA_CHECK_INTERVAL_MS: '100', REPLICA_MAX_LAG_MS: '5000' };
    service = await startService(env, await freePort(), cwd);
    key = /Demo API key:\s+(\S+)/.exec(service.output())![1]!;
    const created = await runCli(['key', 'create', '--account', 'demo', '--name', 'second'], { DATABASE_URL: pair.primaryUrl }, cwd);
    assert.equal(created.code, 0, created.stderr);
    otherKey = created.stdout.trim().split('\n').at(-1)!;
    const answer = await graph('{ loans(limit: 40, order_by: {id: asc}) { id } }');
    loanIds = (JSON.parse(answer.body) as { data: { loans: { id: string }[] } }).data.loans.map((loan) => loan.id);
    assert.equal(loanIds.length, 40);
  });

  after(async () => {
    await service?.stop();
    await pair?.stop();
    if (cwd) rmSync(cwd, { recursive: true, force: true });
  });

  it('serves queries and REST GETs from the standby and writes on the primary (pg_stat_statements on each server)', async () => {
    await pair.sql(pair.primaryUrl, 'SELECT pg_stat_statements_reset()');
    await pair.sql(pair.standbyUrl, 'SELECT pg_stat_statements_reset()');
    for (let index = 0; index < 50; index++) {
      const answer = await graph('query($id: uuid!) { loans_by_pk(id: $id) { id name schedules(limit: 3) { due } } }', { id: loanIds[index % loanIds.length] });
      assert.equal(answer.status, 200);
      assert.equal(answer.headers.get('loanql-read-from'), 'replica-1');
      const page = await rest('GET', '/api/loan?limit=5');
      assert.equal(page.status, 200);
      assert.equal(page.headers.get('loanql-read-from'), 'replica-1');
    }
    for (let index = 0; index < 20; index++) {
      const answer = await graph('mutation($id: uuid!, $name: String!) { update_loans_by_pk(pk_columns: {id: $id}, _set: {name: $name}) { id } }', { id: loanIds[index], name: `written ${index}` });
      assert.equal(answer.status, 200, answer.body);
      assert.match(answer.headers.get('loanql-consistency') ?? '', /^[0-9A-F]+\/[0-9A-F]+$/);
    }
    const readsOnStandby = await loanStatements(pair.standbyUrl, '%FROM "loans"%');
    const readsOnPrimary = await loanStatements(pair.primaryUrl, '%FROM "loans"%');
    const updatesOnPrimary = await loanStatements(pair.primaryUrl, '%UPDATE "loans"%');
    const updatesOnStandby = await loanStatements(pair.standbyUrl, '%UPDATE "loans"%');
    // 100 reads: 50 queries and 50 REST pages (each page is one statement on loans).
    assert.ok(readsOnStandby >= 100, `the standby ran ${readsOnStandby} statements on loans, expected at least 100`);
    // The primary reads loans only for the writes' own statements (their RETURNING / response).
    assert.ok(readsOnPrimary <= 20 * 2, `the primary ran ${readsOnPrimary} reading statements on loans for 20 writes`);
    assert.ok(updatesOnPrimary >= 20, `the primary ran ${updatesOnPrimary} updates`);
    assert.equal(updatesOnStandby, 0);
    const backends = await pair.sql<{ count: string }>(pair.standbyUrl, `SELECT count(*)::text AS count FROM pg_stat_activity WHERE application_name = 'loanql-read'`);
    assert.ok(Number(backends[0]!.count) >= 1, 'the service holds connections named loanql-read on the standby');
  });

  it('reads its own write in 200 alternating write-then-read pairs while a load generator keeps the standby busy (0 stale reads)', async () => {
    let loading = true;
    let loadRequests = 0;
    let loadFailures = 0;
    const heavy = '{ loans(limit: 25) { id name schedules { due principal interest } payments_aggregate { aggregate { sum { amount } } } } }';
    const load = Array.from({ length: 3 }, async () => {
      while (loading) {
        const answer = await graph(heavy, {}, {}, otherKey);
        loadRequests += 1;
        if (answer.status !== 200 || answer.body.includes('"errors"')) loadFailures += 1;
      }
    });
    let stale = 0;
    let fromStandby = 0;
    try {
      for (let pairIndex = 0; pairIndex < 200; pairIndex++) {
        const id = loanIds[pairIndex % loanIds.length]!;
        const name = `ryw ${pairIndex} ${Date.now()}`;
        let seen: string | undefined;
        let readFrom: string | null;
        if (pairIndex % 2 === 0) {
          const written = await graph('mutation($id: uuid!, $name: String!) { update_loans_by_pk(pk_columns: {id: $id}, _set: {name: $name}) { id } }', { id, name });
          assert.equal(written.status, 200, written.body);
          const read = await graph('query($id: uuid!) { loans_by_pk(id: $id) { name } }', { id });
          seen = (JSON.parse(read.body) as { data: { loans_by_pk: { name: string } } }).data.loans_by_pk.name;
          readFrom = read.headers.get('loanql-read-from');
        } else {
          const written = await rest('PATCH', `/api/loan/${id}`, { Name: name });
          assert.equal(written.status, 200, written.body);
          const read = await rest('GET', `/api/loan/${id}`);
          seen = (JSON.parse(read.body) as { loan: { name: string } }).loan.name;
          readFrom = read.headers.get('loanql-read-from');
        }
        if (seen !== name) stale += 1;
        if (readFrom === 'replica-1') fromStandby += 1;
      }
    } finally {
      loading = false;
      await Promise.all(load);
    }
    process.stdout.write(`# read-your-writes: 200 pairs, ${stale} stale, ${fromStandby} reads served by the standby, ${200 - fromStandby} by the primary; load generator: ${loadRequests} requests, ${loadFailures} failed\n`);
    assert.equal(stale, 0);
    assert.equal(loadFailures, 0);
    assert.ok(loadRequests > 0);
  });

  it('a write answered in one statement (update_tasks_by_pk: autocommit, no transaction) runs on the primary and answers its position', async () => {
    const tasks = await graph('{ tasks(limit: 1, order_by: {id: asc}) { id } }');
    const id = (JSON.parse(tasks.body) as { data: { tasks: { id: string }[] } }).data.tasks[0]!.id;
    await pair.sql(pair.primaryUrl, 'SELECT pg_stat_statements_reset()');
    const name = `one statement ${Date.now()}`;
    const written = await graph('mutation($id: uuid!, $name: String!) { update_tasks_by_pk(pk_columns: {id: $id}, _set: {name: $name}) { name } }', { id, name });
    assert.equal(written.status, 200, written.body);
    assert.equal(written.body, JSON.stringify({ data: { update_tasks_by_pk: { name } } }));
    assert.match(written.headers.get('loanql-consistency') ?? '', /^[0-9A-F]+\/[0-9A-F]+$/);
    const [row] = await pair.sql(pair.primaryUrl, `SELECT calls FROM pg_stat_statements WHERE query LIKE 'WITH "_w" AS (UPDATE "tasks"%'`);
    assert.equal(Number((row as { calls: string } | undefined)?.calls ?? 0), 1, 'the one statement ran on the primary');
    const own = await graph('query($id: uuid!) { tasks_by_pk(id: $id) { name } }', { id });
    assert.equal((JSON.parse(own.body) as { data: { tasks_by_pk: { name: string } } }).data.tasks_by_pk.name, name);
  });

  it('with a standby that applies commits 400 ms late, a writer still reads its own writes (from the primary) while a reader without the position sees the older value', async () => {
    await pair.delayStandby(400);
    try {
      await new Promise((resolve) => setTimeout(resolve, 500));
      let stale = 0;
      let staleWithoutPosition = 0;
      let ownFromPrimary = 0;
      for (let index = 0; index < 10; index++) {
        const id = loanIds[index]!;
        const name = `late ${index} ${Date.now()}`;
        const written = await graph('mutation($id: uuid!, $name: String!) { update_loans_by_pk(pk_columns: {id: $id}, _set: {name: $name}) { id } }', { id, name });
        assert.equal(written.status, 200, written.body);
        const own = await graph('query($id: uuid!) { loans_by_pk(id: $id) { name } }', { id });
        if ((JSON.parse(own.body) as { data: { loans_by_pk: { name: string } } }).data.loans_by_pk.name !== name) stale += 1;
        if (own.headers.get('loanql-read-from') === 'primary') ownFromPrimary += 1;
        // Another key, no position: the standby (within REPLICA_MAX_LAG_MS, 5 s here) answers, 400 ms behind.
        const other = await graph('query($id: uuid!) { loans_by_pk(id: $id) { name } }', { id }, {}, otherKey);
        if (other.headers.get('loanql-read-from') === 'replica-1' && (JSON.parse(other.body) as { data: { loans_by_pk: { name: string } } }).data.loans_by_pk.name !== name) staleWithoutPosition += 1;
      }
      process.stdout.write(`# standby 400 ms late: own reads ${stale} stale (${ownFromPrimary} of 10 from the primary); reads of another key without the position: ${staleWithoutPosition} of 10 older\n`);
      assert.equal(stale, 0);
      assert.ok(ownFromPrimary >= 9, `${ownFromPrimary} of 10 own reads went to the primary`);
      // The control: the lag is real, so the reads above were fresh because of the position, not by luck.
      assert.ok(staleWithoutPosition >= 5, `only ${staleWithoutPosition} of 10 reads without the position saw the older value`);
    } finally {
      await pair.delayStandby(0);
    }
  });

  it('takes out a standby that lags more than REPLICA_MAX_LAG_MS (reads go to the primary) and re-admits it once it has caught up', async () => {
    const health = async () => ((await (await fetch(`${service.url}/healthz`, { headers: { authorization: `Token ${key}` } })).json()) as { replicas: { status: string; lagMs: number | null }[] }).replicas[0]!;
    const read = () => graph('{ loans(limit: 1) { id } }', {}, {}, otherKey);
    await pair.delayStandby(9_000);
    try {
      const written = await graph('mutation($id: uuid!, $name: String!) { update_loans_by_pk(pk_columns: {id: $id}, _set: {name: $name}) { id } }', { id: loanIds[0], name: `lagging ${Date.now()}` });
      assert.equal(written.status, 200);
      const started = Date.now();
      while ((await health()).status !== 'lagging') {
        assert.ok(Date.now() - started < 8_000, 'the standby was not reported lagging within 8 s');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const lagging = await health();
      assert.ok(lagging.lagMs! > 5_000, `lag ${lagging.lagMs} ms`);
      assert.equal((await read()).headers.get('loanql-read-from'), 'primary');
    } finally {
      await pair.delayStandby(0);
    }
    const caughtUp = Date.now();
    while ((await health()).status !== 'serving') {
      assert.ok(Date.now() - caughtUp < 10_000, 'the standby was not re-admitted within 10 s of catching up');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal((await read()).headers.get('loanql-read-from'), 'replica-1');
  });

  it('a key that did not write reads another key’s write when it sends that write’s LoanQL-Consistency back', async () => {
    let stale = 0;
    for (let index = 0; index < 30; index++) {
      const id = loanIds[index]!;
      const name = `carried ${index} ${Date.now()}`;
      const written = await graph('mutation($id: uuid!, $name: String!) { update_loans_by_pk(pk_columns: {id: $id}, _set: {name: $name}) { id } }', { id, name });
      const position = written.headers.get('loanql-consistency')!;
      const read = await graph('query($id: uuid!) { loans_by_pk(id: $id) { name } }', { id }, { 'LoanQL-Consistency': position }, otherKey);
      if ((JSON.parse(read.body) as { data: { loans_by_pk: { name: string } } }).data.loans_by_pk.name !== name) stale += 1;
    }
    assert.equal(stale, 0);
    const malformed = await graph('{ loans(limit: 1) { id } }', {}, { 'LoanQL-Consistency': 'yesterday' });
    assert.equal(malformed.status, 400);
    assert.match(malformed.body, /LoanQL-Consistency/);
    const malformedRest = await rest('GET', '/api/loan?limit=1', undefined, { 'LoanQL-Consistency': '1/2/3' });
    assert.equal(malformedRest.status, 400);
    assert.deepEqual(Object.keys((JSON.parse(malformedRest.body) as { fields: Record<string, string> }).fields), ['LoanQL-Consistency']);
  });

  it('stopping the standby under load fails no request and moves reads to the primary within a second; restarted, reads return to it', async () => {
    const answers: { at: number; status: number; from: string | null; ok: boolean }[] = [];
    let loading = true;
    const load = Array.from({ length: 6 }, async (_, worker) => {
      let index = worker;
      while (loading) {
        const started = Date.now();
        const answer = index % 2 === 0 ? await graph('query($id: uuid!) { loans_by_pk(id: $id) { id name } }', { id: loanIds[index % loanIds.length] }) : await rest('GET', '/api/loan?limit=3');
        answers.push({ at: started, status: answer.status, from: answer.headers.get('loanql-read-from'), ok: answer.status === 200 && !answer.body.includes('"errors"') });
        index += 1;
      }
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      await pair.stopStandby();
      const stopped = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      const lateOnStandby = answers.filter((answer) => answer.at > stopped + 1_000 && answer.from !== 'primary');
      assert.equal(lateOnStandby.length, 0, `${lateOnStandby.length} reads started more than 1 s after the standby stopped were not served by the primary`);
      const health = (await (await fetch(`${service.url}/healthz`, { headers: { authorization: `Token ${key}` } })).json()) as { replicas: { status: string }[]; primary: { status: string } };
      assert.equal(health.replicas[0]!.status, 'down');
      assert.equal(health.primary.status, 'ok');
      await pair.startStandby();
      const restarted = Date.now();
      while (!answers.some((answer) => answer.at > restarted && answer.from === 'replica-1')) {
        assert.ok(Date.now() - restarted < 15_000, 'reads did not return to the restarted standby within 15 s');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      process.stdout.write(`# standby stop/start: reads back on the standby ${Date.now() - restarted} ms after it started\n`);
    } finally {
      loading = false;
      await Promise.all(load);
    }
    const failed = answers.filter((answer) => !answer.ok);
    process.stdout.write(`# standby stop/start under load: ${answers.length} requests, ${failed.length} failed, ${answers.filter((a) => a.from === 'primary').length} served by the primary\n`);
    assert.equal(failed.length, 0, `failed: ${JSON.stringify(failed.slice(0, 3))}`);
    const health = (await (await fetch(`${service.url}/healthz`, { headers: { authorization: `Token ${key}` } })).json()) as { replicas: { status: string }[] };
    assert.equal(health.replicas[0]!.status, 'serving');
  });
});
