import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { createApiKey, deactivateApiKey } from '../../app/apiKeys.js';
import { startSeededService, type SeededService } from '../support/seededService.js';
import { connect, socketUrl, subscribe } from '../support/graphSocket.js';

/** Issue 34, Done-when 1: authentication, revocation and bad documents on graphql-transport-ws. */
let s: SeededService;

before(async () => {
  s = await startSeededService();
});
after(() => s?.close());

/** A raw graphql-transport-ws connection: its messages and its close. */
function rawSocket(init: unknown, headers: Record<string, string> = {}): Promise<{ code: number; messages: unknown[] }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(socketUrl(s.url), 'graphql-transport-ws', { headers });
    const messages: unknown[] = [];
    socket.on('open', () => socket.send(JSON.stringify(init)));
    socket.on('message', (data) => {
      messages.push(JSON.parse(String(data)));
      socket.close(1000);
    });
    socket.on('close', (code) => resolve({ code, messages }));
    socket.on('error', reject);
  });
}

describe('Authentication', () => {
  it('a missing, malformed, unknown or inactive key closes with 4403; a good one is acknowledged (payload or header)', async () => {
    const inactive = await createApiKey(s.db, s.account.id, 'to deactivate');
    await deactivateApiKey(s.db, inactive.prefix);
    for (const payload of [undefined, {}, { Authorization: 'Token nope' }, { Authorization: `Token ${s.apiKey.slice(0, -2)}xx` }, { Authorization: `Token ${inactive.key}` }, { Authorization: s.apiKey }]) {
      const answer = await rawSocket({ type: 'connection_init', ...(payload ? { payload } : {}) });
      assert.equal(answer.code, 4403, JSON.stringify(payload));
      assert.deepEqual(answer.messages, []);
    }
    assert.deepEqual((await rawSocket({ type: 'connection_init', payload: { Authorization: `Token ${s.apiKey}` } })).messages, [{ type: 'connection_ack' }]);
    assert.deepEqual((await rawSocket({ type: 'connection_init' }, { authorization: `Token ${s.apiKey}` })).messages, [{ type: 'connection_ack' }]);
  });

  it('a key deactivated while connected closes its sockets with 4403 within a second', async () => {
    const key = await createApiKey(s.db, s.account.id, 'revoked while connected');
    const socket = connect(s.url, key.key);
    const other = connect(s.url, s.apiKey);
    try {
      const live = subscribe(socket.client, `subscription { loans_aggregate { aggregate { count } } }`);
      const kept = subscribe(other.client, `subscription { loans_aggregate { aggregate { count } } }`);
      await live.next();
      await kept.next();
      const revokedAt = Date.now();
      await deactivateApiKey(s.db, key.prefix);
      await live.ended;
      const closed = socket.closes[0];
      assert.equal(closed?.code, 4403);
      assert.ok(closed.at - revokedAt < 1_000, `closed ${closed.at - revokedAt} ms after the revocation`);
      assert.equal(other.closes.length, 0, "another key's socket stays open");
    } finally {
      await socket.dispose();
      await other.dispose();
    }
  });
});

describe('Bad documents', () => {
  it('get protocol errors naming the problem, and the connection keeps serving', async () => {
    const socket = connect(s.url, s.apiKey);
    try {
      const cases: [string, Record<string, unknown> | undefined, string, RegExp?][] = [
        ['subscription {', undefined, 'parse-failed'],
        ['subscription { nope { id } }', undefined, 'validation-failed'],
        ['subscription($id: uuid!) { loans_by_pk(id: $id) { id } }', {}, 'validation-failed'],
        ['subscription($id: uuid!) { loans_by_pk(id: $id) { id } }', { id: 'not-a-uuid' }, 'validation-failed'],
        ['subscription { payments_stream(batch_size: 5, cursor: {initial_value: {posted_at: "2020-01-01T00:00:00Z"}}) { amount } }', undefined, 'validation-failed'],
        ['subscription { payments_stream(batch_size: 5, cursor: {initial_value: {posted_at: "2020-01-01T00:00:00Z"}}) { posted_at } loans { id } }', undefined, 'validation-failed'],
        ['subscription { loans(where: {name: {_regex: "(a"}}) { id } }', undefined, 'data-exception'],
        // A stream that could never send anything (it was accepted and stayed silent): refused, naming the argument.
        ['subscription { payments_stream(batch_size: 0, cursor: {initial_value: {posted_at: "2020-01-01T00:00:00Z"}}) { posted_at } }', undefined, 'validation-failed', /batch_size must be a whole number from 1 to 1000, not 0/],
        ['subscription($n: Int!) { payments_stream(batch_size: $n, cursor: {initial_value: {posted_at: "2020-01-01T00:00:00Z"}}) { posted_at } }', { n: 0 }, 'validation-failed', /Variable "\$n": batch_size must be a whole number from 1/],
        ['subscription { payments_stream(batch_size: -1, cursor: {initial_value: {posted_at: "2020-01-01T00:00:00Z"}}) { posted_at } }', undefined, 'validation-failed', /^batch_size must be/],
        ['subscription { payments_stream(batch_size: 5, cursor: {initial_value: {posted_at: null}}) { posted_at } }', undefined, 'validation-failed', /initial_value cannot be null: give the posted_at to read after/],
        ['subscription($from: timestamptz) { payments_stream(batch_size: 5, cursor: {initial_value: {posted_at: $from}}) { posted_at } }', { from: null }, 'validation-failed', /initial_value cannot be null/],
        ['subscription { a: loans { payments { allocations { loan { payments { allocations { id } } } } } } }', undefined, 'query-too-expensive'],
      ];
      for (const [query, variables, code, message] of cases) {
        const failed = subscribe(socket.client, query, variables);
        const silent = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${query}: no answer within 3 s`)), 3_000).unref());
        const error = (await Promise.race([failed.ended, silent])) as { message?: string; extensions?: { code?: string } }[];
        assert.ok(Array.isArray(error), `${query}: expected a protocol error, got ${JSON.stringify(error)}`);
        assert.equal(error[0]?.extensions?.code, code, `${query}: ${JSON.stringify(error)}`);
        if (message) assert.match(error[0]!.message!, message, query);
      }
      const good = subscribe(socket.client, `subscription { loans_aggregate { aggregate { count } } }`);
      assert.ok((await good.next()).data.loans_aggregate.aggregate.count > 0);
      good.stop();
      // The lazy client may close between operations (1000); the server never closed it.
      assert.deepEqual(socket.closes.filter((close) => close.code !== 1000), []);
    } finally {
      await socket.dispose();
    }
  });

  it('a message that is not graphql-transport-ws closes that connection only (4400)', async () => {
    const answer = await new Promise<number>((resolve, reject) => {
      const socket = new WebSocket(socketUrl(s.url), 'graphql-transport-ws');
      socket.on('open', () => socket.send('{not json'));
      socket.on('close', (code) => resolve(code));
      socket.on('error', reject);
    });
    assert.equal(answer, 4400);
    const after = await fetch(`${s.url}/api/graph`, { method: 'POST', headers: { authorization: `Token ${s.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ __typename }' }) });
    assert.equal(after.status, 200);
  });

  it('variables keep every digit, as on HTTP: a mutation of 100.10000000000000001 is refused for its decimals, not written as 100.10', async () => {
    const [loan] = await s.sql<{ id: string }>(`SELECT id FROM loans WHERE account_id = $1 AND status = 'servicing' ORDER BY id LIMIT 1`, [s.account.id]);
    const count = async () => (await s.sql<{ n: number }>(`SELECT count(*)::int AS n FROM payments WHERE account_id = $1 AND loan_id = $2`, [s.account.id, loan!.id]))[0]!.n;
    const before = await count();
    const messages = await new Promise<{ type: string; payload?: unknown }[]>((resolve, reject) => {
      const socket = new WebSocket(socketUrl(s.url), 'graphql-transport-ws', { headers: { authorization: `Token ${s.apiKey}` } });
      const seen: { type: string; payload?: unknown }[] = [];
      socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init' })));
      socket.on('message', (data) => {
        const message = JSON.parse(String(data)) as { type: string; payload?: unknown };
        seen.push(message);
        if (message.type === 'connection_ack') {
          // Written as text: a JavaScript client cannot send more digits than a double holds.
          const query = `mutation($loan: uuid!, $a: numeric!) { insert_payments_one(object: {loan_id: $loan, date: "2026-01-02", amount: $a}) { id } }`;
          socket.send(`{"id": "1", "type": "subscribe", "payload": {"query": ${JSON.stringify(query)}, "variables": {"loan": "${loan!.id}", "a": 100.10000000000000001}}}`);
        }
        if (message.type === 'error' || message.type === 'complete') socket.close(1000);
      });
      socket.on('close', () => resolve(seen));
      socket.on('error', reject);
    });
    const answer = messages.find((message) => message.type === 'error' || message.type === 'next');
    assert.equal(answer?.type, 'error', JSON.stringify(messages));
    assert.match(JSON.stringify(answer?.payload), /at most 12 digits before the decimal point and 2 after it/);
    assert.equal(await count(), before, 'nothing written');
  });
});
