import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { createApiKey } from '../../app/apiKeys.js';
import { configFromEnv } from '../../app/config.js';
import { METADATA_PATH, startSeededService, type SeededService } from '../support/seededService.js';
import { connect, socketUrl, subscribe } from '../support/graphSocket.js';
import { assertBuilt, freePort, runCli, startService, type RunningService } from '../support/processes.js';
import { copyMigratedDataDir } from '../support/testDatabase.js';

/**
 * The subscriptions audit (a front-end developer's `graphql-ws` client against the README's
 * "Subscriptions"): the protocol's messages and close codes as the README states them, the
 * per-key limit, a key whose role leaves the metadata while connected, and the service stopping.
 */
const ORIGINAL = readFileSync(METADATA_PATH, 'utf8');
const PER_KEY = 2;

let s: SeededService;
let dir: string;
let metadataPath: string;

before(async () => {
  assert.ok(ORIGINAL.includes('\n  read_only:\n'));
  dir = mkdtempSync(join(tmpdir(), 'loanql-protocol-audit-'));
  metadataPath = join(dir, 'loanql.yaml');
  writeFileSync(metadataPath, ORIGINAL);
  const defaults = configFromEnv({});
  s = await startSeededService({ config: { metadataPath, subscriptions: { ...defaults.subscriptions, perKey: PER_KEY } } });
});
after(async () => {
  await s?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A raw graphql-transport-ws connection: sends what it is told, records every message and its close. */
interface RawSocket {
  send(message: unknown): void;
  /** The messages received so far. */
  readonly messages: { id?: string; type: string; payload?: any }[];
  /** Resolves with the first message of `type` (and `id`) once received. */
  received(type: string, id?: string): Promise<{ id?: string; type: string; payload?: any }>;
  readonly closed: Promise<{ code: number; reason: string; at: number }>;
  /** Stops reading (the socket's data stays in the kernel's buffers): a frozen tab, say. */
  pause(): void;
  close(): void;
}

async function openRaw(url: string, headers: Record<string, string> = {}): Promise<RawSocket> {
  const socket = new WebSocket(socketUrl(url), 'graphql-transport-ws', { headers });
  const messages: RawSocket['messages'] = [];
  const waiters: (() => void)[] = [];
  socket.on('message', (data) => {
    messages.push(JSON.parse(String(data)) as RawSocket['messages'][number]);
    for (const waiter of waiters.splice(0)) waiter();
  });
  const closed = new Promise<{ code: number; reason: string; at: number }>((resolve) => socket.on('close', (code, reason) => resolve({ code, reason: String(reason), at: Date.now() })));
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  return {
    send: (message) => socket.send(JSON.stringify(message)),
    messages,
    received(type, id) {
      const found = (): RawSocket['messages'][number] | undefined => messages.find((message) => message.type === type && (id === undefined || message.id === id));
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${type} ${id ?? ''} within 5 s: ${JSON.stringify(messages)}`)), 5_000);
        const check = (): void => {
          const message = found();
          if (message) {
            clearTimeout(timer);
            resolve(message);
          } else waiters.push(check);
        };
        check();
      });
    },
    closed,
    pause: () => socket.pause(),
    close: () => socket.terminate(),
  };
}

const COUNT = 'subscription { loans_aggregate { aggregate { count } } }';

describe('The protocol as the README states it', () => {
  it('connection_init within 3 s (4408), once (4429); ping answered before it too; subscribe before the ack closes with 4401', async () => {
    const silent = await openRaw(s.url);
    const started = Date.now();
    const timedOut = await silent.closed;
    assert.equal(timedOut.code, 4408);
    assert.ok(timedOut.at - started >= 2_900, `closed after ${timedOut.at - started} ms`);

    const twice = await openRaw(s.url);
    twice.send({ type: 'ping', payload: { at: 1 } });
    assert.deepEqual((await twice.received('pong')).payload, { at: 1 }, 'a ping before connection_init is answered');
    twice.send({ type: 'connection_init', payload: { Authorization: `Token ${s.apiKey}` } });
    await twice.received('connection_ack');
    twice.send({ type: 'connection_init', payload: { Authorization: `Token ${s.apiKey}` } });
    assert.equal((await twice.closed).code, 4429);

    const early = await openRaw(s.url);
    early.send({ id: '1', type: 'subscribe', payload: { query: COUNT } });
    assert.equal((await early.closed).code, 4401);
  });

  it('a query and a mutation are answered once (next, complete); operationName picks one of several operations; an id is free again once completed, taken while running (4409)', async () => {
    const socket = await openRaw(s.url, { authorization: `Token ${s.apiKey}` });
    try {
      socket.send({ type: 'connection_init' });
      await socket.received('connection_ack');
      socket.send({ id: 'q', type: 'subscribe', payload: { query: 'query Loans { loans_aggregate { aggregate { count } } } query People { people_aggregate { aggregate { count } } }', operationName: 'People' } });
      await socket.received('complete', 'q');
      assert.deepEqual(
        socket.messages.filter((message) => message.id === 'q').map((message) => message.type),
        ['next', 'complete'],
      );
      assert.ok(socket.messages.find((message) => message.id === 'q')!.payload.data.people_aggregate.aggregate.count > 0);

      socket.send({ id: 'none', type: 'subscribe', payload: { query: 'query A { __typename } query B { __typename }' } });
      assert.match((await socket.received('error', 'none')).payload[0].message, /several operations: give operationName/);

      const [task] = await s.sql<{ id: string }>(`SELECT id FROM tasks WHERE account_id = $1 ORDER BY id LIMIT 1`, [s.account.id]);
      socket.send({ id: 'm', type: 'subscribe', payload: { query: 'mutation($id: uuid!) { update_tasks_by_pk(pk_columns: {id: $id}, _set: {name: "over the socket"}) { name } }', variables: { id: task!.id } } });
      await socket.received('complete', 'm');
      assert.equal(socket.messages.find((message) => message.id === 'm' && message.type === 'next')!.payload.data.update_tasks_by_pk.name, 'over the socket');

      socket.send({ id: 'live', type: 'subscribe', payload: { query: COUNT } });
      await socket.received('next', 'live');
      socket.send({ id: 'live', type: 'complete' });
      await sleep(200);
      socket.send({ id: 'live', type: 'subscribe', payload: { query: 'subscription { people_aggregate { aggregate { count } } }' } });
      await sleep(500);
      const live = socket.messages.filter((message) => message.id === 'live');
      assert.equal(live.length, 2, JSON.stringify(live));
      assert.ok(live[1]!.payload.data.people_aggregate, 'the id completed was taken by the new subscription');
      socket.send({ id: 'live', type: 'subscribe', payload: { query: COUNT } });
      assert.equal((await socket.closed).code, 4409);
    } finally {
      socket.close();
    }
  });

  it(`SUBSCRIPTIONS_PER_KEY (${PER_KEY}): the next is refused with subscription-limit naming it, the connection keeps serving, and a completed one frees its place`, async () => {
    const client = connect(s.url, s.apiKey);
    try {
      const open = Array.from({ length: PER_KEY }, (_, index) => subscribe(client.client, `subscription { loans(limit: ${index + 1}) { id } }`));
      for (const live of open) await live.next();
      const refused = (await subscribe(client.client, COUNT).ended) as { message: string; extensions: { code: string } }[];
      assert.equal(refused[0]!.extensions.code, 'subscription-limit');
      assert.match(refused[0]!.message, /this API key has 2 open subscriptions, its most \(SUBSCRIPTIONS_PER_KEY\)/);
      open[0]!.stop();
      await sleep(200);
      const admitted = subscribe(client.client, COUNT);
      assert.ok((await admitted.next()).data.loans_aggregate.aggregate.count > 0);
      assert.equal(s.service.subscriptions.sockets.usage.subscriptions, PER_KEY);
      admitted.stop();
      open[1]!.stop();
    } finally {
      await client.dispose();
    }
  });
});

describe("A key's role removed from the metadata while connected", () => {
  it('closes its connections with 4403 at the reload, those with no subscription open too (one stayed open, and its next operation was logged as an internal error)', async () => {
    const key = await createApiKey(s.db, s.account.id, 'role removed while connected', { role: 'read_only', variables: new Map() });
    const socket = await openRaw(s.url, { authorization: `Token ${key.key}` });
    try {
      socket.send({ type: 'connection_init' });
      await socket.received('connection_ack');
      socket.send({ id: 'once', type: 'subscribe', payload: { query: 'query { loans_aggregate { aggregate { count } } }' } });
      await socket.received('complete', 'once');
      const logged = s.service.logs.length;

      writeFileSync(metadataPath, ORIGINAL.replace('\n  read_only:\n', '\n  read_only_renamed:\n'));
      assert.equal((await s.service.engines.reload()).ok, true);
      const reloadedAt = Date.now();
      const closed = await Promise.race([socket.closed, sleep(1_000).then(() => null)]);
      // What the connection left open would do next: its operation is refused, not a fault of the service.
      if (!closed) socket.send({ id: 'next', type: 'subscribe', payload: { query: COUNT } });
      const { code, at } = await socket.closed;
      assert.equal(code, 4403);
      assert.deepEqual(s.service.logs.slice(logged).filter((line) => (line.level as number) >= 50).map((line) => line.msg), [], 'nothing logged as an error');
      assert.ok(closed, `not closed by the reload (closed ${at - reloadedAt} ms after it, on its next operation)`);
    } finally {
      socket.close();
      writeFileSync(metadataPath, ORIGINAL);
      await s.service.engines.reload();
    }
  });
});

describe('The service stopping (SIGTERM), with a client that stopped reading', { timeout: 120_000 }, () => {
  let workDir: string;
  let key: string;
  let port: number;
  const services: RunningService[] = [];
  const env = (dataDir: string): Record<string, string> => ({ DATA_DIR: dataDir, WEBHOOK_WORKER: '0', SHUTDOWN_GRACE_MS: '1000' });

  before(async () => {
    assertBuilt();
    workDir = mkdtempSync(join(tmpdir(), 'loanql-socket-stop-'));
    await copyMigratedDataDir(join(workDir, 'data'));
    assert.equal((await runCli(['account', 'create', 'demo'], { DATA_DIR: join(workDir, 'data') }, workDir)).code, 0);
    const created = await runCli(['key', 'create', '--account', 'demo', '--name', 'live screen'], { DATA_DIR: join(workDir, 'data') }, workDir);
    key = created.stdout.trim().split('\n').at(-1)!;
    port = await freePort();
    services.push(await startService(env(join(workDir, 'data')), port, workDir));
  });
  after(async () => {
    for (const service of services) await service.stop();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  it('tells a reading client 1001, does not wait on the one that reads nothing (it held the stop 24 s, past SHUTDOWN_GRACE_MS: exit 1), and a client retrying every failure resubscribes to the service started again', async () => {
    const [service] = services as [RunningService];
    // The README's advice for a restart: retry a refused connection too (graphql-ws retries only close events by default).
    const reading = connect(service.url, key, { retry: true, retryEveryFailure: true });
    const live = subscribe(reading.client, COUNT);
    assert.deepEqual((await live.next()).data, { loans_aggregate: { aggregate: { count: 0 } } });

    const stuck = await openRaw(service.url, { authorization: `Token ${key}` });
    stuck.send({ type: 'connection_init' });
    await stuck.received('connection_ack');
    stuck.pause();

    const stoppedAt = Date.now();
    service.process.kill('SIGTERM');
    const exitCode = await service.exited;
    const took = Date.now() - stoppedAt;
    assert.deepEqual({ exitCode, stoppedWithin5s: took < 5_000 }, { exitCode: 0, stoppedWithin5s: true }, `exited ${exitCode} after ${took} ms`);
    assert.deepEqual(reading.closes.map((close) => [close.code, close.reason]).slice(0, 1), [[1001, 'Going away']]);
    stuck.close();

    services.push(await startService(env(join(workDir, 'data')), port, workDir));
    assert.deepEqual((await live.next(30_000)).data, { loans_aggregate: { aggregate: { count: 0 } } }, 'the subscription is running again');
    await reading.dispose();
  });
});
