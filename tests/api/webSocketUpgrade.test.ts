import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { randomBytes } from 'node:crypto';
import { createAccountWithKey, startTestServer, tokenHeader, type TestServer } from '../support/http.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';

/** Issue 28, then 34: a WebSocket handshake on /api/graph is GraphQL over WebSocket; elsewhere it is told plainly that there is none. */
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
  it('on /api/graph switches to graphql-transport-ws (issue 34; the key is checked in connection_init)', async () => {
    for (const path of ['/api/graph', '/api/graph/?x=1']) {
      const answer = await webSocketHandshake(path, tokenHeader(key));
      assert.equal(answer.upgraded, true, path);
      assert.equal(answer.status, 101);
      assert.equal(answer.headers['sec-websocket-protocol'], 'graphql-transport-ws');
    }
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
