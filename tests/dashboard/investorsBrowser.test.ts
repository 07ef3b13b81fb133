import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { createAdmin, updateAccount } from '../../app/accounts.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';
import { createAccountWithKey, startTestServer, type TestServer } from '../support/http.js';
import { ChromiumSuite, openWatchedPage, logInToDashboard, pageScreenshot } from '../support/chromium.js';
import { seriousAccessibilityViolations } from '../support/axe.js';
import { installTestClock, setTestClock } from '../support/testClock.js';

/**
 * Issue 32, Done when 5, in Chromium: an admin opens Investors from the navigation, an investor's
 * page (loans, distributions, the statement with its CSV and PDF downloads) for February, then
 * the remittance run of February, and marks it remitted (Post/Redirect/Get: the notice, the
 * period listed as remitted, nothing left to pay). axe-core finds no serious or critical
 * violation on each page; screenshots in tests/artifacts/dashboard/investors/.
 */
const CHROMIUM = new ChromiumSuite('the investors browser test', 'tests/dashboard/investorsBrowser.test.ts');
const SCREENSHOTS = fileURLToPath(new URL('../artifacts/dashboard/investors/', import.meta.url));
const PASSWORD = 'correct horse battery';

let database: TestDatabase;
let server: TestServer;
let browser: Browser;
let page: Page;
let adminEmail: string;
let key: string;
const pageProblems: string[] = [];
let shots = 0;

async function checkPage(name: string): Promise<void> {
  assert.deepEqual(await seriousAccessibilityViolations(page), [], `axe on ${name} (${page.url()})`);
  shots += 1;
  await pageScreenshot(page, `${SCREENSHOTS}${String(shots).padStart(2, '0')}-${name}.png`);
}

async function graph(query: string, variables: Record<string, unknown>): Promise<any> {
  const response = await fetch(`${server.url}/api/graph`, { method: 'POST', headers: { authorization: `Token ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
  const body = (await response.json()) as { data?: any; errors?: unknown };
  assert.equal(body.errors, undefined, JSON.stringify(body.errors));
  return body.data;
}

describe('Investors and the remittance run in Chromium (issue 32)', () => {
  if (CHROMIUM.skipped('walks the investor and remittance pages in Chromium')) return;

  before(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    database = await openTestDatabase();
    await installTestClock(database.db);
    await setTestClock(database.db, '2026-03-31');
    server = await startTestServer(database.db);
    const { account, apiKey } = await createAccountWithKey(database.db);
    key = apiKey.key;
    await updateAccount(database.db, account.slug, { name: 'Harbor Private Lending' });
    adminEmail = `admin@${account.slug}.test`;
    await createAdmin(database.db, account.id, { email: adminEmail, password: PASSWORD });
    const created = await fetch(`${server.url}/api/loan`, {
      method: 'POST',
      headers: { authorization: `Token ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ Name: 'Elm St bridge', Amount: 100000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' }),
    });
    const loan = ((await created.json()) as { loan: { id: string } }).loan.id;
    for (const [name, amount, rate] of [['Ann Investor', '60000', '10'], ['Ben Investor', '30000', '9']] as const) {
      const person = (await graph(`mutation ($n: String!) { insert_people_one(object: {name: $n, entity_type: "individual"}) { id } }`, { n: name })).insert_people_one.id;
      await graph(`mutation ($p: uuid!, $l: uuid!, $a: numeric!, $r: numeric!) { insert_funding_sources_one(object: {person_id: $p, loan_id: $l, original_amount: $a, rate: $r, date_funded: "2026-01-15"}) { id } }`, { p: person, l: loan, a: amount, r: rate });
    }
    for (const date of ['2026-02-15', '2026-03-15']) {
      await graph(`mutation ($l: uuid!, $d: date!) { insert_payments_one(object: {loan_id: $l, date: $d, amount: 8884.88, type: "regular", method: "ach"}) { id } }`, { l: loan, d: date });
    }
    browser = await CHROMIUM.launch();
    ({ page } = await openWatchedPage(browser, { viewport: { width: 1400, height: 900 }, problems: pageProblems }));
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    await database?.close();
  });

  it("an investor's page: February's statement (R10's example), its distributions, and the CSV and PDF downloads", async () => {
    await page.goto(`${server.url}/dashboard/login`);
    await logInToDashboard(page, server.url, adminEmail, PASSWORD);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Investors' }).click();
    await page.waitForURL(/\/dashboard\/investors$/);
    await checkPage('investors');
    await page.getByRole('link', { name: 'Ann Investor' }).click();
    await page.getByLabel('From', { exact: true }).fill('2026-02-01');
    await page.getByLabel('To', { exact: true }).fill('2026-02-28');
    await page.getByRole('button', { name: 'Show' }).click();
    await page.waitForURL(/from=2026-02-01&to=2026-02-28/);
    const totals = await page.locator('tfoot tr').first().locator('td').allInnerTexts();
    assert.deepEqual(totals, ['$60,000.00', '$0.00', '$4,730.93', '$500.00', '$0.00', '$0.00', '$5,230.93', '$55,269.07']);
    assert.match(await page.getByRole('heading', { name: /Distributions/ }).innerText(), /2/);
    await checkPage('investor-statement');

    const csvHref = await page.getByRole('link', { name: 'Download CSV' }).getAttribute('href');
    const csv = await page.request.get(`${server.url}${csvHref}`);
    assert.equal(csv.status(), 200);
    assert.match((await csv.text()).trimEnd().split('\r\n').at(-1)!, /^,Total,2026-02-01,2026-02-28,60000\.00,0\.00,4730\.93,500\.00,0\.00,0\.00,5230\.93,55269\.07$/);
    const pdfHref = await page.getByRole('link', { name: 'Download PDF' }).getAttribute('href');
    const pdf = await page.request.get(`${server.url}${pdfHref}`);
    assert.equal(pdf.headers()['content-type'], 'application/pdf');
    assert.equal((await pdf.body()).subarray(0, 5).toString('latin1'), '%PDF-');
  });

  it("the remittance page: February's run, marked remitted by the admin; nothing left to pay", async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Remittance' }).click();
    await page.waitForURL(/\/dashboard\/remittances$/);
    await page.getByLabel('From', { exact: true }).fill('2026-02-01');
    await page.getByLabel('To', { exact: true }).fill('2026-02-28');
    await page.getByRole('button', { name: 'Show' }).click();
    await page.waitForURL(/from=2026-02-01&to=2026-02-28/);
    const rows = await page.locator('#run-heading ~ div tbody tr').allInnerTexts();
    assert.equal(rows.length, 2);
    assert.match(rows[0]!, /Ann Investor\s+\$4,730\.93\s+\$500\.00\s+\$0\.00\s+\$0\.00\s+\$5,230\.93/);
    assert.match(rows[1]!, /Ben Investor\s+\$2,365\.46\s+\$225\.00/);
    await checkPage('remittance-run');
    const [posted] = await Promise.all([
      page.waitForResponse((response) => response.request().method() === 'POST' && response.url() === `${server.url}/dashboard/remittances`),
      page.getByRole('button', { name: /Mark 2026-02-01 to 2026-02-28 remitted \(\$7,821\.39\)/ }).click(),
    ]);
    assert.equal(posted.status(), 303);
    await page.waitForURL(/done=remitted/);
    assert.match(await page.locator('#outcome').innerText(), /marked remitted/);
    assert.match(await page.locator('main').innerText(), /Nothing to pay for this period/);
    assert.match(await page.locator('#recent-heading ~ div').innerText(), new RegExp(`2026-02-01 to 2026-02-28[\\s\\S]*admin ${adminEmail.replace(/[.]/g, '\\.')}[\\s\\S]*\\$7,821\\.39`));
    await checkPage('remittance-marked');
    assert.deepEqual(pageProblems, []);
  });
});
