import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createApiKey } from '../../app/apiKeys.js';
import { restClient, type RestClient } from '../support/restClient.js';
import { startKeyedService, type KeyedService } from '../support/seededService.js';
import { installTestClock, setTestClock } from '../support/testClock.js';

/**
 * Issue 32, Done when 3: an investor key reads its own distribution lines and nothing of another
 * investor's, nor the lender's, by any path — the root fields, filters on the other's person and
 * funding source, aggregates, every relationship that reaches distributions, and the REST route.
 * Each answer is compared with SQL over the same database.
 */
let s: KeyedService;
let a: string; // investor A's person id
let b: string;
let aKey: string;
let aRest: RestClient;
let shared: string; // a loan A and B fund
let onlyB: string; // a loan only B funds
let bSource: string;

before(async () => {
  s = await startKeyedService();
  await installTestClock(s.db);
  await setTestClock(s.db, '2026-03-20');
  const loan = async (name: string) => {
    const created = await s.rest.post('/api/loan', { Name: name, Amount: 100000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' });
    assert.equal(created.status, 201, created.text);
    return created.json.loan.id as string;
  };
  shared = await loan('Shared');
  onlyB = await loan('Only B');
  a = (await admin(`mutation { insert_people_one(object: {name: "A"}) { id } }`)).insert_people_one.id;
  b = (await admin(`mutation { insert_people_one(object: {name: "B"}) { id } }`)).insert_people_one.id;
  const fund = `mutation ($loan: uuid!, $person: uuid!, $amount: numeric!) {
    insert_funding_sources_one(object: {loan_id: $loan, person_id: $person, original_amount: $amount, rate: "10", date_funded: "2026-01-15"}) { id } }`;
  await admin(fund, { loan: shared, person: a, amount: '50000' });
  bSource = (await admin(fund, { loan: shared, person: b, amount: '30000' })).insert_funding_sources_one.id;
  await admin(fund, { loan: onlyB, person: b, amount: '90000' });
  for (const id of [shared, onlyB]) {
    await admin(`mutation ($loan: uuid!) { insert_payments(objects: [{loan_id: $loan, date: "2026-02-15", amount: "8884.88"}, {loan_id: $loan, date: "2026-03-15", amount: "9000"}]) { affected_rows } }`, { loan: id });
  }
  aKey = (await createApiKey(s.db, s.accountId, 'investor A', { role: 'investor', variables: new Map([['person_id', a]]) })).key;
  aRest = await restClient(s.url, aKey);
});
after(() => s?.close());

async function post(key: string, query: string, variables: Record<string, unknown> = {}): Promise<any> {
  const response = await fetch(`${s.url}/api/graph`, {
    method: 'POST',
    headers: { authorization: `Token ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  return response.json();
}
async function admin(query: string, variables: Record<string, unknown> = {}): Promise<any> {
  const body = await post(s.key, query, variables);
  assert.equal(body.errors, undefined, JSON.stringify(body.errors));
  return body.data;
}
async function asA(query: string, variables: Record<string, unknown> = {}): Promise<any> {
  const body = await post(aKey, query, variables);
  assert.equal(body.errors, undefined, `${query}: ${JSON.stringify(body.errors)}`);
  return body.data;
}

async function sqlIds(where: string, values: unknown[] = []): Promise<string[]> {
  const { rows } = await s.db.query<{ id: string }>(`SELECT id FROM distributions WHERE account_id = $1 AND ${where} ORDER BY id`, [s.accountId, ...values]);
  return rows.map((r) => r.id);
}
const sorted = (ids: string[]) => [...ids].sort();

describe('an investor key and distributions', () => {
  it('the account has lines of A, B and the lender, so the filter can show', async () => {
    assert.ok((await sqlIds('person_id = $2', [a])).length > 0);
    assert.ok((await sqlIds('person_id = $2', [b])).length > 0);
    assert.ok((await sqlIds('person_id IS NULL')).length > 0);
  });

  it('the root field, every filter and by_pk give A’s own lines only', async () => {
    const own = await sqlIds('person_id = $2', [a]);
    assert.deepEqual(sorted((await asA(`{ distributions { id } }`)).distributions.map((d: any) => d.id)), own);
    for (const where of [`{person_id: {_eq: "${b}"}}`, `{funding_source_id: {_eq: "${bSource}"}}`, `{person_id: {_is_null: true}}`, `{loan_id: {_eq: "${onlyB}"}}`, `{person: {name: {_eq: "B"}}}`]) {
      assert.deepEqual((await asA(`{ distributions(where: ${where}) { id } }`)).distributions, [], where);
      assert.equal((await asA(`{ distributions_aggregate(where: ${where}) { aggregate { count } } }`)).distributions_aggregate.aggregate.count, 0, where);
    }
    const [other] = await sqlIds('person_id = $2', [b]);
    const [lender] = await sqlIds('person_id IS NULL');
    assert.equal((await asA(`query ($id: uuid!) { distributions_by_pk(id: $id) { id } }`, { id: other })).distributions_by_pk, null);
    assert.equal((await asA(`query ($id: uuid!) { distributions_by_pk(id: $id) { id } }`, { id: lender })).distributions_by_pk, null);
  });

  it('aggregates sum A’s lines only', async () => {
    const { rows } = await s.db.query<{ total: string; n: number }>(
      `SELECT sum(amount)::text AS total, count(*)::int AS n FROM distributions WHERE account_id = $1 AND person_id = $2`,
      [s.accountId, a],
    );
    const aggregate = (await asA(`{ distributions_aggregate { aggregate { count sum { amount } } } }`)).distributions_aggregate.aggregate;
    assert.equal(aggregate.count, rows[0]!.n);
    assert.equal(Number(aggregate.sum.amount).toFixed(2), Number(rows[0]!.total).toFixed(2));
  });

  it('every relationship that reaches distributions gives A’s lines only', async () => {
    const own = await sqlIds('person_id = $2', [a]);
    const reached = (await asA(`{
      loans { distributions { id } }
      payments { distributions { id } }
      funding_sources { distributions { id } }
      people { distributions { id } }
    }`)) as Record<string, { distributions: { id: string }[] }[]>;
    for (const [root, rows] of Object.entries(reached)) {
      assert.deepEqual(sorted(rows.flatMap((r) => r.distributions.map((d) => d.id))), own, root);
    }
    const nested = await asA(`{ distributions { payment { distributions { id } } loan { distributions { id } } cause_payment { id } } }`);
    for (const line of nested.distributions) {
      for (const d of [...line.payment.distributions, ...line.loan.distributions]) assert.ok(own.includes(d.id));
    }
    // the batches (the events' rows) are not in the investor's schema at all
    const batch = await post(aKey, `{ distributions { batch { lines { id } } } }`);
    assert.ok(batch.errors, JSON.stringify(batch));
  });

  it('GET /api/distributions answers A’s lines only, whatever the filter', async () => {
    const own = await sqlIds('person_id = $2', [a]);
    const all = await aRest.get('/api/distributions');
    assert.equal(all.status, 200, all.text);
    assert.deepEqual(sorted(all.json.distributions.map((d: any) => d.id)), own);
    const other = await aRest.get(`/api/distributions?loan_id=${onlyB}`);
    assert.equal(other.status, 200);
    assert.deepEqual(other.json.distributions, []);
    assert.equal(other.json.count, 0);
    // an admin key gets every line of the account
    const every = await s.rest.get('/api/distributions');
    assert.equal(every.json.count, (await sqlIds('true')).length);
  });
});
