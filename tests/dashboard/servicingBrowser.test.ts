import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import type { TestDatabase } from '../support/testDatabase.js';
import { startTestServer, type TestServer } from '../support/http.js';
import { openSeededTestDatabase, type SeededAccount } from '../support/seededService.js';
import { ChromiumSuite, openWatchedPage, logInToDashboard, pageScreenshot } from '../support/chromium.js';
import { seriousAccessibilityViolations } from '../support/axe.js';

/**
 * Issue 17, Done-when 1 and 2, in Chromium: a servicer's day from a fresh start — log in, find a
 * loan by its borrower's name, open it, post a payment and see the next row move, reverse it
 * (confirm step), add and complete a task, add a comment, create a loan with a borrower and see
 * its schedule, open the borrower's page. axe-core runs on every page (no serious or critical
 * violation), each page is saved as a screenshot in tests/artifacts/dashboard/servicing/, and the
 * pages are checked at 390 px wide (no sideways scrolling of the page) and from the keyboard.
 * Issue 29, Done-when 6: the created reference loan's ledger — balances, the payments'
 * allocations (opened), a payoff quote for 2026-03-31, and "Post this payoff" closing the loan.
 */
const CHROMIUM = new ChromiumSuite("the servicing pages' browser test", 'tests/dashboard/servicingBrowser.test.ts');
const SCREENSHOTS = fileURLToPath(new URL('../artifacts/dashboard/servicing/', import.meta.url));
const PASSWORD = 'correct horse battery'; // seedAccount's admin password

let database: TestDatabase;
let server: TestServer;
let seeded: SeededAccount;
let browser: Browser;
let page: Page;
/** Problems the page reported (script errors, failed requests): there must be none. */
const pageProblems: string[] = [];
/** The page's document, in `page.evaluate` callbacks (tests are type-checked without the DOM library). */
interface PageDocument {
  readonly documentElement: { readonly scrollWidth: number; readonly clientWidth: number };
  readonly activeElement: { readonly id: string; readonly textContent: string | null } | null;
}
/** Every page checked with axe, by screenshot name. */
const checkedPages: string[] = [];

/** The page as it is now: no serious or critical axe violation; a full-page screenshot with `SCREENSHOTS=all`. */
async function checkPage(name: string): Promise<void> {
  const violations = await seriousAccessibilityViolations(page);
  assert.deepEqual(violations, [], `axe on ${name} (${page.url()})`);
  await pageScreenshot(page, `${SCREENSHOTS}${String(checkedPages.length + 1).padStart(2, '0')}-${name}.png`);
  checkedPages.push(name);
}

async function nextRowNumber(): Promise<number> {
  return Number(await page.locator('#schedule tr.is-next').getAttribute('data-row'));
}

describe('A servicer’s day in Chromium', () => {
  if (CHROMIUM.skipped('walks the servicing pages in Chromium')) return;

  let loanId = '';
  let borrowerName = '';
  /** The loan the walk creates: SPEC §7's reference loan. */
  let createdLoanPath = '';

  before(async () => {
    rmSync(SCREENSHOTS, { recursive: true, force: true });
    mkdirSync(SCREENSHOTS, { recursive: true });
    ({ database, seeded: [seeded] } = await openSeededTestDatabase([{ scale: 0.01 }]));
    server = await startTestServer(database.db);
    // A servicing loan with at least three rows to pay, and its first borrower.
    const { rows } = await database.db.query<{ id: string; name: string }>(
      `SELECT l.id, p.name FROM loans l
         JOIN borrows b ON b.account_id = l.account_id AND b.loan_id = l.id
         JOIN people p ON p.account_id = b.account_id AND p.id = b.person_id
        WHERE l.account_id = $1 AND l.status = 'servicing'
          AND EXISTS (SELECT 1 FROM schedules s WHERE s.account_id = l.account_id AND s.loan_id = l.id AND s.is_next
                        AND s.number + 3 <= (SELECT max(number) FROM schedules t WHERE t.account_id = l.account_id AND t.loan_id = l.id))
        ORDER BY l.id LIMIT 1`,
      [seeded.account.id],
    );
    loanId = rows[0]!.id;
    borrowerName = rows[0]!.name;
    browser = await CHROMIUM.launch();
    ({ page } = await openWatchedPage(browser, {
      viewport: { width: 1280, height: 900 },
      problems: pageProblems,
      // The one refusal the walk provokes: the create form with a wrong Term (400, shown again).
      expectedRefusal: (response) => response.status() === 400 && response.request().method() === 'POST' && response.url() === `${server.url}/dashboard/loans`,
    }));
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    await database?.close();
  });

  it('logs in and finds the loan by its borrower’s name', async () => {
    await page.goto(`${server.url}/dashboard/login`);
    await checkPage('login');
    await logInToDashboard(page, server.url, `admin@${seeded.account.slug}.test`, PASSWORD);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Loans' }).click();
    await page.waitForURL(/\/dashboard\/loans$/);
    await checkPage('loans');
    await page.getByLabel('Search').fill(borrowerName);
    await page.getByRole('button', { name: 'Show loans' }).click();
    await page.waitForURL(/\/dashboard\/loans\?q=/);
    await checkPage('loans-search');
    const link = page.locator(`a[href="/dashboard/loans/${loanId}"]`);
    assert.equal(await link.count(), 1, 'the borrower’s loan is in the results');
    await link.click();
    await page.waitForURL(`${server.url}/dashboard/loans/${loanId}`);
    await checkPage('loan');
  });

  it('posts a payment and sees the next row move, then reverses it after a confirmation', async () => {
    const before = await nextRowNumber();
    const payment = await page.locator('#schedule tr.is-next td.num').first().textContent();
    // The amount field offers the next row's payment (the cell shows it in the account's currency).
    assert.equal((await page.getByLabel('Amount').inputValue()).replace(/,/g, ''), payment!.replace(/[,$]/g, ''));
    await page.getByRole('button', { name: 'Post payment' }).click();
    await page.waitForURL(/done=payment-posted/);
    assert.equal(await page.getByRole('status').filter({ hasText: 'Payment posted.' }).count(), 1);
    assert.equal(await nextRowNumber(), before + 1);
    assert.equal(await page.locator(`#schedule tr[data-row="${before}"]`).getAttribute('class'), 'is-covered');
    await checkPage('loan-payment-posted');

    await page.getByRole('link', { name: /^Reverse the payment of/ }).first().click();
    await page.waitForURL(/\/reverse$/);
    await checkPage('reverse-confirm');
    await page.getByLabel('Reason (required)').selectOption('error');
    await page.getByRole('button', { name: 'Reverse payment' }).click();
    await page.waitForURL(/done=payment-reversed/);
    assert.equal(await nextRowNumber(), before);
    assert.match((await page.locator('tr.is-reversed').first().textContent()) ?? '', /Reversed \d{4}-\d\d-\d\d \(error\)/);
    await checkPage('loan-payment-reversed');
  });

  it('adds a task and completes it, and adds a comment signed by the admin', async () => {
    await page.getByLabel('Task', { exact: true }).fill('Call about insurance renewal');
    await page.getByRole('button', { name: 'Add task' }).click();
    await page.waitForURL(/done=task-added/);
    const task = page.locator('li.item', { hasText: 'Call about insurance renewal' });
    assert.match((await task.textContent()) ?? '', /open/);
    await task.getByRole('button', { name: 'Complete “Call about insurance renewal”' }).click();
    await page.waitForURL(/done=task-completed/);
    assert.match((await page.locator('li.item', { hasText: 'Call about insurance renewal' }).textContent()) ?? '', /completed/);

    await page.getByLabel('Comment', { exact: true }).fill('Borrower confirmed the new insurer by phone.');
    await page.getByRole('button', { name: 'Add comment' }).click();
    await page.waitForURL(/done=comment-added/);
    const comment = page.locator('li.comment', { hasText: 'Borrower confirmed the new insurer by phone.' });
    assert.match((await comment.textContent()) ?? '', /Avery Admin/);
    await checkPage('loan-task-comment');
  });

  it('creates a loan with a borrower, sees its schedule and opens the borrower’s page', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Loans' }).click();
    await page.getByRole('link', { name: 'New loan' }).click();
    await page.waitForURL(/\/dashboard\/loans\/new$/);
    await checkPage('loan-new');
    await page.getByLabel('Name (required)').fill('Elm St bridge');
    await page.getByLabel('Amount').fill('100000');
    await page.getByLabel('Rate').fill('12');
    await page.getByLabel('Term').fill('twelve');
    await page.getByLabel('Frequency').selectOption('monthly');
    await page.getByLabel('Date Funded').fill('2026-01-15');
    await page.getByLabel('Status').selectOption('servicing');
    await page.getByLabel('Borrower name').fill('Grace Hopper');
    await page.getByLabel('Borrower e-mail').fill('grace@example.com');
    await page.getByRole('button', { name: 'Create loan' }).click();
    // The REST rules refuse the term, next to its field; what was typed is kept.
    assert.match((await page.locator('#loan-field-Term-error').textContent()) ?? '', /^Term: expected a whole number from 1 to 1200, got "twelve"/);
    assert.equal(await page.getByLabel('Term').getAttribute('aria-invalid'), 'true');
    assert.equal(await page.getByLabel('Borrower name').inputValue(), 'Grace Hopper');
    await checkPage('loan-new-error');
    await page.getByLabel('Term').fill('12');
    await page.getByRole('button', { name: 'Create loan' }).click();
    await page.waitForURL(/done=created/);
    createdLoanPath = new URL(page.url()).pathname;
    assert.equal(await page.locator('#schedule tbody tr').count(), 12);
    assert.match((await page.locator('#schedule tr[data-row="1"]').textContent()) ?? '', /8,884\.88/);
    assert.equal(await page.locator('#schedule tr.is-next').getAttribute('data-row'), '1');
    await checkPage('loan-created');
    await page.getByRole('link', { name: 'Grace Hopper' }).click();
    await page.waitForURL(/\/dashboard\/people\/[0-9a-f-]{36}$/);
    assert.equal(await page.getByRole('heading', { level: 1 }).textContent().then((text) => text?.trim().startsWith('Grace Hopper')), true);
    assert.equal(await page.locator('section', { has: page.locator('#borrows-heading') }).getByRole('link', { name: 'Elm St bridge' }).count(), 1);
    await checkPage('person');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'People' }).click();
    await page.waitForURL(/\/dashboard\/people$/);
    await checkPage('people');
  });

  it('shows the ledger: balances, each payment’s allocation, a payoff quote for a chosen day; posting the payoff closes the loan', async () => {
    await page.goto(`${server.url}${createdLoanPath}`);
    for (const date of ['2026-02-15', '2026-03-15']) {
      await page.getByLabel('Date', { exact: true }).fill(date);
      await page.getByLabel('Amount').fill('8884.88');
      await page.getByRole('button', { name: 'Post payment' }).click();
      await page.waitForURL(/done=payment-posted/);
    }
    const balances = page.getByRole('region', { name: 'Balances' });
    assert.equal((await balances.locator('[data-balance="principal_outstanding"]').textContent())?.trim(), '$84,151.39');
    assert.equal((await balances.locator('[data-balance="oldest_unpaid_due"]').textContent())?.trim(), '2026-04-15');
    // The March payment's allocation, opened: row 2's interest and principal.
    const march = page.locator('#payments tbody tr[data-payment]', { has: page.locator('td', { hasText: /^2026-03-15$/ }) });
    await march.locator('summary').click();
    assert.deepEqual(await march.locator('table.allocation-lines tbody tr').allTextContents(), ['row 2interest$921.15', 'row 2principal$7,963.73']);
    // A quote for 2026-03-31 (SPEC §12 R5: 84,600.20; accrued 448.81; per diem 28.05).
    await page.getByLabel('Payoff date').fill('2026-03-31');
    await page.getByRole('button', { name: 'Quote' }).click();
    await page.waitForURL(/quote_date=2026-03-31/);
    const quote = page.getByRole('region', { name: 'Payoff quote' });
    assert.equal((await quote.locator('[data-quote="payoff"]').textContent())?.trim(), '$84,600.20');
    assert.equal((await quote.locator('[data-quote="accrued_interest"]').textContent())?.trim(), '$448.81');
    assert.equal((await quote.locator('[data-quote="per_diem"]').textContent())?.trim(), '$28.05');
    await page.locator('#payments tbody tr[data-payment]', { has: page.locator('td', { hasText: /^2026-03-15$/ }) }).locator('summary').click();
    await checkPage('loan-ledger-quote');

    await quote.getByRole('button', { name: 'Post this payoff: $84,600.20 on 2026-03-31' }).click();
    await page.waitForURL(/done=payoff-posted-closed/);
    assert.equal(await page.getByRole('status').filter({ hasText: 'Payoff posted: the loan is paid off and closed.' }).count(), 1);
    assert.match((await balances.locator('dd').first().textContent()) ?? '', /closed\s+closed on 2026-03-31/);
    assert.equal((await balances.locator('[data-balance="principal_outstanding"]').textContent())?.trim(), '$0.00');
    const payoff = page.locator('#payments tbody tr[data-payment]', { has: page.locator('td', { hasText: /^payoff$/ }) });
    await payoff.locator('summary').click();
    assert.match((await payoff.locator('summary').textContent()) ?? '', /^interest \$448\.81, principal \$84,151\.39/);
    assert.equal(await page.locator('#schedule tr.is-next').count(), 0);
    await checkPage('loan-paid-off');
  });

  it('is usable at 390 px wide: no page scrolls sideways', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const path of ['/dashboard/loans', `/dashboard/loans/${loanId}`, `${createdLoanPath}?quote_date=2026-03-31`, '/dashboard/loans/new', '/dashboard/people']) {
      await page.goto(`${server.url}${path}`);
      const overflow = await page.evaluate(() => { const { documentElement } = (globalThis as unknown as { document: PageDocument }).document; return documentElement.scrollWidth - documentElement.clientWidth; });
      assert.ok(overflow <= 0, `${path} is ${overflow}px wider than the screen`);
    }
    await page.goto(`${server.url}/dashboard/loans/${loanId}`);
    await checkPage('loan-390px');
    await page.goto(`${server.url}${createdLoanPath}`);
    await checkPage('loan-ledger-390px');
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('works from the keyboard: skip link, then the search form', async () => {
    await page.goto(`${server.url}/dashboard/loans`);
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => (globalThis as unknown as { document: PageDocument }).document.activeElement?.textContent), 'Skip to content');
    await page.keyboard.press('Enter');
    assert.equal(await page.evaluate(() => (globalThis as unknown as { document: PageDocument }).document.activeElement?.id), 'main');
    // From the top of main, Tab reaches the New loan link, then the search box; typing and Enter submits.
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => (globalThis as unknown as { document: PageDocument }).document.activeElement?.id), 'loan-search');
    await page.keyboard.type(borrowerName);
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/dashboard\/loans\?q=/);
    assert.equal(await page.locator(`a[href="/dashboard/loans/${loanId}"]`).count(), 1);
  });

  it('saw no script error or failed request, and checked every page', () => {
    assert.deepEqual(pageProblems, []);
    assert.ok(checkedPages.length >= 15, checkedPages.join(', '));
  });
});
