/**
 * Subscriptions everywhere the service runs (issue 34, Done when 4): the tests of Done when 1 —
 * the loan's next schedule row after a payment, the investor's filter, revocation within a
 * second, bad documents — on the built service as a real node:cluster of two API processes
 * (`WORKERS=2`) over a PostgreSQL 15 primary with a streaming standby for reads. Which process
 * holds a WebSocket connection is read from `/healthz` (each process reports its own open
 * connections to an admin key), so a subscriber on one process is always written to through the
 * other. With the standby applying commits late, a subscriber never receives a result older than
 * one it already received.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { assertBuilt, freePort, runCli, startService, type RunningService } from '../support/processes.js';
import { skipReason, startReplicaPair, type ReplicaPair } from '../support/replicaPair.js';
import { connect, subscribe, type Subscription, type TestClient } from '../support/graphSocket.js';

const skip = skipReason();

const NEXT_ROW = `subscription Next($id: uuid!) { loans_by_pk(id: $id) { id schedules(where: {is_next: {_eq: true}}) { number payment } } }`;
const POST = `mutation($loan: uuid!, $amount: numeric!) { insert_payments_one(object: {loan_id: $loan, date: "2026-11-20", amount: $amount, type: "regular", method: "ach"}) { id } }`;
const PROBE = `subscription { loans_aggregate { aggregate { count } } }`;

/** A client and the pid of the API process that holds its connection. */
interface PlacedClient {
  readonly socket: TestClient;
  readonly pid: number;
}

describe('Subscriptions with WORKERS=2 and a read replica', { skip: skip ?? false, timeout: 300_000 }, () => {
  let pair: ReplicaPair;
  let service: RunningService;
  let cwd: string;
  let key: string;
  let accountId: string;
  const opened: TestClient[] = [];

  /** `/healthz` with the admin key on a new connection: the cluster hands each to its workers in turn. */
  const health = (): Promise<{ pid: number; subscriptions: { connections: number; subscriptions: number } }> =>
    new Promise((resolve, reject) => {
      const req = request(`${service.url}/healthz`, { headers: { authorization: `Token ${key}`, connection: 'close' }, agent: false }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve(JSON.parse(text)));
      });
      req.on('error', reject);
      req.end();
    });
  /** Open WebSocket connections per API process. */
  const connectionsByPid = async (): Promise<Map<number, number>> => {
    const seen = new Map<number, number>();
    for (let tries = 0; seen.size < 2 && tries < 12; tries++) {
      const answer = await health();
      seen.set(answer.pid, answer.subscriptions.connections);
    }
    assert.equal(seen.size, 2, 'two API processes answer');
    return seen;
  };
  /** A client with `apiKey`, connected, and the process that holds it (the one whose connection count grew). */
  const place = async (apiKey: string): Promise<PlacedClient> => {
    const beforeCounts = await connectionsByPid();
    const socket = connect(service.url, apiKey);
    opened.push(socket);
    const probe = subscribe(socket.client, PROBE);
    await probe.next();
    const afterCounts = await connectionsByPid();
    // The probe stays open: graphql-ws's lazy client closes its connection when no subscription is left (and a new one may land elsewhere).
    void probe;
    const grew = [...afterCounts].filter(([pid, count]) => count > (beforeCounts.get(pid) ?? 0)).map(([pid]) => pid);
    assert.equal(grew.length, 1, `connections before ${JSON.stringify([...beforeCounts])}, after ${JSON.stringify([...afterCounts])}`);
    return { socket, pid: grew[0]! };
  };
  /** Two clients with `apiKey`, one on each API process. */
  const placeTwo = async (apiKey: string): Promise<[PlacedClient, PlacedClient]> => {
    const first = await place(apiKey);
    for (let tries = 0; tries < 6; tries++) {
      const other = await place(apiKey);
      if (other.pid !== first.pid) return [first, other];
      await other.socket.dispose();
    }
    throw new Error('six connections in a row went to one process');
  };
  /** A query or mutation answered once over the socket (its process runs it). */
  const once = async (client: TestClient, query: string, variables: Record<string, unknown>): Promise<any> => {
    const answer = subscribe(client.client, query, variables);
    const result = await answer.next();
    assert.equal(result.errors, undefined, JSON.stringify(result));
    return result.data;
  };
  const primarySql = <R>(text: string, values: unknown[] = []): Promise<R[]> => pair.sql<R>(pair.primaryUrl, text, values);

  before(async () => {
    assertBuilt();
    pair = await startReplicaPair();
    await pair.sql(pair.primaryUrl, 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    cwd = mkdtempSync(join(tmpdir(), 'loanql-subscriptions-'));
    const env = { DATABASE_URL: pair.primaryUrl, DATABASE_REPLICA_URLS: pair.standbyUrl, WORKERS: '2', REPLICA_CHECK_INTERVAL_MS: '100', REPLICA_MAX_LAG_MS: '5000', DEMO_SCALE: '0.02' };
    service = await startService(env, await freePort(), cwd);
    key = /Demo API key:\s+(\S+)/.exec(service.output())![1]!;
    [{ id: accountId }] = (await primarySql<{ id: string }>(`SELECT id FROM accounts WHERE slug = 'demo'`)) as [{ id: string }];
  });

  after(async () => {
    for (const socket of opened) await socket.dispose().catch(() => undefined);
    await service?.stop();
    await pair?.stop();
    if (cwd) rmSync(cwd, { recursive: true, force: true });
  });

  it('each API process LISTENs for change notices on the primary (none on the standby)', async () => {
    const listening = `SELECT count(*)::int AS count FROM pg_stat_activity WHERE query = 'LISTEN loanql_changes'`;
    assert.equal((await primarySql<{ count: number }>(listening))[0]!.count, 2);
    assert.equal((await pair.sql<{ count: number }>(pair.standbyUrl, listening))[0]!.count, 0);
    assert.equal((await connectionsByPid()).size, 2);
  });

  it("a subscriber to a loan's next schedule row gets the new row when the payment is posted through the OTHER process (both ways)", async () => {
    const loans = await primarySql<{ id: string }>(
      // No fee due and nothing paid on the next row yet: a payment of its amount pays exactly that row (the demo's fee job runs on today).
      `SELECT l.id FROM loans l WHERE l.account_id = $1 AND l.status = 'servicing' AND l.fees_due = 0
          AND NOT EXISTS (SELECT 1 FROM schedules n WHERE n.account_id = l.account_id AND n.loan_id = l.id AND n.is_next AND (n.interest_paid > 0 OR n.principal_paid > 0))
          AND EXISTS (SELECT 1 FROM schedules x JOIN schedules y ON y.account_id = x.account_id AND y.loan_id = x.loan_id AND y.number = x.number + 3
                       WHERE x.account_id = l.account_id AND x.loan_id = l.id AND x.is_next AND x.number > 1 AND y.payment = x.payment)
        ORDER BY l.id LIMIT 2`,
      [accountId],
    );
    assert.equal(loans.length, 2);
    const [a, b] = await placeTwo(key);
    for (const [subscriber, writer, loan] of [[a, b, loans[0]!.id], [b, a, loans[1]!.id]] as const) {
      assert.notEqual(subscriber.pid, writer.pid);
      const live = subscribe(subscriber.socket.client, NEXT_ROW, { id: loan });
      const [row] = (await live.next()).data.loans_by_pk.schedules as { number: number; payment: number }[];
      assert.ok(row);
      await once(writer.socket, POST, { loan, amount: String(row.payment) });
      const second = await live.next();
      assert.deepEqual(second.data.loans_by_pk.schedules.map((r: { number: number }) => r.number), [row.number + 1], `subscriber on ${subscriber.pid}, write on ${writer.pid}`);
      live.stop();
    }
  });

  it("the investor's subscriptions on both processes never receive a row outside the role's filter and their own (generated filters; writes through the other process)", async () => {
    const [{ person_id: personId }] = (await primarySql<{ person_id: string }>(
      `SELECT person_id FROM funding_sources WHERE account_id = $1 GROUP BY person_id ORDER BY count(DISTINCT loan_id) DESC, person_id LIMIT 1`,
      [accountId],
    )) as [{ person_id: string }];
    const created = await runCli(['key', 'create', '--account', 'demo', '--name', 'investor portal', '--role', 'investor', '--var', `person_id=${personId}`], { DATABASE_URL: pair.primaryUrl }, cwd);
    assert.equal(created.code, 0, created.stderr);
    const investorKey = created.stdout.trim().split('\n').at(-1)!;
    const funded = (await primarySql<{ id: string }>(`SELECT DISTINCT loan_id AS id FROM funding_sources WHERE account_id = $1 AND person_id = $2 ORDER BY 1`, [accountId, personId])).map((row) => row.id);
    const [notFunded] = await primarySql<{ id: string }>(
      `SELECT id FROM loans l WHERE account_id = $1 AND status = 'servicing' AND NOT EXISTS (SELECT 1 FROM funding_sources f WHERE f.account_id = l.account_id AND f.loan_id = l.id AND f.person_id = $2) ORDER BY id LIMIT 1`,
      [accountId, personId],
    );
    assert.ok(funded.length && notFunded);
    type Filter = { readonly minAmount: string | null; readonly type: string | null; readonly reversed: boolean | null };
    const graphqlWhere = (f: Filter): string =>
      [f.minAmount === null ? '' : `amount: {_gte: "${f.minAmount}"}`, f.type === null ? '' : `type: {_eq: "${f.type}"}`, f.reversed === null ? '' : `date_reversed: {_is_null: ${!f.reversed}}`].filter(Boolean).join(', ');
    /** The payments the investor may see that pass the filter, by independent SQL on the primary. */
    const expected = async (f: Filter): Promise<string[]> =>
      (
        await primarySql<{ id: string }>(
          `SELECT p.id FROM payments p WHERE p.account_id = $1
              AND EXISTS (SELECT 1 FROM funding_sources fs WHERE fs.account_id = p.account_id AND fs.loan_id = p.loan_id AND fs.person_id = $2)
              AND ($3::numeric IS NULL OR p.amount >= $3::numeric) AND ($4::text IS NULL OR p.type = $4) AND ($5::boolean IS NULL OR (p.date_reversed IS NOT NULL) = $5)
            ORDER BY p.id`,
          [accountId, personId, f.minAmount, f.type, f.reversed],
        )
      ).map((row) => row.id);
    const visible = new Set(await expected({ minAmount: null, type: null, reversed: null }));
    const filters = fc.sample(
      fc.record<Filter>({ minAmount: fc.constantFrom(null, '0.01', '500.00', '2000.00'), type: fc.constantFrom(null, 'regular', 'payoff', 'principal'), reversed: fc.constantFrom(null, true, false) }),
      { seed: 34, numRuns: 4 },
    );
    const investors = await placeTwo(investorKey);
    const admins = await placeTwo(key);
    // Every filter on both processes.
    const lives: { filter: Filter; pid: number; live: Subscription }[] = [];
    for (const investor of investors) for (const filter of filters) lives.push({ filter, pid: investor.pid, live: subscribe(investor.socket.client, `subscription { payments(where: {${graphqlWhere(filter)}}, order_by: {id: asc}) { id } }`) });
    const check = (entry: (typeof lives)[number], message: { data: { payments: { id: string }[] } }): string[] => {
      const ids = message.data.payments.map((row) => row.id);
      for (const id of ids) assert.ok(visible.has(id), `filter ${JSON.stringify(entry.filter)} on ${entry.pid} sent payment ${id}, which the investor may not see`);
      return ids;
    };
    for (const entry of lives) assert.deepEqual(check(entry, await entry.live.next()), await expected(entry.filter));
    // A round of writes through each process, inside and outside the investor's loans.
    for (const admin of admins) {
      const outside = (await once(admin.socket, POST, { loan: notFunded!.id, amount: '2500.00' })).insert_payments_one.id as string;
      const inside = (await once(admin.socket, POST, { loan: funded[0], amount: '2500.00' })).insert_payments_one.id as string;
      visible.add(inside);
      for (const entry of lives) {
        const want = await expected(entry.filter);
        assert.ok(!want.includes(outside));
        let latest = entry.live.raw[entry.live.raw.length - 1] as { data: { payments: { id: string }[] } };
        while (JSON.stringify(latest.data.payments.map((row) => row.id)) !== JSON.stringify(want)) latest = (await entry.live.next(5_000)) as typeof latest;
        while (entry.live.waiting) check(entry, await entry.live.next());
      }
    }
    for (const entry of lives) {
      for (const message of entry.live.raw) check(entry, message as { data: { payments: { id: string }[] } });
      entry.live.stop();
    }
    assert.deepEqual(new Set(lives.map((entry) => entry.pid)).size, 2);
  });

  it('a key revoked while connected closes its sockets on both processes with 4403 within a second; another key stays', async () => {
    const created = await runCli(['key', 'create', '--account', 'demo', '--name', 'revoked while connected'], { DATABASE_URL: pair.primaryUrl }, cwd);
    assert.equal(created.code, 0, created.stderr);
    const doomed = created.stdout.trim().split('\n').at(-1)!;
    const sockets = await placeTwo(doomed);
    const kept = await placeTwo(key);
    const lives = sockets.map((placed) => subscribe(placed.socket.client, PROBE));
    const keptLives = kept.map((placed) => subscribe(placed.socket.client, PROBE));
    for (const live of [...lives, ...keptLives]) await live.next();
    const revokedAt = Date.now();
    await primarySql(`UPDATE api_keys SET active = false, deactivated_at = now() WHERE prefix = $1`, [doomed.slice(0, 11)]);
    await Promise.all(lives.map((live) => live.ended));
    for (const placed of sockets) {
      const closed = placed.socket.closes[0];
      assert.equal(closed?.code, 4403, `process ${placed.pid}`);
      assert.ok(closed.at - revokedAt < 1_000, `process ${placed.pid} closed ${closed.at - revokedAt} ms after the revocation`);
    }
    for (const placed of kept) assert.equal(placed.socket.closes.length, 0, `another key's socket on ${placed.pid} stays open`);
    for (const live of keptLives) live.stop();
  });

  it('bad documents get protocol errors on both processes, and each connection keeps serving', async () => {
    const cases: [string, Record<string, unknown> | undefined, string][] = [
      ['subscription {', undefined, 'parse-failed'],
      ['subscription { nope { id } }', undefined, 'validation-failed'],
      ['subscription($id: uuid!) { loans_by_pk(id: $id) { id } }', { id: 'not-a-uuid' }, 'validation-failed'],
      ['subscription { payments_stream(batch_size: 5, cursor: {initial_value: {posted_at: "2020-01-01T00:00:00Z"}}) { amount } }', undefined, 'validation-failed'],
      ['subscription { loans(where: {name: {_regex: "(a"}}) { id } }', undefined, 'data-exception'],
      ['subscription { a: loans { payments { allocations { loan { payments { allocations { id } } } } } } }', undefined, 'query-too-expensive'],
    ];
    for (const placed of await placeTwo(key)) {
      for (const [query, variables, code] of cases) {
        const error = (await subscribe(placed.socket.client, query, variables).ended) as { extensions?: { code?: string } }[];
        assert.ok(Array.isArray(error), `${query} on ${placed.pid}: expected a protocol error, got ${JSON.stringify(error)}`);
        assert.equal(error[0]?.extensions?.code, code, `${query} on ${placed.pid}: ${JSON.stringify(error)}`);
      }
      const good = subscribe(placed.socket.client, PROBE);
      assert.ok((await good.next()).data.loans_aggregate.aggregate.count > 0);
      good.stop();
      assert.equal(placed.socket.closes.length, 0);
    }
  });

  it('with the standby applying commits late, a subscriber never receives a result older than one it received (cohort reads on the standby when it has caught up)', async () => {
    const statementsOn = async (url: string): Promise<number> =>
      Number((await pair.sql<{ calls: string | null }>(url, `SELECT sum(calls)::text AS calls FROM pg_stat_statements WHERE query LIKE '%json_to_recordset%' AND query NOT LIKE '%pg_stat_statements%'`))[0]?.calls ?? 0);
    await pair.sql(pair.primaryUrl, 'SELECT pg_stat_statements_reset()');
    await pair.sql(pair.standbyUrl, 'SELECT pg_stat_statements_reset()');
    const loans = (await primarySql<{ id: string }>(`SELECT id FROM loans WHERE account_id = $1 AND status = 'servicing' ORDER BY id DESC LIMIT 3`, [accountId])).map((row) => row.id);
    const [subscriber, writer] = await placeTwo(key);
    const query = `subscription($id: uuid!) { loans_by_pk(id: $id) { id payments_aggregate { aggregate { count } } } }`;
    const lives = loans.map((id) => subscribe(subscriber.socket.client, query, { id }));
    const countOf = (message: { data: { loans_by_pk: { payments_aggregate: { aggregate: { count: number } } } } }): number => message.data.loans_by_pk.payments_aggregate.aggregate.count;
    const start = await Promise.all(lives.map(async (live) => countOf(await live.next())));
    const posts = [0, 0, 0];
    const round = async (writes: number): Promise<void> => {
      for (let index = 0; index < writes; index++) {
        const which = index % loans.length;
        await once(writer.socket, POST, { loan: loans[which], amount: '1.00' });
        posts[which]! += 1;
        // The subscriber of that loan gets the write's result (the standby may lag: then the primary answers).
        const live = lives[which]!;
        while (countOf(live.raw[live.raw.length - 1]) !== start[which]! + posts[which]!) await live.next(5_000);
      }
    };
    await round(6);
    const onStandbyCaughtUp = await statementsOn(pair.standbyUrl);
    await pair.delayStandby(400);
    try {
      await new Promise((resolve) => setTimeout(resolve, 500));
      await round(9);
    } finally {
      await pair.delayStandby(0);
    }
    await round(3);
    for (const [index, live] of lives.entries()) {
      while (live.waiting) await live.next();
      const counts = live.raw.map(countOf);
      for (let at = 1; at < counts.length; at++) assert.ok(counts[at]! > counts[at - 1]!, `loan ${index}: received ${counts.join(', ')} (a result older than, or equal to, the one before)`);
      assert.equal(counts.at(-1), start[index]! + posts[index]!);
      live.stop();
    }
    const onPrimary = await statementsOn(pair.primaryUrl);
    process.stdout.write(`# cohort statements: standby ${await statementsOn(pair.standbyUrl)} (${onStandbyCaughtUp} before the delay), primary ${onPrimary}\n`);
    assert.ok(onStandbyCaughtUp > 0, 'with the standby caught up, cohorts read on it');
    assert.ok(onPrimary > 0, 'with the standby 400 ms late, the primary answered the refreshes that needed the newest writes');
  });

  it("with the standby a second late, a key reads its own writes over the socket (README \"Scaling out\"): a query after its mutation, over the socket or HTTP, and a subscription's first result after it (they read the late standby)", async () => {
    const [task] = await primarySql<{ id: string }>(`SELECT id FROM tasks WHERE account_id = $1 ORDER BY id LIMIT 1`, [accountId]);
    const rename = `mutation($id: uuid!, $name: String!) { update_tasks_by_pk(pk_columns: {id: $id}, _set: {name: $name}) { name } }`;
    const read = `query($id: uuid!) { tasks_by_pk(id: $id) { name } }`;
    const socket = connect(service.url, key);
    opened.push(socket);
    // A connection held open by a probe: the reads below are its own operations, not a new connection's.
    const probe = subscribe(socket.client, PROBE);
    await probe.next();
    await pair.delayStandby(1_000);
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal((await once(socket, rename, { id: task!.id, name: 'renamed over the socket' })).update_tasks_by_pk.name, 'renamed over the socket');
      assert.equal((await once(socket, read, { id: task!.id })).tasks_by_pk.name, 'renamed over the socket', 'a query right after the mutation over the socket');
      const overHttp = await fetch(`${service.url}/api/graph`, { method: 'POST', headers: { authorization: `Token ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ query: read, variables: { id: task!.id } }) });
      assert.equal(((await overHttp.json()) as { data: { tasks_by_pk: { name: string } } }).data.tasks_by_pk.name, 'renamed over the socket', 'a query over HTTP right after the mutation over the socket');

      const posted = await fetch(`${service.url}/api/graph`, { method: 'POST', headers: { authorization: `Token ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ query: rename, variables: { id: task!.id, name: 'renamed over HTTP' } }) });
      assert.equal(posted.status, 200);
      assert.equal((await once(socket, read, { id: task!.id })).tasks_by_pk.name, 'renamed over HTTP', 'a query over the socket right after a mutation over HTTP');

      await fetch(`${service.url}/api/graph`, { method: 'POST', headers: { authorization: `Token ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ query: rename, variables: { id: task!.id, name: 'renamed before subscribing' } }) });
      const live = subscribe(socket.client, `subscription($id: uuid!) { tasks_by_pk(id: $id) { name } }`, { id: task!.id });
      assert.equal((await live.next()).data.tasks_by_pk.name, 'renamed before subscribing', "a subscription's first result");
      live.stop();
    } finally {
      await pair.delayStandby(0);
      probe.stop();
    }
  });
});
