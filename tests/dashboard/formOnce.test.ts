import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { TestDatabase } from '../support/testDatabase.js';
import { startTestServer, type TestServer } from '../support/http.js';
import { openSeededTestDatabase, type SeededAccount } from '../support/seededService.js';
import { DashboardClient, onceToken, type Reply } from './dashboardClient.js';
import { createWebhookEndpoint, WebhookWorker, webhookSettingsFromEnv } from '../../app/webhooks/index.js';

/**
 * The forms whose second POST would write a second record — a payment, a payoff, a task, a
 * comment, a new loan — and the remittance mark (refused the second time) carry a one-time token (`_once`, `dashboard/formOnce.ts`): the same form
 * sent again, one after the other or at the same moment, writes once and every submission is
 * answered with the first's outcome (the same 303); sent again with other values it is a 409
 * page, nothing written; a refused submission releases its token. Settings' forms too: a new API
 * key and a new webhook endpoint (created once; the second answer's page says the secret was
 * shown once, as a reload of the first does) and an event's "Redeliver" (queued once). The browser's side (the
 * buttons disabled once submitted, a double click in Chromium) is formGuardBrowser.test.ts.
 */
const PASSWORD = 'correct horse battery'; // seedAccount's admin password

let database: TestDatabase;
let server: TestServer;
let seeded: SeededAccount;
let client: DashboardClient;
let loan = '';

const count = async (sql: string, values: unknown[]): Promise<number> => Number((await database.db.query<{ n: string }>(sql, values)).rows[0]!.n);
const payments = () => count('SELECT count(*) AS n FROM payments WHERE account_id = $1 AND loan_id = $2', [seeded.account.id, loan]);

before(async () => {
  ({ database, seeded: [seeded] } = await openSeededTestDatabase([{ scale: 0.01 }]));
  // Private webhook destinations allowed: the endpoints below point at 127.0.0.1:9, which refuses.
  server = await startTestServer(database.db, { webhooks: webhookSettingsFromEnv({ WEBHOOK_ALLOW_PRIVATE: '1' }) });
  client = new DashboardClient(server.url);
  assert.equal((await client.logIn(`admin@${seeded.account.slug}.test`, PASSWORD)).status, 303);
});

after(async () => {
  await server?.close();
  await database?.close();
});

describe('A form sent twice writes once', () => {
  it('creates one loan from a new-loan form sent twice, both answered with the same loan', async () => {
    const form = await client.get('/dashboard/loans/new');
    const _once = onceToken(form, '/dashboard/loans');
    const fields = { _once, Name: 'Once only bridge', Amount: '100000', Rate: '12', Term: '12', Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' };
    const first = await client.postForm('/dashboard/loans', fields);
    const second = await client.postForm('/dashboard/loans', fields);
    assert.equal(first.status, 303, first.text.slice(0, 300));
    assert.equal(second.status, 303, second.text.slice(0, 300));
    assert.equal(second.location, first.location, 'the second is answered with the first’s loan');
    assert.match(first.location!, /^\/dashboard\/loans\/[0-9a-f-]{36}\?done=created$/);
    loan = /([0-9a-f-]{36})/.exec(first.location!)![1]!;
    assert.equal(await count(`SELECT count(*) AS n FROM loans WHERE account_id = $1 AND name = 'Once only bridge'`, [seeded.account.id]), 1);
    assert.match((await client.follow(second)).text, /role="status">Loan created\.<\/div>/);
  });

  it('posts one payment when the payment form is sent twice, one after the other and at the same moment', async () => {
    const before = await payments();
    let page = await client.get(`/dashboard/loans/${loan}`);
    const fields = { _once: onceToken(page, `/dashboard/loans/${loan}/payments`), date: '2026-02-15', amount: '8,884.88', type: 'regular', method: 'ach' };
    const first = await client.postForm(`/dashboard/loans/${loan}/payments`, fields);
    const second = await client.postForm(`/dashboard/loans/${loan}/payments`, fields);
    assert.deepEqual([first.status, second.status], [303, 303]);
    assert.equal(second.location, `/dashboard/loans/${loan}?done=payment-posted`);
    assert.equal(second.location, first.location);
    assert.equal(await payments(), before + 1);

    page = await client.get(`/dashboard/loans/${loan}`);
    const together = { ...fields, _once: onceToken(page, `/dashboard/loans/${loan}/payments`), date: '2026-03-15' };
    const replies = await Promise.all([1, 2, 3].map(() => client.postForm(`/dashboard/loans/${loan}/payments`, together)));
    assert.deepEqual(replies.map((reply) => [reply.status, reply.location]), replies.map(() => [303, `/dashboard/loans/${loan}?done=payment-posted`]));
    assert.equal(await payments(), before + 2, 'three at once wrote one');
    assert.match((await client.follow(replies[2]!)).text, /role="status">Payment posted\.<\/div>/);
  });

  it('refuses the same form sent again with other values (409), writing nothing', async () => {
    const page = await client.get(`/dashboard/loans/${loan}`);
    const _once = onceToken(page, `/dashboard/loans/${loan}/payments`);
    const first = await client.postForm(`/dashboard/loans/${loan}/payments`, { _once, date: '2026-04-15', amount: '100.00', type: 'principal', method: 'check' });
    assert.equal(first.status, 303);
    const before = await payments();
    const changed = await client.postForm(`/dashboard/loans/${loan}/payments`, { _once, date: '2026-04-15', amount: '200.00', type: 'principal', method: 'check' });
    assert.equal(changed.status, 409);
    assert.match(changed.text, /<h1>This form was already submitted<\/h1>/);
    assert.match(changed.text, /nothing was written this time/);
    assert.equal(await payments(), before);
  });

  it('adds one task and one comment from forms sent twice', async () => {
    const page = await client.get(`/dashboard/loans/${loan}`);
    const task = { _once: onceToken(page, `/dashboard/loans/${loan}/tasks`), name: 'Call the borrower once', date_due: '' };
    const comment = { _once: onceToken(page, `/dashboard/loans/${loan}/comments`), text: 'Said only once' };
    for (let time = 0; time < 2; time += 1) {
      assert.equal((await client.postForm(`/dashboard/loans/${loan}/tasks`, task)).location, `/dashboard/loans/${loan}?done=task-added`);
      assert.equal((await client.postForm(`/dashboard/loans/${loan}/comments`, comment)).location, `/dashboard/loans/${loan}?done=comment-added`);
    }
    assert.equal(await count(`SELECT count(*) AS n FROM tasks WHERE account_id = $1 AND loan_id = $2 AND name = 'Call the borrower once'`, [seeded.account.id, loan]), 1);
    assert.equal(await count(`SELECT count(*) AS n FROM comments WHERE account_id = $1 AND loan_id = $2 AND text = 'Said only once'`, [seeded.account.id, loan]), 1);
  });

  it('releases the token of a refused submission: corrected, the same form is written', async () => {
    const page = await client.get(`/dashboard/loans/${loan}`);
    const _once = onceToken(page, `/dashboard/loans/${loan}/comments`);
    const refused = await client.postForm(`/dashboard/loans/${loan}/comments`, { _once, text: '   ' });
    assert.equal(refused.status, 400);
    assert.match(refused.text, /Comment: write something first\./);
    const corrected = await client.postForm(`/dashboard/loans/${loan}/comments`, { _once, text: 'Written after a refusal' });
    assert.equal(corrected.status, 303);
    assert.equal(await count(`SELECT count(*) AS n FROM comments WHERE account_id = $1 AND loan_id = $2 AND text = 'Written after a refusal'`, [seeded.account.id, loan]), 1);
  });

  it('posts one payoff when “Post this payoff” is sent twice; the second is told the first’s outcome, not “nothing to pay off”', async () => {
    const quoted = await client.get(`/dashboard/loans/${loan}?quote_date=2026-05-15`);
    const form = /<form class="inline-form post-payoff" method="post" action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/.exec(quoted.text)!;
    const fields = Object.fromEntries([...form[2]!.matchAll(/<input type="hidden" name="([a-z_]+)" value="([^"]*)">/g)].map((match) => [match[1]!, match[2]!]));
    assert.ok(fields._once, 'the payoff form carries a one-time token');
    const before = await payments();
    const replies = await Promise.all([1, 2].map(() => client.postForm(form[1]!, { ...fields, method: 'wire' })));
    assert.deepEqual(replies.map((reply) => [reply.status, reply.location]), replies.map(() => [303, `/dashboard/loans/${loan}?done=payoff-posted-closed`]));
    assert.equal(await payments(), before + 1);
    assert.equal(await count(`SELECT count(*) AS n FROM payments WHERE account_id = $1 AND loan_id = $2 AND type = 'payoff'`, [seeded.account.id, loan]), 1);
  });

  it('marks a remittance once when “Mark remitted” is sent twice at once; both are told it was marked, not “remitted already”', async () => {
    const _once = 'remit-once-0123456789abcdef';
    const fields = { _once, from: '2026-01-01', to: '2026-01-31' };
    const replies = await Promise.all([1, 2].map(() => client.postForm('/dashboard/remittances', fields)));
    assert.deepEqual(replies.map((reply) => [reply.status, reply.location]), replies.map(() => [303, '/dashboard/remittances?from=2026-01-01&to=2026-01-31&done=remitted']));
    assert.equal(await count(`SELECT count(*) AS n FROM remittances WHERE account_id = $1 AND period_from = '2026-01-01'`, [seeded.account.id]), 1);
    const again = await client.postForm('/dashboard/remittances', { ...fields, _once: 'remit-once-another-token-0001' });
    assert.equal(again.status, 409, 'a new form for the same period is still refused');
    assert.match(again.text, /was remitted already/);
  });

  it('still writes a form without a token (an older page), and refuses a token it did not make', async () => {
    const before = await payments();
    const plain = await client.postForm(`/dashboard/loans/${loan}/comments`, { text: 'No token at all' });
    assert.equal(plain.status, 303);
    const odd = await client.postForm(`/dashboard/loans/${loan}/comments`, { _once: 'not a token!', text: 'Odd token' });
    assert.equal(odd.status, 400);
    assert.match(odd.text, /one-time token is not one this dashboard makes/);
    assert.equal(await count(`SELECT count(*) AS n FROM comments WHERE account_id = $1 AND loan_id = $2 AND text = 'Odd token'`, [seeded.account.id, loan]), 0);
    assert.equal(await payments(), before);
  });
});

describe('Settings forms sent twice write once', () => {
  it('creates one API key from its form sent twice: the first answer shows the key, the second says it was shown once', async () => {
    const page = await client.get('/dashboard/settings/api-keys');
    const _once = onceToken(page, '/dashboard/settings/api-keys');
    // A refused submission (a blank name) releases the token: the corrected form is then written.
    const refused = await client.postForm('/dashboard/settings/api-keys', { _once, name: '  ', role: 'admin' });
    assert.equal(refused.status, 400);
    const fields = { _once, name: 'Key made once', role: 'admin' };
    const [first, second] = await Promise.all([client.postForm('/dashboard/settings/api-keys', fields), client.postForm('/dashboard/settings/api-keys', fields)]);
    assert.deepEqual([first!.status, second!.status], [303, 303]);
    assert.equal(second!.location, first!.location);
    assert.match(first!.location!, /^\/dashboard\/settings\/api-keys\?created=lq_/);
    assert.equal(await count(`SELECT count(*) AS n FROM api_keys WHERE account_id = $1 AND name = 'Key made once'`, [seeded.account.id]), 1);
    // Only one answer carried the new key's one-time cookie; its page shows the key, the other's says it was shown once.
    const flashes = [first!, second!].filter((reply) => reply.headers.getSetCookie().some((line) => line.startsWith('loanql_new_key=')));
    assert.equal(flashes.length, 1, 'one of the two answers carries the new key');
    const shown = await client.follow(flashes[0]!);
    assert.match(shown.text, /lq_[A-Za-z0-9_-]{20,}/);
    const other = await client.follow(flashes[0] === first ? second! : first!);
    assert.match(other.text, /was created\. It was shown only once and cannot be shown again/);
  });

  it('adds one webhook endpoint from its form sent twice', async () => {
    const page = await client.get('/dashboard/settings/webhooks');
    const url = `http://127.0.0.1:9/once-${process.pid}`;
    const fields = { _once: onceToken(page, '/dashboard/settings/webhooks'), url, description: 'made once', events: 'loan.created' };
    const first = await client.postForm('/dashboard/settings/webhooks', fields);
    const second = await client.postForm('/dashboard/settings/webhooks', fields);
    assert.deepEqual([first.status, second.status], [303, 303]);
    assert.equal(second.location, first.location);
    assert.equal(await count('SELECT count(*) AS n FROM webhook_endpoints WHERE account_id = $1 AND url = $2', [seeded.account.id, url]), 1);
    assert.equal(
      second.headers.getSetCookie().some((line) => line.startsWith('loanql_new_webhook=')),
      false,
      'the second answer carries no secret',
    );
    assert.match((await client.follow(first)).text, /whsec_/, 'the first answer’s page shows the secret');
    assert.match((await client.follow(second)).text, /was added\. Its signing secret was shown only once/);
  });

  it('queues an event again once when “Redeliver” is sent twice, even after the redelivery was sent', async () => {
    const endpoint = await createWebhookEndpoint(database.db, seeded.account.id, { url: 'http://127.0.0.1:9/redeliver-once', description: '', eventTypes: ['person.created'] }, { knownEventTypes: new Set(server.engines.engine.metadata.eventTypes.keys()), allowPrivate: true });
    await database.db.query(`INSERT INTO people (account_id, name) VALUES ($1, 'Redelivered once')`, [seeded.account.id]);
    // A worker fans the event out to the endpoint (and tries it once: port 9 refuses).
    const worker = new WebhookWorker(database.db, webhookSettingsFromEnv({}), { warn: () => undefined });
    worker.start();
    const delivery = () =>
      database.db.query<{ event_id: string; status: string; attempts: number }>('SELECT event_id, status, attempts FROM webhook_deliveries WHERE account_id = $1 AND endpoint_id = $2', [seeded.account.id, endpoint.id]);
    try {
      for (const deadline = Date.now() + 10_000; Date.now() < deadline && (await delivery()).rows.length === 0; ) await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      await worker.stop();
    }
    const [{ event_id } = { event_id: '' }] = (await delivery()).rows;
    assert.ok(event_id, 'the event reached the endpoint');
    const path = `/dashboard/settings/webhooks/${endpoint.id}`;
    const page = await client.get(path);
    const fields = { _once: onceToken(page, `${path}/redeliver`), event_id };
    const first = await client.postForm(`${path}/redeliver`, fields);
    assert.deepEqual([first.status, first.location], [303, `${path}?redelivered=1`]);
    assert.equal((await delivery()).rows[0]!.status, 'pending');
    // The redelivery is tried (as a worker would: one more attempt, failed) before the form arrives again.
    await database.db.query(`UPDATE webhook_deliveries SET status = 'failed', attempts = attempts + 1 WHERE account_id = $1 AND endpoint_id = $2`, [seeded.account.id, endpoint.id]);
    const second = await client.postForm(`${path}/redeliver`, fields);
    assert.deepEqual([second.status, second.location], [303, first.location]);
    assert.equal((await delivery()).rows[0]!.status, 'failed', 'the second submission queued nothing');
    assert.match((await client.follow(second)).text, /The event is queued for redelivery\./);
  });
});
