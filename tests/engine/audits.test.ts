import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serverAudits, type AuditResult } from 'graphql-http';
import { openTestDatabase, testDatabaseKind, type TestDatabase } from '../support/testDatabase.js';
import { createAccountWithKey, startTestServer, type TestServer } from '../support/http.js';

/**
 * `graphql-http`'s server audits (the GraphQL-over-HTTP specification's conformance checks)
 * against the real app's `POST /api/graph`, authenticated with an API key. Every MUST audit
 * is asserted, one test each; SHOULD and MAY audits are run and any not met is reported in
 * the test's diagnostics, not asserted (SPEC §5 asks for the conventions, not every option:
 * GET requests, for one, are answered 405).
 */
let database: TestDatabase;
let server: TestServer;
let url: string;
let apiKey: string;

/** `fetch` with the interface's `Authorization: Token <key>` header on every request. */
const authorizedFetch = (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
  const headers = new Headers(init.headers);
  headers.set('authorization', `Token ${apiKey}`);
  return fetch(input, { ...init, headers });
};

before(async () => {
  database = await openTestDatabase();
  apiKey = (await createAccountWithKey(database.db)).apiKey.key;
  server = await startTestServer(database.db);
  url = `${server.url}/api/graph`;
});

after(async () => {
  await server?.close();
  await database?.close();
});

/** What the server answered, for a failing audit's message. */
async function describeResult(result: AuditResult): Promise<string> {
  if (result.status === 'ok') return 'ok';
  let body = '(body already read)';
  try {
    body = await result.response.clone().text();
  } catch {
    /* consumed by the audit */
  }
  const type = result.response.headers.get('content-type');
  return `${result.status}: ${result.reason}\n  response: ${result.response.status} ${type ?? '(no content-type)'} ${body.slice(0, 500)}`;
}

// The audit list does not depend on the URL; the URL is read when each audit runs.
const audits = serverAudits({ url: () => url, fetchFn: authorizedFetch });

describe(`GraphQL over HTTP: graphql-http server audits on /api/graph (${testDatabaseKind})`, () => {
  it('authenticates: the same request without a key is refused', async () => {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ __typename }' }) });
    assert.equal(response.status, 403);
    const authorized = await authorizedFetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ __typename }' }) });
    assert.equal(authorized.status, 200);
  });

  describe('MUST', () => {
    for (const audit of audits.filter((a) => a.name.startsWith('MUST'))) {
      it(audit.name, async () => {
        const result = await audit.fn();
        assert.equal(result.status, 'ok', `${audit.id} ${audit.name}\n${await describeResult(result)}`);
      });
    }
  });

  describe('SHOULD and MAY (reported, not asserted)', () => {
    for (const audit of audits.filter((a) => !a.name.startsWith('MUST'))) {
      it(audit.name, async (t) => {
        const result = await audit.fn();
        if (result.status !== 'ok') t.diagnostic(`not met — ${await describeResult(result)}`);
      });
    }
  });
});
