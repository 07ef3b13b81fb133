import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { createApiKey } from '../../app/apiKeys.js';
import { updateAccount } from '../../app/accounts.js';
import { restClient, type RestClient } from '../support/restClient.js';
import { startKeyedService, type KeyedService } from '../support/seededService.js';
import { installTestClock, setTestClock } from '../support/testClock.js';
import { pdfPages } from '../support/pdfText.js';

/**
 * Issue 32: investor statements and the remittance run over HTTP, on distribution lines the
 * ledger's replay writes (SPEC §12 R10) for a loan made over REST, funding sources and payments
 * posted and reversed through GraphQL. The statement's totals are the sum of the person's lines
 * read through GraphQL; the PDF's text (pdfjs-dist) carries the account's name and the totals;
 * the CSVs' Total lines equal the JSON; an investor key reads only its own statement and no
 * remittance; marking a period is recorded once, and a later adjustment lands in the next run.
 */
let s: KeyedService;
let loan: string;
let ann: string;
let ben: string;
let firstPayment: string;
let investorRest: RestClient;
let investorKey: string;
const ACCOUNT_NAME = 'Harbor Private Lending';

async function graph(query: string, variables: Record<string, unknown> = {}, key = s.key): Promise<any> {
  const response = await fetch(`${s.url}/api/graph`, {
    method: 'POST',
    headers: { authorization: `Token ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { data?: any; errors?: unknown };
  assert.equal(body.errors, undefined, JSON.stringify(body.errors));
  return body.data;
}

async function person(name: string): Promise<string> {
  return (await graph(`mutation ($name: String!) { insert_people_one(object: {name: $name, entity_type: "individual"}) { id } }`, { name })).insert_people_one.id;
}

async function fund(personId: string, amount: string, rate: string): Promise<void> {
  await graph(
    `mutation ($p: uuid!, $l: uuid!, $a: numeric!, $r: numeric!) {
       insert_funding_sources_one(object: {person_id: $p, loan_id: $l, original_amount: $a, rate: $r, date_funded: "2026-01-15", class: "A"}) { id } }`,
    { p: personId, l: loan, a: amount, r: rate },
  );
}

async function pay(date: string, amount: string): Promise<string> {
  return (await graph(`mutation ($l: uuid!, $d: date!, $a: numeric!) { insert_payments_one(object: {loan_id: $l, date: $d, amount: $a, type: "regular", method: "ach"}) { id } }`, { l: loan, d: date, a: amount }))
    .insert_payments_one.id;
}

/** Exact cents of a decimal text or number as sent. */
function cents(value: unknown): bigint {
  const match = /^(-?)(\d+)(?:\.(\d{1,2}))?$/.exec(String(value));
  assert.ok(match, `a decimal: ${String(value)}`);
  const whole = BigInt(match[2]!) * 100n + BigInt((match[3] ?? '0').padEnd(2, '0'));
  return match[1] ? -whole : whole;
}

/** The person's distribution lines of a period through GraphQL, summed per component (originals) and adjustments. */
async function linesOf(personId: string, from: string, to: string): Promise<Record<'principal' | 'interest' | 'fees' | 'adjustments' | 'total' | 'principalAll', bigint> & { count: number }> {
  const data = await graph(
    `query ($p: uuid!, $f: date!, $t: date!) { distributions(where: {person_id: {_eq: $p}, date: {_gte: $f, _lte: $t}}) { component amount adjustment } }`,
    { p: personId, f: from, t: to },
  );
  const sums = { principal: 0n, interest: 0n, fees: 0n, adjustments: 0n, total: 0n, principalAll: 0n, count: 0 };
  for (const line of data.distributions as { component: 'principal' | 'interest' | 'fees'; amount: number; adjustment: boolean }[]) {
    const amount = cents(line.amount);
    if (line.adjustment) sums.adjustments += amount;
    else sums[line.component] += amount;
    sums.total += amount;
    if (line.component === 'principal') sums.principalAll += amount;
    sums.count += 1;
  }
  return sums;
}

/** The last line of a CSV document, split (no field of these lines is quoted). */
function totalLine(csv: string): string[] {
  const lines = csv.replace(/^\uFEFF/, '').trimEnd().split('\r\n');
  const last = lines[lines.length - 1]!.split(',');
  assert.equal(last[1], 'Total');
  return last;
}

async function pdfText(bytes: Uint8Array): Promise<{ pages: number; text: string }> {
  const pages = await pdfPages(bytes);
  return { pages: pages.length, text: pages.map((page) => page.raw).join('\n') };
}

before(async () => {
  s = await startKeyedService();
  await installTestClock(s.db);
  await setTestClock(s.db, '2026-03-31');
  await updateAccount(s.db, s.account.slug, { name: ACCOUNT_NAME });
  const created = await s.rest.post('/api/loan', { Name: 'Elm St bridge', Amount: 100000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' });
  assert.equal(created.status, 201, created.text);
  loan = created.json.loan.id;
  ann = await person('Ann Investor');
  ben = await person('Ben Investor');
  // SPEC §12 R10's example: A 60,000 at 10 %, B 30,000 at 9 % of the reference loan.
  await fund(ann, '60000', '10');
  await fund(ben, '30000', '9');
  firstPayment = await pay('2026-02-15', '8884.88');
  await pay('2026-03-15', '8884.88');
  investorKey = (await createApiKey(s.db, s.accountId, 'ann portal', { role: 'investor', variables: new Map([['person_id', ann]]) })).key;
  investorRest = await restClient(s.url, investorKey);
});
after(async () => {
  await setTestClock(s.db, null).catch(() => undefined);
  await s?.close();
});

describe('Investor statements (issue 32)', () => {
  it("February: R10's example to the cent — opening 60,000.00, principal 4,730.93, interest 500.00, closing 55,269.07", async () => {
    const answer = await s.rest.get(`/api/investors/${ann}/statement?from=2026-02-01&to=2026-02-28`);
    assert.equal(answer.status, 200, answer.text);
    const statement = answer.exact;
    assert.equal(statement.account_name, ACCOUNT_NAME);
    assert.equal(statement.loans.length, 1);
    const row = statement.loans[0];
    assert.deepEqual(
      [row.loan_name, row.opening_principal.text, row.funded.text, row.principal.text, row.interest.text, row.fees.text, row.adjustments.text, row.total.text, row.closing_principal.text],
      ['Elm St bridge', '60000.00', '0.00', '4730.93', '500.00', '0.00', '0.00', '5230.93', '55269.07'],
    );
    const ben2 = (await s.rest.get(`/api/investors/${ben}/statement?from=2026-02-01&to=2026-02-28`)).exact.totals;
    assert.deepEqual([ben2.principal.text, ben2.interest.text], ['2365.46', '225.00']);
  });

  it("an investor's statement totals equal the sum of its distribution lines (GraphQL), and closing = original − Σ principal lines", async () => {
    for (const [who, from, to] of [[ann, '2026-01-01', '2026-03-31'], [ben, '2026-03-01', '2026-03-31'], [ann, '2026-03-10', '2026-03-20']] as const) {
      const totals = (await s.rest.get(`/api/investors/${who}/statement?from=${from}&to=${to}`)).exact.totals;
      const lines = await linesOf(who, from, to);
      assert.ok(lines.count > 0, 'the replay wrote lines');
      for (const key of ['principal', 'interest', 'fees', 'adjustments', 'total'] as const) assert.equal(cents(totals[key].text), lines[key], `${key} ${from}..${to}`);
      const before = await linesOf(who, '1900-01-01', to);
      const original = who === ann ? 6000000n : 3000000n;
      assert.equal(cents(totals.closing_principal.text), original - before.principalAll, 'closing principal');
    }
  });

  it('CSV: its Total line is the JSON totals; PDF: one page whose text has the account name, the investor and the totals', async () => {
    const json = (await s.rest.get(`/api/investors/${ann}/statement?from=2026-02-01&to=2026-03-31`)).exact.totals;
    const csv = await s.rest.get(`/api/investors/${ann}/statement?from=2026-02-01&to=2026-03-31&format=csv`);
    assert.match(csv.contentType ?? '', /^text\/csv/);
    assert.deepEqual(totalLine(csv.text).slice(4), ['opening_principal', 'funded', 'principal', 'interest', 'fees', 'adjustments', 'total', 'closing_principal'].map((key) => json[key].text));

    const response = await fetch(`${s.url}/api/investors/${ann}/statement?from=2026-02-01&to=2026-03-31`, { headers: { authorization: `Token ${s.key}`, accept: 'application/pdf' } });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'application/pdf');
    const bytes = new Uint8Array(await response.arrayBuffer());
    assert.equal(Buffer.from(bytes.subarray(0, 5)).toString('latin1'), '%PDF-');
    const { pages, text } = await pdfText(bytes);
    assert.equal(pages, 1);
    assert.ok(text.includes(ACCOUNT_NAME), text);
    assert.ok(text.includes('Ann Investor'), text);
    const money = (value: { text: string }) => {
      const [whole, decimals] = value.text.split('.');
      return `$${whole!.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${decimals}`;
    };
    for (const key of ['principal', 'interest', 'total', 'closing_principal']) assert.ok(text.includes(money(json[key])), `${key} ${money(json[key])} in ${text}`);
  });

  it("PDF: the lender's letterhead (its profile: legal name, address, phone, e-mail) heads the statement; an empty profile prints it as before", async () => {
    const pdf = async (): Promise<string> => {
      const response = await fetch(`${s.url}/api/investors/${ann}/statement?from=2026-02-01&to=2026-02-28&format=pdf`, { headers: { authorization: `Token ${s.key}` } });
      assert.equal(response.status, 200);
      const { pages, text } = await pdfText(new Uint8Array(await response.arrayBuffer()));
      assert.equal(pages, 1);
      return text.replace(/\s+/g, ' ');
    };
    const plain = await pdf();
    assert.ok(plain.startsWith(`${ACCOUNT_NAME} Investor statement Investor: Ann Investor`), plain);
    const profile = { legal_name: 'Harbor Private Lending LLC', address_line1: 'PO Box 42', city: 'Springfield', region: 'IL', postal_code: '62704', phone: '217 555 0199', email: 'investors@harbor.example', payment_instructions: 'Not on a statement' };
    assert.equal((await s.rest.patch('/api/account', profile)).status, 200);
    const headed = await pdf();
    assert.ok(headed.startsWith('Harbor Private Lending LLC PO Box 42 Springfield, IL 62704 Phone 217 555 0199 | investors@harbor.example Investor statement Investor: Ann Investor'), headed);
    assert.match(headed, /Harbor Private Lending LLC - Ann Investor - page 1 of 1/);
    assert.doesNotMatch(headed, /Not on a statement/, "the payment instructions are the payoff letter's");
    assert.equal((await s.rest.patch('/api/account', Object.fromEntries(Object.keys(profile).map((name) => [name, ''])))).status, 200);
    assert.equal(await pdf(), plain, 'the empty profile prints the statement as before');
  });

  it('a bad period is a 400 naming the parameter; an unknown format a 400 naming format; an unknown person a 404', async () => {
    const cases: [string, string][] = [
      [`/api/investors/${ann}/statement?to=2026-02-28`, 'from'],
      [`/api/investors/${ann}/statement?from=2026-02-30&to=2026-03-31`, 'from'],
      [`/api/investors/${ann}/statement?from=2026-03-01&to=2026-02-01`, 'to'],
      [`/api/investors/${ann}/statement?from=2026-03-01&to=2026-03-31&format=xml`, 'format'],
      // A misspelt parameter is named, not ignored (a CSV asked for as `fromat=csv` came as JSON).
      [`/api/investors/${ann}/statement?from=2026-03-01&to=2026-03-31&fromat=csv`, 'fromat'],
      ['/api/remittances?from=2026-02-01&to=2026-02-28&format=csv&person_id=x', 'person_id'],
      ['/api/remittances/00000000-0000-4000-8000-000000000000?from=2026-02-01', 'from'],
    ];
    for (const [path, field] of cases) {
      const answer = await s.rest.get(path);
      assert.equal(answer.status, 400, path);
      assert.ok(field in answer.json.fields, `${path}: ${answer.text}`);
    }
    assert.equal((await s.rest.get(`/api/investors/${ann}/statement?from=2026-03-01&to=2026-03-31&fromat=csv`)).json.error, 'unknown query parameter: fromat');
    assert.equal((await s.rest.get(`/api/investors/00000000-0000-4000-8000-000000000000/statement?from=2026-03-01&to=2026-03-31`)).status, 404);
    assert.equal((await s.rest.get(`/api/investors/not-a-uuid/statement?from=2026-03-01&to=2026-03-31`)).status, 404);
  });
});

describe('Investor isolation (issue 32, Done when 3)', () => {
  it("an investor key reads its own statement; another person's, an unknown id and another account's are the same 404", async () => {
    const own = await investorRest.get(`/api/investors/${ann}/statement?from=2026-02-01&to=2026-02-28`);
    assert.equal(own.status, 200, own.text);
    assert.equal(own.exact.totals.total.text, '5230.93');
    const other = await s.newAccount();
    const otherPerson = (await s.db.query<{ id: string }>(`INSERT INTO people (account_id, name, entity_type) VALUES ($1, 'Elsewhere', 'individual') RETURNING id`, [other.accountId])).rows[0]!.id;
    const answers = [];
    for (const id of [ben, '00000000-0000-4000-8000-000000000000', otherPerson]) {
      for (const format of ['json', 'csv', 'pdf']) {
        const answer = await investorRest.get(`/api/investors/${id}/statement?from=2026-02-01&to=2026-02-28&format=${format}`);
        answers.push(`${answer.status} ${answer.text}`);
      }
    }
    assert.deepEqual(new Set(answers), new Set(['404 {"error":"no such person"}']));
    // And the admin key of the account reads anyone's, but never another account's person.
    assert.equal((await s.rest.get(`/api/investors/${otherPerson}/statement?from=2026-02-01&to=2026-02-28`)).status, 404);
  });

  it('an investor key gets 403 on every remittance route, and writes nothing', async () => {
    const before = (await s.db.query(`SELECT count(*)::int AS n FROM remittances WHERE account_id = $1`, [s.accountId])).rows[0];
    // The key's OpenAPI document leaves these routes out, so they are asked for without the checking client.
    const asInvestor = (path: string, init: RequestInit = {}) => fetch(`${s.url}${path}`, { ...init, headers: { authorization: `Token ${investorKey}`, 'content-type': 'application/json' } });
    const remittance = (await s.db.query<{ id: string }>(`SELECT id FROM remittances WHERE account_id = $1 LIMIT 1`, [s.accountId])).rows[0]?.id ?? '00000000-0000-4000-8000-000000000000';
    for (const response of [
      await asInvestor('/api/remittances?from=2026-02-01&to=2026-02-28'),
      await asInvestor('/api/remittances?from=2026-02-01&to=2026-02-28&format=csv'),
      await asInvestor('/api/remittances', { method: 'POST', body: JSON.stringify({ from: '2026-02-01', to: '2026-02-28' }) }),
      await asInvestor(`/api/remittances/${remittance}`),
      await asInvestor(`/api/remittances/${remittance}?format=csv`),
    ]) {
      const text = await response.text();
      assert.equal(response.status, 403, text);
      assert.equal((JSON.parse(text) as { code: string }).code, 'permission-denied');
    }
    const document = investorRest.document as { paths: Record<string, unknown> };
    assert.deepEqual(Object.keys(document.paths).filter((path) => path.includes('remittances')), [], "the investor key's OpenAPI document has no remittance route");
    assert.ok('/api/investors/{person_id}/statement' in document.paths);
    assert.deepEqual((await s.db.query(`SELECT count(*)::int AS n FROM remittances WHERE account_id = $1`, [s.accountId])).rows[0], before);
  });
});

describe('The remittance run (issue 32)', () => {
  it("February's run: each investor's lines of the month; the CSV's totals equal the JSON's", async () => {
    const run = await s.rest.get('/api/remittances?from=2026-02-01&to=2026-02-28');
    assert.equal(run.status, 200, run.text);
    const byName = new Map<string, any>(run.exact.investors.map((investor: any) => [investor.name, investor]));
    assert.equal(byName.get('Ann Investor').total.text, '5230.93');
    assert.equal(byName.get('Ben Investor').total.text, '2590.46');
    assert.equal(run.exact.totals.total.text, '7821.39');
    const csv = await s.rest.get('/api/remittances?from=2026-02-01&to=2026-02-28&format=csv');
    const total = totalLine(csv.text);
    assert.deepEqual(total.slice(4, 9), ['principal', 'interest', 'fees', 'adjustments', 'total'].map((key) => run.exact.totals[key].text));
    assert.equal(total[9], String(run.json.totals.line_count));
  });

  it('marking: 201 with who and when; the same, an overlapping or an earlier period is a 409; a period not ended or a bad body a 400', async () => {
    const marked = await s.rest.post('/api/remittances', { from: '2026-02-01', to: '2026-02-28' });
    assert.equal(marked.status, 201, marked.text);
    const remittance = marked.exact.remittance;
    assert.equal(remittance.total.text, '7821.39');
    assert.match(remittance.remitted_by, /^key lq_[a-z0-9]{8} \(test key\)$/);
    assert.ok(!marked.text.includes(s.key), 'never the key');
    for (const [body, pattern] of [
      [{ from: '2026-02-01', to: '2026-02-28' }, /was remitted already/],
      [{ from: '2026-02-20', to: '2026-03-10' }, /overlaps the remitted period 2026-02-01 – 2026-02-28/],
      [{ from: '2026-01-01', to: '2026-01-31' }, /a later period, 2026-02-01 – 2026-02-28, was remitted already/],
    ] as const) {
      const answer = await s.rest.post('/api/remittances', body);
      assert.equal(answer.status, 409, answer.text);
      assert.match(answer.json.error, pattern);
    }
    for (const [body, field] of [[{ from: '2026-03-01', to: '2026-04-30' }, 'to'], [{ from: '2026-03-01' }, 'to'], [{ from: '2026-03-01', to: '2026-03-31', by: 'me' }, 'by'], [[1], 'body']] as const) {
      const answer = await s.rest.post('/api/remittances', body);
      assert.equal(answer.status, 400, answer.text);
      assert.ok(field in answer.json.fields, answer.text);
    }
    const again = await s.rest.get(`/api/remittances/${remittance.id}`);
    assert.equal(again.exact.remittance.total.text, '7821.39');
    const run = await s.rest.get('/api/remittances?from=2026-02-01&to=2026-02-28');
    assert.equal(run.exact.totals.total.text, '0.00', 'nothing left to pay for February');
    assert.deepEqual(run.json.remitted.map((r: any) => r.id), [remittance.id]);
  });

  it("a reversal after February was remitted: the adjustment lines are paid by the next run; February's remittance is unchanged", async () => {
    const february = (await s.db.query<{ id: string }>(`SELECT id FROM remittances WHERE account_id = $1 AND period_from = '2026-02-01'`, [s.accountId])).rows[0]!.id;
    await setTestClock(s.db, '2026-04-05');
    await graph(`mutation ($id: uuid!) { update_payments_by_pk(pk_columns: {id: $id}, _set: {date_reversed: "2026-04-05", reversal_reason: "error"}) { id } }`, { id: firstPayment });
    await setTestClock(s.db, '2026-05-01');
    const adjustments = await linesOf(ann, '2026-03-01', '2026-04-30');
    assert.ok(adjustments.adjustments !== 0n, 'the reversal wrote adjustment lines');
    const run = await s.rest.get('/api/remittances?from=2026-03-01&to=2026-04-30');
    const annRun = run.exact.investors.find((investor: any) => investor.person_id === ann);
    assert.equal(cents(annRun.adjustments.text), adjustments.adjustments);
    assert.equal(cents(annRun.total.text), adjustments.total);
    const recorded = await s.rest.get(`/api/remittances/${february}`);
    assert.equal(recorded.exact.remittance.total.text, '7821.39');
    const csv = await s.rest.get(`/api/remittances/${february}?format=csv`);
    assert.equal(totalLine(csv.text)[8], '7821.39');
  });

  it('two marks of one period at once: one is recorded (201), the other is a 409; every line stamped once', async () => {
    const body = JSON.stringify({ from: '2026-03-01', to: '2026-04-30' });
    const post = () => fetch(`${s.url}/api/remittances`, { method: 'POST', headers: { authorization: `Token ${s.key}`, 'content-type': 'application/json' }, body });
    const answers = await Promise.all([post(), post()]);
    assert.deepEqual(answers.map((answer) => answer.status).sort(), [201, 409]);
    const { rows } = await s.db.query<{ remittances: number; stamped: number; recorded: number }>(
      `SELECT (SELECT count(*)::int FROM remittances WHERE account_id = $1 AND period_from = '2026-03-01') AS remittances,
              (SELECT count(*)::int FROM distributions d JOIN remittances r ON r.account_id = d.account_id AND r.id = d.remittance_id WHERE r.account_id = $1 AND r.period_from = '2026-03-01') AS stamped,
              (SELECT sum(line_count)::int FROM remittances WHERE account_id = $1 AND period_from = '2026-03-01') AS recorded`,
      [s.accountId],
    );
    assert.equal(rows[0]!.remittances, 1);
    assert.equal(rows[0]!.stamped, rows[0]!.recorded);
    assert.equal((await s.rest.get('/api/remittances?from=2026-03-01&to=2026-04-30')).exact.totals.line_count.text, '0');
  });

  it('a payment dated back into a remitted period: its lines are dated its day (docs/investors.md), and the next run pays them once, saying how early', async () => {
    const marked = (await s.db.query<{ id: string; total: string }>(`SELECT id, total::text FROM remittances WHERE account_id = $1 AND period_from = '2026-03-01'`, [s.accountId])).rows[0]!;
    await setTestClock(s.db, '2026-06-01');
    await pay('2026-04-20', '8884.88');
    const late = await linesOf(ann, '2026-04-20', '2026-04-20');
    assert.ok(late.count > 0 && late.total > 0n, 'the payment\'s lines are dated 2026-04-20');
    const run = await s.rest.get('/api/remittances?from=2026-05-01&to=2026-05-31');
    assert.equal(run.status, 200, run.text);
    const annRun = run.exact.investors.find((investor: any) => investor.person_id === ann);
    assert.equal(annRun.earliest_date, '2026-04-20', 'the run says it pays a line of an earlier period');
    assert.equal(cents(annRun.total.text), late.total);
    // The remittance already recorded for March–April is what was paid, unchanged.
    const recorded = await s.rest.get(`/api/remittances/${marked.id}`);
    assert.equal(recorded.exact.remittance.total.text, marked.total);
  });
});
