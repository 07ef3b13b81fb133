import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { assessFees } from '../../app/feeJob.js';
import { createWebhookEndpoint, WebhookWorker, webhookSettingsFromEnv, type WebhookSettings } from '../../app/webhooks/index.js';
import { createAccountWithKey, startTestServer, tokenHeader, type TestServer } from '../support/http.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';
import { installTestClock, setTestClock } from '../support/testClock.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.js';

/**
 * Issue 31, Done when 5: `fee.assessed`, `loan.delinquency_changed` (and `fee.waived`) reach a
 * webhook endpoint, signed, once per change — from the daily job and from a write; a job run
 * twice sends nothing more. The clock is `loanql.business_date` on PGlite's one session.
 */
let database: TestDatabase;
let server: TestServer;
let worker: WebhookWorker;
let receiver: WebhookReceiver;
const settings: WebhookSettings = { ...webhookSettingsFromEnv({}), allowPrivate: true, pollMs: 50, timeoutMs: 1000, retryBaseMs: 200, retryMaxMs: 500, maxAttempts: 6 };

before(async () => {
  database = await openTestDatabase();
  await installTestClock(database.db);
  server = await startTestServer(database.db);
  worker = new WebhookWorker(database.db, settings, { warn: () => undefined });
  worker.start();
  receiver = await startWebhookReceiver();
});
after(async () => {
  await worker?.stop();
  await receiver?.close();
  await server?.close();
  await database?.close();
});

// Every connection's business date (the service's pool on PostgreSQL): support/testClock.ts.
const clock = (day: string) => setTestClock(database.db, day);

describe('Webhooks: fee and delinquency events (issue 31)', () => {
  it('fee.assessed and loan.delinquency_changed from the job, fee.waived and loan.delinquency_changed from writes: signed, once per change', async () => {
    const { account, apiKey } = await createAccountWithKey(database.db);
    const types = ['fee.assessed', 'fee.waived', 'loan.delinquency_changed'];
    const endpoint = await createWebhookEndpoint(database.db, account.id, { url: receiver.url, eventTypes: types }, { knownEventTypes: new Set(types), allowPrivate: true });
    const graph = async (query: string, variables: Record<string, unknown>) => {
      const response = await fetch(`${server.url}/api/graph`, { method: 'POST', headers: { ...tokenHeader(apiKey.key), 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
      const body = (await response.json()) as { data?: any; errors?: unknown };
      assert.equal(body.errors, undefined, JSON.stringify(body.errors));
      return body.data;
    };
    await clock('2026-01-15');
    const created = await fetch(`${server.url}/api/loan`, {
      method: 'POST',
      headers: { ...tokenHeader(apiKey.key), 'content-type': 'application/json' },
      body: JSON.stringify({ Name: 'Elm St', Amount: 100000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' }),
    });
    assert.equal(created.status, 201);
    const loan = ((await created.json()) as { loan: { id: string } }).loan.id;

    const events = () => receiver.received.map((w) => new Webhook(endpoint.secret).verify(w.body, w.headers) as { type: string; data: { old: any; new: any } });
    await clock('2026-02-26');
    await assessFees(database.db, { accountSlug: account.slug });
    await receiver.waitFor((r) => r.length >= 2, 5000);
    await clock('2026-03-20');
    // no late fee falls due from 02-26 to 03-20: the loan is brought forward without a replay (0022)
    const [forward] = await assessFees(database.db, { accountSlug: account.slug });
    assert.deepEqual([forward!.loansReplayed, forward!.loansForwarded], [0, 1]);
    await assessFees(database.db, { accountSlug: account.slug });
    await receiver.waitFor((r) => r.length >= 3, 5000);
    // A write moves the bucket back: 10,000.00 on 03-20 leaves 5 days past due.
    await graph(`mutation ($loan: uuid!) { insert_payments_one(object: {loan_id: $loan, date: "2026-03-20", amount: "10000.00", method: "ach"}) { id } }`, { loan });
    const fee = (await graph(`query ($loan: uuid!) { fees(where: {loan_id: {_eq: $loan}}) { id } }`, { loan })).fees[0].id;
    await graph(`mutation ($fee: uuid!) { insert_fee_waivers_one(object: {fee_id: $fee, waived_by: "Pat", reason: "goodwill"}) { id } }`, { fee });
    await receiver.waitFor((r) => r.length >= 5, 5000);
    await new Promise((resolve) => setTimeout(resolve, 800));

    const got = events().map((e) =>
      e.type === 'loan.delinquency_changed'
        ? `${e.type} ${e.data.old.stored_delinquency_bucket} -> ${e.data.new.stored_delinquency_bucket} (${e.data.new.stored_days_past_due} days)`
        : e.type === 'fee.assessed'
          ? `${e.type} ${e.data.new.kind} ${e.data.new.date} ${e.data.new.amount}`
          : `${e.type} by ${e.data.new.waived_by}: ${e.data.new.reason}`,
    );
    assert.deepEqual(got.sort(), [
      'fee.assessed late 2026-02-26 444.24',
      'fee.waived by Pat: goodwill',
      'loan.delinquency_changed 1-29 -> 30-59 (33 days)',
      'loan.delinquency_changed 30-59 -> 1-29 (5 days)',
      'loan.delinquency_changed current -> 1-29 (11 days)',
    ]);
  });
});

describe('Webhooks: a late fee the replay moves, derives again or removes (fee.changed, fee.assessed, fee.removed)', () => {
  it('new fee settings move the fee (fee.changed); corrected terms derive it again under its id (fee.assessed, no removal); a payment dated back into its grace removes it', async () => {
    const { account, apiKey } = await createAccountWithKey(database.db);
    const types = ['fee.assessed', 'fee.changed', 'fee.removed'];
    const endpoint = await createWebhookEndpoint(database.db, account.id, { url: receiver.url, eventTypes: types }, { knownEventTypes: new Set(types), allowPrivate: true });
    const headers = { ...tokenHeader(apiKey.key), 'content-type': 'application/json' };
    const graph = async (query: string, variables: Record<string, unknown>) => {
      const response = await fetch(`${server.url}/api/graph`, { method: 'POST', headers, body: JSON.stringify({ query, variables }) });
      const body = (await response.json()) as { data?: any; errors?: unknown };
      assert.equal(body.errors, undefined, JSON.stringify(body.errors));
      return body.data;
    };
    // This endpoint's deliveries (the receiver also holds the test above's), each verified with its secret.
    const firstOfMine = receiver.received.length;
    const mine = () =>
      receiver.received.slice(firstOfMine).map((w) => new Webhook(endpoint.secret).verify(w.body, w.headers) as { type: string; data: { old: any; new: any; currency?: string } });
    const settle = async (count: number) => {
      await receiver.waitFor(() => mine().length >= count, 5000);
      await new Promise((resolve) => setTimeout(resolve, 400));
      assert.equal(mine().length, count, JSON.stringify(mine().map((e) => e.type)));
      return mine()[count - 1]!;
    };
    const storedFees = async () => (await graph(`query ($loan: uuid!) { fees(where: {loan_id: {_eq: $loan}}) { id amount date } }`, { loan })).fees as { id: string; amount: string; date: string }[];
    await clock('2026-01-15');
    const created = await fetch(`${server.url}/api/loan`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ Name: 'Birch Ave', Amount: 100000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' }),
    });
    assert.equal(created.status, 201);
    const loan = ((await created.json()) as { loan: { id: string } }).loan.id;
    await clock('2026-02-26');
    await assessFees(database.db, { accountSlug: account.slug });
    const assessed = await settle(1);
    assert.equal(assessed.type, 'fee.assessed');
    assert.deepEqual([assessed.data.new.kind, assessed.data.new.date, assessed.data.new.amount], ['late', '2026-02-26', 444.24]);
    const feeId = assessed.data.new.id as string;

    // The lender's fee is 4 % after 8 days' grace: the same fee, two days earlier and smaller.
    const settings = await fetch(`${server.url}/api/product`, { method: 'PATCH', headers, body: JSON.stringify({ late_fee_percent: 4, late_fee_grace_days: 8 }) });
    assert.equal(settings.status, 200, await settings.text());
    const changed = await settle(2);
    assert.equal(changed.type, 'fee.changed');
    assert.deepEqual(
      [changed.data.old.id, changed.data.old.date, changed.data.old.amount, changed.data.new.id, changed.data.new.date, changed.data.new.amount, changed.data.currency],
      [feeId, '2026-02-26', 444.24, feeId, '2026-02-24', 355.4, 'USD'],
    );

    // The rate was 10 %, not 12: the schedule is written anew and the fee derived again, under its id.
    const corrected = await fetch(`${server.url}/api/loan/${loan}`, { method: 'PATCH', headers, body: JSON.stringify({ Rate: 10 }) });
    assert.equal(corrected.status, 200, await corrected.text());
    const again = await settle(3);
    const [stored] = await storedFees();
    assert.equal(again.type, 'fee.assessed', 'derived again in the same transaction: no fee.removed');
    assert.deepEqual([again.data.new.id, again.data.new.date, again.data.new.amount], [feeId, stored!.date, Number(stored!.amount)]);
    assert.ok(Number(stored!.amount) < 355.4, `the fee on a smaller installment is smaller: ${stored!.amount}`);

    // A payment the borrower made on the due day, posted late: the installment was paid in time.
    await graph(`mutation ($loan: uuid!) { insert_payments_one(object: {loan_id: $loan, date: "2026-02-15", amount: "10000.00", method: "ach"}) { id } }`, { loan });
    const removed = await settle(4);
    assert.equal(removed.type, 'fee.removed');
    assert.equal(removed.data.new, null);
    assert.deepEqual([removed.data.old.id, removed.data.old.kind, removed.data.old.date, removed.data.old.amount, removed.data.currency], [feeId, 'late', stored!.date, Number(stored!.amount), 'USD']);
    assert.deepEqual(await storedFees(), []);
  });
});
