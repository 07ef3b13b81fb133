import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { markRemitted } from '../../app/remittances.js';
import type { Account } from '../../app/accounts.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';
import { startTestServer, type TestServer } from '../support/http.js';
import { createAccountWithAdmin, DashboardClient } from './dashboardClient.js';

/**
 * Investors over HTTP (the walk in Chromium is investorsBrowser.test.ts): the list pages through
 * every investor, 50 a page by name. It used to show the first 500 and nothing more — the
 * 501st investor was on no page and the list did not say it was cut. The remittance run's page
 * lists the 12 most recent remittances and says so when there are older ones.
 */
const PASSWORD = 'correct horse battery';
const INVESTORS = 503;

let database: TestDatabase;
let server: TestServer;
let client: DashboardClient;
let account: Account;

/** The investors' names a page lists, in order. */
const namesOn = (page: string): string[] => [...page.matchAll(/<a href="\/dashboard\/investors\/[0-9a-f-]{36}">([^<]*)<\/a>/g)].map((match) => match[1]!);

before(async () => {
  database = await openTestDatabase();
  server = await startTestServer(database.db);
  const made = await createAccountWithAdmin(database.db, PASSWORD);
  account = made.account;
  const email = made.email;
  const loan = (await database.db.query<{ id: string }>(`INSERT INTO loans (account_id, name, status, amount) VALUES ($1, 'Pooled loan', 'lead', 1000000) RETURNING id`, [account.id])).rows[0]!.id;
  // Investor 001 … 503, each funding 1,000.00 of the loan on 2026-01-15.
  await database.db.query(
    `WITH people_made AS (
       INSERT INTO people (account_id, name, entity_type) SELECT $1, 'Investor ' || lpad(n::text, 3, '0'), 'individual' FROM generate_series(1, $3::int) n RETURNING id)
     INSERT INTO funding_sources (account_id, loan_id, person_id, original_amount, rate, date_funded) SELECT $1, $2, id, 1000.00, 8, '2026-01-15' FROM people_made`,
    [account.id, loan, INVESTORS],
  );
  client = new DashboardClient(server.url);
  assert.equal((await client.logIn(email, PASSWORD)).status, 303);
});

after(async () => {
  await server?.close();
  await database?.close();
});

describe('The investors list', () => {
  it('shows 50 a page by name, says how many there are, and links to the next page', async () => {
    const first = await client.get('/dashboard/investors');
    assert.equal(first.status, 200);
    assert.deepEqual(namesOn(first.text), Array.from({ length: 50 }, (_, i) => `Investor ${String(i + 1).padStart(3, '0')}`));
    assert.match(first.text, new RegExp(`Investors 1–50 of ${INVESTORS}, by name\\.`));
    assert.match(first.text, /<nav class="pager" aria-label="Investors pages">[\s\S]*Page 1 of 11[\s\S]*<a href="\/dashboard\/investors\?page=2" rel="next">Next<\/a>/);
    assert.match(first.text, /<td class="num">1<\/td><td class="num">\$1,000\.00<\/td>/);
  });

  it('lists every investor past the 500th on the last page', async () => {
    const lastPage = await client.get('/dashboard/investors?page=11');
    assert.equal(lastPage.status, 200);
    assert.deepEqual(namesOn(lastPage.text), ['Investor 501', 'Investor 502', 'Investor 503']);
    assert.match(lastPage.text, new RegExp(`Investors 501–${INVESTORS} of ${INVESTORS}, by name\\.`));
    assert.match(lastPage.text, /<a href="\/dashboard\/investors\?page=10" rel="prev">Previous<\/a>/);
    const seen = new Set<string>();
    for (let page = 1; page <= 11; page += 1) for (const name of namesOn((await client.get(`/dashboard/investors?page=${page}`)).text)) seen.add(name);
    assert.equal(seen.size, INVESTORS, 'every investor is on one page');
  });

  it('sends a page past the last to the last; a bad page is a 400 page naming it', async () => {
    const past = await client.get('/dashboard/investors?page=99');
    assert.equal(past.status, 303);
    assert.equal(past.location, '/dashboard/investors?page=11');
    for (const bad of ['0', 'two', '-1', '1.5']) {
      const refused = await client.get(`/dashboard/investors?page=${bad}`);
      assert.equal(refused.status, 400, bad);
      assert.match(refused.text, /The parameter “page” is wrong: expected a whole number/);
    }
  });
});

describe('The remittance run’s list of remittances', () => {
  const remitted = (page: string): string[] => [...page.slice(page.indexOf('id="recent-heading"')).matchAll(/<tr><td>(\d{4}-\d\d-\d\d to \d{4}-\d\d-\d\d)<\/td>/g)].map((match) => match[1]!);

  it('shows the 12 most recent, and says so when older ones exist', async () => {
    const admin = (await database.db.query<{ id: string }>('SELECT id FROM admins WHERE account_id = $1', [account.id])).rows[0]!.id;
    const months = Array.from({ length: 13 }, (_, i) => {
      const first = new Date(Date.UTC(2025, i, 1));
      const last = new Date(Date.UTC(2025, i + 1, 0));
      return { from: first.toISOString().slice(0, 10), to: last.toISOString().slice(0, 10) };
    });
    for (const period of months.slice(0, 12)) await markRemitted(database.db, account.id, period, { adminId: admin });
    const twelve = await client.get('/dashboard/remittances');
    assert.equal(remitted(twelve.text).length, 12);
    assert.doesNotMatch(twelve.text, /most recent periods/, 'all of them shown: nothing to say');
    await markRemitted(database.db, account.id, months[12]!, { adminId: admin });
    const page = await client.get('/dashboard/remittances');
    assert.deepEqual(remitted(page.text), months.slice(1).reverse().map((period) => `${period.from} to ${period.to}`));
    assert.match(page.text, /The 12 most recent periods, newest first\. Every remittance: <code>loanql remittance list<\/code>/);
  });
});
