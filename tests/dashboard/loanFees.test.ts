import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { TestDatabase } from '../support/testDatabase.js';
import { startTestServer, type TestServer } from '../support/http.js';
import { openSeededTestDatabase, type SeededAccount } from '../support/seededService.js';
import { DashboardClient, onceToken, type Reply } from './dashboardClient.js';

/**
 * The loan page's Fees section over HTTP (the clerk audit: a clerk had to use GraphQL to see a
 * loan's fees or waive one): the fees listed with exact amounts, "Add a fee" (a manual fee) and a
 * fee's "Waive", each written once per rendering, refused in the page's words next to its form
 * with what was typed kept and nothing written; Balances' "Fees due" and the payoff quote — the
 * same database — follow each write.
 */
const PASSWORD = 'correct horse battery'; // seedAccount's admin password

let database: TestDatabase;
let server: TestServer;
let mine: SeededAccount;
let theirs: SeededAccount;
let client: DashboardClient;
/** A loan funded five days before the business date: no row due yet, so no fee but the test's. */
let loan = '';
let businessDay = '';
let theirLoan = '';
let theirFee = '';

const count = async (sql: string, values: unknown[]): Promise<number> => Number((await database.db.query<{ n: string }>(sql, values)).rows[0]!.n);
/** Every fee and waiver of every account, for "nothing was written". */
async function feeFootprint(): Promise<string> {
  const { rows } = await database.db.query<{ f: string }>(
    `SELECT concat_ws(' ', (SELECT count(*) FROM fees), (SELECT count(*) FROM fee_waivers), (SELECT sum(waived) FROM fees), (SELECT sum(fees_due) FROM loans)) AS f`,
  );
  return rows[0]!.f;
}
/** The loan page's fact `dd` marked `data-<kind>="<name>"`, tags and spaces flattened. */
function fact(page: string, kind: 'balance' | 'quote', name: string): string | null {
  const match = new RegExp(`<dd[^>]* data-${kind}="${name}">([\\s\\S]*?)</dd>`).exec(page);
  return match ? match[1]!.replace(/<[^>]+>/g, '').replace(/\s+/g, ' ').trim() : null;
}
/** `$1,234.56` as cents. */
const centsOfCash = (shown: string | null) => BigInt((shown ?? '').replace(/[$,.]/g, ''));
/** The Fees table's row of a fee: each part's text (date, kind, amount, paid, waived, due, waiver). */
function feeRow(page: string, fee: string): string[] {
  const match = new RegExp(`<tr data-fee="${fee}">([\\s\\S]*?)</tr>`).exec(page);
  assert.ok(match, `the row of fee ${fee}`);
  return [...match[1]!.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((cell) => cell[1]!.replace(/<details[\s\S]*<\/details>/, 'Waive form').replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim());
}
const fees = async () => (await database.db.query<{ id: string; amount: string; waived: string }>('SELECT id, amount::text, waived::text FROM fees WHERE account_id = $1 AND loan_id = $2 ORDER BY created_at', [mine.account.id, loan])).rows;

before(async () => {
  ({ database, seeded: [mine, theirs] } = await openSeededTestDatabase([{ scale: 0.01 }, { scale: 0.01, seed: 2 }]));
  server = await startTestServer(database.db);
  client = new DashboardClient(server.url);
  assert.equal((await client.logIn(`admin@${mine.account.slug}.test`, PASSWORD)).status, 303);
  businessDay = (await database.db.query<{ d: string }>('SELECT loanql_business_date($1)::text AS d', [mine.account.id])).rows[0]!.d;
  const funded = (await database.db.query<{ d: string }>(`SELECT ($1::date - 5)::text AS d`, [businessDay])).rows[0]!.d;
  await client.get('/dashboard/loans/new'); // the session's CSRF token
  const created = await client.postForm('/dashboard/loans', { Name: 'Fee desk loan', Amount: '100000', Rate: '12', Term: '12', Frequency: 'monthly', Date_Funded: funded, Status: 'servicing' });
  assert.equal(created.status, 303, created.text.slice(0, 300));
  loan = /\/dashboard\/loans\/([0-9a-f-]{36})/.exec(created.location!)![1]!;
  theirLoan = (await database.db.query<{ id: string }>(`SELECT id FROM loans WHERE account_id = $1 AND status = 'servicing' ORDER BY id LIMIT 1`, [theirs.account.id])).rows[0]!.id;
  theirFee = (await database.db.query<{ id: string }>(`INSERT INTO fees (account_id, loan_id, kind, amount) VALUES ($1, $2, 'manual', 40) RETURNING id`, [theirs.account.id, theirLoan])).rows[0]!.id;
});

after(async () => {
  await server?.close();
  await database?.close();
});

describe('The Fees section of the loan page', () => {
  it('says there are no fees, and offers "Add a fee" dated the business date', async () => {
    const page = (await client.get(`/dashboard/loans/${loan}`)).text;
    assert.match(page, /<h2 id="fees-heading">Fees<\/h2>[\s\S]*?<p>No fees\.<\/p>/);
    assert.match(page, new RegExp(`<form class="inline-form" method="post" action="/dashboard/loans/${loan}/fees" aria-label="Add a fee">`));
    assert.match(page, new RegExp(`id="fee-date" name="date"[^>]* value="${businessDay}"`));
    assert.equal(fact(page, 'balance', 'fees_due'), '$0.00');
  });

  it('adds a manual fee once from a form sent twice: listed with its amounts, Fees due and the payoff up by exactly its amount', async () => {
    const before = await client.get(`/dashboard/loans/${loan}`);
    const payoffBefore = centsOfCash(fact(before.text, 'quote', 'payoff'));
    const fields = { _once: onceToken(before, `/dashboard/loans/${loan}/fees`), amount: '1,125.50', date: businessDay, description: 'Inspection of the property' };
    const first = await client.postForm(`/dashboard/loans/${loan}/fees`, fields);
    const second = await client.postForm(`/dashboard/loans/${loan}/fees`, fields);
    assert.equal(first.status, 303, first.text.slice(0, 300));
    assert.equal(second.status, 303);
    assert.equal(second.location, first.location);
    assert.equal(first.location, `/dashboard/loans/${loan}?done=fee-added`);
    const written = await fees();
    assert.deepEqual(written.map((fee) => fee.amount), ['1125.50'], 'one fee, of the amount typed');
    const page = (await client.follow(first)).text;
    assert.match(page, /<section aria-labelledby="fees-heading" id="fees">\s*<h2 id="fees-heading">Fees<\/h2>\s*<div class="message message-ok outcome"[^>]*>Fee added: see Balances and the payoff quote\.<\/div>/);
    assert.deepEqual(feeRow(page, written[0]!.id), [businessDay, 'Manual fee Inspection of the property', '$1,125.50', '$0.00', '$0.00', '$1,125.50', 'Waive form']);
    assert.equal(fact(page, 'balance', 'fees_due'), '$1,125.50');
    assert.equal(fact(page, 'quote', 'fees_due'), '$1,125.50');
    assert.equal(centsOfCash(fact(page, 'quote', 'payoff')) - payoffBefore, 112550n);
    // The waiver form offers all that is unpaid.
    assert.match(page, new RegExp(`id="waive-amount-${written[0]!.id}" name="amount"[^>]* readonly value="1125.50"`));
  });

  it('sorts fees by date and shows what a payment paid of one', async () => {
    const early = await client.postForm(`/dashboard/loans/${loan}/fees`, { amount: '30', date: addDaysTo(businessDay, -2), description: '' });
    assert.equal(early.status, 303, early.text.slice(0, 300));
    // A fee payment pays the oldest fee first (SPEC §12 R1): 10.00 of the 30.00 one.
    const paid = await client.postForm(`/dashboard/loans/${loan}/payments`, { date: businessDay, amount: '10.00', type: 'fee', method: 'check' });
    assert.equal(paid.status, 303, paid.text.slice(0, 300));
    const page = (await client.get(`/dashboard/loans/${loan}`)).text;
    const [manual, older] = await fees();
    assert.ok(page.indexOf(`data-fee="${older!.id}"`) < page.indexOf(`data-fee="${manual!.id}"`), 'the older fee first');
    assert.deepEqual(feeRow(page, older!.id), [addDaysTo(businessDay, -2), 'Manual fee', '$30.00', '$10.00', '$0.00', '$20.00', 'Waive form']);
    assert.equal(fact(page, 'balance', 'fees_due'), '$1,145.50');
    assert.match(page, new RegExp(`id="waive-amount-${older!.id}" name="amount"[^>]* readonly value="20.00"`));
  });

  it('refuses a waiver of more than what is unpaid next to its form, the reason kept, nothing written', async () => {
    const [manual] = await fees();
    const before = await feeFootprint();
    const refused = await client.postForm(`/dashboard/loans/${loan}/fees/${manual!.id}/waive`, { amount: '1200.00', reason: 'Goodwill after the inspection mix-up' });
    assert.equal(refused.status, 400);
    const box = new RegExp(`<details class="waive" open>[\\s\\S]*?role="alert">To waive: \\$1,200\\.00 is more than what is unpaid of this fee, \\$1,125\\.50; a waiver waives at most what is unpaid\\.</div>\\s*<form[^>]* action="/dashboard/loans/${loan}/fees/${manual!.id}/waive"`);
    assert.match(refused.text, box);
    assert.match(refused.text, new RegExp(`<textarea id="waive-reason-${manual!.id}" name="reason"[^>]*>Goodwill after the inspection mix-up</textarea>`));
    assert.match(refused.text, new RegExp(`id="waive-amount-${manual!.id}" name="amount"[^>]* readonly value="1200.00"`));
    const blank = await client.postForm(`/dashboard/loans/${loan}/fees/${manual!.id}/waive`, { amount: '1125.50', reason: '  ' });
    assert.equal(blank.status, 400);
    assert.match(blank.text, /role="alert">Reason: say why the fee is waived\.<\/div>/);
    const part = await client.postForm(`/dashboard/loans/${loan}/fees/${manual!.id}/waive`, { amount: '100.00', reason: 'Half' });
    assert.equal(part.status, 400);
    assert.match(part.text, /role="alert">To waive: a waiver waives all that is unpaid of the fee, \$1,125\.50, not a part of it \(\$100\.00\)\.<\/div>/);
    const badFee = await client.postForm(`/dashboard/loans/${loan}/fees`, { amount: '0.00', date: businessDay, description: '' });
    assert.equal(badFee.status, 400);
    assert.match(badFee.text, /role="alert">Fee: expected an amount above 0/);
    assert.match(badFee.text, /id="fee-amount" name="amount"[^>]* value="0.00"/);
    const early = await client.postForm(`/dashboard/loans/${loan}/fees`, { amount: '15.00', date: '2000-01-01', description: 'Backdated' });
    assert.equal(early.status, 400);
    assert.match(early.text, /role="alert">Fee date: 2000-01-01 is before the loan was funded \(\d{4}-\d\d-\d\d\); a fee is dated on or after its funding date\./);
    assert.match(early.text, /id="fee-note" name="description"[^>]* value="Backdated"/);
    assert.equal(await feeFootprint(), before);
  });

  it('waives a fee once from a form sent twice: recorded with who and why, Fees due and the payoff down by what was unpaid', async () => {
    const [manual] = await fees();
    const page = await client.get(`/dashboard/loans/${loan}`);
    const payoffBefore = centsOfCash(fact(page.text, 'quote', 'payoff'));
    const action = `/dashboard/loans/${loan}/fees/${manual!.id}/waive`;
    const fields = { _once: onceToken(page, action), amount: '1125.50', reason: 'Inspection was our error' };
    const [first, second] = [await client.postForm(action, fields), await client.postForm(action, fields)];
    assert.equal(first.status, 303, first.text.slice(0, 300));
    assert.equal(second.status, 303, second.text.slice(0, 300));
    assert.equal(first.location, `/dashboard/loans/${loan}?done=fee-waived`);
    assert.equal(await count('SELECT count(*) AS n FROM fee_waivers WHERE account_id = $1 AND fee_id = $2', [mine.account.id, manual!.id]), 1);
    const after = (await client.follow(first)).text;
    const { rows: [admin] } = await database.db.query<{ name: string }>(`SELECT name FROM admins WHERE account_id = $1 AND email = $2`, [mine.account.id, `admin@${mine.account.slug}.test`]);
    assert.deepEqual(feeRow(after, manual!.id), [businessDay, 'Manual fee Inspection of the property', '$1,125.50', '$0.00', '$1,125.50', '$0.00', `Waived ${businessDay} by ${admin!.name}: Inspection was our error`]);
    assert.equal(fact(after, 'balance', 'fees_due'), '$20.00');
    assert.equal(payoffBefore - centsOfCash(fact(after, 'quote', 'payoff')), 112550n);
    assert.doesNotMatch(after, new RegExp(`action="${action}"`), 'no waiver form for a waived fee');
    // The same fee waived again from a stale page: refused in words, nothing written.
    const again = await client.postForm(action, { amount: '1125.50', reason: 'Again' });
    assert.equal(again.status, 400);
    assert.match(again.text, new RegExp(`role="alert">This fee was already waived on ${businessDay}: a fee is waived once\\.</div>`));
  });

  it('is a 404 for another account’s fee or loan, and for a fee of another loan; nothing is written', async () => {
    const before = await feeFootprint();
    for (const path of [`/dashboard/loans/${loan}/fees/${theirFee}/waive`, `/dashboard/loans/${theirLoan}/fees/${theirFee}/waive`, `/dashboard/loans/${loan}/fees/not-a-fee/waive`]) {
      const reply = await client.postForm(path, { amount: '40.00', reason: 'not mine' });
      assert.equal(reply.status, 404, path);
      assert.match(reply.text, /<h1>No such (fee|loan)<\/h1>/, path);
    }
    const theirs_ = await client.postForm(`/dashboard/loans/${theirLoan}/fees`, { amount: '5.00', date: businessDay, description: '' });
    assert.equal(theirs_.status, 404);
    // A fee of this account's other loan, through this loan's address.
    const other = (await database.db.query<{ id: string }>(`SELECT id FROM loans WHERE account_id = $1 AND status = 'servicing' AND id <> $2 ORDER BY id LIMIT 1`, [mine.account.id, loan])).rows[0]!.id;
    const otherFee = (await database.db.query<{ id: string }>(`INSERT INTO fees (account_id, loan_id, kind, amount) VALUES ($1, $2, 'manual', 7) RETURNING id`, [mine.account.id, other])).rows[0]!.id;
    const footprint = await feeFootprint();
    const crossed = await client.postForm(`/dashboard/loans/${loan}/fees/${otherFee}/waive`, { amount: '7.00', reason: 'wrong loan' });
    assert.equal(crossed.status, 404);
    assert.equal(await feeFootprint(), footprint);
    assert.notEqual(footprint, before); // (the fee inserted above)
  });

  it('refuses both forms without their CSRF token (403), writing nothing', async () => {
    const [, older] = await fees();
    await client.get(`/dashboard/loans/${loan}`);
    const before = await feeFootprint();
    for (const [path, fields] of [
      [`/dashboard/loans/${loan}/fees`, { amount: '5.00', date: businessDay, description: 'csrf' }],
      [`/dashboard/loans/${loan}/fees/${older!.id}/waive`, { amount: '20.00', reason: 'csrf' }],
    ] as const) {
      for (const token of [null, 'wrong-token']) {
        const reply = await client.postForm(path, { ...fields, _csrf: token });
        assert.equal(reply.status, 403, `${path} with ${token ?? 'no token'}`);
        assert.match(reply.text, /security token/);
      }
    }
    assert.equal(await feeFootprint(), before);
  });

  it('offers no fee form for a loan that is not in servicing or overpaid, and refuses one posted', async () => {
    const lead = await client.postForm('/dashboard/loans', { Name: 'Fee desk lead', Amount: '5000', Status: 'lead' });
    assert.equal(lead.status, 303, lead.text.slice(0, 300));
    const leadId = /\/dashboard\/loans\/([0-9a-f-]{36})/.exec(lead.location!)![1]!;
    const page = (await client.get(`/dashboard/loans/${leadId}`)).text;
    assert.doesNotMatch(page, /aria-label="Add a fee"/);
    assert.match(page, /A fee is added only to a loan in servicing or overpaid; this loan is lead\./);
    const before = await feeFootprint();
    const refused = await client.postForm(`/dashboard/loans/${leadId}/fees`, { amount: '5.00', date: businessDay, description: '' });
    assert.equal(refused.status, 400);
    assert.match(refused.text, /role="alert">A fee is added only to a loan in servicing or overpaid; this loan is lead\./);
    assert.equal(await feeFootprint(), before);
  });

  it('refuses a fee on a closed loan as every other writer does (migration 0090: GraphQL and SQL took one and reopened the loan)', async () => {
    const closed = await client.postForm('/dashboard/loans', { Name: 'Fee desk paid-off loan', Amount: '5000', Status: 'closed' });
    assert.equal(closed.status, 303, closed.text.slice(0, 300));
    const closedId = /\/dashboard\/loans\/([0-9a-f-]{36})/.exec(closed.location!)![1]!;
    const page = (await client.get(`/dashboard/loans/${closedId}`)).text;
    assert.doesNotMatch(page, /aria-label="Add a fee"/);
    const before = await feeFootprint();
    const refused = await client.postForm(`/dashboard/loans/${closedId}/fees`, { amount: '5.00', date: businessDay, description: '' });
    assert.equal(refused.status, 400);
    assert.match(refused.text, /role="alert">A fee is added only to a loan in servicing or overpaid; this loan is closed\./);
    // The database holds the same rule for every writer.
    await assert.rejects(
      database.db.query(`INSERT INTO fees (account_id, loan_id, kind, date, amount) VALUES ($1, $2, 'manual', $3, 5)`, [mine.account.id, closedId, businessDay]),
      /the loan is closed: it is charged fees while in servicing or overpaid/,
    );
    assert.equal(await feeFootprint(), before);
  });
});

function addDaysTo(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}
