import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Webhook } from 'standardwebhooks';
import { createWebhookEndpoint, isPrivateAddress, newSigningSecret, retryDelayMs, signWebhook, webhookSettingsFromEnv } from '../../app/webhooks/index.js';
import { postWebhook } from '../../app/webhooks/send.js';
import { UserInputError } from '../../app/errors.js';
import { MetadataError, parseMetadata } from '../../metadata/index.js';
import { createAccountWithKey, METADATA_PATH } from '../support/http.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';
import { startWebhookReceiver } from '../support/webhookReceiver.js';

/** Issue 16, Done-when 6 and the pieces under the delivery: destinations, signatures, backoff, metadata. */
let database: TestDatabase;
before(async () => {
  database = await openTestDatabase();
});
after(() => database?.close());

const KNOWN = new Set(['loan.created', 'payment.posted']);

describe('Webhooks: destinations', () => {
  it('refuses 127.0.0.1, localhost and 169.254.169.254 without WEBHOOK_ALLOW_PRIVATE=1, naming the url', async () => {
    const { account } = await createAccountWithKey(database.db);
    for (const url of ['http://127.0.0.1:9/hooks', 'http://169.254.169.254/latest/meta-data', 'http://localhost:8080/x', 'http://[::1]/x', 'http://10.1.2.3/x', 'http://[::ffff:127.0.0.1]/x']) {
      await assert.rejects(
        createWebhookEndpoint(database.db, account.id, { url }, { knownEventTypes: KNOWN, allowPrivate: false }),
        (error: unknown) => error instanceof UserInputError && error.status === 400 && /private, loopback or link-local/.test(error.fields?.url ?? ''),
        url,
      );
    }
    for (const url of ['ftp://example.com/x', 'not a url', 'http://user:pw@example.com/']) {
      await assert.rejects(createWebhookEndpoint(database.db, account.id, { url }, { knownEventTypes: KNOWN, allowPrivate: true }), (error: unknown) => error instanceof UserInputError && !!error.fields?.url, url);
    }
    await assert.rejects(
      createWebhookEndpoint(database.db, account.id, { url: 'http://127.0.0.1:9/', eventTypes: ['loan.created', 'loan.exploded'] }, { knownEventTypes: KNOWN, allowPrivate: true }),
      (error: unknown) => error instanceof UserInputError && /loan\.exploded/.test(error.fields?.events ?? ''),
    );
    const { rows } = await database.db.query('SELECT 1 FROM webhook_endpoints WHERE account_id = $1', [account.id]);
    assert.equal(rows.length, 0, 'nothing was written');
    const allowed = await createWebhookEndpoint(database.db, account.id, { url: 'http://127.0.0.1:9/hooks' }, { knownEventTypes: KNOWN, allowPrivate: true });
    assert.match(allowed.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(allowed.eventTypes, null, 'no --events: every type');
  });

  it('checks the address at delivery time too: a loopback receiver is never contacted unless allowed', async () => {
    const receiver = await startWebhookReceiver();
    try {
      for (const url of [receiver.url, receiver.url.replace('127.0.0.1', 'localhost')]) {
        const result = await postWebhook(url, {}, '{}', { timeoutMs: 2000, allowPrivate: false });
        assert.equal(result.statusCode, null);
        assert.match(result.error ?? '', /^refused: /, url);
      }
      assert.equal(receiver.received.length, 0);
      const allowed = await postWebhook(receiver.url.replace('127.0.0.1', 'localhost'), {}, '{}', { timeoutMs: 2000, allowPrivate: true });
      assert.equal(allowed.statusCode, 200);
      assert.equal(receiver.received.length, 1);
    } finally {
      await receiver.close();
    }
  });

  it('follows no redirect and times out a slow endpoint', async () => {
    const receiver = await startWebhookReceiver();
    try {
      receiver.respond = () => 302;
      const redirected = await postWebhook(receiver.url, {}, '{}', { timeoutMs: 2000, allowPrivate: true });
      assert.equal(redirected.statusCode, 302);
      assert.equal(receiver.received.length, 1);
      const silent = await import('node:net').then(({ createServer }) => createServer(() => undefined));
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', () => resolve()));
      const port = (silent.address() as { port: number }).port;
      const slow = await postWebhook(`http://127.0.0.1:${port}/`, {}, '{}', { timeoutMs: 300, allowPrivate: true });
      assert.equal(slow.statusCode, null);
      assert.match(slow.error ?? '', /timed out after 300 ms/);
      assert.ok(slow.durationMs < 2000);
      silent.close();
    } finally {
      await receiver.close();
    }
  });

  it('classifies addresses', () => {
    for (const address of ['127.0.0.1', '127.8.9.10', '10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fd00::1', '::ffff:10.0.0.1', '::ffff:7f00:1'])
      assert.equal(isPrivateAddress(address), true, address);
    for (const address of ['8.8.8.8', '93.184.216.34', '172.32.0.1', '2606:4700::1111', '::ffff:8.8.8.8']) assert.equal(isPrivateAddress(address), false, address);
  });
});

describe('Webhooks: signatures and retries', () => {
  it('signs exactly as the standardwebhooks package does, and verifies with it', () => {
    const secret = newSigningSecret();
    const body = JSON.stringify({ id: 'e1', type: 'loan.created', data: { new: { amount: 100.5 } } });
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = signWebhook(secret, 'e1', timestamp, body);
    assert.equal(signature, new Webhook(secret).sign('e1', new Date(timestamp * 1000), body));
    assert.deepEqual(new Webhook(secret).verify(body, { 'webhook-id': 'e1', 'webhook-timestamp': String(timestamp), 'webhook-signature': signature }), JSON.parse(body));
    assert.throws(() => new Webhook(secret).verify(`${body} `, { 'webhook-id': 'e1', 'webhook-timestamp': String(timestamp), 'webhook-signature': signature }));
  });

  it('backs off exponentially with jitter up to the maximum', () => {
    const settings = { ...webhookSettingsFromEnv({}), retryBaseMs: 1000, retryMaxMs: 60_000 };
    assert.equal(retryDelayMs(settings, 1, () => 1), 1000);
    assert.equal(retryDelayMs(settings, 1, () => 0), 500);
    assert.equal(retryDelayMs(settings, 4, () => 1), 8000);
    assert.equal(retryDelayMs(settings, 30, () => 1), 60_000);
    assert.throws(() => webhookSettingsFromEnv({ WEBHOOK_MAX_ATTEMPTS: '0' }), /WEBHOOK_MAX_ATTEMPTS/);
  });
});

describe('Webhooks: event types in metadata', () => {
  const shipped = readFileSync(METADATA_PATH, 'utf8');

  it('ships the seven event types', () => {
    assert.deepEqual([...parseMetadata(shipped).eventTypes.keys()].sort(), ['loan.created', 'loan.status_changed', 'loan.updated', 'payment.posted', 'payment.reversed', 'person.created', 'task.completed']);
  });

  it('refuses an event type naming an unknown collection or field, a custom field, or a condition on an insert', () => {
    const edited = shipped.replace(
      'event_types:\n',
      'event_types:\n  x.one: { collection: nothing, on: insert }\n  x.two: { collection: loans, on: update, when: { changed: [statuz] } }\n  x.three: { collection: loans, on: insert, when: { changed: [status] } }\n  x.four: { collection: loans, on: insert, payload: [loan_officer] }\n',
    );
    assert.throws(
      () => parseMetadata(edited),
      (error: unknown) => {
        const problems = (error as MetadataError).problems.join('\n');
        return (
          /event type x\.one: collection nothing does not exist/.test(problems) &&
          /event type x\.two, when changed, field statuz: not a field/.test(problems) &&
          /event type x\.three: when applies to update events only/.test(problems) &&
          /event type x\.four, payload, field loan_officer: a custom field/.test(problems)
        );
      },
    );
    assert.throws(() => parseMetadata(shipped.replace('event_types:\n', 'event_types:\n  Bad: { collection: loans, on: upsert }\n')), /event type Bad/);
  });
});
