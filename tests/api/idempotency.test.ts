import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createApiKey, deactivateApiKey } from '../../app/apiKeys.js';
import { startSeededService, type GraphBody, type SeededService } from '../support/seededService.js';

/** The first row of a result, which must be there. */
const firstRow = <T>(rows: readonly T[]): T => {
  assert.ok(rows.length, 'expected a row');
  return rows[0]!;
};

/**
 * Issue 14, Done-when 5: `Idempotency-Key` on `POST /api/graph` mutations and `POST /api/loan`,
 * with Stripe's semantics — the same key and body run once and replay the stored response; the
 * same key with another body is refused; concurrent requests with one key write once.
 */
let s: SeededService;
let loanId: string;

before(async () => {
  s = await startSeededService({ scale: 0.01 });
  loanId = (await s.sql<{ id: string }>(`SELECT id FROM loans WHERE account_id = $1 AND status = 'servicing' ORDER BY id LIMIT 1`, [s.account.id]))[0]!.id;
});
after(() => s?.close());

const paymentsOn = async (date: string): Promise<number> =>
  (await s.sql<{ n: number }>(`SELECT count(*)::int AS n FROM payments WHERE account_id = $1 AND loan_id = $2 AND date = $3`, [s.account.id, loanId, date]))[0]!.n;

async function post(path: string, body: unknown, key?: string, apiKey = s.apiKey): Promise<{ status: number; text: string; replayed: string | null; location: string | null }> {
  const response = await fetch(`${s.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Token ${apiKey}`, 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
    body: JSON.stringify(body),
  });
  return { status: response.status, text: await response.text(), replayed: response.headers.get('idempotent-replayed'), location: response.headers.get('location') };
}

const postPayment = (date: string) => ({
  query: `mutation($loan: uuid!, $date: date!) { insert_payments_one(object: {loan_id: $loan, date: $date, amount: 125.50, method: "ach"}) { id amount } }`,
  variables: { loan: loanId, date },
});

describe('Idempotency-Key on POST /api/graph', () => {
  it('20 concurrent requests with one key post exactly one payment, and all get its response', async () => {
    const body = postPayment('2027-01-01');
    const answers = await Promise.all(Array.from({ length: 20 }, () => post('/api/graph', body, 'concurrent-key-1')));
    assert.deepEqual(new Set(answers.map((a) => a.status)), new Set([200]));
    assert.equal(new Set(answers.map((a) => a.text)).size, 1, 'every answer is the first response');
    assert.equal(answers.filter((a) => a.replayed === null).length, 1, 'one request ran; the others replayed');
    assert.equal(await paymentsOn('2027-01-01'), 1);
  });

  it('a retry after success returns the first response with Idempotent-Replayed and writes nothing', async () => {
    const body = postPayment('2027-02-01');
    const first = await post('/api/graph', body, 'retry-key');
    assert.equal(first.status, 200);
    assert.equal(first.replayed, null);
    const again = await post('/api/graph', body, 'retry-key');
    assert.equal(again.status, 200);
    assert.equal(again.replayed, 'true');
    assert.equal(again.text, first.text);
    assert.equal(await paymentsOn('2027-02-01'), 1);
  });

  it('the same key with another body is a 409, and nothing is written', async () => {
    await post('/api/graph', postPayment('2027-03-01'), 'reused-key');
    const other = await post('/api/graph', postPayment('2027-03-02'), 'reused-key');
    assert.equal(other.status, 409);
    assert.equal((JSON.parse(other.text) as GraphBody).errors?.[0]?.extensions?.code, 'idempotency-key-reused');
    assert.equal(await paymentsOn('2027-03-02'), 0);
  });

  it('a failed request leaves no key behind: corrected, it runs', async () => {
    const bad = await post('/api/graph', { ...postPayment('2027-04-01'), query: postPayment('x').query.replace('125.50', '0') }, 'failed-key');
    assert.equal((JSON.parse(bad.text) as GraphBody).errors?.[0]?.extensions?.code, 'check-violation');
    const good = await post('/api/graph', postPayment('2027-04-01'), 'failed-key');
    assert.equal(good.status, 200, good.text);
    assert.equal(await paymentsOn('2027-04-01'), 1);
  });

  it('keys are per account, a read ignores the key, and a malformed key is a 400', async () => {
    const read = await post('/api/graph', { query: `{ loans(limit: 1) { id } }` }, 'read-key');
    assert.equal(read.status, 200);
    assert.equal((await s.sql(`SELECT 1 FROM idempotency_keys WHERE key = 'read-key'`)).length, 0);
    const malformed = await post('/api/graph', postPayment('2027-05-01'), ' ');
    assert.equal(malformed.status, 400);
    assert.equal(await paymentsOn('2027-05-01'), 0);
  });

  it('a key older than 24 hours runs again', async () => {
    const body = postPayment('2027-06-01');
    await post('/api/graph', body, 'old-key');
    await s.sql(`UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE account_id = $1 AND key = 'old-key'`, [s.account.id]);
    const again = await post('/api/graph', body, 'old-key');
    assert.equal(again.replayed, null);
    assert.equal(await paymentsOn('2027-06-01'), 2);
  });
});

describe('Idempotency-Key on POST /api/loan', () => {
  it('a retried loan creation creates one loan and returns the first response and Location', async () => {
    const body = { Name: 'Idempotent bridge', Amount: 50000, Rate: 9, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' };
    const answers = await Promise.all(Array.from({ length: 5 }, () => post('/api/loan', body, 'loan-key')));
    assert.deepEqual(new Set(answers.map((a) => a.status)), new Set([201]));
    assert.equal(new Set(answers.map((a) => a.text)).size, 1);
    assert.equal(new Set(answers.map((a) => a.location)).size, 1);
    const { n } = firstRow(await s.sql<{ n: number }>(`SELECT count(*)::int AS n FROM loans WHERE account_id = $1 AND name = 'Idempotent bridge'`, [s.account.id]));
    assert.equal(n, 1);
    const other = await post('/api/loan', { ...body, Amount: 60000 }, 'loan-key');
    assert.equal(other.status, 409);
    // The same code as GraphQL's 409 (docs/interface.md, Errors).
    assert.equal((JSON.parse(other.text) as { code?: string }).code, 'idempotency-key-reused');
  });
});

describe('Security: stored responses belong to the API key, and a revoked key gets none (issue 26, findings 3 and 4)', () => {
  const newKey = async (role = 'admin') => createApiKey(s.db, s.account.id, `idempotency ${role}`, { role, variables: new Map() });

  it('a revoked key, with the verified-key cache warm, gets 403 for its own replay and for another body: no response, no hint the key was used', async () => {
    const key = await newKey();
    const body = postPayment('2027-07-01');
    const first = await post('/api/graph', body, 'revoked-replay', key.key);
    assert.equal(first.status, 200, first.text);
    // Warm: a read with the key, then revoke it behind the cache's back.
    assert.equal((await post('/api/graph', { query: '{ loans(limit: 1) { id } }' }, undefined, key.key)).status, 200);
    assert.ok(await deactivateApiKey(s.db, key.prefix));
    for (const [path, request] of [
      ['/api/graph', body],
      ['/api/graph', postPayment('2027-07-02')],
      ['/api/loan', { Name: 'replayed?', Amount: 1000 }],
    ] as const) {
      const answer = await post(path, request, 'revoked-replay', key.key);
      assert.deepEqual([answer.status, answer.text, answer.replayed], [403, 'Not authorized', null], `${path} ${JSON.stringify(request)}`);
    }
    const unused = await post('/api/graph', postPayment('2027-07-03'), 'never-used', key.key);
    assert.deepEqual([unused.status, unused.text], [403, 'Not authorized']);
    assert.equal(await paymentsOn('2027-07-01'), 1);
    assert.equal(await paymentsOn('2027-07-02'), 0);
    assert.equal(await paymentsOn('2027-07-03'), 0);
  });

  it('another key of the account, the same idempotency key and body: its own write, never the first key\'s response; another body is no 409', async () => {
    const [one, two] = [await newKey(), await newKey()];
    const body = postPayment('2027-08-01');
    const first = await post('/api/graph', body, 'shared-idem', one.key);
    const second = await post('/api/graph', body, 'shared-idem', two.key);
    assert.deepEqual([first.status, second.status, second.replayed], [200, 200, null]);
    assert.notEqual(second.text, first.text, 'the second key ran its own mutation');
    assert.equal(await paymentsOn('2027-08-01'), 2);
    const other = await post('/api/graph', postPayment('2027-08-02'), 'shared-idem', (await newKey()).key);
    assert.equal(other.status, 200, other.text);
    // Each key still replays its own.
    const again = await post('/api/graph', body, 'shared-idem', one.key);
    assert.deepEqual([again.replayed, again.text], ['true', first.text]);
  });

  it('a narrower role never replays a wider role\'s response (its returning rows included)', async () => {
    const servicer = await newKey('servicer');
    const body = { query: `mutation($loan: uuid!) { insert_comments_one(object: {loan_id: $loan, text: "admin only"}) { id text } }`, variables: { loan: loanId } };
    const admin = await post('/api/graph', body, 'role-scope', s.apiKey);
    assert.equal(admin.status, 200, admin.text);
    const narrower = await post('/api/graph', body, 'role-scope', servicer.key);
    assert.equal(narrower.replayed, null);
    assert.notEqual(narrower.text, admin.text);
  });
});
