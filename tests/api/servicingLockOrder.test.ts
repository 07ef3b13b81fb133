import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { testDatabaseKind } from '../support/testDatabase.js';
import { createFundedLoans, deadlocksCounted, payEachMutation, postGraph, startKeyedService, type KeyedService } from '../support/seededService.js';
import { verifyLedgers } from '../../app/ledgerVerify.js';
import { assessFees } from '../../app/feeJob.js';

/**
 * Servicing writes that lock the same loans never deadlock (PostgreSQL, `TEST_DATABASE_URL`).
 *
 * A GraphQL mutation paying several loans locks each loan as its root runs (the payment's replay),
 * in the order the document names them; a product's settings change and the daily fee job lock
 * the loans in id order. A batch naming the loans in reverse id order beside them made a cycle,
 * which PostgreSQL broke after `deadlock_timeout` (1 s) by undoing one side (40P01), run again by
 * `db/conflictRetry.ts`: the client waited a second or more. This test counts the deadlocks
 * PostgreSQL itself counts (`pg_stat_database.deadlocks` of the test's own database) over several
 * rounds and requires none: for two mutations paying the loans in opposite orders (each holding
 * the SHARE lock payments take, 0067), and for a mutation whose first root is a manual fee, which
 * took no lock at all. PGlite is one session: its writes never wait on one another.
 */
let service: KeyedService;
const LOANS = 8;
const ROUNDS = 5;
let loans: string[] = [];

const graph = (query: string): Promise<{ status: number; text: string }> => postGraph(service, query);

/** One mutation paying each of `ids` 50.00 on `date`, in the order given; resolves with its answer and how long it took. */
async function payEach(ids: readonly string[], date: string): Promise<{ status: number; text: string; ms: number }> {
  const started = performance.now();
  const answer = await graph(payEachMutation(ids, date));
  return { ...answer, ms: performance.now() - started };
}

before(async () => {
  if (testDatabaseKind === 'pglite') return; // every test is skipped there
  service = await startKeyedService();
  loans = await createFundedLoans(service, LOANS, 'lock order');
});

after(async () => {
  await service?.close();
});

describe(`servicing writes lock loans in one order (${testDatabaseKind})`, () => {
  it(
    `mutations paying ${LOANS} loans in reverse and in id order beside a product settings change and the daily fee job: no deadlock in ${ROUNDS} rounds`,
    { timeout: 180_000, skip: testDatabaseKind === 'pglite' ? 'PGlite is one session: writes never wait on one another, so none can deadlock (run with TEST_DATABASE_URL)' : false },
    async (t) => {
      const before = await deadlocksCounted(service);
      const latencies: number[] = [];
      const replayed: number[] = [];
      for (let round = 0; round < ROUNDS; round += 1) {
        const date = `2026-02-${String(10 + round).padStart(2, '0')}`;
        // The job runs once a day: forget the day so that each round runs it again.
        await service.db.query(`DELETE FROM ledger_job_days WHERE account_id = $1`, [service.accountId]);
        // And let it find every loan to replay (a stored ledger of no day is replayed whatever else).
        await service.db.query(`UPDATE loans SET ledger_as_of = NULL WHERE account_id = $1`, [service.accountId]);
        const [settings, descending, ascending, runs] = await Promise.all([
          service.rest.patch('/api/product', { late_fee_percent: round % 2 ? 5 : 6 }),
          payEach([...loans].reverse(), date),
          payEach(loans, date),
          assessFees(service.db, { accountSlug: service.account.slug }),
        ]);
        assert.equal(settings.status, 200, `round ${round}: PATCH /api/product: ${settings.text}`);
        for (const batch of [descending, ascending]) {
          assert.equal(batch.status, 200, batch.text);
          assert.equal(JSON.parse(batch.text).errors, undefined, `round ${round}: ${batch.text}`);
        }
        assert.deepEqual(runs[0]!.loansRefused, []);
        replayed.push(runs[0]!.loansReplayed);
        latencies.push(descending.ms, ascending.ms);
      }
      const deadlocks = (await deadlocksCounted(service)) - before;
      t.diagnostic(`batch latencies (ms, reverse and id order by round): ${latencies.map((ms) => ms.toFixed(0)).join(', ')}; loans the fee job replayed: ${replayed.join(', ')}; deadlocks: ${deadlocks}`);
      assert.equal(deadlocks, 0, `PostgreSQL counted ${deadlocks} deadlocks in ${ROUNDS} rounds`);
      // The loans the job skipped (another write held them) are brought to the day by a last run:
      // a round that left loans behind recorded its day incomplete (migration 0075), so this run
      // takes them without the day being forgotten first; a complete day left none behind.
      const last = await assessFees(service.db, { accountSlug: service.account.slug });
      assert.equal(last[0]!.loansSkipped, 0, 'the last run left no loan behind');
      assert.deepEqual((await verifyLedgers(service.db, { accountId: service.accountId })).differing, []);
    },
  );

  it(
    `a mutation whose first root is a manual fee (not a payment) on the last loan, then payments on the others, beside a product settings change: no deadlock in ${ROUNDS} rounds`,
    { timeout: 180_000, skip: testDatabaseKind === 'pglite' ? 'PGlite is one session: writes never wait on one another, so none can deadlock (run with TEST_DATABASE_URL)' : false },
    async (t) => {
      const before = await deadlocksCounted(service);
      const latencies: number[] = [];
      for (let round = 0; round < ROUNDS; round += 1) {
        const date = `2026-03-${String(10 + round).padStart(2, '0')}`;
        const started = performance.now();
        const [settings, mixed] = await Promise.all([
          service.rest.patch('/api/product', { late_fee_percent: round % 2 ? 5 : 6 }),
          graph(
            `mutation { f: insert_fees_one(object: {loan_id: "${loans[LOANS - 1]}", date: "${date}", amount: 25, description: "inspection"}) { id } ` +
              `${loans.slice(0, -1).map((id, i) => `p${i}: insert_payments_one(object: {loan_id: "${id}", date: "${date}", amount: 50}) { id }`).join(' ')} }`,
          ),
        ]);
        latencies.push(performance.now() - started);
        assert.equal(settings.status, 200, `round ${round}: PATCH /api/product: ${settings.text}`);
        assert.equal(mixed.status, 200, mixed.text);
        assert.equal(JSON.parse(mixed.text).errors, undefined, `round ${round}: ${mixed.text}`);
      }
      const deadlocks = (await deadlocksCounted(service)) - before;
      t.diagnostic(`round latencies (ms): ${latencies.map((ms) => ms.toFixed(0)).join(', ')}; deadlocks: ${deadlocks}`);
      assert.equal(deadlocks, 0, `PostgreSQL counted ${deadlocks} deadlocks in ${ROUNDS} rounds`);
      assert.deepEqual((await verifyLedgers(service.db, { accountId: service.accountId })).differing, []);
    },
  );
});
