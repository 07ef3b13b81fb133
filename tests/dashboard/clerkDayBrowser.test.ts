import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { createLoan } from '../../app/loanWrites.js';
import { readProductSettings } from '../../app/productSettings.js';
import type { TestDatabase } from '../support/testDatabase.js';
import { startTestServer, type TestServer } from '../support/http.js';
import { openSeededTestDatabase, type SeededAccount } from '../support/seededService.js';
import { ChromiumSuite, openWatchedPage, logInToDashboard, pageScreenshot } from '../support/chromium.js';
import { seriousAccessibilityViolations } from '../support/axe.js';

/**
 * The audit of a clerk's day, in Chromium at 1366×768, on a seeded account: what the pages show
 * is in the clerk's words — stored codes (a document's `deed_of_trust`) as words, and the loan
 * form's refusals naming fields by their labels (`Date Funded`, not `Date_Funded` or
 * `dateFunded`); the overview's "Due this week" lists the first 25 payments (with 30 more loans
 * due this week than the seed has), says of how many, and links to them all in the loans list,
 * in the same order; amounts typed with thousands separators (`1,250.00`) are taken by every money
 * input — a payment, the loan form's amounts, the money settings — and anything ambiguous
 * (`1,25.00`, `1.250,00`, `12,50`) is refused with nothing written. axe-core on each page (no serious or critical violation); screenshots in
 * tests/artifacts/dashboard/clerk-day/.
 */
const CHROMIUM = new ChromiumSuite("the clerk's day browser test", 'tests/dashboard/clerkDayBrowser.test.ts');
const SCREENSHOTS = fileURLToPath(new URL('../artifacts/dashboard/clerk-day/', import.meta.url));
const PASSWORD = 'correct horse battery'; // seedAccount's admin password
const VIEWPORT = { width: 1366, height: 768 } as const;

let database: TestDatabase;
let server: TestServer;
let seeded: SeededAccount;
let browser: Browser;
let page: Page;
const pageProblems: string[] = [];
let businessDate = '';
/** The loans whose next row is due this week, soonest first (ties by loan id), as the database says. */
let dueThisWeek: { readonly id: string; readonly due: string }[] = [];
/** How many loans the overview lists of this week's dues. */
const DUE_SHOWN = 25;
/** The loans' links of the table rows under `scope`, in order. */
async function loanLinks(scope: string): Promise<string[]> {
  return page.locator(`${scope} tbody tr a[href^="/dashboard/loans/"]`).evaluateAll((links) => links.map((link) => (link as unknown as { getAttribute(name: string): string }).getAttribute('href').slice('/dashboard/loans/'.length)));
}

/**
 * The words of the page's main text that are codes, not words: with an underscore
 * (`deed_of_trust`, `Date_Funded`) or an inner capital (`dateFunded`). E-mail addresses
 * (`adam_mann@…`) are what they are and left out.
 */
async function codeWords(): Promise<string[]> {
  const text = (await page.locator('main').innerText()).replace(/\S+@\S+/g, ' ');
  return [...new Set(text.match(/\b(?:\w+_\w+|[a-z]+[A-Z]\w*)\b/g) ?? [])];
}

async function checkPage(name: string): Promise<void> {
  assert.deepEqual(await seriousAccessibilityViolations(page), [], `axe on ${name} (${page.url()})`);
  await pageScreenshot(page, `${SCREENSHOTS}${name}.png`);
}

describe("A clerk's day: the audit's findings (Chromium)", () => {
  if (CHROMIUM.skipped("checks the audit's findings in Chromium")) return;

  let loanPath = '';

  before(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    ({ database, seeded: [seeded] } = await openSeededTestDatabase([{ scale: 0.01 }]));
    server = await startTestServer(database.db);
    const account = seeded.account.id;
    const { rows } = await database.db.query<{ id: string }>(`SELECT l.id FROM loans l WHERE l.account_id = $1 AND l.status = 'servicing' AND EXISTS (SELECT 1 FROM borrows b WHERE b.account_id = l.account_id AND b.loan_id = l.id) ORDER BY l.id LIMIT 1`, [account]);
    const loanId = rows[0]!.id;
    loanPath = `/dashboard/loans/${loanId}`;
    // A lien document of the loan, its type and status stored as codes.
    await database.db.query(
      `WITH document AS (INSERT INTO documents (account_id, name, status, type, uploaded_date) VALUES ($1, 'Recorded lien.pdf', 'pending_review', 'deed_of_trust', '2026-01-20') RETURNING id)
       INSERT INTO loan_documents (account_id, loan_id, document_id) SELECT $1, $2, id FROM document`,
      [account, loanId],
    );
    // More loans due this week than the overview lists: 30 new ones, their first payments spread over the week.
    businessDate = (await database.db.query<{ d: string }>('SELECT loanql_business_date($1)::text AS d', [account])).rows[0]!.d;
    for (let i = 0; i < 30; i++) {
      const firstDue = (await database.db.query<{ d: string }>('SELECT ($1::date + $2::int)::text AS d', [businessDate, i % 7])).rows[0]!.d;
      await createLoan(database.db, account, { Name: `Due this week ${i + 1}`, Amount: 10000 + i, Rate: 6, Term: 12, Frequency: 'monthly', First_Payment_Date: firstDue, Status: 'servicing' });
    }
    dueThisWeek = (
      await database.db.query<{ id: string; due: string }>(
        `SELECT l.id, s.due::text AS due FROM schedules s JOIN loans l ON l.account_id = s.account_id AND l.id = s.loan_id
          WHERE s.account_id = $1 AND s.is_next AND l.status = 'servicing' AND s.due BETWEEN $2::date AND $2::date + 6 ORDER BY s.due, s.loan_id`,
        [account, businessDate],
      )
    ).rows;
    browser = await CHROMIUM.launch();
    ({ page } = await openWatchedPage(browser, {
      viewport: VIEWPORT,
      problems: pageProblems,
      // The refusals the walk provokes on purpose: forms answered 400 and shown again.
      expectedRefusal: (response) => response.status() === 400 && response.request().method() === 'POST',
    }));
    await page.goto(`${server.url}/dashboard/login`);
    await logInToDashboard(page, server.url, `admin@${seeded.account.slug}.test`, PASSWORD);
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    await database?.close();
  });

  it("shows stored codes in words: the loan page's documents, the loans list, a person", async () => {
    await page.goto(`${server.url}${loanPath}`);
    const lien = page.getByRole('region', { name: 'Documents' }).getByRole('row').filter({ hasText: 'Recorded lien.pdf' });
    assert.deepEqual((await lien.getByRole('cell').allInnerTexts()).map((cell) => cell.trim()), ['Recorded lien.pdf', 'deed of trust', 'pending review', '2026-01-20']);
    assert.deepEqual(await codeWords(), [], 'no code on the loan page');
    await checkPage('loan');

    await page.goto(`${server.url}/dashboard/loans`);
    assert.deepEqual(await codeWords(), [], 'no code on the loans list');
    await page.goto(`${server.url}/dashboard/people`);
    assert.deepEqual(await codeWords(), [], 'no code on the people list');
    await page.goto(`${server.url}${loanPath}`);
    await page.locator('main a[href^="/dashboard/people/"]').first().click();
    await page.waitForURL(/\/dashboard\/people\/[0-9a-f-]{36}$/);
    assert.deepEqual(await codeWords(), [], 'no code on a person’s page');
  });

  it("the loan form's refusals name each field by its label and say values in words", async () => {
    await page.goto(`${server.url}/dashboard/loans/new`);
    await page.getByLabel('Name (required)').fill('Cedar St bridge');
    await page.getByLabel('Amount', { exact: true }).fill('250000');
    await page.getByLabel('Rate').fill('10');
    await page.getByLabel('Term').fill('12');
    await page.getByLabel('Frequency').selectOption('monthly');
    await page.getByLabel('Amortization').selectOption('interest_only');
    await page.getByLabel('Regular Payment').fill('2500');
    await page.getByLabel('Date Funded').fill('2026-05-01');
    await page.getByLabel('First Payment Date').fill('2026-04-01');
    await page.getByRole('button', { name: 'Create loan' }).click();
    await page.waitForLoadState();

    assert.equal(
      await page.getByRole('alert').first().innerText(),
      'Not saved — invalid fields: Regular Payment, Date Funded, First Payment Date',
    );
    assert.equal(
      await page.locator('#loan-field-Regular_Payment-error').innerText(),
      'Regular Payment: cannot be given for an interest only loan: each row pays the interest and the last adds the principal (leave it empty, or make the loan amortizing)',
    );
    const funded = 'Date Funded (2026-05-01) is after First Payment Date (2026-04-01); a loan is funded on or before its first payment';
    assert.equal(await page.locator('#loan-field-Date_Funded-error').innerText(), `Date Funded: ${funded}`);
    assert.equal(await page.locator('#loan-field-First_Payment_Date-error').innerText(), `First Payment Date: ${funded}`);
    assert.deepEqual(await codeWords(), [], 'no code in the refused form');
    assert.equal(await page.getByLabel('Regular Payment').getAttribute('aria-invalid'), 'true');
    await checkPage('loan-form-refused');

    // The schedule's own refusal, whose message names fields as the schedule does (`regularPayment`).
    await page.getByLabel('Amortization').selectOption('amortizing');
    await page.getByLabel('Regular Payment').fill('100');
    await page.getByLabel('First Payment Date').fill('');
    await page.getByRole('button', { name: 'Create loan' }).click();
    await page.waitForLoadState();
    assert.match(await page.locator('#loan-field-Regular_Payment-error').innerText(), /^Regular Payment: no schedule can be built: Regular Payment 100\.00 must exceed the first row's interest /);
    assert.deepEqual(await codeWords(), [], "no code in the schedule's refusal");
  });

  it("the overview's “Due this week” lists the first 25, says of how many, and links to them all in due order", async () => {
    const total = dueThisWeek.length;
    assert.ok(total > DUE_SHOWN, `more loans due this week (${total}) than the overview lists`);
    const weekEnd = (await database.db.query<{ d: string }>('SELECT ($1::date + 6)::text AS d', [businessDate])).rows[0]!.d;
    await page.goto(`${server.url}/dashboard`);
    const card = page.getByRole('region', { name: /^Due this week/ });
    assert.deepEqual(await loanLinks('#due-this-week'), dueThisWeek.slice(0, DUE_SHOWN).map((loan) => loan.id), 'the first 25, soonest first');
    assert.equal(await card.getByRole('heading').innerText(), `Due this week ${total}`);
    assert.equal(await card.getByText(/^The first/).innerText(), `The first ${DUE_SHOWN} of ${total} payments due from ${businessDate} to ${weekEnd}, soonest first.`);
    // The card is bounded like the late loans' beside it (25 rows at most each), not a page of its own.
    const [dueBox, lateBox] = [await card.boundingBox(), await page.getByRole('region', { name: 'Late loans' }).boundingBox()];
    assert.ok(dueBox && lateBox && dueBox.height <= lateBox.height, `the card is no taller than the late loans': ${JSON.stringify([dueBox, lateBox])}`);
    await checkPage('overview');

    await card.getByRole('link', { name: 'Loans due this week' }).click();
    await page.waitForURL(/\/dashboard\/loans\?/);
    assert.equal(await page.getByRole('status').filter({ hasText: /^Loans / }).innerText(), `Loans 1–25 of ${total} with the next payment due from ${businessDate} to ${weekEnd}.`);
    assert.equal(await page.getByLabel('Next payment').inputValue(), 'week');
    assert.equal(await page.getByLabel('Sort').inputValue(), 'next_due');
    const listed = [...(await loanLinks('main'))];
    await checkPage('loans-due-this-week');
    for (let more = page.getByRole('link', { name: 'Next' }); (await more.count()) > 0; more = page.getByRole('link', { name: 'Next' })) {
      await more.click();
      await page.waitForLoadState();
      listed.push(...(await loanLinks('main')));
    }
    assert.deepEqual(listed, dueThisWeek.map((loan) => loan.id), 'every loan due this week, in the overview’s order');
  });

  it('the payment form takes 1,250.00 as 1250.00 and refuses 1,25.00 and 1.250,00, writing nothing', async () => {
    const loanId = loanPath.slice('/dashboard/loans/'.length);
    const payments = async (): Promise<string[]> =>
      (await database.db.query<{ amount: string }>('SELECT amount::text FROM payments WHERE account_id = $1 AND loan_id = $2 ORDER BY posted_at, id', [seeded.account.id, loanId])).rows.map((payment) => payment.amount);
    const before = await payments();
    await page.goto(`${server.url}${loanPath}`);
    await page.getByLabel('Amount').fill('1,250.00');
    await page.getByRole('button', { name: 'Post payment' }).click();
    await page.waitForURL(/done=payment-posted/);
    assert.match(await page.locator('#outcome').innerText(), /^Payment posted/);
    assert.deepEqual(await payments(), [...before, '1250.00'], 'the payment is 1250.00');
    const newest = page.getByRole('region', { name: 'Payments' }).getByRole('row').nth(1);
    assert.ok((await newest.getByRole('cell').allInnerTexts()).includes('$1,250.00'), 'listed as $1,250.00');

    for (const typed of ['1,25.00', '1.250,00', '12,50']) {
      await page.getByLabel('Amount').fill(typed);
      await page.getByRole('button', { name: 'Post payment' }).click();
      await page.waitForLoadState();
      assert.equal(await page.locator('#outcome').innerText(), 'Amount: expected an amount above 0 with at most 2 decimals, e.g. 1250.00 or 1,250.00 (commas only between thousands).', typed);
      assert.equal(await page.getByLabel('Amount').inputValue(), typed, 'what was typed is kept');
    }
    assert.deepEqual(await payments(), [...before, '1250.00'], 'nothing more written');
  });

  it("the loan form's amounts (Amount, a currency field) take thousands separators; an ambiguous one is refused at its field", async () => {
    await page.goto(`${server.url}/dashboard/loans/new`);
    await page.getByLabel('Name (required)').fill('Birch Ln construction');
    await page.getByLabel('Amount', { exact: true }).fill('1,250,000.00');
    await page.getByLabel('Origination Fee').fill('12,500');
    await page.getByLabel('Rate').fill('9');
    await page.getByLabel('Term').fill('24');
    await page.getByLabel('Frequency').selectOption('monthly');
    await page.getByLabel('Date Funded').fill('2026-03-01');
    await page.getByRole('button', { name: 'Create loan' }).click();
    await page.waitForURL(/done=created/);
    const terms = await page.locator('main').innerText();
    assert.match(terms, /Amount\s+\$1,250,000\.00/);
    assert.match(terms, /Origination Fee\s+\$12,500\.00/);
    const id = /\/dashboard\/loans\/([0-9a-f-]{36})/.exec(page.url())![1]!;
    const stored = (await database.db.query<{ amount: string; fee: string }>(`SELECT amount::text, custom_fields->>'origination_fee' AS fee FROM loans WHERE account_id = $1 AND id = $2`, [seeded.account.id, id])).rows[0]!;
    assert.deepEqual(stored, { amount: '1250000.00', fee: '12500' });

    await page.getByRole('link', { name: 'Edit loan' }).click();
    await page.getByLabel('Amount', { exact: true }).fill('1,25.00');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.waitForLoadState();
    assert.match(await page.locator('#loan-field-Amount-error').innerText(), /^Amount: expected a number, greater than 0, with at most 2 decimal places, and at most 12 digits before the point, got "1,25\.00"$/);
    assert.equal((await database.db.query<{ amount: string }>('SELECT amount::text FROM loans WHERE account_id = $1 AND id = $2', [seeded.account.id, id])).rows[0]!.amount, '1250000.00', 'nothing written');
    await checkPage('loan-form-amount-refused');
  });

  it('Settings > Servicing takes a money setting typed 1,250.00 and refuses 12,50 (a number input would have sent 1250)', async () => {
    const nsfFee = async () => (await readProductSettings(database.db, seeded.account.id)).settings.get('nsf_fee');
    await page.goto(`${server.url}/dashboard/settings/servicing`);
    await page.getByLabel(/^NSF fee/).fill('');
    await page.getByLabel(/^NSF fee/).pressSequentially('1,250.00'); // typed key by key, as a clerk does
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.waitForURL(/saved=/);
    assert.equal(await nsfFee(), '1250.00');
    assert.equal(await page.getByLabel(/^NSF fee/).inputValue(), '1250.00');

    await page.getByLabel(/^NSF fee/).fill('');
    await page.getByLabel(/^NSF fee/).pressSequentially('12,50'); // typed key by key, as a clerk does
    const [answer] = await Promise.all([page.waitForResponse((response) => response.request().method() === 'POST'), page.getByRole('button', { name: 'Save settings' }).click()]);
    assert.equal(answer.status(), 400, `12,50 is refused, not saved (${answer.status()}; NSF fee now ${await nsfFee()})`);
    await page.waitForLoadState();
    assert.match(await page.locator('#setting-nsf_fee-error').innerText(), /^nsf_fee: must be a number from 0 to /);
    assert.equal(await page.getByLabel(/^NSF fee/).inputValue(), '12,50', 'what was typed is kept');
    assert.equal(await nsfFee(), '1250.00', 'nothing written');
    await checkPage('settings-servicing-refused');
  });

  it('saw no script error or unexpected refusal', () => {
    assert.deepEqual(pageProblems, []);
  });
});
