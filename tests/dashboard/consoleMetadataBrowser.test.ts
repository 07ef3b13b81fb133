import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { listApiKeys } from '../../app/apiKeys.js';
import type { TestDatabase } from '../support/testDatabase.js';
import { METADATA_PATH, startTestServer, tokenHeader, type TestServer } from '../support/http.js';
import { openSeededTestDatabase, type SeededAccount } from '../support/seededService.js';
import { ChromiumSuite, openWatchedPage, logInToDashboard, pageScreenshot } from '../support/chromium.js';
import { seriousAccessibilityViolations } from '../support/axe.js';

/**
 * Issue 17 in Chromium: the console's result pane shows numbers byte for byte as the API sends
 * them (done-when 5), the documented bare-word form is not marked as an error, the SQL panel is
 * laid out and copies, EXPLAIN's plan carries no estimates; Settings > API keys creates with
 * Post/Redirect/Get and tells a blank name next to the field; the metadata page shows an invalid
 * edit made while the service runs. axe-core finds no serious or critical violation on these
 * pages (done-when 2, for them), at 1400 px and at 390 px wide. Screenshots land in
 * tests/artifacts/dashboard/ (git-ignored).
 */
/** The page's globals used by the functions evaluated in Chromium (the tests compile without the DOM library). */
interface PageElement {
  readonly tagName: string;
  readonly className: string;
  readonly id: string;
  closest(selector: string): PageElement | null;
  getBoundingClientRect(): { readonly right: number };
}
declare const document: {
  querySelector(selector: string): unknown;
  querySelectorAll(selector: string): Iterable<PageElement>;
  readonly documentElement: { readonly scrollWidth: number };
  readonly activeElement: PageElement | null;
};
declare const window: { readonly innerWidth: number };
declare const navigator: { readonly clipboard: { readText(): Promise<string> } };

const CHROMIUM = new ChromiumSuite('the console and metadata browser tests', 'tests/dashboard/consoleMetadataBrowser.test.ts');
const SCREENSHOTS = fileURLToPath(new URL('../artifacts/dashboard/', import.meta.url));
const PASSWORD = 'correct horse battery'; // seedAccount's admin password

let database: TestDatabase;
let server: TestServer;
let browser: Browser;
let page: Page;
let seeded: SeededAccount;
let folder: string;
let metadataFile: string;
const pageProblems: string[] = [];

describe('The console, the metadata page and the keys page in Chromium', () => {
  if (CHROMIUM.skipped('runs the console and metadata pages in Chromium')) return;

  before(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    folder = mkdtempSync(join(tmpdir(), 'loanql-console-browser-'));
    metadataFile = join(folder, 'loanql.yaml');
    copyFileSync(METADATA_PATH, metadataFile);
    ({ database, seeded: [seeded] } = await openSeededTestDatabase([{ scale: 0.01 }]));
    server = await startTestServer(database.db, { metadataPath: metadataFile });
    server.engines.watch();
    browser = await CHROMIUM.launch();
    ({ page } = await openWatchedPage(browser, {
      viewport: { width: 1400, height: 900 },
      problems: pageProblems,
      grant: { permissions: ['clipboard-read', 'clipboard-write'], origin: server.url },
      consoleErrors: true,
      // The blank-name form is answered 400 on purpose.
      expectedRefusal: (response) => response.status() === 400 && response.url().endsWith('/settings/api-keys'),
    }));
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    await database?.close();
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  async function screenshot(name: string): Promise<void> {
    await pageScreenshot(page, `${SCREENSHOTS}${name}.png`);
  }

  async function assertAccessible(what: string): Promise<void> {
    assert.deepEqual(await seriousAccessibilityViolations(page), [], `axe-core on ${what}`);
  }

  /** The query editor's text, and the result pane's (CodeMirror keeps only visible lines in the DOM). */
  async function editorValue(selector: string): Promise<string> {
    return page.evaluate((css) => (document.querySelector(css) as unknown as { CodeMirror: { getValue(): string } }).CodeMirror.getValue(), selector);
  }

  async function runInConsole(query: string): Promise<void> {
    await page.goto(`${server.url}/dashboard/console?query=${encodeURIComponent(query)}`);
    await page.locator('.graphiql-query-editor .CodeMirror').waitFor();
    await page.locator('.graphiql-execute-button').click();
    await page.waitForFunction(() => {
      const pane = document.querySelector('.graphiql-response .CodeMirror') as unknown as { CodeMirror?: { getValue(): string } } | null;
      return (pane?.CodeMirror?.getValue() ?? '').startsWith('{');
    });
    await page.locator('#sql-statement, .sql-panel-error').first().waitFor();
  }

  it('logs in', async () => {
    await page.goto(`${server.url}/dashboard/login`);
    await logInToDashboard(page, server.url, `admin@${seeded.account.slug}.test`, PASSWORD);
  });

  it('shows numbers in the result pane byte for byte as the API sends them (issue 17, done-when 5)', async () => {
    const query = '{ loans(limit: 8, order_by: {amount: desc}) { name amount rate regular_payment } loans_aggregate { aggregate { count sum { amount } avg { rate amount } } } }';
    await runInConsole(query);
    const shown = await editorValue('.graphiql-response .CodeMirror');
    const api = await fetch(`${server.url}/api/graph`, { method: 'POST', headers: { ...tokenHeader(seeded.apiKey), 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
    const sent = await api.text();
    // What the API sent has digits that parsing would lose (trailing zeros, averages past a double's precision) …
    assert.match(sent, /"amount":\d+\.\d0[,}]/, 'amounts with a trailing zero');
    assert.match(sent, /"avg":\{"rate":\d+\.\d*0000[,}]/, 'an average with the trailing zeros of numeric division');
    // … and the pane shows that very text, only indented.
    const tokens = (text: string): string[] => text.match(/[,:{}[\]]|"(?:[^"\\]|\\.)*"|[^\s",:{}[\]]+/g) ?? [];
    assert.deepEqual(tokens(shown), tokens(sent), 'the same tokens, in the same order');
    assert.equal(shown.replace(/\s+(?=(?:[^"\\]|\\.|"(?:[^"\\]|\\.)*")*$)/g, ''), sent, 'byte for byte, once the indentation is taken out');
    assert.notEqual(shown, JSON.stringify(JSON.parse(sent), null, 2), 'parsing would have shown other numbers');
    await screenshot('17-01-console-exact-numbers');
  });

  it('lays the SQL out on lines, copies it, and shows the plan without estimates drawn from other accounts\' statistics', async () => {
    await runInConsole('{ loans { id } }');
    const statement = await page.locator('#sql-statement').innerText();
    assert.match(statement, /\(\n\s+SELECT .*\n\s+FROM "loans" AS "_t\d+"\n\s+WHERE "_t\d+"\."account_id" = \$\d+/, statement);
    await page.getByRole('button', { name: 'Copy SQL' }).click();
    await page.locator('.copy-status').getByText('Copied.').waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), statement);
    const plan = await page.locator('#sql-plan').innerText();
    // Issue 26, finding 2: row counts and costs come from statistics of every account's rows; the
    // console shows the plan's nodes only (EXPLAIN COSTS OFF).
    assert.match(plan, / on loans _t\d+/, plan);
    assert.doesNotMatch(plan, /cost=|rows=/, plan);
    await screenshot('17-02-console-sql-panel');
    await assertAccessible('the console');
  });

  it('does not mark the documented bare-word form as an error, and still marks a real mistake', async () => {
    await page.goto(`${server.url}/dashboard/console?query=${encodeURIComponent('{ tasks(where: {status: {_neq: completed}}) { name nope } }')}`);
    const editor = page.locator('.graphiql-query-editor');
    await editor.locator('.CodeMirror-lint-mark-error').first().waitFor();
    // CodeMirror may split one mark into several spans: read the marks' messages and their text.
    const marks = await page.evaluate(() => {
      type Mark = { __annotation?: { message: string }; find(): { from: unknown; to: unknown } };
      const editor = (document.querySelector('.graphiql-query-editor .CodeMirror') as unknown as { CodeMirror: { state: { lint: { marked: Mark[] } }; getRange(from: unknown, to: unknown): string } }).CodeMirror;
      return editor.state.lint.marked.map((mark) => ({ message: mark.__annotation?.message ?? '', text: editor.getRange(mark.find().from, mark.find().to).trim() }));
    });
    assert.deepEqual(
      marks.map((mark) => mark.text),
      ['nope'],
      `only the unknown field is underlined: ${JSON.stringify(marks)}`,
    );
    assert.match(marks[0]!.message, /Cannot query field "nope"/);
    await screenshot('17-03-console-bare-word');
  });

  it('creates a key with Post/Redirect/Get: shown once; a reload shows it no more and creates nothing', async () => {
    await page.goto(`${server.url}/dashboard/settings/api-keys`);
    await assertAccessible('Settings > API keys');
    const before = (await listApiKeys(database.db, seeded.account.id)).length;
    await page.getByLabel('Name').fill('prg key');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.waitForURL(/\/dashboard\/settings\/api-keys\?created=lq_[a-z0-9]{8}$/);
    const key = await page.getByLabel('The new key').inputValue();
    assert.match(key, /^lq_[a-z0-9]{8}_[A-Za-z0-9_-]{43}$/);
    await assertAccessible('the page with a new key');
    await screenshot('17-04-key-created-after-redirect');
    await page.reload();
    await page.getByText('It was shown only once').waitFor();
    assert.equal(await page.getByLabel('The new key').count(), 0, 'the reload does not show the key');
    assert.ok(!(await page.content()).includes(key));
    assert.equal((await listApiKeys(database.db, seeded.account.id)).length, before + 1, 'one key, not two');
  });

  it('tells a blank key name next to the field, and writes nothing', async () => {
    const before = (await listApiKeys(database.db, seeded.account.id)).length;
    await page.getByLabel('Name').fill('   ');
    await page.getByRole('button', { name: 'Create key' }).click();
    const field = page.getByLabel('Name');
    await page.locator('#key-name-error').waitFor();
    assert.equal(await field.getAttribute('aria-invalid'), 'true');
    assert.match((await page.locator('#key-name-error').innerText()).trim(), /^Enter a name/);
    // `autofocus` is applied at the browser's next rendering step, not when the element is parsed: wait for it (up to 5 s).
    await page.waitForFunction(() => document.activeElement?.id === 'key-name', null, { timeout: 5000 }).catch(() => undefined);
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'key-name', 'the field has the focus');
    assert.equal((await listApiKeys(database.db, seeded.account.id)).length, before);
    await assertAccessible('the keys page with an error');
    await screenshot('17-05-key-blank-name');
  });

  it('keeps the keys page within 390 px (the key table scrolls on its own)', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${server.url}/dashboard/settings/api-keys`);
    const wide = await page.evaluate(() => [...document.querySelectorAll('body *')].filter((e) => !e.closest('.table-scroll, .visually-hidden, .skip-link') && e.getBoundingClientRect().right > window.innerWidth + 0.5).map((e) => `${e.tagName}.${e.className}#${e.id} ${Math.round(e.getBoundingClientRect().right)}`).slice(0, 15));
    assert.deepEqual(wide, [], 'no element reaches past 390 px');
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'no sideways scrolling of the page at 390 px');
    await assertAccessible('the keys page at 390 px');
    await pageScreenshot(page, `${SCREENSHOTS}17-05b-api-keys-390px.png`);
    await page.setViewportSize({ width: 1400, height: 900 });
  });

  it('shows the metadata page, readable at 390 px wide', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Metadata' }).click();
    await page.waitForURL(/\/dashboard\/metadata$/);
    await page.getByRole('heading', { name: 'Collections' }).waitFor();
    await page.getByRole('region', { name: 'Permissions of investor' }).waitFor();
    await assertAccessible('the metadata page');
    await screenshot('17-06-metadata');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'no sideways scrolling of the page at 390 px');
    await assertAccessible('the metadata page at 390 px');
    await pageScreenshot(page, `${SCREENSHOTS}17-07-metadata-390px.png`, false);
    await page.setViewportSize({ width: 1400, height: 900 });
  });

  it('shows an invalid metadata edit made while the service runs; the previous metadata keeps serving (issue 17, done-when 3)', async () => {
    const valid = readFileSync(metadataFile, 'utf8');
    writeFileSync(metadataFile, valid.replace('      amount: numeric\n', '      amount: numeric\n      amount_in_words: text\n'));
    const alert = page.getByRole('alert');
    const deadline = Date.now() + 15_000;
    while ((await alert.count()) === 0) {
      assert.ok(Date.now() < deadline, 'the refused edit appears on the page');
      await new Promise((resolve) => setTimeout(resolve, 200));
      await page.reload();
    }
    assert.match(await alert.innerText(), /The last edit of the metadata file was refused[\s\S]*amount_in_words/);
    await assertAccessible('the metadata page with a refused edit');
    await screenshot('17-08-metadata-refused-edit');
    await runInConsole('{ loans(limit: 1) { amount } }');
    assert.match(await editorValue('.graphiql-response .CodeMirror'), /"amount": \d+\.\d\d/, 'the console still serves the previous metadata');
    writeFileSync(metadataFile, valid);
  });

  it('reported no script errors, failed requests or CSP violations', () => {
    assert.deepEqual(pageProblems, []);
  });
});
