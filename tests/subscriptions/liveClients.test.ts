import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { createApiKey } from '../../app/apiKeys.js';
import { configFromEnv } from '../../app/config.js';
import { dataOf, METADATA_PATH, startSeededService, type SeededService } from '../support/seededService.js';
import { connect, socketUrl, subscribe } from '../support/graphSocket.js';

/**
 * What a client developer building a live servicing screen met (the subscriptions audit): the
 * connection_init form Hasura's clients send, a large result, a metadata reload while subscribed,
 * and a stream catching up.
 */
const ORIGINAL = readFileSync(METADATA_PATH, 'utf8');
/** The read_only role's payments: what the reload test takes away. */
const READ_ONLY_PAYMENTS = '      payments: *read_all\n      schedules: *read_all\n      tasks: *read_all';
const BUFFER_BYTES = 64 * 1024;

let s: SeededService;
let dir: string;
let metadataPath: string;

before(async () => {
  assert.ok(ORIGINAL.includes(READ_ONLY_PAYMENTS));
  dir = mkdtempSync(join(tmpdir(), 'loanql-live-clients-'));
  metadataPath = join(dir, 'loanql.yaml');
  writeFileSync(metadataPath, ORIGINAL);
  const defaults = configFromEnv({});
  s = await startSeededService({ config: { metadataPath, subscriptions: { ...defaults.subscriptions, maxBufferedBytes: BUFFER_BYTES } } });
});
after(async () => {
  await s?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A raw connection_init and what came back before the socket closed (or the first message). */
function init(payload: unknown): Promise<{ code: number | null; messages: unknown[] }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(socketUrl(s.url), 'graphql-transport-ws');
    const messages: unknown[] = [];
    socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload })));
    socket.on('message', (data) => {
      messages.push(JSON.parse(String(data)));
      socket.close(1000);
    });
    socket.on('close', (code) => resolve({ code: messages.length ? null : code, messages }));
    socket.on('error', reject);
  });
}

/** `promise`, or a failure naming what did not happen after `ms`. */
const within = <T>(promise: Promise<T>, ms: number, what: string): Promise<T> =>
  Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms).unref())]);

const post = async (loan: string, amount: string): Promise<string> =>
  dataOf(await s.graph(`mutation($loan: uuid!, $amount: numeric!) { insert_payments_one(object: {loan_id: $loan, date: "2026-11-20", amount: $amount, type: "regular", method: "ach"}) { id } }`, { loan, amount })).insert_payments_one.id;

describe('connection_init as client libraries send it', () => {
  it("Hasura's form, the key under headers (Apollo's and Hasura's clients), is acknowledged; a bad key or a Bearer one in it closes with 4403", async () => {
    for (const payload of [{ headers: { Authorization: `Token ${s.apiKey}` } }, { headers: { authorization: `Token ${s.apiKey}` } }, { AUTHORIZATION: `Token ${s.apiKey}` }]) {
      assert.deepEqual((await init(payload)).messages, [{ type: 'connection_ack' }], JSON.stringify(payload).replace(s.apiKey, '<key>'));
    }
    for (const payload of [{ headers: { Authorization: 'Token lq_nope' } }, { headers: { Authorization: `Bearer ${s.apiKey}` } }, { headers: `Token ${s.apiKey}` }, { headers: {} }]) {
      assert.deepEqual(await init(payload), { code: 4403, messages: [] }, JSON.stringify(payload).replace(s.apiKey, '<key>'));
    }
  });
});

describe('A result larger than SUBSCRIPTION_BUFFER_BYTES', () => {
  it('reaches a client that reads it, as HTTP answers it (it was closed with 1013, "does not read its messages")', async () => {
    const query = `{ payments(limit: 3000, order_by: {id: asc}) { id amount posted_at loan_id } }`;
    const overHttp = dataOf(await s.graph(query));
    assert.ok(JSON.stringify(overHttp).length > 2 * BUFFER_BYTES, 'the result is larger than the buffer limit');
    const client = connect(s.url, s.apiKey);
    try {
      const live = subscribe(client.client, `subscription ${query}`);
      assert.deepEqual((await live.next()).data, overHttp);
      live.stop();
      assert.deepEqual(client.closes, []);
    } finally {
      await client.dispose();
    }
  });
});

describe('A client that does not read', () => {
  /** A raw connection that reads nothing after its `subscribe` (its TCP socket paused): what the server does about it. */
  async function pausedSubscriber(query: string): Promise<{ socket: WebSocket; received: () => string[] }> {
    const socket = new WebSocket(socketUrl(s.url), 'graphql-transport-ws');
    const received: string[] = [];
    socket.on('message', (data) => void received.push(String(data)));
    socket.on('error', () => undefined);
    await new Promise<void>((resolve) => socket.once('open', () => resolve()));
    socket.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: `Token ${s.apiKey}` } }));
    await new Promise<void>((resolve) => socket.once('message', () => resolve()));
    socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query } }));
    (socket as unknown as { _socket: { pause(): void } })._socket.pause();
    return { socket, received: () => received };
  }
  const until = async (what: string, holds: () => boolean, ms = 15_000): Promise<void> => {
    for (const end = Date.now() + ms; !holds(); await new Promise((resolve) => setTimeout(resolve, 20))) if (Date.now() > end) throw new Error(`${what} within ${ms} ms`);
  };
  const dropped = (): number => s.service.logs.filter((line) => line.msg === 'a WebSocket client does not read its messages; dropping it').length;

  it("a stream's batches waiting past SUBSCRIPTION_BUFFER_BYTES drop it (1013) — they were kept in memory without end, the socket holding one message at a time", async () => {
    // Rows of about 10 KB (the id under 200 names), in batches of 10: each message is under the limit, their sum (~7 MB) over it and over what the kernel's socket buffers can hold (tcp_wmem's 4 MB at most, and the paused reader's receive buffer).
    const wide = Array.from({ length: 200 }, (_, i) => `a${i}: id`).join(' ');
    const before = dropped();
    const { socket } = await pausedSubscriber(`subscription { payments_stream(batch_size: 10, cursor: {initial_value: {posted_at: "2000-01-01T00:00:00Z"}}) { posted_at ${wide} } }`);
    try {
      await until('the client was not dropped', () => dropped() > before);
      await until('its subscription was not ended', () => s.service.subscriptions.live.usage.subscriptions === 0);
    } finally {
      socket.terminate();
    }
  });

  it('a live query keeps only its newest result waiting: not dropped, and once it reads it gets the latest answer, not every one between', async () => {
    const [loan] = await s.sql<{ id: string }>(`SELECT id FROM loans WHERE account_id = $1 AND status = 'servicing' ORDER BY id DESC LIMIT 1`, [s.account.id]);
    // About 1 KB a row, 4,000 rows: a few results fill the socket's buffers while the client reads nothing.
    const query = `{ payments(limit: 5000, order_by: {id: asc}) { id amount posted_at loan_id date ${Array.from({ length: 16 }, (_, i) => `l${i}: loan_id`).join(' ')} } }`;
    const before = dropped();
    const { socket, received } = await pausedSubscriber(`subscription ${query}`);
    try {
      for (let i = 1; i <= 15; i++) {
        await post(loan!.id, `40.${String(i).padStart(2, '0')}`);
        await new Promise((resolve) => setTimeout(resolve, 120));
      }
      const latest = (await s.sql<{ id: string }>(`SELECT id FROM payments WHERE account_id = $1 ORDER BY id LIMIT 5000`, [s.account.id])).map((row) => row.id);
      const ids = (message: string): string[] => ((JSON.parse(message) as { payload?: { data?: { payments?: { id: string }[] } } }).payload?.data?.payments ?? []).map((row) => row.id);
      (socket as unknown as { _socket: { resume(): void } })._socket.resume();
      // Each refresh reads 4,000 rows of about 1 KB: on a loaded machine one takes seconds, and a few may be under way when the client reads again.
      await until('the latest answer did not arrive', () => received().some((message) => JSON.stringify(ids(message)) === JSON.stringify(latest)), 60_000);
      const results = received().filter((message) => message.includes('"type":"next"'));
      assert.ok(results.length < 12, `${results.length} results for 1 + 15 answers: the ones superseded while it did not read were not all kept`);
      assert.equal(dropped(), before, 'not dropped');
    } finally {
      socket.terminate();
    }
  });
});

describe('A metadata reload while subscribed', () => {
  it("closes with 1012 the connections whose subscriptions it plans otherwise (the role lost payments): no later payment reaches them, and subscribing again gets the new schema's error; others run on untouched", async () => {
    const readOnly = await createApiKey(s.db, s.account.id, 'read only screen', { role: 'read_only', variables: new Map() });
    const [loan] = await s.sql<{ id: string }>(`SELECT id FROM loans WHERE account_id = $1 AND status = 'servicing' ORDER BY id LIMIT 1`, [s.account.id]);
    const payments = `subscription($loan: uuid!) { payments(where: {loan_id: {_eq: $loan}}, order_by: {posted_at: desc}, limit: 1) { id } }`;
    const losing = connect(s.url, readOnly.key);
    const keeping = connect(s.url, s.apiKey);
    const tasks = connect(s.url, readOnly.key);
    try {
      const lost = subscribe(losing.client, payments, { loan: loan!.id });
      const kept = subscribe(keeping.client, payments, { loan: loan!.id });
      const unaffected = subscribe(tasks.client, `subscription { tasks_aggregate { aggregate { count } } }`);
      await Promise.all([lost.next(), kept.next(), unaffected.next()]);

      // An edit that changes no plan (a comment) closes nothing.
      writeFileSync(metadataPath, `# a note\n${ORIGINAL}`);
      assert.deepEqual(await s.service.engines.reload(), { ok: true });
      const first = await post(loan!.id, '31.01');
      assert.equal((await lost.next()).data.payments[0].id, first);
      assert.equal((await kept.next()).data.payments[0].id, first);
      assert.deepEqual([losing.closes, keeping.closes, tasks.closes], [[], [], []]);

      writeFileSync(metadataPath, ORIGINAL.replace(READ_ONLY_PAYMENTS, '      schedules: *read_all\n      tasks: *read_all'));
      assert.deepEqual(await s.service.engines.reload(), { ok: true });
      const second = await post(loan!.id, '31.02');
      assert.equal((await kept.next()).data.payments[0].id, second, "the admin's subscription runs on");
      const ended = (await within(lost.ended, 5_000, 'the read_only subscription was not ended by the reload')) as { code?: number; reason?: string };
      assert.deepEqual([ended.code, ended.reason], [1012, 'the metadata changed: subscribe again']);
      assert.deepEqual(losing.closes.map((close) => close.code), [1012]);
      assert.ok(lost.raw.every((message: { data: { payments: { id: string }[] } }) => message.data.payments[0]?.id !== second), 'the payment posted after the reload never reached the read_only key');
      assert.deepEqual(tasks.closes, [], "a connection whose subscriptions plan the same stays open (tasks did not change)");

      const again = subscribe(losing.client, payments, { loan: loan!.id });
      const refused = (await again.ended) as { extensions?: { code?: string }; message?: string }[];
      assert.equal(refused[0]?.extensions?.code, 'validation-failed', JSON.stringify(refused));
      assert.match(refused[0]!.message!, /Cannot query field "payments"/);
      unaffected.stop();
      kept.stop();
    } finally {
      writeFileSync(metadataPath, ORIGINAL);
      await s.service.engines.reload();
      await Promise.all([losing.dispose(), keeping.dispose(), tasks.dispose()]);
    }
  });
});

describe('Rate limits over the socket', () => {
  it("each operation a key starts takes a token from its bucket, shared with HTTP: a role's rate_limit is no longer bypassed by sending queries over the WebSocket", async () => {
    writeFileSync(metadataPath, ORIGINAL.replace('\n  read_only:\n    collections:\n', '\n  read_only:\n    rate_limit: { per_second: 0.01, burst: 2 }\n    collections:\n'));
    assert.deepEqual(await s.service.engines.reload(), { ok: true });
    const limited = await createApiKey(s.db, s.account.id, 'limited screen', { role: 'read_only', variables: new Map() });
    const client = connect(s.url, limited.key);
    try {
      const answers: unknown[] = [];
      for (const query of ['{ loans_aggregate { aggregate { count } } }', 'subscription { tasks_aggregate { aggregate { count } } }', '{ people_aggregate { aggregate { count } } }']) {
        const operation = subscribe(client.client, query);
        answers.push(await Promise.race([operation.next(), operation.ended]));
        operation.stop();
      }
      assert.ok((answers[0] as { data?: unknown }).data && (answers[1] as { data?: unknown }).data, JSON.stringify(answers));
      const refused = answers[2] as { message: string; extensions: { code: string } }[];
      assert.equal(refused[0]?.extensions.code, 'rate-limited', JSON.stringify(answers[2]));
      assert.match(refused[0]!.message, /over its rate limit of 0\.01 requests a second \(burst 2\); retry in \d+ s/);
      const overHttp = await fetch(`${s.url}/api/graph`, { method: 'POST', headers: { authorization: `Token ${limited.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ __typename }' }) });
      assert.equal(overHttp.status, 429, 'the same bucket as HTTP');
      assert.ok(client.closes.every((close) => close.code === 1000), `only the lazy client's own closes: ${JSON.stringify(client.closes)}`);
    } finally {
      writeFileSync(metadataPath, ORIGINAL);
      await s.service.engines.reload();
      await client.dispose();
    }
  });
});

describe('A stream catching up', () => {
  it("reads each batch of the README's payments stream through payments_posted_at (migration 0055): its own rows in order, not every payment of the account read and sorted", async () => {
    const prepared = s.service.engines.engine.prepareSubscription({ query: `subscription { payments_stream(batch_size: 10, cursor: {initial_value: {posted_at: "2000-01-01T00:00:00Z"}, ordering: ASC}) { id posted_at amount } }` }, s.account.id);
    assert.equal(prepared.kind, 'statement');
    if (prepared.kind !== 'statement') return;
    const values = [...prepared.values];
    values[prepared.stream!.cursorIndex] = prepared.stream!.initialValue;
    const plan = (await s.sql<{ 'QUERY PLAN': string }>(`EXPLAIN (COSTS OFF) ${prepared.text}`, values)).map((row) => row['QUERY PLAN']).join('\n');
    assert.match(plan, /Index Scan using payments_posted_at on payments/, plan);
    // Only the batch is sorted (by cursor, then key); the payments are not.
    assert.doesNotMatch(plan, /Seq Scan on payments|Sort Key: posted_at\n/, plan);
  });

  it('lets the service answer meanwhile: a request sent as it starts is answered before it has read a quarter of its batches', async () => {
    const [{ total }] = (await s.sql<{ total: number }>(`SELECT count(*)::int AS total FROM payments WHERE account_id = $1`, [s.account.id])) as [{ total: number }];
    const batchSize = 10;
    assert.ok(total / batchSize > 100, `${total} payments: enough batches to see`);
    const client = connect(s.url, s.apiKey);
    try {
      const live = s.service.subscriptions.live;
      const ranBefore = live.statementsRun;
      const stream = subscribe(client.client, `subscription { payments_stream(batch_size: ${batchSize}, cursor: {initial_value: {posted_at: "2000-01-01T00:00:00Z"}}) { id posted_at } }`);
      await stream.next();
      const answered = fetch(`${s.url}/healthz`).then(async (response) => ({ status: response.status, ran: live.statementsRun - ranBefore }));
      let rows = ((stream.raw[0] as { data: { payments_stream: unknown[] } }).data.payments_stream).length;
      while (rows < total) rows += ((await stream.next()) as { data: { payments_stream: unknown[] } }).data.payments_stream.length;
      const ranInAll = live.statementsRun - ranBefore;
      const health = await answered;
      assert.equal(health.status, 200);
      assert.ok(health.ran < ranInAll / 4, `/healthz was answered after ${health.ran} of the catch-up's ${ranInAll} statements`);
      stream.stop();
    } finally {
      await client.dispose();
    }
  });
});
