import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openSeededTestDatabase } from '../support/seededService.js';
import type { TestDatabase } from '../support/testDatabase.js';

/**
 * Migration 0044 (issue 36): `loans` keeps half of each page free, so the daily fee job's forward
 * UPDATE (and a payment's replay, which writes the loan's balances) are HOT updates — the new row
 * version on the row's own page, no new entry in any index of `loans`. Since that UPDATE changes
 * no indexed column, a row that stays on its page was updated HOT, and one that moved was not:
 * each index took an entry for it. The control puts the table back at fillfactor 100 and shows
 * the rows move, so the setting is what keeps them.
 */
describe('loans keeps room for its daily writes (migration 0044)', () => {
  let database: TestDatabase;
  let accountId: string;
  /** `loans`' storage options as the migrations left them. */
  let migratedOptions: string[] | null;

  before(async () => {
    const opened = await openSeededTestDatabase([{ seed: 36, scale: 0.01 }]);
    database = opened.database;
    accountId = opened.seeded[0].account.id;
    const { rows } = await database.db.query<{ options: string[] | null }>("SELECT reloptions AS options FROM pg_class WHERE oid = 'loans'::regclass");
    migratedOptions = rows[0]!.options;
  });

  after(async () => {
    await database?.close();
  });

  /**
   * `VACUUM <what>` once no other session of this database holds a snapshot. On PostgreSQL an
   * autovacuum ANALYZE running here (of any table, the catalogues' too) holds one, and VACUUM then
   * keeps the row versions the day before left — the room the next day's updates need — so the
   * rows would move for a reason that is not the fillfactor (tests/db/readShapeIndexes met the
   * same). A snapshot taken after the check is newer than those versions. PGlite has one session.
   */
  const vacuumAlone = async (what: string): Promise<void> => {
    if (database.db.kind !== 'pglite') {
      for (let attempt = 0; ; attempt += 1) {
        const { rows } = await database.db.query<{ n: string }>(
          'SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_xmin IS NOT NULL',
        );
        if (Number(rows[0]!.n) === 0) break;
        assert.ok(attempt < 600, 'another session of the test database kept a snapshot for a minute');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    await database.db.query(`VACUUM ${what}`);
  };

  /** The page each of the account's loans is on, and its `arrears_since` (the one indexed column its daily writes can change). */
  const pages = async (): Promise<Map<string, { page: number; arrears_since: string | null }>> => {
    const { rows } = await database.db.query<{ id: string; page: number; arrears_since: string | null }>(
      'SELECT id, (ctid::text::point)[0]::int AS page, arrears_since::text FROM loans WHERE account_id = $1',
      [accountId],
    );
    return new Map(rows.map(({ id, ...place }) => [id, place]));
  };

  /**
   * Runs the daily job's batches (of 1,000 loans, app/feeJob.ts's) for the day after the stored
   * ledgers' day, as `loanql fees assess` does — here all of the account's loans in one batch, one
   * transaction, which is where room on a page matters most — after a VACUUM (autovacuum's part
   * on a live server). Of the loans it wrote whose indexed columns kept their values: how many
   * stayed on their page and how many moved.
   */
  const nextDay = async (): Promise<{ forwarded: number; stayed: number; moved: number }> => {
    await vacuumAlone('loans');
    const before = await pages();
    const { rows: days } = await database.db.query<{ day: string }>(
      "SELECT (max(ledger_as_of) + 1)::text AS day FROM loans WHERE account_id = $1 AND status IN ('servicing', 'overpaid')",
      [accountId],
    );
    const day = days[0]!.day;
    let forwarded = 0;
    for (let after: string | null = null; ; ) {
      const { rows }: { rows: { loans_taken: number; loans_forwarded: number; last_id: string | null }[] } = await database.db.query(
        'SELECT loans_taken, loans_forwarded, last_id FROM loanql_assess_fees_batch($1, $2::date, $3::uuid, 1000)',
        [accountId, day, after],
      );
      forwarded += Number(rows[0]!.loans_forwarded);
      if (Number(rows[0]!.loans_taken) < 1000 || rows[0]!.last_id === null) break;
      after = rows[0]!.last_id;
    }
    const after = await pages();
    const { rows: brought } = await database.db.query<{ id: string }>('SELECT id FROM loans WHERE account_id = $1 AND ledger_as_of = $2::date', [accountId, day]);
    let stayed = 0;
    let moved = 0;
    for (const { id } of brought) {
      const [was, is] = [before.get(id)!, after.get(id)!];
      if (was.arrears_since !== is.arrears_since) continue;
      if (was.page === is.page) stayed += 1;
      else moved += 1;
    }
    return { forwarded, stayed, moved };
  };

  it('is set to fillfactor 50 by the migrations', () => {
    assert.deepEqual(migratedOptions, ['fillfactor=50']);
  });

  it('keeps every loan the daily job brings forward on its page, day after day (HOT updates)', async (t) => {
    for (let days = 0; days < 3; days += 1) {
      const { forwarded, stayed, moved } = await nextDay();
      t.diagnostic(`day ${days + 1}: ${forwarded} brought forward without a replay; of the loans written, ${stayed} stayed on their page, ${moved} moved`);
      assert.ok(forwarded >= 40, `day ${days + 1}: ${forwarded} loans brought forward`);
      assert.equal(moved, 0, `day ${days + 1}: ${moved} of ${stayed + moved} loans left their page`);
    }
  });

  it('moves them at fillfactor 100, the setting before 0044 (the control)', async (t) => {
    await database.db.query('ALTER TABLE loans SET (fillfactor = 100)');
    await vacuumAlone('FULL loans');
    const { forwarded, stayed, moved } = await nextDay();
    t.diagnostic(`fillfactor 100: ${forwarded} brought forward; ${stayed} stayed on their page, ${moved} moved`);
    assert.ok(forwarded >= 40, `${forwarded} loans brought forward`);
    // Alone, all 69 move. With three other copies of this file on the same PostgreSQL at once, 23–30
    // of them moved in 7 of 12 runs and the rest stayed (why is not found: the VACUUM FULL ran with
    // no other snapshot in the database). At fillfactor 50 none ever moved, alone or not.
    assert.ok(moved >= 10, `at fillfactor 100, ${moved} loans left their page and ${stayed} stayed`);
  });
});
