import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { configFromEnv } from '../../app/config.js';
import { assumeEmptyCatalogue, loadMetadataFile } from '../../metadata/index.js';
import { GraphEngine } from '../../engine/index.js';
import { METADATA_PATH, startTestServer, type TestServer } from '../support/http.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';
import { createAccountWithAdmin, DashboardClient } from '../dashboard/dashboardClient.js';

/**
 * Issue 11, item 7: the HTTP server times out silent and slow clients and caps connections;
 * behind a TLS proxy (`TRUST_PROXY`) the session cookie is `Secure` and the login throttle
 * counts each client address; and the plan cache is bounded by size, not only by entries.
 */
let database: TestDatabase;

before(async () => {
  database = await openTestDatabase();
});
after(async () => {
  await database?.close();
});

function openSocket(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Milliseconds until the server closes `socket` (rejects after `withinMs`). */
function closedWithin(socket: Socket, withinMs: number): Promise<{ ms: number; received: string }> {
  const started = Date.now();
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the socket was still open after ${withinMs} ms`));
    }, withinMs);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve({ ms: Date.now() - started, received });
    });
    socket.on('error', () => undefined);
  });
}

describe('HTTP server timeouts', () => {
  let server: TestServer;
  before(async () => {
    const defaults = configFromEnv({});
    server = await startTestServer(database.db, { http: { ...defaults.http, headersTimeoutMs: 600, requestTimeoutMs: 1_200, keepAliveTimeoutMs: 300, idleSocketTimeoutMs: 5_000, maxConnections: 20 } });
  });
  after(async () => {
    await server?.close();
  });

  it('closes a half-open connection that never sends a byte (headers timeout)', async () => {
    const { ms } = await closedWithin(await openSocket(server.url), 4_000);
    assert.ok(ms >= 500, `closed after ${ms} ms`);
  });

  it('answers 408 and closes a connection whose headers never end', async () => {
    const socket = await openSocket(server.url);
    socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
    const { received } = await closedWithin(socket, 4_000);
    assert.match(received, /^HTTP\/1\.1 408/);
  });

  it('closes an idle keep-alive connection after the keep-alive timeout', async () => {
    const socket = await openSocket(server.url);
    socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    const { ms, received } = await closedWithin(socket, 4_000);
    assert.match(received, /^HTTP\/1\.1 200/);
    assert.ok(ms < 3_000, `closed after ${ms} ms`);
  });

  it(`refuses connections beyond HTTP_MAX_CONNECTIONS at once`, async () => {
    const held = await Promise.all(Array.from({ length: 20 }, () => openSocket(server.url)));
    try {
      const extra = await openSocket(server.url);
      const { ms } = await closedWithin(extra, 2_000);
      assert.ok(ms < 400, `the 21st connection was closed after ${ms} ms`);
    } finally {
      for (const socket of held) socket.destroy();
    }
  });
});

describe('Behind a TLS proxy', () => {
  const password = 'correct horse battery';

  async function logInThrough(server: TestServer, email: string, headers: Record<string, string>, secret = password) {
    const client = new DashboardClient(server.url);
    const withHeaders = (init: RequestInit): RequestInit => ({ ...init, headers: { ...(init.headers as Record<string, string>), ...headers } });
    const send = client.send.bind(client);
    client.send = (path, init) => send(path, withHeaders(init));
    return client.logIn(email, secret);
  }

  it('without TRUST_PROXY, X-Forwarded-Proto is ignored: the session cookie is not Secure', async () => {
    const server = await startTestServer(database.db);
    try {
      const { email } = await createAccountWithAdmin(database.db, password);
      const reply = await logInThrough(server, email, { 'x-forwarded-proto': 'https' });
      assert.equal(reply.status, 303);
      const cookie = reply.headers.getSetCookie().find((line) => line.startsWith('loanql_session='));
      assert.ok(cookie && !/;\s*Secure/i.test(cookie), cookie);
    } finally {
      await server.close();
    }
  });

  it('with TRUST_PROXY=loopback, the session cookie is Secure when the proxy says https', async () => {
    const server = await startTestServer(database.db, { trustProxy: configFromEnv({ TRUST_PROXY: 'loopback' }).trustProxy });
    try {
      const { email } = await createAccountWithAdmin(database.db, password);
      const reply = await logInThrough(server, email, { 'x-forwarded-proto': 'https', 'x-forwarded-for': '203.0.113.7' });
      assert.equal(reply.status, 303);
      const cookie = reply.headers.getSetCookie().find((line) => line.startsWith('loanql_session='));
      assert.match(cookie ?? '', /;\s*Secure/i);
    } finally {
      await server.close();
    }
  });

  it('with TRUST_PROXY, the login throttle counts each forwarded client address on its own', async () => {
    const server = await startTestServer(database.db, { trustProxy: 1 });
    try {
      const { email } = await createAccountWithAdmin(database.db, password);
      // Five failures from one client address lock that address out for this e-mail…
      for (let i = 0; i < 5; i++) assert.equal((await logInThrough(server, email, { 'x-forwarded-for': '198.51.100.1' }, 'wrong password')).status, 401);
      const throttled = await logInThrough(server, email, { 'x-forwarded-for': '198.51.100.1' });
      assert.equal(throttled.status, 429);
      // …but not another client behind the same proxy.
      assert.equal((await logInThrough(server, email, { 'x-forwarded-for': '198.51.100.2' })).status, 303);
    } finally {
      await server.close();
    }
  });

  it('with TRUST_PROXY, the login throttle counts an IPv6 client by its /64: fresh addresses of one network do not reset it', async () => {
    const server = await startTestServer(database.db, { trustProxy: 1 });
    try {
      const { email } = await createAccountWithAdmin(database.db, password);
      // Before, each of the 2^64 addresses a subscriber's /64 holds had its own five tries.
      for (let i = 1; i <= 5; i++) assert.equal((await logInThrough(server, email, { 'x-forwarded-for': `2001:db8:0:7::${i}` }, 'wrong password')).status, 401);
      const throttled = await logInThrough(server, email, { 'x-forwarded-for': '2001:db8:0:7:abcd:1:2:3' });
      assert.equal(throttled.status, 429);
      // Another /64 is another client.
      assert.equal((await logInThrough(server, email, { 'x-forwarded-for': '2001:db8:0:8::1' })).status, 303);
    } finally {
      await server.close();
    }
  });

  it('TRUST_PROXY is read as Express’s trust proxy setting', () => {
    assert.equal(configFromEnv({}).trustProxy, false);
    assert.equal(configFromEnv({ TRUST_PROXY: 'true' }).trustProxy, true);
    assert.equal(configFromEnv({ TRUST_PROXY: '2' }).trustProxy, 2);
    assert.equal(configFromEnv({ TRUST_PROXY: '10.0.0.0/8, loopback' }).trustProxy, '10.0.0.0/8, loopback');
  });
});

describe('The plan cache', () => {
  it('keeps at most PLAN_CACHE_MAX_BYTES (16 MiB, estimated), however many unique documents arrive', () => {
    const engine = new GraphEngine(assumeEmptyCatalogue(loadMetadataFile(METADATA_PATH)), { maxDepth: 12, maxRows: null, planCacheSize: 1000 });
    // 200 unique documents of 800 fields (~10 KB, about 1.4 MB of heap each once parsed).
    const padding = Array.from({ length: 800 }, (_, i) => `f${i}: name`).join(' ');
    for (let i = 0; i < 200; i++) engine.prepare({ query: `{ loans(where: {name: {_eq: "n${i}"}}) { id ${padding} } }` }, '00000000-0000-4000-8000-000000000001');
    const usage = engine.planCacheUsage;
    assert.ok(usage.bytes <= 16 * 1024 * 1024, `${usage.bytes} bytes cached`);
    assert.ok(usage.entries < 200, `${usage.entries} entries`);
    assert.ok(usage.entries > 10);
  });
});
