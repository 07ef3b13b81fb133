import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { deactivateApiKey } from '../../app/apiKeys.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';
import { createAccountWithKey, startTestServer, tokenHeader, type TestServer } from '../support/http.js';

/**
 * SPEC §4 on `POST /api/graph`, where a key the service has verified before is not read again:
 * its state is checked inside the request's one statement (and, for answers that run no
 * statement, by a check of its own). A key deactivated by anyone is still refused on its very
 * next request, whatever that request is.
 */
interface Answer {
  readonly status: number;
  readonly contentType: string | null;
  readonly body: string;
}

const NOT_AUTHORIZED: Answer = { status: 403, contentType: 'text/plain', body: 'Not authorized' };

let database: TestDatabase;
let server: TestServer;

before(async () => {
  database = await openTestDatabase();
  server = await startTestServer(database.db);
});

after(async () => {
  await server?.close();
  await database?.close();
});

async function graph(key: string, body: string, contentType = 'application/json'): Promise<Answer> {
  const response = await fetch(`${server.url}/api/graph`, { method: 'POST', headers: { ...tokenHeader(key), 'content-type': contentType }, body });
  return { status: response.status, contentType: response.headers.get('content-type'), body: await response.text() };
}

const DATA_QUERY = JSON.stringify({ query: '{ loans(limit: 1) { id } }' });

/** A key that has just been used successfully on /api/graph (so the service knows it), then deactivated. */
async function usedThenDeactivatedKey(): Promise<string> {
  const { apiKey } = await createAccountWithKey(database.db);
  const first = await graph(apiKey.key, DATA_QUERY);
  assert.equal(first.status, 200);
  assert.deepEqual(JSON.parse(first.body), { data: { loans: [] } });
  assert.equal((await deactivateApiKey(database.db, apiKey.prefix))?.wasActive, true);
  return apiKey.key;
}

describe('POST /api/graph refuses a key deactivated after it worked, on its very next request', () => {
  const nextRequests: readonly [string, string, string?][] = [
    ['a data query', DATA_QUERY],
    ['an introspection-only query (answered without a data statement)', JSON.stringify({ query: '{ __typename }' })],
    ['a query that fails validation', JSON.stringify({ query: '{ no_such_field }' })],
    ['a query that does not parse', JSON.stringify({ query: '{ loans {' })],
    ['a body that is not a GraphQL request', JSON.stringify({ variables: {} })],
    ['a body that is not JSON', '{not json'],
    ['a body that is not application/json', DATA_QUERY, 'text/plain'],
  ];
  for (const [what, body, contentType] of nextRequests) {
    it(`when the next request is ${what}`, async () => {
      const key = await usedThenDeactivatedKey();
      assert.deepEqual(await graph(key, body, contentType), NOT_AUTHORIZED);
      // And it stays refused.
      assert.deepEqual(await graph(key, DATA_QUERY), NOT_AUTHORIZED);
    });
  }

  it('when its account was deleted', async () => {
    const { account, apiKey } = await createAccountWithKey(database.db);
    assert.equal((await graph(apiKey.key, DATA_QUERY)).status, 200);
    await database.db.query('DELETE FROM accounts WHERE id = $1', [account.id]);
    assert.deepEqual(await graph(apiKey.key, DATA_QUERY), NOT_AUTHORIZED);
  });
});

describe('POST /api/graph with a key the service has verified before', () => {
  it('answers repeated requests with the account’s data, each in one statement', async () => {
    const { account, apiKey } = await createAccountWithKey(database.db);
    await database.db.query(`INSERT INTO loans (account_id, name) VALUES ($1, 'only loan')`, [account.id]);
    const query = JSON.stringify({ query: '{ loans { name } }' });
    assert.equal((await graph(apiKey.key, query)).status, 200);
    const statements: string[] = [];
    const stop = database.db.observe((text) => statements.push(text));
    try {
      for (let i = 0; i < 3; i++) assert.deepEqual(JSON.parse((await graph(apiKey.key, query)).body), { data: { loans: [{ name: 'only loan' }] } });
    } finally {
      stop();
    }
    const withoutLastUse = statements.filter((text) => !text.startsWith('UPDATE api_keys SET last_used_at'));
    assert.equal(withoutLastUse.length, 3, withoutLastUse.join('\n'));
  });

  it('still refuses a wrong secret with a known prefix', async () => {
    const { apiKey } = await createAccountWithKey(database.db);
    assert.equal((await graph(apiKey.key, DATA_QUERY)).status, 200);
    const wrongSecret = `${apiKey.key.slice(0, 12)}${'A'.repeat(43)}`;
    assert.deepEqual(await graph(wrongSecret, DATA_QUERY), NOT_AUTHORIZED);
  });
});
