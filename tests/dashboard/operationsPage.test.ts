import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createApiKey } from '../../app/apiKeys.js';
import { configFromEnv } from '../../app/config.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';
import { startTestServer, type TestServer } from '../support/http.js';
import { createAccountWithAdmin, DashboardClient } from './dashboardClient.js';

/**
 * The Operations page over plain HTTP (operationsBrowser.test.ts walks it in Chromium): the
 * Prometheus scrape configuration it offers points at the port the service listens on (`PORT`;
 * it said `loanql.example:3000` whatever the port, and the default is 8080), and its counts are
 * grouped as every other page's numbers are (`175,000`, not `175000`; dashboard/README.md).
 */
const PASSWORD = 'operations page password';
const defaults = configFromEnv({});

describe('dashboard: the Operations page', () => {
  let database: TestDatabase;
  let server: TestServer;
  let client: DashboardClient;
  let accountId: string;

  before(async () => {
    database = await openTestDatabase();
    server = await startTestServer(database.db, {
      port: 9137,
      operations: { ...defaults.operations, metricsToken: 'operations-page-token-0123456789', admission: { ...defaults.operations.admission!, budget: 175_000, queueWaitMs: 5_000 } },
    });
    const { email, account } = await createAccountWithAdmin(database.db, PASSWORD);
    accountId = account.id;
    client = new DashboardClient(server.url);
    assert.equal((await client.logIn(email, PASSWORD)).status, 303);
  });

  after(async () => {
    await server?.close();
    await database?.close();
  });

  it('offers a scrape target on the service port and groups its counts', async () => {
    const page = await client.get('/dashboard/operations');
    assert.equal(page.status, 200);
    assert.match(page.text, /- targets: \['loanql\.example:9137'\]/);
    assert.doesNotMatch(page.text, /:3000/);
    assert.match(page.text, /queries costing under 1,000 are admitted at once/);
    assert.match(page.text, /<dt>Budget<\/dt><dd>175,000 \(/);
    assert.match(page.text, /each at most 5,000 ms/);
  });

  it('says, within an hour of a start, that its request figures cover only the time since (they said "no requests in the last hour" after a restart)', async () => {
    const page = await client.get('/dashboard/operations');
    assert.match(page.text, /No requests from your account in the last hour\. This service process started less than a minute ago and keeps these figures in memory: they cover only that time, not requests before a restart\./);
  });

  it("shows a key whose role the metadata no longer has as refused, not as under the default limit (it said \"no limit\"; the API answers such a key 403)", async () => {
    await createApiKey(database.db, accountId, 'old partner feed', { role: 'partner_feed_removed', variables: new Map() });
    await createApiKey(database.db, accountId, 'ops admin key');
    const page = await client.get('/dashboard/operations');
    const row = (name: string): string => new RegExp(`<tr><th scope="row">${name}</th>.*?</tr>`).exec(page.text)?.[0] ?? '';
    assert.match(row('old partner feed'), /<td>none: the metadata has no such role, so the API refuses this key \(403\)<\/td>/);
    assert.match(row('ops admin key'), /<td>no limit<\/td>/, 'an admin key has the default (unset here)');
  });
});
