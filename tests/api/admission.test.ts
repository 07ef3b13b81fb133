import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { configFromEnv } from '../../app/config.js';
import { AdmissionRefused, CostAdmission, sizeAdmission, type AdmissionLimits } from '../../app/operations/costAdmission.js';
import { createAccountWithKey, startTestServer, type TestServer } from '../support/http.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';
import { parsePrometheusText, sampleValue } from '../support/prometheusText.js';

const LIMITS: AdmissionLimits = { cheapCost: 100, budget: 1_000, costlyConnections: 2, queueSize: 3, queueWaitMs: 60_000 };

/** Admits a request and records, in `order`, its name once admitted (or `name refused`). */
function ask(admission: CostAdmission, key: string, cost: number, name: string, order: string[]): Promise<() => void> {
  return Promise.resolve()
    .then(() => admission.admit(key, cost))
    .then(
      (release) => {
        order.push(name);
        return release;
      },
      (error: unknown) => {
        order.push(`${name} refused`);
        throw error;
      },
    );
}

/** Lets every settled promise's callbacks run. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('Admission by cost: the rules', () => {
  it('admits a query under the cheap cost at once, reserving nothing, even when the costly lane is full', () => {
    const admission = new CostAdmission(LIMITS);
    admission.admit('a', 600) as () => void;
    admission.admit('a', 400) as () => void;
    const cheap = admission.admit('b', 99);
    assert.equal(typeof cheap, 'function');
    assert.deepEqual(admission.state, { running: 2, reserved: 1_000, waiting: 0 });
  });

  it('reserves each costly query’s cost: over the budget or the costly connections it waits', async () => {
    const admission = new CostAdmission(LIMITS);
    const order: string[] = [];
    const first = await ask(admission, 'a', 700, 'a1', order);
    const second = ask(admission, 'b', 400, 'b1', order); // 700 + 400 > 1,000
    await settle();
    assert.deepEqual(order, ['a1']);
    assert.deepEqual(admission.state, { running: 1, reserved: 700, waiting: 1 });
    first();
    (await second)();
    assert.deepEqual(order, ['a1', 'b1']);
    assert.deepEqual(admission.state, { running: 0, reserved: 0, waiting: 0 });
  });

  it('serves waiting keys in turn, each key’s own requests in order', async () => {
    const admission = new CostAdmission({ ...LIMITS, costlyConnections: 1, queueSize: 10 });
    const order: string[] = [];
    const releases = new Map<string, Promise<() => void>>();
    releases.set('a1', ask(admission, 'a', 500, 'a1', order));
    for (const [key, name] of [['a', 'a2'], ['a', 'a3'], ['a', 'a4'], ['b', 'b1'], ['c', 'c1']] as const) releases.set(name, ask(admission, key, 500, name, order));
    // One connection: release whatever was admitted last, six times.
    for (let i = 0; i < 6; i++) {
      await settle();
      (await releases.get(order.at(-1)!)!)();
    }
    assert.deepEqual(order, ['a1', 'a2', 'b1', 'c1', 'a3', 'a4']);
  });

  it('never lets a smaller request overtake a waiting one that does not fit yet (no starvation)', async () => {
    const admission = new CostAdmission({ ...LIMITS, costlyConnections: 5 });
    const order: string[] = [];
    const running = await ask(admission, 'a', 600, 'a1', order);
    const big = ask(admission, 'b', 600, 'b-big', order);
    const small = ask(admission, 'c', 200, 'c-small', order); // would fit now, but b waits first
    await settle();
    assert.deepEqual(order, ['a1']);
    running();
    (await big)();
    (await small)();
    assert.deepEqual(order, ['a1', 'b-big', 'c-small']);
  });

  it('bounds the queue: a full queue refuses the newcomer, unless another key holds more of it (its newest gives way)', async () => {
    const admission = new CostAdmission({ ...LIMITS, costlyConnections: 1 });
    const order: string[] = [];
    const running = await ask(admission, 'a', 500, 'a1', order);
    const queued = [ask(admission, 'a', 500, 'a2', order), ask(admission, 'a', 500, 'a3', order), ask(admission, 'a', 500, 'a4', order)];
    queued.forEach((p) => p.catch(() => undefined));
    await settle();
    // The flooding key's own next request is refused at once.
    assert.throws(() => admission.admit('a', 500), (error: unknown) => error instanceof AdmissionRefused && error.reason === 'queue-full' && error.retryAfterSeconds === 1);
    // Another key's takes the place of the flooding key's newest.
    const fromB = ask(admission, 'b', 500, 'b1', order);
    await assert.rejects(queued[2]!, (error: unknown) => error instanceof AdmissionRefused && error.reason === 'queue-full');
    assert.equal(admission.state.waiting, 3);
    // And b1 is served before a3 (round-robin).
    running();
    (await queued[0]!)();
    (await fromB)();
    (await queued[1]!)();
    assert.deepEqual(order, ['a1', 'a4 refused', 'a2', 'b1', 'a3']);
  });

  it('refuses a request that waits longer than ADMISSION_QUEUE_WAIT_MS, and with a queue of 0 refuses at once', async () => {
    const impatient = new CostAdmission({ ...LIMITS, costlyConnections: 1, queueWaitMs: 1 });
    const running = impatient.admit('a', 500) as () => void;
    await assert.rejects(Promise.resolve(impatient.admit('b', 500)), (error: unknown) => error instanceof AdmissionRefused && error.reason === 'waited-too-long');
    assert.equal(impatient.state.waiting, 0);
    running();
    const noQueue = new CostAdmission({ ...LIMITS, costlyConnections: 1, queueSize: 0 });
    noQueue.admit('a', 500);
    assert.throws(() => noQueue.admit('b', 500), AdmissionRefused);
  });

  it('refuses each waiter at its own deadline (one timer for the queue): one admitted in time is never refused, a later one waits its full time', async () => {
    const admission = new CostAdmission({ ...LIMITS, costlyConnections: 1, queueSize: 10, queueWaitMs: 2_000 });
    // Seconds, not tenths: a loaded machine's timers fire late (a run of this test with 150 ms of
    // slack once failed so), and every step below keeps 750 ms or more to spare.
    const order: string[] = [];
    const later = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
    const running = admission.admit('a', 500) as () => void;
    const first = ask(admission, 'a', 500, 'first', order); // deadline ≈ 2,000 ms
    await later(1_000);
    const second = ask(admission, 'b', 500, 'second', order).catch((error: unknown) => error); // deadline ≈ 3,000 ms
    const third = ask(admission, 'c', 500, 'third', order).catch((error: unknown) => error);
    await settle();
    running(); // `first` is admitted before its deadline
    const firstRelease = await first;
    await later(1_250); // past first's deadline (≈ 2,250 ms), before second's
    assert.deepEqual(order, ['first'], 'the timer armed for the oldest waiter refuses no one who was admitted or is still within its time');
    assert.equal(admission.state.waiting, 2);
    const [secondError, thirdError] = await Promise.all([second, third]);
    assert.ok(secondError instanceof AdmissionRefused && secondError.reason === 'waited-too-long');
    assert.ok(thirdError instanceof AdmissionRefused && thirdError.reason === 'waited-too-long');
    assert.deepEqual(order, ['first', 'second refused', 'third refused']);
    assert.equal(admission.state.waiting, 0);
    firstRelease();
    // The queue empty and the connection free again: the next request is admitted at once.
    const fourth = ask(admission, 'd', 500, 'fourth', order);
    (await fourth)();
    assert.deepEqual(order, ['first', 'second refused', 'third refused', 'fourth']);
  });

  it('is sized from the pool: a quarter (at least one connection) kept for cheap requests, half the rest at MAX_QUERY_COST', () => {
    const settings = { cheapCost: 1_000, budget: null, queueSize: 100, queueWaitMs: 5_000 };
    assert.deepEqual(sizeAdmission(settings, 10, 50_000), { ...settings, costlyConnections: 7, budget: 175_000 });
    assert.deepEqual(sizeAdmission(settings, 1, 50_000), { ...settings, costlyConnections: 1, budget: 50_000 });
    assert.deepEqual(sizeAdmission({ ...settings, budget: 1_234 }, 4, 0), { ...settings, costlyConnections: 3, budget: 1_234 });
  });

  it('reads ADMISSION_* from the environment; ADMISSION_COST_BUDGET=0 turns it off; a bad value names the variable', () => {
    assert.deepEqual(configFromEnv({}).operations.admission, { cheapCost: 1_000, budget: null, queueSize: 100, queueWaitMs: 5_000 });
    assert.deepEqual(configFromEnv({ ADMISSION_CHEAP_COST: '50', ADMISSION_QUEUE_SIZE: '0', ADMISSION_QUEUE_WAIT_MS: '250', ADMISSION_COST_BUDGET: '9000' }).operations.admission, { cheapCost: 50, budget: 9_000, queueSize: 0, queueWaitMs: 250 });
    assert.equal(configFromEnv({ ADMISSION_COST_BUDGET: '0' }).operations.admission, null);
    assert.throws(() => configFromEnv({ ADMISSION_QUEUE_SIZE: 'lots' }), /ADMISSION_QUEUE_SIZE must be a whole number/);
  });
});

describe('Admission by cost: POST /api/graph', () => {
  let database: TestDatabase;
  let server: TestServer;
  let key: string;
  const TOKEN = 'admission-test-token-0123456789';

  before(async () => {
    database = await openTestDatabase();
    const defaults = configFromEnv({}).operations;
    // Budget 1: one costly query at a time, on either database; no queue.
    server = await startTestServer(database.db, { operations: { ...defaults, metricsToken: TOKEN, admission: { cheapCost: 100, budget: 1, queueSize: 0, queueWaitMs: 5_000 } } });
    key = (await createAccountWithKey(database.db)).apiKey.key;
  });
  after(async () => {
    await server?.close();
    await database?.close();
  });

  const graph = (query: string, variables?: Record<string, unknown>): Promise<Response> =>
    fetch(`${server.url}/api/graph`, { method: 'POST', headers: { authorization: `Token ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
  const COSTLY = '{ schedules_aggregate(where: {loan: {schedules: {loan: {status: {_eq: "servicing"}}}}}) { aggregate { count } } }';
  const CHEAP = 'query($id: uuid!) { loans_by_pk(id: $id) { id } }';

  it('answers a costly query over the budget with 503, Retry-After and code overloaded, while a cheap one and the admitted one succeed', async () => {
    assert.equal((await graph(CHEAP, { id: '00000000-0000-0000-0000-000000000000' })).status, 200); // the key is now verified (the fast path)
    // Hold the schedules table: the admitted costly query waits on the database while it holds its admission.
    let unlock!: () => void;
    const held = new Promise<void>((resolve) => (unlock = resolve));
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    const holding = database.db.transaction(async (tx) => {
      await tx.query('LOCK TABLE schedules IN ACCESS EXCLUSIVE MODE');
      locked();
      await held;
    });
    await lockTaken;
    const costly = [graph(COSTLY), graph(COSTLY)];
    const cheap = graph(CHEAP, { id: '00000000-0000-0000-0000-000000000000' });
    const refused = await Promise.race(costly);
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get('retry-after'), '1');
    const body = (await refused.json()) as { errors: { message: string; extensions: { code: string } }[] };
    assert.equal(body.errors[0]!.extensions.code, 'overloaded');
    assert.match(body.errors[0]!.message, /busy with costly requests/);
    unlock();
    await holding;
    const statuses = (await Promise.all(costly)).map((r) => r.status).sort();
    assert.deepEqual(statuses, [200, 503]);
    assert.equal((await cheap).status, 200);

    const scrape = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const families = parsePrometheusText(await scrape.text());
    assert.equal(sampleValue(families, 'loanql_admission_total', { decision: 'refused' }), 1);
    assert.equal(sampleValue(families, 'loanql_admission_total', { decision: 'admitted' }), 1);
    assert.equal(sampleValue(families, 'loanql_admission_total', { decision: 'cheap' }), 2);
    assert.equal(sampleValue(families, 'loanql_admission_running', {}), 0);
  });
});
