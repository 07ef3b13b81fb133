import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startKeyedService, type KeyedService } from '../support/seededService.js';

/**
 * A query parameter given twice on a REST GET route (`?loan_id=A&loan_id=B`) is a 400 that says
 * so and names it — one check for every route (`http/queryParameters.ts`). Before session 33 the
 * parser's list reached each value's own check, which answered something untrue of both values:
 * "loan_id must be a loan id (a uuid)" for two good uuids, "status must be one of …" for two good
 * statuses, "format must be one of json, csv" for `format=csv&format=json`.
 */
let s: KeyedService;
const A = '0b9c3d6e-1f2a-4b5c-8d7e-9f0a1b2c3d4e';
const B = '1c0d4e7f-2a3b-4c5d-9e8f-0a1b2c3d4e5f';

before(async () => {
  s = await startKeyedService();
});
after(async () => {
  await s?.close();
});

/** Every GET route that reads a query, with a parameter given twice (both values good ones). */
const REPEATED: readonly (readonly [path: string, name: string])[] = [
  [`/api/distributions?loan_id=${A}&loan_id=${B}`, 'loan_id'],
  ['/api/distributions?from=2026-01-01&from=2026-02-01', 'from'],
  ['/api/loan?status=servicing&status=closed', 'status'],
  ['/api/loan?limit=1&limit=2', 'limit'],
  ['/api/loan?offset=0&offset=5', 'offset'],
  [`/api/loan/${A}/payoff?date=2026-01-01&date=2026-01-02`, 'date'],
  [`/api/loan/${A}/ledger?date=2026-01-01&date=2026-01-02`, 'date'],
  [`/api/investors/${A}/statement?from=2026-01-01&to=2026-01-31&to=2026-02-28`, 'to'],
  [`/api/investors/${A}/statement?from=2026-01-01&to=2026-01-31&format=csv&format=pdf`, 'format'],
  ['/api/remittances?from=2026-01-01&from=2026-01-02&to=2026-01-31', 'from'],
  ['/api/remittances?from=2026-01-01&to=2026-01-31&format=csv&format=json', 'format'],
  [`/api/remittances/${A}?format=csv&format=csv`, 'format'],
];

describe('A query parameter given twice', () => {
  for (const [path, name] of REPEATED) {
    it(`${path.split('?')[0]}: ${name} twice is a 400 saying to give ${name} once`, async () => {
      const answer = await s.rest.get(path);
      assert.equal(answer.status, 400, answer.text);
      assert.deepEqual(answer.json, { error: `give ${name} once`, fields: { [name]: 'given 2 times: give it once' } });
    });
  }

  it('says so with the unknown ones, each named in one answer', async () => {
    const answer = await s.rest.get(`/api/distributions?loan=${A}&loan_id=${A}&loan_id=${B}&to=2026-01-01&to=2026-01-02&to=2026-01-03`);
    assert.equal(answer.status, 400, answer.text);
    assert.deepEqual(answer.json, {
      error: 'unknown query parameter: loan; give loan_id once; give to once',
      fields: { loan: 'unknown query parameter (from, to, loan_id, limit, offset)', loan_id: 'given 2 times: give it once', to: 'given 3 times: give it once' },
    });
  });

  it('the same parameters given once are answered', async () => {
    for (const path of ['/api/distributions?from=2026-01-01&to=2026-01-31', '/api/loan?status=servicing&limit=1&offset=0', '/api/remittances?from=2026-01-01&to=2026-01-31&format=json']) {
      const answer = await s.rest.get(path);
      assert.equal(answer.status, 200, `${path}: ${answer.text}`);
    }
  });

  it('the OpenAPI document says a repeated parameter is a 400 on every GET route with query parameters', async () => {
    const document = (await (await fetch(`${s.url}/api/openapi.json`, { headers: { authorization: `Token ${s.key}` } })).json()) as { paths: Record<string, unknown> };
    for (const [path, operation] of Object.entries(document.paths) as [string, Record<string, any>][]) {
      const get = operation.get;
      if (!get?.parameters?.some((parameter: { in: string }) => parameter.in === 'query')) continue;
      assert.match(get.responses['400'].description, /more than once/, `${path}`);
    }
  });
});
