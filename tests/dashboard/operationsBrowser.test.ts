import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser, Locator, Page } from 'playwright-core';
import { createAdmin } from '../../app/accounts.js';
import { configFromEnv } from '../../app/config.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';
import { createAccountWithKey, startTestServer, tokenHeader, type TestServer } from '../support/http.js';
import { ChromiumSuite, openWatchedPage, logInToDashboard, pageScreenshot } from '../support/chromium.js';
import { seriousAccessibilityViolations } from '../support/axe.js';

/**
 * Issue 35, the dashboard's operations page, in Chromium: after known traffic from two accounts,
 * an admin of the first sees their own requests by operation type (never the other account's),
 * the rate limit of each role and of their keys, admission by cost with its state, and that
 * `/metrics` is on — without the token. Each table's row headers (a role, a key, an operation
 * type) are drawn as their rows' labels, not as more column headers. axe-core finds no serious or
 * critical violation; a screenshot lands in tests/artifacts/dashboard/.
 */
const CHROMIUM = new ChromiumSuite('the operations page browser test', 'tests/dashboard/operationsBrowser.test.ts');
const SCREENSHOTS = fileURLToPath(new URL('../artifacts/dashboard/', import.meta.url));
const PASSWORD = 'correct horse battery';
const METRICS_TOKEN = 'operations-page-token-0123456789';
const DEFAULT_OPERATIONS = configFromEnv({}).operations;

let database: TestDatabase;
let server: TestServer;
let browser: Browser;
let page: Page;
let adminEmail: string;
let ownKey: { key: string; prefix: string };
let otherKey: string;
const pageProblems: string[] = [];

const graph = (key: string, query: string): Promise<Response> =>
  fetch(`${server.url}/api/graph`, { method: 'POST', headers: { ...tokenHeader(key), 'content-type': 'application/json' }, body: JSON.stringify({ query }) });

/** How an element is drawn: the computed styles a reader sees the difference by. */
interface Look {
  readonly fontSize: string;
  readonly textTransform: string;
  readonly letterSpacing: string;
  readonly color: string;
  readonly backgroundColor: string;
}

/** `locator`'s computed look (the tests compile without the DOM library, hence the casts). */
function lookOf(locator: Locator): Promise<Look> {
  return locator.evaluate((element) => {
    const style = (globalThis as unknown as { getComputedStyle(element: unknown): Look }).getComputedStyle(element);
    return { fontSize: style.fontSize, textTransform: style.textTransform, letterSpacing: style.letterSpacing, color: style.color, backgroundColor: style.backgroundColor };
  });
}

/** The cells of the traffic table's row for `operation`. */
async function trafficRow(operation: string): Promise<string[]> {
  const row = page.getByRole('table', { name: 'Your requests, last hour' }).getByRole('row').filter({ has: page.getByRole('rowheader', { name: operation, exact: true }) });
  return (await row.getByRole('cell').allInnerTexts()).map((text) => text.trim());
}

describe('Dashboard: the operations page in Chromium', () => {
  if (CHROMIUM.skipped('shows an account its own traffic, rate limits, admission and metrics settings')) return;

  before(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    database = await openTestDatabase();
    server = await startTestServer(database.db, { operations: { ...DEFAULT_OPERATIONS, metricsToken: METRICS_TOKEN, rateLimit: { perSecond: 50, burst: 100 } } });
    const own = await createAccountWithKey(database.db);
    ownKey = own.apiKey;
    otherKey = (await createAccountWithKey(database.db)).apiKey.key;
    adminEmail = `admin@${own.account.slug}.test`;
    await createAdmin(database.db, own.account.id, { email: adminEmail, password: PASSWORD });
    browser = await CHROMIUM.launch();
    ({ page } = await openWatchedPage(browser, { viewport: { width: 1400, height: 900 }, problems: pageProblems }));
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    await database?.close();
  });

  it('shows the own account’s requests by operation type, not another account’s', async () => {
    // Known traffic: this account 3 queries, 2 good REST reads and 1 refused (400); the other account 5 queries.
    for (let i = 0; i < 3; i++) assert.equal((await graph(ownKey.key, '{ loans(limit: 1) { id } }')).status, 200);
    for (const limit of ['1', '2', '-1']) await fetch(`${server.url}/api/loan?limit=${limit}`, { headers: tokenHeader(ownKey.key) }).then((response) => response.arrayBuffer());
    for (let i = 0; i < 5; i++) assert.equal((await graph(otherKey, '{ loans(limit: 1) { id } }')).status, 200);

    await page.goto(`${server.url}/dashboard/login`);
    await logInToDashboard(page, server.url, adminEmail, PASSWORD);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Operations' }).click();
    await page.waitForURL(/\/dashboard\/operations$/);
    assert.equal(await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Operations' }).getAttribute('aria-current'), 'page');

    const query = await trafficRow('query');
    assert.deepEqual(query.slice(0, 2), ['3', '0'], 'requests and errors of the own queries only');
    for (const ms of query.slice(2)) assert.ok(Number(ms) > 0, `a latency figure: ${ms}`);
    assert.deepEqual((await trafficRow('none')).slice(0, 2), ['3', '1'], 'the REST reads, one refused');
    assert.equal(await page.getByRole('table', { name: 'Your requests, last hour' }).getByRole('row').count(), 3, 'a header and two operation types');
  });

  it('shows the rate limit of each role and of the own keys, admission by cost, and that /metrics is on without its token', async () => {
    const roles = page.getByRole('table', { name: 'By role' });
    assert.equal(await roles.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'admin', exact: true }) }).getByRole('cell').first().innerText(), '50 per second, burst 100');
    const keys = page.getByRole('table', { name: 'Your active keys' });
    const keyRow = keys.getByRole('row').filter({ hasText: ownKey.prefix });
    assert.deepEqual((await keyRow.getByRole('cell').allInnerTexts()).map((text) => text.trim()), [ownKey.prefix, 'admin', '50 per second, burst 100']);
    assert.equal(await keys.getByRole('row').count(), 2, 'a header and the one key of this account');

    const admission = page.getByRole('definition').filter({ hasText: 'costly running' });
    assert.match(await admission.innerText(), /^0 costly running, cost 0 reserved, 0 waiting$/);
    assert.match(await page.getByRole('definition').filter({ hasText: 'admitted at once' }).innerText(), new RegExp(`under ${DEFAULT_OPERATIONS.admission!.cheapCost.toLocaleString('en-US')} `));

    const text = await page.locator('main').innerText();
    assert.match(text, /GET \/metrics is on: METRICS_TOKEN is set/);
    assert.ok(!text.includes(METRICS_TOKEN) && !(await page.content()).includes(METRICS_TOKEN), 'the token is never shown');
    assert.ok(!(await page.content()).includes(otherKey.slice(0, 11)), "the other account's key prefix is not shown");

    assert.deepEqual(await seriousAccessibilityViolations(page), [], 'axe on the operations page');
  });

  it('draws each row header as its row\'s label, not as another column header', async () => {
    const keys = page.getByRole('table', { name: 'Your active keys' });
    const keyRow = keys.getByRole('row').filter({ hasText: ownKey.prefix });
    const roleRow = page.getByRole('table', { name: 'By role' }).getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'admin', exact: true }) });
    const trafficTable = page.getByRole('table', { name: 'Your requests, last hour' });
    // As written, not in the column headers' capitals.
    assert.equal(await roleRow.getByRole('rowheader').innerText(), 'admin');
    assert.equal(await trafficTable.getByRole('rowheader', { name: 'query', exact: true }).innerText(), 'query');
    assert.equal(await keyRow.getByRole('rowheader').innerText(), 'test key', 'the key named as it was created');
    for (const [what, table, row] of [['a key', keys, keyRow], ['a role', page.getByRole('table', { name: 'By role' }), roleRow]] as const) {
      const header = await lookOf(row.getByRole('rowheader'));
      const cell = await lookOf(row.getByRole('cell').first());
      const columnHeader = await lookOf(table.getByRole('columnheader').first());
      assert.equal(header.textTransform, 'none', `${what}'s row header is not in capitals`);
      assert.equal(header.letterSpacing, cell.letterSpacing, `${what}'s row header is spaced like its cells`);
      assert.equal(header.color, cell.color, `${what}'s row header has its cells' colour, not the column headers' grey`);
      assert.equal(header.backgroundColor, cell.backgroundColor, `${what}'s row header has its row's background, not the header row's`);
      assert.notEqual(header.backgroundColor, columnHeader.backgroundColor, `${what}'s row header does not look like the header row`);
      assert.notEqual(header.color, columnHeader.color);
    }
    // The key's name is plain text: the same size as the cells beside it.
    assert.equal((await lookOf(keyRow.getByRole('rowheader'))).fontSize, (await lookOf(keyRow.getByRole('cell').nth(2))).fontSize);
    assert.deepEqual(await seriousAccessibilityViolations(page), [], 'axe on the operations page');
    await pageScreenshot(page, `${SCREENSHOTS}operations.png`);
    assert.deepEqual(pageProblems, []);
  });
});
