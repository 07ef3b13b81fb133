import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { TestDatabase } from '../support/testDatabase.js';
import { startTestServer, type TestServer } from '../support/http.js';
import { openSeededTestDatabase, type SeededAccount } from '../support/seededService.js';
import { DashboardClient } from './dashboardClient.js';

/**
 * A query parameter given twice on a dashboard page (`?status=late&status=servicing`,
 * `?page=2&page=3`) is a 400 page naming it — never read as missing (the investor statement's
 * `from` was, and showed the month so far), nor as one of its values, nor a 500
 * (`dashboard/queryCheck.ts`, on `http/queryParameters.ts`'s `repeatedParameters`; the REST
 * routes' own check is `tests/api/repeatedQueryParameters.test.ts`). Every page that reads its
 * query string is asked twice: once with a parameter repeated (400, named), once with it given
 * once (shown).
 */
const PASSWORD = 'correct horse battery'; // seedAccount's admin password

let database: TestDatabase;
let server: TestServer;
let seeded: SeededAccount;
let client: DashboardClient;
let loanPath = '';
/** The loan's funding day: a quote date the page takes (one before it is refused with a 400 of its own). */
let fundedOn = '';
let investorPath = '';

before(async () => {
  ({ database, seeded: [seeded] } = await openSeededTestDatabase([{ scale: 0.01 }]));
  server = await startTestServer(database.db);
  const accountId = seeded.account.id;
  // Whichever loan comes first by id (the seed's ids are random): its own funding day is the quote date below.
  const loan = await database.db.query<{ id: string; funded: string }>(`SELECT id, date_funded::text AS funded FROM loans WHERE account_id = $1 AND status = 'servicing' AND date_funded IS NOT NULL ORDER BY id LIMIT 1`, [accountId]);
  loanPath = `/dashboard/loans/${loan.rows[0]!.id}`;
  fundedOn = loan.rows[0]!.funded;
  const investor = await database.db.query<{ person_id: string }>(`SELECT person_id FROM funding_sources WHERE account_id = $1 AND person_id IS NOT NULL ORDER BY id LIMIT 1`, [accountId]);
  investorPath = `/dashboard/investors/${investor.rows[0]!.person_id}`;
  client = new DashboardClient(server.url);
  assert.equal((await client.logIn(`admin@${seeded.account.slug}.test`, PASSWORD)).status, 303);
});

after(async () => {
  await server?.close();
  await database?.close();
});

/** Asserts the 400 page naming each of `names` (and, logged in, with the navigation). */
async function assertRefused(path: string, names: readonly string[], who = client): Promise<void> {
  const reply = await who.get(path);
  assert.equal(reply.status, 400, `${path}: ${reply.status} ${reply.location ?? ''}`);
  assert.match(reply.text, /<h1>This address repeats a parameter<\/h1>/, path);
  for (const name of names) assert.match(reply.text, new RegExp(`the parameter “${name}” is given \\d+ times`, 'i'), `${path} names ${name}`);
  assert.match(reply.text, new RegExp(`give ${names.join(', ')} once`), path);
}

/** The same page with each parameter once is shown (200) or redirected (303), never refused. */
async function assertShown(path: string, who = client): Promise<void> {
  const reply = await who.get(path);
  assert.ok(reply.status === 200 || reply.status === 303, `${path} with each parameter once: ${reply.status}`);
}

describe('A parameter given twice on a dashboard page', () => {
  const cases: readonly { readonly page: string; readonly path: () => string; readonly once: () => string; readonly names: readonly string[] }[] = [
    { page: 'the loans list’s status', path: () => '/dashboard/loans?status=closed&status=servicing', once: () => '/dashboard/loans?status=closed', names: ['status'] },
    { page: 'the loans list’s page', path: () => '/dashboard/loans?page=2&page=3', once: () => '/dashboard/loans?page=2', names: ['page'] },
    { page: 'the loans list’s sort, q and due', path: () => '/dashboard/loans?sort=name&sort=newest&q=a&q=b&due=week&due=week', once: () => '/dashboard/loans?sort=name&q=a&due=week', names: ['sort', 'q', 'due'] },
    { page: 'a loan’s quote date', path: () => `${loanPath}?quote_date=${fundedOn}&quote_date=2999-01-01`, once: () => `${loanPath}?quote_date=${fundedOn}`, names: ['quote_date'] },
    { page: 'a loan’s notice', path: () => `${loanPath}?done=payment-posted&done=task-added`, once: () => `${loanPath}?done=payment-posted`, names: ['done'] },
    { page: 'the people list', path: () => '/dashboard/people?q=a&q=b&page=1&page=2', once: () => '/dashboard/people?q=a&page=1', names: ['q', 'page'] },
    { page: 'the collections queue', path: () => '/dashboard/collections?sort=days&sort=name&dir=asc&dir=desc', once: () => '/dashboard/collections?sort=name&dir=asc', names: ['sort', 'dir'] },
    { page: 'the collections queue’s filters', path: () => '/dashboard/collections?min_days=1&min_days=30&bucket=current&bucket=current', once: () => '/dashboard/collections?min_days=30', names: ['min_days', 'bucket'] },
    { page: 'the collections download', path: () => '/dashboard/collections.csv?q=a&q=b', once: () => '/dashboard/collections.csv?q=a', names: ['q'] },
    { page: 'the investors list', path: () => '/dashboard/investors?page=1&page=2', once: () => '/dashboard/investors?page=1', names: ['page'] },
    { page: 'an investor’s statement', path: () => `${investorPath}?from=2026-01-01&from=2026-02-01&to=2026-03-31`, once: () => `${investorPath}?from=2026-01-01&to=2026-03-31`, names: ['from'] },
    { page: 'an investor’s CSV statement', path: () => `${investorPath}/statement.csv?from=2026-01-01&to=2026-02-28&to=2026-03-31`, once: () => `${investorPath}/statement.csv?from=2026-01-01&to=2026-03-31`, names: ['to'] },
    { page: 'an investor’s PDF statement', path: () => `${investorPath}/statement.pdf?from=2026-01-01&from=2026-01-02&to=2026-03-31`, once: () => `${investorPath}/statement.pdf?from=2026-01-01&to=2026-03-31`, names: ['from'] },
    { page: 'the remittance run', path: () => '/dashboard/remittances?from=2026-01-01&to=2026-01-31&to=2026-02-28', once: () => '/dashboard/remittances?from=2026-01-01&to=2026-01-31', names: ['to'] },
    { page: 'the remittance run’s notice', path: () => '/dashboard/remittances?done=remitted&done=remitted', once: () => '/dashboard/remittances?done=remitted', names: ['done'] },
    { page: 'the remittance download', path: () => '/dashboard/remittances.csv?from=2026-01-01&from=2026-01-02&to=2026-01-31', once: () => '/dashboard/remittances.csv?from=2026-01-01&to=2026-01-31', names: ['from'] },
    { page: 'Settings > API keys', path: () => '/dashboard/settings/api-keys?created=abc&created=def&deactivated=x&deactivated=y', once: () => '/dashboard/settings/api-keys?created=abc', names: ['created', 'deactivated'] },
    { page: 'Settings > Webhooks', path: () => '/dashboard/settings/webhooks?created=a&created=b', once: () => '/dashboard/settings/webhooks?created=a', names: ['created'] },
    { page: 'Settings > Servicing', path: () => '/dashboard/settings/servicing?saved=grace_days&saved=late_fee&replayed=1&replayed=2', once: () => '/dashboard/settings/servicing?saved=grace_days&replayed=1', names: ['saved', 'replayed'] },
    { page: 'Settings > Lender profile', path: () => '/dashboard/settings/profile?saved=phone&saved=email', once: () => '/dashboard/settings/profile?saved=phone', names: ['saved'] },
  ];
  for (const { page, path, once, names } of cases) {
    it(`refuses ${page} given twice with a 400 page naming ${names.join(', ')}, and shows it given once`, async () => {
      await assertRefused(path(), names);
      await assertShown(once());
    });
  }

  it('shows the refusal inside the dashboard’s frame (its navigation)', async () => {
    const reply = await client.get('/dashboard/loans?status=closed&status=servicing');
    assert.match(reply.text, /<nav class="main-nav" aria-label="Main">/);
    assert.match(reply.text, /give status once/);
    assert.match(reply.text, /the parameter “status” is given 2 times/);
  });

  it('refuses the login page’s next given twice, before any session', async () => {
    const stranger = new DashboardClient(server.url);
    await assertRefused('/dashboard/login?next=/dashboard/loans&next=/dashboard/people', ['next'], stranger);
    await assertShown('/dashboard/login?next=/dashboard/loans', stranger);
  });

  it('leaves forms alone: a POST is judged by its form, whatever its address repeats', async () => {
    const loanPage = await client.get(loanPath);
    assert.equal(loanPage.status, 200);
    const reply = await client.postForm(`${loanPath}/comments?x=1&x=2`, { text: '' });
    assert.equal(reply.status, 400);
    assert.match(reply.text, /Comment: write something first\./);
  });
});
