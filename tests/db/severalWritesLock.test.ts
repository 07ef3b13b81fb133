import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { openTestDatabase, testDatabaseKind, type TestDatabase } from '../support/testDatabase.js';
import { LEDGER_WRITERS_LOCK } from '../../db/ledgerWritersLock.js';

/**
 * `loanql_several_writes(account, tables)` (migration 0071), which the engine calls before the
 * first write of a mutation of several write statements: it takes the account's ledger-writers
 * lock EXCLUSIVE only when one of the tables is a ledger's, so a mutation writing tasks and
 * comments never waits for the account's payments (tests/api/servicingLockOrder.test.ts has the
 * deadlocks it prevents).
 */
let database: TestDatabase;

before(async () => {
  database = await openTestDatabase();
});

after(async () => {
  await database?.close();
});

/** The ledger-writers locks the transaction holds: its modes. */
async function heldModes(tx: { query: TestDatabase['db']['query'] }): Promise<string[]> {
  const { rows } = await tx.query<{ mode: string }>(
    `SELECT mode FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND classid = $1::int::oid AND granted ORDER BY mode`,
    [LEDGER_WRITERS_LOCK],
  );
  return rows.map((row) => row.mode);
}

describe(`a mutation of several writes announced to the database (${testDatabaseKind})`, () => {
  it('writes to a ledger table take the account lock EXCLUSIVE; writes to other tables take none', async () => {
    const account = randomUUID();
    await database.db.transaction(async (tx) => {
      const { rows } = await tx.query<{ locked: boolean }>(`SELECT loanql_several_writes($1, ARRAY['comments', 'tasks']) AS locked`, [account]);
      assert.equal(rows[0]!.locked, false);
      assert.deepEqual(await heldModes(tx), []);
    });
    await database.db.transaction(async (tx) => {
      const { rows } = await tx.query<{ locked: boolean }>(`SELECT loanql_several_writes($1, ARRAY['payments', 'tasks']) AS locked`, [account]);
      assert.equal(rows[0]!.locked, true);
      assert.deepEqual(await heldModes(tx), ['ExclusiveLock']);
    });
  });
});
