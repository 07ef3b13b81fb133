import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { comparePlans, PlanChoices, CHECKS } from '../../db/planChoice.js';
import { openPostgresDatabase, type Database } from '../../db/index.js';
import { createServerDatabase } from '../support/testDatabase.js';

/**
 * db/planChoice.ts: a prepared statement marked `genericPlanSafe` that PostgreSQL would plan
 * anew on every execution, although its generic plan is the same plan, runs on the generic plan
 * once checked; an unmarked one is left to PostgreSQL. Observed in `pg_prepared_statements`, which counts
 * the generic and the custom plans each statement got on the connection.
 */
const serverUrl = process.env.TEST_DATABASE_URL;

const plan = (nodes: object, cost: number) => [{ Plan: { 'Total Cost': cost, ...nodes } }];
const indexScan = (condition: string) => ({ 'Node Type': 'Limit', Plans: [{ 'Node Type': 'Index Scan', 'Relation Name': 't', 'Index Name': 't_pkey', 'Index Cond': condition, 'Parent Relationship': 'Outer' }] });

describe('Plan comparison', () => {
  it('two plans differing only in condition texts and costs have the same shape', () => {
    const compared = comparePlans([plan(indexScan('(id > 5)'), 10), plan(indexScan('(id > 7)'), 20)], plan(indexScan('(id > $1)'), 500));
    assert.deepEqual(compared, { sameShape: true, genericCost: 500, forValuesCost: 15 });
  });

  it('another index, node or join type is another plan', () => {
    const other = { 'Node Type': 'Limit', Plans: [{ 'Node Type': 'Seq Scan', 'Relation Name': 't', 'Parent Relationship': 'Outer' }] };
    assert.equal(comparePlans([plan(indexScan('(id > 5)'), 10)], plan(other, 10)).sameShape, false);
    assert.equal(comparePlans([plan(indexScan('(id > 5)'), 10), plan(other, 10)], plan(indexScan('(id > $1)'), 10)).sameShape, false, 'every value\'s plan must match');
  });

  it(`decides after ${CHECKS} checks of the same shape: the generic plan when it looks dearer (PostgreSQL would keep planning), else PostgreSQL's own choice`, () => {
    const choices = new PlanChoices();
    for (let i = 0; i < CHECKS; i++) {
      assert.equal(choices.next('dear'), 'check');
      choices.record('dear', { sameShape: true, genericCost: 5000, forValuesCost: 300 });
      choices.record('cheap', { sameShape: true, genericCost: 12, forValuesCost: 12 });
    }
    assert.equal(choices.next('dear'), 'generic');
    assert.equal(choices.next('cheap'), 'planned');
  });

  it('one check with another shape, or a failed check, leaves the statement to PostgreSQL for good', () => {
    const choices = new PlanChoices();
    choices.record('a', { sameShape: true, genericCost: 5000, forValuesCost: 300 });
    choices.record('a', { sameShape: false, genericCost: 5000, forValuesCost: 300 });
    choices.record('b', null);
    for (let i = 0; i < CHECKS; i++) choices.record('a', { sameShape: true, genericCost: 5000, forValuesCost: 300 });
    assert.deepEqual([choices.next('a'), choices.next('b')], ['planned', 'planned']);
  });
});

describe('Generic plans chosen on a real server', { skip: serverUrl ? false : 'needs TEST_DATABASE_URL (a real PostgreSQL server)' }, () => {
  let created: Awaited<ReturnType<typeof createServerDatabase>>;
  let db: Database;
  /** Plans a statement got on the pool's one connection, by its text. */
  const plansOf = async (text: string): Promise<{ generic: number; custom: number }> => {
    const { rows } = await db.query<{ generic: number; custom: number }>('SELECT generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements WHERE statement = $1', [text]);
    assert.equal(rows.length, 1, 'the statement is prepared on the connection');
    return rows[0]!;
  };
  const mode = async (): Promise<string> => (await db.query<{ plan_cache_mode: string }>('SHOW plan_cache_mode')).rows[0]!.plan_cache_mode;

  before(async () => {
    created = await createServerDatabase(serverUrl!);
    db = openPostgresDatabase({ connectionString: created.url, maxConnections: 1 });
    await db.script(`
      CREATE TABLE t (id int PRIMARY KEY, status text NOT NULL, body text NOT NULL);
      INSERT INTO t SELECT i, CASE WHEN i % 500 = 0 THEN 'open' ELSE 'closed' END, md5(i::text) FROM generate_series(1, 50000) i;
      CREATE INDEX t_status ON t (status);
      ANALYZE t;`);
  });
  after(async () => {
    await db?.close();
    await created?.drop();
  });

  it('a page with LIMIT and OFFSET parameters (planned anew each time by PostgreSQL) runs on its generic plan after the checks; the connection is left as it was', async () => {
    const text = 'SELECT id, body FROM t ORDER BY id LIMIT $1 OFFSET $2';
    for (let i = 0; i < 20; i++) {
      const { rows } = await db.query<{ id: number }>(text, [5, i * 5], { reusable: true, genericPlanSafe: { oneOf: new Map() } });
      assert.deepEqual(rows.map((row) => row.id), [1, 2, 3, 4, 5].map((n) => n + i * 5), 'the right page every time');
    }
    const plans = await plansOf(text);
    assert.ok(plans.generic >= 15, `mostly the generic plan: ${JSON.stringify(plans)}`);
    assert.ok(plans.custom <= CHECKS + 1, `planned anew only until checked: ${JSON.stringify(plans)}`);
    assert.equal(await mode(), 'auto');
  });

  it("the generic plan is set for the statement's own batch only: a setting the session made itself is the same afterwards", async () => {
    const text = 'SELECT id FROM t ORDER BY id LIMIT $1 OFFSET $2';
    const page = (offset: number) => db.query<{ id: number }>(text, [2, offset], { reusable: true, genericPlanSafe: { oneOf: new Map() } });
    for (let i = 0; i < CHECKS + 2; i++) await page(i);
    await db.script('SET plan_cache_mode = force_custom_plan');
    try {
      const before = await plansOf(text);
      assert.deepEqual((await page(10)).rows.map((row) => row.id), [11, 12]);
      const after = await plansOf(text);
      assert.equal(after.generic, before.generic + 1, 'run on its generic plan despite the session');
      assert.equal(await mode(), 'force_custom_plan', 'the session keeps its own setting');
    } finally {
      await db.script('RESET plan_cache_mode');
    }
  });

  it('a statement not marked genericPlanSafe is left to PostgreSQL, which plans it for each value (a rare status by the index)', async () => {
    // Its generic plan has the same shape as the one for 'open' (an index scan), but 'closed'
    // would be better read from the table: only the caller knows whether values vary like this.
    const text = 'SELECT count(*)::int AS n FROM t WHERE status = $1 AND body <> $2';
    for (let i = 0; i < 20; i++) {
      const { rows } = await db.query<{ n: number }>(text, ['open', 'x'], { reusable: true });
      assert.equal(rows[0]!.n, 100);
    }
    const plans = await plansOf(text);
    assert.ok(plans.custom >= 19, `planned for the value every time: ${JSON.stringify(plans)}`);
  });

  it('a parameter listed with the values it can take is checked with each: a common status would read the table, so PostgreSQL keeps choosing', async () => {
    const text = 'SELECT count(*)::int AS n FROM t WHERE status = $1 AND body <> $2';
    const oneOf = new Map([[0, ['open', 'closed']]]);
    for (let i = 0; i < 20; i++) await db.query(text.replace('count(*)', 'count(id)'), ['open', 'x'], { reusable: true, genericPlanSafe: { oneOf } });
    const plans = await plansOf(text.replace('count(*)', 'count(id)'));
    assert.ok(plans.custom >= 19, `planned for the value every time: ${JSON.stringify(plans)}`);
  });

  it('a statement that fails on its generic plan fails like any other, and the connection is left as it was', async () => {
    const text = 'SELECT id, 100 / $1::int AS share FROM t ORDER BY id LIMIT $2';
    for (let i = 0; i < 10; i++) await db.query(text, [1, 3], { reusable: true, genericPlanSafe: { oneOf: new Map() } });
    assert.ok((await plansOf(text)).generic >= 5, 'on the generic plan by now');
    await assert.rejects(db.query(text, [0, 3], { reusable: true, genericPlanSafe: { oneOf: new Map() } }), /division by zero/);
    assert.equal(await mode(), 'auto');
    assert.equal((await db.query(text, [2, 1], { reusable: true, genericPlanSafe: { oneOf: new Map() } })).rows.length, 1);
  });
});
