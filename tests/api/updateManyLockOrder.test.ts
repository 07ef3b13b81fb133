import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { testDatabaseKind } from '../support/testDatabase.js';
import { createFundedLoans, deadlocksCounted, payEachMutation, postGraph, startKeyedService, type KeyedService } from '../support/seededService.js';
import { verifyLedgers } from '../../app/ledgerVerify.js';

/**
 * `update_loans(where:)` writing many loans never deadlocks beside mutations of several ledger
 * writes (PostgreSQL, `TEST_DATABASE_URL`).
 *
 * One UPDATE of many loans locks its rows as its scan finds them (heap order, not id order; a
 * status change then replays each); a mutation paying several loans locks them root by root in
 * the order the document names them (holding the ledger-writers lock EXCLUSIVE, migration 0071).
 * The UPDATE, one statement in autocommit, took no turn: with the two crossing, PostgreSQL 15
 * counted 2 deadlocks in 5 rounds (each broken after `deadlock_timeout` by undoing one side, run
 * again by `db/conflictRetry.ts`). Now the engine announces an update or delete by `where` as it
 * announces several writes (engine/README.md), and it takes its turn. This test counts the
 * deadlocks PostgreSQL counts (`pg_stat_database.deadlocks`) over several rounds and requires
 * none. PGlite is one session: its writes never wait on one another.
 */
let service: KeyedService;
const LOANS = 8;
const ROUNDS = 5;
let loans: string[] = [];

before(async () => {
  if (testDatabaseKind === 'pglite') return; // every test is skipped there
  service = await startKeyedService();
  loans = await createFundedLoans(service, LOANS, 'update many');
  // Rewrite the loans in reverse id order, so that their rows lie on the heap against id order:
  // a scan of the table finds them in an order no payment mutation names them in.
  for (const id of [...loans].reverse()) await service.db.query(`UPDATE loans SET name = name WHERE id = $1`, [id]);
});

after(async () => {
  await service?.close();
});

describe(`update_loans(where:) beside mutations of several ledger writes (${testDatabaseKind})`, () => {
  it(
    `renaming ${LOANS} loans beside two mutations paying them in opposite orders: no deadlock in ${ROUNDS} rounds`,
    { timeout: 180_000, skip: testDatabaseKind === 'pglite' ? 'PGlite is one session: writes never wait on one another, so none can deadlock (run with TEST_DATABASE_URL)' : false },
    async (t) => {
      const before = await deadlocksCounted(service);
      for (let round = 0; round < ROUNDS; round += 1) {
        const date = `2026-02-${String(10 + round).padStart(2, '0')}`;
        const ids = JSON.stringify(loans);
        const [updated, descending, ascending] = await Promise.all([
          postGraph(service, `mutation { update_loans(where: {id: {_in: ${ids}}}, _set: {name: "update many ${round}"}) { affected_rows } }`),
          postGraph(service, payEachMutation([...loans].reverse(), date)),
          postGraph(service, payEachMutation(loans, date)),
        ]);
        for (const answer of [updated, descending, ascending]) {
          assert.equal(answer.status, 200, answer.text);
          assert.equal(JSON.parse(answer.text).errors, undefined, `round ${round}: ${answer.text}`);
        }
        assert.equal(JSON.parse(updated.text).data.update_loans.affected_rows, LOANS);
      }
      const deadlocks = (await deadlocksCounted(service)) - before;
      t.diagnostic(`deadlocks: ${deadlocks}`);
      assert.equal(deadlocks, 0, `PostgreSQL counted ${deadlocks} deadlocks in ${ROUNDS} rounds`);
      assert.deepEqual((await verifyLedgers(service.db, { accountId: service.accountId })).differing, []);
    },
  );
});
