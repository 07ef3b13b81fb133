import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { randomBytes } from 'node:crypto';
import { createAccountWithKey, startTestServer, tokenHeader, type TestServer } from '../support/http.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';

/** Issue 28: there are no subscriptions yet, and a WebSocket handshake is told so plainly. */
let database: TestDatabase;
let server: TestServer;
let key: string;

before(async () => {
  database = await openTestDatabase();
  server = await startTestServer(database.db);
  key = (await createAccountWithKey(database.db)).apiKey.key;
});
after(async () => {
  await server?.close();
  await database?.close();
});

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
  /** Whether Node's client saw a 101 and switched protocols (it must not). */
  readonly upgraded: boolean;
}

/** A real WebSocket opening handshake (RFC 6455 §4.1) on `path`. */
function webSocketHandshake(path: string, headers: Record<string, string> = {}): Promise<Answer> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = request({
      host: hostname,
      port,
      path,
      headers: {
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Key': randomBytes(16).toString('base64'),
        'Sec-WebSocket-Protocol': 'graphql-transport-ws',
        ...headers,
      },
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, headers: res.headers, body: '', upgraded: true });
    });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body, upgraded: false }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('A WebSocket upgrade request', () => {
  it('on /api/graph is a 400 saying subscriptions over WebSocket are not supported yet', async () => {
    for (const headers of [tokenHeader(key), {}]) {
      const answer = await webSocketHandshake('/api/graph', headers);
      assert.equal(answer.upgraded, false);
      assert.equal(answer.status, 400);
      assert.match(String(answer.headers['content-type']), /^application\/json/);
      const body = JSON.parse(answer.body) as { errors: { message: string; extensions: { code: string } }[] };
      assert.equal(body.errors.length, 1);
      assert.match(body.errors[0]!.message, /^WebSocket subscriptions are not supported yet/);
      assert.doesNotMatch(answer.body, /query must be/);
    }
  });

  it('on /api/graph/ with a query string gets the same answer', async () => {
    const answer = await webSocketHandshake('/api/graph/?x=1', tokenHeader(key));
    assert.equal(answer.status, 400);
    assert.match(answer.body, /WebSocket subscriptions are not supported yet/);
  });

  it('elsewhere is a plain 400, and ordinary requests are answered as before', async () => {
    const answer = await webSocketHandshake('/dashboard');
    assert.equal(answer.status, 400);
    assert.match(answer.body, /WebSocket connections are not supported/);
    const plain = await fetch(`${server.url}/api/graph`, { method: 'POST', headers: { ...tokenHeader(key), 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ __typename }' }) });
    assert.equal(plain.status, 200);
    assert.deepEqual(await plain.json(), { data: { __typename: 'query_root' } });
  });
});
