import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { createApiKey } from '../../app/apiKeys.js';
import { createAdmin, updateAccount } from '../../app/accounts.js';
import { moneyText } from '../../domain/moneyText.js';
import { graphBody } from '../support/graphData.js';
import { startKeyedService, type KeyedService } from '../support/seededService.js';
import { installTestClock, setTestClock } from '../support/testClock.js';
import { DashboardClient } from '../dashboard/dashboardClient.js';
import { pdfPages } from '../support/pdfText.js';

/**
 * The payoff letter (docs/ledger.md, "Payoff letter"): `GET /api/loan/{id}/payoff?format=pdf`
 * and the dashboard's "Payoff letter (PDF)" link, over HTTP, for SPEC §12 R5's worked examples on
 * the reference loan of §7 made over REST. The PDF is read back as a viewer reads it (pdfjs-dist)
 * and every figure in it is the JSON quote's, to the cent, in the account's currency; the unpaid
 * fees are listed one by one; bad days and loans the key may not read are refused as the JSON
 * route refuses them.
 */
let s: KeyedService;
const LENDER = 'Harbor Private Lending';
const ISSUED = '2026-04-01';

const graph = async (query: string, variables: Record<string, unknown> = {}, key = s.key): Promise<any> => {
  const body = await graphBody(s.url, key, query, variables);
  assert.equal(body.errors, undefined, JSON.stringify(body.errors));
  return body.data;
};

/** The reference loan of SPEC §7 (100,000 at 12 %, 12 monthly, funded 2026-01-15) with a borrower. */
async function referenceLoan(name: string, borrower: string): Promise<string> {
  const created = await s.rest.post('/api/loan', {
    Name: name, Amount: 100000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing', Borrower_Name: borrower,
  });
  assert.equal(created.status, 201, created.text);
  return created.json.loan.id as string;
}

async function pay(loan: string, date: string, amount: string): Promise<void> {
  await graph(
    `mutation ($loan: uuid!, $date: date!, $amount: numeric!) { insert_payments_one(object: {loan_id: $loan, date: $date, amount: $amount, type: "regular", method: "ach"}) { id } }`,
    { loan, date, amount },
  );
}

/** The PDF's text as a viewer extracts it, every run of white space one space. */
async function pdfText(bytes: Uint8Array): Promise<string> {
  return (await pdfPages(bytes)).map((page) => page.raw).join(' ').replace(/\s+/g, ' ');
}

/** GET a letter with `key`: the status, the content type and, for a PDF, its text. */
async function letter(path: string, key = s.key, headers: Record<string, string> = {}): Promise<{ status: number; type: string; text: string; disposition: string | null }> {
  const response = await fetch(`${s.url}${path}`, { headers: { authorization: `Token ${key}`, ...headers } });
  const type = response.headers.get('content-type') ?? '';
  const bytes = new Uint8Array(await response.arrayBuffer());
  const text = type.startsWith('application/pdf') ? await pdfText(bytes) : new TextDecoder().decode(bytes);
  return { status: response.status, type, text, disposition: response.headers.get('content-disposition') };
}

/** The JSON quote's figures as exact decimal texts (`84600.20`). */
async function quote(loan: string, date: string): Promise<Record<string, string>> {
  const answer = await s.rest.get(`/api/loan/${loan}/payoff?date=${date}`);
  assert.equal(answer.status, 200, answer.text);
  const figures: Record<string, string> = {};
  for (const name of ['payoff', 'principal_outstanding', 'interest_due', 'accrued_interest', 'interest_paid_ahead', 'fees_due', 'credit_balance', 'per_diem']) {
    figures[name] = answer.exact[name].text;
  }
  return figures;
}

const usd = (amount: string) => moneyText(amount, 'USD', '-');
/** A part the payoff subtracts, as the letter prints it (what it does to the total). */
const less = (amount: string) => (/^[0.]+$/.test(amount) ? usd(amount) : usd(`-${amount}`));

/** Asserts that the letter's text carries every figure of the quote on its own labelled line. */
function assertFigures(text: string, figures: Record<string, string>, date: string): void {
  const lines: [string, string][] = [
    ['Principal outstanding', usd(figures.principal_outstanding!)],
    ['Interest due', usd(figures.interest_due!)],
    [`Interest accrued to ${date}`, usd(figures.accrued_interest!)],
    ['Fees due', usd(figures.fees_due!)],
    ['Less credit', less(figures.credit_balance!)],
    [`Total to pay off on ${date}`, usd(figures.payoff!)],
  ];
  if (figures.interest_paid_ahead !== '0.00') lines.push(['Less interest already paid on later instalments', less(figures.interest_paid_ahead!)]);
  for (const [label, amount] of lines) assert.ok(text.includes(`${label} ${amount}`), `"${label} ${amount}" in: ${text}`);
  assert.ok(text.includes(`Per diem: ${usd(figures.per_diem!)} for each day after ${date}`), text);
  assert.match(text, new RegExp(`good through ${date}, and a payoff on a later day needs a new quote`));
}

let onTime: string;
let late: string;

before(async () => {
  s = await startKeyedService();
  await installTestClock(s.db);
  await setTestClock(s.db, ISSUED);
  await updateAccount(s.db, s.account.slug, { name: LENDER });
  onTime = await referenceLoan('Elm St refinance', 'Ada Borrower');
  await pay(onTime, '2026-02-15', '8884.88');
  await pay(onTime, '2026-03-15', '8884.88');
  const address = await graph(`mutation { insert_addresses_one(object: {street1: "12 Elm St", city: "Springfield", state: "IL", zipcode: "62704"}) { id } }`);
  await graph(`mutation ($l: uuid!, $a: uuid!) { insert_address_details_one(object: {loan_id: $l, address_id: $a}) { id } }`, { l: onTime, a: address.insert_addresses_one.id });
  // SPEC §12 R1's delinquent loan: nothing paid in February, 10,000.00 on 2026-03-20.
  late = await referenceLoan('Oak Ave sale', 'Ben Borrower');
  await pay(late, '2026-03-20', '10000.00');
});
after(async () => {
  await setTestClock(s?.db, null).catch(() => undefined);
  await s?.close();
});

describe('Payoff letter: GET /api/loan/{id}/payoff?format=pdf', () => {
  it('R5 on time, 2026-03-31: the letter totals 84,600.20 and shows every figure of the JSON quote, the lender, the loan, its borrower and property', async () => {
    const figures = await quote(onTime, '2026-03-31');
    assert.equal(figures.payoff, '84600.20');
    const answer = await letter(`/api/loan/${onTime}/payoff?date=2026-03-31&format=pdf`);
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.type, 'application/pdf');
    assert.equal(answer.disposition, `attachment; filename="payoff-${onTime.slice(0, 8)}-2026-03-31.pdf"`);
    assertFigures(answer.text, figures, '2026-03-31');
    assert.ok(answer.text.includes('Total to pay off on 2026-03-31 $84,600.20'), answer.text);
    assert.ok(answer.text.includes('Per diem: $28.05 for each day after 2026-03-31'), answer.text);
    for (const fact of [LENDER, `Issued ${ISSUED}`, `Elm St refinance (${onTime})`, 'Borrower: Ada Borrower', 'Property: 12 Elm St, Springfield, IL 62704', 'Good through: 2026-03-31', 'Amounts in USD']) {
      assert.ok(answer.text.includes(fact), `${fact} in: ${answer.text}`);
    }
    // No fee is owed: none is listed.
    assert.doesNotMatch(answer.text, /dated 20/);
  });

  it("R5 delinquent, 2026-03-31: 93,258.44, the two unpaid late fees listed one by one and adding up to the quote's fees due; Accept: application/pdf asks for it too", async () => {
    const figures = await quote(late, '2026-03-31');
    assert.deepEqual([figures.payoff, figures.fees_due], ['93258.44', '888.48']);
    const answer = await letter(`/api/loan/${late}/payoff?date=2026-03-31`, s.key, { accept: 'application/pdf' });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.type, 'application/pdf');
    assertFigures(answer.text, figures, '2026-03-31');
    assert.ok(answer.text.includes('Fees due $888.48 Late fee, row 1, dated 2026-02-26 $444.24 Late fee, row 2, dated 2026-03-26 $444.24'), answer.text);
    assert.ok(answer.text.includes('Borrower: Ben Borrower'), answer.text);
    assert.doesNotMatch(answer.text, /Property:/, 'the loan has no property address');
  });

  it('a paid-ahead loan (R5: 76,051.92 on 04-12) shows the interest paid ahead as subtracted', async () => {
    const ahead = await referenceLoan('Paid ahead', 'Cy Borrower');
    await pay(ahead, '2026-02-15', '8884.88');
    await pay(ahead, '2026-03-15', '8884.88');
    await pay(ahead, '2026-04-10', '8884.88');
    const figures = await quote(ahead, '2026-04-12');
    assert.deepEqual([figures.payoff, figures.interest_paid_ahead], ['76051.92', '841.51']);
    const answer = await letter(`/api/loan/${ahead}/payoff?date=2026-04-12&format=pdf`);
    assert.equal(answer.status, 200, answer.text);
    assertFigures(answer.text, figures, '2026-04-12');
  });

  it('JSON stays the default: no format, format=json, and an Accept that is neither (text/plain) all answer the quote', async () => {
    const expected = (await s.rest.get(`/api/loan/${onTime}/payoff?date=2026-03-31`)).text;
    assert.equal((await s.rest.get(`/api/loan/${onTime}/payoff?date=2026-03-31&format=json`)).text, expected);
    const plain = await s.rest.send('GET', `/api/loan/${onTime}/payoff?date=2026-03-31`, { headers: { accept: 'text/plain' } });
    assert.equal(plain.status, 200);
    assert.equal(plain.text, expected);
    assert.ok((s.rest.document as any).paths['/api/loan/{id}/payoff'].get.responses['200'].content['application/pdf'], 'the OpenAPI document describes the letter');
  });

  it('a bad day is a 400 naming date: outside 1900–2999 or not a day, as the JSON route; before the loan was funded, as the dashboard\'s quote (the JSON route still quotes it)', async () => {
    for (const date of ['3000-01-01', '1899-12-31', '2026-02-30']) {
      for (const format of ['json', 'pdf']) {
        const answer = await s.rest.get(`/api/loan/${onTime}/payoff?date=${date}&format=${format}`);
        assert.equal(answer.status, 400, `${date} ${format}: ${answer.text}`);
        assert.equal(answer.json.fields.date, 'expected a day as YYYY-MM-DD (1900–2999)');
        // 3000-01-01 was told "date must be a calendar day as YYYY-MM-DD", which it is.
        assert.equal(answer.json.error, 'date must be a calendar day as YYYY-MM-DD in the years 1900–2999');
      }
    }
    const early = await s.rest.get(`/api/loan/${onTime}/payoff?date=2026-01-14&format=pdf`);
    assert.equal(early.status, 400, early.text);
    assert.equal(early.json.error, 'date: 2026-01-14 is before the loan was funded (2026-01-15)');
    assert.equal(early.json.fields.date, 'expected a day on or after 2026-01-15, when the loan was funded');
    // The funding day itself is quoted.
    assert.equal((await letter(`/api/loan/${onTime}/payoff?date=2026-01-15&format=pdf`)).status, 200);
    const csv = await s.rest.get(`/api/loan/${onTime}/payoff?format=csv`);
    assert.equal(csv.status, 400);
    assert.equal(csv.json.fields.format, 'expected one of json, pdf');
  });

  it("another account's loan, and no loan at all, are 404 as the JSON route", async () => {
    const other = await s.newAccount();
    for (const format of ['json', 'pdf']) {
      assert.equal((await other.rest.get(`/api/loan/${onTime}/payoff?date=2026-03-31&format=${format}`)).status, 404, format);
      assert.equal((await s.rest.get(`/api/loan/00000000-0000-4000-8000-000000000000/payoff?format=${format}`)).status, 404, format);
      assert.equal((await s.rest.get(`/api/loan/not-a-uuid/payoff?format=${format}`)).status, 404, format);
    }
  });

  it('an investor key: 404 for a loan it does not fund; its own loan\'s letter has the figures but no borrower or property it cannot read', async () => {
    const investor = (await graph(`mutation { insert_people_one(object: {name: "Ivy Investor", entity_type: "individual"}) { id } }`)).insert_people_one.id;
    await graph(
      `mutation ($p: uuid!, $l: uuid!) { insert_funding_sources_one(object: {person_id: $p, loan_id: $l, original_amount: 60000, rate: 10, date_funded: "2026-01-15", class: "A"}) { id } }`,
      { p: investor, l: onTime },
    );
    const key = (await createApiKey(s.db, s.accountId, 'ivy portal', { role: 'investor', variables: new Map([['person_id', investor]]) })).key;
    for (const format of ['json', 'pdf']) {
      const response = await fetch(`${s.url}/api/loan/${late}/payoff?date=2026-03-31&format=${format}`, { headers: { authorization: `Token ${key}` } });
      assert.equal(response.status, 404, format);
    }
    const own = await letter(`/api/loan/${onTime}/payoff?date=2026-03-31&format=pdf`, key);
    assert.equal(own.status, 200, own.text);
    assertFigures(own.text, await quote(onTime, '2026-03-31'), '2026-03-31');
    assert.doesNotMatch(own.text, /Ada Borrower|Elm St, Springfield/);
  });
});

describe("Payoff letter: the lender's letterhead (the account's profile, PATCH /api/account)", () => {
  it('prints the legal name, address, phone and e-mail at the top and the payment instructions after the per diem; an empty profile prints what it did before', async () => {
    const path = `/api/loan/${onTime}/payoff?date=2026-03-31&format=pdf`;
    const plain = (await letter(path)).text;
    assert.ok(plain.startsWith(`${LENDER} Amounts in USD Payoff letter Issued ${ISSUED}`), plain);
    assert.doesNotMatch(plain, /Payment instructions/);

    const profile = {
      legal_name: 'Harbor Private Lending LLC',
      address_line1: '200 W Madison St',
      address_line2: 'Suite 1400',
      city: 'Chicago',
      region: 'IL',
      postal_code: '60606',
      country: 'United States',
      phone: '+1 312 555 0100',
      email: 'payoffs@harbor.example',
      payment_instructions: 'Wire to First Lakes Bank, Chicago\nABA 071000013, account 555123\nReference: the loan id',
    };
    assert.equal((await s.rest.patch('/api/account', profile)).status, 200);
    const headed = await letter(path);
    assert.equal(headed.status, 200, headed.text);
    assert.ok(
      headed.text.startsWith(
        'Harbor Private Lending LLC 200 W Madison St Suite 1400 Chicago, IL 60606 United States Phone +1 312 555 0100 | payoffs@harbor.example Amounts in USD Payoff letter Issued 2026-04-01',
      ),
      headed.text,
    );
    assert.ok(
      headed.text.includes('since payments, fees and interest after that day change it. Payment instructions Wire to First Lakes Bank, Chicago ABA 071000013, account 555123 Reference: the loan id'),
      headed.text,
    );
    assert.match(headed.text, new RegExp(`Harbor Private Lending LLC - payoff letter ${onTime} - page 1 of 1`));
    assertFigures(headed.text, await quote(onTime, '2026-03-31'), '2026-03-31');

    // Only an address (no legal name, no instructions): the account's name heads it, nothing else is added.
    const cleared = Object.fromEntries(Object.keys(profile).map((name) => [name, null]));
    assert.equal((await s.rest.patch('/api/account', { ...cleared, address_line1: '9 Lake St' })).status, 200);
    const addressOnly = (await letter(path)).text;
    assert.ok(addressOnly.startsWith(`${LENDER} 9 Lake St Amounts in USD Payoff letter`), addressOnly);
    assert.doesNotMatch(addressOnly, /Payment instructions|Phone/);

    assert.equal((await s.rest.patch('/api/account', cleared)).status, 200);
    assert.equal((await letter(path)).text, plain, 'the empty profile prints the letter as before');
  });
});

describe('Payoff letter: the dashboard loan page link', () => {
  it("the quote's \"Payoff letter (PDF)\" link gives the REST letter's text, figures to the cent", async () => {
    const password = 'letter-password-1';
    const email = `admin@${s.account.slug}.test`;
    await createAdmin(s.db, s.accountId, { email, password, name: 'Dana Admin' });
    const browser = new DashboardClient(s.url);
    assert.equal((await browser.logIn(email, password)).status, 303);
    const page = await browser.get(`/dashboard/loans/${late}?quote_date=2026-03-31`);
    assert.equal(page.status, 200);
    assert.match(page.text, /data-quote="payoff"><strong>\$93,258\.44</);
    const href = /<a class="payoff-letter" href="([^"]+)"[^>]*>Payoff letter \(PDF\)<\/a>/.exec(page.text)?.[1];
    assert.equal(href, `/dashboard/loans/${late}/payoff-letter.pdf?date=2026-03-31`);
    const response = await browser.send(href!, { method: 'GET' });
    assert.equal(response.status, 200, response.text.slice(0, 300));
    assert.equal(response.headers.get('content-type'), 'application/pdf');
    const fromDashboard = await pdfText(new Uint8Array(await (await fetch(`${s.url}${href}`, { headers: { cookie: `loanql_session=${browser.sessionToken}` } })).arrayBuffer()));
    const fromRest = (await letter(`/api/loan/${late}/payoff?date=2026-03-31&format=pdf`)).text;
    assert.equal(fromDashboard, fromRest);
    assertFigures(fromDashboard, await quote(late, '2026-03-31'), '2026-03-31');
    // A day before funding is a 400 page naming the payoff date; nothing is made.
    const early = await browser.get(`/dashboard/loans/${late}/payoff-letter.pdf?date=2026-01-01`);
    assert.equal(early.status, 400);
    assert.match(early.text, /Payoff date: 2026-01-01 is before the loan was funded \(2026-01-15\)/);
    assert.equal((await browser.get(`/dashboard/loans/00000000-0000-4000-8000-000000000000/payoff-letter.pdf`)).status, 404);
  });
});
