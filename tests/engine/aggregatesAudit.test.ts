import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createApiKey } from '../../app/apiKeys.js';
import { exactDataOf, send, startSeededService, startService, type JsonNumber, type RunningService, type SeededService } from '../support/seededService.js';

/**
 * Session 40's audit of `<c>_aggregate` as a lender's analyst uses it for a portfolio report:
 * every answer over HTTP compared with the same question in plain SQL on the same database —
 * sums, averages and deviations of money to the last digit, empty sets, an investor's counts —
 * `nodes`, the one list an aggregate returns, under MAX_ROWS, and aggregates of computed fields.
 */
let s: SeededService;
let limited: RunningService;
let investorKey: string;
let investorId: string;

before(async () => {
  s = await startSeededService();
  limited = await startService(s.db, { maxRows: 3 });
  // The investor funding the most loans: a count the role's filter must cut down.
  [{ person_id: investorId }] = await s.sql<{ person_id: string }>(
    'SELECT person_id FROM funding_sources WHERE account_id = $1 GROUP BY person_id ORDER BY count(*) DESC, person_id LIMIT 1',
    [s.account.id],
  ) as [{ person_id: string }];
  investorKey = (await createApiKey(s.db, s.account.id, 'analyst investor', { role: 'investor', variables: new Map([['person_id', investorId]]) })).key;
});

after(async () => {
  await limited?.close();
  await s?.close();
});

const graphAt = (url: string, query: string, key = s.apiKey) =>
  send(`${url}/api/graph`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Token ${key}` }, body: JSON.stringify({ query }) });
const digits = (value: unknown): string | null => (value === null ? null : (value as JsonNumber).text);

describe('Aggregates: money to the last digit, as PostgreSQL computes it', () => {
  it('count, sum, avg, min, max, stddev and var_samp of payments are plain SQL’s digits (numeric as JSON numbers, trailing zeros kept)', async () => {
    const data = exactDataOf(
      await s.graph(`{ payments_aggregate { aggregate { count sum { amount } avg { amount } min { amount date } max { amount date } stddev { amount } var_samp { amount } } } }`),
    );
    const [expected] = await s.sql<Record<string, string>>(
      `SELECT count(*)::text AS count, sum(amount)::text AS sum, avg(amount)::text AS avg, min(amount)::text AS min, max(amount)::text AS max,
              stddev(amount)::text AS stddev, var_samp(amount)::text AS var_samp, min(date)::text AS first, max(date)::text AS last
         FROM payments WHERE account_id = $1`,
      [s.account.id],
    );
    const aggregate = data.payments_aggregate.aggregate;
    assert.ok(Number(expected!.count) > 1000, 'thousands of payments');
    assert.equal(digits(aggregate.count), expected!.count);
    assert.equal(digits(aggregate.sum.amount), expected!.sum);
    assert.equal(digits(aggregate.avg.amount), expected!.avg);
    assert.equal(digits(aggregate.min.amount), expected!.min);
    assert.equal(digits(aggregate.max.amount), expected!.max);
    assert.equal(digits(aggregate.stddev.amount), expected!.stddev);
    assert.equal(digits(aggregate.var_samp.amount), expected!.var_samp);
    assert.deepEqual([aggregate.min.date, aggregate.max.date], [expected!.first, expected!.last]);
  });

  it('over no rows: count 0, every function null, nodes [] (Hasura’s answer)', async () => {
    const data = exactDataOf(
      await s.graph(`{ loans_aggregate(where: {name: {_eq: "no such loan"}}) { aggregate { count sum { amount } avg { amount } max { created_at } stddev { amount } } nodes { id } } }`),
    );
    assert.deepEqual(JSON.parse(JSON.stringify(data)), {
      loans_aggregate: { aggregate: { count: 0, sum: { amount: null }, avg: { amount: null }, max: { created_at: null }, stddev: { amount: null } }, nodes: [] },
    });
  });

  it('an investor’s counts and sums are those of its own loans, at the root, in nodes and through a relationship', async () => {
    const data = exactDataOf(
      await graphAt(
        s.url,
        `{ loans_aggregate { aggregate { count sum { amount } } nodes { id } }
           payments_aggregate { aggregate { count sum { amount } } }
           loans { id funding_sources_aggregate { aggregate { count } } } }`,
        investorKey,
      ),
    );
    const [own] = await s.sql<{ loans: string; amount: string; payments: string; paid: string }>(
      `SELECT count(*)::text AS loans, sum(l.amount)::text AS amount,
              (SELECT count(*) FROM payments p WHERE p.account_id = $1 AND p.loan_id IN (SELECT loan_id FROM funding_sources WHERE account_id = $1 AND person_id = $2))::text AS payments,
              (SELECT sum(amount) FROM payments p WHERE p.account_id = $1 AND p.loan_id IN (SELECT loan_id FROM funding_sources WHERE account_id = $1 AND person_id = $2))::text AS paid
         FROM loans l WHERE l.account_id = $1 AND l.id IN (SELECT loan_id FROM funding_sources WHERE account_id = $1 AND person_id = $2)`,
      [s.account.id, investorId],
    );
    assert.ok(Number(own!.loans) > 1 && Number(own!.loans) < s.summary.loans);
    assert.equal(digits(data.loans_aggregate.aggregate.count), own!.loans);
    assert.equal(digits(data.loans_aggregate.aggregate.sum.amount), own!.amount);
    assert.equal(data.loans_aggregate.nodes.length, Number(own!.loans));
    assert.equal(digits(data.payments_aggregate.aggregate.count), own!.payments);
    assert.equal(digits(data.payments_aggregate.aggregate.sum.amount), own!.paid);
    // Each loan's funding sources as the investor sees them: its own, never its co-lenders'.
    const [{ n: ownSources }] = (await s.sql<{ n: string }>('SELECT count(*)::text AS n FROM funding_sources WHERE account_id = $1 AND person_id = $2', [s.account.id, investorId])) as [{ n: string }];
    const counted = (data.loans as { funding_sources_aggregate: { aggregate: { count: JsonNumber } } }[]).reduce((total, loan) => total + Number(digits(loan.funding_sources_aggregate.aggregate.count)), 0);
    assert.equal(counted, Number(ownSources));
  });
});

describe('Aggregates of computed fields (Hasura’s), called with their arguments’ defaults', () => {
  it('sum, avg and max of days_past_due (its stored form) and of payoff over the loans, as plain SQL calls the functions', async () => {
    // payoff replays a loan's ledger: 20 loans keep the test quick; days_past_due reads a column.
    const data = exactDataOf(
      await s.graph(`{ all: loans_aggregate { aggregate { sum { days_past_due } avg { days_past_due } max { days_past_due delinquency_bucket } } }
                       first: loans_aggregate(order_by: {id: asc}, limit: 20) { aggregate { sum { payoff amount_past_due } min { payoff } stddev { payoff } } } }`),
    );
    const [all] = await s.sql<Record<string, string>>(
      `SELECT sum(days)::text AS sum, avg(days)::text AS avg, max(days)::text AS max, max(bucket) AS bucket
         FROM (SELECT loanql_loan_days_past_due(account_id, id) AS days, loanql_loan_delinquency_bucket(account_id, id) AS bucket FROM loans WHERE account_id = $1) AS l`,
      [s.account.id],
    );
    const [first] = await s.sql<Record<string, string>>(
      `SELECT sum(payoff)::text AS payoff, sum(past_due)::text AS past_due, min(payoff)::text AS min, stddev(payoff)::text AS stddev
         FROM (SELECT loanql_loan_payoff(account_id, id) AS payoff, loanql_loan_amount_past_due(account_id, id) AS past_due
                 FROM (SELECT account_id, id FROM loans WHERE account_id = $1 ORDER BY id LIMIT 20) AS first) AS l`,
      [s.account.id],
    );
    assert.ok(Number(all!.sum) > 0, 'some loans are past due');
    assert.deepEqual(
      [digits(data.all.aggregate.sum.days_past_due), digits(data.all.aggregate.avg.days_past_due), digits(data.all.aggregate.max.days_past_due), data.all.aggregate.max.delinquency_bucket],
      [all!.sum, all!.avg, all!.max, all!.bucket],
    );
    assert.deepEqual(
      [digits(data.first.aggregate.sum.payoff), digits(data.first.aggregate.sum.amount_past_due), digits(data.first.aggregate.min.payoff), digits(data.first.aggregate.stddev.payoff)],
      [first!.payoff, first!.past_due, first!.min, first!.stddev],
    );
  });

  it('in root aggregates sharing one scan, each over its own where', async () => {
    const data = exactDataOf(
      await s.graph(`{ servicing: loans_aggregate(where: {status: {_eq: "servicing"}}) { aggregate { count sum { days_past_due } } }
                       closed: loans_aggregate(where: {status: {_eq: "closed"}}) { aggregate { max { days_past_due } } } }`),
    );
    const rows = await s.sql<{ status: string; n: string; sum: string | null; max: string | null }>(
      `SELECT status, count(*)::text AS n, sum(days)::text AS sum, max(days)::text AS max
         FROM (SELECT status, loanql_loan_days_past_due(account_id, id) AS days FROM loans WHERE account_id = $1 AND status IN ('servicing', 'closed')) AS l GROUP BY status`,
      [s.account.id],
    );
    const of = (status: string) => rows.find((row) => row.status === status)!;
    assert.equal(digits(data.servicing.aggregate.count), of('servicing').n);
    assert.equal(digits(data.servicing.aggregate.sum.days_past_due), of('servicing').sum);
    assert.equal(digits(data.closed.aggregate.max.days_past_due), of('closed').max);
  });

  it('only the computed fields of the numeric types sum; min and max take text ones too (introspection)', async () => {
    const data = exactDataOf(await s.graph(`{ sum: __type(name: "loans_sum_fields") { fields { name } } max: __type(name: "loans_max_fields") { fields { name } } }`));
    const sums = (data.sum.fields as { name: string }[]).map((field) => field.name);
    const maxes = (data.max.fields as { name: string }[]).map((field) => field.name);
    for (const name of ['payoff', 'accrued_interest', 'per_diem', 'days_past_due', 'amount_past_due']) assert.ok(sums.includes(name), name);
    assert.ok(!sums.includes('delinquency_bucket'), 'text does not sum');
    assert.ok(maxes.includes('delinquency_bucket'));
  });
});

describe('Aggregates with MAX_ROWS set (3)', () => {
  it('an aggregate’s nodes list at most MAX_ROWS rows, the first in its order, while its count counts every row', async () => {
    const answer = await graphAt(limited.url, `{ loans_aggregate(order_by: {amount: desc}) { aggregate { count } nodes { id } } }`);
    const data = exactDataOf(answer);
    const expected = await s.sql<{ id: string }>('SELECT id FROM loans WHERE account_id = $1 ORDER BY amount DESC, id LIMIT 3', [s.account.id]);
    assert.equal(digits(data.loans_aggregate.aggregate.count), String(s.summary.loans));
    // Before session 40 nodes listed all 200 loans: MAX_ROWS capped every list but this one.
    assert.deepEqual(data.loans_aggregate.nodes, expected);
  });

  it('so do the nodes of a relationship’s aggregate (a loan’s payments)', async () => {
    const [busiest] = await s.sql<{ loan_id: string; n: string }>(
      'SELECT loan_id, count(*)::text AS n FROM payments WHERE account_id = $1 GROUP BY loan_id ORDER BY count(*) DESC, loan_id LIMIT 1',
      [s.account.id],
    );
    const data = exactDataOf(
      await graphAt(limited.url, `{ loans_by_pk(id: "${busiest!.loan_id}") { payments_aggregate { aggregate { count sum { amount } } nodes { id } } } }`),
    );
    const [{ sum }] = (await s.sql<{ sum: string }>('SELECT sum(amount)::text AS sum FROM payments WHERE account_id = $1 AND loan_id = $2', [s.account.id, busiest!.loan_id])) as [{ sum: string }];
    const expected = await s.sql<{ id: string }>('SELECT id FROM payments WHERE account_id = $1 AND loan_id = $2 ORDER BY id LIMIT 3', [s.account.id, busiest!.loan_id]);
    const aggregate = data.loans_by_pk.payments_aggregate;
    assert.equal(digits(aggregate.aggregate.count), busiest!.n);
    assert.equal(digits(aggregate.aggregate.sum.amount), sum);
    assert.deepEqual(aggregate.nodes, expected);
  });

  it('an aggregate with fewer rows than MAX_ROWS lists them all, and one with none lists []', async () => {
    const data = exactDataOf(
      await graphAt(limited.url, `{ few: loans_aggregate(limit: 2) { aggregate { count } nodes { id } } none: loans_aggregate(where: {name: {_eq: "none"}}) { nodes { id } } }`),
    );
    assert.equal(data.few.nodes.length, 2);
    assert.equal(digits(data.few.aggregate.count), '2');
    assert.deepEqual(data.none.nodes, []);
  });
});
