import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import type { Account } from '../../app/accounts.js';
import type { CreatedApiKey } from '../../app/apiKeys.js';
import { createWebhookEndpoint, redeliverWebhookEvent, WebhookWorker, webhookSettingsFromEnv, type DeliveryOutcome, type WebhookSettings } from '../../app/webhooks/index.js';
import { createAccountWithKey, startTestServer, tokenHeader, type TestServer } from '../support/http.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../support/webhookReceiver.js';

/**
 * Issue 16, Done-when 1–3: events captured by the database in the write's transaction and
 * delivered, signed per Standard Webhooks, by the worker to a receiver on 127.0.0.1.
 */
let database: TestDatabase;
let server: TestServer;
let worker: WebhookWorker;
/** Every attempt's outcome as the worker tells it (the service counts them in `loanql_webhook_deliveries_total`). */
const outcomes: DeliveryOutcome[] = [];
const outcomeCount = (outcome: DeliveryOutcome): number => outcomes.filter((told) => told === outcome).length;
const settings: WebhookSettings = { ...webhookSettingsFromEnv({}), allowPrivate: true, pollMs: 50, timeoutMs: 1000, retryBaseMs: 200, retryMaxMs: 500, maxAttempts: 6 };

before(async () => {
  database = await openTestDatabase();
  server = await startTestServer(database.db);
  worker = new WebhookWorker(database.db, settings, { warn: () => undefined }, (outcome) => outcomes.push(outcome));
  worker.start();
});
after(async () => {
  await worker?.stop();
  await server?.close();
  await database?.close();
});

const KNOWN = new Set(['loan.created', 'loan.updated', 'loan.status_changed', 'payment.posted', 'payment.reversed', 'task.completed', 'person.created']);

async function accountWithEndpoint(receiver: WebhookReceiver, eventTypes: string[] | null): Promise<{ account: Account; apiKey: CreatedApiKey; secret: string; endpointId: string }> {
  const { account, apiKey } = await createAccountWithKey(database.db);
  const endpoint = await createWebhookEndpoint(database.db, account.id, { url: receiver.url, eventTypes }, { knownEventTypes: KNOWN, allowPrivate: true });
  return { account, apiKey, secret: endpoint.secret, endpointId: endpoint.id };
}

async function createLoan(key: string, name = 'Elm St bridge'): Promise<string> {
  const response = await fetch(`${server.url}/api/loan`, {
    method: 'POST',
    headers: { ...tokenHeader(key), 'content-type': 'application/json' },
    body: JSON.stringify({ Name: name, Amount: 100000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' }),
  });
  assert.equal(response.status, 201, await response.clone().text());
  return ((await response.json()) as { loan: { id: string } }).loan.id;
}

async function graph(key: string, query: string, variables: Record<string, unknown> = {}): Promise<{ data?: Record<string, unknown>; errors?: { message: string }[] }> {
  const response = await fetch(`${server.url}/api/graph`, { method: 'POST', headers: { ...tokenHeader(key), 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
  assert.equal(response.status, 200);
  return (await response.json()) as { data?: Record<string, unknown>; errors?: { message: string }[] };
}

interface EventBody {
  id: string;
  type: string;
  created_at: string;
  account: string;
  data: { old: Record<string, unknown> | null; new: Record<string, unknown> | null };
  attempt: number;
}

/** Verifies the signature with the `standardwebhooks` package and returns the parsed body. */
function verified(secret: string, webhook: ReceivedWebhook): EventBody {
  const payload = new Webhook(secret).verify(webhook.body, webhook.headers) as EventBody;
  assert.equal(webhook.headers['webhook-id'], payload.id, 'webhook-id is the event id');
  return payload;
}

const POST_PAYMENT = 'mutation($loan: uuid!, $amount: numeric!) { insert_payments_one(object: {loan_id: $loan, date: "2026-02-15", amount: $amount, method: "ach"}) { id } }';

describe('Webhooks: delivery of captured events', () => {
  it('delivers one signed event within a second for a loan created over REST and a payment posted over GraphQL', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const { account, apiKey, secret } = await accountWithEndpoint(receiver, ['loan.created', 'payment.posted']);
      const loanId = await createLoan(apiKey.key);
      const loanStarted = Date.now();
      await receiver.waitFor((r) => r.length >= 1, 5000);
      assert.ok(receiver.received[0]!.receivedAt - loanStarted < 1000, `loan.created arrived after ${receiver.received[0]!.receivedAt - loanStarted} ms`);
      const loanEvent = verified(secret, receiver.received[0]!);
      assert.equal(loanEvent.type, 'loan.created');
      assert.equal(loanEvent.account, account.slug);
      assert.equal(loanEvent.attempt, 1);
      assert.equal(loanEvent.data.old, null);
      assert.equal(loanEvent.data.new!.id, loanId);
      assert.equal(loanEvent.data.new!.name, 'Elm St bridge');
      assert.equal(loanEvent.data.new!.account_id, undefined, 'the tenant column is not in the payload');

      const answer = await graph(apiKey.key, POST_PAYMENT, { loan: loanId, amount: 1250.5 });
      const paymentStarted = Date.now();
      assert.equal(answer.errors, undefined, JSON.stringify(answer.errors));
      const paymentId = (answer.data!.insert_payments_one as { id: string }).id;
      await receiver.waitFor((r) => r.length >= 2, 5000);
      assert.ok(receiver.received[1]!.receivedAt - paymentStarted < 1000, `payment.posted arrived after ${receiver.received[1]!.receivedAt - paymentStarted} ms`);
      const paymentEvent = verified(secret, receiver.received[1]!);
      assert.equal(paymentEvent.type, 'payment.posted');
      assert.equal(paymentEvent.data.new!.id, paymentId);
      assert.equal(paymentEvent.data.new!.amount, 1250.5);
      assert.equal(paymentEvent.data.new!.loan_id, loanId);
      assert.throws(() => new Webhook(`whsec_${Buffer.from('another secret entirely!').toString('base64')}`).verify(receiver.received[1]!.body, receiver.received[1]!.headers));

      // The loan's own updates (schedule-derived fields) are not subscribed: nothing else arrives.
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(receiver.received.length, 2);
    } finally {
      await receiver.close();
    }
  });

  it('emits conditional events only when their condition holds (status change, reversal, completion)', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const { apiKey, secret } = await accountWithEndpoint(receiver, ['loan.status_changed', 'payment.reversed', 'task.completed']);
      const loanId = await createLoan(apiKey.key);
      const paymentId = ((await graph(apiKey.key, POST_PAYMENT, { loan: loanId, amount: 100 })).data!.insert_payments_one as { id: string }).id;
      await graph(apiKey.key, 'mutation($id: uuid!) { update_loans_by_pk(pk_columns: {id: $id}, _set: {name: "renamed"}) { id } }', { id: loanId });
      // Back to lead: a loan with no payment (one that took a payment is not a lead again, migration 0053).
      const unpaidLoanId = await createLoan(apiKey.key, 'Oak St bridge');
      await graph(apiKey.key, 'mutation($id: uuid!) { update_loans_by_pk(pk_columns: {id: $id}, _set: {status: "lead"}) { id } }', { id: unpaidLoanId });
      await graph(apiKey.key, 'mutation($id: uuid!) { update_payments_by_pk(pk_columns: {id: $id}, _set: {date_reversed: "2026-02-20"}) { id } }', { id: paymentId });
      const task = await graph(apiKey.key, 'mutation($loan: uuid!) { insert_tasks_one(object: {loan_id: $loan, name: "call"}) { id } }', { loan: loanId });
      const taskId = (task.data!.insert_tasks_one as { id: string }).id;
      await graph(apiKey.key, 'mutation($id: uuid!) { update_tasks_by_pk(pk_columns: {id: $id}, _set: {name: "call back"}) { id } }', { id: taskId });
      await graph(apiKey.key, 'mutation($id: uuid!) { update_tasks_by_pk(pk_columns: {id: $id}, _set: {status: "completed"}) { id } }', { id: taskId });
      await receiver.waitFor((r) => r.length >= 3, 5000);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const events = receiver.received.map((w) => verified(secret, w)).sort((a, b) => a.type.localeCompare(b.type));
      assert.deepEqual(events.map((e) => e.type), ['loan.status_changed', 'payment.reversed', 'task.completed']);
      assert.deepEqual([events[0]!.data.old!.status, events[0]!.data.new!.status], ["servicing", "lead"]);
      assert.deepEqual([events[1]!.data.old!.date_reversed, events[1]!.data.new!.date_reversed], [null, '2026-02-20']);
      assert.deepEqual([events[2]!.data.old!.status, events[2]!.data.new!.status], ['open', 'completed']);
    } finally {
      await receiver.close();
    }
  });

  it('delivers nothing for a mutation whose second field fails (the whole request is rolled back)', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const { account, apiKey } = await accountWithEndpoint(receiver, null);
      const loanId = await createLoan(apiKey.key);
      await receiver.waitFor((r) => r.length >= 1, 5000);
      // The loan's creation sends several events (loan.created, and from its replay to the business
      // date its late fees and delinquency): wait until they have all arrived.
      for (let last = -1; last !== receiver.received.length; ) {
        last = receiver.received.length;
        await new Promise((resolve) => setTimeout(resolve, 400));
      }
      const before = receiver.received.length;
      const answer = await graph(
        apiKey.key,
        `mutation($loan: uuid!) {
           ok: insert_payments_one(object: {loan_id: $loan, date: "2026-02-15", amount: 10, method: "ach"}) { id }
           bad: insert_payments_one(object: {loan_id: $loan, date: "2026-02-15", amount: -5, method: "ach"}) { id }
         }`,
        { loan: loanId },
      );
      assert.ok(answer.errors?.length, 'the second field fails');
      const stored = await database.db.query('SELECT 1 FROM webhook_events WHERE account_id = $1 AND type = $2', [account.id, 'payment.posted']);
      assert.equal(stored.rows.length, 0, 'no event is stored for a rolled-back write');
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal(receiver.received.length, before, 'and none is delivered');
    } finally {
      await receiver.close();
    }
  });

  it('keeps every event while the receiver is down or failing, delivers them all when it is back, and logs the attempts', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const { account, apiKey, secret } = await accountWithEndpoint(receiver, ['payment.posted']);
      const loanId = await createLoan(apiKey.key);
      await receiver.close(); // connection refused
      // The worker rests while the five are posted, so that all five start their attempts together:
      // on a loaded machine the posts take seconds, and the first delivery's six attempts (about
      // 1–2 s of backoff here) would all be spent before the last is posted.
      await worker.stop();
      try {
        for (let i = 1; i <= 5; i++) await graph(apiKey.key, POST_PAYMENT, { loan: loanId, amount: i });
      } finally {
        worker.start();
      }
      /** Rows of the account in `table` matching `condition` (constant SQL of this test). */
      const count = async (table: 'webhook_deliveries' | 'webhook_attempts', condition: string): Promise<number> =>
        Number((await database.db.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${table} WHERE account_id = $1 AND ${condition}`, [account.id])).rows[0]!.n);
      const until = async (holds: () => Promise<boolean>, what: string): Promise<void> => {
        for (const deadline = Date.now() + 10_000; !(await holds()); await new Promise((resolve) => setTimeout(resolve, 20))) assert.ok(Date.now() < deadline, what);
      };
      await until(async () => (await count('webhook_deliveries', 'attempts >= 2')) === 5, 'every delivery is refused twice');
      // Answer 500 from the first request after the reopening, and keep answering it until one is
      // logged: a slow machine may refuse a third attempt of every delivery before the port reopens.
      receiver.respond = () => 500;
      await receiver.open();
      await until(async () => (await count('webhook_attempts', 'status_code = 500')) > 0, 'a 500 is answered and logged in webhook_attempts once the receiver is back');
      receiver.respond = () => 204;
      await until(async () => (await count('webhook_deliveries', "status = 'succeeded'")) === 5, 'every delivery succeeds once the receiver answers 2xx');
      const arrived = new Set(receiver.received.filter((w) => w.headers['webhook-id']).map((w) => verified(secret, w).data.new!.amount as number));
      assert.deepEqual([...arrived].sort(), [1, 2, 3, 4, 5]);
      const attempts = await database.db.query<{ attempt: number; status_code: number | null; error: string | null }>(
        'SELECT attempt, status_code, error FROM webhook_attempts WHERE account_id = $1 ORDER BY delivery_id, attempt',
        [account.id],
      );
      assert.ok(attempts.rows.some((a) => a.status_code === null && a.error), 'refused connections are logged');
      assert.equal(attempts.rows.filter((a) => a.status_code === 204).length, 5);
    } finally {
      await receiver.close();
    }
  });

  it('marks a delivery failed after the maximum attempts, and redeliver sends it again with the same webhook-id', async () => {
    const receiver = await startWebhookReceiver();
    try {
      receiver.respond = () => 503;
      const [failedBefore, retriesBefore] = [outcomeCount('failed'), outcomeCount('retry')];
      const { account, apiKey, secret } = await accountWithEndpoint(receiver, ['loan.created']);
      await createLoan(apiKey.key);
      await receiver.waitFor((r) => r.length >= settings.maxAttempts, 10_000);
      let delivery: { status: string; attempts: number; event_id: string } | undefined;
      for (const deadline = Date.now() + 5000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 50))) {
        delivery = (await database.db.query<{ status: string; attempts: number; event_id: string }>('SELECT status, attempts, event_id FROM webhook_deliveries WHERE account_id = $1', [account.id])).rows[0];
        if (delivery?.status === 'failed') break;
      }
      assert.equal(delivery!.status, 'failed');
      assert.equal(delivery!.attempts, settings.maxAttempts);
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal(receiver.received.length, settings.maxAttempts, 'no attempt after the last');
      assert.equal(outcomeCount('failed') - failedBefore, 1, 'the worker tells of the one delivery given up');
      assert.ok(outcomeCount('retry') - retriesBefore >= settings.maxAttempts - 1, 'and of each attempt to be retried');
      const succeededBefore = outcomeCount('succeeded');

      receiver.respond = () => 200;
      assert.equal(await redeliverWebhookEvent(database.db, delivery!.event_id), 1);
      await receiver.waitFor((r) => r.length === settings.maxAttempts + 1, 5000);
      const last = verified(secret, receiver.received.at(-1)!);
      assert.equal(last.id, delivery!.event_id);
      assert.equal(last.attempt, settings.maxAttempts + 1);
      for (const deadline = Date.now() + 5000; outcomeCount('succeeded') === succeededBefore; await new Promise((resolve) => setTimeout(resolve, 20))) assert.ok(Date.now() < deadline, 'the worker tells of the success');
      assert.equal(new Set(receiver.received.map((w) => w.headers['webhook-id'])).size, 1, 'every attempt carries the same webhook-id');
    } finally {
      await receiver.close();
    }
  });

  it('disables an endpoint that answers 410 Gone', async () => {
    const receiver = await startWebhookReceiver();
    try {
      receiver.respond = () => 410;
      const { account, apiKey, endpointId } = await accountWithEndpoint(receiver, ['loan.created']);
      await createLoan(apiKey.key);
      await receiver.waitFor((r) => r.length >= 1, 5000);
      for (const deadline = Date.now() + 5000; ; await new Promise((resolve) => setTimeout(resolve, 50))) {
        const { rows } = await database.db.query<{ active: boolean }>('SELECT active FROM webhook_endpoints WHERE account_id = $1 AND id = $2', [account.id, endpointId]);
        if (!rows[0]!.active) break;
        assert.ok(Date.now() < deadline, 'the endpoint is disabled');
      }
      await createLoan(apiKey.key, 'second');
      const stored = await database.db.query('SELECT 1 FROM webhook_events WHERE account_id = $1', [account.id]);
      assert.equal(stored.rows.length, 1, 'nothing more is captured for a disabled endpoint');
    } finally {
      await receiver.close();
    }
  });
});
