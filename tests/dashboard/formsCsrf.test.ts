import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createApiKey } from '../../app/apiKeys.js';
import { createWebhookEndpoint, WebhookWorker, webhookSettingsFromEnv } from '../../app/webhooks/index.js';
import { accountFingerprint } from '../support/fingerprint.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';
import { startTestServer, type TestServer } from '../support/http.js';
import { createAccountWithAdmin, DashboardClient } from './dashboardClient.js';

/**
 * Issue 17, done-when 4 (the forms of Settings): every write form of the dashboard refuses a
 * missing token, a wrong one and another session's with 403 and writes nothing (the account's
 * fingerprint — a row count and checksum of every tenant table — is unchanged); the same form
 * with the page's own token does its write, so each refusal is the token's doing.
 */
const PASSWORD = 'forms csrf password';

let database: TestDatabase;
let server: TestServer;
let accountId: string;
let client: DashboardClient;
let otherSession: DashboardClient;

before(async () => {
  database = await openTestDatabase();
  server = await startTestServer(database.db, { webhooks: webhookSettingsFromEnv({ WEBHOOK_ALLOW_PRIVATE: '1' }) });
  const { account, email } = await createAccountWithAdmin(database.db, PASSWORD);
  accountId = account.id;
  client = new DashboardClient(server.url);
  assert.equal((await client.logIn(email, PASSWORD)).status, 303);
  await client.get('/dashboard/settings/api-keys');
  // A second admin session of the same account: its token must not open the first's forms.
  otherSession = new DashboardClient(server.url);
  assert.equal((await otherSession.logIn(email, PASSWORD)).status, 303);
  await otherSession.get('/dashboard/settings/api-keys');
  assert.ok(client.csrfToken && otherSession.csrfToken && client.csrfToken !== otherSession.csrfToken);
});

after(async () => {
  await server?.close();
  await database?.close();
});

interface WriteForm {
  readonly name: string;
  /** The form's action and fields, made afresh for each attempt (a record to act on, say). */
  prepare(): Promise<{ path: string; fields: Record<string, string> }>;
}

const forms: readonly WriteForm[] = [
  { name: 'create an API key', prepare: async () => ({ path: '/dashboard/settings/api-keys', fields: { name: 'csrf probe', role: 'admin' } }) },
  {
    name: 'deactivate an API key',
    prepare: async () => {
      const { prefix } = await createApiKey(database.db, accountId, 'to deactivate');
      return { path: `/dashboard/settings/api-keys/${prefix}/deactivate`, fields: {} };
    },
  },
  {
    name: 'change the servicing settings',
    prepare: async () => {
      // Opened first, as a browser would: the account then has its default product, and the form changes one setting.
      await client.get('/dashboard/settings/servicing');
      return { path: '/dashboard/settings/servicing', fields: { day_count: 'actual/365' } };
    },
  },
  { name: 'change the lender profile', prepare: async () => ({ path: '/dashboard/settings/profile', fields: { phone: '+1 312 555 0100' } }) },
  { name: 'add a webhook endpoint', prepare: async () => ({ path: '/dashboard/settings/webhooks', fields: { url: 'http://127.0.0.1:9/hook', description: 'csrf probe', events: 'loan.created' } }) },
  {
    name: 'disable a webhook endpoint',
    prepare: async () => ({ path: `/dashboard/settings/webhooks/${(await newEndpoint(true)).id}/disable`, fields: {} }),
  },
  {
    name: 'enable a webhook endpoint',
    prepare: async () => ({ path: `/dashboard/settings/webhooks/${(await newEndpoint(false)).id}/enable`, fields: {} }),
  },
  {
    name: 'redeliver a webhook event',
    prepare: async () => {
      const endpoint = await newEndpoint(true, ['person.created']);
      await database.db.query(`INSERT INTO people (account_id, name) VALUES ($1, 'Event maker')`, [accountId]);
      // The write stores one outbox row; a worker fans it out to a delivery per endpoint (and
      // tries it once: port 9 refuses). Stopped before the test takes its fingerprint.
      const worker = new WebhookWorker(database.db, webhookSettingsFromEnv({}), { warn: () => undefined });
      worker.start();
      const deliveries = () => database.db.query<{ event_id: string }>('SELECT event_id FROM webhook_deliveries WHERE account_id = $1 AND endpoint_id = $2', [accountId, endpoint.id]);
      let rows: { event_id: string }[] = [];
      try {
        for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 20))) {
          rows = (await deliveries()).rows;
          if (rows.length) break;
        }
      } finally {
        await worker.stop();
      }
      assert.equal(rows.length, 1, 'the person’s event is fanned out to the endpoint');
      return { path: `/dashboard/settings/webhooks/${endpoint.id}/redeliver`, fields: { event_id: rows[0]!.event_id } };
    },
  },
];

async function newEndpoint(active: boolean, eventTypes: string[] = ['loan.created']): Promise<{ id: string }> {
  const created = await createWebhookEndpoint(database.db, accountId, { url: 'http://127.0.0.1:9/hook', description: '', eventTypes }, { knownEventTypes: new Set(server.engines.engine.metadata.eventTypes.keys()), allowPrivate: true });
  if (!active) await database.db.query('UPDATE webhook_endpoints SET active = false WHERE id = $1', [created.id]);
  return created;
}

describe('Dashboard write forms and their CSRF token', () => {
  for (const form of forms) {
    it(`${form.name}: refused without the token, with a wrong one or another session’s, nothing written; done with the page’s own`, async () => {
      const { path, fields } = await form.prepare();
      const before = await accountFingerprint(database.db, accountId);
      for (const [what, token] of [
        ['no token', null],
        ['an empty token', ''],
        ['a made-up token', 'A'.repeat(43)],
        ['another session’s token', otherSession.csrfToken!],
      ] as const) {
        const reply = await client.postForm(path, { ...fields, _csrf: token });
        assert.equal(reply.status, 403, `${what}: ${reply.status}`);
        assert.match(reply.text, /did not carry this session’s security token/);
        assert.deepEqual(await accountFingerprint(database.db, accountId), before, `${what}: nothing was written`);
      }
      const done = await client.postForm(path, fields);
      assert.equal(done.status, 303, `with the page’s token the form is accepted, Post/Redirect/Get (${done.status})`);
      assert.notDeepEqual(await accountFingerprint(database.db, accountId), before, 'and it writes');
    });
  }

  it('adding a webhook endpoint is Post/Redirect/Get: 303, then its secret shown exactly once, in the page the POST redirects to', async () => {
    const url = `http://127.0.0.1:9/shown-once-${process.pid}`;
    const posted = await client.postForm('/dashboard/settings/webhooks', { url, description: 'shown once', events: 'loan.created' });
    assert.equal(posted.status, 303, posted.text);
    const [endpoint, ...more] = (await database.db.query<{ id: string; secret: string }>('SELECT id, secret FROM webhook_endpoints WHERE account_id = $1 AND url = $2', [accountId, url])).rows;
    assert.ok(endpoint && more.length === 0, 'exactly one endpoint was added');
    assert.equal(posted.location, `/dashboard/settings/webhooks?created=${endpoint.id}`);
    assert.doesNotMatch(posted.text, /whsec_/, 'the POST answer itself holds no secret');
    const flash = posted.headers.getSetCookie().find((line) => line.startsWith('loanql_new_webhook='));
    assert.ok(flash, 'the secret travels in a one-time cookie');
    assert.match(flash, /; Path=\/dashboard\/settings\/webhooks(;|$)/);
    assert.match(flash, /; HttpOnly/);
    assert.ok(!flash.includes(endpoint.secret) && !flash.includes(endpoint.secret.slice('whsec_'.length)), 'the cookie does not hold the secret in clear');

    // Another session of the same account that somehow had the cookie cannot read it.
    otherSession.cookies.set('loanql_new_webhook', client.cookies.get('loanql_new_webhook')!);
    assert.doesNotMatch((await otherSession.get(posted.location!)).text, /whsec_/, 'another session cannot open the flash');
    otherSession.cookies.delete('loanql_new_webhook');

    const shown = await client.follow(posted);
    assert.equal(shown.status, 200);
    assert.equal(shown.text.split(endpoint.secret).length - 1, 1, 'the page after the redirect shows the secret once');
    assert.equal((shown.text.match(/whsec_/g) ?? []).length, 1, 'and no other secret');
    assert.equal(client.cookies.has('loanql_new_webhook'), false, 'showing it cleared the cookie');

    const reload = await client.get(posted.location!);
    assert.equal(reload.status, 200);
    assert.doesNotMatch(reload.text, /whsec_/, 'a reload does not show the secret again');
    assert.match(reload.text, /was added\. Its signing secret was shown only once/);
    assert.equal((await database.db.query('SELECT 1 FROM webhook_endpoints WHERE account_id = $1 AND url = $2', [accountId, url])).rows.length, 1, 'the reload added nothing');
  });

  it('logging out needs the token too: without it the session stays open', async () => {
    const reply = await client.postForm('/dashboard/logout', { _csrf: null });
    assert.equal(reply.status, 403);
    assert.equal((await client.get('/dashboard')).status, 200, 'still logged in');
  });
});
