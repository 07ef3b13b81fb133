import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { createAdmin } from '../../app/accounts.js';
import { createLoan } from '../../app/loanWrites.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';
import { startTestServer, type TestServer } from '../support/http.js';
import { installTestClock, setTestClock } from '../support/testClock.js';
import { ChromiumSuite, openWatchedPage, logInToDashboard } from '../support/chromium.js';
import { seriousAccessibilityViolations } from '../support/axe.js';

/**
 * "My tasks" in Chromium (migration 0087, session 42). Servicing clerks share one account, and a
 * task had no one's name on it. Now the Tasks page shows each open task's assignee and lists
 * Mine, Everyone's or the Unassigned (`?assignee=`, refused when it is anything else, kept across
 * pages and after a Complete); the task forms — add and edit on the Tasks page, add on a loan's
 * page — choose the assignee among the account's users (Unassigned by default, the signed-in user
 * first), and refuse anyone else; the overview's open tasks show the assignee and have the same
 * Mine / Everyone / Unassigned (session 43), and a loan's tasks say whom each is for, or unassigned.
 * Business date 2026-03-20.
 */
const CHROMIUM = new ChromiumSuite("the task assignee's browser test", 'tests/dashboard/taskAssigneeBrowser.test.ts');
const PASSWORD = 'correct horse battery';
const TODAY = '2026-03-20';

let database: TestDatabase;
let server: TestServer;
let browser: Browser;
let page: Page;
let accountId = '';
let loanId = '';
let sam = '';
let kim = '';
let stranger = '';
const pageProblems: string[] = [];

/** The open tasks' rows as `task | assignee`. */
async function taskRows(): Promise<string[]> {
  const cells = (await page.locator('.tasks-table tbody tr td').allTextContents()).map((cell) => cell.trim().replace(/\s+/g, ' '));
  const lines: string[] = [];
  // Six cells a row: due, task, status, loan, assignee, actions.
  for (let i = 0; i < cells.length; i += 6) lines.push(`${cells[i + 1]} | ${cells[i + 4]}`);
  return lines;
}

async function assigneeOf(name: string): Promise<(string | null)[]> {
  return (await database.db.query<{ assignee_id: string | null }>('SELECT assignee_id FROM tasks WHERE account_id = $1 AND name = $2', [accountId, name])).rows.map((r) => r.assignee_id);
}

async function options(): Promise<string[]> {
  return (await page.getByLabel('Assignee', { exact: true }).locator('option').allTextContents()).map((option) => option.trim());
}

async function filterInUse(): Promise<string | null> {
  return page.getByRole('navigation', { name: 'Whose tasks' }).locator('[aria-current="page"]').textContent();
}

describe('Who a task is for, on the dashboard (Chromium)', () => {
  if (CHROMIUM.skipped("filters the Tasks page by assignee and chooses a task's assignee in Chromium")) return;

  before(async () => {
    database = await openTestDatabase();
    await installTestClock(database.db);
    await setTestClock(database.db, TODAY);
    accountId = (await database.db.query<{ id: string }>(`INSERT INTO accounts (slug, name) VALUES ('assignees', 'Assignees & Co') RETURNING id`)).rows[0]!.id;
    sam = (await createAdmin(database.db, accountId, { email: 'sam@example.test', password: PASSWORD, name: 'Sam Servicer' })).id;
    kim = (await createAdmin(database.db, accountId, { email: 'kim@example.test', password: PASSWORD, name: 'Kim Clerk' })).id;
    await createAdmin(database.db, accountId, { email: 'abe@example.test', password: PASSWORD, name: 'Abe Archer' });
    const other = (await database.db.query<{ id: string }>(`INSERT INTO accounts (slug, name) VALUES ('elsewhere', 'Elsewhere') RETURNING id`)).rows[0]!.id;
    stranger = (await createAdmin(database.db, other, { email: 'lee@elsewhere.test', password: PASSWORD, name: 'Lee Elsewhere' })).id;
    loanId = (await createLoan(database.db, accountId, { Name: 'Elm St bridge', Amount: 12000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-02-01', Status: 'servicing' })).id;
    await database.db.query(
      `INSERT INTO tasks (account_id, loan_id, name, date_due, assignee_id) VALUES
         ($1, NULL, 'Renew the servicing licence', '2026-03-10', $3),
         ($1, $2, 'Call the borrower', '2026-03-25', $4),
         ($1, $2, 'Order the appraisal', '2026-03-26', $3),
         ($1, NULL, 'Prepare the audit', NULL, NULL)`,
      [accountId, loanId, sam, kim],
    );
    server = await startTestServer(database.db);
    browser = await CHROMIUM.launch();
    // The refusals the test provokes: a forged assignee (a POST's 400) and a bad `?assignee=` (a GET's 400).
    ({ page } = await openWatchedPage(browser, {
      viewport: { width: 1366, height: 768 },
      problems: pageProblems,
      expectedRefusal: (response) => response.status() === 400 && (response.request().method() === 'POST' || response.url().includes('assignee=someone')),
    }));
    await page.goto(`${server.url}/dashboard/login`);
    await logInToDashboard(page, server.url, 'sam@example.test', PASSWORD);
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    await database?.close();
  });

  it("the overview's open tasks show each one's assignee, the signed-in user's marked (you)", async () => {
    await page.goto(`${server.url}/dashboard`);
    const cells = await page.locator('#open-tasks tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => (td.textContent ?? '').trim().replace(/\s+/g, ' '))));
    assert.deepEqual(
      cells.map((row) => `${row[1]} | ${row[4]}`),
      ['Renew the servicing licence | Sam Servicer (you)', 'Call the borrower | Kim Clerk', 'Order the appraisal | Sam Servicer (you)', 'Prepare the audit | unassigned'],
    );
  });

  it("the overview's open tasks have the Tasks page's Mine / Everyone / Unassigned, with its ?assignee= (session 43)", async () => {
    const overviewRows = async (): Promise<string[]> =>
      page.locator('#open-tasks tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => (td.textContent ?? '').trim().replace(/\s+/g, ' '))).map((row) => `${row[1]} | ${row[4]}`));
    await page.goto(`${server.url}/dashboard`);
    assert.equal(await filterInUse(), 'Everyone');
    await page.getByRole('navigation', { name: 'Whose tasks' }).getByRole('link', { name: 'Mine' }).click();
    await page.waitForURL(`${server.url}/dashboard?assignee=mine#open-tasks`);
    assert.equal(await filterInUse(), 'Mine');
    assert.deepEqual(await overviewRows(), ['Renew the servicing licence | Sam Servicer (you)', 'Order the appraisal | Sam Servicer (you)']);
    assert.equal((await page.locator('#open-tasks-heading .count').textContent())?.trim(), '2', 'the count is of the tasks listed');
    assert.deepEqual(await seriousAccessibilityViolations(page), [], 'axe on the overview with Mine');
    // An account task's "no loan" link keeps the filter: it goes to the Tasks page's Mine (before session 44, to everyone's).
    const accountTaskLink = page.locator('#open-tasks tbody tr', { hasText: 'Renew the servicing licence' }).getByRole('link', { name: 'no loan (an account task)' });
    assert.equal(await accountTaskLink.getAttribute('href'), '/dashboard/tasks?assignee=mine');
    await accountTaskLink.click();
    await page.waitForURL(`${server.url}/dashboard/tasks?assignee=mine`);
    assert.equal(await filterInUse(), 'Mine');
    await page.goto(`${server.url}/dashboard?assignee=mine`);
    await page.getByRole('navigation', { name: 'Whose tasks' }).getByRole('link', { name: 'Unassigned' }).click();
    await page.waitForURL(`${server.url}/dashboard?assignee=unassigned#open-tasks`);
    assert.deepEqual(await overviewRows(), ['Prepare the audit | unassigned']);
    assert.equal(await page.locator('#open-tasks').getByRole('link', { name: 'no loan (an account task)' }).getAttribute('href'), '/dashboard/tasks?assignee=unassigned');
    await page.getByRole('navigation', { name: 'Whose tasks' }).getByRole('link', { name: 'Everyone' }).click();
    await page.waitForURL(`${server.url}/dashboard#open-tasks`);
    assert.equal((await overviewRows()).length, 4);
    assert.deepEqual(await page.locator('#open-tasks').getByRole('link', { name: 'no loan (an account task)' }).evaluateAll((links) => links.map((link) => link.getAttribute('href'))), ['/dashboard/tasks', '/dashboard/tasks']);
    // Kim has nothing unassigned to do, and says so in the Tasks page's words.
    await database.db.query(`UPDATE tasks SET assignee_id = $2 WHERE account_id = $1 AND name = 'Prepare the audit'`, [accountId, kim]);
    try {
      await page.goto(`${server.url}/dashboard?assignee=unassigned`);
      assert.equal(((await page.locator('#open-tasks').textContent()) ?? '').replace(/\s+/g, ' ').includes('No open tasks assigned to no one.'), true);
    } finally {
      await database.db.query(`UPDATE tasks SET assignee_id = NULL WHERE account_id = $1 AND name = 'Prepare the audit'`, [accountId]);
    }
    const refused = await page.goto(`${server.url}/dashboard?assignee=someone`);
    assert.equal(refused?.status(), 400);
    assert.match((await page.locator('main').textContent()) ?? '', /The parameter “assignee” is wrong: expected mine, everyone or unassigned\./);
  });

  it('the Tasks page shows every assignee, and Mine and Unassigned keep only theirs', async () => {
    await page.goto(`${server.url}/dashboard/tasks`);
    assert.equal(await filterInUse(), 'Everyone');
    assert.deepEqual(await taskRows(), ['Renew the servicing licence | Sam Servicer (you)', 'Call the borrower | Kim Clerk', 'Order the appraisal | Sam Servicer (you)', 'Prepare the audit | unassigned']);
    await page.getByRole('navigation', { name: 'Whose tasks' }).getByRole('link', { name: 'Mine' }).click();
    await page.waitForURL(`${server.url}/dashboard/tasks?assignee=mine`);
    assert.equal(await filterInUse(), 'Mine');
    assert.deepEqual(await taskRows(), ['Renew the servicing licence | Sam Servicer (you)', 'Order the appraisal | Sam Servicer (you)']);
    assert.equal((await page.locator('#tasks-status').textContent())?.trim(), 'Tasks 1–2 of 2 assigned to you; 1 of them belongs to no loan.');
    assert.equal((await page.locator('#open-tasks-heading .count').textContent())?.trim(), '2');
    await page.getByRole('navigation', { name: 'Whose tasks' }).getByRole('link', { name: 'Unassigned' }).click();
    await page.waitForURL(`${server.url}/dashboard/tasks?assignee=unassigned`);
    assert.deepEqual(await taskRows(), ['Prepare the audit | unassigned']);
    assert.deepEqual(await seriousAccessibilityViolations(page), []);
  });

  it('a bad ?assignee= is a 400 page naming the parameter and what it takes', async () => {
    const response = await page.goto(`${server.url}/dashboard/tasks?assignee=someone`);
    assert.equal(response?.status(), 400);
    assert.match((await page.locator('main').textContent()) ?? '', /The parameter “assignee” is wrong: expected mine, everyone or unassigned\./);
  });

  it('Mine is kept across pages and after a Complete', async () => {
    await database.db.query(`INSERT INTO tasks (account_id, name, date_due, assignee_id) SELECT $1, 'Mine ' || lpad(n::text, 2, '0'), DATE '2026-04-01' + n, $2 FROM generate_series(1, 50) n`, [accountId, sam]);
    await database.db.query(`INSERT INTO tasks (account_id, name, date_due, assignee_id) SELECT $1, 'Theirs ' || n, DATE '2026-04-01' + n, $2 FROM generate_series(1, 5) n`, [accountId, kim]);
    await page.goto(`${server.url}/dashboard/tasks?assignee=mine`);
    await page.getByRole('navigation', { name: 'Pages of tasks' }).getByRole('link', { name: 'Next' }).click();
    await page.waitForURL(`${server.url}/dashboard/tasks?assignee=mine&page=2`);
    assert.equal(await filterInUse(), 'Mine');
    assert.deepEqual(await taskRows(), ['Mine 49 | Sam Servicer (you)', 'Mine 50 | Sam Servicer (you)']);
    await page.getByRole('button', { name: 'Complete “Mine 50”' }).click();
    await page.waitForURL(`${server.url}/dashboard/tasks?assignee=mine&done=task-completed`);
    assert.equal(await filterInUse(), 'Mine');
    assert.equal((await page.locator('#tasks-status').textContent())?.trim(), 'Tasks 1–50 of 51 assigned to you; 50 of them belong to no loan.');
    // The overview's Mine lists the first 20 and sends the rest to the Tasks page's Mine.
    await page.goto(`${server.url}/dashboard?assignee=mine`);
    assert.equal(await page.locator('#open-tasks tbody tr').count(), 20);
    const rest = page.locator('#open-tasks p.hint');
    assert.equal(((await rest.textContent()) ?? '').replace(/\s+/g, ' ').trim(), '31 more open tasks assigned to you, due later or with no due date (31 of them on no loan): the Tasks page lists them all.');
    assert.equal(await rest.getByRole('link', { name: 'Tasks' }).getAttribute('href'), '/dashboard/tasks?assignee=mine');
    await database.db.query(`DELETE FROM tasks WHERE account_id = $1 AND (name LIKE 'Mine %' OR name LIKE 'Theirs %')`, [accountId]);
  });

  it("the add form offers Unassigned (the default), then the signed-in user, then the others by name — never another account's — and refuses anyone else, writing nothing", async () => {
    await page.goto(`${server.url}/dashboard/tasks`);
    assert.deepEqual(await options(), ['Unassigned', 'Sam Servicer (you)', 'Abe Archer', 'Kim Clerk']);
    assert.equal(await page.getByLabel('Assignee', { exact: true }).inputValue(), '');
    await page.getByLabel('Task', { exact: true }).fill('Forged assignee');
    // A page edited (or a stale one): the option's value is another account's admin.
    await page.getByLabel('Assignee', { exact: true }).evaluate((element, id) => {
      const select = element as unknown as { options: { value: string }[]; selectedIndex: number };
      select.options[3]!.value = id;
      select.selectedIndex = 3;
    }, stranger);
    await page.getByRole('button', { name: 'Add task' }).click();
    assert.equal((await page.locator('#outcome').textContent())?.trim(), "Assignee: choose one of the account's users, or Unassigned.");
    assert.deepEqual(await assigneeOf('Forged assignee'), [], 'nothing written');
    assert.equal(await page.getByLabel('Task', { exact: true }).inputValue(), 'Forged assignee', 'what was typed is kept');

    await page.getByLabel('Task', { exact: true }).fill('Send the payoff letter');
    await page.getByLabel('Assignee', { exact: true }).selectOption({ label: 'Kim Clerk' });
    await page.getByRole('button', { name: 'Add task' }).click();
    await page.waitForURL(/done=task-added/);
    assert.deepEqual(await assigneeOf('Send the payoff letter'), [kim]);
    await page.getByLabel('Task', { exact: true }).fill('Nobody yet');
    await page.getByRole('button', { name: 'Add task' }).click();
    await page.waitForURL(/done=task-added/);
    assert.deepEqual(await assigneeOf('Nobody yet'), [null], 'unassigned by default');
  });

  it('the edit form shows the current assignee, and assigns, reassigns and unassigns', async () => {
    await page.goto(`${server.url}/dashboard/tasks`);
    await page.getByRole('link', { name: 'Edit “Prepare the audit”' }).click();
    await page.waitForURL(/\/edit$/);
    assert.equal(await page.getByLabel('Assignee', { exact: true }).inputValue(), '');
    await page.getByLabel('Assignee', { exact: true }).selectOption({ label: 'Sam Servicer (you)' });
    await page.getByRole('button', { name: 'Save task' }).click();
    await page.waitForURL(/done=task-saved/);
    assert.deepEqual(await assigneeOf('Prepare the audit'), [sam]);

    await page.getByRole('link', { name: 'Edit “Call the borrower”' }).click();
    await page.waitForURL(/\/edit$/);
    assert.equal(await page.getByLabel('Assignee', { exact: true }).inputValue(), kim);
    await page.getByLabel('Assignee', { exact: true }).selectOption({ label: 'Unassigned' });
    await page.getByRole('button', { name: 'Save task' }).click();
    await page.waitForURL(/done=task-saved/);
    assert.deepEqual(await assigneeOf('Call the borrower'), [null]);
    await page.goto(`${server.url}/dashboard/tasks?assignee=mine`);
    assert.deepEqual(await taskRows(), ['Renew the servicing licence | Sam Servicer (you)', 'Order the appraisal | Sam Servicer (you)', 'Prepare the audit | Sam Servicer (you)']);
  });

  it("a loan's task form chooses the assignee too, and the loan's tasks say whom they are for", async () => {
    await page.goto(`${server.url}/dashboard/loans/${loanId}`);
    assert.deepEqual(await options(), ['Unassigned', 'Sam Servicer (you)', 'Abe Archer', 'Kim Clerk']);
    await page.getByLabel('Task', { exact: true }).fill('Inspect the property');
    await page.getByLabel('Assignee', { exact: true }).selectOption({ label: 'Sam Servicer (you)' });
    await page.getByRole('button', { name: 'Add task' }).click();
    await page.waitForURL(/done=task-added/);
    assert.deepEqual(await assigneeOf('Inspect the property'), [sam]);
    const item = page.locator('#tasks li', { hasText: 'Inspect the property' });
    assert.match(((await item.textContent()) ?? '').replace(/\s+/g, ' '), /Inspect the property for Sam Servicer \(you\)/);
    // A task of no one's says so (session 43: before, it said nothing): "Call the borrower" was unassigned above.
    const nobodys = page.locator('#tasks li', { hasText: 'Call the borrower' });
    assert.match(((await nobodys.textContent()) ?? '').replace(/\s+/g, ' '), /Call the borrower due 2026-03-25 unassigned/);
    assert.deepEqual(await seriousAccessibilityViolations(page), []);
  });

  it('saw no script error or unexpected refusal', () => {
    assert.deepEqual(pageProblems, []);
  });
});
