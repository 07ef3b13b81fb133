import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { openBuiltTestDatabase, openEmptyTestDatabase, openTestDatabase, testDatabaseKind } from '../support/testDatabase.js';

/**
 * The tests' embedded databases come from dumps kept in the process's memory, each open writing
 * the dump's files into a PGlite memory file system of its own (`DumpFileSystem`). A database must
 * never see another's writes: an early version handed PostgreSQL views of the kept dump instead of
 * copies, and a catalogue page one test wrote (an index grown by `CREATE TRIGGER`) turned up in the
 * next database of the process ("could not read blocks 13..13 in file base/5/2620").
 */
describe('the tests\' embedded databases, opened from one dump in turn', { skip: testDatabaseKind === 'postgres' && 'PGlite only: TEST_DATABASE_URL gives each test a database on the server' }, () => {
  it('each starts as the dump left it, whatever the one before wrote into its tables and catalogues', async () => {
    const fingerprint = async (db: Awaited<ReturnType<typeof openTestDatabase>>['db']) =>
      (await db.query<{ relations: number; triggers: number; pages: string }>(
        `SELECT (SELECT count(*)::int FROM pg_class) AS relations, (SELECT count(*)::int FROM pg_trigger) AS triggers,
                (SELECT sum(relpages)::text FROM pg_class) AS pages`,
      )).rows[0];
    const first = await openTestDatabase();
    const before = await fingerprint(first.db);
    await first.db.script(`
      CREATE TABLE scratch (id int PRIMARY KEY, note text);
      INSERT INTO scratch SELECT g, repeat('x', 200) FROM generate_series(1, 5000) g;
      CREATE FUNCTION scratch_noop() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
      ${Array.from({ length: 40 }, (_, i) => `CREATE TRIGGER scratch_t${i} BEFORE INSERT ON scratch FOR EACH ROW EXECUTE FUNCTION scratch_noop();`).join('\n')}
      ANALYZE; CHECKPOINT;`);
    await first.close();
    for (let open = 0; open < 2; open++) {
      const next = await openTestDatabase();
      try {
        assert.deepEqual(await fingerprint(next.db), before);
        assert.equal((await next.db.query(`SELECT to_regclass('scratch') AS found`)).rows[0]!.found, null);
        // Reads every catalogue index a trigger write grows, and writes one again.
        await next.db.script(`CREATE TABLE scratch (id int); CREATE FUNCTION scratch_noop() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
          CREATE TRIGGER scratch_t BEFORE INSERT ON scratch FOR EACH ROW EXECUTE FUNCTION scratch_noop(); CHECKPOINT;`);
      } finally {
        await next.close();
      }
    }
  });

  it('an empty database too: its dump is initdb\'s database, untouched by the one before', async () => {
    const first = await openEmptyTestDatabase();
    await first.db.script(`CREATE TABLE scratch (id int); CHECKPOINT;`);
    await first.close();
    const next = await openEmptyTestDatabase();
    try {
      assert.equal((await next.db.query(`SELECT to_regclass('scratch') AS found`)).rows[0]!.found, null);
    } finally {
      await next.close();
    }
  });

  it('a built database asked for twice at once is built once; the other request waits and loads its dump', async () => {
    // Two requests of one process take the same lock as two processes would (a folder beside the
    // dump, with the pid of its holder); the second waits while the holder is alive.
    const key = `build once ${randomUUID()}`;
    let builds = 0;
    const open = () =>
      openBuiltTestDatabase(key, ['tests/db/testDatabaseDumps.test.ts'], async (db) => {
        builds += 1;
        await new Promise((resolve) => setTimeout(resolve, 300)); // the other request asks meanwhile
        await db.query('CREATE TABLE built (n int)');
        await db.query('INSERT INTO built VALUES (42)');
        return { n: 42 };
      }, { gzip: false });
    const opened = await Promise.all([open(), open()]);
    try {
      assert.equal(builds, 1);
      for (const { database, built } of opened) {
        assert.deepEqual(built, { n: 42 });
        assert.deepEqual((await database.db.query('SELECT n FROM built')).rows, [{ n: 42 }]);
      }
    } finally {
      for (const { database } of opened) await database.close();
    }
  });

  it('a build on a base starts from the base\'s database and result, built once for both', async () => {
    const nonce = randomUUID();
    let baseBuilds = 0;
    const base = () =>
      openBuiltTestDatabase(`base ${nonce}`, ['tests/db/testDatabaseDumps.test.ts'], async (db) => {
        baseBuilds += 1;
        await db.query('CREATE TABLE from_base (n int)');
        await db.query('INSERT INTO from_base VALUES (1)');
        return ['base'];
      }, { gzip: false });
    const opened = await openBuiltTestDatabase<string[], string[]>(`on a base ${nonce}`, ['tests/db/testDatabaseDumps.test.ts'], async (db, earlier = []) => {
      await db.query('CREATE TABLE from_top (n int)');
      return [...earlier, 'top'];
    }, { gzip: false, base });
    try {
      assert.deepEqual(opened.built, ['base', 'top']);
      assert.deepEqual((await opened.database.db.query('SELECT n FROM from_base')).rows, [{ n: 1 }]);
      assert.equal((await opened.database.db.query(`SELECT to_regclass('from_top') IS NOT NULL AS found`)).rows[0]!.found, true);
    } finally {
      await opened.database.close();
    }
    const again = await base();
    try {
      assert.equal(baseBuilds, 1, 'the base was loaded from its dump the second time');
      assert.equal((await again.database.db.query(`SELECT to_regclass('from_top') AS found`)).rows[0]!.found, null);
    } finally {
      await again.database.close();
    }
  });
});
