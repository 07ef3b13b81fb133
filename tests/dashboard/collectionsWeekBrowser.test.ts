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
 * A collections clerk's morning in Chromium (the audit of session 39), on a business date fixed at
 * 2026-03-20, under a product with an arrears tolerance of 5.00 and an NSF fee of 25.00:
 *
 * - 51 loans alike — 12,000.00 at 12 % for 12 months, funded 2026-02-01, nothing paid — each 19 days
 *   past due (SPEC §12 R3: row 1 due 2026-03-01 unpaid) with 1,066.19 past due and row 1's late
 *   fee (R4: 5 % of 1,066.19 = 53.31, dated 03-01 + 10 + 1 = 03-12);
 * - 25 loans funded 2026-01-25 whose row 1 (due 02-25) was paid 3.00 short: not late (the
 *   tolerance forgives it), though their oldest unpaid row is older than the late loans'.
 *
 * The overview lists the 25 most overdue late loans (it chose among the 25 oldest unpaid rows, all
 * forgiven, and said "No loan is past due"). The queue's two pages hold each late loan once (equal
 * sort keys, ties by id); the clerk opens the loan on page 2, posts what is past due, and the loan
 * leaves the queue at once; reloading page 2, now past the last page, says where the loans are (it
 * said "Late loans 51–50 of 50"); reversing the payment as NSF puts the loan back, same day.
 */
const CHROMIUM = new ChromiumSuite("the collections clerk's browser test", 'tests/dashboard/collectionsWeekBrowser.test.ts');
const PASSWORD = 'correct horse battery';
const TODAY = '2026-03-20';
const LOANS = 51;

let database: TestDatabase;
let server: TestServer;
let browser: Browser;
let page: Page;
const pageProblems: string[] = [];
const loanIds: string[] = [];

/** The loans linked from the queue's table, in order. */
async function queueLoans(): Promise<string[]> {
  return page
    .locator('.queue-table tbody tr td:first-child a')
    .evaluateAll((links) => links.map((link) => (link as unknown as { getAttribute(name: string): string }).getAttribute('href').slice('/dashboard/loans/'.length)));
}

async function queueStatus(): Promise<string> {
  return ((await page.locator('#queue-status').textContent()) ?? '').trim();
}

describe("A collections clerk's morning (Chromium)", () => {
  if (CHROMIUM.skipped("walks the collections queue in Chromium")) return;

  before(async () => {
    database = await openTestDatabase();
    await installTestClock(database.db);
    await setTestClock(database.db, TODAY);
    const account = (await database.db.query<{ id: string }>(`INSERT INTO accounts (slug, name) VALUES ('clerk', 'Clerk & Co') RETURNING id`)).rows[0]!.id;
    await database.db.query(`INSERT INTO products (account_id, name, is_default, nsf_fee, arrears_tolerance) VALUES ($1, 'Default', true, 25.00, 5.00)`, [account]);
    await createAdmin(database.db, account, { email: 'clerk@example.test', password: PASSWORD, name: 'Cora Clerk' });
    for (let i = 1; i <= LOANS; i++) {
      const made = await createLoan(database.db, account, { Name: `Bridge ${String(i).padStart(2, '0')}`, Amount: 12000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-02-01', Status: 'servicing' });
      loanIds.push(made.id);
    }
    for (let i = 1; i <= 25; i++) {
      const short = await createLoan(database.db, account, { Name: `Short ${String(i).padStart(2, '0')}`, Amount: 12000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-25', Status: 'servicing' });
      await database.db.query(`INSERT INTO payments (account_id, loan_id, date, amount, type, method) VALUES ($1, $2, '2026-02-25', 1063.19, 'regular', 'ach')`, [account, short.id]);
    }
    server = await startTestServer(database.db);
    browser = await CHROMIUM.launch();
    ({ page } = await openWatchedPage(browser, { viewport: { width: 1366, height: 768 }, problems: pageProblems }));
    await page.goto(`${server.url}/dashboard/login`);
    await logInToDashboard(page, server.url, 'clerk@example.test', PASSWORD);
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    await database?.close();
  });

  let pageTwo = '';
  let cured = '';

  it('the overview lists the 25 most overdue late loans, not the loans short within the tolerance, and says of how many', async () => {
    await page.goto(`${server.url}/dashboard`);
    const late = page.getByRole('region', { name: 'Late loans' });
    const shown = await late
      .locator('tbody tr td:first-child a')
      .evaluateAll((links) => links.map((link) => (link as unknown as { getAttribute(name: string): string }).getAttribute('href').slice('/dashboard/loans/'.length)));
    // Equal days past due: the queue's first 25 (ties by id).
    assert.deepEqual(shown, [...loanIds].sort().slice(0, 25));
    assert.deepEqual(new Set(await late.locator('tbody tr td:nth-child(2)').allTextContents()), new Set(['19']));
    assert.equal((await late.locator('p.hint').textContent())?.trim(), `The 25 most overdue of ${LOANS} late loans.`);
  });

  it('pages through 51 loans of equal days past due: each shown once, none skipped, ordered by id', async () => {
    await page.goto(`${server.url}/dashboard/collections`);
    assert.equal(await queueStatus(), `Late loans 1–50 of ${LOANS}.`);
    const first = await queueLoans();
    const days = await page.locator('.queue-table tbody tr td:nth-child(3)').allTextContents();
    assert.deepEqual(new Set(days), new Set(['19']));
    assert.deepEqual(new Set(await page.locator('.queue-table tbody tr td:nth-child(5)').allTextContents()), new Set(['$1,066.19']));
    await page.getByRole('navigation', { name: 'Late loan pages' }).getByRole('link', { name: 'Next' }).click();
    await page.waitForURL(/page=2/);
    pageTwo = page.url();
    assert.equal(await queueStatus(), `Late loans 51–51 of ${LOANS}.`);
    const second = await queueLoans();
    assert.deepEqual([...first, ...second], [...loanIds].sort());
    cured = second[0]!;
  });

  it('posts what is past due on the loan of page 2: it leaves the queue, and page 2 reloaded says where the loans are', async () => {
    await page.locator(`.queue-table a[href="/dashboard/loans/${cured}"]`).click();
    await page.waitForURL(`${server.url}/dashboard/loans/${cured}`);
    assert.equal((await page.locator('[data-balance="days_past_due"]').textContent())?.trim(), `19 as of ${TODAY}`);
    await page.getByLabel('Date', { exact: true }).fill(TODAY);
    await page.getByLabel('Amount').fill('1066.19');
    await page.getByRole('button', { name: 'Post payment' }).click();
    await page.waitForURL(/done=payment-posted/);

    await page.goto(pageTwo);
    assert.equal(await queueStatus(), `No late loan on page 2: ${LOANS - 1} late loans are on page 1.`);
    assert.deepEqual(await queueLoans(), []);
    assert.deepEqual(await seriousAccessibilityViolations(page), []);
    // The pager past the last page links to the last (`pager`: "No page 2: the last is page 1").
    await page.getByRole('navigation', { name: 'Late loan pages' }).getByRole('link', { name: 'Last page (1)' }).click();
    await page.waitForURL(`${server.url}/dashboard/collections`);
    assert.equal(await queueStatus(), `Late loans 1–50 of ${LOANS - 1}.`);
    assert.deepEqual(await queueLoans(), loanIds.filter((id) => id !== cured).sort());
  });

  it('reverses the payment as NSF: the loan is back in the queue, 19 days past due, with the NSF fee', async () => {
    await page.goto(`${server.url}/dashboard/loans/${cured}`);
    await page.getByRole('link', { name: /^Reverse the payment of/ }).first().click();
    await page.waitForURL(/\/reverse$/);
    await page.getByLabel('Reason (required)').selectOption('nsf');
    await page.getByRole('button', { name: 'Reverse payment' }).click();
    await page.waitForURL(/done=payment-reversed/);

    await page.goto(pageTwo);
    assert.equal(await queueStatus(), `Late loans 51–51 of ${LOANS}.`);
    assert.deepEqual(await queueLoans(), [cured]);
    const cells = await page.locator('.queue-table tbody tr td').allTextContents();
    assert.equal(cells[2], '19');
    assert.equal(cells[4], '$1,066.19');
    // Row 1's late fee (5 % of 1,066.19, dated 2026-03-12) and the NSF fee of the reversal.
    assert.equal(cells[6], '$78.31');
  });

  it('saw no script error or unexpected refusal', () => {
    assert.deepEqual(pageProblems, []);
  });
});
