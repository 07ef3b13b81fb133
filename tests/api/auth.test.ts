import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createApiKey, deactivateApiKey } from '../../app/apiKeys.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';
import { createAccountWithKey, startTestServer, tokenHeader, type TestServer } from '../support/http.js';
import { openApiChecker } from '../support/restClient.js';

/**
 * SPEC §4 / interface §5: every way of getting auth wrong gets exactly one answer.
 *
 * Decision: the scheme word is `Token`, exactly as the interface writes it. `token`, `TOKEN`,
 * `Bearer` and a bare key are refused like any other malformed header; whitespace around the
 * key is tolerated.
 */
interface Answer {
  readonly status: number;
  readonly contentType: string | null;
  readonly body: string;
}

/** Every answer of a REST loan route, checked against the OpenAPI document at the end. */
const restAnswers: { method: string; path: string; answer: Answer }[] = [];

async function send(url: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(url, init);
  const answer = { status: response.status, contentType: response.headers.get('content-type'), body: await response.text() };
  const path = new URL(url).pathname;
  if (path === '/api/loan' || path.startsWith('/api/loan/')) restAnswers.push({ method: init.method ?? 'GET', path, answer });
  return answer;
}

function assertNotAuthorized(answer: Answer, what: string): void {
  assert.deepEqual(answer, { status: 403, contentType: 'text/plain', body: 'Not authorized' }, what);
}

let database: TestDatabase;
let server: TestServer;
let validKey: string;
let accountId: string;

before(async () => {
  database = await openTestDatabase();
  server = await startTestServer(database.db);
  const made = await createAccountWithKey(database.db);
  validKey = made.apiKey.key;
  accountId = made.account.id;
});

after(async () => {
  await server?.close();
  await database?.close();
});

/** A key in the right format that was never issued. */
function unissuedKey(): string {
  const prefix = `lq_${randomBytes(8).toString('hex').slice(0, 8)}`;
  return `${prefix}_${randomBytes(32).toString('base64url')}`;
}

describe('API authentication (SPEC §4)', () => {
  describe('refuses with exactly 403 text/plain "Not authorized"', () => {
    const wrongHeaders: readonly [string, () => Record<string, string>][] = [
      ['a request without an Authorization header', () => ({})],
      ['an empty Authorization header', () => ({ authorization: '' })],
      ['the scheme word alone', () => ({ authorization: 'Token' })],
      ['the scheme word followed only by spaces', () => ({ authorization: 'Token    ' })],
      ['a Bearer token carrying a valid key', () => ({ authorization: `Bearer ${validKey}` })],
      ['a lower-case "token" scheme carrying a valid key', () => ({ authorization: `token ${validKey}` })],
      ['an upper-case "TOKEN" scheme carrying a valid key', () => ({ authorization: `TOKEN ${validKey}` })],
      ['a valid key with no scheme word', () => ({ authorization: validKey })],
      ['Basic credentials made of a valid key', () => ({ authorization: `Basic ${Buffer.from(`${validKey}:`).toString('base64')}` })],
      ['a key that is not in the key format', () => ({ authorization: 'Token not-a-key' })],
      ['the visible prefix of a valid key alone', () => ({ authorization: `Token ${validKey.slice(0, 11)}` })],
      ['a valid key with its last character cut off', () => ({ authorization: `Token ${validKey.slice(0, -1)}` })],
      ['a valid key with a character added', () => ({ authorization: `Token ${validKey}A` })],
      ['a valid key followed by another word', () => ({ authorization: `Token ${validKey} extra` })],
      ['a valid key in upper case', () => ({ authorization: `Token ${validKey.toUpperCase()}` })],
      [
        'the right prefix with a wrong secret',
        () => ({ authorization: `Token ${validKey.slice(0, 12)}${randomBytes(32).toString('base64url')}` }),
      ],
      ['a well-formed key with an unknown prefix', () => ({ authorization: `Token ${unissuedKey()}` })],
    ];
    for (const [what, headers] of wrongHeaders) {
      it(what, async () => {
        assertNotAuthorized(await send(`${server.url}/api/loan`, { headers: headers() }), what);
      });
    }

    it('on every /api route and method, before the body is read', async () => {
      const attempts: readonly [string, RequestInit][] = [
        ['/api', {}],
        ['/api/loan', {}],
        ['/api/loan?status=servicing&limit=5', {}],
        [`/api/loan/${accountId}`, {}],
        ['/api/loan', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"Name": "x"}' }],
        ['/api/loan', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{not json' }],
        ['/api/loan', { method: 'POST', body: 'x'.repeat(2 * 1024 * 1024) }],
        [`/api/loan/${accountId}`, { method: 'PATCH', body: '{}' }],
        ['/api/graph', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ loans { id } }"}' }],
        ['/api/graph/explain', { method: 'POST', body: '{}' }],
        ['/api/no-such-route', { method: 'DELETE' }],
      ];
      for (const [path, init] of attempts) {
        assertNotAuthorized(await send(`${server.url}${path}`, init), `${init.method ?? 'GET'} ${path} without a key`);
        const withWrongKey = { ...init, headers: { ...(init.headers as Record<string, string> | undefined), ...tokenHeader(unissuedKey()) } };
        assertNotAuthorized(await send(`${server.url}${path}`, withWrongKey), `${init.method ?? 'GET'} ${path} with an unknown key`);
      }
    });

    it('a key deactivated after it worked, from its very next request on', async () => {
      const { apiKey } = await createAccountWithKey(database.db);
      assert.equal((await send(`${server.url}/api/loan`, { headers: tokenHeader(apiKey.key) })).status, 200);
      const first = await deactivateApiKey(database.db, apiKey.prefix);
      assert.equal(first?.wasActive, true);
      assertNotAuthorized(await send(`${server.url}/api/loan`, { headers: tokenHeader(apiKey.key) }), 'the deactivated key');
      // A second deactivation changes nothing and says so: the key was inactive, since the first one.
      assert.deepEqual(await deactivateApiKey(database.db, apiKey.prefix), { wasActive: false, deactivatedAt: first!.deactivatedAt });
      assert.equal(await deactivateApiKey(database.db, 'lq_00000000'), null, 'no such key');
    });

    it('a key whose account was deleted', async () => {
      const { account, apiKey } = await createAccountWithKey(database.db);
      assert.equal((await send(`${server.url}/api/loan`, { headers: tokenHeader(apiKey.key) })).status, 200);
      await database.db.query('DELETE FROM accounts WHERE id = $1', [account.id]);
      assertNotAuthorized(await send(`${server.url}/api/loan`, { headers: tokenHeader(apiKey.key) }), 'the key of a deleted account');
    });
  });

  describe('accepts a valid key', () => {
    it('with status 200 and the loan list on GET /api/loan', async () => {
      const answer = await send(`${server.url}/api/loan`, { headers: tokenHeader(validKey) });
      assert.equal(answer.status, 200);
      assert.match(answer.contentType ?? '', /^application\/json/);
      assert.deepEqual(JSON.parse(answer.body), { loans: [], total: 0, limit: 50, offset: 0 });
    });

    it('with spaces around the key', async () => {
      const answer = await send(`${server.url}/api/loan`, { headers: { authorization: `Token   ${validKey}  ` } });
      assert.equal(answer.status, 200);
    });

    it('and answers only with its own account’s data', async () => {
      const first = await createAccountWithKey(database.db);
      const second = await createAccountWithKey(database.db);
      await database.db.query(`INSERT INTO loans (account_id, name) VALUES ($1, 'first loan'), ($2, 'second loan')`, [first.account.id, second.account.id]);
      for (const [made, name] of [
        [first, 'first loan'],
        [second, 'second loan'],
      ] as const) {
        const page = JSON.parse((await send(`${server.url}/api/loan`, { headers: tokenHeader(made.apiKey.key) })).body) as { loans: { name: string }[]; total: number };
        assert.deepEqual(
          page.loans.map((loan) => loan.name),
          [name],
        );
        assert.equal(page.total, 1);
      }
    });

    it('and records when it was last used', async () => {
      const { apiKey } = await createAccountWithKey(database.db);
      const lastUsed = async (): Promise<string | null> =>
        (await database.db.query<{ last_used_at: string | null }>('SELECT last_used_at FROM api_keys WHERE prefix = $1', [apiKey.prefix])).rows[0]!.last_used_at;
      assert.equal(await lastUsed(), null);
      assert.equal((await send(`${server.url}/api/loan`, { headers: tokenHeader(apiKey.key) })).status, 200);
      // Recorded beside the request, not in its way: wait briefly for it.
      const deadline = Date.now() + 5_000;
      while ((await lastUsed()) === null && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.notEqual(await lastUsed(), null);
    });
  });

  describe('stores keys', () => {
    it('only as a SHA-256 hash: the key text appears nowhere in its row', async () => {
      const { apiKey } = await createAccountWithKey(database.db);
      assert.match(apiKey.key, /^lq_[a-z0-9]{8}_[A-Za-z0-9_-]{43}$/);
      assert.ok(apiKey.key.startsWith(`${apiKey.prefix}_`), 'the visible prefix names the key');
      const { rows } = await database.db.query<{ row: string; hash: string }>(
        `SELECT row_to_json(k)::text AS row, encode(k.key_hash, 'hex') AS hash FROM api_keys k WHERE prefix = $1`,
        [apiKey.prefix],
      );
      const row = rows[0]!;
      const secret = apiKey.key.slice(apiKey.prefix.length + 1);
      assert.ok(!row.row.includes(apiKey.key), 'the whole key is not stored');
      assert.ok(!row.row.includes(secret), 'the secret part is not stored');
      assert.ok(!row.row.includes(Buffer.from(secret, 'base64url').toString('hex')), 'nor its bytes');
      assert.equal(row.hash, createHash('sha256').update(apiKey.key).digest('hex'));
    });

    it('with 32 random bytes of secret, so no two keys share one', async () => {
      const { apiKey: one } = await createAccountWithKey(database.db);
      const { apiKey: two } = await createAccountWithKey(database.db);
      assert.equal(Buffer.from(one.key.slice(12), 'base64url').length, 32);
      assert.notEqual(one.key.slice(12), two.key.slice(12));
      assert.notEqual(one.prefix, two.prefix);
    });

    it('and never writes a key to the logs', () => {
      assert.ok(!JSON.stringify(server.logs).includes(validKey));
    });
  });

  describe('GET /healthz', () => {
    it('needs no key', async () => {
      const answer = await send(`${server.url}/healthz`);
      assert.equal(answer.status, 200);
      assert.equal((JSON.parse(answer.body) as { status: string }).status, 'ok');
    });

    // Issue 26, finding 8: without a key it showed the data directory's path, the embedded
    // share's port and the process id. Details are an admin key's only.
    it('without an admin key says only {"status":"ok"} — no path, port, pid or database kind (healthz and readyz)', async () => {
      const { account } = await createAccountWithKey(database.db);
      const readOnly = await createApiKey(database.db, account.id, 'reader', { role: 'read_only', variables: new Map() });
      const revoked = await createApiKey(database.db, account.id, 'gone');
      assert.ok(await deactivateApiKey(database.db, revoked.prefix));
      const headerSets: [string, Record<string, string>][] = [
        ['no key', {}],
        ['a read_only key', tokenHeader(readOnly.key)],
        ['a revoked admin key', tokenHeader(revoked.key)],
        ['a made-up key', tokenHeader(`lq_abcdefgh_${'A'.repeat(43)}`)],
        ['a malformed header', { authorization: 'Bearer nonsense' }],
      ];
      for (const [label, headers] of headerSets) {
        const live = await send(`${server.url}/healthz`, { headers });
        assert.deepEqual([live.status, live.body], [200, '{"status":"ok"}'], label);
        const ready = await send(`${server.url}/readyz`, { headers });
        assert.equal(ready.status, 200, label);
        assert.doesNotMatch(ready.body, /description|kind|pid|127\.0\.0\.1|memory|PGlite|PostgreSQL/i, `${label}: ${ready.body}`);
        assert.deepEqual(Object.keys(JSON.parse(ready.body) as object), ['status', 'database', 'metadata'], label);
      }
    });

    it('with an admin key adds the database and the process id', async () => {
      const live = await send(`${server.url}/healthz`, { headers: tokenHeader(validKey) });
      assert.equal(live.status, 200);
      const body = JSON.parse(live.body) as { status: string; pid: number; database: { kind: string; description: string } };
      assert.deepEqual([body.status, body.pid, typeof body.database.kind, typeof body.database.description], ['ok', process.pid, 'string', 'string']);
      const ready = JSON.parse((await send(`${server.url}/readyz`, { headers: tokenHeader(validKey) })).body) as { database: { status: string; kind: string } };
      assert.deepEqual([ready.database.status, typeof ready.database.kind], ['ok', 'string']);
    });
  });
});

describe('the OpenAPI document', () => {
  it('describes every /api/loan answer of this file, 403s included', async () => {
    const checker = await openApiChecker(server.url, validKey);
    assert.ok(restAnswers.length > 20);
    for (const { method, path, answer } of restAnswers) checker.check(method, path, { status: answer.status, contentType: answer.contentType, text: answer.body });
  });
});
