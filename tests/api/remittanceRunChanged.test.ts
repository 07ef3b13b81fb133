import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { graphData, startKeyedService, type KeyedService } from '../support/seededService.js';
import { installTestClock, setTestClock } from '../support/testClock.js';
import { createAdmin } from '../../app/accounts.js';
import { DashboardClient } from '../dashboard/dashboardClient.js';

/**
 * The lender's clerk looks at a remittance run, pays what it shows, then marks the period
 * remitted. A payment dated back into the period, posted between the look and the mark, adds
 * lines to the run: the mark used to stamp them too — recorded as paid, though the clerk never saw
 * nor paid them, and no later run would ever show them again (the investor was short for good).
 * Now the mark may say what it was shown (`total` and `line_count`, the run's totals; the
 * dashboard's "Mark remitted" button sends them): a run that owes anything else by the time the
 * mark stamps it is a 409 naming what it owes now, and nothing is written.
 */
let s: KeyedService;
let loan: string;
const PERIOD = { from: '2026-02-01', to: '2026-02-28' };
const RUN = `/api/remittances?from=${PERIOD.from}&to=${PERIOD.to}`;

const graph = (query: string, variables: Record<string, unknown> = {}): Promise<any> => graphData(s, query, variables);

async function pay(date: string, amount: string): Promise<void> {
  await graph(`mutation ($l: uuid!, $d: date!, $a: numeric!) { insert_payments_one(object: {loan_id: $l, date: $d, amount: $a, type: "regular", method: "ach"}) { id } }`, { l: loan, d: date, a: amount });
}

async function count(sql: string): Promise<number> {
  return Number((await s.db.query<{ n: string }>(sql, [s.accountId])).rows[0]!.n);
}
const remittances = () => count('SELECT count(*) AS n FROM remittances WHERE account_id = $1');
const stamped = () => count('SELECT count(*) AS n FROM distributions WHERE account_id = $1 AND remittance_id IS NOT NULL');

/** The run as the clerk sees it: its total and line count. */
async function lookAtRun(): Promise<{ total: string; line_count: number }> {
  const run = await s.rest.get(RUN);
  assert.equal(run.status, 200, run.text);
  return { total: run.exact.totals.total.text, line_count: run.json.totals.line_count };
}

before(async () => {
  s = await startKeyedService();
  await installTestClock(s.db);
  await setTestClock(s.db, '2026-03-31');
  const created = await s.rest.post('/api/loan', { Name: 'Birch bridge', Amount: 100000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' });
  assert.equal(created.status, 201, created.text);
  loan = created.json.loan.id;
  const ann = (await graph(`mutation { insert_people_one(object: {name: "Ann Investor", entity_type: "individual"}) { id } }`)).insert_people_one.id;
  await graph(
    `mutation ($p: uuid!, $l: uuid!) { insert_funding_sources_one(object: {person_id: $p, loan_id: $l, original_amount: "60000", rate: "10", date_funded: "2026-01-15", class: "A"}) { id } }`,
    { p: ann, l: loan },
  );
  await pay('2026-02-13', '8884.88');
});
after(async () => {
  await setTestClock(s.db, null).catch(() => undefined);
  await s?.close();
});

describe('Marking a remittance run that changed since it was shown', () => {
  it('a payment dated into the period after the clerk looked: the mark with what was shown is a 409 naming what the run owes now, nothing written', async () => {
    const shown = await lookAtRun();
    assert.deepEqual(shown, { total: '5230.93', line_count: 2 }, "R10's example: 4,730.93 + 500.00 to the investor");
    await pay('2026-02-20', '1000.00'); // posted by someone else while the clerk paid
    const now = await lookAtRun();
    assert.ok(now.line_count > shown.line_count, 'the run owes more lines now');

    const mark = await s.rest.post('/api/remittances', { ...PERIOD, ...shown });
    assert.equal(mark.status, 409, mark.text);
    assert.match(mark.json.error, /changed since it was shown/);
    assert.ok(mark.json.error.includes(`${now.total} in ${now.line_count} lines`), mark.json.error);
    assert.ok(mark.json.error.includes(`${shown.total} in ${shown.line_count} lines`), mark.json.error);
    assert.equal(await remittances(), 0, 'no remittance recorded');
    assert.equal(await stamped(), 0, 'no line stamped');

    // Looked at again, the run is marked with what it shows: exactly those lines are recorded as paid.
    const marked = await s.rest.post('/api/remittances', { ...PERIOD, ...now });
    assert.equal(marked.status, 201, marked.text);
    assert.equal(marked.exact.remittance.total.text, now.total);
    assert.equal(marked.json.remittance.line_count, now.line_count);
    assert.equal(await stamped(), now.line_count);
  });

  it('a wrong total or line count is a 400 naming it; a mark without them stamps what the run owes when it runs (as before)', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ total: '12,00', line_count: 1 }, 'total'],
      [{ total: '1.001', line_count: 1 }, 'total'],
      [{ total: '5.00', line_count: -1 }, 'line_count'],
      [{ total: '5.00', line_count: '1.5' }, 'line_count'],
      [{ total: '5.00' }, 'line_count'],
      [{ line_count: 3 }, 'total'],
    ];
    for (const [given, field] of cases) {
      const answer = await s.rest.post('/api/remittances', { from: '2026-03-01', to: '2026-03-31', ...given });
      assert.equal(answer.status, 400, `${JSON.stringify(given)}: ${answer.text}`);
      assert.ok(field in answer.json.fields, `${JSON.stringify(given)} names ${field}: ${answer.text}`);
    }
    assert.equal(await remittances(), 1, 'nothing written by the refused marks');
    await pay('2026-03-13', '8884.88');
    const plain = await s.rest.post('/api/remittances', { from: '2026-03-01', to: '2026-03-31' });
    assert.equal(plain.status, 201, plain.text);
    assert.equal(plain.json.remittance.line_count, 2);
  });
});

describe("The dashboard's “Mark remitted” button", () => {
  it('sends the total and line count it shows: after a payment dated into the period, the mark is refused (409) and the page shows the new run', async () => {
    await setTestClock(s.db, '2026-05-31');
    await pay('2026-04-14', '8884.88');
    const password = 'correct horse battery';
    await createAdmin(s.db, s.accountId, { email: `clerk@${s.account.slug}.test`, password, name: 'Cleo Clerk' });
    const client = new DashboardClient(s.url);
    assert.equal((await client.logIn(`clerk@${s.account.slug}.test`, password)).status, 303);
    const page = await client.get('/dashboard/remittances?from=2026-04-01&to=2026-04-30');
    assert.equal(page.status, 200);
    const form = /<form method="post" action="\/dashboard\/remittances"[^>]*>([\s\S]*?)<\/form>/.exec(page.text);
    assert.ok(form, 'the mark form');
    const fields = Object.fromEntries([...form[1]!.matchAll(/<input type="hidden" name="([a-z_]+)" value="([^"]*)">/g)].map((match) => [match[1]!, match[2]!]));
    const run = await s.rest.get('/api/remittances?from=2026-04-01&to=2026-04-30');
    assert.equal(fields.total, run.exact.totals.total.text, 'the form carries the total it shows');
    assert.equal(fields.line_count, String(run.json.totals.line_count), 'and the line count');
    const before = await remittances();

    await pay('2026-04-20', '500.00');
    const refused = await client.postForm('/dashboard/remittances', fields);
    assert.equal(refused.status, 409, refused.text.slice(0, 500));
    assert.match(refused.text, /Not marked: the run changed since it was shown/);
    assert.equal(await remittances(), before, 'nothing recorded');
    const again = /<form method="post" action="\/dashboard\/remittances"[^>]*>([\s\S]*?)<\/form>/.exec(refused.text)!;
    assert.match(again[1]!, /name="line_count" value="(\d+)"/);
    assert.notEqual(/name="line_count" value="(\d+)"/.exec(again[1]!)![1], fields.line_count, 'the page shows the run as it is now');

    const marked = await client.postForm('/dashboard/remittances', Object.fromEntries([...again[1]!.matchAll(/<input type="hidden" name="([a-z_]+)" value="([^"]*)">/g)].map((match) => [match[1]!, match[2]!])));
    assert.equal(marked.status, 303, marked.text.slice(0, 500));
    assert.equal(await remittances(), before + 1);
  });
});
