import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createAdmin } from '../../app/accounts.js';
import { cash } from '../../dashboard/pages/servicingFormat.js';
import { startKeyedService, type KeyedAccount, type KeyedService } from '../support/seededService.js';
import { DashboardClient } from './dashboardClient.js';

/**
 * Issue 31, the collections queue over HTTP: an account with loans late by known days and
 * amounts (created over REST, paid through GraphQL, dated back from the business date), shown
 * in its buckets, in the order of each sort, filtered; the aging summary's counts and sums; the
 * CSV download holding exactly the page's rows (every page joined), field for field, quoted per
 * RFC 4180 and defused against formulas; no page without a session.
 */
const PASSWORD = 'correct horse battery';
const QUEUE = '/dashboard/collections';

let s: KeyedService;
let client: DashboardClient;
let today = '';
/** Each late loan as the test built it: what the queue must say. */
interface Expected {
  id: string;
  name: string;
  days: number;
  bucket: string;
  amountPastDue: bigint;
  principal: string;
  fees: string;
  lastPayment: { date: string; amount: string } | null;
  borrower: { name: string; email: string; phone: string | null } | null;
  /** The loan's next open task, or null when it has none. */
  nextTask: { due: string | null; name: string } | null;
}
const late = new Map<string, Expected>();
const loanIds = new Map<string, string>();

const addDays = (day: string, days: number): string => new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
const cents = (value: string): bigint => {
  const [whole, fraction = ''] = value.replace('-', '').split('.');
  const amount = BigInt(whole!) * 100n + BigInt(fraction.padEnd(2, '0').slice(0, 2));
  return value.startsWith('-') ? -amount : amount;
};
const decimal = (value: bigint): string => `${value < 0n ? '-' : ''}${(value < 0n ? -value : value) / 100n}.${String((value < 0n ? -value : value) % 100n).padStart(2, '0')}`;

async function graph(account: KeyedAccount, query: string, variables: Record<string, unknown>): Promise<any> {
  const response = await fetch(`${s.url}/api/graph`, { method: 'POST', headers: { authorization: `Token ${account.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
  const body = (await response.json()) as { data?: any; errors?: unknown };
  assert.equal(body.errors, undefined, JSON.stringify(body.errors));
  return body.data;
}

async function pay(account: KeyedAccount, loan: string, date: string, amount: string): Promise<void> {
  await graph(account, `mutation ($loan: uuid!, $date: date!, $amount: numeric!) { insert_payments_one(object: {loan_id: $loan, date: $date, amount: $amount, type: "regular", method: "ach"}) { id } }`, { loan, date, amount });
}

/** A 12-month loan of 12,000.00 at 12 % whose first row falls due `firstDueIn` days from the business date (negative: in the past). */
async function loan(account: KeyedAccount, name: string, firstDueIn: number, contact: Record<string, string> = {}): Promise<{ id: string; payment: string }> {
  const firstDue = addDays(today, firstDueIn);
  const created = await account.rest.post('/api/loan', { Name: name, Amount: 12000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: addDays(firstDue, -30), First_Payment_Date: firstDue, Status: 'servicing', ...contact });
  assert.equal(created.status, 201, created.text);
  return { id: created.json.loan.id as string, payment: created.exact.loan.regular_payment.text as string };
}

/** How many of the loan's rows fall due before the business date. */
async function rowsDueBefore(id: string): Promise<number> {
  return Number((await s.db.query<{ n: string }>(`SELECT count(*) AS n FROM schedules WHERE account_id = $1 AND loan_id = $2 AND due < $3::date`, [s.accountId, id, today])).rows[0]!.n);
}

/** Records what the queue must show for a late loan: the amount past due n × payment less what was paid; fees and principal as stored. */
async function expectLate(key: string, made: { id: string; payment: string }, name: string, days: number, bucket: string, paid: { date: string; amount: string } | null, borrower: Expected['borrower']): Promise<void> {
  const rows = await rowsDueBefore(made.id);
  const stored = (await s.db.query<{ principal: string; fees: string; replayed: string }>(
    `SELECT principal_outstanding::text AS principal, fees_due::text AS fees, loanql_loan_amount_past_due(account_id, id)::text AS replayed FROM loans WHERE account_id = $1 AND id = $2`,
    [s.accountId, made.id],
  )).rows[0]!;
  const amountPastDue = BigInt(rows) * cents(made.payment) - (paid ? cents(paid.amount) : 0n);
  // The replay (the `amount_past_due` computed field) agrees with the figure built by hand.
  assert.equal(cents(stored.replayed), amountPastDue, `amount past due of ${name}`);
  loanIds.set(key, made.id);
  late.set(made.id, { id: made.id, name, days, bucket, amountPastDue, principal: stored.principal, fees: stored.fees, lastPayment: paid, borrower, nextTask: null });
}

before(async () => {
  s = await startKeyedService();
  await s.db.query(`INSERT INTO products (account_id, name, is_default) VALUES ($1, 'Default', true) ON CONFLICT DO NOTHING`, [s.accountId]);
  today = (await s.db.query<{ day: string }>(`SELECT loanql_business_date($1)::text AS day`, [s.accountId])).rows[0]!.day;

  await expectLate('ada', await loan(s, 'Ada ten days', -10, { Borrower_Name: 'Ada Byron', Borrower_Email: 'ada@example.test' }), 'Ada ten days', 10, '1-29', null, { name: 'Ada Byron', email: 'ada@example.test', phone: null });

  const smith = await loan(s, 'Smith, "Junior" bridge', -45, { Borrower_Name: 'Jo Smith', Borrower_Email: 'jo@example.test' });
  await s.db.query(`UPDATE people SET phone = '+1 555 0100' WHERE account_id = $1 AND email = 'jo@example.test'`, [s.accountId]);
  await expectLate('smith', smith, 'Smith, "Junior" bridge', 45, '30-59', null, { name: 'Jo Smith', email: 'jo@example.test', phone: '+1 555 0100' });

  // Paid 100.00 of its first row: still 100 days past due, 100.00 less past due.
  const formula = await loan(s, '=HYPERLINK("http://evil.test")', -100, { Borrower_Name: '@Mallory', Borrower_Email: 'mallory@example.test' });
  const partial = { date: addDays(today, -90), amount: '100.00' };
  await pay(s, formula.id, partial.date, partial.amount);
  await expectLate('formula', formula, '=HYPERLINK("http://evil.test")', 100, '90-119', partial, { name: '@Mallory', email: 'mallory@example.test', phone: null });

  await expectLate('zed', await loan(s, 'Zed two hundred days', -200), 'Zed two hundred days', 200, '120+', null, null);

  // Not late: first row due in five days; and one whose first row was paid on its due date.
  await loan(s, 'On time', 5);
  const paidUp = await loan(s, 'Paid up', -20);
  await pay(s, paidUp.id, addDays(today, -20), paidUp.payment);

  // Enough loans 35 days late for a second page (50 a page), all alike: ties ordered by id.
  for (let index = 1; index <= 48; index++) {
    const name = `Filler ${String(index).padStart(2, '0')}`;
    await expectLate(`filler${index}`, await loan(s, name, -35), name, 35, '30-59', null, null);
  }
  // Another account's late loan is never shown.
  const other = await s.newAccount();
  await s.db.query(`INSERT INTO products (account_id, name, is_default) VALUES ($1, 'Default', true) ON CONFLICT DO NOTHING`, [other.accountId]);
  await loan(other, 'Other account late', -60);

  await createAdmin(s.db, s.accountId, { email: 'collector@example.test', password: PASSWORD, name: 'Cole Lector' });
  client = new DashboardClient(s.url);
  assert.equal((await client.logIn('collector@example.test', PASSWORD)).status, 303);
});
after(() => s?.close());

/** The text of a cell: tags dropped, entities decoded, `<br>` as a line break. */
function cellText(cell: string): string {
  return cell
    .replace(/<br>/g, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .trim();
}

interface PageRow {
  id: string;
  cells: string[];
}

/** The queue table's rows of a page: the loan's id (from its link) and each cell's text. */
function queueRows(page: string): PageRow[] {
  const start = page.indexOf('<table class="queue-table">');
  if (start < 0) return [];
  const body = page.slice(page.indexOf('<tbody>', start), page.indexOf('</tbody>', start));
  return [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((match) => ({
    id: /href="\/dashboard\/loans\/([0-9a-f-]{36})"/.exec(match[1]!)![1]!,
    cells: [...match[1]!.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((cell) => cellText(cell[1]!)),
  }));
}

async function page(path: string): Promise<string> {
  const reply = await client.get(path);
  assert.equal(reply.status, 200, `${path}: ${reply.text.slice(0, 300)}`);
  return reply.text;
}

/** Every row of the queue for a query string, page after page. */
async function allRows(search: string): Promise<PageRow[]> {
  const rows: PageRow[] = [];
  for (let number = 1; ; number++) {
    const text = await page(`${QUEUE}${search}${search ? '&' : '?'}page=${number}`);
    rows.push(...queueRows(text));
    if (!/rel="next"/.test(text)) return rows;
  }
}

/** The cells the page must show for a loan, in the table's column order. */
function expectedCells(loan: Expected): string[] {
  return [
    loan.name,
    loan.borrower ? [loan.borrower.name, loan.borrower.email, ...(loan.borrower.phone ? [loan.borrower.phone] : [])].join('\n') : '—',
    String(loan.days),
    loan.bucket,
    String(cash(decimal(loan.amountPastDue), 'USD')),
    String(cash(loan.principal, 'USD')),
    String(cash(loan.fees, 'USD')),
    loan.lastPayment ? `${loan.lastPayment.date}\n${String(cash(loan.lastPayment.amount, 'USD'))}` : 'never',
    nextTaskCell(loan.nextTask),
  ];
}

/** The Next task cell: none planned, or the due day (overdue before the business date) over the task's name. */
function nextTaskCell(task: Expected['nextTask']): string {
  if (!task) return 'none planned';
  const when = task.due === null ? 'no due date' : task.due < today ? `overdue: due ${task.due}` : `due ${task.due}`;
  return `${when}\n${task.name}`;
}

const byId = (a: Expected, b: Expected): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
const compare = (a: bigint | number, b: bigint | number): number => (a < b ? -1 : a > b ? 1 : 0);

/** A download as its bytes say: the UTF-8 byte-order mark checked and kept out of the text (fetch's `text()` would drop it unseen). */
async function download(path: string): Promise<{ status: number; headers: Headers; text: string }> {
  const cookie = [...client.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  const response = await fetch(`${s.url}${path}`, { headers: { cookie }, redirect: 'manual' });
  const bytes = new Uint8Array(await response.arrayBuffer());
  if (response.status === 200) assert.deepEqual([...bytes.slice(0, 3)], [0xef, 0xbb, 0xbf], 'a UTF-8 byte-order mark');
  return { status: response.status, headers: response.headers, text: new TextDecoder('utf-8', { fatal: true }).decode(bytes.slice(response.status === 200 ? 3 : 0)) };
}

/** Parses RFC 4180 CSV (quoted fields with doubled quotes, CRLF lines). */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let field = '';
  let record: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (char === '"') quoted = false;
      else field += char;
    } else if (char === '"') quoted = true;
    else if (char === ',') record.push(field), (field = '');
    else if (char === '\r' && text[i + 1] === '\n') record.push(field), records.push(record), (record = []), (field = ''), i++;
    else field += char;
  }
  assert.equal(field + record.join(''), '', 'the CSV ends with CRLF');
  return records;
}

describe('Collections queue (issue 31)', () => {
  it('lists exactly the late loans, most days first, with days, bucket, amounts, last payment and borrower', async () => {
    const rows = await allRows('');
    const expected = [...late.values()].sort((a, b) => b.days - a.days || byId(a, b));
    assert.deepEqual(rows.map((row) => row.id), expected.map((loan) => loan.id));
    for (const [index, row] of rows.entries()) assert.deepEqual(row.cells, expectedCells(expected[index]!), `row of ${expected[index]!.name}`);
    const first = await page(QUEUE);
    assert.match(first, /Late loans 1–50 of 52\./);
    assert.match(first, /Page 1 of 2/);
    assert.doesNotMatch(first, /Other account late|On time|Paid up/);
    assert.match(first, /<a href="\/dashboard\/collections" aria-current="page">Collections<\/a>/);
  });

  it('orders by each sortable column both ways, ties by id, and marks the sorted header with aria-sort', async () => {
    const loans = [...late.values()];
    const byName = (await s.db.query<{ id: string }>(`SELECT id FROM loans WHERE account_id = $1 AND id = ANY($2::uuid[]) ORDER BY name, id`, [s.accountId, loans.map((loan) => loan.id)])).rows.map((row) => row.id);
    const byNameDesc = (await s.db.query<{ id: string }>(`SELECT id FROM loans WHERE account_id = $1 AND id = ANY($2::uuid[]) ORDER BY name DESC, id`, [s.accountId, loans.map((loan) => loan.id)])).rows.map((row) => row.id);
    const orders: Record<string, string[]> = {
      'sort=days&dir=asc': [...loans].sort((a, b) => a.days - b.days || byId(a, b)).map((loan) => loan.id),
      'sort=amount_past_due': [...loans].sort((a, b) => compare(b.amountPastDue, a.amountPastDue) || byId(a, b)).map((loan) => loan.id),
      'sort=amount_past_due&dir=asc': [...loans].sort((a, b) => compare(a.amountPastDue, b.amountPastDue) || byId(a, b)).map((loan) => loan.id),
      'sort=fees_due': [...loans].sort((a, b) => compare(cents(b.fees), cents(a.fees)) || byId(a, b)).map((loan) => loan.id),
      'sort=fees_due&dir=asc': [...loans].sort((a, b) => compare(cents(a.fees), cents(b.fees)) || byId(a, b)).map((loan) => loan.id),
      'sort=name': byName,
      'sort=name&dir=desc': byNameDesc,
      // Never paid counts as the oldest payment.
      'sort=last_payment': [...loans].sort((a, b) => (a.lastPayment ? 1 : 0) - (b.lastPayment ? 1 : 0) || byId(a, b)).map((loan) => loan.id),
      'sort=last_payment&dir=desc': [...loans].sort((a, b) => (b.lastPayment ? 1 : 0) - (a.lastPayment ? 1 : 0) || byId(a, b)).map((loan) => loan.id),
    };
    for (const [search, ids] of Object.entries(orders)) {
      assert.deepEqual((await allRows(`?${search}`)).map((row) => row.id), ids, search);
    }
    const byFees = await page(`${QUEUE}?sort=fees_due`);
    assert.match(byFees, /<th scope="col" class="num" aria-sort="descending"><a href="\/dashboard\/collections\?sort=fees_due&amp;dir=asc" class="sort-link">Fees due/);
    assert.equal(byFees.match(/aria-sort=/g)?.length, 1);
    // Late fees are counted: 45 days late, two rows unpaid past their grace, two fees of 5 % of the payment.
    const smith = late.get(loanIds.get('smith')!)!;
    const payment = (await s.db.query<{ p: string }>(`SELECT regular_payment::text AS p FROM loans WHERE account_id = $1 AND id = $2`, [s.accountId, smith.id])).rows[0]!.p;
    assert.equal(cents(smith.fees), 2n * ((cents(payment) * 5n + 50n) / 100n), `fees due of ${smith.name}`);
  });

  it('filters by bucket, by days and by name, and refuses a bucket the products do not have', async () => {
    const inBucket = await allRows('?bucket=30-59');
    assert.deepEqual(inBucket.map((row) => row.id).sort(), [...late.values()].filter((loan) => loan.bucket === '30-59').map((loan) => loan.id).sort());
    assert.equal(inBucket.length, 49);
    assert.deepEqual((await allRows('?bucket=60-89')).length, 0);
    assert.deepEqual((await allRows('?min_days=45')).map((row) => row.id), [loanIds.get('zed'), loanIds.get('formula'), loanIds.get('smith')]);
    assert.deepEqual((await allRows('?q=junior')).map((row) => row.id), [loanIds.get('smith')]);
    for (const [search, parameter] of [['?bucket=nope', 'bucket'], ['?min_days=0', 'min_days'], ['?sort=balance', 'sort'], ['?dir=up', 'dir'], ['?page=0', 'page']] as const) {
      const reply = await client.get(`${QUEUE}${search}`);
      assert.equal(reply.status, 400, search);
      assert.match(reply.text, new RegExp(`The parameter “${parameter}” is wrong`));
      assert.equal((await client.get(`/dashboard/collections.csv${search}`)).status, 400, `${search} (CSV)`);
    }
  });

  it('sums every bucket, zero ones included, current counting the loans in servicing not late', async () => {
    const text = await page(QUEUE);
    const table = text.slice(text.indexOf('<table class="aging-table">'), text.indexOf('</table>', text.indexOf('<table class="aging-table">')));
    const shown = [...table.matchAll(/<th scope="row"><a [^>]+>([^<]+)<\/a><\/th>\s*<td class="num">(\d+)<\/td>\s*<td class="num">([^<]+)<\/td>\s*<td class="num">([^<]+)<\/td>/g)].map((m) => [m[1], Number(m[2]), m[3], m[4]]);
    const principals = (await s.db.query<{ id: string; p: string }>(`SELECT id, principal_outstanding::text AS p FROM loans WHERE account_id = $1 AND status = 'servicing'`, [s.accountId])).rows;
    const currentIds = principals.filter((row) => !late.has(row.id));
    assert.equal(currentIds.length, 2, 'on time and paid up');
    const expected = ['current', '1-29', '30-59', '60-89', '90-119', '120+'].map((bucket) => {
      const loans = [...late.values()].filter((loan) => loan.bucket === bucket);
      const principal = bucket === 'current' ? currentIds.reduce((sum, row) => sum + cents(row.p), 0n) : loans.reduce((sum, loan) => sum + cents(loan.principal), 0n);
      return [bucket, bucket === 'current' ? 2 : loans.length, String(cash(decimal(loans.reduce((sum, loan) => sum + loan.amountPastDue, 0n)), 'USD')), String(cash(decimal(principal), 'USD'))];
    });
    assert.deepEqual(shown, expected);
    const sum = (column: 2 | 3) => expected.reduce((total, row) => total + cents(String(row[column]).replace(/[$,]/g, '')), 0n);
    assert.match(table, new RegExp(`<tfoot><tr><th scope="row">All in servicing</th><td class="num">54</td><td class="num">\\${cash(decimal(sum(2)), 'USD')}</td><td class="num">\\${cash(decimal(sum(3)), 'USD')}</td></tr></tfoot>`));
    // The chart: an image with a title and a description that says every count, and one bar per bucket.
    assert.match(text, /<svg role="img" aria-labelledby="aging-chart-title aging-chart-desc"/);
    assert.match(text, /<desc id="aging-chart-desc">current: 2 loans; 1-29: 1 loan; 30-59: 49 loans; 60-89: 0 loans; 90-119: 1 loan; 120\+: 1 loan\.<\/desc>/);
    assert.equal(text.match(/<rect /g)?.length, 6);
    // Its "current" link: the list holds late loans only, and says why it is empty.
    assert.match(await page(`${QUEUE}?bucket=current`), /role="status" id="queue-status">No late loan in bucket current: its 2 loans are not past due \(this list holds loans 1 day or more past due\)\.</);
    assert.match(await page(`${QUEUE}?bucket=60-89`), /role="status" id="queue-status">No late loan matches\.</);
  });

  it('downloads the same rows as the pages, field for field, as RFC 4180 CSV named after the business date', async () => {
    for (const search of ['', '?sort=name', '?bucket=30-59&sort=amount_past_due&dir=asc']) {
      const reply = await download(`/dashboard/collections.csv${search}`);
      assert.equal(reply.status, 200);
      assert.match(reply.headers.get('content-type') ?? '', /^text\/csv; charset=utf-8/);
      assert.equal(reply.headers.get('content-disposition'), `attachment; filename="collections-${today}.csv"`);
      const [header, ...records] = parseCsv(reply.text);
      assert.deepEqual(header, ['Loan ID', 'Loan', 'Days past due', 'Bucket', 'Amount past due (USD)', 'Principal outstanding (USD)', 'Fees due (USD)', 'Last payment date', 'Last payment amount (USD)', 'Borrower', 'Borrower email', 'Borrower phone', 'Next task due', 'Next task']);
      const rows = await allRows(search);
      assert.equal(records.length, rows.length, search);
      for (const [index, record] of records.entries()) {
        const row = rows[index]!;
        const [id, name, days, bucket, amount, principal, fees, lastDate, lastAmount, borrower, email, phone, taskDue, taskName] = record as [string, ...string[]];
        const undefuse = (value: string) => (/^'[=+\-@\t\r]/.test(value) ? value.slice(1) : value);
        assert.equal(id, row.id);
        assert.deepEqual(
          [undefuse(name!), undefuse(borrower!) ? [undefuse(borrower!), email, ...(phone ? [undefuse(phone)] : [])].join('\n') : '—', days, bucket, String(cash(amount, 'USD')), String(cash(principal, 'USD')), String(cash(fees, 'USD')), lastDate ? `${lastDate}\n${String(cash(lastAmount, 'USD'))}` : 'never', nextTaskCell(taskName ? { due: taskDue || null, name: taskName } : null)],
          row.cells,
          `${search} row ${index + 1}`,
        );
        assert.match(amount!, /^\d+\.\d\d$/, 'exact digits, no grouping, no currency sign');
      }
    }
  });

  it('quotes a name with a comma and quotes, and defuses text a spreadsheet would run as a formula', async () => {
    const lines = (await download('/dashboard/collections.csv?sort=name')).text.split('\r\n');
    const smith = lines.find((line) => line.startsWith(loanIds.get('smith')!))!;
    assert.equal(smith.split(',').slice(0, 3).join(','), `${loanIds.get('smith')},"Smith, ""Junior"" bridge"`);
    assert.ok(smith.endsWith(`,Jo Smith,jo@example.test,'+1 555 0100,,`), smith);
    const formula = lines.find((line) => line.startsWith(loanIds.get('formula')!))!;
    assert.ok(formula.startsWith(`${loanIds.get('formula')},"'=HYPERLINK(""http://evil.test"")",100,90-119,`), formula);
    assert.ok(formula.endsWith(`,'@Mallory,mallory@example.test,,,`), formula);
  });

  it('is shown only with a session: the page and the download redirect to the login', async () => {
    const anonymous = new DashboardClient(s.url);
    for (const path of [QUEUE, '/dashboard/collections.csv']) {
      const reply = await anonymous.get(path);
      assert.equal(reply.status, 303, path);
      assert.match(reply.location ?? '', /^\/dashboard\/login/);
      assert.doesNotMatch(reply.text, /Ada ten days/);
    }
  });

  it("shows each late loan's next open task — none planned, overdue, due, undated — sorts by it both ways, and downloads it", async () => {
    // Session 39: the clerk saw the late loans without knowing which had a follow-up planned.
    const task = async (key: string, name: string, due: string | null, status = 'open'): Promise<void> => {
      await s.db.query(`INSERT INTO tasks (account_id, loan_id, name, status, date_due) VALUES ($1, $2, $3, $4, $5)`, [s.accountId, loanIds.get(key), name, status, due]);
    };
    await task('ada', 'Call Ada again', addDays(today, 9));
    await task('ada', 'Call Ada', addDays(today, -3));
    await task('smith', 'Send the letter', addDays(today, 2));
    await task('formula', 'Skip trace', null);
    await task('formula', 'Old call, done', addDays(today, -20), 'completed');
    await task('zed', 'Done long ago', addDays(today, -50), 'completed');
    late.get(loanIds.get('ada')!)!.nextTask = { due: addDays(today, -3), name: 'Call Ada' };
    late.get(loanIds.get('smith')!)!.nextTask = { due: addDays(today, 2), name: 'Send the letter' };
    late.get(loanIds.get('formula')!)!.nextTask = { due: null, name: 'Skip trace' };

    const loans = [...late.values()];
    const rank = (loan: Expected): number => (loan.nextTask === null ? 0 : loan.nextTask.due === null ? 2 : 1);
    const ascending = [...loans].sort((a, b) => rank(a) - rank(b) || (a.nextTask?.due ?? '').localeCompare(b.nextTask?.due ?? '') || byId(a, b));
    const descending = [...loans].sort((a, b) => rank(b) - rank(a) || (b.nextTask?.due ?? '').localeCompare(a.nextTask?.due ?? '') || byId(a, b));
    const asc = await allRows('?sort=next_task');
    assert.deepEqual(asc.map((row) => row.id), ascending.map((loan) => loan.id));
    assert.deepEqual(asc.slice(-3).map((row) => row.cells.at(-1)), [`overdue: due ${addDays(today, -3)}\nCall Ada`, `due ${addDays(today, 2)}\nSend the letter`, 'no due date\nSkip trace']);
    for (const [index, row] of asc.entries()) assert.deepEqual(row.cells, expectedCells(ascending[index]!), `row of ${ascending[index]!.name}`);
    assert.deepEqual((await allRows('?sort=next_task&dir=desc')).map((row) => row.id), descending.map((loan) => loan.id));
    assert.match(await page(`${QUEUE}?sort=next_task`), /aria-sort="ascending"><a href="\/dashboard\/collections\?sort=next_task&amp;dir=desc" class="sort-link">Next task/);

    const [header, ...records] = parseCsv((await download('/dashboard/collections.csv?sort=next_task')).text);
    assert.deepEqual(header!.slice(-2), ['Next task due', 'Next task']);
    assert.deepEqual(records.map((record) => record[0]), ascending.map((loan) => loan.id));
    assert.deepEqual(records.slice(-3).map((record) => record.slice(-2)), [[addDays(today, -3), 'Call Ada'], [addDays(today, 2), 'Send the letter'], ['', 'Skip trace']]);
  });

  it('is linked from the overview and the main navigation', async () => {
    const overview = await page('/dashboard');
    assert.match(overview, /<a href="\/dashboard\/collections">Collections<\/a>/);
    assert.match(overview, /<a href="\/dashboard\/collections">Collections queue<\/a>/);
  });
});

describe('The collections queue’s last payment', () => {
  it('is the borrower’s, never a refund of credit paid to them', async () => {
    // An account of its own, so the queue above keeps its rows: a loan paid off with 100.00 too
    // much, the 100.00 refunded, then the payoff reversed (posted in error): late again since its
    // first row, and what the borrower paid last that still stands is nothing.
    const account = await s.newAccount();
    await s.db.query(`INSERT INTO products (account_id, name, is_default) VALUES ($1, 'Default', true) ON CONFLICT DO NOTHING`, [account.accountId]);
    const made = await loan(account, 'Refunded then reversed', -100);
    const quote = await account.rest.get(`/api/loan/${made.id}/payoff?date=${addDays(today, -95)}`);
    assert.equal(quote.status, 200, quote.text);
    const overpaid = decimal(cents(quote.exact.payoff.text as string) + 10000n);
    const payoff = (await graph(account, `mutation ($loan: uuid!, $date: date!, $amount: numeric!) { insert_payments_one(object: {loan_id: $loan, date: $date, amount: $amount, type: "payoff", method: "wire"}) { id } }`, { loan: made.id, date: addDays(today, -95), amount: overpaid })).insert_payments_one.id;
    await graph(account, `mutation ($loan: uuid!, $date: date!) { insert_payments_one(object: {loan_id: $loan, date: $date, amount: "100.00", type: "refund", method: "check"}) { id } }`, { loan: made.id, date: addDays(today, -94) });
    await graph(account, `mutation ($id: uuid!, $date: date!) { update_payments(where: {id: {_eq: $id}}, _set: {date_reversed: $date, reversal_reason: "error"}) { affected_rows } }`, { id: payoff, date: addDays(today, -93) });
    await createAdmin(s.db, account.accountId, { email: 'refunds@example.test', password: PASSWORD, name: 'Rae Funds' });
    const clerk = new DashboardClient(s.url);
    assert.equal((await clerk.logIn('refunds@example.test', PASSWORD)).status, 303);
    const page = await clerk.get(QUEUE);
    assert.equal(page.status, 200);
    assert.deepEqual(queueRows(page.text).map((entry) => [entry.id, entry.cells[2], entry.cells[7]]), [[made.id, '100', 'never']]);
    const line = (await clerk.get(`${QUEUE}.csv`)).text.trimEnd().split('\r\n').at(-1)!.split(',');
    assert.deepEqual([line[0], line[1], line[7], line[8]], [made.id, 'Refunded then reversed', '', ''], 'no last payment in the download either');
  });
});
