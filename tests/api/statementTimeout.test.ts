import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createApiKey } from '../../app/apiKeys.js';
import { isStatementTimeout, StatementFailed } from '../../db/index.js';
import { RequestError } from '../../engine/index.js';
import { rethrowClientError } from '../../engine/execute/errors.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';
import { startTestServer, tokenHeader, type TestServer } from '../support/http.js';
import { createAccountWithAdmin, DashboardClient } from '../dashboard/dashboardClient.js';

/**
 * A request the database stops at `statement_timeout` (SQLSTATE 57014) is the request asking for
 * too much, not a fault of ours: REST answers 503 `{"error", "code": "timeout"}` naming
 * STATEMENT_TIMEOUT_MS, the dashboard a 503 page saying so, and the log has a warning, not an
 * "internal error". Found at scale (a lender with 10,000 loans on PostgreSQL 15, session
 * 37): the remittance run over four years of never-remitted lines (~197,000) took
 * 1.1–2.1 s, and with `STATEMENT_TIMEOUT_MS=200` `GET /api/remittances`, the Remittance page and its
 * CSV, an investor's page, the loan search and `GET /api/loan?limit=1000` were 500 "internal
 * error" / "Something went wrong" while GraphQL answered the same timeout with the code `timeout`.
 *
 * PGlite has no statement timeout, so statements are made to fail as PostgreSQL's timeout fails
 * them: `loanql_business_date`, which the remittance run and the overview's late loans (through the
 * engine: `days_past_due`) call, raises `query_canceled` (57014) while the table
 * `test_statement_timeout` has a row — after logging in, and until the last test empties it.
 */
const PASSWORD = 'correct horse battery';
const PERIOD = 'from=2026-01-01&to=2026-01-31';

let database: TestDatabase;
let server: TestServer;
let client: DashboardClient;
let key: string;

before(async () => {
  database = await openTestDatabase();
  server = await startTestServer(database.db);
  const { account, email } = await createAccountWithAdmin(database.db, PASSWORD);
  key = (await createApiKey(database.db, account.id, 'timeout test')).key;
  client = new DashboardClient(server.url);
  assert.equal((await client.logIn(email, PASSWORD)).status, 303);
  await database.db.query('CREATE TABLE test_statement_timeout (on_ boolean)');
  await database.db.query('ALTER FUNCTION loanql_business_date(uuid) RENAME TO loanql_business_date_before_test');
  await database.db.query(`
    CREATE FUNCTION loanql_business_date(p_account uuid) RETURNS date LANGUAGE plpgsql STABLE AS $$
    BEGIN
      IF EXISTS (SELECT 1 FROM test_statement_timeout) THEN
        RAISE EXCEPTION 'canceling statement due to statement timeout' USING ERRCODE = 'query_canceled';
      END IF;
      RETURN loanql_business_date_before_test(p_account);
    END $$;`);
  await database.db.query('INSERT INTO test_statement_timeout VALUES (true)');
});

after(async () => {
  await server?.close();
  await database?.close();
});

describe('A statement stopped at the statement timeout', () => {
  it('is told apart from other failures, also wrapped', () => {
    const timeout = Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
    assert.equal(isStatementTimeout(timeout), true);
    assert.equal(isStatementTimeout(new StatementFailed(1, timeout)), true);
    assert.equal(isStatementTimeout(Object.assign(new Error('division by zero'), { code: '22012' })), false);
    assert.equal(isStatementTimeout('57014'), false);
    // The engine's answer to it (GraphQL code `timeout`) keeps the database's error, so a REST list or a dashboard page read through the engine tells it too.
    assert.throws(
      () => rethrowClientError(timeout),
      (error: unknown) => error instanceof RequestError && error.errors[0]!.extensions.code === 'timeout' && isStatementTimeout(error),
    );
  });

  for (const path of [`/api/remittances?${PERIOD}`, `/api/remittances?${PERIOD}&format=csv`]) {
    it(`GET ${path} is a JSON 503 with the code timeout, naming STATEMENT_TIMEOUT_MS`, async () => {
      const response = await fetch(`${server.url}${path}`, { headers: tokenHeader(key) });
      assert.equal(response.status, 503);
      assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(response.headers.get('retry-after'), null, 'the same request at once would run as long again');
      const body = (await response.json()) as { error: string; code: string };
      assert.equal(body.code, 'timeout');
      assert.match(body.error, /ran past the statement timeout \(STATEMENT_TIMEOUT_MS\)/);
    });
  }

  for (const path of [`/dashboard/remittances?${PERIOD}`, `/dashboard/remittances.csv?${PERIOD}`, '/dashboard']) {
    it(`the dashboard's ${path} is a 503 page saying the page took too long`, async () => {
      const page = await client.get(path);
      assert.equal(page.status, 503);
      assert.match(page.text, /<title>The page took too long/);
      assert.match(page.text, /statement timeout \(STATEMENT_TIMEOUT_MS\)\. Ask for less/);
      assert.doesNotMatch(page.text, /Something went wrong/);
      // The page keeps the session's navigation.
      assert.match(page.text, /href="\/dashboard\/loans"/);
    });
  }

  it('logged warnings naming each path, and no internal error', () => {
    assert.deepEqual(
      server.logs.filter((line) => line.msg === 'internal error'),
      [],
    );
    const warned = server.logs.filter((line) => line.event === 'statement.timeout').map((line) => line.path);
    assert.deepEqual(warned, ['/api/remittances', '/api/remittances', '/dashboard/remittances', '/dashboard/remittances.csv', '/dashboard/']);
  });

  it('leaves the service as it was: the same pages answer once the statements run in time', async () => {
    await database.db.query('DELETE FROM test_statement_timeout');
    assert.equal((await fetch(`${server.url}/api/remittances?${PERIOD}`, { headers: tokenHeader(key) })).status, 200);
    for (const path of [`/dashboard/remittances?${PERIOD}`, '/dashboard', '/dashboard/investors']) assert.equal((await client.get(path)).status, 200, path);
  });
});
