import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';
import { startTestServer, type TestServer } from '../support/http.js';
import { createAccountWithAdmin, DashboardClient } from './dashboardClient.js';
import { investorListPage } from '../../dashboard/pages/investorPages.js';
import { loanListPage, pageStatus } from '../../dashboard/pages/loanPages.js';
import { peopleListPage } from '../../dashboard/pages/peoplePages.js';
import type { Viewer } from '../../dashboard/pages/layout.js';

/**
 * A paged list opened past its last page (a bookmark of page 3, then loans closed or people
 * removed): the People list said "People 51–3 of 3" and its pager "Page 3 of 1"; the
 * collections queue's pager said "Page 2 of 1" under its "No late loan …" line. Now People sends
 * a page past the last to the last (303), as Loans and Investors do; and every list's status line
 * and the shared pager say where the rows are instead — never "Page N of M" with N past M.
 */
const PASSWORD = 'past the last page';
const VIEWER: Viewer = { accountName: 'Lender', currency: 'USD', adminEmail: 'admin@lender.test', csrfToken: 'x' };

let database: TestDatabase;
let server: TestServer;
let client: DashboardClient;

/** Every "Page N of M" a page says, as [N, M]. */
const pagesSaid = (page: string): [number, number][] => [...page.matchAll(/Page (\d+) of (\d+)/g)].map((match) => [Number(match[1]), Number(match[2])]);

before(async () => {
  database = await openTestDatabase();
  server = await startTestServer(database.db);
  const { account, email } = await createAccountWithAdmin(database.db, PASSWORD);
  await database.db.query(`INSERT INTO people (account_id, name, entity_type) SELECT $1, 'Person ' || n, 'individual' FROM generate_series(1, 3) n`, [account.id]);
  client = new DashboardClient(server.url);
  assert.equal((await client.logIn(email, PASSWORD)).status, 303);
});

after(async () => {
  await server?.close();
  await database?.close();
});

describe('Dashboard lists past their last page', () => {
  it('People: a page past the last is sent to the last, the search kept', async () => {
    const past = await client.get('/dashboard/people?page=3');
    assert.equal(past.status, 303, past.text.slice(0, 300));
    assert.equal(past.location, '/dashboard/people');
    const searched = await client.get('/dashboard/people?q=Person&page=2');
    assert.equal(searched.status, 303);
    assert.equal(searched.location, '/dashboard/people?q=Person');
    const none = await client.get('/dashboard/people?q=nobody&page=4');
    assert.equal(none.status, 303);
    assert.equal(none.location, '/dashboard/people?q=nobody');
    const first = await client.get('/dashboard/people');
    assert.equal(first.status, 200);
    assert.match(first.text, /People 1–3 of 3\./);
  });

  it('Loans and Investors still send a page past the last to the last', async () => {
    for (const [path, to] of [
      ['/dashboard/loans?page=3', '/dashboard/loans'],
      ['/dashboard/investors?page=2', '/dashboard/investors'],
    ] as const) {
      const past = await client.get(path);
      assert.equal(past.status, 303, path);
      assert.equal(past.location, to);
    }
  });

  it('Collections: the queue past its last page, its pager says so and links back to the last', async () => {
    const page = await client.get('/dashboard/collections?page=2');
    assert.equal(page.status, 200);
    assert.deepEqual(pagesSaid(page.text), [], 'no "Page 2 of 1"');
    assert.match(page.text, /<nav class="pager" aria-label="Late loan pages">\s*<a href="\/dashboard\/collections" rel="prev">Last page \(1\)<\/a>\s*<span>No page 2: the last is page 1<\/span>/);
  });

  it('each list\'s page itself, given a page past the last, says where the rows are (the status line and the pager)', () => {
    const loans = loanListPage(VIEWER, { loans: [], counts: new Map([['all', 3]]), query: { status: null, search: 'Acme', due: null, sort: 'newest', page: 3 }, pageSize: 25 });
    assert.match(loans, /No loan on page 3: 3 loans matching “Acme” are on page 1\./);
    assert.doesNotMatch(loans, /Loans \d+–\d+ of/);
    assert.deepEqual(pagesSaid(loans), []);
    assert.match(loans, /<span>No page 3: the last is page 1<\/span>/);

    const investors = investorListPage(VIEWER, { investors: [], total: 120, page: 4, pageSize: 50 });
    assert.match(investors, /No investor on page 4: 120 investors are on pages 1–3\./);
    assert.doesNotMatch(investors, /No one funds a loan/, 'they do: on the pages before');
    assert.deepEqual(pagesSaid(investors), []);
    assert.match(investors, /<a href="\/dashboard\/investors\?page=3" rel="prev">Last page \(3\)<\/a>/);

    const people = peopleListPage(VIEWER, { people: [], total: 1, search: '', page: 2, pageSize: 50 });
    assert.match(people, /No person on page 2: 1 person is on page 1\./);
    assert.deepEqual(pagesSaid(people), []);
  });

  it('the status line within the pages is unchanged', () => {
    assert.equal(pageStatus({ one: 'loan', many: 'loans' }, 2, 130, 50, ' matching “x”'), 'Loans 51–100 of 130 matching “x”.');
    assert.equal(pageStatus({ one: 'investor', many: 'investors' }, 3, 130, 50, '', ', by name'), 'Investors 101–130 of 130, by name.');
    assert.equal(pageStatus({ one: 'late loan', many: 'late loans' }, 2, 50, 50), 'No late loan on page 2: 50 late loans are on page 1.');
  });
});
