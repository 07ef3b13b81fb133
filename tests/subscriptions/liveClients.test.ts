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

/** What a client developer building a live servicing screen met (the subscriptions audit): a stream catching up. */
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
