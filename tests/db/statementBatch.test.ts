import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { openPostgresDatabase, queryInOrder, queryThenCommit, StatementFailed, type Database } from '../../db/index.js';
import { createServerDatabase } from '../support/testDatabase.js';

/**
 * Statements of a transaction sent together (db/statementBatch.ts): a transaction's BEGIN goes
 * out with its first statements, `queryInOrder` sends several in one round trip, and
 * `queryThenCommit` sends the last with the COMMIT — so a mutation of one write takes two round
 * trips, not four. Counted at the socket: a proxy between the pool and PostgreSQL counts what
 * the client sends. Needs a real PostgreSQL server (TEST_DATABASE_URL).
 */
const serverUrl = process.env.TEST_DATABASE_URL;

/** A TCP proxy in front of PostgreSQL that counts the client's writes as they arrive. */
async function countingProxy(target: URL): Promise<{ url: string; sent: () => number; close: () => Promise<void> }> {
  let sent = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => sockets.delete(socket));
    }
    client.on('data', (chunk) => {
      sent += 1;
      upstream.write(chunk);
    });
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxied = new URL(target.toString());
  proxied.hostname = '127.0.0.1';
  proxied.port = String((server.address() as AddressInfo).port);
  return {
    url: proxied.toString(),
    sent: () => sent,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('Statements sent together in one round trip (node-postgres)', { skip: serverUrl ? false : 'needs TEST_DATABASE_URL (a real PostgreSQL server)' }, () => {
  let created: Awaited<ReturnType<typeof createServerDatabase>>;
  let proxy: Awaited<ReturnType<typeof countingProxy>>;
  let db: Database;
  const insert = { text: 'INSERT INTO notes (id, body) VALUES ($1, $2) RETURNING id', options: { reusable: true } };
  const count = { text: 'SELECT count(*)::int AS n FROM notes', values: [], options: { reusable: true } };
  const rowCount = async (): Promise<number> => (await db.query<{ n: number }>(count.text, []))!.rows[0]!.n;

  before(async () => {
    created = await createServerDatabase(serverUrl!);
    proxy = await countingProxy(new URL(created.url));
    // One connection, so the statements prepared by the first transaction are there for the next.
    db = openPostgresDatabase({ connectionString: proxy.url, maxConnections: 1 });
    await db.query('CREATE TABLE notes (id int PRIMARY KEY, body text NOT NULL CHECK (body <> \'\'))');
    await db.transaction(async (tx) => {
      await queryInOrder(tx, [{ ...insert, values: [0, 'warm'] }, count]);
      await queryThenCommit(tx, count);
    });
  });
  after(async () => {
    await db?.close();
    await proxy?.close();
    await created?.drop();
  });

  it('runs a transaction of three statements in two round trips: BEGIN with the first two, COMMIT with the last; each sees the ones before', async () => {
    const before = proxy.sent();
    const outcome = await db.transaction(async (tx) => {
      const [inserted, counted] = await queryInOrder(tx, [{ ...insert, values: [1, 'one'] }, count]);
      const last = await queryThenCommit(tx, count);
      return { inserted: inserted!.rows, counted: counted!.rows[0]!['n'], last: last.rows[0]!['n'] };
    });
    assert.equal(proxy.sent() - before, 2, 'two writes from the client: [BEGIN, INSERT, SELECT, Sync] and [SELECT, COMMIT, Sync]');
    assert.deepEqual(outcome, { inserted: [{ id: 1 }], counted: 2, last: 2 });
    assert.equal(await rowCount(), 2, 'committed');
  });

  it('names the failing statement, runs none after it, and commits nothing; the connection is fine afterwards', async () => {
    const rowsBefore = await rowCount();
    const failure = await db
      .transaction((tx) => queryInOrder(tx, [{ ...insert, values: [10, 'ten'] }, { ...insert, values: [11, ''] }, { ...insert, values: [12, 'twelve'] }]))
      .catch((error: unknown) => error);
    assert.ok(failure instanceof StatementFailed, `got ${String(failure)}`);
    assert.equal(failure.index, 1);
    assert.equal((failure.cause as { code?: string }).code, '23514', 'the CHECK violation of the second statement');
    assert.equal(await rowCount(), rowsBefore, 'the first insert was rolled back with the rest');
    assert.equal((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM notes WHERE id = 12')).rows[0]!.n, 0, 'the third never ran');
  });

  it('a last statement that fails commits nothing, and its error is its own (not wrapped)', async () => {
    const rowsBefore = await rowCount();
    const failure = await db
      .transaction(async (tx) => {
        await tx.query(insert.text, [20, 'twenty'], insert.options);
        return queryThenCommit(tx, { ...insert, values: [20, 'again'] });
      })
      .catch((error: unknown) => error);
    assert.ok(!(failure instanceof StatementFailed));
    assert.equal((failure as { code?: string }).code, '23505', 'the duplicate key of the last statement');
    assert.equal(await rowCount(), rowsBefore);
  });

  it('nothing runs on a transaction after its COMMIT went out', async () => {
    const failure = await db
      .transaction(async (tx) => {
        await queryThenCommit(tx, count);
        return tx.query(count.text, []);
      })
      .catch((error: unknown) => error);
    assert.match(String(failure), /already been committed/);
  });

  it('a statement not yet prepared on the connection runs on its own first (and is then prepared)', async () => {
    const fresh = { text: 'SELECT count(*)::int AS n FROM notes WHERE id > $1', options: { reusable: true } };
    const before = proxy.sent();
    await db.transaction((tx) => queryInOrder(tx, [{ ...fresh, values: [0] }, count]));
    const firstTime = proxy.sent() - before;
    const again = proxy.sent();
    await db.transaction((tx) => queryInOrder(tx, [{ ...fresh, values: [0] }, count]));
    assert.ok(firstTime > 2, `one after another the first time (${firstTime} writes)`);
    assert.equal(proxy.sent() - again, 2, 'then [BEGIN, both, Sync] and COMMIT');
  });
});
