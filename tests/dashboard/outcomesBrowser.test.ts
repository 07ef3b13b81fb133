import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser, Locator, Page } from 'playwright-core';
import type { TestDatabase } from '../support/testDatabase.js';
import { startTestServer, type TestServer } from '../support/http.js';
import { openSeededTestDatabase, type SeededAccount } from '../support/seededService.js';
import { ChromiumSuite, openWatchedPage, logInToDashboard } from '../support/chromium.js';
import { seriousAccessibilityViolations } from '../support/axe.js';

/**
 * Issue 28, "outcome messages where the eye is", in Chromium at 1366×768: a servicer's day —
 * post a payment, have one refused, reverse one, add and
 * complete a task, comment, ask for a quote on a day that does not exist, edit the loan (a blank
 * name refused), create a loan (a blank name refused) — and after every action the message that
 * tells its outcome is inside the viewport and has the focus (pages/layout.ts, `outcome`; a
 * refused loan form focuses the field in error, its message beside it). Then screenshots of the
 * loan page, the new-loan form, Settings (API keys, Webhooks, Servicing) and the overview at 1366×768 and 1920×1080 into
 * tests/artifacts/dashboard/outcomes/, each checked by axe (no serious or critical violation).
 * Issue 31: the collections queue and its aging chart — sorted, filtered, a loan opened — checked
 * and photographed the same way.
 */
const CHROMIUM = new ChromiumSuite("the outcome messages' browser test", 'tests/dashboard/outcomesBrowser.test.ts');
const SCREENSHOTS = fileURLToPath(new URL('../artifacts/dashboard/outcomes/', import.meta.url));
const PASSWORD = 'correct horse battery'; // seedAccount's admin password
const VIEWPORT = { width: 1366, height: 768 } as const;

let database: TestDatabase;
let server: TestServer;
let seeded: SeededAccount;
let browser: Browser;
let page: Page;
const pageProblems: string[] = [];
/** The page's document, in `page.evaluate` callbacks (tests are type-checked without the DOM library). */
interface PageDocument {
  readonly activeElement: { readonly id: string } | null;
}
/** Every outcome checked, for the last test's count. */
const outcomesSeen: string[] = [];

/** Asserts that `locator` (one element) lies wholly inside the viewport as the page is now. */
async function assertInViewport(locator: Locator, what: string): Promise<void> {
  const box = await locator.boundingBox();
  assert.ok(box, `${what} is shown`);
  const viewport = page.viewportSize()!;
  assert.ok(box.y >= 0 && box.y + box.height <= viewport.height && box.x >= 0 && box.x + box.width <= viewport.width, `${what} is in the viewport: ${JSON.stringify(box)} in ${JSON.stringify(viewport)} (${page.url()})`);
}

const activeId = (): Promise<string | undefined> => page.evaluate(() => (globalThis as unknown as { document: PageDocument }).document.activeElement?.id);

/**
 * The focused element's id once `expected` has the focus, or whatever has it after 5 s: the
 * browser applies `autofocus` after the page has loaded, a moment later on a busy machine.
 */
async function focusedId(expected: string): Promise<string | undefined> {
  await page
    .waitForFunction((id) => (globalThis as unknown as { document: PageDocument }).document.activeElement?.id === id, expected, { timeout: 5_000 })
    .catch(() => undefined);
  return activeId();
}

/** The outcome box says `expected`, is in the viewport and has the focus. */
async function assertOutcome(expected: RegExp): Promise<void> {
  const box = page.locator('#outcome');
  assert.equal(await box.count(), 1, `one outcome on ${page.url()}`);
  assert.match((await box.textContent()) ?? '', expected);
  await assertInViewport(box, `the outcome ${expected}`);
  assert.equal(await focusedId('outcome'), 'outcome', `the outcome ${expected} has the focus`);
  outcomesSeen.push(String(expected));
}

/** A refused loan form: the field has the focus, and it and its message are in the viewport. */
async function assertFieldRefused(inputId: string, expected: RegExp): Promise<void> {
  assert.equal(await focusedId(inputId), inputId, `${inputId} has the focus`);
  const message = page.locator(`#${inputId}-error`);
  assert.match((await message.textContent()) ?? '', expected);
  await assertInViewport(page.locator(`#${inputId}`), `the field ${inputId}`);
  await assertInViewport(message, `the message of ${inputId}`);
  outcomesSeen.push(String(expected));
}

async function screenshots(name: string): Promise<void> {
  for (const size of [VIEWPORT, { width: 1920, height: 1080 }]) {
    await page.setViewportSize(size);
    assert.deepEqual(await seriousAccessibilityViolations(page), [], `axe on ${name} at ${size.width}×${size.height}`);
    await page.screenshot({ path: `${SCREENSHOTS}${name}-${size.width}x${size.height}.png`, fullPage: true });
  }
  await page.setViewportSize(VIEWPORT);
}

describe('Outcome messages where the eye is (Chromium)', () => {
  if (CHROMIUM.skipped('checks where the dashboard shows outcomes, in Chromium')) return;

  let loanPath = '';

  before(async () => {
    rmSync(SCREENSHOTS, { recursive: true, force: true });
    mkdirSync(SCREENSHOTS, { recursive: true });
    ({ database, seeded: [seeded] } = await openSeededTestDatabase([{ scale: 0.01 }]));
    server = await startTestServer(database.db);
    const { rows } = await database.db.query<{ id: string }>(
      `SELECT l.id FROM loans l WHERE l.account_id = $1 AND l.status = 'servicing'
          AND EXISTS (SELECT 1 FROM schedules s WHERE s.account_id = l.account_id AND s.loan_id = l.id AND s.is_next
                        AND s.number + 3 <= (SELECT max(number) FROM schedules t WHERE t.account_id = l.account_id AND t.loan_id = l.id))
        ORDER BY l.id LIMIT 1`,
      [seeded.account.id],
    );
    loanPath = `/dashboard/loans/${rows[0]!.id}`;
    browser = await CHROMIUM.launch();
    ({ page } = await openWatchedPage(browser, {
      viewport: VIEWPORT,
      problems: pageProblems,
      // The walk provokes refusals on purpose: forms answered 400, and a quote for a day that does not exist.
      expectedRefusal: (response) => response.status() === 400 && (response.request().method() === 'POST' || response.url().includes('quote_date=2026-02-30')),
    }));
    await page.goto(`${server.url}/dashboard/login`);
    await logInToDashboard(page, server.url, `admin@${seeded.account.slug}.test`, PASSWORD);
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    await database?.close();
  });

  it('a payment posted, then one refused: each outcome in view and focused', async () => {
    await page.goto(`${server.url}${loanPath}`);
    await page.getByRole('button', { name: 'Post payment' }).click();
    await page.waitForURL(/done=payment-posted/);
    await assertOutcome(/^Payment posted/);

    await page.getByLabel('Amount').fill('12.345');
    await page.getByRole('button', { name: 'Post payment' }).click();
    await page.waitForLoadState();
    await assertOutcome(/^Amount: expected an amount above 0/);
  });

  it('a reversal (its reason and date are required by the browser, so no refusal to see here)', async () => {
    await page.goto(`${server.url}${loanPath}`);
    await page.getByRole('link', { name: /^Reverse the payment of/ }).first().click();
    await page.waitForURL(/\/reverse$/);
    await page.getByLabel('Reason (required)').selectOption('error');
    await page.getByRole('button', { name: 'Reverse payment' }).click();
    await page.waitForURL(/done=payment-reversed/);
    await assertOutcome(/^Payment reversed/);
  });

  it('a task added and completed, a comment added', async () => {
    await page.getByLabel('Task', { exact: true }).fill('Order the title report');
    await page.getByRole('button', { name: 'Add task' }).click();
    await page.waitForURL(/done=task-added/);
    await assertOutcome(/^Task added\.$/);
    await page.getByRole('button', { name: 'Complete “Order the title report”' }).click();
    await page.waitForURL(/done=task-completed/);
    await assertOutcome(/^Task completed\.$/);
    await page.getByLabel('Comment', { exact: true }).fill('Title company called back.');
    await page.getByRole('button', { name: 'Add comment' }).click();
    await page.waitForURL(/done=comment-added/);
    await assertOutcome(/^Comment added\.$/);
  });

  it('a payoff quote for a day that does not exist', async () => {
    await page.goto(`${server.url}${loanPath}?quote_date=2026-02-30`);
    await assertOutcome(/^Payoff date: expected a calendar day/);
  });

  it('the edit form: a blank name refused at the field, then saved', async () => {
    await page.goto(`${server.url}${loanPath}/edit`);
    const name = await page.getByLabel('Name (required)').inputValue();
    await page.getByLabel('Name (required)').fill('   ');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.waitForLoadState();
    await assertFieldRefused('loan-field-Name', /^Name: is required: a loan needs a name that is not blank/);
    await page.getByLabel('Name (required)').fill(`${name} (renamed)`);
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.waitForURL(/done=updated/);
    await assertOutcome(/^Loan saved\.$/);
  });

  it('the new-loan form: a blank name refused at the field, then created', async () => {
    await page.goto(`${server.url}/dashboard/loans/new`);
    await page.getByLabel('Amount').fill('250000');
    await page.getByLabel('Loan Officer').fill('Dana Whitfield');
    await page.getByRole('button', { name: 'Create loan' }).click();
    await page.waitForLoadState();
    await assertFieldRefused('loan-field-Name', /^Name: is required: a loan needs a name that is not blank/);
    await page.getByLabel('Name (required)').fill('Oak Ave refinance');
    await page.getByRole('button', { name: 'Create loan' }).click();
    await page.waitForURL(/done=created/);
    await assertOutcome(/^Loan created\.$/);
  });

  it('Settings > Servicing: a minimum above the maximum refused, naming both, then saved (the loans replayed)', async () => {
    await page.goto(`${server.url}/dashboard`);
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Servicing' }).click();
    await page.waitForURL(/\/dashboard\/settings\/servicing$/);
    await page.locator('#setting-late_fee_min').fill('80');
    await page.locator('#setting-late_fee_max').fill('40');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.waitForLoadState();
    await assertOutcome(/^Not saved — late_fee_min must not exceed late_fee_max \(80\.00 > 40\.00\)$/);
    assert.equal(await page.locator('#setting-late_fee_max-error').textContent(), 'late_fee_max: late_fee_min (80.00) must not exceed late_fee_max (40.00)');
    assert.equal(await page.locator('#setting-late_fee_max').inputValue(), '40', 'what was typed is kept');
    await page.locator('#setting-late_fee_max').fill('100');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.waitForURL(/saved=/);
    await assertOutcome(/^Saved late_fee_min, late_fee_max\. The ledgers of \d+ loans were replayed with the new values\.$/);
  });

  it('Collections (issue 31): the aging chart and the queue — sorted by amount past due, filtered to a bucket, a loan opened; axe and screenshots', async () => {
    await page.goto(`${server.url}/dashboard`);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Collections' }).click();
    await page.waitForURL(/\/dashboard\/collections$/);
    assert.equal(await page.getByRole('img', { name: 'Loans in servicing per delinquency bucket' }).count(), 1, 'the chart is an image named by its title');
    assert.equal(await page.locator('th[aria-sort]').getAttribute('aria-sort'), 'descending', 'most days past due first');
    await screenshots('collections');

    const amounts = async (): Promise<bigint[]> =>
      (await page.locator('.queue-table tbody tr td:nth-child(5)').allTextContents()).map((cell) => BigInt(cell.replace(/[^\d]/g, '')));
    await page.getByRole('link', { name: /^Amount past due/ }).click();
    await page.waitForURL(/sort=amount_past_due/);
    assert.equal(await page.locator('th[aria-sort]').textContent(), 'Amount past due ▼, sort ascending');
    const sorted = await amounts();
    assert.ok(sorted.length > 1, 'late loans are listed');
    assert.deepEqual(sorted, [...sorted].sort((a, b) => (a < b ? 1 : a > b ? -1 : 0)), 'largest amount past due first');

    await page.getByLabel('Bucket', { exact: true }).selectOption('120+');
    await page.getByRole('button', { name: 'Show late loans' }).click();
    await page.waitForURL(/bucket=120%2B/);
    const buckets = await page.locator('.queue-table tbody tr td:nth-child(4)').allTextContents();
    assert.ok(buckets.length > 0 && buckets.every((bucket) => bucket === '120+'), `only 120+: ${buckets.join(', ')}`);
    assert.match(page.url(), /sort=amount_past_due/, 'the filter keeps the sort');
    await screenshots('collections-120-by-amount');

    const link = page.locator('.queue-table tbody tr').first().getByRole('link').first();
    const href = await link.getAttribute('href');
    await link.click();
    await page.waitForURL(`${server.url}${href}`);
    assert.equal(await page.getByRole('heading', { level: 1 }).count(), 1);
  });

  it('screenshots at 1366×768 and 1920×1080: the loan page, the new-loan form, Settings, the overview (axe: no serious violation)', async () => {
    for (const [name, path] of [
      ['loan', loanPath],
      ['loan-new', '/dashboard/loans/new'],
      ['settings-api-keys', '/dashboard/settings/api-keys'],
      ['settings-webhooks', '/dashboard/settings/webhooks'],
      ['settings-servicing', '/dashboard/settings/servicing'],
      ['settings-profile', '/dashboard/settings/profile'],
      ['overview', '/dashboard'],
    ] as const) {
      await page.goto(`${server.url}${path}`);
      await screenshots(name);
    }
  });

  it('saw no script error or unexpected refusal, and checked every outcome', () => {
    assert.deepEqual(pageProblems, []);
    assert.equal(outcomesSeen.length, 13, outcomesSeen.join(', '));
  });
});
