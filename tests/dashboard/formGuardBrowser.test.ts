import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Browser, Page, Route } from 'playwright-core';
import type { TestDatabase } from '../support/testDatabase.js';
import { startTestServer, type TestServer } from '../support/http.js';
import { openSeededTestDatabase, type SeededAccount } from '../support/seededService.js';
import { ChromiumSuite, openWatchedPage, logInToDashboard } from '../support/chromium.js';
import { seriousAccessibilityViolations } from '../support/axe.js';

/**
 * Double submits in Chromium (README, "Double submits"): a double click on "Post payment" and on
 * "Create loan" writes one record and shows its outcome; the form's own `submit()` called twice
 * (which no script can stop: it fires no submit event, as an old browser or a script would send
 * it) still writes one payment — the server's one-time token; once submitted, a form's button is
 * disabled and the form `aria-busy` while the request is under way (`client/formGuard.ts`), and
 * usable again when the page comes back from the back/forward cache (`pageshow`, `persisted`).
 */
const CHROMIUM = new ChromiumSuite("the double-submit guard's browser test", 'tests/dashboard/formGuardBrowser.test.ts');
const PASSWORD = 'correct horse battery'; // seedAccount's admin password

let database: TestDatabase;
let server: TestServer;
let seeded: SeededAccount;
let browser: Browser;
let page: Page;
let loanPath = '';
const pageProblems: string[] = [];

const count = async (sql: string, values: unknown[]): Promise<number> => Number((await database.db.query<{ n: string }>(sql, values)).rows[0]!.n);
const payments = () => count('SELECT count(*) AS n FROM payments WHERE account_id = $1 AND loan_id = $2', [seeded.account.id, loanPath.split('/').pop()]);
/** The page's globals, in `page.evaluate` callbacks (tests are type-checked without the DOM library). */
type PageGlobals = { document: { querySelector(selector: string): ({ submit(): void } & Record<string, unknown>) | null }; dispatchEvent(event: unknown): boolean; PageTransitionEvent: new (type: string, init: { persisted: boolean }) => unknown };

/**
 * A clerk's double click: two clicks 120 ms apart on `name`'s button, the POSTs of `path` held
 * 400 ms on their way so the page is still the form's at the second click (a fast server would
 * otherwise have answered, and the second click land on the next page); answers the POSTs the
 * page sent. Mouse clicks at the button's place, not a locator's click, which would wait for a
 * disabled button to be enabled again.
 */
async function doubleClick(name: string, path: string): Promise<string[]> {
  const posts: string[] = [];
  const countPost = (request: { method(): string; url(): string }) => void (request.method() === 'POST' && posts.push(request.url()));
  await page.route(`**${path}`, async (route) => {
    await sleep(400);
    await route.continue().catch(() => undefined);
  });
  page.on('request', countPost);
  const button = page.getByRole('button', { name });
  await button.scrollIntoViewIfNeeded();
  const box = (await button.boundingBox())!;
  const [x, y] = [box.x + box.width / 2, box.y + box.height / 2];
  await page.mouse.click(x, y);
  await sleep(120);
  await page.mouse.click(x, y);
  await page.waitForURL(/done=/);
  page.off('request', countPost);
  await page.unroute(`**${path}`);
  return posts;
}

describe('A form sent once (Chromium)', () => {
  if (CHROMIUM.skipped('checks the double-submit guard in Chromium')) return;

  before(async () => {
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
    ({ page } = await openWatchedPage(browser, { viewport: { width: 1366, height: 768 }, problems: pageProblems, consoleErrors: true }));
    await page.goto(`${server.url}/dashboard/login`);
    await logInToDashboard(page, server.url, `admin@${seeded.account.slug}.test`, PASSWORD);
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    await database?.close();
  });

  it('posts one payment for a double click on “Post payment” (the page sends it once), and shows its outcome', async () => {
    await page.goto(`${server.url}${loanPath}`);
    const before = await payments();
    const posts = await doubleClick('Post payment', `${loanPath}/payments`);
    assert.match(page.url(), /done=payment-posted/);
    assert.equal(posts.length, 1, `the page sent the form once: ${posts.join(', ')}`);
    assert.match((await page.locator('#outcome').textContent()) ?? '', /^Payment posted/);
    await sleep(300);
    assert.equal(await payments(), before + 1, 'one payment for two clicks');
    assert.deepEqual(pageProblems, [], 'no script error, no failed response');
    assert.deepEqual(await seriousAccessibilityViolations(page), [], 'axe on the loan page after the payment');
  });

  it('posts one payment when the form is submitted twice past the page’s script (the server’s one-time token)', async () => {
    await page.goto(`${server.url}${loanPath}`);
    const before = await payments();
    await page.evaluate(() => {
      const form = (globalThis as unknown as PageGlobals).document.querySelector('form[aria-label="Post a payment"]')!;
      form.submit();
      form.submit();
    });
    await page.waitForURL(/done=payment-posted/);
    assert.match((await page.locator('#outcome').textContent()) ?? '', /^Payment posted/);
    // The first request may still be finishing on the server when the page has its answer.
    await sleep(300);
    assert.equal(await payments(), before + 1, 'one payment for two submissions');
  });

  it('creates one loan for a double click on “Create loan” (the page sends it once), and shows its outcome', async () => {
    const name = `Double click ${Date.now()}`;
    await page.goto(`${server.url}/dashboard/loans/new`);
    await page.getByLabel('Name (required)').fill(name);
    await page.getByLabel('Amount').fill('250000');
    await page.getByLabel('Loan Officer').fill('Dana Whitfield');
    const posts = await doubleClick('Create loan', '/dashboard/loans');
    assert.match(page.url(), /done=created/);
    assert.equal(posts.length, 1, `the page sent the form once: ${posts.join(', ')}`);
    assert.match((await page.locator('#outcome').textContent()) ?? '', /^Loan created\.$/);
    await sleep(300);
    assert.equal(await count('SELECT count(*) AS n FROM loans WHERE account_id = $1 AND name = $2', [seeded.account.id, name]), 1, 'one loan for two clicks');
  });

  it('disables the button and marks the form busy once submitted, and frees it when the page is shown again from the back/forward cache', async () => {
    await page.goto(`${server.url}${loanPath}`);
    const comments = `**${loanPath}/comments`;
    // The comment's request is held on its way, so the page stays as it is just after the submit.
    await page.route(comments, () => undefined);
    await page.getByLabel('Comment', { exact: true }).fill('Held on the way');
    const during = await page.evaluate(async () => {
      const globals = globalThis as unknown as PageGlobals & { stop(): void };
      const form = globals.document.querySelector('form[aria-label="Add a comment"]')!;
      const button = globals.document.querySelector('form[aria-label="Add a comment"] button')!;
      const payment = globals.document.querySelector('form[aria-label="Post a payment"] button')!;
      (button as unknown as { click(): void }).click();
      await new Promise((resolve) => setTimeout(resolve, 100));
      const seen = { disabled: button.disabled, busy: (form as unknown as { getAttribute(name: string): string | null }).getAttribute('aria-busy'), paymentDisabled: payment.disabled };
      // As a clerk's Stop (Esc) would: the page stays, its form sent.
      globals.stop();
      return seen;
    });
    assert.deepEqual(during, { disabled: true, busy: 'true', paymentDisabled: false }, 'the comment’s button disabled and its form busy; the other forms usable');
    const after = await page.evaluate(() => {
      const globals = globalThis as unknown as PageGlobals;
      globals.dispatchEvent(new globals.PageTransitionEvent('pageshow', { persisted: true }));
      const form = globals.document.querySelector('form[aria-label="Add a comment"]') as unknown as { getAttribute(name: string): string | null };
      return { disabled: globals.document.querySelector('form[aria-label="Add a comment"] button')!.disabled, busy: form.getAttribute('aria-busy') };
    });
    assert.deepEqual(after, { disabled: false, busy: null }, 'usable again when the page is shown from the back/forward cache');
    await page.unroute(comments);
    assert.deepEqual(pageProblems.filter((problem) => !problem.includes('/comments')), [], 'no script error, no failed response');
    assert.equal(await count(`SELECT count(*) AS n FROM comments WHERE account_id = $1 AND text = 'Held on the way'`, [seeded.account.id]), 0, 'the held comment was never sent');
  });
});
