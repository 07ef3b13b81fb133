import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';
import { startTestServer, type TestServer } from '../support/http.js';
import { createApiKey } from '../../app/apiKeys.js';
import { createAccountWithAdmin, DashboardClient } from './dashboardClient.js';

/**
 * A task without a loan (README "Tasks without a loan"): GraphQL's `insert_tasks_one` takes a task
 * with no `loan_id` — an account's own to-do — and the engine's tests use it so. The dashboard
 * makes tasks only on a loan page, and its overview showed such a task with an empty Loan cell,
 * and "N more open tasks …: see each loan's page" when those past the first 20 had no loan page to
 * be seen on. Now the cell says it is an account task, and the line says how many of the rest
 * belong to no loan and where they are listed.
 */
const PASSWORD = 'tasks without a loan';

let database: TestDatabase;
let server: TestServer;
let client: DashboardClient;
let key: string;
let accountId: string;

const graph = async (query: string): Promise<{ status: number; body: { data?: Record<string, { id: string; loan_id: string | null }>; errors?: unknown[] } }> => {
  const response = await fetch(`${server.url}/api/graph`, { method: 'POST', headers: { authorization: `Token ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
  return { status: response.status, body: (await response.json()) as never };
};

before(async () => {
  database = await openTestDatabase();
  server = await startTestServer(database.db);
  const made = await createAccountWithAdmin(database.db, PASSWORD);
  accountId = made.account.id;
  key = (await createApiKey(database.db, accountId, 'tasks')).key;
  client = new DashboardClient(server.url);
  assert.equal((await client.logIn(made.email, PASSWORD)).status, 303);
});

after(async () => {
  await server?.close();
  await database?.close();
});

describe('Tasks without a loan', () => {
  it('are taken over GraphQL and shown on the overview as account tasks', async () => {
    const made = await graph('mutation { insert_tasks_one(object: {name: "Renew the servicing licence", date_due: "2026-01-05"}) { id loan_id } }');
    assert.equal(made.status, 200);
    assert.equal(made.body.errors, undefined, JSON.stringify(made.body));
    assert.equal(made.body.data!.insert_tasks_one!.loan_id, null);
    const page = await client.get('/dashboard');
    assert.equal(page.status, 200);
    assert.match(page.text, /<td>Renew the servicing licence<\/td><td><span class="status pill-open">open<\/span><\/td><td><span class="hint">no loan \(an account task\)<\/span><\/td>/);
  });

  it('past the 20 the overview lists, are counted apart with where to find them', async () => {
    const loan = (await database.db.query<{ id: string }>(`INSERT INTO loans (account_id, name, amount) VALUES ($1, 'Tasked loan', 1000) RETURNING id`, [accountId])).rows[0]!.id;
    // 10 on the loan due soonest, then 12 more without a loan (13 in all with the first test's): 20 shown, 3 not, all without a loan.
    await database.db.query(`INSERT INTO tasks (account_id, loan_id, name, date_due) SELECT $1, $2, 'Loan task ' || n, DATE '2025-12-01' + n FROM generate_series(1, 10) n`, [accountId, loan]);
    await database.db.query(`INSERT INTO tasks (account_id, name, date_due) SELECT $1, 'Account task ' || n, DATE '2026-02-01' + n FROM generate_series(1, 12) n`, [accountId]);
    const page = (await client.get('/dashboard')).text;
    const section = page.slice(page.indexOf('id="open-tasks"'));
    assert.match(section, /Open tasks <span class="count">23<\/span>/);
    assert.match(
      section,
      /<p class="hint">3 more open tasks, due later or with no due date: see each loan's page\. 3 of them belong to no loan: the <a href="\/dashboard\/console">console<\/a> lists them with <code>tasks\(where: \{loan_id: \{_is_null: true\}\}\)<\/code>\.<\/p>/,
    );
  });
});
