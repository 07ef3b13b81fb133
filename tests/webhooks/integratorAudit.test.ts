import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { createWebhookEndpoint, redeliverWebhookEvent, removeWebhookEndpoint, WebhookWorker, webhookSettingsFromEnv } from '../../app/webhooks/index.js';
import { UserInputError } from '../../app/errors.js';
import { startTestServer, type TestServer } from '../support/http.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';
import { startWebhookReceiver } from '../support/webhookReceiver.js';
import { createAccountWithAdmin, DashboardClient } from '../dashboard/dashboardClient.js';

/**
 * What a developer integrating a lender's systems meets when adding endpoints (the audit of
 * webhooks "as a user", session 37): a bad endpoint URL is a 400 naming the url and stores
 * nothing, and never a 500 whose log line carries the new signing secret.
 */
let database: TestDatabase;
let server: TestServer;
const PASSWORD = 'correct horse battery';

before(async () => {
  database = await openTestDatabase();
  // Private destinations refused, as in production: the URLs below name a public IP literal, so no DNS is needed.
  server = await startTestServer(database.db, { webhooks: webhookSettingsFromEnv({}) });
});
after(async () => {
  await server?.close();
  await database?.close();
});

/** A logged-in dashboard client of a new account. */
async function dashboardOfNewAccount(): Promise<{ accountId: string; client: DashboardClient }> {
  const { account, email } = await createAccountWithAdmin(database.db, PASSWORD);
  const client = new DashboardClient(server.url);
  assert.equal((await client.logIn(email, PASSWORD)).status, 303);
  return { accountId: account.id, client };
}

/** The `_once` token of the first form posting to `action` on a page. */
function onceToken(page: string, action: string): string {
  const form = new RegExp(`<form[^>]* action="${action.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"[^>]*>([\\s\\S]*?)</form>`).exec(page);
  assert.ok(form, `a form posting to ${action}`);
  return /name="_once" value="([^"]+)"/.exec(form[1]!)?.[1] ?? '';
}

const endpointCount = async (accountId: string): Promise<number> =>
  Number((await database.db.query<{ n: string }>('SELECT count(*) AS n FROM webhook_endpoints WHERE account_id = $1', [accountId])).rows[0]!.n);

describe('Webhooks as an integrating developer: adding endpoints', () => {
  it('refuses a URL holding a control character (tab, newline, NUL) with a 400 naming the url, stores nothing, and logs no secret', async () => {
    const { accountId, client } = await dashboardOfNewAccount();
    const account = { id: accountId };
    // The URL parser drops a tab or a newline (and percent-encodes a NUL): the text stored and listed would not be the URL called.
    for (const url of ['http://1.1.1.1/ho\u0009oks', 'http://1.1.1.1/ho\nx', 'http://1.1.1.1/ho\rx']) {
      const page = await client.get('/dashboard/settings/webhooks');
      const _once = /name="_once" value="([^"]+)"/.exec(page.text)?.[1] ?? '';
      const answer = await client.postForm('/dashboard/settings/webhooks', { _once, url, description: 'control characters', events: 'loan.created' });
      assert.equal(answer.status, 400, `${JSON.stringify(url)}: ${answer.text.slice(0, 300)}`);
      assert.match(answer.text, /url must not contain control characters/);
      assert.doesNotMatch(answer.text, /whsec_/);
      // The same through the use case the CLI's `webhook add` calls.
      await assert.rejects(
        createWebhookEndpoint(database.db, account.id, { url }, { knownEventTypes: new Set(['loan.created']), allowPrivate: true }),
        (error: unknown) => error instanceof UserInputError && error.status === 400 && /url must not contain control characters/.test(error.message),
      );
    }
    // A NUL (which the dashboard refuses in any field, and no command line can carry) reaches the
    // use case only from code: a 400 too, not PostgreSQL's error with the new secret among its bound values.
    await assert.rejects(
      createWebhookEndpoint(database.db, account.id, { url: 'http://1.1.1.1/hooks\u0000x' }, { knownEventTypes: new Set(), allowPrivate: false }),
      (error: unknown) => error instanceof UserInputError && error.status === 400 && /url must not contain control characters/.test(error.message),
    );
    assert.equal(await endpointCount(account.id), 0, 'nothing stored');
    assert.doesNotMatch(JSON.stringify(server.logs), /whsec_/, 'no signing secret in the log');
    assert.equal(server.logs.filter((line) => line.msg === 'internal error').length, 0, 'no internal error');
  });
});

describe('Webhooks as an integrating developer: redelivering, disabling, removing endpoints', () => {
  it("an endpoint page's Redeliver sends the event again to that endpoint only, not to the account's other endpoints", async () => {
    const staging = await startWebhookReceiver();
    const production = await startWebhookReceiver();
    const settings = { ...webhookSettingsFromEnv({}), allowPrivate: true, pollMs: 50, timeoutMs: 2000 };
    const worker = new WebhookWorker(database.db, settings, { warn: () => undefined });
    worker.start();
    try {
      const { accountId, client } = await dashboardOfNewAccount();
      const known = { knownEventTypes: new Set(['person.created']), allowPrivate: true };
      const toStaging = await createWebhookEndpoint(database.db, accountId, { url: staging.url, eventTypes: ['person.created'] }, known);
      const toProduction = await createWebhookEndpoint(database.db, accountId, { url: production.url, eventTypes: ['person.created'] }, known);
      await database.db.query(`INSERT INTO people (account_id, name) VALUES ($1, 'Redelivered to staging')`, [accountId]);
      await staging.waitFor((received) => received.length === 1);
      await production.waitFor((received) => received.length === 1);
      const eventId = (new Webhook(toStaging.secret).verify(staging.received[0]!.body, staging.received[0]!.headers) as { id: string }).id;

      const path = `/dashboard/settings/webhooks/${toStaging.id}`;
      const page = await client.get(path);
      const answer = await client.postForm(`${path}/redeliver`, { _once: onceToken(page.text, `${path}/redeliver`), event_id: eventId });
      assert.equal(answer.status, 303, answer.text.slice(0, 300));
      await staging.waitFor((received) => received.length === 2);
      assert.equal(staging.received[1]!.headers['webhook-id'], eventId, 'the same webhook-id');
      new Webhook(toStaging.secret).verify(staging.received[1]!.body, staging.received[1]!.headers);
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal(production.received.length, 1, 'the other endpoint is not sent the event again');
      const other = await database.db.query<{ status: string; attempts: number }>('SELECT status, attempts FROM webhook_deliveries WHERE endpoint_id = $1', [toProduction.id]);
      assert.deepEqual(other.rows.map((row) => [row.status, row.attempts]), [['succeeded', 1]]);

      // An event the endpoint was never sent (another endpoint's) is refused for it, naming why; nothing queued.
      const onlyLoans = await createWebhookEndpoint(database.db, accountId, { url: production.url, eventTypes: ['loan.created'] }, { knownEventTypes: new Set(['loan.created']), allowPrivate: true });
      await assert.rejects(
        redeliverWebhookEvent(database.db, eventId, accountId, onlyLoans.id),
        (error: unknown) => error instanceof UserInputError && error.status === 409 && /was not sent to this endpoint/.test(error.message),
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(production.received.length, 1);
    } finally {
      await worker.stop();
      await staging.close();
      await production.close();
    }
  });

  it('a disabled endpoint is sent nothing more: its delivery waiting for a retry fails when due; enabled again, Redeliver sends it', async () => {
    const receiver = await startWebhookReceiver();
    receiver.respond = () => 500;
    const settings = { ...webhookSettingsFromEnv({}), allowPrivate: true, pollMs: 50, timeoutMs: 2000, retryBaseMs: 1500, retryMaxMs: 1500, maxAttempts: 8 };
    const worker = new WebhookWorker(database.db, settings, { warn: () => undefined });
    worker.start();
    try {
      const { accountId, client } = await dashboardOfNewAccount();
      const endpoint = await createWebhookEndpoint(database.db, accountId, { url: receiver.url, eventTypes: ['person.created'] }, { knownEventTypes: new Set(['person.created']), allowPrivate: true });
      await database.db.query(`INSERT INTO people (account_id, name) VALUES ($1, 'Waiting for a retry')`, [accountId]);
      await receiver.waitFor((received) => received.length === 1);
      const eventId = receiver.received[0]!.headers['webhook-id']!;
      const path = `/dashboard/settings/webhooks/${endpoint.id}`;
      await client.get(path);
      assert.equal((await client.postForm(`${path}/disable`, {})).status, 303);
      const delivery = async (): Promise<{ status: string; last_error: string | null }> =>
        (await database.db.query<{ status: string; last_error: string | null }>('SELECT status, last_error FROM webhook_deliveries WHERE endpoint_id = $1', [endpoint.id])).rows[0]!;
      for (const deadline = Date.now() + 10_000; (await delivery()).status === 'pending'; await new Promise((resolve) => setTimeout(resolve, 50))) {
        assert.ok(Date.now() < deadline, 'the waiting delivery is settled once due');
      }
      assert.deepEqual(await delivery(), { status: 'failed', last_error: 'the endpoint is disabled' });
      assert.equal(receiver.received.length, 1, 'nothing more was sent to the disabled endpoint');
      // Nothing is captured for it while it is disabled.
      await database.db.query(`INSERT INTO people (account_id, name) VALUES ($1, 'Written while disabled')`, [accountId]);

      receiver.respond = () => 200;
      await client.get(path);
      assert.equal((await client.postForm(`${path}/enable`, {})).status, 303);
      const page = await client.get(path);
      assert.match(page.text, /the endpoint is disabled/, 'the page shows why the delivery failed');
      const answer = await client.postForm(`${path}/redeliver`, { _once: onceToken(page.text, `${path}/redeliver`), event_id: eventId });
      assert.equal(answer.status, 303, answer.text.slice(0, 300));
      await receiver.waitFor((received) => received.length === 2);
      assert.equal(receiver.received[1]!.headers['webhook-id'], eventId);
      new Webhook(endpoint.secret).verify(receiver.received[1]!.body, receiver.received[1]!.headers);
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(receiver.received.length, 2, 'the person written while it was disabled is not sent');
      assert.equal((await delivery()).status, 'succeeded');
    } finally {
      await worker.stop();
      await receiver.close();
    }
  });

  it('removing an endpoint while an attempt to it is in flight drops the attempt quietly: no warning, nothing left', async () => {
    const receiver = await startWebhookReceiver();
    receiver.delayMs = 700;
    const warnings: string[] = [];
    const settings = { ...webhookSettingsFromEnv({}), allowPrivate: true, pollMs: 50, timeoutMs: 3000 };
    const worker = new WebhookWorker(database.db, settings, { warn: (_object, message) => warnings.push(message) });
    worker.start();
    try {
      const { accountId } = await dashboardOfNewAccount();
      const endpoint = await createWebhookEndpoint(database.db, accountId, { url: receiver.url, eventTypes: ['person.created'] }, { knownEventTypes: new Set(['person.created']), allowPrivate: true });
      await database.db.query(`INSERT INTO people (account_id, name) VALUES ($1, 'Removed mid-flight')`, [accountId]);
      await receiver.waitFor((received) => received.length === 1);
      await removeWebhookEndpoint(database.db, endpoint.id, accountId);
      for (const deadline = Date.now() + 5000; worker.inFlight > 0; await new Promise((resolve) => setTimeout(resolve, 20))) assert.ok(Date.now() < deadline);
      assert.deepEqual(warnings, [], 'the attempt to a removed endpoint is not a failure to record');
      const left = await database.db.query<{ n: string }>('SELECT (SELECT count(*) FROM webhook_deliveries WHERE account_id = $1) + (SELECT count(*) FROM webhook_attempts WHERE account_id = $1) AS n', [accountId]);
      assert.equal(left.rows[0]!.n, '0');
    } finally {
      await worker.stop();
      await receiver.close();
    }
  });

  it('a redelivery asked for while an attempt is in flight is sent at once, and the worker counts and waits for both attempts', async () => {
    const receiver = await startWebhookReceiver();
    receiver.delayMs = 700;
    const settings = { ...webhookSettingsFromEnv({}), allowPrivate: true, pollMs: 50, timeoutMs: 3000 };
    const worker = new WebhookWorker(database.db, settings, { warn: () => undefined });
    worker.start();
    try {
      const { accountId } = await dashboardOfNewAccount();
      const endpoint = await createWebhookEndpoint(database.db, accountId, { url: receiver.url, eventTypes: ['person.created'] }, { knownEventTypes: new Set(['person.created']), allowPrivate: true });
      await database.db.query(`INSERT INTO people (account_id, name) VALUES ($1, 'Redelivered mid-flight')`, [accountId]);
      await receiver.waitFor((received) => received.length === 1);
      const eventId = receiver.received[0]!.headers['webhook-id']!;
      assert.equal(await redeliverWebhookEvent(database.db, eventId, accountId, endpoint.id), 1);
      await receiver.waitFor((received) => received.length === 2, 5000);
      assert.equal(receiver.received[1]!.headers['webhook-id'], eventId);
      // The worker counts both attempts of the one delivery as in flight until each is recorded.
      for (const deadline = Date.now() + 5000; worker.inFlight > 0; await new Promise((resolve) => setTimeout(resolve, 20))) assert.ok(Date.now() < deadline);
      const attempts = await database.db.query<{ attempt: number; status_code: number }>('SELECT attempt, status_code FROM webhook_attempts WHERE account_id = $1 ORDER BY attempt', [accountId]);
      assert.deepEqual(attempts.rows.map((row) => [row.attempt, row.status_code]), [[1, 200], [2, 200]], 'both attempts are logged');
    } finally {
      await worker.stop();
      await receiver.close();
    }
  });
});
