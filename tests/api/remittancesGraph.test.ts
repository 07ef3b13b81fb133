import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createApiKey } from '../../app/apiKeys.js';
import { parseExact, startKeyedService, type KeyedAccount, type KeyedService } from '../support/seededService.js';
import { cents } from '../support/graphData.js';
import { connect, subscribe } from '../support/graphSocket.js';
import { testDatabaseKind } from '../support/testDatabase.js';
import { installTestClock, setTestClock } from '../support/testClock.js';

/**
 * Issue 32's remittances as a GraphQL collection (metadata/loanql.default.yaml, `remittances`):
 * periods marked over REST (`POST /api/remittances`, the path the CLI and the dashboard share),
 * then listed over GraphQL with their fields, `order_by`, the `lines` they stamped and their
 * aggregate; each line reaches its remittance (`distributions.remittance`). Read by the admin,
 * `read_only` and `servicer` keys (the roles REST's `GET /api/remittances/{id}` answers), absent
 * from the investor's schema (a remittance covers every investor), never written through
 * GraphQL, and never another account's; a live query of them is refreshed by a mark.
 */
let s: KeyedService;
let other: KeyedAccount;
let ann: string;
let ben: string;
const keys = new Map<'read_only' | 'servicer' | 'investor', string>();
/** The remittances marked, by period start. */
const marked = new Map<string, { id: string; total: string }>();
let otherRemittance: string;
let otherLoan: string;

/** A GraphQL answer with every number as its exact text (`JsonNumber`). */
async function graphBody(query: string, variables: Record<string, unknown> = {}, key = s.key): Promise<{ data?: any; errors?: any[]; text: string }> {
  const response = await fetch(`${s.url}/api/graph`, {
    method: 'POST',
    headers: { authorization: `Token ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  const text = await response.text();
  return { ...(parseExact(text) as { data?: any; errors?: any[] }), text };
}

async function graph(query: string, variables: Record<string, unknown> = {}, key = s.key): Promise<any> {
  const body = await graphBody(query, variables, key);
  assert.equal(body.errors, undefined, JSON.stringify(body.errors));
  return body.data;
}

/** A loan of 100,000 at 12 % over 12 months funded 2026-01-15, made over REST by `account`; its id. */
async function loanOf(account: KeyedAccount): Promise<string> {
  const created = await account.rest.post('/api/loan', { Name: 'Elm St bridge', Amount: 100000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' });
  assert.equal(created.status, 201, created.text);
  return created.json.loan.id;
}

async function investor(account: KeyedAccount, loan: string, name: string, amount: string, rate: string): Promise<string> {
  const person = (await graph(`mutation ($name: String!) { insert_people_one(object: {name: $name, entity_type: "individual"}) { id } }`, { name }, account.key)).insert_people_one.id;
  await graph(
    `mutation ($p: uuid!, $l: uuid!, $a: numeric!, $r: numeric!) {
       insert_funding_sources_one(object: {person_id: $p, loan_id: $l, original_amount: $a, rate: $r, date_funded: "2026-01-15", class: "A"}) { id } }`,
    { p: person, l: loan, a: amount, r: rate },
    account.key,
  );
  return person;
}

async function pay(account: KeyedAccount, loan: string, date: string): Promise<void> {
  await graph(`mutation ($l: uuid!, $d: date!) { insert_payments_one(object: {loan_id: $l, date: $d, amount: "8884.88", type: "regular", method: "ach"}) { id } }`, { l: loan, d: date }, account.key);
}

/** Marks the period remitted over REST, as an admin key; the remittance's id and total. */
async function mark(account: KeyedAccount, from: string, to: string): Promise<{ id: string; total: string }> {
  const answer = await account.rest.post('/api/remittances', { from, to });
  assert.equal(answer.status, 201, answer.text);
  return { id: answer.exact.remittance.id, total: answer.exact.remittance.total.text };
}

const LIST = `{
  remittances(order_by: {period_from: desc}) {
    id period_from period_to remitted_at remitted_by total line_count
    lines(order_by: [{date: asc}, {person_id: asc}, {component: asc}]) { id remittance_id funding_source_id person_id component amount date }
    lines_aggregate { aggregate { count sum { amount } } }
  }
  remittances_aggregate { aggregate { count sum { total line_count } } }
}`;

before(async () => {
  s = await startKeyedService();
  await installTestClock(s.db);
  await setTestClock(s.db, '2026-03-31');
  const loan = await loanOf(s);
  // SPEC §12 R10's example: A 60,000 at 10 %, B 30,000 at 9 % of the reference loan.
  ann = await investor(s, loan, 'Ann Investor', '60000', '10');
  ben = await investor(s, loan, 'Ben Investor', '30000', '9');
  await pay(s, loan, '2026-02-15');
  await pay(s, loan, '2026-03-15');
  marked.set('2026-02-01', await mark(s, '2026-02-01', '2026-02-28'));
  marked.set('2026-03-01', await mark(s, '2026-03-01', '2026-03-31'));

  other = await s.newAccount();
  otherLoan = await loanOf(other);
  await investor(other, otherLoan, 'Cy Investor', '50000', '10');
  await pay(other, otherLoan, '2026-02-15');
  otherRemittance = (await mark(other, '2026-01-01', '2026-02-28')).id;

  keys.set('read_only', (await createApiKey(s.db, s.accountId, 'reporting', { role: 'read_only', variables: new Map() })).key);
  keys.set('servicer', (await createApiKey(s.db, s.accountId, 'servicing partner', { role: 'servicer', variables: new Map() })).key);
  keys.set('investor', (await createApiKey(s.db, s.accountId, 'ann portal', { role: 'investor', variables: new Map([['person_id', ann]]) })).key);
});
after(async () => {
  await setTestClock(s.db, null).catch(() => undefined);
  await s?.close();
});

describe(`Remittances over GraphQL (issue 32, ${testDatabaseKind})`, () => {
  it('the admin lists them latest period first, exact totals equal to their lines and to REST; lines and their aggregate', async () => {
    const data = await graph(LIST);
    assert.deepEqual(
      data.remittances.map((r: any) => [r.id, r.period_from, r.period_to]),
      [
        [marked.get('2026-03-01')!.id, '2026-03-01', '2026-03-31'],
        [marked.get('2026-02-01')!.id, '2026-02-01', '2026-02-28'],
      ],
    );
    const february = data.remittances[1];
    // R10's example: Ann 4,730.93 + 500.00, Ben 2,365.46 + 225.00.
    assert.equal(february.total.text, '7821.39');
    let lineCount = 0;
    let total = 0n;
    for (const remittance of data.remittances) {
      assert.equal(remittance.total.text, marked.get(remittance.period_from)!.total, 'the total as the mark answered it');
      assert.match(remittance.remitted_by, /^key lq_[a-z0-9]{8} \(test key\)$/);
      assert.match(remittance.remitted_at, /^2\d{3}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/);
      assert.ok(remittance.lines.length > 0);
      assert.equal(remittance.line_count.text, String(remittance.lines.length));
      assert.deepEqual([remittance.lines_aggregate.aggregate.count.text, remittance.lines_aggregate.aggregate.sum.amount.text], [remittance.line_count.text, remittance.total.text]);
      assert.equal(remittance.lines.reduce((sum: bigint, line: any) => sum + cents(line.amount.text), 0n), cents(remittance.total.text));
      for (const line of remittance.lines) {
        assert.equal(line.remittance_id, remittance.id);
        assert.ok(line.funding_source_id !== null && [ann, ben].includes(line.person_id), 'only investor lines are stamped');
        assert.ok(line.date <= remittance.period_to);
      }
      const dates = remittance.lines.map((line: any) => line.date);
      assert.deepEqual(dates, [...dates].sort(), 'the lines in their order_by');
      lineCount += remittance.lines.length;
      total += cents(remittance.total.text);

      const rest = await s.rest.get(`/api/remittances/${remittance.id}`);
      assert.equal(rest.status, 200, rest.text);
      assert.deepEqual(
        [rest.exact.remittance.total.text, rest.exact.remittance.line_count.text, rest.exact.remittance.remitted_by, rest.exact.remittance.period],
        [remittance.total.text, remittance.line_count.text, remittance.remitted_by, { from: remittance.period_from, to: remittance.period_to }],
      );
    }
    const aggregate = data.remittances_aggregate.aggregate;
    assert.deepEqual([aggregate.count.text, cents(aggregate.sum.total.text), aggregate.sum.line_count.text], ['2', total, String(lineCount)]);

    const one = await graph(`query ($id: uuid!) { remittances_by_pk(id: $id) { period_to total } }`, { id: marked.get('2026-02-01')!.id });
    assert.deepEqual([one.remittances_by_pk.period_to, one.remittances_by_pk.total.text], ['2026-02-28', '7821.39']);
    const filtered = await graph(`{ remittances(where: {period_to: {_lte: "2026-02-28"}, total: {_gt: "0"}}) { id } }`);
    assert.deepEqual(filtered.remittances, [{ id: marked.get('2026-02-01')!.id }]);
    const ordered = await graph(`{ remittances(order_by: {total: asc}, limit: 1) { total } byLines: remittances(order_by: {lines_aggregate: {count: desc}}) { line_count } }`);
    assert.equal(ordered.remittances[0].total.text, [...marked.values()].map((m) => m.total).sort((a, b) => Number(cents(a) - cents(b)))[0]);
    const counts = ordered.byLines.map((r: any) => Number(r.line_count.text));
    assert.deepEqual(counts, [...counts].sort((a, b) => b - a));
  });

  it('a distribution line reaches the remittance that paid it (null before, and for the lender); filters go through it both ways', async () => {
    const data = await graph(`{ distributions(order_by: {id: asc}) { id funding_source_id remittance_id remittance { id period_from } } }`);
    assert.ok(data.distributions.some((line: any) => line.funding_source_id === null), 'the lender has lines');
    for (const line of data.distributions) {
      if (line.remittance_id === null) assert.equal(line.remittance, null);
      else assert.deepEqual(line.remittance, { id: line.remittance_id, period_from: [...marked].find(([, m]) => m.id === line.remittance_id)![0] });
      if (line.funding_source_id === null) assert.equal(line.remittance, null, "the lender's lines are not remitted");
    }
    const february = await graph(`{
      lines: distributions_aggregate(where: {remittance: {period_from: {_eq: "2026-02-01"}}}) { aggregate { count sum { amount } } }
      remittances(where: {period_from: {_eq: "2026-02-01"}}) { line_count total }
      ben: remittances(where: {lines: {person_id: {_eq: "${ben}"}}}, order_by: {period_from: asc}) { period_from }
    }`);
    assert.deepEqual([february.lines.aggregate.count.text, february.lines.aggregate.sum.amount.text], [february.remittances[0].line_count.text, february.remittances[0].total.text]);
    assert.deepEqual(february.ben, [{ period_from: '2026-02-01' }, { period_from: '2026-03-01' }]);
  });

  it('the schema: NOT NULL columns are non-null, no key or admin id, no insert, update or delete', async () => {
    const type = (await graph(`{ __type(name: "remittances") { fields { name type { kind ofType { name } } } } }`)).__type;
    const fields = new Map<string, { kind: string; ofType: { name: string } | null }>(type.fields.map((field: any) => [field.name, field.type]));
    assert.deepEqual([...fields.keys()].sort(), ['id', 'line_count', 'lines', 'lines_aggregate', 'period_from', 'period_to', 'remitted_at', 'remitted_by', 'total']);
    for (const [name, scalar] of [['id', 'uuid'], ['period_from', 'date'], ['period_to', 'date'], ['remitted_at', 'timestamptz'], ['remitted_by', 'String'], ['total', 'numeric'], ['line_count', 'Int']] as const)
      assert.deepEqual(fields.get(name), { kind: 'NON_NULL', ofType: { name: scalar } }, name);
    const remittance = (await graph(`{ __type(name: "distributions") { fields { name type { kind name } } } }`)).__type.fields.find((field: any) => field.name === 'remittance');
    assert.deepEqual(remittance.type, { kind: 'OBJECT', name: 'remittances' }, 'a line may have none yet: nullable');
    const mutations = (await graph(`{ __schema { mutationType { fields { name } } } }`)).__schema.mutationType.fields.map((field: any) => field.name as string);
    assert.deepEqual(mutations.filter((name: string) => name.includes('remittance')), []);
    const refused = await graphBody(`mutation { insert_remittances_one(object: {period_from: "2026-04-01", period_to: "2026-04-30", remitted_by: "me", total: "0", line_count: 0}) { id } }`);
    assert.equal(refused.errors?.[0]?.extensions?.code, 'validation-failed', refused.text);
    for (const field of ['remitted_by_key_id', 'remitted_by_admin_id', 'account_id']) {
      const answer = await graphBody(`{ remittances { ${field} } }`);
      assert.match(answer.errors?.[0]?.message ?? '', new RegExp(`Cannot query field "${field}"`), answer.text);
    }
    const count = (await s.db.query<{ n: number }>('SELECT count(*)::int AS n FROM remittances WHERE account_id = $1', [s.accountId])).rows[0]!.n;
    assert.equal(count, 2, 'nothing written');
  });

  it('read_only and servicer keys read them as the admin does (the roles GET /api/remittances/{id} answers)', async () => {
    const admin = (await graphBody(LIST)).text;
    const lines = `{ distributions(where: {remittance_id: {_is_null: false}}, order_by: {id: asc}) { id remittance { id total } } }`;
    const adminLines = (await graphBody(lines)).text;
    for (const role of ['read_only', 'servicer'] as const) {
      assert.equal((await graphBody(LIST, {}, keys.get(role)!)).text, admin, role);
      assert.equal((await graphBody(lines, {}, keys.get(role)!)).text, adminLines, role);
      const write = await graphBody(`mutation ($id: uuid!) { update_remittances_by_pk(pk_columns: {id: $id}, _set: {total: "0"}) { id } }`, { id: marked.get('2026-02-01')!.id }, keys.get(role)!);
      assert.equal(write.errors?.[0]?.extensions?.code, 'validation-failed', write.text);
    }
  });

  it('an investor key has no remittances: the root fields and distributions.remittance are not in its schema; its own lines keep their stamp', async () => {
    const key = keys.get('investor')!;
    for (const [query, field] of [
      ['{ remittances { id } }', 'remittances'],
      ['{ remittances_aggregate { aggregate { count } } }', 'remittances_aggregate'],
      [`{ remittances_by_pk(id: "${marked.get('2026-02-01')!.id}") { id } }`, 'remittances_by_pk'],
      ['{ distributions { remittance { total } } }', 'remittance'],
    ] as const) {
      const answer = await graphBody(query, {}, key);
      assert.equal(answer.data, undefined, answer.text);
      assert.equal(answer.errors?.[0]?.extensions?.code, 'validation-failed', answer.text);
      assert.match(answer.errors![0].message, new RegExp(`Cannot query field "${field}"`));
    }
    assert.equal((await graph(`{ __type(name: "remittances") { name } }`, {}, key)).__type, null);
    const own = await graph(`{ distributions(where: {remittance_id: {_is_null: false}}) { person_id remittance_id } }`, {}, key);
    assert.ok(own.distributions.length > 0);
    for (const line of own.distributions) {
      assert.equal(line.person_id, ann, 'only its own lines');
      assert.ok([...marked.values()].some((m) => m.id === line.remittance_id));
    }
  });

  it("another account's remittances are never visible, whichever way they are asked for", async () => {
    const theirs = await graphBody(`query ($id: uuid!) { remittances { id } remittances_by_pk(id: $id) { id } remittances_aggregate { aggregate { count } } }`, { id: marked.get('2026-02-01')!.id }, other.key);
    assert.equal(theirs.errors, undefined, theirs.text);
    assert.deepEqual(theirs.data.remittances, [{ id: otherRemittance }]);
    assert.equal(theirs.data.remittances_by_pk, null);
    assert.equal(theirs.data.remittances_aggregate.aggregate.count.text, '1');
    const lines = await graph(`query ($id: uuid!) { distributions(where: {remittance_id: {_eq: $id}}) { id } }`, { id: marked.get('2026-02-01')!.id }, other.key);
    assert.deepEqual(lines.distributions, []);
    for (const key of [s.key, keys.get('read_only')!, keys.get('servicer')!]) {
      const ours = await graph(`query ($id: uuid!) { remittances_by_pk(id: $id) { id } remittances(where: {id: {_eq: $id}}) { id } distributions(where: {remittance: {id: {_eq: $id}}}) { id } }`, { id: otherRemittance }, key);
      assert.deepEqual(ours, { remittances_by_pk: null, remittances: [], distributions: [] });
    }
  });

  it('a live query of the remittances is refreshed when a period is marked (the table sends change notices, migration 0029)', async () => {
    const live = connect(s.url, other.key);
    try {
      const subscription = subscribe(live.client, `subscription { remittances(order_by: {period_from: asc}) { period_from line_count lines_aggregate { aggregate { count } } } }`);
      const first = await subscription.next();
      assert.deepEqual(first.data.remittances.map((r: any) => r.period_from), ['2026-01-01']);
      await pay(other, otherLoan, '2026-03-15');
      const owed = (await graph(`{ distributions_aggregate(where: {remittance_id: {_is_null: true}, funding_source_id: {_is_null: false}}) { aggregate { count } } }`, {}, other.key)).distributions_aggregate.aggregate.count;
      assert.ok(Number(owed.text) > 0, 'the March payment owes lines');
      await mark(other, '2026-03-01', '2026-03-31');
      // A new result is sent when the answer changes: the mark's.
      const latest = await subscription.next();
      assert.deepEqual(latest.data.remittances.map((r: any) => [r.period_from, r.line_count, r.lines_aggregate.aggregate.count]), [
        ['2026-01-01', first.data.remittances[0].line_count, first.data.remittances[0].line_count],
        ['2026-03-01', Number(owed.text), Number(owed.text)],
      ]);
      subscription.stop();
    } finally {
      await live.dispose();
    }
  });
});
