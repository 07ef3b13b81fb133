import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { createApiKey } from '../../app/apiKeys.js';
import { verifyLedgers } from '../../app/ledgerVerify.js';
import { restoreBackupFile } from '../../db/index.js';
import { migrateInTransaction } from '../../db/migrate.js';
import { EMBEDDED_POSTGRES_MAJOR } from '../../db/pgliteDatabase.js';
import { graphData } from '../support/graphData.js';
import { seedAccount } from '../support/seededService.js';
import { copyBuiltDataDir, copyMigratedDataDir, createServerDatabase, createServerDatabaseOwnedByPlainRole, openEmptyTestDatabase } from '../support/testDatabase.js';
import { assertBuilt, freePort, runCli, startService, type ProcessResult, type RunningService } from '../support/processes.js';
import { withCommandDatabase } from '../support/commandDatabase.js';

/**
 * `loanql backup --out FILE` and `loanql restore --in FILE` as processes (README "Backups"): a
 * backup taken through the running service's share while payments are posted is one snapshot (its
 * restore verifies, and holds some of the payments, not all); a backup of the stopped service's
 * DATA_DIR restored into a new DATA_DIR (and a new PostgreSQL database with TEST_DATABASE_URL)
 * answers the same GraphQL and REST reads; a database with accounts, a backup from a newer build,
 * a file cut short or damaged are refused with exit 2 and nothing written.
 */
const READS = `{ loans(order_by: {id: asc}) { id name status amount principal_outstanding interest_due fees_due credit_balance ledger_as_of
  payments(order_by: {id: asc}) { id date amount } schedules(order_by: {id: asc}) { id payment } allocations_aggregate { aggregate { count } } } }`;

describe('loanql backup / restore', { timeout: 300_000 }, () => {
  let workDir: string;
  let source: string;
  let built: { key: string; loans: string[]; loansTotal: number };
  const liveReads: { graph?: unknown; rest?: unknown } = {};
  const posted = { before: 0, duringOrAfter: 0 };
  let backupWhilePosting = '';
  let backupStopped = '';
  const cli = (env: Record<string, string>, ...args: string[]): Promise<ProcessResult> => runCli(args, env, workDir);

  /** What a service on a database answers: the loans with their ledger, payments and schedules (GraphQL), and the REST list. */
  async function readsOf(service: RunningService): Promise<{ graph: unknown; rest: unknown }> {
    const graph = await graphData(service.url, built.key, READS);
    const rest = await fetch(`${service.url}/api/loan?limit=100`, { headers: { authorization: `Token ${built.key}` } });
    assert.equal(rest.status, 200);
    return { graph, rest: await rest.json() };
  }

  const withDatabase = withCommandDatabase;

  before(async () => {
    assertBuilt();
    workDir = mkdtempSync(join(tmpdir(), 'loanql-backup-'));
    source = join(workDir, 'source');
    const today = new Date().toISOString().slice(0, 10);
    built = await copyBuiltDataDir(source, `loanql backup: acme at 0.005 with a key, ${today}`, ['app', 'domain', 'db', 'tests/support/seededService.ts', 'tests/cli/backup.test.ts'], async (db) => {
      const seeded = await seedAccount(db, { slug: 'acme', scale: 0.005 });
      const key = await createApiKey(db, seeded.account.id, 'backup test');
      const { rows } = await db.query<{ id: string }>(`SELECT id FROM loans WHERE account_id = $1 AND status = 'servicing' ORDER BY id LIMIT 4`, [seeded.account.id]);
      return { key: key.key, loans: rows.map((row) => row.id), loansTotal: seeded.summary.loans };
    });
    backupWhilePosting = join(workDir, 'while-posting.gz');
    backupStopped = join(workDir, 'stopped.gz');
  });

  after(() => rmSync(workDir, { recursive: true, force: true }));

  /**
   * Runs `loanql backup --out file` on `env` while payments are posted to `service` one after
   * another: 3 before it starts, as many as go through while it runs, 2 after it ended.
   */
  async function backupWhilePostingPayments(service: RunningService, env: Record<string, string>, file: string): Promise<{ backup: ProcessResult; before: number; duringOrAfter: number }> {
    const today = new Date().toISOString().slice(0, 10);
    let stop = false;
    let total = 0;
    const posting = (async () => {
      while (!stop) {
        const loan = built.loans[total % built.loans.length]!;
        await graphData(service.url, built.key, `mutation($loan: uuid!, $date: date!) { insert_payments_one(object: {loan_id: $loan, date: $date, amount: "25.00", type: "regular", method: "ach"}) { id } }`, { loan, date: today });
        total++;
      }
    })();
    const waitFor = async (count: number) => {
      while (total < count) await new Promise((resolve) => setTimeout(resolve, 10));
    };
    await waitFor(3);
    const before = total;
    const backup = await cli(env, 'backup', '--out', file);
    await waitFor(total + 2);
    stop = true;
    await posting;
    return { backup, before, duringOrAfter: total - before };
  }

  it('backs up through the running service while payments are posted: one snapshot, taken between them', async () => {
    const service = await startService({ DATA_DIR: source }, await freePort(), workDir);
    try {
      const { backup, before, duringOrAfter } = await backupWhilePostingPayments(service, { DATA_DIR: source }, backupWhilePosting);
      posted.before = before;
      posted.duringOrAfter = duringOrAfter;
      assert.equal(backup.code, 0, backup.stdout + backup.stderr);
      assert.match(backup.stdout, /^backup written to .*while-posting\.gz: \d+ tables, \d+ rows, \d+ bytes; migrations up to 0\d{3}_\w+, taken at \d{4}-\d\d-\d\dT[\d:.]+Z \(PostgreSQL 18\.\d+\)\n$/);
      assert.equal(statSync(backupWhilePosting).mode & 0o777, 0o600, 'the backup is its owner\'s alone');
      assert.ok(!existsSync(`${backupWhilePosting}.partial`));
      const reads = await readsOf(service);
      liveReads.graph = reads.graph;
      liveReads.rest = reads.rest;
      // Through the share too: `migrate` says nothing was pending; a restore into this database is refused, nothing changed.
      const migrate = await cli({ DATA_DIR: source }, 'migrate');
      assert.equal(migrate.code, 0, migrate.stderr);
      assert.match(migrate.stdout, /^database schema is up to date: no migration was pending \(the last is 0\d{3}_\w+\)\n$/);
      const refused = await cli({ DATA_DIR: source }, 'restore', '--in', backupWhilePosting);
      assert.equal(refused.code, 2, refused.stdout + refused.stderr);
      assert.equal(refused.stderr, 'loanql: the database already has 1 account (acme): a restore goes into an empty database only — a new DATA_DIR, or a new PostgreSQL database (createdb); nothing was written\n');
      assert.deepEqual(await readsOf(service), reads, 'nothing changed');
    } finally {
      assert.equal(await service.stop(), 0);
    }
  });

  it('restores the backup taken while posting into a fresh DATA_DIR: the ledger verifies, with some of the payments', async () => {
    const restored = { DATA_DIR: join(workDir, 'restored-while-posting') };
    await copyMigratedDataDir(restored.DATA_DIR);
    const restore = await cli(restored, 'restore', '--in', backupWhilePosting);
    assert.equal(restore.code, 0, restore.stdout + restore.stderr);
    assert.match(restore.stdout, /^restored \d+ rows in \d+ tables from .*while-posting\.gz \(taken at .*, migrations up to 0\d{3}_\w+\)\n$/);
    // `loanql ledger verify`'s replay, in this process, with the count (one opening of the directory, not two).
    const { verify, inBackup } = await withDatabase(restored, async (db) => ({
      verify: await verifyLedgers(db, {}),
      inBackup: Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM payments')).rows[0]!.n),
    }));
    assert.equal(verify.checked, built.loansTotal);
    assert.deepEqual(verify.differing, [], 'the restored ledger verifies: 0 differences');
    // The snapshot fell between the posts: those before the backup started are in it, the two
    // posted after it ended are not.
    const livePayments = (liveReads.graph as { loans: { payments: unknown[] }[] }).loans.reduce((sum, loan) => sum + loan.payments.length, 0);
    assert.ok(inBackup >= livePayments - posted.duringOrAfter, `${inBackup} payments restored, ${livePayments} live, ${posted.duringOrAfter} posted since the backup started`);
    assert.ok(inBackup <= livePayments - 2, `${inBackup} payments restored, ${livePayments} live: the two posted after the backup are not in it`);
  });

  it('backs up the stopped service\'s DATA_DIR and restores it into a fresh one that answers the same reads', async () => {
    assert.equal(readFileSync(join(source, 'PG_VERSION'), 'utf8').trim(), EMBEDDED_POSTGRES_MAJOR, 'EMBEDDED_POSTGRES_MAJOR is what PGlite writes');
    const backup = await cli({ DATA_DIR: source }, 'backup', '--out', backupStopped);
    assert.equal(backup.code, 0, backup.stdout + backup.stderr);
    const restored = { DATA_DIR: join(workDir, 'restored-stopped') };
    await copyMigratedDataDir(restored.DATA_DIR);
    // First a file whose shape is whole but whose loan has an amount that is not a number: the
    // whole restore is rolled back (the good one below would be refused if any account stayed).
    const lines = gunzipSync(readFileSync(backupStopped)).toString('utf8').split('\n');
    const loansAt = lines.findIndex((line) => line.startsWith('{"table":"loans"'));
    const columns = (JSON.parse(lines[loansAt]!) as { columns: string[] }).columns;
    const row = JSON.parse(lines[loansAt + 1]!) as (string | null)[];
    row[columns.indexOf('amount')] = 'a lot';
    lines[loansAt + 1] = JSON.stringify(row);
    const bad = join(workDir, 'bad-value.gz');
    writeFileSync(bad, gzipSync(lines.join('\n')));
    const refused = await cli(restored, 'restore', '--in', bad);
    assert.equal(refused.code, 2, refused.stdout + refused.stderr);
    assert.equal(refused.stderr, 'loanql: the backup\'s rows of loans cannot be loaded: invalid input syntax for type numeric: "a lot"; nothing was written\n');
    const restore = await cli(restored, 'restore', '--in', backupStopped);
    assert.equal(restore.code, 0, restore.stdout + restore.stderr);
    const service = await startService(restored, await freePort(), workDir);
    try {
      assert.deepEqual(await readsOf(service), liveReads);
    } finally {
      assert.equal(await service.stop(), 0);
    }
  });

  it('restores into a fresh PostgreSQL database, verifies, and backs it up again to the same rows (TEST_DATABASE_URL)', { skip: !process.env.TEST_DATABASE_URL }, async () => {
    const created = await createServerDatabase(process.env.TEST_DATABASE_URL!);
    try {
      const restored = { DATABASE_URL: created.url };
      const restore = await cli(restored, 'restore', '--in', backupStopped);
      assert.equal(restore.code, 0, restore.stdout + restore.stderr);
      const verify = await cli(restored, 'ledger', 'verify');
      assert.equal(verify.code, 0, verify.stdout + verify.stderr);
      const again = join(workDir, 'from-postgres.gz');
      const backup = await cli(restored, 'backup', '--out', again);
      assert.equal(backup.code, 0, backup.stdout + backup.stderr);
      assert.deepEqual(rowsByTable(again), rowsByTable(backupStopped), 'PostgreSQL gives back the rows PGlite gave');
      // On PostgreSQL the service's writes do not wait for the backup: its one snapshot is what
      // keeps a payment and its allocation lines together (READ COMMITTED would read each batch as
      // of its own moment).
      const whilePosting = join(workDir, 'postgres-while-posting.gz');
      const service = await startService(restored, await freePort(), workDir);
      let posting: Awaited<ReturnType<typeof backupWhilePostingPayments>>;
      try {
        assert.deepEqual(await readsOf(service), liveReads);
        posting = await backupWhilePostingPayments(service, restored, whilePosting);
      } finally {
        await service.stop();
      }
      assert.equal(posting.backup.code, 0, posting.backup.stdout + posting.backup.stderr);
      const second = await createServerDatabase(process.env.TEST_DATABASE_URL!);
      try {
        const restoredAgain = { DATABASE_URL: second.url };
        const restore2 = await cli(restoredAgain, 'restore', '--in', whilePosting);
        assert.equal(restore2.code, 0, restore2.stdout + restore2.stderr);
        const verify2 = await cli(restoredAgain, 'ledger', 'verify');
        assert.equal(verify2.code, 0, verify2.stdout + verify2.stderr);
        const payments = await withDatabase(restoredAgain, async (db) => Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM payments')).rows[0]!.n));
        const livePayments = await withDatabase(restored, async (db) => Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM payments')).rows[0]!.n));
        assert.ok(payments >= livePayments - posting.duringOrAfter && payments <= livePayments - 2, `${payments} restored, ${livePayments} live, ${posting.duringOrAfter} posted since the backup started`);
      } finally {
        await second.drop();
      }
    } finally {
      await created.drop();
    }
  });

  it("restores into a database owned by a role that is no superuser, which may not set session_replication_role (TEST_DATABASE_URL)", { skip: !process.env.TEST_DATABASE_URL }, async () => {
    // As on most managed PostgreSQL: the database's owner is no superuser. Before session 39 the
    // restore was refused ("permission denied to set parameter session_replication_role", exit 2).
    const owned = await createServerDatabaseOwnedByPlainRole(process.env.TEST_DATABASE_URL!);
    try {
      const restored = { DATABASE_URL: owned.url };
      const restore = await cli(restored, 'restore', '--in', backupStopped);
      assert.equal(restore.code, 0, restore.stdout + restore.stderr);
      const verify = await cli(restored, 'ledger', 'verify');
      assert.equal(verify.code, 0, verify.stdout + verify.stderr);
      // The triggers it turned off are on again and the foreign keys it dropped are back, as a migration made them.
      const schema = `SELECT (SELECT count(*) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE c.relnamespace = current_schema()::regnamespace AND NOT t.tgisinternal AND t.tgenabled <> 'O')::int AS disabled,
                             (SELECT count(*) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE c.relnamespace = current_schema()::regnamespace AND NOT t.tgisinternal)::int AS triggers,
                             (SELECT string_agg(conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(oid), E'\n' ORDER BY conrelid::regclass::text, conname) FROM pg_constraint WHERE connamespace = current_schema()::regnamespace AND contype = 'f') AS keys`;
      const after = await withDatabase(restored, async (db) => (await db.query<{ disabled: number; triggers: number; keys: string }>(schema)).rows[0]!);
      const fresh = await createServerDatabase(process.env.TEST_DATABASE_URL!);
      try {
        assert.equal((await cli({ DATABASE_URL: fresh.url }, 'migrate')).code, 0);
        const migrated = await withDatabase({ DATABASE_URL: fresh.url }, async (db) => (await db.query<{ disabled: number; triggers: number; keys: string }>(schema)).rows[0]!);
        assert.equal(after.disabled, 0);
        assert.ok(after.triggers > 0);
        assert.deepEqual(after, migrated);
      } finally {
        await fresh.drop();
      }
      // And the service on it answers what the original answered.
      const service = await startService(restored, await freePort(), workDir);
      try {
        assert.deepEqual(await readsOf(service), liveReads);
      } finally {
        await service.stop();
      }
    } finally {
      await owned.drop();
    }
  });

  it('restores a backup from an older build on its own schema, then runs the later migrations (in this process)', async () => {
    // A backup taken before the last migration: the header without it, and each table without the
    // columns that migration added (0068 adds the lender's profile to accounts), as the older build
    // would have written it — read from a database migrated up to the one before.
    const lines = gunzipSync(readFileSync(backupStopped)).toString('utf8').split('\n');
    const header = JSON.parse(lines[0]!) as { migrations: string[]; lastMigration: string };
    const newest = header.migrations.pop()!;
    header.lastMigration = header.migrations.at(-1)!;
    const olderColumns = new Map<string, Set<string>>();
    const olderSchema = await openEmptyTestDatabase();
    try {
      await olderSchema.db.transaction((tx) => migrateInTransaction(tx, header.lastMigration));
      const { rows } = await olderSchema.db.query<{ table_name: string; column_name: string }>(
        `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema()`,
      );
      for (const row of rows) olderColumns.set(row.table_name, (olderColumns.get(row.table_name) ?? new Set()).add(row.column_name));
    } finally {
      await olderSchema.close();
    }
    let kept: number[] | null = null;
    const olderLines = lines.slice(1).map((line) => {
      const parsed = line ? (JSON.parse(line) as unknown) : null;
      if (Array.isArray(parsed)) return kept ? JSON.stringify(kept.map((index) => parsed[index])) : line;
      const table = parsed as { table?: string; columns?: string[] } | null;
      if (!table?.table || !table.columns) return line;
      const columns = olderColumns.get(table.table);
      assert.ok(columns, `${table.table} exists before ${newest}`);
      kept = table.columns.flatMap((column, index) => (columns.has(column) ? [index] : []));
      return JSON.stringify({ ...table, columns: kept.map((index) => table.columns![index]) });
    });
    const older = join(workDir, 'older.gz');
    writeFileSync(older, gzipSync([JSON.stringify(header), ...olderLines].join('\n')));
    const empty = await openEmptyTestDatabase();
    try {
      const restored = await restoreBackupFile(empty.db, older);
      assert.equal(restored.header.lastMigration, header.lastMigration);
      assert.deepEqual(restored.migratedAfter, [newest], 'the migration the backup predates ran after the load');
      const { rows } = await empty.db.query<{ name: string }>('SELECT name FROM loanql_migrations ORDER BY name');
      assert.deepEqual(rows.map((row) => row.name), [...header.migrations, newest]);
      const verify = await verifyLedgers(empty.db, {});
      assert.equal(verify.checked, built.loansTotal);
      assert.deepEqual(verify.differing, []);
    } finally {
      await empty.close();
    }
  });

  it('refuses a backup from a newer build, naming its migration and this build\'s last, before making a DATA_DIR', async () => {
    const lines = gunzipSync(readFileSync(backupStopped)).toString('utf8').split('\n');
    const header = JSON.parse(lines[0]!) as { migrations: string[]; lastMigration: string };
    const last = header.lastMigration;
    header.migrations.push('0999_from_a_newer_build');
    header.lastMigration = '0999_from_a_newer_build';
    const newer = join(workDir, 'newer.gz');
    writeFileSync(newer, gzipSync([JSON.stringify(header), ...lines.slice(1)].join('\n')));
    const target = join(workDir, 'never-made');
    const result = await cli({ DATA_DIR: target }, 'restore', '--in', newer);
    assert.equal(result.code, 2, result.stdout + result.stderr);
    assert.equal(
      result.stderr,
      `loanql: the backup was taken by a newer version of loanql: it has migration 0999_from_a_newer_build, which this version (up to ${last}) does not know; restore it with that version or a later one; nothing was written\n`,
    );
    assert.ok(!existsSync(target), 'no DATA_DIR was made');
  });

  it('refuses a file cut short or damaged with a clear message, before making a DATA_DIR', async () => {
    const whole = readFileSync(backupStopped);
    const text = gunzipSync(whole).toString('utf8');
    const files = new Map<string, Buffer>([
      ['cut.gz', whole.subarray(0, Math.floor(whole.length / 2))],
      ['flipped.gz', Buffer.concat([whole.subarray(0, 2000), Buffer.from(whole.subarray(2000, 2100).map((byte) => byte ^ 0x5a)), whole.subarray(2100)])],
      ['lines-cut.gz', gzipSync(text.slice(0, text.lastIndexOf('\n', text.length - 2) + 1))],
      ['not-a-backup.gz', gzipSync('hello\n')],
    ]);
    const expected = new Map([
      ['cut.gz', /^loanql: .*cut\.gz is not a whole loanql backup \(gzip: unexpected end of file\): damaged or cut short; nothing was written\n$/],
      ['flipped.gz', /^loanql: .*flipped\.gz is not a whole loanql backup \(gzip: .+\): damaged or cut short; nothing was written\n$/],
      ['lines-cut.gz', /^loanql: the backup is cut short after line \d+ \(its last line, with the totals, is missing\); nothing was written\n$/],
      ['not-a-backup.gz', /^loanql: not a loanql backup \(its first line is not a loanql-backup header\); nothing was written\n$/],
    ]);
    for (const [name, bytes] of files) {
      writeFileSync(join(workDir, name), bytes);
      const target = join(workDir, `never-made-${name}`);
      const result = await cli({ DATA_DIR: target }, 'restore', '--in', join(workDir, name));
      assert.equal(result.code, 2, `${name}: ${result.stdout}${result.stderr}`);
      assert.match(result.stderr, expected.get(name)!, name);
      assert.ok(!existsSync(target), `${name}: no DATA_DIR was made`);
    }
  });

  it('refuses an --out that exists, and a DATA_DIR of another PostgreSQL major version naming both', async () => {
    const taken = join(workDir, 'taken.gz');
    writeFileSync(taken, 'an earlier backup');
    const exists = await cli({ DATA_DIR: source }, 'backup', '--out', taken);
    assert.equal(exists.code, 2);
    assert.match(exists.stderr, /^loanql: --out .*taken\.gz exists: a backup never overwrites a file; give another name\n$/);
    assert.equal(readFileSync(taken, 'utf8'), 'an earlier backup');
    const old = join(workDir, 'pg16');
    mkdirSync(old);
    writeFileSync(join(old, 'PG_VERSION'), '16\n');
    const result = await cli({ DATA_DIR: old }, 'ledger', 'verify');
    assert.equal(result.code, 1);
    assert.match(result.stderr, new RegExp(`holds a PostgreSQL 16 database, and this loanql's embedded PostgreSQL is ${EMBEDDED_POSTGRES_MAJOR}: it cannot open it\\. Take a backup with the loanql version that made it`));
  });
});

/** A backup's rows, each table's sorted (the order of a table's rows is its physical order). */
function rowsByTable(file: string): Map<string, string[]> {
  const tables = new Map<string, string[]>();
  let rows: string[] = [];
  for (const line of gunzipSync(readFileSync(file)).toString('utf8').split('\n')) {
    if (line.startsWith('{"table":')) tables.set(line, (rows = []));
    else if (line.startsWith('[')) rows.push(line);
  }
  for (const list of tables.values()) list.sort();
  return tables;
}
