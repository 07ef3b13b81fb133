import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLoan } from '../../app/loanWrites.js';
import type { TestDatabase } from '../support/testDatabase.js';
import { startTestServer, type TestServer } from '../support/http.js';
import { openSeededTestDatabase, type SeededAccount } from '../support/seededService.js';
import { DashboardClient } from './dashboardClient.js';

/**
 * Issue 28: the overview is the servicer's start page. Its three lists agree with the database:
 * the next rows due from the business date to six days after; the late loans with the ledger's
 * days past due (`loanql_loan_days_past_due`, R3), most first; the open tasks by due date, the
 * overdue marked; each a link to its loan.
 */
const PASSWORD = 'correct horse battery'; // seedAccount's admin password

let database: TestDatabase;
let server: TestServer;
let mine: SeededAccount;
let client: DashboardClient;
let page = '';
let businessDate = '';

const section = (id: string): string => {
  const start = page.indexOf(`id="${id}"`);
  assert.ok(start >= 0, `the page has #${id}`);
  return page.slice(start, page.indexOf('</section>', start));
};

before(async () => {
  ({ database, seeded: [mine] } = await openSeededTestDatabase([{ scale: 0.01 }]));
  server = await startTestServer(database.db);
  const account = mine.account.id;
  businessDate = (await database.db.query<{ d: string }>('SELECT loanql_business_date($1)::text AS d', [account])).rows[0]!.d;
  const loan = (await database.db.query<{ id: string }>(`SELECT id FROM loans WHERE account_id = $1 ORDER BY id LIMIT 1`, [account])).rows[0]!.id;
  await database.db.query(
    `INSERT INTO tasks (account_id, loan_id, name, status, date_due) VALUES
       ($1, $2, 'Start page: overdue', 'open', '2000-01-02'), ($1, $2, 'Start page: done', 'completed', '2000-01-01')`,
    [account, loan],
  );
  // A loan whose first payment falls in the business week (the seed's schedules are older).
  const firstDue = (await database.db.query<{ d: string }>(`SELECT ($1::date + 3)::text AS d`, [businessDate])).rows[0]!.d;
  await createLoan(database.db, account, { Name: 'Start page: due this week', Amount: 12000, Rate: 6, Term: 12, Frequency: 'monthly', First_Payment_Date: firstDue, Status: 'servicing' });
  client = new DashboardClient(server.url);
  assert.equal((await client.logIn(`admin@${mine.account.slug}.test`, PASSWORD)).status, 303);
  const reply = await client.get('/dashboard');
  assert.equal(reply.status, 200);
  page = reply.text;
});

after(async () => {
  await server?.close();
  await database?.close();
});

describe('The overview as the start page', () => {
  it('says the business date', () => {
    assert.match(page, new RegExp(`Business date ${businessDate}\\.`));
  });

  it('lists the next rows due this week, soonest first, each linked to its loan', async () => {
    const { rows } = await database.db.query<{ id: string; due: string }>(
      `SELECT l.id, s.due::text AS due FROM schedules s JOIN loans l ON l.account_id = s.account_id AND l.id = s.loan_id
        WHERE s.account_id = $1 AND s.is_next AND l.status = 'servicing' AND s.due BETWEEN $2::date AND $2::date + 6 ORDER BY s.due, s.loan_id`,
      [mine.account.id, businessDate],
    );
    const shown = [...section('due-this-week').matchAll(/<tr><td class="nowrap">([\d-]+)<\/td><td><a href="\/dashboard\/loans\/([0-9a-f-]{36})">/g)].map((match) => ({ id: match[2], due: match[1] }));
    assert.ok(rows.length > 0, 'a payment is due this week');
    assert.deepEqual(shown, rows.slice(0, 25), 'the first 25 (clerkDayBrowser.test.ts has more than that)');
    assert.match(section('due-this-week'), new RegExp(`<h2 id="due-heading">Due this week <span class="count">${rows.length}</span></h2>`));
    assert.match(section('due-this-week'), /<a href="\/dashboard\/loans\?status=servicing&amp;due=week&amp;sort=next_due">Loans due this week<\/a>/);
  });

  it('lists the late loans with the ledger’s days past due, most first', async () => {
    const { rows } = await database.db.query<{ id: string; days: number }>(
      `SELECT id, loanql_loan_days_past_due(account_id, id) AS days FROM loans WHERE account_id = $1 AND status = 'servicing'`,
      [mine.account.id],
    );
    const late = new Map(rows.filter((loan) => loan.days > 0).map((loan) => [loan.id, loan.days]));
    assert.ok(late.size > 0, 'the seed has late loans');
    const shown = [...section('late-loans').matchAll(/<a href="\/dashboard\/loans\/([0-9a-f-]{36})">[^<]+<\/a><\/td><td class="num">(\d+)<\/td>/g)].map((match) => ({ id: match[1]!, days: Number(match[2]) }));
    assert.equal(shown.length, Math.min(late.size, 25));
    for (const loan of shown) assert.equal(loan.days, late.get(loan.id), `days past due of ${loan.id}`);
    assert.deepEqual(shown.map((loan) => loan.days), [...shown.map((loan) => loan.days)].sort((a, b) => b - a));
    // More late loans than the list shows: it says of how many it shows the most overdue (the
    // collections queue's length). It counted the loans with any row unpaid before today, late or
    // forgiven by the tolerance, and chose among the 25 oldest of them (collectionsWeekBrowser).
    const hint = /<p class="hint">The 25 most overdue of (\d+) late loans\.<\/p>/.exec(section('late-loans'));
    assert.equal(hint ? Number(hint[1]) : null, late.size > 25 ? late.size : null, `${late.size} late loans`);
  });

  it('lists the open tasks by due date, the overdue marked, the completed not at all', async () => {
    const tasks = section('open-tasks');
    const open = (await database.db.query<{ n: string }>(`SELECT count(*) AS n FROM tasks WHERE account_id = $1 AND status <> 'completed'`, [mine.account.id])).rows[0]!.n;
    assert.match(tasks, new RegExp(`Open tasks <span class="count">${open}</span>`));
    assert.doesNotMatch(tasks, /Start page: done/);
    // The seed's tasks are many and mostly overdue: the one due in 2000 comes first, marked; 20 are listed, all counted.
    assert.match(tasks, /<tbody><tr class="is-overdue"><td class="nowrap"><span class="overdue">overdue: due 2000-01-02<\/span><\/td><td>Start page: overdue<\/td><td><span class="status pill-open">open<\/span><\/td><td><a href="\/dashboard\/loans\/[0-9a-f-]{36}">/);
    const dues = [...tasks.matchAll(/(?:overdue: due|"nowrap">due) (\d{4}-\d\d-\d\d)/g)].map((match) => match[1]!);
    assert.equal(dues.length, 20);
    assert.deepEqual(dues, [...dues].sort());
    for (const due of dues) assert.equal(tasks.includes(`overdue: due ${due}`), due < businessDate, `a task due ${due} is marked overdue only if before ${businessDate}`);
  });
});
