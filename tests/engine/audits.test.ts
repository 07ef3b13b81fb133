import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serverAudits, type AuditResult } from 'graphql-http';
import { openTestDatabase, testDatabaseKind, type TestDatabase } from '../support/testDatabase.js';
import { createAccountWithKey, startTestServer, type TestServer } from '../support/http.js';

/**
 * `graphql-http`'s server audits (the GraphQL-over-HTTP specification's conformance checks)
 * against the real app's `POST /api/graph`, authenticated with an API key. Every MUST audit
 * is asserted, one test each; so is every audit of GET requests (`GET_AUDITS`: MAY ones
 * included — issue 19 serves queries over GET and refuses mutations with 405). The other
 * SHOULD and MAY audits are run and their outcome, met or not, is reported in the test's
 * diagnostics (SPEC §5 asks for the conventions, not every option).
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

/**
 * The audits of GET requests: queries in the query string (5A70), variables as URL-encoded JSON
 * for both response types (D6D5, 6A70), and no mutation over GET (9C48, a 4xx: ours is 405).
 */
const GET_AUDITS = new Set(['5A70', '9C48', 'D6D5', '6A70']);

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

  describe('GET (every audit asserted, SHOULD and MAY included)', () => {
    const getAudits = audits.filter((a) => GET_AUDITS.has(a.id));
    it('finds the GET audits in this graphql-http version', () => assert.equal(getAudits.length, GET_AUDITS.size));
    for (const audit of getAudits) {
      it(`${audit.id} ${audit.name}`, async (t) => {
        const result = await audit.fn();
        t.diagnostic(`${audit.id} ${audit.name}: ${result.status}`);
        assert.equal(result.status, 'ok', `${audit.id} ${audit.name}\n${await describeResult(result)}`);
      });
    }
  });

  describe('SHOULD and MAY (reported, not asserted)', () => {
    for (const audit of audits.filter((a) => !a.name.startsWith('MUST') && !GET_AUDITS.has(a.id))) {
      it(audit.name, async (t) => {
        const result = await audit.fn();
        t.diagnostic(result.status === 'ok' ? `${audit.id} met` : `${audit.id} not met — ${await describeResult(result)}`);
      });
    }
  });
});
