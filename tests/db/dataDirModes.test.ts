import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, lstatSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openServiceDatabase } from '../../db/index.js';

/**
 * Issue 26, finding 7: the embedded database's files were world-readable and world-writable (969
 * of 1,156 files mode 0666, `pg_authid` and an early WAL segment holding tenant data among them).
 * Now `DATA_DIR` is 0700 and nothing below it has a group or other bit — on a fresh directory,
 * after writes, and on a directory an earlier version left open, even under umask 000.
 */
const root = mkdtempSync(join(tmpdir(), 'loanql-modes-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** Every path below `dir` whose mode has a group or other bit, with its mode. */
function openToOthers(dir: string): string[] {
  const found: string[] = [];
  const walk = (current: string): void => {
    for (const name of readdirSync(current)) {
      const path = join(current, name);
      const stat = lstatSync(path);
      if (stat.isSymbolicLink()) continue;
      if (stat.mode & 0o077) found.push(`${path.slice(dir.length)} ${(stat.mode & 0o777).toString(8)}`);
      if (stat.isDirectory()) walk(path);
    }
  };
  walk(dir);
  return found;
}

function fileCount(dir: string): number {
  let count = 0;
  for (const entry of readdirSync(dir, { recursive: true })) if (lstatSync(join(dir, String(entry))).isFile()) count += 1;
  return count;
}

async function withUmask<T>(mask: number, work: () => Promise<T>): Promise<T> {
  const previous = process.umask(mask);
  try {
    return await work();
  } finally {
    process.umask(previous);
  }
}

describe('the embedded database keeps its files to its own user (issue 26, finding 7)', { timeout: 120_000 }, () => {
  it('a fresh DATA_DIR is 0700 and none of its files has a group or other bit, after writes too (umask 000)', async () => {
    const dataDir = join(root, 'fresh', 'data');
    await withUmask(0, async () => {
      const opened = await openServiceDatabase({ dataDir });
      try {
        assert.equal(lstatSync(dataDir).mode & 0o777, 0o700);
        assert.deepEqual(openToOthers(dataDir), []);
        await opened.database.script(`CREATE TABLE secrets (id int, note text); INSERT INTO secrets SELECT i, repeat('tenant data ', 50) FROM generate_series(1, 20000) i; CREATE INDEX ON secrets (note); CHECKPOINT`);
        await opened.database.query('SELECT pg_switch_wal()');
        assert.deepEqual(openToOthers(dataDir), []);
      } finally {
        await opened.close();
      }
    });
    assert.ok(fileCount(dataDir) > 900, `only ${fileCount(dataDir)} files: not a cluster?`);
    assert.equal(lstatSync(dataDir).mode & 0o777, 0o700);
    assert.deepEqual(openToOthers(dataDir), [], 'after close');
  });

  it('a directory an earlier version left open (0777, files 0666) is closed on the next start', async () => {
    const dataDir = join(root, 'fresh', 'data');
    const walk = (dir: string): void => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        const stat = lstatSync(path);
        chmodSync(path, stat.isDirectory() ? 0o777 : 0o666);
        if (stat.isDirectory()) walk(path);
      }
    };
    walk(dataDir);
    chmodSync(dataDir, 0o777);
    writeFileSync(join(dataDir, 'stray-note.txt'), 'left by hand', { mode: 0o666 });
    chmodSync(join(dataDir, 'stray-note.txt'), 0o666);
    assert.ok(openToOthers(dataDir).length > 900);
    const opened = await openServiceDatabase({ dataDir });
    try {
      assert.equal(lstatSync(dataDir).mode & 0o777, 0o700);
      assert.deepEqual(openToOthers(dataDir), []);
      assert.deepEqual((await opened.database.query<{ n: number }>('SELECT count(*)::int AS n FROM secrets')).rows, [{ n: 20000 }]);
    } finally {
      await opened.close();
    }
  });
});
