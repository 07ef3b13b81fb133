import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DatabaseNewerThanBuildError, migrate, MigrationFailedError } from '../../db/index.js';
import { openEmptyTestDatabase, openTestDatabase, type TestDatabase } from '../support/testDatabase.js';

/**
 * What an operator upgrading (or rolling back) meets at start (README "Upgrading"): a database a
 * newer loanql migrated is refused, naming the migrations this build does not know, and nothing is
 * changed; a migration that fails names itself, and the database is left as it was (every pending
 * migration runs in one transaction); two processes migrating at once apply each migration once.
 */
describe('migrations: a newer database refused, a failure rolled back and named, one migrator at a time', () => {
  describe('on a database a newer version migrated', () => {
    let database: TestDatabase;
    before(async () => {
      database = await openTestDatabase();
      // What a newer build leaves: a migration this build has never heard of.
      await database.db.query("INSERT INTO loanql_migrations (name) VALUES ('9998_from_a_newer_version'), ('9999_also_newer')");
      await database.db.query("INSERT INTO accounts (slug, name) VALUES ('kept', 'Kept')");
    });
    after(async () => {
      await database?.close();
    });

    it('refuses to start, naming the unknown migrations and its own last one, and changes nothing', async () => {
      const before = await database.db.query<{ name: string }>('SELECT name FROM loanql_migrations ORDER BY name');
      const lastOwn = before.rows.map((row) => row.name).filter((name) => !name.startsWith('999')).at(-1);
      await assert.rejects(migrate(database.db), (error: unknown) => {
        assert.ok(error instanceof DatabaseNewerThanBuildError, String(error));
        assert.match(error.message, /migrated by a newer version of loanql/);
        assert.match(error.message, /9998_from_a_newer_version, 9999_also_newer/);
        // Its own last migration, named as the database records it (the newest the database has of this build's).
        const own = /this version \(up to (\d{4}_\w+)\) does not know/.exec(error.message)?.[1];
        assert.equal(own, lastOwn);
        assert.match(error.message, /nothing was changed/);
        assert.deepEqual(error.unknown, ['9998_from_a_newer_version', '9999_also_newer']);
        return true;
      });
      const after = await database.db.query<{ name: string }>('SELECT name FROM loanql_migrations ORDER BY name');
      assert.deepEqual(after.rows, before.rows);
      const kept = await database.db.query<{ name: string }>("SELECT name FROM accounts WHERE slug = 'kept'");
      assert.deepEqual(kept.rows, [{ name: 'Kept' }]);
    });
  });

  describe('a migration that fails half-way', () => {
    let database: TestDatabase;
    before(async () => {
      database = await openEmptyTestDatabase();
      // A lender's own table whose name migration 0028 creates: 0001 to 0027 apply, then 0028 fails.
      await database.db.query('CREATE TABLE rate_limit_buckets (note text)');
      await database.db.query("INSERT INTO rate_limit_buckets VALUES ('the lender''s row')");
    });
    after(async () => {
      await database?.close();
    });

    it('is named, with the database left exactly as it was: none of the migrations before it kept', async () => {
      let last: string | undefined;
      await assert.rejects(migrate(database.db), (error: unknown) => {
        assert.ok(error instanceof MigrationFailedError, String(error));
        assert.equal(error.migration, '0028_rate_limit_buckets');
        assert.match(error.message, /^migration 0028_rate_limit_buckets failed: relation "rate_limit_buckets" already exists; nothing was applied, the database is as it was before/);
        last = /pending migrations, 0001_schema to (\d{4}_\w+), run in one transaction/.exec(error.message)?.[1];
        assert.ok(last, error.message);
        return true;
      });
      const { rows } = await database.db.query<{ name: string }>(
        "SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind IN ('r', 'u', 'p') ORDER BY 1",
      );
      assert.deepEqual(rows, [{ name: 'rate_limit_buckets' }], 'no table of 0001–0027, not even loanql_migrations, is left');
      const lenders = await database.db.query('SELECT note FROM rate_limit_buckets');
      assert.deepEqual(lenders.rows, [{ note: "the lender's row" }]);
      // Once the clash is gone, the next start applies everything.
      await database.db.query('ALTER TABLE rate_limit_buckets RENAME TO lender_notes');
      const applied = await migrate(database.db);
      assert.equal(applied[0], '0001_schema');
      assert.equal(applied[applied.length - 1], last);
    });
  });

  describe('two processes starting at once', () => {
    let database: TestDatabase;
    before(async () => {
      database = await openEmptyTestDatabase();
    });
    after(async () => {
      await database?.close();
    });

    it('apply every migration once: the second waits for the first, then finds nothing to do', async () => {
      const [first, second] = await Promise.all([migrate(database.db), migrate(database.db)]);
      const ran = [first, second].sort((a, b) => b.length - a.length);
      assert.equal(ran[0]![0], '0001_schema');
      assert.deepEqual(ran[1], []);
      const { rows } = await database.db.query<{ name: string }>('SELECT name FROM loanql_migrations ORDER BY name');
      assert.deepEqual(rows.map((row) => row.name), ran[0]);
    });
  });
});
