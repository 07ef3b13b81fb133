import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { migrate, openPostgresDatabase, type Database } from '../../db/index.js';
import { assessFees } from '../../app/feeJob.js';
import { businessDate } from '../../app/ledgerReads.js';
import { createAccountWithKey, startTestServer, type TestServer } from '../support/http.js';
import { createServerDatabase } from '../support/testDatabase.js';

/**
 * A PostgreSQL server whose DateStyle is not ISO (`SQL, DMY`, a European default a DBA may set for
 * the server, the database or the role): the service still reads every date as `YYYY-MM-DD`
 * (`db/postgresDatabase.ts` starts its connections with `DateStyle=ISO`). Before, the business
 * date read `29/11/2026`: the fee job refused it as no date, and a PATCH of a loan's terms was a
 * 400 naming the loan's own stored Date_Funded ("must be a YYYY-MM-DD date, got 31/01/2026").
 * Needs a real PostgreSQL server (TEST_DATABASE_URL).
 */
const serverUrl = process.env.TEST_DATABASE_URL;

describe("A server whose DateStyle is 'SQL, DMY' and whose time zone is America/New_York", { skip: serverUrl ? false : 'needs TEST_DATABASE_URL' }, () => {
  let database: { url: string; drop(): Promise<void> };
  let db: Database;
  let server: TestServer;

  before(async () => {
    database = await createServerDatabase(serverUrl!);
    const admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    try {
      await admin.query(`ALTER DATABASE ${new URL(database.url).pathname.slice(1)} SET datestyle = 'SQL, DMY'`);
      await admin.query(`ALTER DATABASE ${new URL(database.url).pathname.slice(1)} SET timezone = 'America/New_York'`);
    } finally {
      await admin.end();
    }
    db = openPostgresDatabase({ connectionString: database.url });
    await migrate(db);
    server = await startTestServer(db);
  });
  after(async () => {
    await server?.close();
    await db?.close();
    await database?.drop();
  });

  it('reads the business date as YYYY-MM-DD, runs the fee job, and takes a loan\'s PATCH', async () => {
    // The setting is in force for a connection that does not set its own.
    const other = new pg.Client({ connectionString: database.url });
    await other.connect();
    const shown = (await other.query<{ d: string }>(`SELECT DATE '2026-11-29'::text AS d`)).rows[0]!.d;
    await other.end();
    assert.equal(shown, '29/11/2026');

    const { account, apiKey } = await createAccountWithKey(db);
    await db.query(`INSERT INTO products (account_id, name, is_default) VALUES ($1, 'Default', true) ON CONFLICT DO NOTHING`, [account.id]);
    assert.match(await businessDate(db, account.id), /^\d{4}-\d\d-\d\d$/);
    const runs = await assessFees(db, { accountSlug: account.slug });
    assert.match(runs[0]!.asOf, /^\d{4}-\d\d-\d\d$/);

    const headers = { Authorization: `Token ${apiKey.key}`, 'Content-Type': 'application/json' };
    const created = await fetch(`${server.url}/api/loan`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ Name: 'DMY', Status: 'servicing', Amount: 12000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-31' }),
    });
    assert.equal(created.status, 201, await created.clone().text());
    const loan = ((await created.json()) as { loan: { id: string; date_funded: string } }).loan;
    assert.equal(loan.date_funded, '2026-01-31');
    const patched = await fetch(`${server.url}/api/loan/${loan.id}`, { method: 'PATCH', headers, body: JSON.stringify({ Term: 24 }) });
    const body = await patched.text();
    assert.equal(patched.status, 200, body);
    assert.equal((JSON.parse(body) as { loan: { date_maturity: string } }).loan.date_maturity, '2028-01-31');
  });

  it('reads a timestamp without an offset in a filter as UTC, as PGlite does, and writes timestamps +00:00', async () => {
    const { account, apiKey } = await createAccountWithKey(db);
    const loan = (await db.query<{ id: string }>(`INSERT INTO loans (account_id, name, created_at) VALUES ($1, 'Made at 07:30 UTC', '2026-03-08 07:30:00+00') RETURNING id`, [account.id])).rows[0]!.id;
    const graph = async (at: string): Promise<{ id: string; created_at: string }[]> => {
      const answer = await fetch(`${server.url}/api/graph`, {
        method: 'POST',
        headers: { Authorization: `Token ${apiKey.key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ query: 'query ($t: timestamptz!) { loans(where: {created_at: {_eq: $t}}) { id created_at } }', variables: { t: at } }),
      });
      const json = (await answer.json()) as { data?: { loans: { id: string; created_at: string }[] }; errors?: unknown };
      assert.equal(json.errors, undefined, JSON.stringify(json));
      return json.data!.loans;
    };
    // Before: read in the server's zone, 07:30 in New York (12:30 UTC), so no loan; created_at written -05:00.
    assert.deepEqual(await graph('2026-03-08T07:30:00'), [{ id: loan, created_at: '2026-03-08T07:30:00+00:00' }]);
    assert.deepEqual(await graph('2026-03-08T02:30:00-05:00'), [{ id: loan, created_at: '2026-03-08T07:30:00+00:00' }]);
  });
});
