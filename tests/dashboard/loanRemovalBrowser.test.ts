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
 * A loan entered by mistake, deleted from its page (session 41). The dashboard had no way to
 * remove a loan: a lead typed twice stayed in the list for ever. Now a loan without money history
 * has a Delete loan button leading to a confirmation page that says what goes with it; a loan with
 * a payment has no button, and its confirmation address is a 409 page saying what it holds.
 * Business date 2026-03-20.
 */
const CHROMIUM = new ChromiumSuite("the loan removal's browser test", 'tests/dashboard/loanRemovalBrowser.test.ts');
const PASSWORD = 'correct horse battery';

let database: TestDatabase;
let server: TestServer;
let browser: Browser;
let page: Page;
let accountId = '';
let typedTwice = '';
let paid = '';
const pageProblems: string[] = [];

async function countFor(table: string, loanId: string): Promise<number> {
  return (await database.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE account_id = $1 AND loan_id = $2`, [accountId, loanId])).rows[0]!.n;
}

describe('Deleting a loan entered by mistake (Chromium)', () => {
  if (CHROMIUM.skipped('deletes a lead typed twice from its page, and offers no Delete for a paid loan')) return;

  before(async () => {
    database = await openTestDatabase();
    await installTestClock(database.db);
    await setTestClock(database.db, '2026-03-20');
    accountId = (await database.db.query<{ id: string }>(`INSERT INTO accounts (slug, name) VALUES ('removal', 'Removal & Co') RETURNING id`)).rows[0]!.id;
    await createAdmin(database.db, accountId, { email: 'clerk@example.test', password: PASSWORD, name: 'Casey Clerk' });
    typedTwice = (await createLoan(database.db, accountId, { Name: 'Elm St bridge (typed twice)', Amount: 12000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-02-01' })).id;
    await createLoan(database.db, accountId, { Name: 'Elm St bridge', Amount: 12000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-02-01' });
    paid = (await createLoan(database.db, accountId, { Name: 'Oak Ave', Amount: 5000, Rate: 10, Term: 6, Frequency: 'monthly', Date_Funded: '2026-01-10', Status: 'servicing' })).id;
    await database.db.query(`INSERT INTO tasks (account_id, loan_id, name) VALUES ($1, $2, 'Call the borrower')`, [accountId, typedTwice]);
    await database.db.query(`INSERT INTO comments (account_id, loan_id, text) VALUES ($1, $2, 'typed twice by mistake')`, [accountId, typedTwice]);
    await database.db.query(`INSERT INTO payments (account_id, loan_id, date, amount) VALUES ($1, $2, '2026-02-10', 857.74)`, [accountId, paid]);
    server = await startTestServer(database.db);
    browser = await CHROMIUM.launch();
    // The 409 page of a paid loan's Delete address is provoked on purpose.
    ({ page } = await openWatchedPage(browser, { viewport: { width: 1366, height: 768 }, problems: pageProblems, expectedRefusal: (response) => response.status() === 409 && response.url().endsWith('/delete') }));
    await page.goto(`${server.url}/dashboard/login`);
    await logInToDashboard(page, server.url, 'clerk@example.test', PASSWORD);
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    await database?.close();
  });

  it("the lead's page has Delete loan; its confirmation names what goes with it; Delete removes it and the list says so", async () => {
    await page.goto(`${server.url}/dashboard/loans/${typedTwice}`);
    await page.getByRole('link', { name: 'Delete loan' }).click();
    await page.waitForURL(/\/delete$/);
    assert.equal((await page.getByRole('heading', { level: 1 }).textContent())?.trim(), 'Delete this loan?');
    const explanation = (await page.locator('main p', { hasText: 'can be deleted' }).textContent())?.replace(/\s+/g, ' ').trim();
    assert.match(explanation ?? '', / With it go its 12 schedule rows, 1 task and 1 comment\. Its borrowers, guarantors, documents and addresses stay in the account\./);
    assert.deepEqual(await seriousAccessibilityViolations(page), []);
    assert.equal(await countFor('schedules', typedTwice), 12, 'nothing removed before the confirmation');

    await page.getByRole('button', { name: 'Delete loan' }).click();
    await page.waitForURL(/\/dashboard\/loans\?done=loan-deleted$/);
    assert.equal((await page.getByRole('status').first().textContent())?.trim(), 'Loan deleted, with its schedule, tasks, comments and links.');
    const names = (await page.locator('table tbody tr td:first-child').allTextContents()).map((name) => name.trim());
    assert.deepEqual(names.sort(), ['Elm St bridge', 'Oak Ave']);
    assert.equal((await database.db.query('SELECT 1 FROM loans WHERE account_id = $1 AND id = $2', [accountId, typedTwice])).rows.length, 0);
    for (const table of ['schedules', 'tasks', 'comments']) assert.equal(await countFor(table, typedTwice), 0, table);
  });

  it('a loan with a payment has no Delete loan, and its Delete address is a 409 page saying what it holds; nothing is removed', async () => {
    await page.goto(`${server.url}/dashboard/loans/${paid}`);
    assert.equal(await page.getByRole('link', { name: 'Delete loan' }).count(), 0);
    assert.equal(await page.getByRole('link', { name: 'Edit loan' }).count(), 1);
    const refused = await page.goto(`${server.url}/dashboard/loans/${paid}/delete`);
    assert.equal(refused?.status(), 409);
    const body = (await page.locator('main').textContent())?.replace(/\s+/g, ' ') ?? '';
    assert.match(body, /The loan Oak Ave holds money history \(1 payment, 2 distribution lines\), which is never deleted: reverse its payments and waive its fees instead\./);
    assert.equal(await countFor('payments', paid), 1);
    assert.equal(await countFor('schedules', paid), 6);
  });

  it('saw no script error or unexpected refusal', () => {
    assert.deepEqual(pageProblems, []);
  });
});
