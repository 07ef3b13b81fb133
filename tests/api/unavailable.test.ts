import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { openPostgresDatabase, type Database } from '../../db/index.js';
import { buildEngine, EngineHolder } from '../../app/engineHolder.js';
import { configFromEnv, engineOptionsOf } from '../../app/config.js';
import { createApp } from '../../server/createApp.js';
import { createHttpServer, listen } from '../../server/httpServer.js';
import { createLogger } from '../../app/logger.js';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { freePort } from '../support/processes.js';
import { createAccountWithKey, METADATA_PATH } from '../support/http.js';
import { checkerOf } from '../support/restClient.js';
import { openApiDocument } from '../../api/openapi.js';
import { loadDefaultProduct } from '../../app/products.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';

/**
 * Issue 11, item 1: while the database cannot be reached, requests are answered 503 with
 * `Retry-After` — GraphQL in its `errors` shape with code `database-unavailable`, REST as JSON —
 * never 500, and nothing is logged as an internal error. The service here runs over a real
 * node-postgres pool pointed at a port where no server listens (the engine's schema was built
 * from a real database first, as at start-up).
 */
let database: TestDatabase;
let unreachable: Database;
let server: Server;
let url: string;
const logs: Record<string, unknown>[] = [];

before(async () => {
  database = await openTestDatabase();
  const config = { ...configFromEnv({}), metadataPath: METADATA_PATH };
  const engines = new EngineHolder(await buildEngine(METADATA_PATH, database.db, engineOptionsOf(config)), METADATA_PATH, database.db, engineOptionsOf(config));
  unreachable = openPostgresDatabase({ connectionString: `postgres://postgres@127.0.0.1:${await freePort()}/postgres`, connectTimeoutMs: 2_000 });
  const capture = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const app = createApp({ db: unreachable, logger: createLogger('warn', capture), config, databaseDescription: 'nowhere', engines });
  server = createHttpServer(app, config.http);
  await listen(server, 0, '127.0.0.1');
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await unreachable?.close();
  await database?.close();
});

const key = 'lq_abcdefgh_' + 'x'.repeat(43);

describe('With the database unreachable', () => {
  it('POST /api/graph is 503 database-unavailable with Retry-After', async () => {
    const response = await fetch(`${url}/api/graph`, { method: 'POST', headers: { authorization: `Token ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ loans { id } }' }) });
    assert.equal(response.status, 503);
    assert.equal(response.headers.get('retry-after'), '2');
    const body = (await response.json()) as { errors: { message: string; extensions: { code: string } }[] };
    assert.equal(body.errors[0]!.extensions.code, 'database-unavailable');
    assert.match(body.errors[0]!.message, /database is unavailable/);
  });

  for (const [method, path, body] of [
    ['GET', '/api/loan', undefined],
    ['POST', '/api/loan', '{"Name":"x"}'],
    ['PATCH', '/api/loan/00000000-0000-4000-8000-000000000001', '{"Name":"x"}'],
  ] as const) {
    it(`${method} ${path} is a JSON 503 with Retry-After`, async () => {
      const response = await fetch(`${url}${path}`, { method, headers: { authorization: `Token ${key}`, 'content-type': 'application/json' }, ...(body ? { body } : {}) });
      assert.equal(response.status, 503);
      assert.equal(response.headers.get('retry-after'), '2');
      assert.deepEqual(await response.json(), { error: 'the database is unavailable; retry shortly', code: 'database-unavailable' });
    });
  }

  it('every REST operation of the OpenAPI document answers the 503 the document describes', async () => {
    // The document as the service serves it to an admin key (it cannot serve it now): built from a reachable database.
    const { account } = await createAccountWithKey(database.db);
    const checker = await checkerOf(openApiDocument(await loadDefaultProduct(database.db, account.id), '/'));
    const paths = checker.document.paths as Record<string, Record<string, unknown>>;
    let operations = 0;
    for (const [template, item] of Object.entries(paths)) {
      for (const method of ['GET', 'POST', 'PATCH'].filter((name) => name.toLowerCase() in item)) {
        const path = template.replace(/\{[a-z_]+\}/g, '00000000-0000-4000-8000-000000000001');
        const response = await fetch(`${url}${path}`, { method, headers: { authorization: `Token ${key}`, 'content-type': 'application/json' }, ...(method === 'GET' ? {} : { body: '{}' }) });
        const text = await response.text();
        assert.equal(response.status, 503, `${method} ${path}: ${text}`);
        checker.check(method, path, { status: response.status, contentType: response.headers.get('content-type'), text });
        operations += 1;
      }
    }
    assert.ok(operations >= 14, `${operations} operations`);
  });

  // Express's error handlers answered GraphQL's 503 as application/json whatever Accept said, and
  // the console's JSON endpoint (a dashboard fetch) with the dashboard's HTML page.
  for (const [accept, type] of [
    ['application/graphql-response+json', 'application/graphql-response+json'],
    ['application/graphql-response+json;q=0.5, application/json', 'application/json'],
    [undefined, 'application/json'],
  ] as const) {
    it(`/api/graph's 503 (POST and GET) is in the type Accept ${accept ?? '(none)'} ranks first: ${type}`, async () => {
      const headers = { authorization: `Token ${key}`, ...(accept ? { accept } : {}) };
      const posted = await fetch(`${url}/api/graph`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json; charset="utf-8"' }, body: JSON.stringify({ query: '{ loans { id } }' }) });
      const got = await fetch(`${url}/api/graph?query=${encodeURIComponent('{ loans { id } }')}`, { headers });
      for (const response of [posted, got]) {
        assert.equal(response.status, 503);
        assert.equal(response.headers.get('content-type')?.split(';')[0], type);
        assert.equal(response.headers.get('retry-after'), '2');
        assert.equal(((await response.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code, 'database-unavailable');
      }
    });
  }

  it("the console's /dashboard/graph answers its 503 in GraphQL's shape, a dashboard page as an HTML page", async () => {
    const cookie = `loanql_session=${'s'.repeat(43)}`;
    const consoleAnswer = await fetch(`${url}/dashboard/graph`, { method: 'POST', headers: { cookie, accept: 'application/graphql-response+json', 'content-type': 'application/json', 'x-csrf-token': 'x' }, body: JSON.stringify({ query: '{ loans { id } }' }) });
    assert.equal(consoleAnswer.status, 503);
    assert.equal(consoleAnswer.headers.get('content-type')?.split(';')[0], 'application/graphql-response+json');
    assert.equal(((await consoleAnswer.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code, 'database-unavailable');
    const page = await fetch(`${url}/dashboard/loans`, { headers: { cookie, accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    assert.equal(page.status, 503);
    assert.equal(page.headers.get('content-type')?.split(';')[0], 'text/html');
    assert.match(await page.text(), /The database is unavailable/);
  });

  it('GET /healthz (liveness) stays 200; GET /readyz says 503', async () => {
    assert.equal((await fetch(`${url}/healthz`)).status, 200);
    const ready = await fetch(`${url}/readyz`);
    assert.equal(ready.status, 503);
    assert.equal(((await ready.json()) as { database: { status: string } }).database.status, 'unavailable');
  });

  it('logged no internal error', () => {
    assert.deepEqual(
      logs.filter((line) => line.msg === 'internal error'),
      [],
    );
  });
});
