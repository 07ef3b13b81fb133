import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createWebhookEndpoint, webhookSettingsFromEnv } from '../../app/webhooks/index.js';
import { UserInputError } from '../../app/errors.js';
import { startTestServer, type TestServer } from '../support/http.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';
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

const endpointCount = async (accountId: string): Promise<number> =>
  Number((await database.db.query<{ n: string }>('SELECT count(*) AS n FROM webhook_endpoints WHERE account_id = $1', [accountId])).rows[0]!.n);

describe('Webhooks as an integrating developer: adding endpoints', () => {
  it('refuses a URL holding a control character (tab, newline, NUL) with a 400 naming the url, stores nothing, and logs no secret', async () => {
    const { account, email } = await createAccountWithAdmin(database.db, PASSWORD);
    const client = new DashboardClient(server.url);
    assert.equal((await client.logIn(email, PASSWORD)).status, 303);
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
