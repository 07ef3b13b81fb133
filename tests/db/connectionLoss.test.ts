import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { DatabaseUnavailableError, isConnectionError, openPostgresDatabase, type Database } from '../../db/index.js';
import { createServerDatabase } from '../support/testDatabase.js';

/**
 * Issue 11, item 1: a lost connection never crashes the process — also on a client that is
 * checked out (in a transaction, or streaming rows with `each`), where the pool's own 'error'
 * event does not help — its failure is a `DatabaseUnavailableError`, and the pool reconnects by
 * itself. Needs a real PostgreSQL server (TEST_DATABASE_URL) whose backends it can terminate.
 */
const serverUrl = process.env.TEST_DATABASE_URL;

describe('Connection errors are classified in one place', () => {
  const cases: [string, unknown, boolean][] = [
    ['57P01 admin shutdown', Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }), true],
    ['57P03 cannot connect now', Object.assign(new Error('the database system is starting up'), { code: '57P03' }), true],
    ['08006 connection failure', Object.assign(new Error('x'), { code: '08006' }), true],
    ['ECONNREFUSED', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }), true],
    ['ECONNRESET', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), true],
    ['Connection terminated unexpectedly', new Error('Connection terminated unexpectedly'), true],
    ['57014 statement timeout', Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }), false],
    ['22003 numeric overflow', Object.assign(new Error('numeric field overflow'), { code: '22003' }), false],
    ['23505 unique violation', Object.assign(new Error('duplicate key'), { code: '23505' }), false],
    ['a plain error', new Error('boom'), false],
  ];
  for (const [what, error, expected] of cases) {
    it(`${what}: ${expected ? 'the database is unavailable' : 'not a connection problem'}`, () => {
      assert.equal(isConnectionError(error), expected);
    });
  }

  it('a connection refused is DatabaseUnavailableError too', async () => {
    const nowhere = openPostgresDatabase({ connectionString: 'postgres://postgres@127.0.0.1:1/postgres', connectTimeoutMs: 2_000 });
    try {
      const outcome = await nowhere.query('SELECT 1').catch((error: unknown) => error);
      assert.ok(outcome instanceof DatabaseUnavailableError, `got ${String(outcome)}`);
    } finally {
      await nowhere.close();
    }
  });
});

describe('A lost connection on PostgreSQL', { skip: serverUrl ? false : 'needs TEST_DATABASE_URL (a real PostgreSQL server)' }, () => {
  let database: { url: string; drop(): Promise<void> };
  let db: Database;
  let admin: pg.Client;
  const lost: Error[] = [];

  before(async () => {
    database = await createServerDatabase(serverUrl!);
    db = openPostgresDatabase({ connectionString: database.url, maxConnections: 4, onConnectionError: (error) => lost.push(error) });
    admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
  });

  after(async () => {
    await admin?.end();
    await db?.close();
    await database?.drop();
  });

  /** Terminates the backend whose pid `pidOf` resolves to once it is known. */
  async function terminateSoon(pid: Promise<number>): Promise<void> {
    await admin.query('SELECT pg_terminate_backend($1)', [await pid]);
  }

  it('runs with jit=off on its connections (JIT compilation is not interrupted by statement_timeout)', async () => {
    const { rows } = await db.query<{ jit: string }>('SHOW jit');
    assert.equal(rows[0]!.jit, 'off');
  });

  it('a transaction whose connection is terminated rejects with DatabaseUnavailableError, and the process lives on', async () => {
    let reportPid!: (pid: number) => void;
    const pid = new Promise<number>((resolve) => (reportPid = resolve));
    const terminated = terminateSoon(pid);
    const outcome = await db
      .transaction(async (tx) => {
        const { rows } = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        reportPid(rows[0]!.pid);
        await terminated;
        // The server closed this connection meanwhile: the socket's 'error' arrives while the
        // client is checked out (before the fix, an unhandled 'error' event killed the process).
        await new Promise((resolve) => setTimeout(resolve, 200));
        await tx.query('SELECT 1');
        return 'committed';
      })
      .catch((error: unknown) => error);
    assert.ok(outcome instanceof DatabaseUnavailableError, `got ${String(outcome)}`);
  });

  it('a row stream (each) whose connection is terminated rejects with DatabaseUnavailableError', async () => {
    const stream = db.each('SELECT pg_sleep(0.02), g FROM generate_series(1, 200) AS g', [], () => undefined).catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(0.02)%' AND pid <> pg_backend_pid()`);
    const outcome = await stream;
    assert.ok(outcome instanceof DatabaseUnavailableError, `got ${String(outcome)}`);
  });

  it('idle connections that are terminated are reported, not thrown', async () => {
    await Promise.all([db.query('SELECT 1'), db.query('SELECT 1'), db.query('SELECT 1')]);
    const before = lost.length;
    const dbName = new URL(database.url).pathname.slice(1);
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [dbName]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.ok(lost.length > before, 'the lost connections were reported to onConnectionError');
  });

  it('the pool recovers by itself: the next statements run on fresh connections', async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => db.query<{ n: number }>('SELECT $1::int AS n', [i])));
    assert.deepEqual(
      answers.map((answer) => answer.rows[0]!.n),
      [0, 1, 2, 3, 4, 5, 6, 7],
    );
  });
});
