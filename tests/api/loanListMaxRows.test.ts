import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startKeyedService, type KeyedService } from '../support/seededService.js';

/**
 * `MAX_ROWS` (README, Configuration: "the most rows any list returns") holds for `GET /api/loan`
 * as for GraphQL (engine/badInput.test.ts): a larger `limit` is refused, a list without one gets
 * at most `MAX_ROWS`, and so do a loan's own lists (its borrowers).
 */
const MAX_ROWS = 3;
let service: KeyedService;
let crowdedLoan: string;

before(async () => {
  service = await startKeyedService({ config: { maxRows: MAX_ROWS } });
  for (let n = 1; n <= 5; n++) {
    const created = await service.rest.post('/api/loan', { Name: `loan ${n}`, Borrower_Name: `Borrower ${n}` });
    assert.equal(created.status, 201, created.text);
    crowdedLoan = created.json.loan.id;
  }
  // Four more borrowers of the last loan: five in all, over MAX_ROWS.
  await service.db.query(
    `WITH made AS (INSERT INTO people (account_id, name) SELECT $1, 'Extra ' || n FROM generate_series(1, 4) n RETURNING id)
     INSERT INTO borrows (account_id, loan_id, person_id) SELECT $1, $2, id FROM made`,
    [service.accountId, crowdedLoan],
  );
});

after(async () => {
  await service?.close();
});

describe('GET /api/loan with MAX_ROWS set (3)', () => {
  it('returns at most MAX_ROWS loans without a limit, and says so in limit', async () => {
    const page = await service.rest.get('/api/loan');
    assert.equal(page.status, 200, page.text);
    assert.equal(page.json.loans.length, MAX_ROWS);
    assert.equal(page.json.limit, MAX_ROWS);
    assert.equal(page.json.total, 5, 'the total counts every loan (a count is not a list)');
  });

  it('answers a limit up to MAX_ROWS', async () => {
    for (const limit of [0, 2, MAX_ROWS]) {
      const page = await service.rest.get(`/api/loan?limit=${limit}`);
      assert.equal(page.status, 200, page.text);
      assert.equal(page.json.loans.length, limit);
    }
  });

  it('refuses a larger limit with a 400 naming MAX_ROWS, as GraphQL refuses one', async () => {
    for (const limit of [MAX_ROWS + 1, 50, 1000]) {
      const refused = await service.rest.get(`/api/loan?limit=${limit}&offset=1`);
      assert.equal(refused.status, 400, refused.text);
      assert.equal(refused.json.error, `limit must be a whole number from 0 to ${MAX_ROWS} (MAX_ROWS)`);
      assert.deepEqual(Object.keys(refused.json.fields), ['limit']);
    }
    const graph = await fetch(`${service.url}/api/graph`, {
      method: 'POST',
      headers: { authorization: `Token ${service.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: `{ loans(limit: ${MAX_ROWS + 1}) { id } }` }),
    });
    assert.match(((await graph.json()) as { errors: { message: string }[] }).errors[0]!.message, /MAX_ROWS/, 'GraphQL refuses it too');
  });

  it('caps a loan\'s borrowers at MAX_ROWS, in the list and by id', async () => {
    const [stored] = (await service.db.query<{ n: number }>('SELECT count(*)::int AS n FROM borrows WHERE account_id = $1 AND loan_id = $2', [service.accountId, crowdedLoan])).rows;
    assert.equal(stored!.n, 5);
    const one = await service.rest.get(`/api/loan/${crowdedLoan}`);
    assert.equal(one.status, 200, one.text);
    assert.equal(one.json.loan.borrowers.length, MAX_ROWS);
    const listed = (await service.rest.get('/api/loan?limit=1')).json.loans[0];
    assert.equal(listed.id, crowdedLoan, 'newest first');
    assert.equal(listed.borrowers.length, MAX_ROWS);
  });

  it('documents the limit in the OpenAPI document: at most MAX_ROWS, by default MAX_ROWS', () => {
    const limit = (service.rest.document as any).paths['/api/loan'].get.parameters.find((p: { name: string }) => p.name === 'limit');
    assert.deepEqual([limit.schema.maximum, limit.schema.default], [MAX_ROWS, MAX_ROWS]);
  });
});

describe('GET /api/distributions with MAX_ROWS set (3)', () => {
  it('pages the lines MAX_ROWS at a time, saying how many there are and where the next page is, and refuses a larger limit naming MAX_ROWS', async () => {
    const created = await service.rest.post('/api/loan', { Name: 'split', Amount: 10000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' });
    assert.equal(created.status, 201, created.text);
    const loan = created.json.loan.id as string;
    for (const date of ['2026-02-15', '2026-03-15']) {
      const posted = await fetch(`${service.url}/api/graph`, {
        method: 'POST',
        headers: { authorization: `Token ${service.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query: `mutation ($loan: uuid!, $date: date!) { insert_payments_one(object: {loan_id: $loan, date: $date, amount: "888.49"}) { id } }`, variables: { loan, date } }),
      });
      assert.equal(((await posted.json()) as { errors?: unknown }).errors, undefined);
    }
    // Each payment: the lender's principal and interest lines (no funding source): four in all.
    // Never a silent part of the lines: the first page holds MAX_ROWS of them, the count all four, next the rest.
    const all = await service.rest.get(`/api/distributions?loan_id=${loan}`);
    assert.equal(all.status, 200, all.text);
    assert.deepEqual([all.json.distributions.length, all.json.count, all.json.limit, all.json.next], [3, 4, 3, `/api/distributions?loan_id=${loan}&limit=3&offset=3`]);
    const rest = await service.rest.get(all.json.next);
    assert.equal(rest.status, 200, rest.text);
    assert.deepEqual([rest.json.distributions.length, rest.json.count, rest.json.next], [1, 4, null]);
    const tooMany = await service.rest.get(`/api/distributions?loan_id=${loan}&limit=4`);
    assert.equal(tooMany.status, 400, tooMany.text);
    assert.equal(tooMany.json.error, 'limit must be a whole number from 0 to 3 (MAX_ROWS)');
    const february = await service.rest.get(`/api/distributions?loan_id=${loan}&from=2026-02-01&to=2026-02-28`);
    assert.equal(february.status, 200, february.text);
    assert.equal(february.json.distributions.length, 2);
    assert.equal(february.json.count, 2);
  });
});
