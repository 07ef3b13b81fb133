import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { randomUUID } from 'node:crypto';
import { createAccount, type Account } from '../../app/accounts.js';
import { applyEventTriggers, createWebhookEndpoint, WebhookWorker, webhookSettingsFromEnv, type WebhookSettings } from '../../app/webhooks/index.js';
import { loadMetadataFile } from '../../metadata/index.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.js';

/**
 * Issue 16, Done-when 8 (migration 0008): a captured write stores ONE outbox row and nothing
 * else; the worker fans it out to `webhook_events` and one delivery per subscribed endpoint; the
 * claim takes each endpoint's own earliest deliveries, so one endpoint's backlog does not hide
 * another's.
 */
let database: TestDatabase;
const settings: WebhookSettings = { ...webhookSettingsFromEnv({}), allowPrivate: true, pollMs: 50, timeoutMs: 5000, retryBaseMs: 200, retryMaxMs: 500 };
const metadata = loadMetadataFile(fileURLToPath(new URL('../../metadata/loanql.default.yaml', import.meta.url)));
const KNOWN = new Set(metadata.eventTypes.keys());
let slugs = 0;

before(async () => {
  database = await openTestDatabase();
  await applyEventTriggers(database.db, metadata.eventTypes);
});
after(async () => {
  await database?.close();
});

/** A loan in servicing (a lead takes no payment, migration 0050) with a schedule (0061) that a payment of a few dollars leaves open. */
async function accountWithLoan(receiver: WebhookReceiver | null, eventTypes: string[] | null = ['payment.posted']): Promise<{ account: Account; loan: string }> {
  const account = await createAccount(database.db, `outbox-${process.pid}-${(slugs += 1)}`);
  const loan = (await database.db.query<{ id: string }>(`INSERT INTO loans (account_id, name, status, amount) VALUES ($1, 'outbox', 'servicing', 1000) RETURNING id`, [account.id])).rows[0]!.id;
  // A payment is taken by a loan with a schedule (migration 0061): one row, due after the payments, so they leave it open.
  await database.db.query(`INSERT INTO schedules (account_id, loan_id, number, due, payment, principal, interest, balance) VALUES ($1, $2, 1, '2026-12-15', 1000, 1000, 0, 0)`, [account.id, loan]);
  if (receiver) await createWebhookEndpoint(database.db, account.id, { url: receiver.url, eventTypes }, { knownEventTypes: KNOWN, allowPrivate: true });
  return { account, loan };
}

const postPayment = (account: Account, loan: string, amount: number) =>
  database.db.query(`INSERT INTO payments (account_id, loan_id, date, amount) VALUES ($1, $2, '2026-02-15', $3)`, [account.id, loan, amount]);

async function count(sql: string, values: unknown[]): Promise<number> {
  return Number((await database.db.query<{ n: string }>(sql, values)).rows[0]!.n);
}

/** Whether `condition` holds within `timeoutMs` (checked every 20 ms). */
async function within(timeoutMs: number, condition: () => boolean): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

describe('Webhooks: the outbox and the fan-out', () => {
  it('does not run the fan-out while the outbox is empty, and fans out a row written while it polls', async () => {
    const receiver = await startWebhookReceiver();
    const seen: string[] = [];
    const stopWatching = database.db.observe((text) => void seen.push(text));
    const worker = new WebhookWorker(database.db, settings, { warn: () => undefined });
    try {
      const { account, loan } = await accountWithLoan(receiver);
      assert.equal(await count('SELECT count(*)::text AS n FROM webhook_outbox', []), 0, 'the outbox starts empty');
      worker.start();
      const fanOuts = () => seen.filter((text) => text.includes('DELETE FROM webhook_outbox')).length;
      const looks = () => seen.filter((text) => text.includes('EXISTS (SELECT 1 FROM webhook_outbox)')).length;
      // Two polls of the empty outbox (20 poll intervals when the machine is idle; a loaded one may take longer).
      assert.ok(await within(15_000, () => looks() >= 2), `the worker polled the empty outbox (${looks()} looks)`);
      assert.equal(fanOuts(), 0, 'an empty outbox costs no fan-out');
      await postPayment(account, loan, 3.25);
      await receiver.waitFor((r) => r.length >= 1, 15_000);
      assert.equal(fanOuts(), 1, 'one fan-out once a row was waiting');
      assert.equal((JSON.parse(receiver.received[0]!.body) as { data: { new: { amount: number } } }).data.new.amount, 3.25);
    } finally {
      await worker.stop();
      stopWatching();
      await receiver.close();
    }
  });

  it('does not claim while no endpoint exists, and claims and delivers once one does', async () => {
    // Its own database: the other tests leave endpoints behind.
    const own = await openTestDatabase();
    const receiver = await startWebhookReceiver();
    const seen: string[] = [];
    const stopWatching = own.db.observe((text) => void seen.push(text));
    const worker = new WebhookWorker(own.db, settings, { warn: () => undefined });
    try {
      await applyEventTriggers(own.db, metadata.eventTypes);
      const account = await createAccount(own.db, `no-endpoints-${process.pid}`);
      const loan = (await own.db.query<{ id: string }>(`INSERT INTO loans (account_id, name, status, amount) VALUES ($1, 'no endpoints', 'servicing', 1000) RETURNING id`, [account.id])).rows[0]!.id;
      await own.db.query(`INSERT INTO schedules (account_id, loan_id, number, due, payment, principal, interest, balance) VALUES ($1, $2, 1, '2026-12-15', 1000, 1000, 0, 0)`, [account.id, loan]);
      worker.start();
      const claims = () => seen.filter((text) => text.includes('UPDATE webhook_deliveries d') && text.includes('WITH due AS')).length;
      const looks = () => seen.filter((text) => text.includes('EXISTS (SELECT 1 FROM webhook_endpoints)')).length;
      assert.ok(await within(15_000, () => looks() >= 2), `the worker polled (${looks()} looks)`);
      assert.equal(claims(), 0, 'no endpoint: no claim');
      await createWebhookEndpoint(own.db, account.id, { url: receiver.url, eventTypes: ['payment.posted'] }, { knownEventTypes: KNOWN, allowPrivate: true });
      await own.db.query(`INSERT INTO payments (account_id, loan_id, date, amount) VALUES ($1, $2, '2026-02-15', 7.5)`, [account.id, loan]);
      await receiver.waitFor((r) => r.length >= 1, 15_000);
      assert.ok(claims() >= 1, 'an endpoint: the worker claims');
      assert.equal((JSON.parse(receiver.received[0]!.body) as { data: { new: { amount: number } } }).data.new.amount, 7.5);
    } finally {
      await worker.stop();
      stopWatching();
      await receiver.close();
      await own.close();
    }
  });

  it('captures one outbox row per event and nothing else; the worker fans it out and delivers it', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const { account, loan } = await accountWithLoan(receiver);
      const quiet = await accountWithLoan(null);
      await postPayment(account, loan, 12.5);
      await postPayment(quiet.account, quiet.loan, 1); // no endpoint: nothing stored
      await database.db.transaction(async (tx) => {
        await tx.query(`SELECT set_config('loanql.capture_events', 'off', true)`);
        await tx.query(`INSERT INTO payments (account_id, loan_id, date, amount) VALUES ($1, $2, '2026-02-15', 2)`, [account.id, loan]);
      });
      const outbox = await database.db.query<{ account_id: string; type: string; data: { old: unknown; new: Record<string, unknown> } }>(
        'SELECT account_id, type, data FROM webhook_outbox WHERE account_id = ANY ($1::uuid[])',
        [[account.id, quiet.account.id]],
      );
      assert.equal(outbox.rows.length, 1, 'one row: not for the account without an endpoint, not with capture off');
      assert.equal(outbox.rows[0]!.type, 'payment.posted');
      assert.equal(outbox.rows[0]!.data.old, null);
      assert.equal(outbox.rows[0]!.data.new.amount, 12.5);
      assert.equal(outbox.rows[0]!.data.new.loan_id, loan);
      assert.equal(outbox.rows[0]!.data.new.account_id, undefined, 'the tenant column is not in the payload');
      assert.equal(await count('SELECT count(*)::text AS n FROM webhook_events WHERE account_id = $1', [account.id]), 0, 'the write made no event row');
      assert.equal(await count('SELECT count(*)::text AS n FROM webhook_deliveries WHERE account_id = $1', [account.id]), 0, 'and no delivery row');

      const warnings: string[] = [];
      const worker = new WebhookWorker(database.db, settings, { warn: (_object, message) => void warnings.push(message) });
      worker.start();
      try {
        // Generous: the worker's first fan-out, claim and send on PGlite took 4–6 s with the machine at a load of 17.
        await receiver.waitFor((r) => r.length >= 1, 15_000);
      } finally {
        await worker.stop();
      }
      assert.deepEqual(warnings, [], 'the worker met no error');
      const body = JSON.parse(receiver.received[0]!.body) as { type: string; data: { new: { amount: number } } };
      assert.equal(body.type, 'payment.posted');
      assert.equal(body.data.new.amount, 12.5);
      assert.equal(await count('SELECT count(*)::text AS n FROM webhook_outbox WHERE account_id = $1', [account.id]), 0, 'the outbox row is gone');
      assert.equal(await count(`SELECT count(*)::text AS n FROM webhook_deliveries WHERE account_id = $1 AND status = 'succeeded'`, [account.id]), 1);
    } finally {
      await receiver.close();
    }
  });

  it('fans an event out to every active endpoint of its account subscribed to its type, and drops rows of deleted accounts', async () => {
    const one = await startWebhookReceiver();
    const two = await startWebhookReceiver();
    const other = await startWebhookReceiver();
    try {
      const { account, loan } = await accountWithLoan(one, null);
      await createWebhookEndpoint(database.db, account.id, { url: two.url, eventTypes: ['payment.posted', 'loan.created'] }, { knownEventTypes: KNOWN, allowPrivate: true });
      await createWebhookEndpoint(database.db, account.id, { url: other.url, eventTypes: ['task.completed'] }, { knownEventTypes: KNOWN, allowPrivate: true });
      await postPayment(account, loan, 3);
      const orphan = randomUUID();
      await database.db.query(`INSERT INTO webhook_outbox (account_id, type, data) VALUES ($1, 'payment.posted', '{"old": null, "new": {}}')`, [orphan]);

      const worker = new WebhookWorker(database.db, settings, { warn: () => undefined });
      worker.start();
      try {
        await one.waitFor((r) => r.length >= 3, 5000);
        await two.waitFor((r) => r.length >= 1, 5000);
        await new Promise((resolve) => setTimeout(resolve, 300));
      } finally {
        await worker.stop();
      }
      // `one` takes every type: the payment, the loan the ledger updated with it (its balances) and the payment's
      // distribution (the lender's share of what it paid of the row; SPEC §12).
      const typeOf = (w: { body: string }) => (JSON.parse(w.body) as { type: string }).type;
      assert.deepEqual(one.received.map(typeOf).sort(), ['distribution.created', 'loan.updated', 'payment.posted']);
      assert.equal(two.received.length, 1);
      assert.equal(other.received.length, 0, 'an endpoint not subscribed to the type gets nothing');
      const posted = one.received.find((w) => typeOf(w) === 'payment.posted')!;
      assert.equal(posted.headers['webhook-id'], two.received[0]!.headers['webhook-id'], 'one event, two deliveries');
      assert.equal(await count('SELECT count(*)::text AS n FROM webhook_outbox WHERE account_id = $1', [orphan]), 0, 'the row of a deleted account is dropped');
      assert.equal(await count('SELECT count(*)::text AS n FROM webhook_events WHERE account_id = $1', [orphan]), 0);
    } finally {
      await Promise.all([one.close(), two.close(), other.close()]);
    }
  });

  it('delivers to an endpoint at once while another endpoint is busy with a backlog', async () => {
    const slow = await startWebhookReceiver();
    const fast = await startWebhookReceiver();
    slow.delayMs = 1500;
    const worker = new WebhookWorker(database.db, settings, { warn: () => undefined });
    try {
      const busy = await accountWithLoan(slow);
      for (let i = 1; i <= 40; i++) await postPayment(busy.account, busy.loan, i);
      worker.start();
      await slow.waitFor((r) => r.length >= settings.perEndpointConcurrency, 5000);
      const { account, loan } = await accountWithLoan(fast);
      const posted = Date.now();
      await postPayment(account, loan, 7);
      await fast.waitFor((r) => r.length >= 1, 5000);
      const waited = fast.received[0]!.receivedAt - posted;
      assert.ok(waited < 2500, `the other endpoint's event arrived after ${waited} ms, behind the busy endpoint's backlog`);
      assert.ok(slow.received.length < 40, 'the busy endpoint still had a backlog');
    } finally {
      slow.delayMs = 0;
      await worker.stop();
      await Promise.all([slow.close(), fast.close()]);
    }
  });

  it('stores a payload of more columns than one json_build_object call takes, with the columns\' JSON types', async () => {
    // 45 keys (calls take 40 pairs): the generated function merges two jsonb_build_object calls.
    const posted = metadata.eventTypes.get('payment.posted')!;
    const wide = new Map<string, string>([...posted.payload]);
    for (let i = 1; i <= 38; i++) wide.set(`amount_${i}`, 'amount');
    assert.ok(wide.size > 40);
    const eventTypes = new Map(metadata.eventTypes);
    eventTypes.set('payment.posted', { ...posted, payload: wide, related: [] });
    const receiver = await startWebhookReceiver();
    try {
      assert.equal(await applyEventTriggers(database.db, eventTypes), true);
      const { account, loan } = await accountWithLoan(receiver);
      await postPayment(account, loan, 4.25);
      const { rows } = await database.db.query<{ data: { old: unknown; new: Record<string, unknown> } }>('SELECT data FROM webhook_outbox WHERE account_id = $1', [account.id]);
      assert.equal(rows.length, 1);
      const payload = rows[0]!.data.new;
      assert.equal(Object.keys(payload).length, wide.size);
      assert.equal(payload.amount_38, 4.25, 'a numeric column is a JSON number');
      assert.equal(payload.date, '2026-02-15', 'a date is its ISO text');
      assert.equal(payload.loan_id, loan);
      assert.equal(payload.date_reversed, null);
      assert.equal(rows[0]!.data.old, null);
    } finally {
      await applyEventTriggers(database.db, metadata.eventTypes);
      await receiver.close();
    }
  });
});
