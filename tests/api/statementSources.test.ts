import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createApiKey } from '../../app/apiKeys.js';
import { investorStatement, listInvestors } from '../../app/investorStatements.js';
import { restClient } from '../support/restClient.js';
import { graphData } from '../support/graphData.js';
import { startKeyedService, type KeyedService } from '../support/seededService.js';
import { installTestClock, setTestClock } from '../support/testClock.js';

/**
 * Statement sources that are not plainly funded (docs/investors.md, "The statement"), over HTTP.
 *
 * - An investor removed from a loan after it was paid and remitted: deleting the funding source
 *   takes back its lines by adjustments (docs/ledger.md, "Weights that move"), which the next
 *   remittance run charges to the investor. The person's statement must show those same lines —
 *   before, it showed nothing at all ("funds no loan"), for the new period and for the one already
 *   paid, while the run asked for money back. Each period's statement here equals the person's
 *   lines read through GraphQL and the run's (or the recorded remittance's) figure, and the
 *   periods chain.
 * - A commitment not yet funded (no `date_funded`) takes no share (R10); its statement said it
 *   held its whole amount of principal, and the statement after its funding opened at 0.00.
 * - Cost: the statement read each source's principal lines with a subquery per source, which
 *   scanned all the person's lines once per source — 55 s on PostgreSQL 15 for a fund in 1,622
 *   loans (63,612 lines), past the 10 s statement timeout; now one grouped pass (1.8 s). Its plan
 *   has no correlated subquery.
 */
let s: KeyedService;
let loan: string;
let cal: string;
let calSource: string;

const graph = (query: string, variables: Record<string, unknown> = {}): Promise<any> => graphData(s.url, s.key, query, variables);

async function fund(name: string, amount: string, rate: string, dateFunded: string | null = '2026-01-15'): Promise<{ person: string; source: string }> {
  const person = (await graph(`mutation ($n: String!) { insert_people_one(object: {name: $n, entity_type: "individual"}) { id } }`, { n: name })).insert_people_one.id;
  const source = (
    await graph(
      `mutation ($p: uuid!, $l: uuid!, $a: numeric!, $r: numeric!, $d: date) {
         insert_funding_sources_one(object: {person_id: $p, loan_id: $l, original_amount: $a, rate: $r, date_funded: $d}) { id } }`,
      { p: person, l: loan, a: amount, r: rate, d: dateFunded },
    )
  ).insert_funding_sources_one.id;
  return { person, source };
}

async function pay(date: string, amount: string): Promise<void> {
  await graph(`mutation ($l: uuid!, $d: date!, $a: numeric!) { insert_payments_one(object: {loan_id: $l, date: $d, amount: $a, type: "regular", method: "ach"}) { id } }`, { l: loan, d: date, a: amount });
}

/** Exact cents of a decimal text. */
function cents(value: unknown): bigint {
  const match = /^(-?)(\d+)(?:\.(\d{1,2}))?$/.exec(String(value));
  assert.ok(match, `a decimal: ${String(value)}`);
  const whole = BigInt(match[2]!) * 100n + BigInt((match[3] ?? '0').padEnd(2, '0'));
  return match[1] ? -whole : whole;
}

/** The sum and count of the person's lines dated in the period, through GraphQL. */
async function linesOf(personId: string, from: string, to: string): Promise<{ total: bigint; count: number }> {
  const data = await graph(`query ($p: uuid!, $f: date!, $t: date!) { distributions(where: {person_id: {_eq: $p}, date: {_gte: $f, _lte: $t}}) { amount } }`, { p: personId, f: from, t: to });
  const lines = data.distributions as { amount: number }[];
  return { total: lines.reduce((sum, line) => sum + cents(line.amount), 0n), count: lines.length };
}

before(async () => {
  s = await startKeyedService();
  await installTestClock(s.db);
  await setTestClock(s.db, '2026-03-31');
  const created = await s.rest.post('/api/loan', { Name: 'Oak Ave rehab', Amount: 100000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' });
  assert.equal(created.status, 201, created.text);
  loan = created.json.loan.id;
  await fund('Ann Investor', '60000', '10');
  ({ person: cal, source: calSource } = await fund('Cal Investor', '5000', '12'));
  await pay('2026-02-15', '8884.88');
  await pay('2026-03-15', '8884.88');
});
after(async () => {
  await setTestClock(s.db, null).catch(() => undefined);
  await s?.close();
});

describe('An investor removed after being paid', () => {
  it("the statement shows the removal's lines the run charges, and February's paid lines stay on February's statement", async () => {
    const marked = await s.rest.post('/api/remittances', { from: '2026-02-01', to: '2026-02-28' });
    assert.equal(marked.status, 201, marked.text);
    const paidToCal = marked.exact.remittance.investors.find((investor: any) => investor.person_id === cal);
    assert.equal(paidToCal.total.text, '444.24', 'R10: 5 % of row 1 — principal 394.24, interest 50.00');

    await graph(`mutation ($id: uuid!) { delete_funding_sources_by_pk(id: $id) { id } }`, { id: calSource });

    const run = await s.rest.get('/api/remittances?from=2026-03-01&to=2026-03-31');
    assert.equal(run.status, 200, run.text);
    const owed = run.exact.investors.find((investor: any) => investor.person_id === cal);
    assert.ok(owed, 'the run charges the removed investor');
    const march = await linesOf(cal, '2026-03-01', '2026-03-31');
    assert.equal(cents(owed.total.text), march.total);

    const statement = await s.rest.get(`/api/investors/${cal}/statement?from=2026-03-01&to=2026-03-31`);
    assert.equal(statement.status, 200, statement.text);
    assert.deepEqual(
      statement.json.loans.map((row: any) => row.loan_id),
      [loan],
      'the loan the removed source funded is on the statement',
    );
    assert.equal(statement.exact.totals.total.text, owed.total.text, "the statement's total is what the run charges");
    assert.equal(statement.json.lines.length, march.count);
    assert.equal(statement.exact.totals.closing_principal.text, '0.00', 'everything paid on the source was taken back');

    const february = await s.rest.get(`/api/investors/${cal}/statement?from=2026-02-01&to=2026-02-28`);
    assert.equal(february.exact.totals.total.text, paidToCal.total.text, "February's statement is still what February's remittance paid");
    assert.equal(february.exact.totals.funded.text, '0.00', 'a removed source funds nothing any more');
    assert.equal(february.exact.totals.closing_principal.text, statement.exact.totals.opening_principal.text, 'consecutive statements chain');
    assert.equal(
      cents(february.exact.totals.closing_principal.text),
      -cents(february.exact.totals.principal.text),
      'its principal balance is minus what was paid on it',
    );
    // The dashboard's list of investors still has them (the run's page links to their statement).
    const listed = (await listInvestors(s.db, s.accountId)).find((investor) => investor.personId === cal);
    assert.deepEqual(listed, { personId: cal, name: 'Cal Investor', loans: 0, funded: '0.00' });
  });

  it("the removed investor's own key reads the same statement, in CSV too", async () => {
    const key = (await createApiKey(s.db, s.accountId, 'cal portal', { role: 'investor', variables: new Map([['person_id', cal]]) })).key;
    const rest = await restClient(s.url, key);
    const own = await rest.get(`/api/investors/${cal}/statement?from=2026-03-01&to=2026-03-31`);
    const admin = await s.rest.get(`/api/investors/${cal}/statement?from=2026-03-01&to=2026-03-31`);
    assert.equal(own.status, 200, own.text);
    assert.equal(own.text, admin.text);
    const csv = await rest.get(`/api/investors/${cal}/statement?from=2026-03-01&to=2026-03-31&format=csv`);
    const rows = csv.text.replace(/^\uFEFF/, '').trimEnd().split('\r\n');
    assert.equal(rows.length, 3, 'header, the loan, Total');
    assert.equal(rows[2]!.split(',')[10], admin.exact.totals.total.text);
  });
});

describe('A commitment not yet funded', () => {
  it('holds no principal until its funding day; the statements chain across it', async () => {
    const dee = await fund('Dee Committed', '3000', '11', null);
    const unfunded = await s.rest.get(`/api/investors/${dee.person}/statement?from=2026-02-01&to=2026-02-28`);
    assert.equal(unfunded.status, 200, unfunded.text);
    assert.deepEqual(unfunded.json.loans.map((row: any) => row.loan_id), [loan], 'the loan is listed');
    for (const column of ['opening_principal', 'funded', 'principal', 'total', 'closing_principal']) {
      assert.equal(unfunded.exact.totals[column].text, '0.00', `${column}: nothing funded, nothing received`);
    }
    const listed = async () => (await listInvestors(s.db, s.accountId)).find((investor) => investor.personId === dee.person);
    assert.deepEqual(await listed(), { personId: dee.person, name: 'Dee Committed', loans: 0, funded: '0.00' }, "the dashboard's list: listed, nothing funded yet");
    await graph(`mutation ($id: uuid!) { update_funding_sources_by_pk(pk_columns: {id: $id}, _set: {date_funded: "2026-03-20"}) { id } }`, { id: dee.source });
    assert.deepEqual(await listed(), { personId: dee.person, name: 'Dee Committed', loans: 1, funded: '3000.00' });
    const march = await s.rest.get(`/api/investors/${dee.person}/statement?from=2026-03-01&to=2026-03-31`);
    assert.equal(march.exact.totals.opening_principal.text, unfunded.exact.totals.closing_principal.text, "February's closing is March's opening");
    assert.equal(march.exact.totals.funded.text, '3000.00');
    assert.equal(march.exact.totals.closing_principal.text, '3000.00', 'no payment since its funding day');
  });
});

describe("The statement's cost", () => {
  it('reads the lines in passes, not once per source: no correlated subquery in its plan', async () => {
    const seen: { text: string; values: readonly unknown[] }[] = [];
    const stop = s.db.observe((text, values) => seen.push({ text, values }));
    try {
      await investorStatement(s.db, s.accountId, cal, { from: '2026-02-01', to: '2026-03-31' });
    } finally {
      stop();
    }
    const statement = seen.find((one) => one.text.includes('per_source'));
    assert.ok(statement, 'the statement was sent');
    const { rows } = await s.db.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${statement.text}`, statement.values);
    const plan = rows[0]!['QUERY PLAN'];
    const subPlans: string[] = [];
    const walk = (node: any): void => {
      if (node['Parent Relationship'] === 'SubPlan') subPlans.push(String(node['Subplan Name'] ?? node['Node Type']));
      for (const child of node.Plans ?? []) walk(child);
    };
    walk((typeof plan === 'string' ? JSON.parse(plan) : plan)[0].Plan);
    assert.deepEqual(subPlans, [], 'a correlated subquery runs once per outer row');
  });
});
