import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createWebhookEndpoint } from '../../app/webhooks/index.js';
import { startKeyedService, type KeyedService } from '../support/seededService.js';
import { parseExact, JsonNumber } from '../support/exactJson.js';
import { installTestClock, setTestClock } from '../support/testClock.js';

/**
 * Issue 32, Done when 1: SPEC §12 R10's worked example over HTTP, to the cent — the reference
 * loan created over REST, funding sources A (60,000 at 10 %) and B (30,000 at 9 %) written
 * through GraphQL, payments posted and reversed through GraphQL, the lines read through GraphQL
 * and GET /api/distributions — and its reversal: adjustment lines (new − old), never an edit.
 */
let s: KeyedService;

before(async () => {
  s = await startKeyedService();
  await installTestClock(s.db);
  await setTestClock(s.db, '2026-03-20');
  // a subscribed endpoint, so distribution.created is captured (the worker is not run: the outbox is read)
  await createWebhookEndpoint(s.db, s.accountId, { url: 'https://hooks.example.com/loanql', eventTypes: ['distribution.created'] }, {
    knownEventTypes: new Set(['distribution.created']),
    allowPrivate: true,
  });
});
after(() => s?.close());

async function graph(query: string, variables: Record<string, unknown> = {}): Promise<any> {
  const response = await fetch(`${s.url}/api/graph`, {
    method: 'POST',
    headers: { authorization: `Token ${s.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  // exact digits: every number keeps its text (a JsonNumber), amounts are read as strings below
  return exactStrings(parseExact(await response.text())) as { data?: any; errors?: any };
}

async function ok(query: string, variables: Record<string, unknown> = {}): Promise<any> {
  const answer = await graph(query, variables);
  assert.equal(answer.errors, undefined, JSON.stringify(answer.errors));
  return answer.data;
}

async function referenceLoan(): Promise<string> {
  const created = await s.rest.post('/api/loan', {
    Name: 'Reference loan', Amount: 100000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing',
  });
  assert.equal(created.status, 201, created.text);
  return created.json.loan.id as string;
}

async function investor(name: string): Promise<string> {
  return (await ok(`mutation ($name: String!) { insert_people_one(object: {name: $name}) { id } }`, { name })).insert_people_one.id;
}

async function fund(loan: string, person: string, amount: string, rate: string, date = '2026-01-15'): Promise<string> {
  const data = await ok(
    `mutation ($loan: uuid!, $person: uuid!, $amount: numeric!, $rate: numeric!, $date: date!) {
       insert_funding_sources_one(object: {loan_id: $loan, person_id: $person, original_amount: $amount, rate: $rate, date_funded: $date}) { id }
     }`,
    { loan, person, amount, rate, date },
  );
  return data.insert_funding_sources_one.id;
}

async function pay(loan: string, date: string, amount: string): Promise<string> {
  const data = await ok(
    `mutation ($loan: uuid!, $date: date!, $amount: numeric!) { insert_payments_one(object: {loan_id: $loan, date: $date, amount: $amount, method: "ach"}) { id } }`,
    { loan, date, amount },
  );
  return data.insert_payments_one.id;
}

async function reverse(payment: string, date: string): Promise<void> {
  await ok(`mutation ($id: uuid!, $date: date!) { update_payments_by_pk(pk_columns: {id: $id}, _set: {date_reversed: $date, reversal_reason: "error"}) { id } }`, {
    id: payment,
    date,
  });
}

function exactStrings(value: unknown): unknown {
  if (value instanceof JsonNumber) return value.text;
  if (Array.isArray(value)) return value.map(exactStrings);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, exactStrings(v)]));
  return value;
}

interface Line {
  funding_source_id: string | null;
  component: string;
  amount: string;
  adjustment: boolean;
  cause_payment_id: string | null;
  date: string;
}

async function linesOf(payment: string): Promise<Line[]> {
  const data = await ok(
    `query ($p: uuid!) { distributions(where: {payment_id: {_eq: $p}}, order_by: [{created_at: asc}, {adjustment: asc}, {component: asc}, {funding_source_id: asc_nulls_last}]) {
       funding_source_id component amount adjustment cause_payment_id date } }`,
    { p: payment },
  );
  return data.distributions;
}

/** The sum of a payment's lines per party and component, as `party component amount` (cents exact). */
function sums(lines: readonly Line[], names: ReadonlyMap<string | null, string>): string[] {
  const total = new Map<string, bigint>();
  for (const l of lines) {
    const key = `${names.get(l.funding_source_id)} ${l.component}`;
    total.set(key, (total.get(key) ?? 0n) + BigInt(l.amount.replace('.', '')));
  }
  return [...total].map(([key, cents]) => `${key} ${(Number(cents) / 100).toFixed(2)}`).sort();
}

describe('SPEC §12 R10 over HTTP', () => {
  let loan: string;
  let a: string;
  let b: string;
  let names: Map<string | null, string>;
  let p1: string;
  let p2: string;

  before(async () => {
    loan = await referenceLoan();
    a = await fund(loan, await investor('Investor A'), '60000.00', '10');
    b = await fund(loan, await investor('Investor B'), '30000.00', '9');
    names = new Map([[a, 'A'], [b, 'B'], [null, 'lender']]);
  });

  it('splits row 1 (interest 1,000.00, principal 7,884.88): A 500.00 / B 225.00 / lender 275.00 and 4,730.93 / 2,365.46 / 788.49', async () => {
    p1 = await pay(loan, '2026-02-13', '8884.88');
    const lines = await linesOf(p1);
    assert.deepEqual(
      lines.map((l) => `${names.get(l.funding_source_id)} ${l.component} ${l.amount}`).sort(),
      ['A interest 500.00', 'A principal 4730.93', 'B interest 225.00', 'B principal 2365.46', 'lender interest 275.00', 'lender principal 788.49'],
    );
    assert.ok(lines.every((l) => !l.adjustment && l.cause_payment_id === null && l.date === '2026-02-13'), JSON.stringify(lines));
  });

  it('splits the next payment (row 2: interest 921.15, principal 7,963.73) and leaves row 1’s lines alone', async () => {
    p2 = await pay(loan, '2026-03-15', '8884.88');
    assert.deepEqual(sums(await linesOf(p2), names), [
      'A interest 460.57',
      'A principal 4778.24',
      'B interest 207.26',
      'B principal 2389.12',
      'lender interest 253.32',
      'lender principal 796.37',
    ]);
    assert.equal((await linesOf(p1)).length, 6);
  });

  it('reversing row 1’s payment adds adjustment lines: its own sum to 0, the later payment re-derived to row 1', async () => {
    await reverse(p1, '2026-03-20');
    const first = await linesOf(p1);
    assert.equal(first.length, 12, 'six original lines, six adjustments');
    assert.deepEqual(
      first.filter((l) => l.adjustment).map((l) => `${names.get(l.funding_source_id)} ${l.component} ${l.amount}`).sort(),
      ['A interest -500.00', 'A principal -4730.93', 'B interest -225.00', 'B principal -2365.46', 'lender interest -275.00', 'lender principal -788.49'],
    );
    assert.ok(first.filter((l) => l.adjustment).every((l) => l.cause_payment_id === p1 && l.date === '2026-03-20'));
    assert.deepEqual(sums(first, names), ['A interest 0.00', 'A principal 0.00', 'B interest 0.00', 'B principal 0.00', 'lender interest 0.00', 'lender principal 0.00']);

    const second = await linesOf(p2);
    assert.ok(second.filter((l) => l.adjustment).length > 0);
    assert.ok(second.filter((l) => l.adjustment).every((l) => l.cause_payment_id === p1 && l.date === '2026-03-20'), JSON.stringify(second));
    // P2 now pays row 1 exactly: R10's example again, as original lines plus adjustments
    assert.deepEqual(sums(second, names), [
      'A interest 500.00',
      'A principal 4730.93',
      'B interest 225.00',
      'B principal 2365.46',
      'lender interest 275.00',
      'lender principal 788.49',
    ]);
    // the original lines were never edited
    assert.deepEqual(
      second.filter((l) => !l.adjustment).map((l) => l.amount).sort(),
      ['207.26', '2389.12', '253.32', '460.57', '4778.24', '796.37'],
    );
  });

  it('captures distribution.created per payment and write, with its lines', async () => {
    const { rows } = await s.db.query<{ data: any }>(`SELECT data FROM webhook_outbox WHERE account_id = $1 AND type = 'distribution.created' ORDER BY seq`, [s.accountId]);
    const events = rows.map((r) => r.data.new ?? r.data);
    // P1 posted, P2 posted, then the reversal: P1's adjustments and P2's (one write: in either order)
    const seen = events.map((e: any) => `${e.payment_id === p1 ? 'P1' : 'P2'} ${e.adjustment}`);
    assert.deepEqual(seen.slice(0, 2), ['P1 false', 'P2 false']);
    assert.deepEqual(seen.slice(2).sort(), ['P1 true', 'P2 true']);
    const first = events[0];
    assert.deepEqual(
      first.lines.map((l: any) => `${names.get(l.funding_source_id)} ${l.component} ${Number(l.amount).toFixed(2)}`).sort(),
      ['A interest 500.00', 'A principal 4730.93', 'B interest 225.00', 'B principal 2365.46', 'lender interest 275.00', 'lender principal 788.49'],
    );
    assert.ok(events.slice(2).every((e: any) => e.cause_payment_id === p1 && e.date === '2026-03-20'));
  });

  it('serves the lines on GET /api/distributions, filtered by period and loan', async () => {
    const all = await s.rest.get(`/api/distributions?loan_id=${loan}`);
    assert.equal(all.status, 200, all.text);
    assert.equal(all.json.distributions.length, 24);
    const march = await s.rest.get(`/api/distributions?from=2026-03-01&to=2026-03-31&loan_id=${loan}`);
    assert.equal(march.status, 200, march.text);
    assert.ok(march.json.distributions.every((l: Line) => l.date >= '2026-03-01' && l.date <= '2026-03-31'));
    assert.equal(march.json.distributions.length, 24 - 6);
    const bad = await s.rest.get(`/api/distributions?from=March`);
    assert.equal(bad.status, 400);
    assert.match(bad.text, /from/);
    // A misspelt filter is a 400 naming it: ignored, `loan=` answered with every loan's lines and their total.
    const misspelt = await s.rest.get(`/api/distributions?from=2026-03-01&loan=${loan}`);
    assert.equal(misspelt.status, 400, misspelt.text);
    assert.deepEqual(misspelt.json, { error: 'unknown query parameter: loan', fields: { loan: 'unknown query parameter (from, to, loan_id, limit, offset)' } });
  });

  it('pages GET /api/distributions: limit (0–1000, default 1000) and offset, count and total of every line, next until the last page', async () => {
    const whole = await s.rest.get(`/api/distributions?loan_id=${loan}`);
    assert.equal(whole.status, 200, whole.text);
    assert.deepEqual([whole.json.limit, whole.json.offset, whole.json.next, whole.json.count], [1000, 0, null, 24], 'the default page holds these 24 lines');
    const ids = whole.json.distributions.map((l: Line & { id: string }) => l.id);
    // Walking the pages by `next` gives every line once, in the same order, each page with the whole count and total.
    const walked: string[] = [];
    let next: string | null = `/api/distributions?loan_id=${loan}&limit=10`;
    const offsets: number[] = [];
    while (next !== null) {
      const page = await s.rest.get(next);
      assert.equal(page.status, 200, page.text);
      assert.equal(page.json.count, 24);
      assert.equal(page.exact.total.text, whole.exact.total.text);
      assert.equal(page.json.limit, 10);
      offsets.push(page.json.offset);
      walked.push(...page.json.distributions.map((l: Line & { id: string }) => l.id));
      next = page.json.next;
    }
    assert.deepEqual(offsets, [0, 10, 20]);
    assert.deepEqual(walked, ids);
    const march = await s.rest.get(`/api/distributions?from=2026-03-01&to=2026-03-31&loan_id=${loan}&limit=5&offset=15`);
    assert.deepEqual([march.json.distributions.length, march.json.count, march.json.next], [3, 18, null]);
    const first = await s.rest.get(`/api/distributions?from=2026-03-01&to=2026-03-31&loan_id=${loan}&limit=5`);
    assert.equal(first.json.next, `/api/distributions?from=2026-03-01&to=2026-03-31&loan_id=${loan}&limit=5&offset=5`);
    const none = await s.rest.get(`/api/distributions?loan_id=${loan}&limit=0`);
    assert.deepEqual([none.json.distributions, none.json.count, none.json.next], [[], 24, null]);
    for (const [query, pattern] of [
      ['limit=1001', /^limit must be a whole number from 0 to 1000$/],
      ['limit=-1', /^limit must be/],
      ['offset=ten', /^offset must be a whole number from 0 to 2147483647$/],
    ] as const) {
      const refused = await s.rest.get(`/api/distributions?loan_id=${loan}&${query}`);
      assert.equal(refused.status, 400, `${query}: ${refused.text}`);
      assert.match(refused.json.error, pattern);
    }
  });

  it('refuses funding sources above the loan amount with a 400 naming original_amount, and writes nothing', async () => {
    const c = await investor('Investor C');
    const answer = await graph(
      `mutation ($loan: uuid!, $person: uuid!) { insert_funding_sources_one(object: {loan_id: $loan, person_id: $person, original_amount: "10000.01", rate: "5", date_funded: "2026-01-15"}) { id } }`,
      { loan, person: c },
    );
    assert.ok(answer.errors, JSON.stringify(answer));
    assert.match(JSON.stringify(answer.errors), /original_amount/);
    const raised = await graph(`mutation ($id: uuid!) { update_funding_sources_by_pk(pk_columns: {id: $id}, _set: {original_amount: "70000.01"}) { id } }`, { id: a });
    assert.ok(raised.errors, JSON.stringify(raised));
    assert.match(JSON.stringify(raised.errors), /original_amount/);
    const { rows } = await s.db.query<{ n: number; total: string }>(
      `SELECT count(*)::int AS n, sum(original_amount)::text AS total FROM funding_sources WHERE account_id = $1 AND loan_id = $2`,
      [s.accountId, loan],
    );
    assert.deepEqual(rows[0], { n: 2, total: '90000.00' });
  });
});
