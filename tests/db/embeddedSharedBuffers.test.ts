import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configFromEnv } from '../../app/config.js';
import { databaseSettingsFromEnv, openCommandDatabase, openPgliteDatabase, openServiceDatabase, sharedBuffersOf } from '../../db/index.js';
import { runCli } from '../support/processes.js';
import { copyMigratedDataDir, openTestDatabase, TEST_SHARED_BUFFERS, testDatabaseKind } from '../support/testDatabase.js';

/**
 * `EMBEDDED_SHARED_BUFFERS` (README "Configuration"): the embedded database's `shared_buffers`.
 * PGlite zeroes the whole pool at every start, so the tests run with a smaller one
 * (`TEST_SHARED_BUFFERS`, tests/README.md "How long"); a service or CLI command can too.
 */
const root = mkdtempSync(join(tmpdir(), 'loanql-shared-buffers-'));
after(() => rmSync(root, { recursive: true, force: true }));

describe('EMBEDDED_SHARED_BUFFERS', () => {
  it('takes a whole number with a unit as PostgreSQL writes it, from 1MB to 1GB; unset leaves PostgreSQL its default', () => {
    assert.equal(sharedBuffersOf(''), undefined);
    assert.equal(databaseSettingsFromEnv({}).embeddedSharedBuffers, undefined);
    for (const size of ['32MB', '1MB', '1GB', '65536kB', '1024kB']) assert.equal(sharedBuffersOf(size), size);
    assert.equal(databaseSettingsFromEnv({ EMBEDDED_SHARED_BUFFERS: ' 64MB ' }).embeddedSharedBuffers, '64MB');
  });

  it('refuses anything else naming the variable, before PGlite starts', () => {
    for (const bad of ['32', '32mb', '32 MB', '0MB', '512kB', '2GB', '1.5GB', '-8MB', '32MB -c fsync=on', '32MB\0', 'x'.repeat(200)]) {
      assert.throws(() => sharedBuffersOf(bad), /^Error: EMBEDDED_SHARED_BUFFERS must be a size from 1MB to 1GB/, bad);
    }
    assert.throws(() => configFromEnv({ EMBEDDED_SHARED_BUFFERS: 'lots' }), /EMBEDDED_SHARED_BUFFERS must be a size from 1MB to 1GB written as PostgreSQL writes one \(e\.g\. 32MB, 65536kB\), not "lots"/);
  });

  it('a WAL segment size that initdb would refuse is refused before PGlite starts', async () => {
    for (const bad of [0, 3, 1.5, 2048, -16, Number.NaN]) {
      await assert.rejects(openPgliteDatabase(undefined, undefined, { walSegmentSizeMB: bad }), (error: Error) => error instanceof RangeError && /walSegmentSizeMB must be a power of 2 from 1 to 1024/.test(error.message), String(bad));
    }
  });

  it('a CLI command with a bad size says so and touches no data directory', async () => {
    const dataDir = join(root, 'never');
    const result = await runCli(['migrate'], { DATA_DIR: dataDir, EMBEDDED_SHARED_BUFFERS: '32 megabytes' }, root);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /^loanql: EMBEDDED_SHARED_BUFFERS must be a size from 1MB to 1GB .*not "32 megabytes"/m);
    assert.equal(existsSync(dataDir), false);
  });

  it("reaches the service's embedded PostgreSQL", async () => {
    const dataDir = join(root, 'data');
    await copyMigratedDataDir(dataDir);
    const opened = await openServiceDatabase(databaseSettingsFromEnv({ DATA_DIR: dataDir, EMBEDDED_SHARED_BUFFERS: '16MB' }));
    try {
      const { rows } = await opened.database.query<{ shared_buffers: string }>('SHOW shared_buffers');
      assert.equal(rows[0]?.shared_buffers, '16MB');
    } finally {
      await opened.close();
    }
  });

  it('a CLI command opening the data directory itself runs with 16MB when unset, and with the setting when given', async () => {
    const dataDir = join(root, 'command');
    await copyMigratedDataDir(dataDir);
    for (const [env, expected] of [[{}, '16MB'], [{ EMBEDDED_SHARED_BUFFERS: '24MB' }, '24MB']] as const) {
      const opened = await openCommandDatabase(databaseSettingsFromEnv({ DATA_DIR: dataDir, ...env }));
      try {
        assert.match(opened.description, /^embedded PGlite in /);
        const { rows } = await opened.database.query<{ shared_buffers: string }>('SHOW shared_buffers');
        assert.equal(rows[0]?.shared_buffers, expected);
      } finally {
        await opened.close();
      }
    }
  });

  it(`the tests' own embedded databases run with ${TEST_SHARED_BUFFERS} and 1 MB WAL segments`, { skip: testDatabaseKind === 'postgres' ? 'PostgreSQL server: its own settings' : false }, async () => {
    const database = await openTestDatabase();
    try {
      const { rows } = await database.db.query<{ shared_buffers: string; wal_segment_size: string }>("SELECT current_setting('shared_buffers') AS shared_buffers, current_setting('wal_segment_size') AS wal_segment_size");
      assert.deepEqual(rows[0], { shared_buffers: TEST_SHARED_BUFFERS, wal_segment_size: '1MB' });
    } finally {
      await database.close();
    }
  });
});
