import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { configFromEnv } from '../../app/config.js';
import { parseMetadata } from '../../metadata/index.js';
import { createAccountWithKey, METADATA_PATH, startTestServer, type TestServer } from '../support/http.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';

describe('Rate limits per key: settings', () => {
  it('reads RATE_LIMIT_PER_SECOND and RATE_LIMIT_BURST (burst defaults to the rate rounded up; unset: no limit)', () => {
    assert.equal(configFromEnv({}).operations.rateLimit, null);
    assert.deepEqual(configFromEnv({ RATE_LIMIT_PER_SECOND: '2.5' }).operations.rateLimit, { perSecond: 2.5, burst: 3 });
    assert.deepEqual(configFromEnv({ RATE_LIMIT_PER_SECOND: '10', RATE_LIMIT_BURST: '40' }).operations.rateLimit, { perSecond: 10, burst: 40 });
    assert.throws(() => configFromEnv({ RATE_LIMIT_PER_SECOND: '0' }), /RATE_LIMIT_PER_SECOND must be a number from 0.00001 \(about one request a day\) to 1000000/);
    assert.throws(() => configFromEnv({ RATE_LIMIT_PER_SECOND: '5', RATE_LIMIT_BURST: '1.5' }), /RATE_LIMIT_BURST must be a whole number/);
    // Digits only, as every count: these were read by Number() as 1000, 16, 3 and 1.
    for (const burst of ['1e3', '0x10', '0b11', '1.0', '0', '1000001', '-2']) {
      assert.throws(() => configFromEnv({ RATE_LIMIT_PER_SECOND: '5', RATE_LIMIT_BURST: burst }), /^Error: RATE_LIMIT_BURST must be a whole number from 1 to 1000000, not "/, burst);
    }
    // The slowest rate is about one request a day: a slower one asked for `Retry-After: 1e+300`.
    for (const rate of ['0', '-1', 'NaN', 'Infinity', '1e3', '1000001', 'five', '0.000009', `0.${'0'.repeat(299)}1`]) {
      assert.throws(() => configFromEnv({ RATE_LIMIT_PER_SECOND: rate }), /^Error: RATE_LIMIT_PER_SECOND must be a number from 0\.00001 \(about one request a day\) to 1000000, not "/, rate);
    }
    assert.deepEqual(configFromEnv({ RATE_LIMIT_PER_SECOND: '0.00001' }).operations.rateLimit, { perSecond: 0.00001, burst: 1 });
    assert.deepEqual(configFromEnv({ RATE_LIMIT_PER_SECOND: '0.5' }).operations.rateLimit, { perSecond: 0.5, burst: 1 });
    assert.throws(() => configFromEnv({ RATE_LIMIT_BURST: '5' }), /RATE_LIMIT_BURST needs RATE_LIMIT_PER_SECOND/);
  });

  it('reads roles.<r>.rate_limit from the metadata, and refuses a bad one naming the role', () => {
    const text = readFileSync(METADATA_PATH, 'utf8').replace(/^  read_only:\n/m, '  read_only:\n    rate_limit: { per_second: 0.5, burst: 4 }\n');
    const metadata = parseMetadata(text);
    assert.deepEqual(metadata.roles.get('read_only')!.rateLimit, { perSecond: 0.5, burst: 4 });
    assert.equal(metadata.roles.get('admin')!.rateLimit, null);
    const bad = readFileSync(METADATA_PATH, 'utf8').replace(/^  read_only:\n/m, '  read_only:\n    rate_limit: { per_second: -1 }\n');
    assert.throws(() => parseMetadata(bad), /read_only/);
    const tooSlow = readFileSync(METADATA_PATH, 'utf8').replace(/^  read_only:\n/m, '  read_only:\n    rate_limit: { per_second: 1.0e-300 }\n');
    assert.throws(() => parseMetadata(tooSlow), /read_only/);
  });
});

describe('Rate limits per key: answers', () => {
  let database: TestDatabase;
  let server: TestServer;
  let key: string;
  let otherKey: string;

  before(async () => {
    database = await openTestDatabase();
    const defaults = configFromEnv({}).operations;
    // One token every 1,000 s: nothing refills while the test runs.
    server = await startTestServer(database.db, { operations: { ...defaults, rateLimit: { perSecond: 0.001, burst: 3 } } });
    key = (await createAccountWithKey(database.db)).apiKey.key;
    otherKey = (await createAccountWithKey(database.db)).apiKey.key;
  });
  after(async () => {
    await server?.close();
    await database?.close();
  });

  const graph = (apiKey: string): Promise<Response> =>
    fetch(`${server.url}/api/graph`, { method: 'POST', headers: { authorization: `Token ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ loans(limit: 1) { id } }' }) });
  const rest = (apiKey: string): Promise<Response> => fetch(`${server.url}/api/loan?limit=1`, { headers: { authorization: `Token ${apiKey}` } });

  /** Each `RateLimit` header is `"default";r=<remaining>;t=<seconds>`: r exact, t at most 30 s under what was expected. */
  function assertRateLimit(headers: readonly (string | null)[], expected: readonly (readonly [number, number])[]): void {
    assert.equal(headers.length, expected.length);
    headers.forEach((header, i) => {
      const match = /^"default";r=(\d+);t=(\d+)$/.exec(header ?? '');
      assert.ok(match, `RateLimit: ${header}`);
      const [remaining, seconds] = expected[i]!;
      assert.equal(Number(match[1]), remaining, header!);
      assert.ok(Number(match[2]) <= seconds && Number(match[2]) >= seconds - 30, header!);
    });
  }

  it('counts every route of a key against one bucket, shows limit and remaining on each answer, and answers 429 with Retry-After once empty', async () => {
    const answers = [await graph(key), await rest(key), await graph(key)];
    assert.deepEqual(answers.map((a) => a.status), [200, 200, 200]);
    // t (seconds until the bucket is full again) falls by what refilled while the requests ran:
    // a second of a slow machine takes 1 s off it.
    assertRateLimit(answers.map((a) => a.headers.get('ratelimit')), [[2, 1000], [1, 2000], [0, 3000]]);
    for (const answer of answers) assert.equal(answer.headers.get('ratelimit-policy'), '"default";q=3;w=3000');

    const refusedGraph = await graph(key);
    assert.equal(refusedGraph.status, 429);
    const retryAfter = Number(refusedGraph.headers.get('retry-after'));
    assert.ok(retryAfter <= 1000 && retryAfter >= 970, `Retry-After ${retryAfter}`);
    assertRateLimit([refusedGraph.headers.get('ratelimit')], [[0, 3000]]);
    const graphBody = (await refusedGraph.json()) as { errors: { message: string; extensions: { code: string } }[] };
    assert.equal(graphBody.errors[0]!.extensions.code, 'rate-limited');
    assert.match(graphBody.errors[0]!.message, /over its rate limit of 0.001 requests a second \(burst 3\)/);

    const refusedRest = await rest(key);
    assert.equal(refusedRest.status, 429);
    assert.ok(refusedRest.headers.get('retry-after'));
    const restBody = (await refusedRest.json()) as { error: string; code: string };
    assert.equal(restBody.code, 'rate-limited');
    assert.match(restBody.error, /^this API key is over its rate limit of 0\.001 requests a second \(burst 3\); retry in (\d+) s$/);
    assert.ok(Number(/retry in (\d+) s/.exec(restBody.error)![1]) >= 970);

    // Another key has its own bucket.
    assert.equal((await graph(otherKey)).status, 200);
  });

  it('takes a token for each request of a batch: a batch of 3 empties a bucket of 3, and one of 4 is refused whole, nothing run', async () => {
    // `application/json; charset="utf-8"` is not the fast path's: Express's route answers it, as it does a chunked body.
    const batch = (apiKey: string, requests: readonly { query: string }[], type = 'application/json'): Promise<Response> =>
      fetch(`${server.url}/api/graph`, { method: 'POST', headers: { authorization: `Token ${apiKey}`, 'content-type': type }, body: JSON.stringify(requests) });
    const read = { query: '{ loans(limit: 1) { id } }' };
    const batchKey = (await createAccountWithKey(database.db)).apiKey.key;
    const three = await batch(batchKey, [read, read, read]);
    assert.equal(three.status, 200);
    assert.equal(((await three.json()) as unknown[]).length, 3);
    assertRateLimit([three.headers.get('ratelimit')], [[0, 3000]]);
    // Before, the batch took one token: 20 operations (MAX_BATCH_SIZE) a token, and this was a 200.
    assert.equal((await graph(batchKey)).status, 429);

    const { account, apiKey } = await createAccountWithKey(database.db);
    const write = { query: 'mutation { insert_people_one(object: {name: "Batch Probe"}) { id } }' };
    const four = await batch(apiKey.key, [write, read, read, read], 'application/json; charset="utf-8"');
    assert.equal(four.status, 429);
    const refusal = ((await four.json()) as { errors: { message: string; extensions: { code: string } }[] }).errors[0]!;
    assert.equal(refusal.extensions.code, 'rate-limited');
    // No wait lets it run: no Retry-After (it said "retry in 1000 s", and was refused again after the wait).
    assert.equal(four.headers.get('retry-after'), null);
    assert.match(refusal.message, /a batch of 4 requests is more than .* \(burst 3\): it can never run; send at most 3 requests a batch/);
    assert.equal(four.headers.get('ratelimit-policy'), '"default";q=3;w=3000');
    const people = await database.db.query('SELECT 1 FROM people WHERE account_id = $1', [account.id]);
    assert.equal(people.rows.length, 0, 'no request of the refused batch ran');
  });

  it('charges nothing for a 429: a refused batch gives back the token its HTTP request took; a 400 costs its one token, batch or not', async () => {
    const post = (apiKey: string, body: string): Promise<Response> =>
      fetch(`${server.url}/api/graph`, { method: 'POST', headers: { authorization: `Token ${apiKey}`, 'content-type': 'application/json' }, body });
    const read = { query: '{ loans(limit: 1) { id } }' };
    const batchOf = (n: number): string => JSON.stringify(Array.from({ length: n }, () => read));

    // Larger than the burst: refused, and the bucket is as it was (before: it had lost a token, and the batch of 3 was a 429).
    const keyA = (await createAccountWithKey(database.db)).apiKey.key;
    const four = await post(keyA, batchOf(4));
    assert.equal(four.status, 429);
    assertRateLimit([four.headers.get('ratelimit')], [[3, 0]]);
    assert.equal((await post(keyA, batchOf(3))).status, 200);

    // The bucket holds 2, the batch needs 3: 429 with Retry-After, and the 2 are still there for two requests.
    const keyB = (await createAccountWithKey(database.db)).apiKey.key;
    assert.equal((await post(keyB, JSON.stringify(read))).status, 200);
    const three = await post(keyB, batchOf(3));
    assert.equal(three.status, 429);
    assert.ok(Number(three.headers.get('retry-after')) >= 970, `Retry-After ${three.headers.get('retry-after')}`);
    assertRateLimit([three.headers.get('ratelimit')], [[2, 1000]]);
    assert.deepEqual([(await post(keyB, JSON.stringify(read))).status, (await post(keyB, JSON.stringify(read))).status, (await post(keyB, JSON.stringify(read))).status], [200, 200, 429]);

    // A malformed request is charged its one token whether it is a batch or not (a flood of bad requests is limited too).
    const keyC = (await createAccountWithKey(database.db)).apiKey.key;
    const empty = await post(keyC, '[]');
    assert.equal(empty.status, 400);
    assert.equal(((await empty.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code, 'invalid-request');
    assertRateLimit([empty.headers.get('ratelimit')], [[2, 1000]]);
    const unparsable = await post(keyC, '{"query":');
    assert.equal(unparsable.status, 400);
    assertRateLimit([unparsable.headers.get('ratelimit')], [[1, 2000]]);
  });

  it("answers GraphQL's 429 in the type Accept ranks first on every path to it (Express's too: it was application/json)", async () => {
    const apiKey = (await createAccountWithKey(database.db)).apiKey.key;
    const get = (accept: string): Promise<Response> => fetch(`${server.url}/api/graph?query=${encodeURIComponent('{ loans(limit: 1) { id } }')}`, { headers: { authorization: `Token ${apiKey}`, accept } });
    for (let i = 0; i < 3; i += 1) assert.equal((await get('application/json')).status, 200);
    const preferred = await get('application/graphql-response+json');
    assert.equal(preferred.status, 429);
    assert.match(preferred.headers.get('content-type') ?? '', /^application\/graphql-response\+json/);
    assert.equal(((await preferred.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code, 'rate-limited');
    const weighed = await get('application/graphql-response+json;q=0.5, application/json');
    assert.equal(weighed.status, 429);
    assert.match(weighed.headers.get('content-type') ?? '', /^application\/json/);
  });

  it('leaves requests without a key alone (403 as always, no rate-limit headers)', async () => {
    const answer = await fetch(`${server.url}/api/loan`);
    assert.equal(answer.status, 403);
    assert.equal(answer.headers.get('ratelimit'), null);
  });
});
