import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeGrownTables, keepStatisticsFresh, type Database } from '../../db/index.js';
import { openTestDatabase, testDatabaseKind, type TestDatabase } from '../support/testDatabase.js';

/**
 * The embedded database's statistics upkeep (db/statisticsUpkeep.ts): a table of `public` that
 * has doubled since its last ANALYZE (plus 8 pages) is analyzed, one that grew less is left as
 * it was; PostgreSQL, which has autovacuum, gets no upkeep at all.
 */
describe(`statistics of grown tables (${testDatabaseKind})`, () => {
  let database: TestDatabase;
  let db: Database;
  const statistics = async (table: string): Promise<{ reltuples: number; relpages: number }> =>
    (await db.query<{ reltuples: number; relpages: number }>(`SELECT reltuples::float8 AS reltuples, relpages FROM pg_class WHERE oid = $1::regclass`, [table])).rows[0]!;

  before(async () => {
    database = await openTestDatabase();
    db = database.db;
    // Two tables of the test's own, analyzed while small: one then grows far, the other a little.
    // (Without autovacuum on PostgreSQL, whose own ANALYZE would otherwise race this test's.)
    await db.query(`CREATE TABLE upkeep_grown (id integer PRIMARY KEY, note text NOT NULL) WITH (autovacuum_enabled = off)`);
    await db.query(`CREATE TABLE upkeep_steady (id integer PRIMARY KEY, note text NOT NULL) WITH (autovacuum_enabled = off)`);
    await db.query(`INSERT INTO upkeep_grown SELECT g, repeat('x', 40) FROM generate_series(1, 50) g`);
    await db.query(`INSERT INTO upkeep_steady SELECT g, repeat('x', 40) FROM generate_series(1, 50) g`);
    await db.query(`ANALYZE upkeep_grown, upkeep_steady`);
  });
  after(() => database?.close());

  it('analyzes a table that has doubled since its last ANALYZE, and leaves one that grew less', async () => {
    assert.deepEqual(await statistics('upkeep_grown'), { reltuples: 50, relpages: 1 });
    await db.query(`INSERT INTO upkeep_grown SELECT g, repeat('x', 40) FROM generate_series(51, 5000) g`);
    // A page more: under twice its page plus 8.
    await db.query(`INSERT INTO upkeep_steady SELECT g, repeat('x', 40) FROM generate_series(51, 150) g`);
    await analyzeGrownTables(db);
    const grown = await statistics('upkeep_grown');
    assert.equal(grown.reltuples, 5000, 'the grown table was analyzed: its row estimate is its rows');
    assert.ok(grown.relpages > 10, `its pages: ${grown.relpages}`);
    assert.deepEqual(await statistics('upkeep_steady'), { reltuples: 50, relpages: 1 }, 'the table that grew a page keeps its last statistics');
  });

  it('analyzes nothing again until a table has doubled once more', async () => {
    const before = await statistics('upkeep_grown');
    await db.query(`INSERT INTO upkeep_grown SELECT g, repeat('x', 40) FROM generate_series(5001, 6000) g`);
    await analyzeGrownTables(db);
    assert.deepEqual(await statistics('upkeep_grown'), before, 'a fifth more rows is not a doubling');
  });

  it('runs on the embedded database only: PostgreSQL has autovacuum', () => {
    const stop = keepStatisticsFresh(db, { intervalMs: 3_600_000, onError: (error) => assert.fail(String(error)) });
    assert.equal(stop === null, db.kind !== 'pglite', `kind ${db.kind}`);
    stop?.();
  });
});
