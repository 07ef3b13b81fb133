import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { configFromEnv, type ServiceConfig } from '../../app/config.js';
import type { AdmissionSettings } from '../../app/operations/costAdmission.js';
import { dataOf, startSeededService, startService, type RunningService, type SeededService } from '../support/seededService.js';
import { connect, subscribe, type Subscription, type TestClient } from '../support/graphSocket.js';
import { parsePrometheusText, sampleValue } from '../support/prometheusText.js';

/**
 * Admission by cost over WebSocket (the operations audit): a subscription's runs — its first
 * result, its refreshes — and a query sent over the socket ask the process's one `CostAdmission`,
 * the HTTP routes' own, so a flood of costly subscriptions cannot hold every connection while
 * cheap HTTP reads wait. Before, none of them asked: a costly subscription ran whatever the budget.
 */
const TOKEN = 'socket-admission-metrics-token-0123';
/** Costs 1,001 (a filter through an array relationship over an unlimited list): over ADMISSION_CHEAP_COST's 1,000. */
const costly = (alias: string): string => `subscription { ${alias}: loans(where: {schedules: {is_next: {_eq: true}}}, order_by: {id: asc}) { id } }`;
/** Its payments' count: changes with a payment posted, costs over 1,000 too. */
const COSTLY_COUNT = 'subscription { payments_aggregate(where: {loan: {schedules: {is_next: {_eq: true}}}}) { aggregate { count } } }';
const BY_PK = 'query($id: uuid!) { loans_by_pk(id: $id) { id name } }';

let s: SeededService;
let loanId: string;

before(async () => {
  s = await startSeededService();
  // A loan with a next row: COSTLY_COUNT counts the payments of such loans only, so a payment on
  // one of the servicing loans without one (11 of 127 in the seed; ids are random) changed no
  // count and the refresh test waited for a message that never came (sessions 35–36).
  loanId = (
    await s.sql<{ id: string }>(
      `SELECT l.id FROM loans l WHERE l.account_id = $1 AND l.status = 'servicing'
          AND EXISTS (SELECT 1 FROM schedules sc WHERE sc.account_id = l.account_id AND sc.loan_id = l.id AND sc.is_next)
        ORDER BY l.id LIMIT 1`,
      [s.account.id],
    )
  )[0]!.id;
});
after(async () => {
  await s?.close();
});

/** A service over the seeded database with metrics on and these admission settings. */
function serviceWith(admission: AdmissionSettings): Promise<RunningService> {
  const defaults = configFromEnv({});
  const config: Partial<ServiceConfig> = { operations: { ...defaults.operations, metricsToken: TOKEN, admission } };
  return startService(s.db, config);
}

const graphOn = async (url: string, query: string, variables?: Record<string, unknown>): Promise<Response> =>
  fetch(`${url}/api/graph`, { method: 'POST', headers: { authorization: `Token ${s.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });

async function admissionCount(url: string, decision: string): Promise<number> {
  const families = parsePrometheusText(await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text());
  return sampleValue(families, 'loanql_admission_total', { decision }) ?? 0;
}

/** Polls `check` every 20 ms until it holds; fails naming `what` after `ms`. */
async function until(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    assert.ok(Date.now() < deadline, `${what} within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** `promise`, or a failure naming what did not happen after `ms`. */
const within = <T>(promise: Promise<T>, ms: number, what: string): Promise<T> =>
  Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms).unref())]);

/** Takes the whole budget of `service`'s admission, as a costly request running would: released by the function returned. */
function holdTheCostlyLane(service: RunningService): () => void {
  const admission = service.admission!;
  const release = admission.admit('a costly request in flight', admission.limits.budget);
  assert.equal(typeof release, 'function', 'the lane was free');
  return release as () => void;
}

describe('Admission by cost of subscriptions: a flood of costly subscriptions and an HTTP by-pk prober', () => {
  let service: RunningService;
  let client: TestClient;
  before(async () => {
    service = await serviceWith({ cheapCost: 1_000, budget: null, queueSize: 100, queueWaitMs: 60_000 });
    client = connect(service.url, s.apiKey);
  });
  after(async () => {
    await client?.dispose();
    await service?.close();
  });

  it("costly subscriptions' first runs wait in the HTTP routes' queue while cheap HTTP reads are answered; each runs once admitted, counted in /metrics", async () => {
    const release = holdTheCostlyLane(service);
    let subscriptions: Subscription[] = [];
    try {
      subscriptions = ['a', 'b', 'c', 'd'].map((alias) => subscribe(client.client, costly(alias)));
      await until(() => service.admission!.state.waiting === 4, 10_000, 'the four subscriptions queued in admission (they ran past it before)');
      for (let i = 0; i < 10; i++) {
        const answer = await graphOn(service.url, BY_PK, { id: loanId });
        assert.equal(answer.status, 200);
        assert.equal(((await answer.json()) as { data: { loans_by_pk: { id: string } } }).data.loans_by_pk.id, loanId);
      }
      assert.deepEqual(
        subscriptions.map((live) => live.waiting),
        [0, 0, 0, 0],
        'no costly subscription ran while the costly lane was held',
      );
      assert.equal(service.admission!.state.waiting, 4);
    } finally {
      release();
    }
    const firsts = await Promise.all(subscriptions.map((live) => live.next(10_000)));
    assert.deepEqual(
      firsts.map((first) => Object.keys(first.data)),
      [['a'], ['b'], ['c'], ['d']],
    );
    assert.ok((firsts[0].data.a as unknown[]).length > 0);
    assert.equal(await admissionCount(service.url, 'queued'), 4);
    assert.ok((await admissionCount(service.url, 'cheap')) >= 10, 'the by-pk reads took the cheap lane');
    // A refresh asks too: a loan renamed refreshes the four cohorts (they read loans), each admitted
    // at once or after a wait (on PGlite one costly statement runs at a time).
    const asked = async (): Promise<number> => (await admissionCount(service.url, 'admitted')) + (await admissionCount(service.url, 'queued'));
    const askedBefore = await asked();
    dataOf(await s.graph(`mutation($id: uuid!) { update_loans_by_pk(pk_columns: {id: $id}, _set: {name: "Renamed by the admission test"}) { id } }`, { id: loanId }));
    await until(async () => (await asked()) >= askedBefore + 4, 10_000, 'the four refreshes asked admission');
    for (const live of subscriptions) live.stop();
  });
});

describe('Admission by cost of subscriptions on PostgreSQL: costly subscriptions holding connections', { skip: process.env.TEST_DATABASE_URL ? false : 'needs TEST_DATABASE_URL (a pool of connections; PGlite runs one statement at a time)' }, () => {
  let service: RunningService;
  let client: TestClient;
  before(async () => {
    service = await serviceWith({ cheapCost: 1_000, budget: null, queueSize: 100, queueWaitMs: 60_000 });
    client = connect(service.url, s.apiKey);
  });
  after(async () => {
    await client?.dispose();
    await service?.close();
  });

  it("more costly subscriptions than the pool has connections, stuck on a locked table, hold at most admission's costly lane: every by-pk read of the prober is answered meanwhile", async () => {
    const { costlyConnections } = service.admission!.limits;
    const pool = s.db.poolStatus!().max;
    assert.ok(costlyConnections < pool - 1, `a connection is left for the cheap lane (pool ${pool}, costly lane ${costlyConnections})`);
    const flood = pool + 2;
    // A long transaction holds schedules: every costly subscription's statement waits on it, holding its connection.
    let unlock!: () => void;
    const held = new Promise<void>((resolve) => (unlock = resolve));
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    const holding = s.db.transaction(async (tx) => {
      await tx.query('LOCK TABLE schedules IN ACCESS EXCLUSIVE MODE');
      locked();
      await held;
    });
    let subscriptions: Subscription[] = [];
    try {
      await lockTaken;
      subscriptions = Array.from({ length: flood }, (_, i) => subscribe(client.client, costly(`flood${i}`)));
      // The lock's connection and the costly lane's (before: every connection, and more statements waiting for one).
      await until(() => (s.db.poolStatus?.().inUse ?? 0) >= 1 + costlyConnections, 10_000, 'the costly statements started');
      for (let i = 0; i < 10; i++) {
        const answer = await within(graphOn(service.url, BY_PK, { id: loanId }), 5_000, `by-pk read ${i + 1} answered while the costly subscriptions wait`);
        assert.equal(answer.status, 200);
        assert.equal(((await answer.json()) as { data: { loans_by_pk: { id: string } } }).data.loans_by_pk.id, loanId);
      }
      assert.deepEqual({ running: service.admission!.state.running, waiting: service.admission!.state.waiting }, { running: costlyConnections, waiting: flood - costlyConnections });
    } finally {
      unlock();
      await holding;
    }
    const firsts = await Promise.all(subscriptions.map((live) => live.next(20_000)));
    assert.equal(firsts.length, flood);
    for (const live of subscriptions) live.stop();
  });
});

describe('Admission by cost of subscriptions: refusals', () => {
  let service: RunningService;
  let client: TestClient;
  before(async () => {
    service = await serviceWith({ cheapCost: 1_000, budget: null, queueSize: 100, queueWaitMs: 300 });
    client = connect(service.url, s.apiKey);
  });
  after(async () => {
    await client?.dispose();
    await service?.close();
  });

  it('a subscription refused at its first run ends with code overloaded and retryAfterSeconds, a costly query over the socket too, as HTTP answers 503; the connection keeps serving', async () => {
    const release = holdTheCostlyLane(service);
    try {
      const live = subscribe(client.client, costly('refused'));
      const ended = (await within(live.ended, 10_000, 'the subscription refused')) as { message: string; extensions: { code: string; retryAfterSeconds: number } }[];
      assert.equal(ended[0]!.extensions.code, 'overloaded');
      assert.equal(ended[0]!.extensions.retryAfterSeconds, 1);
      assert.match(ended[0]!.message, /busy with costly requests/);
      const once = subscribe(client.client, costly('once').replace(/^subscription/, 'query'));
      const onceEnded = (await within(once.ended, 10_000, 'the query over the socket refused')) as { extensions: { code: string } }[];
      assert.equal(onceEnded[0]!.extensions.code, 'overloaded');
      const overHttp = await graphOn(service.url, costly('http').replace(/^subscription/, 'query'));
      assert.equal(overHttp.status, 503);
      await overHttp.body?.cancel();
      // The connection still serves: a cheap query over it is answered.
      const cheap = subscribe(client.client, BY_PK, { id: loanId });
      assert.equal((await cheap.next()).data.loans_by_pk.id, loanId);
    } finally {
      release();
    }
    assert.equal(await admissionCount(service.url, 'refused'), 3);
    // And the socket's own count says which operations were turned away.
    const families = parsePrometheusText(await (await fetch(`${service.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text());
    assert.equal(sampleValue(families, 'loanql_websocket_operations_total', { operation: 'subscription', outcome: 'overloaded' }), 1);
    assert.equal(sampleValue(families, 'loanql_websocket_operations_total', { operation: 'query', outcome: 'overloaded' }), 1);
  });

  it('a refresh admission refuses is run again a second later — the subscriber gets the new result, its subscription never stops', async () => {
    const live = subscribe(client.client, COSTLY_COUNT);
    const count = (await live.next()).data.payments_aggregate.aggregate.count as number;
    const refusedBefore = await admissionCount(service.url, 'refused');
    const release = holdTheCostlyLane(service);
    try {
      dataOf(await s.graph(`mutation($loan: uuid!) { insert_payments_one(object: {loan_id: $loan, date: "2026-11-20", amount: "1.00", type: "regular", method: "ach"}) { id } }`, { loan: loanId }));
      await until(async () => (await admissionCount(service.url, 'refused')) > refusedBefore, 10_000, "the refresh refused after ADMISSION_QUEUE_WAIT_MS's 300 ms");
      assert.equal(live.waiting, 0, 'no result while the costly lane was held');
    } finally {
      release();
    }
    // No notice comes after the refusal: the retry alone brings the new count (a second after the refusal).
    const refreshed = await live.next(10_000);
    assert.equal(refreshed.data.payments_aggregate.aggregate.count, count + 1);
    live.stop();
  });
});
