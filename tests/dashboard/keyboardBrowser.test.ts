import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import type { TestDatabase } from '../support/testDatabase.js';
import { startTestServer, type TestServer } from '../support/http.js';
import { openSeededTestDatabase, type SeededAccount } from '../support/seededService.js';
import { ChromiumSuite, openWatchedPage, logInToDashboard } from '../support/chromium.js';
import { accessibilityViolations } from '../support/axe.js';

/**
 * The accessibility audit of session 40, in Chromium at 1366×768: a clerk who works by keyboard
 * and one who uses a screen reader. Every form here is filled and sent from the keyboard (Enter);
 * after a refusal the focus is on the message or on the field it names, and that field is marked
 * `aria-invalid` and described by the message. Every table of the servicing pages has a name
 * (its caption) and the pages have no axe-core violation of moderate impact or worse — before this
 * file a table's scrolling box and its section were two landmarks of the same name, and the
 * overview's tables had none.
 */
const CHROMIUM = new ChromiumSuite('the keyboard and screen-reader browser test', 'tests/dashboard/keyboardBrowser.test.ts');
const PASSWORD = 'correct horse battery'; // seedAccount's admin password

let database: TestDatabase;
let server: TestServer;
let seeded: SeededAccount;
let browser: Browser;
let page: Page;
const pageProblems: string[] = [];

/** The page's document, in `page.evaluate` callbacks (tests are type-checked without the DOM library). */
interface PageElement {
  readonly id: string;
  readonly textContent: string | null;
  getAttribute(name: string): string | null;
}
interface PageDocument {
  readonly activeElement: PageElement | null;
  getElementById(id: string): PageElement | null;
}

/** The focused element's id once `expected` has the focus, or whatever has it after 5 s (`autofocus` applies after the load). */
async function focusedId(expected: string): Promise<string | undefined> {
  await page
    .waitForFunction((id) => (globalThis as unknown as { document: PageDocument }).document.activeElement?.id === id, expected, { timeout: 5_000 })
    .catch(() => undefined);
  return page.evaluate(() => (globalThis as unknown as { document: PageDocument }).document.activeElement?.id);
}

/** Focuses the field, types `value` over what it holds and sends its form with Enter, as a keyboard user does. */
async function typeAndEnter(selector: string, value: string): Promise<void> {
  const field = page.locator(selector);
  await field.focus();
  await field.fill(value);
  await Promise.all([page.waitForEvent('load'), page.keyboard.press('Enter')]);
}

/** The field is marked invalid and described by a message that says `expected`. */
async function assertFieldMarked(fieldId: string, expected: RegExp): Promise<void> {
  const field = page.locator(`#${fieldId}`);
  assert.equal(await field.getAttribute('aria-invalid'), 'true', `${fieldId} is marked invalid on ${page.url()}`);
  const describedBy = ((await field.getAttribute('aria-describedby')) ?? '').split(' ').filter(Boolean);
  assert.ok(describedBy.length > 0, `${fieldId} is described by its message`);
  const description = await page.evaluate(
    (ids) => ids.map((id) => (globalThis as unknown as { document: PageDocument }).document.getElementById(id)?.textContent?.trim() ?? '').join(' '),
    describedBy,
  );
  assert.match(description, expected, `what describes ${fieldId}`);
}

/** Each table's name (its own caption, else its `aria-label` or `aria-labelledby`): '' for a table without one. */
function tableNames(): Promise<string[]> {
  return page.evaluate(() => {
    interface Table {
      readonly caption: { readonly textContent: string | null } | null;
      getAttribute(name: string): string | null;
    }
    const doc = (globalThis as unknown as { document: PageDocument & { querySelectorAll(selector: string): ArrayLike<Table> } }).document;
    return Array.from(doc.querySelectorAll('table')).map((table) => {
      const labelledBy = table.getAttribute('aria-labelledby');
      return (table.caption?.textContent ?? table.getAttribute('aria-label') ?? (labelledBy ? doc.getElementById(labelledBy)?.textContent : '') ?? '').trim();
    });
  });
}

/** WCAG's relative luminance of a CSS `rgb(…)`/`rgba(…)` colour. */
function luminance(color: string): number {
  const [r, g, b] = (color.match(/[\d.]+/g) ?? []).slice(0, 3).map((part) => {
    const channel = Number(part) / 255;
    return channel <= 0.03928 ? channel / 12.92 : ((channel + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}
const contrast = (one: string, other: string) => {
  const [light, dark] = [luminance(one), luminance(other)].sort((a, b) => b - a);
  return (light! + 0.05) / (dark! + 0.05);
};

/** What one Tab press focused: its place among the page's controls, its ring and the colour behind the ring. */
interface TabStop {
  readonly index: number;
  readonly what: string;
  readonly outline: string;
  readonly outlineWidth: number;
  readonly outlineColor: string;
  readonly behind: string;
}

/**
 * Tabs through the whole page from its top and answers each stop, and how many controls the page
 * shows (links, buttons, fields, disclosures, scrolling regions: numbered in document order first).
 */
async function tabThrough(): Promise<{ stops: TabStop[]; controls: number }> {
  const controls = await page.evaluate(() => {
    const doc = (globalThis as any).document;
    const all = Array.from(doc.querySelectorAll('a[href], button, input:not([type="hidden"]), select, textarea, summary, [tabindex="0"]')) as any[];
    // `checkVisibility`: not in a closed <details> (whose content Chromium hides with content-visibility) nor display:none.
    const shown = all.filter((element) => element.checkVisibility() && !element.disabled);
    shown.forEach((element, index) => element.setAttribute('data-tab-stop', String(index)));
    doc.activeElement?.blur();
    return shown.length;
  });
  const stops: TabStop[] = [];
  for (let press = 0; press <= controls; press++) {
    await page.keyboard.press('Tab');
    const stop = await page.evaluate(() => {
      const doc = (globalThis as any).document;
      const element = doc.activeElement;
      if (!element || element === doc.body) return null;
      const style = (globalThis as any).getComputedStyle(element);
      // The colour the ring is drawn on: the first opaque background outside the element.
      let behind = 'rgb(255, 255, 255)';
      for (let parent = element.parentElement; parent; parent = parent.parentElement) {
        const background = (globalThis as any).getComputedStyle(parent).backgroundColor as string;
        if (background.startsWith('rgb(')) { behind = background; break; }
      }
      return {
        index: Number(element.getAttribute('data-tab-stop') ?? -1),
        what: `${element.tagName.toLowerCase()}${element.id ? `#${element.id}` : ''} “${(element.getAttribute('aria-label') ?? element.textContent ?? element.name ?? '').trim().slice(0, 40)}”`,
        outline: style.outlineStyle as string,
        outlineWidth: parseFloat(style.outlineWidth),
        outlineColor: style.outlineColor as string,
        behind,
      };
    });
    if (!stop || (stops.length > 0 && stop.index <= stops[stops.length - 1]!.index)) break; // back at the top
    stops.push(stop);
  }
  return { stops, controls };
}

describe('The dashboard by keyboard and screen reader (Chromium)', () => {
  if (CHROMIUM.skipped('checks the dashboard by keyboard and screen reader, in Chromium')) return;

  let loanId = '';
  let loanName = '';
  let borrowerId = '';
  let investorId = '';

  before(async () => {
    ({ database, seeded: [seeded] } = await openSeededTestDatabase([{ scale: 0.01 }]));
    server = await startTestServer(database.db);
    // A loan in servicing with payments and an unpaid fee, its first borrower, and an investor.
    const { rows } = await database.db.query<{ id: string; name: string; borrower: string }>(
      `SELECT l.id, l.name, (SELECT b.person_id FROM borrows b WHERE b.account_id = l.account_id AND b.loan_id = l.id ORDER BY b.person_id LIMIT 1) AS borrower
         FROM loans l
        WHERE l.account_id = $1 AND l.status = 'servicing'
          AND EXISTS (SELECT 1 FROM payments p WHERE p.account_id = l.account_id AND p.loan_id = l.id AND p.date_reversed IS NULL)
          AND EXISTS (SELECT 1 FROM fees f WHERE f.account_id = l.account_id AND f.loan_id = l.id AND f.amount > f.paid)
          AND EXISTS (SELECT 1 FROM borrows b WHERE b.account_id = l.account_id AND b.loan_id = l.id)
        ORDER BY l.id LIMIT 1`,
      [seeded.account.id],
    );
    ({ id: loanId, name: loanName, borrower: borrowerId } = rows[0]!);
    investorId = (await database.db.query<{ id: string }>('SELECT person_id AS id FROM funding_sources WHERE account_id = $1 ORDER BY person_id LIMIT 1', [seeded.account.id])).rows[0]!.id;
    browser = await CHROMIUM.launch();
    ({ page } = await openWatchedPage(browser, {
      viewport: { width: 1366, height: 768 },
      problems: pageProblems,
      // The walk is refused on purpose: forms answered 400, a quote for a day that does not exist.
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

  it('every table of the servicing pages has a name, and axe finds nothing of moderate impact or worse', async () => {
    const pages = new Map([
      ['overview', '/dashboard'],
      ['loan page', `/dashboard/loans/${loanId}`],
      ['person', `/dashboard/people/${borrowerId}`],
      ['investor', `/dashboard/investors/${investorId}`],
      ['collections', '/dashboard/collections'],
      ['remittances', '/dashboard/remittances'],
    ]);
    for (const [what, path] of pages) {
      await page.goto(`${server.url}${path}`);
      const names = await tableNames();
      assert.ok(names.length > 0, `${what} has tables`);
      assert.deepEqual(
        names.filter((name) => name === ''),
        [],
        `every table of ${what} is named: ${JSON.stringify(names)}`,
      );
      assert.deepEqual(await accessibilityViolations(page, ['moderate', 'serious', 'critical']), [], `axe on ${what}`);
    }
    // The loan's tables say whose they are: a screen reader's table list reads "Payments of <loan>".
    await page.goto(`${server.url}/dashboard/loans/${loanId}`);
    for (const table of ['Schedule', 'Payments', 'Fees']) {
      assert.ok((await tableNames()).includes(`${table} of ${loanName}`), `the ${table.toLowerCase()} table is named for the loan`);
      assert.equal(await page.getByRole('region', { name: `${table} of ${loanName}`, exact: true }).count(), 1, `its scrolling box is named the same, once`);
    }
  });

  it('Tab reaches every control in reading order, each with a ring of 3:1 contrast against what is behind it', async () => {
    for (const path of [`/dashboard/loans/${loanId}`, '/dashboard/settings/webhooks']) {
      await page.goto(`${server.url}${path}`);
      const { stops, controls } = await tabThrough();
      assert.deepEqual(
        stops.map((stop) => stop.index),
        Array.from({ length: controls }, (_, index) => index),
        `every control of ${path}, once each and in document order: ${stops.map((stop) => stop.what).join(' › ')}`,
      );
      const faint = stops.filter((stop) => stop.outline === 'none' || stop.outlineWidth < 2 || contrast(stop.outlineColor, stop.behind) < 3);
      assert.deepEqual(
        faint.map((stop) => `${stop.what}: ${stop.outline} ${stop.outlineWidth}px ${stop.outlineColor} on ${stop.behind} (${contrast(stop.outlineColor, stop.behind).toFixed(2)}:1)`),
        [],
        `the focus ring is seen on ${path} (WCAG 1.4.11: 3:1 against the adjacent colour)`,
      );
    }
  });

  it('a payoff quote asked from the keyboard takes the focus; a day that does not exist focuses the refusal and marks the field', async () => {
    await page.goto(`${server.url}/dashboard/loans/${loanId}`);
    // The field holds the business date: Enter asks for that day's quote.
    const day = await page.locator('#quote-date').inputValue();
    await typeAndEnter('#quote-date', day);
    assert.equal(await focusedId('quote'), 'quote', 'the quote has the focus (before, the form went to #payoff, and a fragment stops autofocus)');
    assert.equal(await page.locator('#quote').getAttribute('aria-label'), `Payoff on ${day}`);

    await typeAndEnter('#quote-date', '2026-02-30');
    assert.equal(await focusedId('outcome'), 'outcome', 'the refusal has the focus');
    assert.match((await page.locator('#outcome').textContent()) ?? '', /^Payoff date: expected a calendar day/);
    await assertFieldMarked('quote-date', /^Payoff date: expected a calendar day/);
    assert.equal(await page.locator('#quote-date').inputValue(), '2026-02-30', 'the day typed is kept');
  });

  it('a refused payment, fee, task and waiver each mark the field their message names', async () => {
    await page.goto(`${server.url}/dashboard/loans/${loanId}`);
    await typeAndEnter('#payment-amount', '1,5');
    assert.equal(await focusedId('outcome'), 'outcome');
    await assertFieldMarked('payment-amount', /^Amount: expected an amount above 0/);
    assert.equal(await page.locator('#payment-date').getAttribute('aria-invalid'), null, 'only the field named is marked');

    await typeAndEnter('#fee-amount', 'abc');
    assert.equal(await focusedId('outcome'), 'outcome');
    await assertFieldMarked('fee-amount', /^Fee: expected an amount above 0/);
    assert.equal(await page.locator('#fee-date').getAttribute('aria-invalid'), null, 'Fee date is not the field named "Fee"');

    await page.locator('#task-name').fill('Call the borrower');
    await typeAndEnter('#task-due', '2026-13-01');
    assert.equal(await focusedId('outcome'), 'outcome');
    await assertFieldMarked('task-due', /^Due: expected a day/);

    // A waiver of more than is unpaid (the field is read-only; a stale page sends the old figure).
    const waiver = page.locator('#fees details.waive').first();
    await waiver.locator('summary').focus();
    await page.keyboard.press('Enter');
    const amount = waiver.locator('input[name="amount"]');
    const amountId = (await amount.getAttribute('id'))!;
    await amount.evaluate((input) => {
      const field = input as unknown as { readOnly: boolean; value: string };
      field.readOnly = false;
      field.value = '999999.00';
    });
    await waiver.locator('textarea[name="reason"]').fill('Goodwill');
    await Promise.all([page.waitForEvent('load'), waiver.locator('textarea[name="reason"]').press('Tab').then(() => page.keyboard.press('Enter'))]);
    assert.equal(await focusedId('outcome'), 'outcome');
    await assertFieldMarked(amountId, /^To waive: \$999,999\.00 is more than what is unpaid/);
    assert.deepEqual(await accessibilityViolations(page, ['moderate', 'serious', 'critical']), [], 'axe on the loan page with a refusal');
  });

  it("the reversal page's title names the loan; a refused reversal marks its date", async () => {
    await page.goto(`${server.url}/dashboard/loans/${loanId}`);
    await page.locator('#payments a', { hasText: 'Reverse' }).first().click();
    await page.waitForURL(/\/reverse$/);
    assert.match(await page.title(), new RegExp(`^Reverse the payment of \\d{4}-\\d\\d-\\d\\d · ${loanName.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} · loanql dashboard$`));
    await page.locator('#reversal-reason').selectOption('error');
    await typeAndEnter('#reversal-date', '1999-01-01');
    assert.equal(await focusedId('outcome'), 'outcome');
    await assertFieldMarked('reversal-date', /^Date reversed: a payment is reversed on or after its own date/);
    assert.equal(await page.locator('#reversal-reason').getAttribute('aria-invalid'), null);
  });

  it("Settings > Webhooks: a refused URL is marked, described by its problem, and has the focus", async () => {
    await page.goto(`${server.url}/dashboard/settings/webhooks`);
    await typeAndEnter('#webhook-url', 'http://127.0.0.1:9/hook');
    assert.equal(await focusedId('webhook-url'), 'webhook-url', 'the field in error has the focus (before: nothing, the page top)');
    await assertFieldMarked('webhook-url', /^URL: points to an address that is not public/);
    assert.equal(await page.locator('#webhook-url').inputValue(), 'http://127.0.0.1:9/hook', 'what was typed is kept');
    assert.equal(await page.locator('#webhook-description').getAttribute('aria-invalid'), null);
    assert.match((await page.getByRole('alert').first().textContent()) ?? '', /webhook endpoint refused: url points to/);
    assert.deepEqual(await accessibilityViolations(page, ['moderate', 'serious', 'critical']), [], 'axe on the refused webhook form');
  });

  it('the query console at 390 px wide: axe finds nothing serious, and every area that scrolls is a Tab stop with a name', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await page.goto(`${server.url}/dashboard/console?query=${encodeURIComponent('{ loans(limit: 40) { id name amount rate status date_funded } }')}`);
      await page.locator('.graphiql-query-editor .CodeMirror').waitFor();
      await page.locator('.graphiql-execute-button').click();
      await page.waitForFunction(() => ((globalThis as any).document.querySelector('.graphiql-response .CodeMirror')?.CodeMirror?.getValue() ?? '').startsWith('{'));
      // Before session 43 the query editor's scroller (CodeMirror's, tabindex -1) scrolled at this width and
      // could not be reached from the keyboard: axe's serious scrollable-region-focusable.
      assert.deepEqual(await accessibilityViolations(page, ['serious', 'critical']), [], 'axe on the console at 390 px');
      const scrollers = await page.evaluate(() =>
        (Array.from((globalThis as any).document.querySelectorAll('.graphiql-container .CodeMirror-scroll')) as any[])
          .filter((element) => element.checkVisibility())
          .map((element) => ({ tabIndex: element.tabIndex as number, name: (element.getAttribute('aria-label') ?? '') as string, role: element.getAttribute('role') as string | null })),
      );
      assert.ok(scrollers.length >= 2, `the query editor and the result are shown: ${JSON.stringify(scrollers)}`);
      assert.deepEqual(
        scrollers.filter((scroller) => scroller.tabIndex !== 0 || scroller.name === '' || scroller.role !== 'region'),
        [],
        'every CodeMirror scroller shown is a named region in the Tab order',
      );
      // From the keyboard: Tab from the query's text reaches its scroller.
      const queryScroller = page.locator('.graphiql-query-editor .CodeMirror-scroll');
      await page.locator('.graphiql-query-editor textarea').focus();
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => (globalThis as any).document.activeElement?.getAttribute('aria-label')), 'GraphQL query');
      // It is there because it scrolls at this width (the query's line is wider than the editor), and the arrow keys scroll it.
      const extent = () => queryScroller.evaluate((element: any) => ({ left: element.scrollLeft as number, overflow: (element.scrollWidth - element.clientWidth) as number }));
      assert.ok((await extent()).overflow > 0, `the query editor scrolls sideways at 390 px: ${JSON.stringify(await extent())}`);
      await page.keyboard.press('ArrowRight');
      await page.keyboard.press('ArrowRight');
      await page.keyboard.press('ArrowRight');
      assert.ok((await extent()).left > 0, `ArrowRight scrolls the focused query editor: ${JSON.stringify(await extent())}`);
    } finally {
      await page.setViewportSize({ width: 1366, height: 768 });
    }
  });

  it('saw no script error or unexpected refusal', () => {
    assert.deepEqual(pageProblems, []);
  });
});
