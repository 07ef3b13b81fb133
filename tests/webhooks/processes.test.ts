import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { copyMigratedDataDir, createServerDatabase } from '../support/testDatabase.js';
import { assertBuilt, freePort, runCli, spawnCli, startService, type ProcessResult, type RunningService } from '../support/processes.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.js';

/**
 * Issue 16, Done-when 4 and 5, with real processes: `kill -9` of the service while deliveries
 * are in flight loses no event (the restarted service sends each at least once, a duplicate
 * with the same webhook-id); `loanql webhook …` and `loanql worker`; and on PostgreSQL, two
 * services sharing one database deliver 1,000 events with none sent twice.
 */
const lastLine = (text: string): string => text.trimEnd().split('\n').at(-1) ?? '';
const assertOk = (result: ProcessResult, what: string): void => assert.equal(result.code, 0, `${what} failed:\n${result.stdout}\n${result.stderr}`);

const FAST_WEBHOOKS = {
  WEBHOOK_ALLOW_PRIVATE: '1',
  WEBHOOK_POLL_MS: '50',
  WEBHOOK_TIMEOUT_MS: '1500',
  WEBHOOK_RETRY_BASE_MS: '200',
  WEBHOOK_RETRY_MAX_MS: '500',
  WEBHOOK_MAX_ATTEMPTS: '100',
};

async function createLoan(service: RunningService, key: string, name: string): Promise<string> {
  const response = await fetch(`${service.url}/api/loan`, {
    method: 'POST',
    headers: { authorization: `Token ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ Name: name, Amount: 5000, Status: 'lead' }),
  });
  assert.equal(response.status, 201, await response.clone().text());
  return ((await response.json()) as { loan: { id: string } }).loan.id;
}

/** Loan id → the webhook-ids it arrived with, from signed `loan.created` requests only. */
function arrivals(receiver: WebhookReceiver, secret: string): Map<string, string[]> {
  const byLoan = new Map<string, string[]>();
  for (const webhook of receiver.received) {
    const event = new Webhook(secret).verify(webhook.body, webhook.headers) as { id: string; type: string; data: { new: { id: string } } };
    assert.equal(event.type, 'loan.created');
    byLoan.set(event.data.new.id, [...(byLoan.get(event.data.new.id) ?? []), webhook.headers['webhook-id']!]);
  }
  return byLoan;
}

async function setUpAccount(cli: (...args: string[]) => Promise<ProcessResult>, receiver: WebhookReceiver): Promise<{ key: string; secret: string; endpointId: string }> {
  assertOk(await cli('account', 'create', 'hooks'), 'account create');
  const key = await cli('key', 'create', '--account', 'hooks');
  assertOk(key, 'key create');
  const added = await cli('webhook', 'add', '--account', 'hooks', '--url', receiver.url, '--events', 'loan.created', '--description', 'test receiver');
  assertOk(added, 'webhook add');
  const secret = lastLine(added.stdout);
  assert.match(secret, /^whsec_[A-Za-z0-9+/]+=*$/, 'the secret alone on the last line');
  const endpointId = /webhook endpoint ([0-9a-f-]{36}) added/.exec(added.stdout)![1]!;
  return { key: lastLine(key.stdout), secret, endpointId };
}

describe('Webhooks with real processes: kill -9, the CLI, loanql worker', { timeout: 300_000 }, () => {
  let dir: string;
  let env: Record<string, string>;
  let cleanUp: () => Promise<void> = async () => undefined;
  let service: RunningService | undefined;
  let receiver: WebhookReceiver;
  let secret: string;
  const cli = (...args: string[]): Promise<ProcessResult> => runCli(args, env, dir);

  before(async () => {
    assertBuilt();
    dir = mkdtempSync(join(tmpdir(), 'loanql-hooks-'));
    if (process.env.TEST_DATABASE_URL) {
      const created = await createServerDatabase(process.env.TEST_DATABASE_URL);
      env = { DATABASE_URL: created.url, ...FAST_WEBHOOKS };
      cleanUp = () => created.drop();
    } else {
      env = { DATA_DIR: join(dir, 'data'), ...FAST_WEBHOOKS };
      await copyMigratedDataDir(env.DATA_DIR!); // first start is not this file's subject
    }
    receiver = await startWebhookReceiver();
  });
  after(async () => {
    await service?.stop(5_000);
    await receiver?.close();
    await cleanUp();
    rmSync(dir, { recursive: true, force: true });
  });

  it('delivers every event at least once after a kill -9 with deliveries in flight, a duplicate keeping its webhook-id', async () => {
    const account = await setUpAccount(cli, receiver);
    const { key, endpointId } = account;
    secret = account.secret;
    const listed = await cli('webhook', 'list', '--account', 'hooks');
    assertOk(listed, 'webhook list');
    assert.match(listed.stdout, new RegExp(`${endpointId}\\s+hooks\\s+${receiver.url.replace(/[.]/g, '\\.')}\\s+loan\\.created\\s+yes\\s+test receiver`));
    assert.doesNotMatch(listed.stdout, /whsec_/, 'the secret is never listed');

    const port = await freePort();
    service = await startService(env, port, dir);
    receiver.delayMs = 5_000; // every request hangs: deliveries are in flight when the service dies
    const loans: string[] = [];
    for (let i = 0; i < 12; i++) loans.push(await createLoan(service, key, `loan ${i}`));
    await receiver.waitFor((r) => r.length >= 4, 10_000);
    service.process.kill('SIGKILL');
    await service.exited;
    const beforeRestart = receiver.received.length;
    receiver.delayMs = 0;

    service = await startService(env, port, dir);
    await receiver.waitFor(() => arrivals(receiver, secret).size === loans.length, 30_000);
    const byLoan = arrivals(receiver, secret);
    assert.deepEqual([...byLoan.keys()].sort(), [...loans].sort(), 'every loan.created arrived');
    for (const ids of byLoan.values()) assert.equal(new Set(ids).size, 1, 'a duplicate has the same webhook-id');
    assert.ok(beforeRestart >= 4, `requests were in flight when the service was killed (${beforeRestart})`);

    // The deliveries as the CLI shows them, and a redelivery through it.
    for (const deadline = Date.now() + 10_000; ; await new Promise((resolve) => setTimeout(resolve, 100))) {
      const shown = await cli('webhook', 'deliveries', endpointId);
      assertOk(shown, 'webhook deliveries');
      if ((shown.stdout.match(/ succeeded /g) ?? []).length === loans.length) break;
      assert.ok(Date.now() < deadline, `every delivery is shown succeeded:\n${shown.stdout}`);
    }
    const eventId = [...byLoan.values()][0]![0]!;
    const count = receiver.received.length;
    const redelivered = await cli('webhook', 'redeliver', eventId);
    assertOk(redelivered, 'webhook redeliver');
    await receiver.waitFor((r) => r.length > count, 5_000);
    assert.equal(receiver.received.at(-1)!.headers['webhook-id'], eventId);
    assert.equal((await cli('webhook', 'redeliver', '00000000-0000-0000-0000-000000000000')).code, 2);
  });

  it('runs deliveries in `loanql worker` when the service has its own worker off, and removes an endpoint', async () => {
    await service?.stop(10_000);
    const port = await freePort();
    service = await startService({ ...env, WEBHOOK_WORKER: '0' }, port, dir);
    const key = lastLine((await cli('key', 'create', '--account', 'hooks')).stdout);
    const before = receiver.received.length;
    const loanId = await createLoan(service, key, 'by the worker');
    await new Promise((resolve) => setTimeout(resolve, 700));
    assert.equal(receiver.received.length, before, 'the service sends nothing with WEBHOOK_WORKER=0');
    const worker = spawnCli(['worker'], env, dir);
    try {
      await receiver.waitFor(() => arrivals(receiver, secret).has(loanId), 20_000);
    } finally {
      worker.process.kill('SIGTERM');
      await new Promise((resolve) => worker.process.once('exit', resolve));
    }
    assert.match(worker.output(), /webhook worker stopped/);
    const endpointId = /([0-9a-f-]{36})\s+hooks/.exec((await cli('webhook', 'list')).stdout)![1]!;
    assertOk(await cli('webhook', 'remove', endpointId), 'webhook remove');
    assert.doesNotMatch((await cli('webhook', 'list')).stdout, new RegExp(endpointId));
    assert.equal((await cli('webhook', 'remove', endpointId)).code, 2);
  });
});

describe('Webhooks: two services on one PostgreSQL', { timeout: 300_000 }, () => {
  if (!process.env.TEST_DATABASE_URL) {
    it('needs TEST_DATABASE_URL: two processes cannot share the embedded database (PGlite admits one), so this runs on PostgreSQL only', { skip: 'skipped on PGlite: set TEST_DATABASE_URL to run it' }, () => undefined);
    return;
  }
  it('deliver 1,000 events between them, none sent twice', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loanql-hooks2-'));
    const created = await createServerDatabase(process.env.TEST_DATABASE_URL!);
    const receiver = await startWebhookReceiver();
    const services: RunningService[] = [];
    try {
      const env = { DATABASE_URL: created.url, ...FAST_WEBHOOKS, WEBHOOK_TIMEOUT_MS: '10000' };
      const cli = (...args: string[]): Promise<ProcessResult> => runCli(args, env, dir);
      const { key, secret } = await setUpAccount(cli, receiver);
      receiver.delayMs = 5; // a receiver that takes a moment, so both workers are busy at once
      services.push(await startService(env, await freePort(), dir), await startService(env, await freePort(), dir));
      // 1,000 loans in 10 requests at a time, alternating between the services.
      const loans: string[] = [];
      for (let batch = 0; batch < 100; batch++) {
        loans.push(...(await Promise.all(Array.from({ length: 10 }, (_, i) => createLoan(services[(batch + i) % 2]!, key, `loan ${batch}-${i}`)))));
      }
      await receiver.waitFor(() => receiver.received.length >= 1000, 120_000);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const byLoan = arrivals(receiver, secret);
      assert.equal(byLoan.size, 1000);
      assert.equal(receiver.received.length, 1000, 'no event was sent twice');
      const ids = receiver.received.map((w) => w.headers['webhook-id']);
      assert.equal(new Set(ids).size, 1000);
    } finally {
      for (const service of services) await service.stop(10_000);
      await receiver.close();
      await created.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
