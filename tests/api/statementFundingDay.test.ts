import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { graphData, startKeyedService, type KeyedService } from '../support/seededService.js';
import { installTestClock, setTestClock } from '../support/testClock.js';

/**
 * A distribution line dated before its funding source's funding day — the source's `date_funded`
 * moved later after a payment it shared — counts on the funding day, in the statement and in the
 * remittance run alike (docs/investors.md). The statement counted it on the funding day (so every
 * line of a source falls in one of its statements) while the run paid it on its own date: the
 * February run paid Ann 1,100.00 that no February statement showed, and her March statement showed
 * 1,100.00 no March run paid. Now, period by period and marked in order, each run's total for her
 * equals her statement's total received, and the marks stamp those lines.
 */
let s: KeyedService;
let loan: string;
let ann: string;
let source: string;

const graph = (query: string, variables: Record<string, unknown> = {}): Promise<any> => graphData(s, query, variables);

before(async () => {
  s = await startKeyedService();
  await installTestClock(s.db);
  await setTestClock(s.db, '2026-02-20');
  const created = await s.rest.post('/api/loan', { Name: 'Birch bridge', Amount: 100000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' });
  assert.equal(created.status, 201, created.text);
  loan = created.json.loan.id;
  ann = (await graph(`mutation { insert_people_one(object: {name: "Ann Investor", entity_type: "individual"}) { id } }`)).insert_people_one.id;
  source = (await graph(
    `mutation ($p: uuid!, $l: uuid!) { insert_funding_sources_one(object: {person_id: $p, loan_id: $l, original_amount: "60000", rate: "10", date_funded: "2026-01-15", class: "A"}) { id } }`,
    { p: ann, l: loan },
  )).insert_funding_sources_one.id;
  await graph(`mutation ($l: uuid!) { insert_payments_one(object: {loan_id: $l, date: "2026-02-15", amount: "2000", type: "regular", method: "ach"}) { id } }`, { l: loan });
  await setTestClock(s.db, '2026-04-10');
  await graph(`mutation ($id: uuid!) { update_funding_sources_by_pk(pk_columns: {id: $id}, _set: {date_funded: "2026-03-10"}) { id } }`, { id: source });
});

after(async () => {
  await s?.close();
});

describe('a line dated before its source was funded (date_funded moved later after a payment)', () => {
  it('the February payment\'s lines are dated before the new funding day, their take-back on the day it moved', async () => {
    const { rows } = await s.db.query<{ date: string; total: string }>(
      `SELECT date::text, sum(amount)::text AS total FROM distributions WHERE account_id = $1 AND person_id = $2 GROUP BY date ORDER BY date`,
      [s.accountId, ann],
    );
    assert.deepEqual(rows, [{ date: '2026-02-15', total: '1100.00' }, { date: '2026-04-10', total: '-1100.00' }]);
  });

  it('each period\'s remittance run pays what the statement of the period shows, marked in order', async () => {
    const periods = [
      { from: '2026-02-01', to: '2026-02-28', total: '0.00' },
      { from: '2026-03-01', to: '2026-03-31', total: '1100.00' },
      { from: '2026-04-01', to: '2026-04-10', total: '-1100.00' },
    ];
    for (const period of periods) {
      const statement = await s.rest.get(`/api/investors/${ann}/statement?from=${period.from}&to=${period.to}`);
      assert.equal(statement.status, 200, statement.text);
      const run = await s.rest.get(`/api/remittances?from=${period.from}&to=${period.to}`);
      assert.equal(run.status, 200, run.text);
      const received = statement.exact.totals.total.text;
      const annInRun = (run.json.investors as { person_id: string }[]).findIndex((investor) => investor.person_id === ann);
      const paid = annInRun < 0 ? '0.00' : run.exact.investors[annInRun].total.text;
      assert.deepEqual([received, paid], [period.total, period.total], `${period.from} – ${period.to}: the statement's total received and the run's`);
      if (annInRun >= 0) assert.ok(run.json.investors[annInRun].earliest_date >= period.from, `no line before the period: ${run.text}`);
      const marked = await s.rest.post('/api/remittances', { from: period.from, to: period.to });
      assert.equal(marked.status, 201, marked.text);
      assert.equal(marked.exact.remittance.total.text, period.total, 'the mark stamps what the run showed');
      const recorded = await s.rest.get(`/api/remittances/${marked.json.remittance.id}`);
      assert.equal(recorded.status, 200, recorded.text);
      assert.equal(recorded.exact.remittance.totals.total.text, period.total);
    }
    const unstamped = await s.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM distributions WHERE account_id = $1 AND person_id IS NOT NULL AND remittance_id IS NULL`, [s.accountId]);
    assert.equal(unstamped.rows[0]!.n, 0, 'every investor line paid once');
  });
});
