import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { networkInterfaces } from 'node:os';
import { Webhook } from 'standardwebhooks';
import { createWebhookEndpoint, destinationProblem, isPrivateAddress, newSigningSecret, retryDelayMs, signWebhook, webhookSettingsFromEnv } from '../../app/webhooks/index.js';
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

/**
 * Issue 26, finding 6: an outside tester had endpoints accepted (and delivered to) this machine's
 * own interface address 192.0.2.2, the documentation ranges, IPv4-compatible and IPv4-mapped
 * forms, site-local fec0::/10, 6to4 of 127.0.0.1 and the discard prefix 100::/64. Only global
 * unicast is allowed now (an allow-list), the IPv4 address inside 6to4, NAT64 and mapped forms is
 * decoded and judged, and the host's own addresses are refused.
 */
describe('Webhooks: only global unicast destinations (issue 26, finding 6)', () => {
  /** Each form the issue lists (and the next ones a tester would try), with what it stands for. */
  const REFUSED: readonly [string, string][] = [
    ['192.0.2.2', 'TEST-NET-1 (this machine in the probe)'],
    ['198.51.100.7', 'TEST-NET-2'],
    ['203.0.113.9', 'TEST-NET-3'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['0.1.2.3', 'this network'],
    ['127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local (cloud metadata)'],
    ['192.0.0.8', 'IETF protocol assignments'],
    ['198.18.0.1', 'benchmarking'],
    ['224.0.0.1', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['::127.0.0.1', 'IPv4-compatible (::/96)'],
    ['::8.8.8.8', 'IPv4-compatible (::/96), deprecated even for a public IPv4'],
    ['::ffff:127.0.0.1', 'IPv4-mapped 127.0.0.1'],
    ['::ffff:7f00:1', 'IPv4-mapped 127.0.0.1, hex'],
    ['::ffff:192.0.2.2', 'IPv4-mapped TEST-NET-1'],
    ['::ffff:a9fe:a9fe', 'IPv4-mapped 169.254.169.254'],
    ['64:ff9b::7f00:1', 'NAT64 of 127.0.0.1'],
    ['64:ff9b::10.0.0.1', 'NAT64 of 10.0.0.1'],
    ['64:ff9b:1::1', 'local-use NAT64'],
    ['2002:7f00:1::', '6to4 of 127.0.0.1'],
    ['2002:c000:202::1', '6to4 of 192.0.2.2'],
    ['2002:a9fe:a9fe::1', '6to4 of 169.254.169.254'],
    ['fec0::1', 'site-local'],
    ['fe80::1', 'link-local'],
    ['fd12:3456::1', 'unique local'],
    ['fc00::1', 'unique local'],
    ['ff02::1', 'multicast'],
    ['100::1', 'discard-only (100::/64)'],
    ['2001::1', 'Teredo'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
    ['2001:2::1', 'benchmarking'],
    ['2001:10::1', 'ORCHID'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation (3fff::/20)'],
  ];
  const ALLOWED: readonly string[] = ['8.8.8.8', '1.1.1.1', '93.184.216.34', '172.32.0.1', '223.255.255.1', '2606:4700::1111', '2a00:1450:4001::1', '::ffff:8.8.8.8', '::ffff:808:808', '64:ff9b::8.8.8.8', '2002:808:808::1', '2001:200::1'];

  it('classifies every listed form, decoding the IPv4 address inside mapped, NAT64 and 6to4 forms', () => {
    const none = new Set<string>();
    for (const [address, what] of REFUSED) assert.notEqual(destinationProblem(address, none), null, `${address} (${what}) must be refused`);
    for (const address of ALLOWED) assert.equal(destinationProblem(address, none), null, `${address} must be allowed`);
    assert.match(destinationProblem('::ffff:7f00:1', none)!, /127\.0\.0\.1/);
    assert.match(destinationProblem('2002:7f00:1::', none)!, /6to4 of 127\.0\.0\.1/);
  });

  it("refuses this host's own addresses, in every form that reaches them", () => {
    const own = new Set(['8.8.8.8', '2606470000000000000000000000aaaa']);
    for (const address of ['8.8.8.8', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1', '2606:4700::aaaa']) assert.match(destinationProblem(address, own) ?? '', /own|6to4 of|embedded/, address);
    // The real interfaces of the machine the tests run on (the probe's 192.0.2.2 among them there).
    for (const entry of Object.values(networkInterfaces()).flat()) assert.notEqual(destinationProblem(entry!.address), null, entry!.address);
  });

  it('refuses each form as an endpoint URL, IPv4 spellings the URL parser normalises included; WEBHOOK_ALLOW_PRIVATE=1 allows them', async () => {
    const { account } = await createAccountWithKey(database.db);
    const urls = [
      ...REFUSED.map(([address]) => (address.includes(':') ? `http://[${address}]/hooks` : `http://${address}/hooks`)),
      'http://2130706433/', 'http://0x7f000001/', 'http://0177.0.0.1/', 'http://127.1/', 'http://[0:0:0:0:0:ffff:127.0.0.1]/',
      ...Object.values(networkInterfaces()).flat().map((entry) => (entry!.family === 'IPv6' ? `http://[${entry!.address.replace(/%.*$/, '')}]/` : `http://${entry!.address}/`)),
    ];
    for (const url of urls) {
      await assert.rejects(
        createWebhookEndpoint(database.db, account.id, { url }, { knownEventTypes: KNOWN, allowPrivate: false }),
        (error: unknown) => error instanceof UserInputError && /not public/.test(error.fields?.url ?? ''),
        url,
      );
    }
    const { rows } = await database.db.query('SELECT 1 FROM webhook_endpoints WHERE account_id = $1', [account.id]);
    assert.equal(rows.length, 0, 'nothing was written');
    for (const url of ['http://[::ffff:127.0.0.1]:9/', 'http://192.0.2.2:9/']) await createWebhookEndpoint(database.db, account.id, { url }, { knownEventTypes: KNOWN, allowPrivate: true });
    for (const url of ['https://8.8.8.8/hooks', 'https://[2606:4700::1111]/hooks', 'https://[::ffff:8.8.8.8]/hooks']) await createWebhookEndpoint(database.db, account.id, { url }, { knownEventTypes: KNOWN, allowPrivate: false });
  });

  it("never connects to this host's own interface addresses at delivery, whatever form the URL writes them in", async () => {
    let contacted = 0;
    const server = createServer((_request, response) => {
      contacted += 1;
      response.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '::', () => resolve()));
    const port = (server.address() as { port: number }).port;
    try {
      const addresses = Object.values(networkInterfaces()).flat().filter((entry) => entry!.family === 'IPv4').map((entry) => entry!.address);
      const urls = addresses.flatMap((address) => {
        const [a, b, c, d] = address.split('.').map(Number) as [number, number, number, number];
        const hex = (x: number, y: number): string => ((x << 8) | y).toString(16);
        return [`http://${address}:${port}/`, `http://[::ffff:${address}]:${port}/`, `http://[::ffff:${hex(a, b)}:${hex(c, d)}]:${port}/`, `http://[2002:${hex(a, b)}:${hex(c, d)}::1]:${port}/`];
      });
      for (const url of urls) {
        const result = await postWebhook(url, {}, '{}', { timeoutMs: 2000, allowPrivate: false });
        assert.equal(result.statusCode, null, url);
        assert.match(result.error ?? '', /^refused: /, url);
      }
      assert.equal(contacted, 0);
      const allowed = await postWebhook(`http://127.0.0.1:${port}/`, {}, '{}', { timeoutMs: 2000, allowPrivate: true });
      assert.equal(allowed.statusCode, 200);
      assert.equal(contacted, 1);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
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

  it('ships the fourteen event types', () => {
    assert.deepEqual([...parseMetadata(shipped).eventTypes.keys()].sort(), [
      'distribution.created', 'fee.assessed', 'fee.changed', 'fee.removed', 'fee.waived', 'loan.created', 'loan.deleted', 'loan.delinquency_changed', 'loan.status_changed', 'loan.updated', 'payment.posted', 'payment.reversed', 'person.created', 'task.completed',
    ]);
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

  it('resolves a payload naming relationships (nested, with fields and order), and refuses unknown ones naming them', () => {
    const posted = parseMetadata(shipped).eventTypes.get('payment.posted')!;
    assert.deepEqual(posted.related.map((r) => [r.key, r.kind, r.table, r.orderBy]), [['allocations', 'array', 'payment_allocations', ['position']], ['loan', 'object', 'loans', []]]);
    assert.deepEqual(posted.related[0]!.related.map((r) => [r.key, r.mapping]), [['schedule', [['loan_id', 'loan_id'], ['row_number', 'number']]]]);
    assert.deepEqual([...posted.related[1]!.payload.keys()], ['principal_outstanding', 'interest_due', 'fees_due', 'credit_balance', 'oldest_unpaid_due', 'status', 'date_closed']);
    const bare = parseMetadata(shipped.replace('event_types:\n', 'event_types:\n  x.bare: { collection: payments, on: insert, payload: [id, allocations, loan] }\n')).eventTypes.get('x.bare')!;
    assert.deepEqual([...bare.payload.keys()], ['id']);
    assert.ok(bare.related[1]!.payload.has('principal_outstanding') && bare.related[1]!.payload.has('name'), 'a bare relationship: every column field of its target');
    assert.ok(!bare.related[1]!.payload.has('loan_officer'), 'custom fields are not columns');

    const edited = shipped.replace(
      'event_types:\n',
      [
        'event_types:',
        '  x.one: { collection: payments, on: insert, payload: [id, allocation] }',
        '  x.two: { collection: payments, on: insert, payload: [{ allocations: [amount, { schedul: [id] }] }] }',
        '  x.three: { collection: payments, on: insert, payload: [{ loan: { fields: [status], order_by: [status] } }, { allocations: { order_by: [amont] } }] }',
        '  x.four: { collection: payments, on: insert, payload: [{ loan: [loan_officer] }, loan] }',
        '',
      ].join('\n'),
    );
    assert.throws(
      () => parseMetadata(edited),
      (error: unknown) => {
        const problems = (error as MetadataError).problems.join('\n');
        return (
          /event type x\.one, payload: allocation is neither a field nor a relationship of collection payments/.test(problems) &&
          /event type x\.two, payload, relationship allocations: schedul is neither a field nor a relationship of collection payment_allocations/.test(problems) &&
          /event type x\.three, payload, relationship loan: order_by applies to array relationships only/.test(problems) &&
          /event type x\.three, payload, relationship allocations, order_by, field amont: not a field of collection payment_allocations/.test(problems) &&
          /event type x\.four, payload, relationship loan, field loan_officer: a custom field/.test(problems) &&
          /event type x\.four, payload: loan is named twice/.test(problems)
        );
      },
      'every problem named',
    );
    assert.throws(() => parseMetadata(shipped.replace('event_types:\n', 'event_types:\n  x.five: { collection: payments, on: insert, payload: [{ loan: [status], allocations: [amount] }] }\n')), /event type x\.five/);
  });
});
