import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { migrate } from '../../db/index.js';
import { remittanceRun, type RemittanceRun } from '../../app/remittances.js';
import { openSeededTestDatabase } from '../support/seededService.js';
import type { TestDatabase } from '../support/testDatabase.js';

/**
 * Migration 0066 on a database at the previous version (its index dropped, 0066 unrecorded): the
 * remittance run — every unremitted investor line up to the period's end, summed by investor and
 * component — reads its lines from an index alone. Before it, each line was fetched from the table:
 * at 10,000 loans (~197,000 never-remitted lines, PostgreSQL 15) the statement took 2.58 s, 1.85 s of
 * it in the heap, and the Remittance page 1.1–2.8 s; after, 0.46–0.83 s and 0.6–1.1 s. The run
 * answers the same. The seeded account is small, so the plan is asked with sequential and bitmap
 * scans off (the planner rightly reads a few pages whole, index or none).
 */
const PREVIOUS_INDEX = `
DROP INDEX distributions_unremitted_by_person;
DELETE FROM loanql_migrations WHERE name = '0066_unremitted_lines_covering';
`;
const PERIOD = { from: '2020-01-01', to: '2030-12-31' };

describe('migration 0066 (the unremitted lines covered by their index) on a database at the previous version', () => {
  let database: TestDatabase;
  let accountId: string;
  let runBefore: RemittanceRun;
  let planBefore: string;
  let applied: string[];

  /** The run's statement as `remittanceRun` sends it, explained with its own values. */
  const runPlan = async (): Promise<string> => {
    let statement: { text: string; values: readonly unknown[] } | null = null;
    const stop = database.db.observe((text, values) => {
      if (text.includes('by_investor')) statement = { text, values };
    });
    await remittanceRun(database.db, accountId, PERIOD);
    stop();
    const { text, values } = statement ?? assert.fail('the run sent no statement');
    await database.db.query('VACUUM ANALYZE distributions');
    return database.db.transaction(async (tx) => {
      await tx.query('SET LOCAL enable_seqscan = off');
      await tx.query('SET LOCAL enable_bitmapscan = off');
      const { rows } = await tx.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ${text}`, [...values]);
      return rows.map((row) => row['QUERY PLAN']).join('\n');
    });
  };

  before(async () => {
    const opened = await openSeededTestDatabase([{ seed: 66, scale: 0.01 }]);
    database = opened.database;
    accountId = opened.seeded[0].account.id;
    await database.db.script(PREVIOUS_INDEX);
    runBefore = await remittanceRun(database.db, accountId, PERIOD);
    planBefore = await runPlan();
    applied = await migrate(database.db);
  });

  after(async () => {
    await database?.close();
  });

  it('applies 0066 alone', () => {
    assert.deepEqual(applied, ['0066_unremitted_lines_covering']);
  });

  it('answers the same run, over real lines', async () => {
    assert.ok(runBefore.totals.lineCount >= 100, `${runBefore.totals.lineCount} unremitted lines`);
    assert.deepEqual(await remittanceRun(database.db, accountId, PERIOD), runBefore);
  });

  it('reads the lines from the index alone, none from the table', async () => {
    assert.match(planBefore, /-> {2}Index Scan using \w+ on distributions/, `before 0066 each line is fetched from the table:\n${planBefore}`);
    assert.doesNotMatch(planBefore, /Index Only Scan using \w+ on distributions/, planBefore);
    const plan = await runPlan();
    assert.match(plan, /Index Only Scan using distributions_unremitted_by_person on distributions/, plan);
    assert.match(plan, /Heap Fetches: 0/, plan);
  });
});
