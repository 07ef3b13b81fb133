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
    assert.match(page.text, /<td>Renew the servicing licence<\/td><td><span class="status pill-open">open<\/span><\/td><td><a href="\/dashboard\/tasks" class="hint">no loan \(an account task\)<\/a><\/td>/);
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
      /<p class="hint">3 more open tasks, due later or with no due date \(3 of them on no loan\): the <a href="\/dashboard\/tasks">Tasks<\/a> page lists them all\.<\/p>/,
    );
  });

  it('the Tasks page refuses what a loan’s task form refuses, in words, writing nothing: a name past 500 characters, a due day in the year 26, no CSRF token', async () => {
    const before = await taskCount();
    await client.get('/dashboard/tasks');
    const long = await client.postForm('/dashboard/tasks', { name: 'x'.repeat(501), date_due: '' });
    assert.equal(long.status, 400);
    assert.match(long.text, /Task: at most 500 characters\./);
    const year26 = await client.postForm('/dashboard/tasks', { name: 'Renew the bond', date_due: '0026-05-01' });
    assert.equal(year26.status, 400);
    assert.match(year26.text, /Due: expected a day as YYYY-MM-DD from 1900 to 2999\./);
    assert.match(year26.text, /value="Renew the bond"/, 'what was typed is kept');
    const forged = await client.postForm('/dashboard/tasks', { _csrf: null, name: 'Forged', date_due: '' });
    assert.equal(forged.status, 403);
    assert.equal(await taskCount(), before, 'nothing written');
    const made = await client.postForm('/dashboard/tasks', { name: 'Renew the bond', date_due: '2026-05-01' });
    assert.equal(made.status, 303);
    assert.equal(made.location, '/dashboard/tasks?done=task-added');
    const stored = await database.db.query(`SELECT loan_id, name, status, date_due::text FROM tasks WHERE account_id = $1 AND name = 'Renew the bond'`, [accountId]);
    assert.deepEqual(stored.rows, [{ loan_id: null, name: 'Renew the bond', status: 'open', date_due: '2026-05-01' }]);
  });

  it("another account's task is not found (404) to complete or edit, and stays as it was; a bad page is a 400 naming it", async () => {
    const other = await createAccountWithAdmin(database.db, 'another account');
    const theirs = (await database.db.query<{ id: string }>(`INSERT INTO tasks (account_id, name) VALUES ($1, 'Their task') RETURNING id`, [other.account.id])).rows[0]!.id;
    await client.get('/dashboard/tasks');
    assert.equal((await client.postForm(`/dashboard/tasks/${theirs}/complete`, {})).status, 404);
    assert.equal((await client.get(`/dashboard/tasks/${theirs}/edit`)).status, 404);
    await client.get('/dashboard/tasks');
    assert.equal((await client.postForm(`/dashboard/tasks/${theirs}/edit`, { name: 'Mine now', date_due: '' })).status, 404);
    assert.equal((await client.postForm('/dashboard/tasks/not-a-task/complete', {})).status, 404);
    const row = await database.db.query(`SELECT name, status FROM tasks WHERE id = $1`, [theirs]);
    assert.deepEqual(row.rows, [{ name: 'Their task', status: 'open' }]);
    const bad = await client.get('/dashboard/tasks?page=first');
    assert.equal(bad.status, 400);
    assert.match(bad.text, /The parameter “page” is wrong/);
  });
});

async function taskCount(): Promise<number> {
  return (await database.db.query<{ n: number }>('SELECT count(*)::int AS n FROM tasks WHERE account_id = $1', [accountId])).rows[0]!.n;
}

