import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CONFLICT_ATTEMPTS, databaseInTransaction, type Database } from '../../db/index.js';
import { openTestDatabase, testDatabaseKind } from '../support/testDatabase.js';

/**
 * `Database.transaction` runs a transaction PostgreSQL undid as a deadlock (40P01) or a
 * serialization failure (40001) again, whole, up to CONFLICT_ATTEMPTS runs (db/conflictRetry.ts):
 * the lost transaction wrote nothing, and the caller — a request, the fee job — gets the
 * answer of the run that succeeded instead of a 500.
 */
let db: Database;
let close: () => Promise<void>;

before(async () => {
  ({ db, close } = await openTestDatabase());
  await db.query(`CREATE TABLE retry_rows (id int PRIMARY KEY, n int NOT NULL)`);
  await db.query(`INSERT INTO retry_rows VALUES (1, 0), (2, 0)`);
  await db.query(`CREATE SEQUENCE retry_runs`);
  await db.query(`CREATE FUNCTION loanql_raise_conflict() RETURNS void LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'deadlock detected' USING ERRCODE = '40P01'; END $$`);
});

after(async () => {
  await close?.();
});

/** A promise and the function that resolves it. */
function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

describe(`transactions undone as conflicts run again (${testDatabaseKind})`, () => {
  it('two transactions locking two rows in opposite orders deadlock; both commit, the undone one run again', { skip: testDatabaseKind === 'pglite' && 'PGlite runs one transaction at a time' }, async () => {
    const runs = [0, 0];
    const locked = [signal(), signal()];
    const write = (me: 0 | 1) =>
      db.transaction(async (tx) => {
        runs[me]! += 1;
        const [first, second] = me === 0 ? [1, 2] : [2, 1];
        await tx.query(`UPDATE retry_rows SET n = n + 1 WHERE id = $1`, [first]);
        // The first run of each waits until the other holds its first row: then each waits for the other's.
        if (runs[me] === 1) {
          locked[me]!.resolve();
          await locked[1 - me]!.promise;
        }
        await tx.query(`UPDATE retry_rows SET n = n + 1 WHERE id = $1`, [second]);
        return me;
      });
    assert.deepEqual(await Promise.all([write(0), write(1)]), [0, 1]);
    assert.deepEqual([...runs].sort(), [1, 2], 'PostgreSQL undid one of them, which ran again');
    const { rows } = await db.query<{ id: number; n: number }>(`SELECT id, n FROM retry_rows ORDER BY id`);
    assert.deepEqual(rows, [{ id: 1, n: 2 }, { id: 2, n: 2 }], 'each wrote each row once');
  });

  for (const [state, name] of [['40001', 'serialization failure'], ['40P01', 'deadlock']] as const) {
    it(`a transaction undone as a ${name} (${state}) on every run runs ${CONFLICT_ATTEMPTS} times, then fails with it, nothing written`, async () => {
      const before = await db.query<{ n: number }>(`SELECT n FROM retry_rows WHERE id = 1`);
      const start = Number((await db.query<{ v: string }>(`SELECT nextval('retry_runs')::text AS v`)).rows[0]!.v);
      await assert.rejects(
        db.transaction(async (tx) => {
          await tx.query(`UPDATE retry_rows SET n = n + 100 WHERE id = 1`);
          // A sequence is not undone with its transaction: it counts the runs.
          await tx.query(`SELECT nextval('retry_runs')`);
          await tx.query(`DO $$ BEGIN RAISE EXCEPTION 'undone' USING ERRCODE = '${state}'; END $$`);
        }),
        (error: { code?: string }) => error.code === state,
      );
      const end = Number((await db.query<{ v: string }>(`SELECT nextval('retry_runs')::text AS v`)).rows[0]!.v);
      assert.equal(end - start - 1, CONFLICT_ATTEMPTS);
      assert.deepEqual((await db.query<{ n: number }>(`SELECT n FROM retry_rows WHERE id = 1`)).rows, before.rows);
    });
  }

  it(`a statement in autocommit undone as a deadlock on every run runs ${CONFLICT_ATTEMPTS} times, then fails with it`, async () => {
    const start = Number((await db.query<{ v: string }>(`SELECT nextval('retry_runs')::text AS v`)).rows[0]!.v);
    await assert.rejects(
      db.query(`SELECT nextval('retry_runs'), loanql_raise_conflict()`),
      (error: { code?: string }) => error.code === '40P01',
    );
    const end = Number((await db.query<{ v: string }>(`SELECT nextval('retry_runs')::text AS v`)).rows[0]!.v);
    assert.equal(end - start - 1, CONFLICT_ATTEMPTS);
  });

  it("a statement of a transaction view (a caller's open transaction) is not run again: its owner runs the whole transaction again", async () => {
    const start = Number((await db.query<{ v: string }>(`SELECT nextval('retry_runs')::text AS v`)).rows[0]!.v);
    let runs = 0;
    await assert.rejects(
      db.transaction(async (tx) => {
        runs += 1;
        await databaseInTransaction(db, tx).query(`SELECT nextval('retry_runs'), loanql_raise_conflict()`);
      }),
      (error: { code?: string }) => error.code === '40P01',
    );
    const end = Number((await db.query<{ v: string }>(`SELECT nextval('retry_runs')::text AS v`)).rows[0]!.v);
    assert.equal(runs, CONFLICT_ATTEMPTS);
    assert.equal(end - start - 1, CONFLICT_ATTEMPTS, 'the statement ran once in each run of the transaction');
  });

  it('a transaction failing for any other reason runs once', async () => {
    const start = Number((await db.query<{ v: string }>(`SELECT nextval('retry_runs')::text AS v`)).rows[0]!.v);
    await assert.rejects(
      db.transaction(async (tx) => {
        await tx.query(`SELECT nextval('retry_runs')`);
        await tx.query(`INSERT INTO retry_rows VALUES (1, 0)`);
      }),
      (error: { code?: string }) => error.code === '23505',
    );
    const end = Number((await db.query<{ v: string }>(`SELECT nextval('retry_runs')::text AS v`)).rows[0]!.v);
    assert.equal(end - start - 1, 1);
  });
});
