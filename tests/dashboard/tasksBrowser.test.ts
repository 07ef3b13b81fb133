import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { createAdmin } from '../../app/accounts.js';
import { createLoan } from '../../app/loanWrites.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';
import { startTestServer, type TestServer } from '../support/http.js';
import { installTestClock, setTestClock } from '../support/testClock.js';
import { ChromiumSuite, openWatchedPage, logInToDashboard } from '../support/chromium.js';
import { accessibilityViolations, seriousAccessibilityViolations } from '../support/axe.js';

/**
 * A servicer's account tasks in Chromium (session 40). A task may belong to no loan (README "Tasks
 * without a loan"), and the overview listed such tasks as "no loan (an account task)" — with no
 * page, route or button to complete, edit or add one: the dashboard's Complete was on a loan's page
 * only. Now the overview's cell links to the Tasks page, which lists every open task (the
 * account's and the loans'), completes and edits any of them, and adds an account task, with a
 * loan's task form's rules (a name, a due day from 1900 to 2999). Business date 2026-03-20.
 */
const CHROMIUM = new ChromiumSuite("the account tasks' browser test", 'tests/dashboard/tasksBrowser.test.ts');
const PASSWORD = 'correct horse battery';
const TODAY = '2026-03-20';

let database: TestDatabase;
let server: TestServer;
let browser: Browser;
let page: Page;
let accountId = '';
const pageProblems: string[] = [];

/** The open tasks' rows as `due | task | loan`. */
async function taskRows(): Promise<string[]> {
  const cells = (await page.locator('.tasks-table tbody tr td').allTextContents()).map((cell) => cell.trim());
  const lines: string[] = [];
  // Six cells a row: due, task, status, loan, assignee (migration 0087), actions.
  for (let i = 0; i < cells.length; i += 6) lines.push(`${cells[i]} | ${cells[i + 1]} | ${cells[i + 3]}`);
  return lines;
}

async function statusOf(name: string): Promise<string[]> {
  return (await database.db.query<{ status: string }>('SELECT status FROM tasks WHERE account_id = $1 AND name = $2', [accountId, name])).rows.map((r) => r.status);
}

describe('Account tasks on the Tasks page (Chromium)', () => {
  if (CHROMIUM.skipped('completes, edits and adds account tasks in Chromium')) return;

  before(async () => {
    database = await openTestDatabase();
    await installTestClock(database.db);
    await setTestClock(database.db, TODAY);
    accountId = (await database.db.query<{ id: string }>(`INSERT INTO accounts (slug, name) VALUES ('tasks', 'Tasks & Co') RETURNING id`)).rows[0]!.id;
    await createAdmin(database.db, accountId, { email: 'servicer@example.test', password: PASSWORD, name: 'Sam Servicer' });
    const loan = await createLoan(database.db, accountId, { Name: 'Elm St bridge', Amount: 12000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-02-01', Status: 'servicing' });
    await database.db.query(
      `INSERT INTO tasks (account_id, loan_id, name, date_due) VALUES ($1, NULL, 'Renew the servicing licence', '2026-03-10'), ($1, $2, 'Call the borrower', '2026-03-25'), ($1, NULL, 'Prepare the audit', NULL)`,
      [accountId, loan.id],
    );
    server = await startTestServer(database.db);
    browser = await CHROMIUM.launch();
    // The refusals the test provokes (a due day in the year 26, a blank name) are 400 pages.
    ({ page } = await openWatchedPage(browser, { viewport: { width: 1366, height: 768 }, problems: pageProblems, expectedRefusal: (response) => response.status() === 400 && response.request().method() === 'POST' }));
    await page.goto(`${server.url}/dashboard/login`);
    await logInToDashboard(page, server.url, 'servicer@example.test', PASSWORD);
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    await database?.close();
  });

  it("the overview's account task leads to the Tasks page, which lists every open task, the account's and the loan's, soonest due first", async () => {
    await page.goto(`${server.url}/dashboard`);
    await page.getByRole('link', { name: 'no loan (an account task)' }).first().click();
    await page.waitForURL(`${server.url}/dashboard/tasks`);
    assert.deepEqual(await taskRows(), [
      'overdue: due 2026-03-10 | Renew the servicing licence | no loan (an account task)',
      'due 2026-03-25 | Call the borrower | Elm St bridge',
      'no due date | Prepare the audit | no loan (an account task)',
    ]);
    assert.equal((await page.locator('#tasks-status').textContent())?.trim(), 'Tasks 1–3 of 3; 2 of all open tasks belong to no loan.');
    assert.equal(await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Tasks' }).getAttribute('aria-current'), 'page');
    assert.deepEqual(await seriousAccessibilityViolations(page), []);
  });

  it('completes an account task: it leaves the list, and the database has it completed', async () => {
    await page.getByRole('button', { name: 'Complete “Renew the servicing licence”' }).click();
    await page.waitForURL(/done=task-completed/);
    assert.equal((await page.locator('#outcome').textContent())?.trim(), 'Task completed.');
    assert.deepEqual(await taskRows(), ['due 2026-03-25 | Call the borrower | Elm St bridge', 'no due date | Prepare the audit | no loan (an account task)']);
    assert.deepEqual(await statusOf('Renew the servicing licence'), ['completed']);
  });

  it("edits an account task: a due day in the year 26 is refused in words with what was typed kept; then saved", async () => {
    await page.getByRole('link', { name: 'Edit “Prepare the audit”' }).click();
    await page.waitForURL(/\/edit$/);
    await page.getByLabel('Task', { exact: true }).fill('Prepare the annual audit');
    await page.getByLabel('Due', { exact: true }).fill('0026-04-30');
    await page.getByRole('button', { name: 'Save task' }).click();
    assert.equal((await page.locator('#outcome').textContent())?.trim(), 'Due: expected a day as YYYY-MM-DD from 1900 to 2999.');
    assert.equal(await page.getByLabel('Task', { exact: true }).inputValue(), 'Prepare the annual audit');
    assert.deepEqual(await statusOf('Prepare the annual audit'), [], 'nothing saved');
    await page.getByLabel('Due', { exact: true }).fill('2026-04-30');
    await page.getByRole('button', { name: 'Save task' }).click();
    await page.waitForURL(/done=task-saved/);
    assert.deepEqual(await taskRows(), ['due 2026-03-25 | Call the borrower | Elm St bridge', 'due 2026-04-30 | Prepare the annual audit | no loan (an account task)']);
  });

  it('adds an account task (a blank name refused first), and completes the loan’s task from the same page', async () => {
    await page.getByLabel('Task', { exact: true }).fill('   ');
    await page.getByLabel('Due', { exact: true }).fill('2026-03-21');
    // The browser's own `required` takes a blank name; spaces reach the server, which refuses them.
    await page.getByRole('button', { name: 'Add task' }).click();
    assert.equal((await page.locator('#outcome').textContent())?.trim(), 'Task: give the task a name.');
    assert.equal(await page.getByLabel('Due', { exact: true }).inputValue(), '2026-03-21', 'what was typed is kept');
    await page.getByLabel('Task', { exact: true }).fill('File the quarterly report');
    await page.getByRole('button', { name: 'Add task' }).click();
    await page.waitForURL(/done=task-added/);
    assert.equal((await page.locator('#outcome').textContent())?.trim(), 'Task added.');
    const made = await database.db.query<{ loan_id: string | null; date_due: string; status: string }>(`SELECT loan_id, date_due::text, status FROM tasks WHERE account_id = $1 AND name = 'File the quarterly report'`, [accountId]);
    assert.deepEqual(made.rows, [{ loan_id: null, date_due: '2026-03-21', status: 'open' }]);
    await page.getByRole('button', { name: 'Complete “Call the borrower”' }).click();
    await page.waitForURL(/done=task-completed/);
    assert.deepEqual(await taskRows(), ['due 2026-03-21 | File the quarterly report | no loan (an account task)', 'due 2026-04-30 | Prepare the annual audit | no loan (an account task)']);
    assert.deepEqual(await statusOf('Call the borrower'), ['completed']);
  });

  it('fits a 390 px screen: the tasks table scrolls in its own named, focusable region, not the page', async () => {
    // Before: the table stood bare in its card, so the page was about 900 px wide on a phone and the
    // table had no name (dashboard/README "Small screens and keyboards", "Every table has a name").
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await page.goto(`${server.url}/dashboard/tasks?assignee=everyone`);
      // In the page (this file has no DOM types): the document's width against the window's.
      assert.ok(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth'), 'no sideways scrolling of the page at 390 px');
      const region = page.getByRole('region', { name: 'Open tasks of everyone' });
      assert.equal(await region.getAttribute('tabindex'), '0', 'the scrolling region takes the focus, so a keyboard can scroll it');
      assert.equal(await region.locator('table.tasks-table').count(), 1, 'the tasks table is inside it');
      assert.equal((await page.locator('.tasks-table caption').textContent())?.trim(), 'Open tasks of everyone');
      assert.ok(await region.evaluate((box) => box.scrollWidth > box.clientWidth), 'the region, not the page, scrolls sideways');
      await database.db.query(`UPDATE tasks SET assignee_id = (SELECT id FROM admins WHERE account_id = $1) WHERE account_id = $1 AND name = 'Prepare the annual audit'`, [accountId]);
      await page.goto(`${server.url}/dashboard/tasks?assignee=mine`);
      assert.equal((await page.locator('.tasks-table caption').textContent())?.trim(), 'Open tasks assigned to you');
      assert.deepEqual(await accessibilityViolations(page, ['moderate', 'serious', 'critical']), []);
    } finally {
      await page.setViewportSize({ width: 1366, height: 768 });
    }
  });

  it('saw no script error or unexpected refusal', () => {
    assert.deepEqual(pageProblems, []);
  });
});
