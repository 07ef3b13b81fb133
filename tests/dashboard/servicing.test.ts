import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { TestDatabase } from '../support/testDatabase.js';
import { startTestServer, type TestServer } from '../support/http.js';
import { openSeededTestDatabase, type SeededAccount } from '../support/seededService.js';
import { DashboardClient } from './dashboardClient.js';

/**
 * Issue 17, the servicing pages over HTTP (the walk in Chromium is servicingBrowser.test.ts):
 * every write form refuses a missing or wrong CSRF token and writes nothing; another account's
 * loan (or person) is a 404 page, for reads and writes alike; the forms' rules and errors.
 */
const PASSWORD = 'correct horse battery'; // seedAccount's admin password

let database: TestDatabase;
let server: TestServer;
let mine: SeededAccount;
let theirs: SeededAccount;
let client: DashboardClient;
/** A loan of each account in servicing, with at least three rows still to pay. */
let myLoan: string;
let theirLoan: string;
let theirPayment: string;
let theirTask: string;
let theirPerson: string;

const count = async (sql: string, values: unknown[]): Promise<number> => Number((await database.db.query<{ n: string }>(sql, values)).rows[0]!.n);
/** Everything a form of the servicing pages could write, for "nothing was written". */
async function footprint(): Promise<string> {
  const { rows } = await database.db.query<{ f: string }>(
    `SELECT concat_ws(' ', (SELECT count(*) FROM loans), (SELECT count(*) FROM payments), (SELECT count(*) FROM payments WHERE date_reversed IS NOT NULL),
            (SELECT count(*) FROM tasks), (SELECT count(*) FROM tasks WHERE status = 'completed'), (SELECT count(*) FROM comments),
            (SELECT md5(string_agg(name || coalesce(amount::text, ''), ',' ORDER BY id)) FROM loans)) AS f`,
  );
  return rows[0]!.f;
}

async function servicingLoan(account: SeededAccount): Promise<string> {
  const { rows } = await database.db.query<{ id: string }>(
    `SELECT l.id FROM loans l WHERE l.account_id = $1 AND l.status = 'servicing' AND EXISTS (SELECT 1 FROM schedules s WHERE s.account_id = l.account_id AND s.loan_id = l.id AND s.is_next
                  AND s.number + 3 <= (SELECT max(number) FROM schedules t WHERE t.account_id = s.account_id AND t.loan_id = s.loan_id))
      ORDER BY l.id LIMIT 1`,
    [account.account.id],
  );
  return rows[0]!.id;
}

before(async () => {
  ({ database, seeded: [mine, theirs] } = await openSeededTestDatabase([{ scale: 0.01 }, { scale: 0.01, seed: 2 }]));
  server = await startTestServer(database.db);
  myLoan = await servicingLoan(mine);
  theirLoan = await servicingLoan(theirs);
  const theirs_ = theirs.account.id;
  theirPayment = (await database.db.query<{ id: string }>(`INSERT INTO payments (account_id, loan_id, date, amount) SELECT $1, $2, l.date_funded, 10 FROM loans l WHERE l.account_id = $1 AND l.id = $2 RETURNING id`, [theirs_, theirLoan])).rows[0]!.id;
  theirTask = (await database.db.query<{ id: string }>(`INSERT INTO tasks (account_id, loan_id, name) VALUES ($1, $2, 'theirs') RETURNING id`, [theirs_, theirLoan])).rows[0]!.id;
  theirPerson = (await database.db.query<{ id: string }>(`SELECT id FROM people WHERE account_id = $1 LIMIT 1`, [theirs_])).rows[0]!.id;
  client = new DashboardClient(server.url);
  assert.equal((await client.logIn(`admin@${mine.account.slug}.test`, PASSWORD)).status, 303);
});

after(async () => {
  await server?.close();
  await database?.close();
});

describe('Loans list', () => {
  it('lists the account’s loans with counts per status from loans_aggregate, 25 a page', async () => {
    const page = await client.get('/dashboard/loans');
    assert.equal(page.status, 200);
    const counts = await database.db.query<{ status: string; n: string }>('SELECT status, count(*) AS n FROM loans WHERE account_id = $1 GROUP BY status', [mine.account.id]);
    const total = counts.rows.reduce((sum, entry) => sum + Number(entry.n), 0);
    for (const entry of counts.rows) assert.match(page.text, new RegExp(`${entry.status} <span class="count">${entry.n}</span>`));
    assert.match(page.text, new RegExp(`Loans 1–25 of ${total}\\.`));
    assert.equal([...page.text.matchAll(/<a href="\/dashboard\/loans\/[0-9a-f-]{36}">/g)].length, 25);
  });

  it('finds a loan by a borrower’s name (case-insensitive), and only this account’s', async () => {
    const { rows } = await database.db.query<{ loan_id: string; name: string }>(
      `SELECT b.loan_id, p.name FROM borrows b JOIN people p ON p.account_id = b.account_id AND p.id = b.person_id WHERE b.account_id = $1 ORDER BY b.id LIMIT 1`,
      [mine.account.id],
    );
    const { loan_id: loanId, name } = rows[0]!;
    const page = await client.get(`/dashboard/loans?q=${encodeURIComponent(name.toUpperCase())}`);
    assert.equal(page.status, 200);
    assert.ok(page.text.includes(`/dashboard/loans/${loanId}`), 'the borrower’s loan is listed');
    const expected = await count(
      `SELECT count(*) AS n FROM loans l WHERE l.account_id = $1 AND (l.name ILIKE $2 OR EXISTS (SELECT 1 FROM borrows b JOIN people p ON p.account_id = b.account_id AND p.id = b.person_id WHERE b.account_id = l.account_id AND b.loan_id = l.id AND p.name ILIKE $2))`,
      [mine.account.id, `%${name}%`],
    );
    assert.match(page.text, new RegExp(`of ${expected} matching`));
    const none = await client.get('/dashboard/loans?q=%25_no-such-name_%25');
    assert.match(none.text, /No loans match\./);
  });

  it('filters by status and sorts by amount', async () => {
    const page = await client.get('/dashboard/loans?status=closed&sort=amount_desc');
    assert.equal(page.status, 200);
    const { rows } = await database.db.query<{ id: string }>(`SELECT id FROM loans WHERE account_id = $1 AND status = 'closed' ORDER BY amount DESC NULLS LAST, id LIMIT 3`, [mine.account.id]);
    const shown = [...page.text.matchAll(/<a href="\/dashboard\/loans\/([0-9a-f-]{36})">/g)].map((match) => match[1]).slice(0, 3);
    assert.deepEqual(shown, rows.map((entry) => entry.id));
  });

  it('sends a page past the last to the last, keeping the filter', async () => {
    const closed = Number((await database.db.query<{ n: string }>(`SELECT count(*) AS n FROM loans WHERE account_id = $1 AND status = 'closed'`, [mine.account.id])).rows[0]!.n);
    const last = Math.max(1, Math.ceil(closed / 25));
    const far = await client.get('/dashboard/loans?status=closed&sort=amount_desc&page=9999');
    assert.equal(far.status, 303);
    assert.equal(far.location, `/dashboard/loans?status=closed&sort=amount_desc${last > 1 ? `&page=${last}` : ''}`);
  });

  it('answers a bad parameter with a 400 page naming it', async () => {
    for (const [query, name] of [['status=late', 'status'], ['sort=evil', 'sort'], ['page=0', 'page'], ['page=x', 'page'], ['status=lead&status=closed', 'status'], ['due=month', 'due']] as const) {
      const page = await client.get(`/dashboard/loans?${query}`);
      assert.equal(page.status, 400, query);
      assert.ok(page.text.includes(`“${name}”`), query);
    }
  });
});

describe('Another account’s records are 404 pages', () => {
  it('for the loan page, its edit form, a payment’s confirmation and a person', async () => {
    for (const path of [
      `/dashboard/loans/${theirLoan}`,
      `/dashboard/loans/${theirLoan}/edit`,
      `/dashboard/loans/${theirLoan}/payments/${theirPayment}/reverse`,
      `/dashboard/loans/${myLoan}/payments/${theirPayment}/reverse`,
      `/dashboard/loans/not-a-uuid`,
      `/dashboard/people/${theirPerson}`,
      `/dashboard/people/not-a-uuid`,
    ]) {
      const page = await client.get(path);
      assert.equal(page.status, 404, path);
      assert.match(page.text, /<h1>No such (loan|payment|person)<\/h1>/, path);
      assert.ok(!page.text.includes(theirLoan) || path.includes(theirLoan) === page.text.includes(theirLoan), path);
    }
  });

  it('for every write, and nothing is written', async () => {
    const before = await footprint();
    for (const [path, fields] of [
      [`/dashboard/loans/${theirLoan}/payments`, { date: '2024-01-01', amount: '10.00', type: 'regular', method: 'ach' }],
      [`/dashboard/loans/${theirLoan}/payments/${theirPayment}/reverse`, {}],
      [`/dashboard/loans/${myLoan}/payments/${theirPayment}/reverse`, {}],
      [`/dashboard/loans/${theirLoan}/tasks`, { name: 'not mine' }],
      [`/dashboard/loans/${theirLoan}/tasks/${theirTask}/complete`, {}],
      [`/dashboard/loans/${myLoan}/tasks/${theirTask}/complete`, {}],
      [`/dashboard/loans/${theirLoan}/comments`, { text: 'not mine' }],
      [`/dashboard/loans/${theirLoan}/edit`, { Name: 'taken over' }],
    ] as const) {
      const reply = await client.postForm(path, fields);
      assert.equal(reply.status, 404, path);
    }
    assert.equal(await footprint(), before);
  });
});

describe('CSRF on every write form', () => {
  it('a missing or wrong token is refused with 403 and nothing is written', async () => {
    const payment = (await database.db.query<{ id: string }>(`INSERT INTO payments (account_id, loan_id, date, amount) SELECT $1, $2, l.date_funded, 5 FROM loans l WHERE l.account_id = $1 AND l.id = $2 RETURNING id`, [mine.account.id, myLoan])).rows[0]!.id;
    const task = (await database.db.query<{ id: string }>(`INSERT INTO tasks (account_id, loan_id, name) VALUES ($1, $2, 'csrf') RETURNING id`, [mine.account.id, myLoan])).rows[0]!.id;
    await client.get(`/dashboard/loans/${myLoan}`);
    const forms: [string, Record<string, string>][] = [
      ['/dashboard/loans', { Name: 'csrf loan', Amount: '1000' }],
      [`/dashboard/loans/${myLoan}/edit`, { Name: 'csrf rename' }],
      [`/dashboard/loans/${myLoan}/payments`, { date: new Date().toISOString().slice(0, 10), amount: '10.00', type: 'regular', method: 'ach' }],
      [`/dashboard/loans/${myLoan}/payments/${payment}/reverse`, { reason: 'error', date: new Date().toISOString().slice(0, 10) }],
      [`/dashboard/loans/${myLoan}/tasks`, { name: 'csrf task' }],
      [`/dashboard/loans/${myLoan}/tasks/${task}/complete`, {}],
      [`/dashboard/loans/${myLoan}/comments`, { text: 'csrf comment' }],
    ];
    const before = await footprint();
    for (const [path, fields] of forms) {
      for (const token of [null, 'wrong-token', `${client.csrfToken!.slice(0, -1)}x`]) {
        const reply = await client.postForm(path, { ...fields, _csrf: token });
        assert.equal(reply.status, 403, `${path} with ${token ?? 'no token'}`);
        assert.match(reply.text, /security token/);
      }
    }
    assert.equal(await footprint(), before);
    // The same forms with the page's token do write (so the refusal above was the token's).
    for (const [path, fields] of forms) {
      const reply = await client.postForm(path, fields);
      assert.equal(reply.status, 303, `${path}: ${reply.text.slice(0, 300)}`);
    }
    assert.notEqual(await footprint(), before);
  });
});

describe('The loan page', () => {
  it('posts a payment: the next row moves on, and reversing it moves it back', async () => {
    const next = async () => (await database.db.query<{ number: number; payment: string }>('SELECT number, payment::text FROM schedules WHERE account_id = $1 AND loan_id = $2 AND is_next', [mine.account.id, myLoan])).rows[0]!;
    const page = await client.get(`/dashboard/loans/${myLoan}`);
    const before = await next();
    assert.match(page.text, new RegExp(`<tr class="is-next" id="next-row" aria-current="true" data-row="${before.number}">`));
    const posted = await client.postForm(`/dashboard/loans/${myLoan}/payments`, { date: new Date().toISOString().slice(0, 10), amount: before.payment, type: 'regular', method: 'ach' });
    assert.equal(posted.status, 303);
    assert.equal(posted.location, `/dashboard/loans/${myLoan}?done=payment-posted`);
    const after = await next();
    assert.equal(after.number, before.number + 1);
    const shown = await client.get(posted.location!);
    assert.match(shown.text, /Payment posted\./);
    assert.match(shown.text, new RegExp(`<tr class="is-covered" data-row="${before.number}">`));
    const id = (await database.db.query<{ id: string }>('SELECT id FROM payments WHERE account_id = $1 AND loan_id = $2 AND amount = $3 ORDER BY date DESC, id DESC LIMIT 1', [mine.account.id, myLoan, before.payment])).rows[0]!.id;
    const confirm = await client.get(`/dashboard/loans/${myLoan}/payments/${id}/reverse`);
    assert.equal(confirm.status, 200);
    assert.match(confirm.text, /Reverse this payment\?/);
    assert.equal((await client.postForm(`/dashboard/loans/${myLoan}/payments/${id}/reverse`, { reason: 'error', date: new Date().toISOString().slice(0, 10) })).status, 303);
    assert.equal((await next()).number, before.number);
    const again = await client.postForm(`/dashboard/loans/${myLoan}/payments/${id}/reverse`, {});
    assert.equal(again.location, `/dashboard/loans/${myLoan}?done=payment-already-reversed`);
  });

  it('refuses a bad payment with a 400 naming the field, nothing written', async () => {
    const before = await footprint();
    for (const [fields, field] of [
      [{ date: '2024-02-30', amount: '10', type: 'regular', method: 'ach' }, 'Date'],
      [{ date: '0000-01-01', amount: '10', type: 'regular', method: 'ach' }, 'Date'],
      [{ date: '2024-02-01', amount: '0', type: 'regular', method: 'ach' }, 'Amount'],
      [{ date: '2024-02-01', amount: '1.001', type: 'regular', method: 'ach' }, 'Amount'],
      [{ date: '2024-02-01', amount: '1,5', type: 'regular', method: 'ach' }, 'Amount'],
      [{ date: '2024-02-01', amount: '10', type: 'bonus', method: 'ach' }, 'Type'],
    ] as const) {
      const reply = await client.postForm(`/dashboard/loans/${myLoan}/payments`, fields);
      assert.equal(reply.status, 400);
      assert.match(reply.text, new RegExp(`role="alert">${field}:`));
    }
    assert.equal(await footprint(), before);
  });

  it('refuses a payment or payoff dated more than a year after the business date (2062 for 2026), keeping what was typed; a year ahead is taken', async () => {
    const before = await footprint();
    const businessDate = (await database.db.query<{ d: string }>('SELECT loanql_business_date($1)::text AS d', [mine.account.id])).rows[0]!.d;
    const yearAfter = `${Number(businessDate.slice(0, 4)) + 1}${businessDate.slice(4)}`;
    const typo = `${Number(businessDate.slice(0, 4)) + 36}${businessDate.slice(4)}`.replace(/-02-29$/, '-02-28');
    const tooFar = new Date(Date.parse(`${yearAfter.replace(/-02-29$/, '-02-28')}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
    for (const date of [typo, tooFar]) {
      const payment = await client.postForm(`/dashboard/loans/${myLoan}/payments`, { date, amount: '10.00', type: 'regular', method: 'check' });
      assert.equal(payment.status, 400, date);
      assert.equal(/role="alert">([^<]*)</.exec(payment.text)?.[1], `Date: ${date} is more than a year after the business date (${businessDate}); a post-dated payment is dated within a year of it.`);
      assert.match(payment.text, new RegExp(`<input id="payment-date" name="date" type="text"[^>]* value="${date}">`));
    }
    const payoff = await client.postForm(`/dashboard/loans/${myLoan}/payoff`, { date: typo, amount: '1.00', method: 'wire' });
    assert.equal(payoff.status, 400);
    assert.equal(/role="alert">([^<]*)</.exec(payoff.text)?.[1], `Payoff date: ${typo} is more than a year after the business date (${businessDate}); a post-dated payoff is dated within a year of it.`);
    // Before: taken, and the loan's stored figures stood as of 2062 (every row late, a late fee each).
    assert.equal(await footprint(), before);
    // A year ahead (a post-dated cheque) is taken; reversed on its own day, it leaves the ledger as it was.
    const lastDay = yearAfter.replace(/-02-29$/, '-02-28');
    const ahead = await client.postForm(`/dashboard/loans/${myLoan}/payments`, { date: lastDay, amount: '10.00', type: 'regular', method: 'check' });
    assert.equal(ahead.status, 303, ahead.text);
    const posted = (await database.db.query<{ id: string }>('SELECT id FROM payments WHERE account_id = $1 AND loan_id = $2 AND date = $3::date', [mine.account.id, myLoan, lastDay])).rows[0]!.id;
    assert.equal((await client.postForm(`/dashboard/loans/${myLoan}/payments/${posted}/reverse`, { reason: 'error', date: lastDay })).status, 303);
  });

  it('names the field by its label when the database refuses a date: a payment in the year 3000, a reversal dated ahead; what was typed kept, nothing written', async () => {
    const before = await footprint();
    const payment = await client.postForm(`/dashboard/loans/${myLoan}/payments`, { date: '3000-01-01', amount: '10.00', type: 'regular', method: 'check' });
    assert.equal(payment.status, 400);
    assert.equal(/role="alert">([^<]*)</.exec(payment.text)?.[1], 'Date: a payment is dated in the years 1900–2999, not 3000-01-01');
    assert.match(payment.text, /<input id="payment-date" name="date" type="text"[^>]* value="3000-01-01">/);
    assert.match(payment.text, /<option value="check" selected>/);
    const paid = (await database.db.query<{ id: string }>('SELECT id FROM payments WHERE account_id = $1 AND loan_id = $2 AND date_reversed IS NULL ORDER BY date LIMIT 1', [mine.account.id, myLoan])).rows[0]!.id;
    const businessDate = (await database.db.query<{ d: string }>('SELECT loanql_business_date($1)::text AS d', [mine.account.id])).rows[0]!.d;
    const reversal = await client.postForm(`/dashboard/loans/${myLoan}/payments/${paid}/reverse`, { reason: 'returned', date: '2999-01-01' });
    assert.equal(reversal.status, 400);
    assert.equal(
      /role="alert">([^<]*)</.exec(reversal.text)?.[1],
      `Date reversed: a reversal is dated on or before ${businessDate}, the business date (or the payment&#39;s own day when later), not 2999-01-01`,
    );
    assert.match(reversal.text, /<input id="reversal-date" name="date" type="text"[^>]* value="2999-01-01">/);
    assert.match(reversal.text, /<option value="returned" selected>/);
    assert.equal(await footprint(), before);
  });

  it('a lead shows no payment form but says how to fund it; a payment posted to it anyway is refused in words, nothing written', async () => {
    const lead = (await database.db.query<{ id: string }>(`SELECT id FROM loans WHERE account_id = $1 AND status = 'lead' ORDER BY id LIMIT 1`, [mine.account.id])).rows[0]!.id;
    const page = await client.get(`/dashboard/loans/${lead}`);
    assert.equal(page.status, 200);
    assert.doesNotMatch(page.text, /aria-label="Post a payment"/);
    assert.match(page.text, /A lead takes no payments: it has not been funded\./);
    const before = await footprint();
    const reply = await client.postForm(`/dashboard/loans/${lead}/payments`, { date: '2024-02-01', amount: '10', type: 'regular', method: 'ach' });
    assert.equal(reply.status, 400);
    assert.match(reply.text, /the loan is a lead \(not funded\): it takes payments once its status is servicing/);
    assert.equal(await footprint(), before);
  });

  it("a lead's page shows no balance owed (migration 0084): a dash for each figure, not the interest of rows \"due\" before funding", async () => {
    // A lead with terms showed Principal outstanding 100,000.00 and Interest due 6,355.49 while it owed nothing.
    const created = await client.postForm('/dashboard/loans', { Name: 'Lead with terms', Amount: '100000', Rate: '12', Term: '12', Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'lead' });
    assert.equal(created.status, 303, created.text.slice(0, 300));
    const page = (await client.get(created.location!)).text;
    for (const figure of ['principal_outstanding', 'interest_due', 'fees_due', 'credit_balance', 'oldest_unpaid_due']) {
      assert.match(page, new RegExp(`data-balance="${figure}"><span class="hint" aria-label="none">—</span></dd>`), figure);
    }
  });

  it('a loan without a schedule says it takes only refunds and fee payments; a regular payment posted to it is refused in words, nothing written (migration 0061)', async () => {
    const product = (await database.db.query<{ id: string }>(`SELECT id FROM products WHERE account_id = $1 AND is_default`, [mine.account.id])).rows[0]!.id;
    const bare = (
      await database.db.query<{ id: string }>(`INSERT INTO loans (account_id, product_id, name, amount, status, date_funded) VALUES ($1, $2, 'No terms yet', 5000, 'servicing', '2024-01-15') RETURNING id`, [
        mine.account.id,
        product,
      ])
    ).rows[0]!.id;
    const page = await client.get(`/dashboard/loans/${bare}`);
    assert.equal(page.status, 200);
    assert.match(page.text, /id="unscheduled-payments">Without a schedule this loan takes only refunds and fee payments/);
    const before = await footprint();
    const reply = await client.postForm(`/dashboard/loans/${bare}/payments`, { date: '2024-02-01', amount: '10', type: 'regular', method: 'ach' });
    assert.equal(reply.status, 400);
    assert.match(reply.text, /the loan has no schedule, so a payment would pay nothing \(it would become credit\): give it its terms/);
    assert.equal(await footprint(), before);
    const scheduled = await client.get(`/dashboard/loans/${myLoan}`);
    assert.doesNotMatch(scheduled.text, /unscheduled-payments/);
  });

  it('adds a comment whose author is the logged-in admin, escaped on the page', async () => {
    const text = `<script>alert("x")</script> ${Date.now()}`;
    assert.equal((await client.postForm(`/dashboard/loans/${myLoan}/comments`, { text })).status, 303);
    const { rows } = await database.db.query<{ admin_id: string }>('SELECT admin_id FROM comments WHERE account_id = $1 AND text = $2', [mine.account.id, text]);
    assert.equal(rows[0]!.admin_id, mine.adminId);
    const page = await client.get(`/dashboard/loans/${myLoan}`);
    assert.ok(page.text.includes('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;'));
    assert.ok(!page.text.includes('<script>alert'));
    assert.match(page.text, /Avery Admin ·/);
  });

  it('adds a task and completes it', async () => {
    assert.equal((await client.postForm(`/dashboard/loans/${myLoan}/tasks`, { name: 'Call the borrower', date_due: '2030-01-01' })).status, 303);
    const task = (await database.db.query<{ id: string; status: string }>(`SELECT id, status FROM tasks WHERE account_id = $1 AND name = 'Call the borrower'`, [mine.account.id])).rows[0]!;
    assert.equal(task.status, 'open');
    assert.equal((await client.postForm(`/dashboard/loans/${myLoan}/tasks/${task.id}/complete`, {})).status, 303);
    assert.equal((await database.db.query<{ status: string }>('SELECT status FROM tasks WHERE account_id = $1 AND id = $2', [mine.account.id, task.id])).rows[0]!.status, 'completed');
    const blank = await client.postForm(`/dashboard/loans/${myLoan}/tasks`, { name: '   ' });
    assert.equal(blank.status, 400);
    assert.match(blank.text, /Task: give the task a name/);
  });

  it('refuses a task due outside the years 1900–2999 (a slip of the year), keeping what was typed', async () => {
    const before = await footprint();
    for (const due of ['0026-12-01', '1899-12-31', '3026-12-01']) {
      const refused = await client.postForm(`/dashboard/loans/${myLoan}/tasks`, { name: 'Order the appraisal', date_due: due });
      assert.equal(refused.status, 400, due);
      assert.equal(/role="alert">([^<]*)</.exec(refused.text)?.[1], 'Due: expected a day as YYYY-MM-DD from 1900 to 2999.');
      assert.match(refused.text, new RegExp(`<input id="task-due" name="date_due" type="text"[^>]* value="${due}">`));
      assert.match(refused.text, /<input id="task-name" name="name" type="text"[^>]* value="Order the appraisal">/);
    }
    assert.equal(await footprint(), before);
  });
});

describe('The ledger on the loan page (issue 29)', () => {
  /** SPEC §7's reference loan (100,000 at 12 %, 12 monthly, funded 2026-01-15), rows 1–2 paid on time through the payment form. */
  let loan = '';
  const ledgerNow = async (id: string) =>
    (await database.db.query<{ dpd: number; status: string; date_closed: string | null; principal: string; interest: string; fees: string }>(
      `SELECT (loanql_ledger($1, $2, loanql_business_date($1))).days_past_due AS dpd, status, date_closed::text, principal_outstanding::text AS principal, interest_due::text AS interest,
              fees_due::text AS fees
         FROM loans WHERE account_id = $1 AND id = $2`,
      [mine.account.id, id],
    )).rows[0]!;
  /** The loan page's fact `dd` marked `data-<kind>="<name>"`, tags and spaces flattened. */
  const fact = (page: string, kind: 'balance' | 'quote', name: string) => {
    const match = new RegExp(`<dd[^>]* data-${kind}="${name}">([\\s\\S]*?)</dd>`).exec(page);
    return match ? match[1]!.replace(/<[^>]+>/g, '').replace(/\s+/g, ' ').trim() : null;
  };

  before(async () => {
    const created = await client.postForm('/dashboard/loans', { Name: 'Reference ledger loan', Amount: '100000', Rate: '12', Term: '12', Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' });
    assert.equal(created.status, 303, created.text.slice(0, 300));
    loan = /\/dashboard\/loans\/([0-9a-f-]{36})/.exec(created.location!)![1]!;
    for (const date of ['2026-02-15', '2026-03-15']) {
      const posted = await client.postForm(`/dashboard/loans/${loan}/payments`, { date, amount: '8884.88', type: 'regular', method: 'ach' });
      assert.equal(posted.status, 303, posted.text.slice(0, 300));
    }
  });

  it('shows the balances, days past due, and each payment’s allocation with its type', async () => {
    const page = (await client.get(`/dashboard/loans/${loan}`)).text;
    const now = await ledgerNow(loan);
    assert.equal(fact(page, 'balance', 'principal_outstanding'), '$84,151.39');
    assert.equal(fact(page, 'balance', 'interest_due'), '$' + now.interest.replace(/\B(?=(\d{3})+(?!\d))/g, ','));
    // Rows 3 on are unpaid as of today: their late fees (R4) have accrued since.
    assert.equal(fact(page, 'balance', 'fees_due'), '$' + now.fees.replace(/\B(?=(\d{3})+(?!\d))/g, ','));
    assert.equal(fact(page, 'balance', 'credit_balance'), '$0.00');
    assert.equal(fact(page, 'balance', 'oldest_unpaid_due'), '2026-04-15');
    assert.match(fact(page, 'balance', 'days_past_due')!, new RegExp(`^${now.dpd} as of \\d{4}-\\d\\d-\\d\\d$`));
    // The March payment: row 2's interest and principal (SPEC §12 R1), summed in the summary, line by line in the table.
    const march = /<tr data-payment="[0-9a-f-]{36}">\s*<td class="nowrap">2026-03-15<\/td>([\s\S]*?)<\/tr>\s*(?=<tr data-payment|<\/tbody>)/.exec(page);
    assert.ok(march, 'the March payment’s row');
    assert.match(march[1]!, /<td>regular<\/td>/);
    assert.match(march[1]!, /<summary>interest \$921\.15, principal \$7,963\.73 <span class="hint">\(2 lines\)<\/span><\/summary>/);
    assert.match(page, /<tr><td>row 2<\/td><td>interest<\/td><td class="num">\$921\.15<\/td><\/tr><tr><td>row 2<\/td><td>principal<\/td><td class="num">\$7,963\.73<\/td><\/tr>/);
    // The payment form offers SPEC §12's types, the old ones no more.
    for (const type of ['regular', 'payoff', 'principal', 'refund', 'fee']) assert.match(page, new RegExp(`<option value="${type}"`));
    assert.doesNotMatch(page, /value="prepayment"|value="late_fee"/);
  });

  it('quotes a payoff for a chosen day with its breakdown and per diem; a bad day is a 400 naming the field', async () => {
    const page = await client.get(`/dashboard/loans/${loan}?quote_date=2026-03-31`);
    assert.equal(page.status, 200);
    assert.match(page.text, /<input id="quote-date" name="quote_date" type="text" placeholder="YYYY-MM-DD"[^>]* required value="2026-03-31">/);
    const quote = Object.fromEntries(['principal_outstanding', 'interest_due', 'accrued_interest', 'interest_paid_ahead', 'fees_due', 'credit_balance', 'payoff', 'per_diem'].map((name) => [name, fact(page.text, 'quote', name)]));
    // SPEC §12 R2 and R5: on time, D = 2026-03-31.
    assert.deepEqual(quote, { principal_outstanding: '$84,151.39', interest_due: '$0.00', accrued_interest: '$448.81', interest_paid_ahead: '$0.00', fees_due: '$0.00', credit_balance: '$0.00', payoff: '$84,600.20', per_diem: '$28.05' });
    assert.match(page.text, /<input type="hidden" name="date" value="2026-03-31">\s*<input type="hidden" name="amount" value="84600\.20">/);
    assert.match(page.text, /Post this payoff: \$84,600\.20 on 2026-03-31<\/button>/);
    const bad = await client.get(`/dashboard/loans/${loan}?quote_date=2026-02-30`);
    assert.equal(bad.status, 400);
    assert.match(bad.text, /role="alert">Payoff date: expected a calendar day/);
  });

  it('keeps a refused payoff date in its field, and refuses a quote, payment or payoff dated before the loan was funded', async () => {
    const bad = await client.get(`/dashboard/loans/${loan}?quote_date=2026-02-30`);
    assert.equal(bad.status, 400);
    assert.match(bad.text, /<input id="quote-date" name="quote_date"[^>]* value="2026-02-30">/);
    assert.match(bad.text, /The quote below is for today(?:'|&#39;)s business date\./);
    const early = await client.get(`/dashboard/loans/${loan}?quote_date=2025-12-31`);
    assert.equal(early.status, 400);
    assert.match(early.text, /role="alert">Payoff date: 2025-12-31 is before the loan was funded \(2026-01-15\)/);
    assert.match(early.text, /<input id="quote-date" name="quote_date"[^>]* value="2025-12-31">/);
    const before = await footprint();
    const payment = await client.postForm(`/dashboard/loans/${loan}/payments`, { date: '2025-12-01', amount: '8884.88', type: 'regular', method: 'ach' });
    assert.equal(payment.status, 400);
    assert.match(payment.text, /Date: 2025-12-01 is before the loan was funded \(2026-01-15\); a payment is dated on or after its funding date\./);
    assert.match(payment.text, /id="payment-date"[^>]* value="2025-12-01"/);
    const payoff = await client.postForm(`/dashboard/loans/${loan}/payoff`, { date: '2000-01-01', amount: '100000.00', method: 'ach' });
    assert.equal(payoff.status, 400);
    assert.match(payoff.text, /Payoff date: 2000-01-01 is before the loan was funded \(2026-01-15\)/);
    assert.equal(await footprint(), before);
  });

  it('dates the payment and reversal forms on the account’s business date, which its time zone sets', async () => {
    const businessDay = async () => (await database.db.query<{ d: string }>('SELECT loanql_business_date($1)::text AS d', [mine.account.id])).rows[0]!.d;
    const { rows: [zone] } = await database.db.query<{ timezone: string }>('SELECT timezone FROM accounts WHERE id = $1', [mine.account.id]);
    try {
      // UTC−11 and UTC+14: one of the two is a different day from UTC at any hour.
      for (const timezone of ['Pacific/Pago_Pago', 'Pacific/Kiritimati']) {
        await database.db.query('UPDATE accounts SET timezone = $2 WHERE id = $1', [mine.account.id, timezone]);
        const day = await businessDay();
        const page = (await client.get(`/dashboard/loans/${loan}`)).text;
        assert.match(page, new RegExp(`id="payment-date" name="date"[^>]* value="${day}"`), timezone);
        const paymentId = (await database.db.query<{ id: string }>('SELECT id FROM payments WHERE account_id = $1 AND loan_id = $2 AND date_reversed IS NULL LIMIT 1', [mine.account.id, loan])).rows[0]!.id;
        const confirm = (await client.get(`/dashboard/loans/${loan}/payments/${paymentId}/reverse`)).text;
        assert.match(confirm, new RegExp(`name="date"[^>]* value="${day}"`), timezone);
      }
    } finally {
      await database.db.query('UPDATE accounts SET timezone = $2 WHERE id = $1', [mine.account.id, zone!.timezone]);
    }
  });

  it('marks a row covered by what the ledger allocated to it, not by the money paid; a refused refund says why in words', async () => {
    const created = await client.postForm('/dashboard/loans', { Name: 'Curtailed loan', Amount: '100000', Rate: '12', Term: '12', Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' });
    assert.equal(created.status, 303, created.text.slice(0, 300));
    const curtailed = /\/dashboard\/loans\/([0-9a-f-]{36})/.exec(created.location!)![1]!;
    for (const [date, amount, type] of [['2026-02-15', '8884.88', 'regular'], ['2026-03-20', '30000.00', 'principal']] as const)
      assert.equal((await client.postForm(`/dashboard/loans/${curtailed}/payments`, { date, amount, type, method: 'ach' })).status, 303);
    const page = (await client.get(`/dashboard/loans/${curtailed}`)).text;
    // 38,884.88 paid, more than rows 1–4 ask together (35,539.52); but the curtailment pays row 2,
    // due before it, and the rest is principal (SPEC §12 R1, R7): rows 3 on are not paid.
    assert.match(page, /<tr class="is-covered" data-row="1">/);
    assert.match(page, /<tr class="is-covered" data-row="2">/);
    assert.match(page, /<tr class="is-next" id="next-row" aria-current="true" data-row="3">/);
    assert.doesNotMatch(page, /<tr class="is-covered" data-row="(?:[3-9]|1[0-2])">/);
    const refund = await client.postForm(`/dashboard/loans/${curtailed}/payments`, { date: '2026-03-21', amount: '50.00', type: 'refund', method: 'ach' });
    assert.equal(refund.status, 400);
    assert.equal(/role="alert">([^<]*)</.exec(refund.text)?.[1], 'Amount: a refund of 50.00 is more than the loan&#39;s credit balance of 0.00 on 2026-03-21');
  });

  it('counts a refund as money paid back, not paid: Paid is what was received, the refund on a line of its own', async () => {
    const created = await client.postForm('/dashboard/loans', { Name: 'Refunded loan', Amount: '100000', Rate: '12', Term: '12', Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' });
    assert.equal(created.status, 303, created.text.slice(0, 300));
    const refunded = /\/dashboard\/loans\/([0-9a-f-]{36})/.exec(created.location!)![1]!;
    for (const [date, amount, type] of [['2026-02-15', '8884.88', 'regular'], ['2026-03-01', '200000.00', 'regular'], ['2026-03-02', '1,250.00', 'refund']] as const) {
      const posted = await client.postForm(`/dashboard/loans/${refunded}/payments`, { date, amount, type, method: 'ach' });
      assert.equal(posted.status, 303, `${type} ${amount}: ${posted.status} ${/role="alert">([^<]*)</.exec(posted.text)?.[1] ?? ''}`);
    }
    const page = (await client.get(`/dashboard/loans/${refunded}`)).text;
    assert.match(page, /<dt>Paid \(not reversed\)<\/dt><dd data-term="paid">\$208,884\.88<\/dd>/);
    assert.match(page, /<dt>Refunded \(not reversed\)<\/dt><dd data-term="refunded">\$1,250\.00<\/dd>/);
    const other = (await client.get(`/dashboard/loans/${myLoan}`)).text;
    assert.doesNotMatch(other, /data-term="refunded"/, 'no refund, no line');
  });

  it('offers a post-dated payment’s own day as its reversal’s date, and takes it as offered', async () => {
    const created = await client.postForm('/dashboard/loans', { Name: 'Post-dated cheque', Amount: '100000', Rate: '12', Term: '12', Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' });
    assert.equal(created.status, 303, created.text.slice(0, 300));
    const postDated = /\/dashboard\/loans\/([0-9a-f-]{36})/.exec(created.location!)![1]!;
    const { today, ahead } = (await database.db.query<{ today: string; ahead: string }>('SELECT loanql_business_date($1)::text AS today, (loanql_business_date($1) + 10)::text AS ahead', [mine.account.id])).rows[0]!;
    assert.equal((await client.postForm(`/dashboard/loans/${postDated}/payments`, { date: ahead, amount: '8884.88', type: 'regular', method: 'check' })).status, 303);
    const cheque = (await database.db.query<{ id: string }>('SELECT id FROM payments WHERE account_id = $1 AND loan_id = $2', [mine.account.id, postDated])).rows[0]!.id;
    const confirm = await client.get(`/dashboard/loans/${postDated}/payments/${cheque}/reverse`);
    const offered = /<input id="reversal-date" name="date" type="text"[^>]* value="([^"]*)">/.exec(confirm.text)?.[1];
    assert.equal(offered, ahead, `the cheque’s own day, not the business date ${today}`);
    const reversed = await client.postForm(`/dashboard/loans/${postDated}/payments/${cheque}/reverse`, { reason: 'returned', date: offered! });
    assert.equal(reversed.status, 303, /role="alert">([^<]*)</.exec(reversed.text)?.[1]);
    assert.equal(reversed.location, `/dashboard/loans/${postDated}?done=payment-reversed`);
    // A payment dated on or before the business date is offered the business date, as before.
    const paid = (await database.db.query<{ id: string }>('SELECT id FROM payments WHERE account_id = $1 AND loan_id = $2 AND date_reversed IS NULL AND date <= $3::date ORDER BY date LIMIT 1', [mine.account.id, myLoan, today])).rows[0]!.id;
    assert.match((await client.get(`/dashboard/loans/${myLoan}/payments/${paid}/reverse`)).text, new RegExp(`<input id="reversal-date" name="date" type="text"[^>]* value="${today}">`));
  });

  it('shows a credit the borrower owes (below zero) as added in the quote, so its lines add up to the payoff the API answers', async () => {
    const created = await client.postForm('/dashboard/loans', { Name: 'Owes its refund', Amount: '100000', Rate: '12', Term: '12', Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' });
    assert.equal(created.status, 303, created.text.slice(0, 300));
    const owing = /\/dashboard\/loans\/([0-9a-f-]{36})/.exec(created.location!)![1]!;
    // Paid off with 100.00 too much on 2026-03-01, the 100.00 refunded, then the payoff reversed:
    // the refund is more than the credit now (docs/ledger.md, "Refunds"), the credit is -100.00.
    const quote = await fetch(`${server.url}/api/loan/${owing}/payoff?date=2026-03-01`, { headers: { authorization: `Token ${mine.apiKey}` } });
    const quoteText = await quote.text();
    const quoted = /"payoff"\s*:\s*([0-9.]+)/.exec(quoteText)?.[1] ?? assert.fail(quoteText);
    const overpaid = (Number(quoted) + 100).toFixed(2);
    for (const [date, amount, type] of [['2026-03-01', overpaid, 'payoff'], ['2026-03-02', '100.00', 'refund']] as const) {
      const posted = await client.postForm(`/dashboard/loans/${owing}/payments`, { date, amount, type, method: 'wire' });
      assert.equal(posted.status, 303, `${type}: ${/role="alert">([^<]*)</.exec(posted.text)?.[1] ?? posted.status}`);
    }
    const paidOff = (await database.db.query<{ id: string }>(`SELECT id FROM payments WHERE account_id = $1 AND loan_id = $2 AND type = 'payoff'`, [mine.account.id, owing])).rows[0]!.id;
    assert.equal((await client.postForm(`/dashboard/loans/${owing}/payments/${paidOff}/reverse`, { reason: 'error', date: '2026-03-03' })).status, 303);
    const api = JSON.parse(await (await fetch(`${server.url}/api/loan/${owing}/payoff?date=2026-03-10`, { headers: { authorization: `Token ${mine.apiKey}` } })).text()) as Record<string, number>;
    assert.equal(api.credit_balance, -100, 'the API: the borrower owes the 100.00 refunded');
    const page = (await client.get(`/dashboard/loans/${owing}?quote_date=2026-03-10`)).text;
    const line = (key: string): bigint => {
      const shown = new RegExp(`data-quote="${key}">(?:<strong>)?([^<]*)<`).exec(page)![1]!;
      const cents = BigInt(shown.replace(/[−$,.]/g, ''));
      return shown.startsWith('−') ? -cents : cents;
    };
    assert.equal(line('credit_balance'), 10000n, 'a credit of -100.00 adds 100.00 to the payoff');
    assert.match(page, /<dt>Credit owed back \(refunded beyond the credit\)<\/dt><dd class="num" data-quote="credit_balance">\$100\.00<\/dd>/);
    const parts = ['principal_outstanding', 'interest_due', 'accrued_interest', 'interest_paid_ahead', 'fees_due', 'credit_balance'].map(line).reduce((sum, part) => sum + part, 0n);
    assert.equal(parts, line('payoff'), 'the quote’s lines add up to its payoff');
    assert.equal(line('payoff'), BigInt(Math.round(api.payoff! * 100)), 'the payoff the API answers');
  });

  it('refuses “Post this payoff” without the CSRF token, or for a figure that is no longer the quote, and writes nothing', async () => {
    const before = await footprint();
    for (const token of [null, 'wrong-token']) {
      const reply = await client.postForm(`/dashboard/loans/${loan}/payoff`, { date: '2026-03-31', amount: '84600.20', method: 'ach', _csrf: token });
      assert.equal(reply.status, 403);
    }
    const stale = await client.postForm(`/dashboard/loans/${loan}/payoff`, { date: '2026-03-31', amount: '84600.19', method: 'ach' });
    assert.equal(stale.status, 400);
    assert.match(stale.text, /role="alert">Not posted: the payoff on 2026-03-31 is now \$84,600\.20, not \$84,600\.19 \(the loan changed since the quote\)/);
    assert.equal(fact(stale.text, 'quote', 'payoff'), '$84,600.20', 'the current quote is shown');
    const theirs_ = await client.postForm(`/dashboard/loans/${theirLoan}/payoff`, { date: '2026-03-31', amount: '84600.20', method: 'ach' });
    assert.equal(theirs_.status, 404);
    assert.equal(await footprint(), before);
  });

  it('posts the payoff from the quote in one click: a payoff payment, allocated per R6, and the loan closes', async () => {
    const quoted = await client.get(`/dashboard/loans/${loan}?quote_date=2026-03-31`);
    const form = /<form class="inline-form post-payoff" method="post" action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/.exec(quoted.text)!;
    const fields = Object.fromEntries([...form[2]!.matchAll(/<input type="hidden" name="([a-z_]+)" value="([^"]*)">/g)].map((match) => [match[1]!, match[2]!]));
    const posted = await client.postForm(form[1]!, { ...fields, method: 'wire' });
    assert.equal(posted.status, 303, posted.text.slice(0, 300));
    assert.equal(posted.location, `/dashboard/loans/${loan}?done=payoff-posted-closed`);
    const payment = (await database.db.query<{ type: string; amount: string; date: string; method: string }>(`SELECT type, amount::text, date::text, method FROM payments WHERE account_id = $1 AND loan_id = $2 ORDER BY posted_at DESC LIMIT 1`, [mine.account.id, loan])).rows[0]!;
    assert.deepEqual(payment, { type: 'payoff', amount: '84600.20', date: '2026-03-31', method: 'wire' });
    const now = await ledgerNow(loan);
    assert.deepEqual([now.status, now.date_closed, now.principal, now.interest], ['closed', '2026-03-31', '0.00', '0.00']);
    const page = (await client.get(posted.location!)).text;
    assert.match(page, /role="status">Payoff posted: the loan is paid off and closed\.<\/div>/);
    assert.match(page, /<dt>Status<\/dt><dd><span class="status pill-closed">closed<\/span> <span class="closed-on">closed on 2026-03-31<\/span><\/dd>/);
    assert.equal(fact(page, 'balance', 'principal_outstanding'), '$0.00');
    // Row 3's interest cut to the accrued 448.81, then all principal (SPEC §12 R6).
    assert.match(page, /<td>payoff<\/td><td>wire<\/td>\s*<td class="applied"><details class="allocation">\s*<summary>interest \$448\.81, principal \$84,151\.39 /);
    assert.match(page, /The loan is closed: a payoff is posted only for a loan in servicing\./);
    assert.doesNotMatch(page, /post-payoff/);
  });

  it('reverses with a reason and a date: without a reason it is a 400 on the confirmation page; reversing the payoff reopens the loan', async () => {
    const payoff = (await database.db.query<{ id: string }>(`SELECT id FROM payments WHERE account_id = $1 AND loan_id = $2 AND type = 'payoff'`, [mine.account.id, loan])).rows[0]!.id;
    const confirm = await client.get(`/dashboard/loans/${loan}/payments/${payoff}/reverse`);
    assert.match(confirm.text, /<select id="reversal-reason" name="reason" required aria-required="true"><option value="">Choose…<\/option><option value="nsf">/);
    assert.match(confirm.text, /<input id="reversal-date" name="date" type="text" placeholder="YYYY-MM-DD"[^>]* required value="\d{4}-\d\d-\d\d">/);
    for (const [fields, problem] of [
      [{ date: '2026-04-02' }, /role="alert">Reason: choose one of nsf, error, returned, other\./],
      [{ reason: 'bounced', date: '2026-04-02' }, /role="alert">Reason: choose one of/],
      [{ reason: 'returned', date: '2026-04-31' }, /role="alert">Date reversed: expected a real date/],
    ] as const) {
      const refused = await client.postForm(`/dashboard/loans/${loan}/payments/${payoff}/reverse`, fields);
      assert.equal(refused.status, 400);
      assert.match(refused.text, problem);
    }
    assert.equal((await ledgerNow(loan)).status, 'closed');
    const reversed = await client.postForm(`/dashboard/loans/${loan}/payments/${payoff}/reverse`, { reason: 'returned', date: '2026-04-02' });
    assert.equal(reversed.location, `/dashboard/loans/${loan}?done=payment-reversed-reopened`);
    const page = (await client.get(reversed.location!)).text;
    assert.match(page, /Payment reversed: the loan owes money again and is back in servicing\./);
    assert.match(page, /Reversed 2026-04-02 <span class="reason">\(returned\)<\/span>/);
    assert.match(page, /<span class="hint">nothing \(reversed\)<\/span>/);
    const now = await ledgerNow(loan);
    assert.deepEqual([now.status, now.date_closed, now.principal], ['servicing', null, '84151.39']);
  });
});

describe('Creating and editing a loan', () => {
  it('creates a loan with a borrower through the REST rules and shows its schedule', async () => {
    const form = await client.get('/dashboard/loans/new');
    assert.equal(form.status, 200);
    for (const name of ['Name', 'Amount', 'Rate', 'Term', 'Frequency', 'Date_Funded', 'Loan_Officer', 'Borrower_Name', 'Borrower_Email']) assert.match(form.text, new RegExp(`name="${name}"`), name);
    const created = await client.postForm('/dashboard/loans', {
      Name: 'Elm St bridge', Amount: '100000', Rate: '12', Term: '12', Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing',
      Loan_Officer: 'Kim', Borrower_Name: 'Ada Lovelace', Borrower_Email: `ada.${Date.now()}@example.com`,
    });
    assert.equal(created.status, 303, created.text.slice(0, 500));
    const page = await client.get(created.location!);
    assert.match(page.text, /Loan created\./);
    assert.match(page.text, /8,884\.88/); // SPEC §7's reference payment
    assert.match(page.text, /<a href="\/dashboard\/people\/[0-9a-f-]{36}">Ada Lovelace<\/a>/);
    assert.equal([...page.text.matchAll(/data-row="\d+"/g)].length, 12);
  });

  it('shows the rules’ errors next to their fields and writes nothing', async () => {
    const before = await footprint();
    const reply = await client.postForm('/dashboard/loans', { Name: 'Bad', Amount: '-5', Term: 'twelve', Frequency: 'monthly', Borrower_Email: 'not-an-address' });
    assert.equal(reply.status, 400);
    // Each message names its field by the label the form shows.
    for (const [field, label] of [['Amount', 'Amount'], ['Term', 'Term'], ['Borrower_Email', 'Borrower e-mail']]) assert.match(reply.text, new RegExp(`id="loan-field-${field}-error" class="field-error">${label}: `), field);
    assert.match(reply.text, /name="Name"[^>]*value="Bad"/);
    assert.equal(await footprint(), before);
  });

  it("refuses moving Date_Funded past the loan's first payment, next to the field (migration 0084); nothing written", async () => {
    // The terms form saved it, and the loan then held payments dated before its funding.
    const { rows } = await database.db.query<{ id: string; first: string }>(
      `SELECT l.id, min(p.date)::text AS first FROM loans l JOIN payments p ON p.account_id = l.account_id AND p.loan_id = l.id AND p.date_reversed IS NULL
        WHERE l.account_id = $1 AND l.status = 'servicing' GROUP BY l.id ORDER BY l.id LIMIT 1`,
      [mine.account.id],
    );
    const { id, first } = rows[0]!;
    const edit = await client.get(`/dashboard/loans/${id}/edit`);
    const values = new Map([...edit.text.matchAll(/name="([A-Za-z_]+)"[^>]* value="([^"]*)"/g)].map((match) => [match[1]!, match[2]!]));
    const fields = Object.fromEntries([...values].filter(([name]) => name !== '_csrf'));
    const later = new Date(Date.parse(first) + 86_400_000).toISOString().slice(0, 10);
    const before = await footprint();
    const reply = await client.postForm(`/dashboard/loans/${id}/edit`, { ...fields, Date_Funded: later });
    assert.equal(reply.status, 400, reply.text.slice(0, 300));
    assert.match(reply.text, new RegExp(`id="loan-field-Date_Funded-error" class="field-error">[^<]*${later} is after the loan&#39;s first payment \\(${first}\\)`));
    assert.equal(await footprint(), before);
  });

  it('edits only what changed: an untouched computed payment stays computed', async () => {
    const edit = await client.get(`/dashboard/loans/${myLoan}/edit`);
    assert.equal(edit.status, 200);
    const values = new Map([...edit.text.matchAll(/name="([A-Za-z_]+)"[^>]* value="([^"]*)"/g)].map((match) => [match[1]!, match[2]!]));
    const { rows } = await database.db.query<{ name: string; regular_payment_given: boolean }>('SELECT name, regular_payment_given FROM loans WHERE account_id = $1 AND id = $2', [mine.account.id, myLoan]);
    assert.equal(values.get('Name'), rows[0]!.name.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/'/g, '&#39;'));
    const fields = Object.fromEntries([...values].filter(([name]) => name !== '_csrf'));
    const saved = await client.postForm(`/dashboard/loans/${myLoan}/edit`, { ...fields, Name: 'Renamed <b>loan</b>' });
    assert.equal(saved.status, 303);
    const after = await database.db.query<{ name: string; regular_payment_given: boolean }>('SELECT name, regular_payment_given FROM loans WHERE account_id = $1 AND id = $2', [mine.account.id, myLoan]);
    assert.equal(after.rows[0]!.name, 'Renamed <b>loan</b>');
    assert.equal(after.rows[0]!.regular_payment_given, rows[0]!.regular_payment_given);
  });
});

describe('People', () => {
  it('searches people and shows a person’s loans', async () => {
    const { rows } = await database.db.query<{ id: string; name: string; loan_id: string }>(
      `SELECT p.id, p.name, b.loan_id FROM people p JOIN borrows b ON b.account_id = p.account_id AND b.person_id = p.id WHERE p.account_id = $1 ORDER BY p.id LIMIT 1`,
      [mine.account.id],
    );
    const person = rows[0]!;
    const list = await client.get(`/dashboard/people?q=${encodeURIComponent(person.name)}`);
    assert.equal(list.status, 200);
    assert.ok(list.text.includes(`/dashboard/people/${person.id}`));
    const page = await client.get(`/dashboard/people/${person.id}`);
    assert.equal(page.status, 200);
    assert.ok(page.text.includes(`/dashboard/loans/${person.loan_id}`));
  });
});
