import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { graphBody } from '../support/graphData.js';
import { startKeyedService, type KeyedService } from '../support/seededService.js';
import { ledgerJson, payoffQuoteJson } from '../../app/ledgerReads.js';
import { assessFees } from '../../app/feeJob.js';
import { installTestClock, setTestClock } from '../support/testClock.js';

/**
 * The servicing ledger at its edges (SPEC §12, docs/ledger.md), as a servicing clerk and an
 * auditor meet them over REST and GraphQL: what the worked examples of ledgerExamples.test.ts do
 * not reach. Each case is worked by hand from docs/ledger.md's rules.
 */
let s: KeyedService;

before(async () => {
  s = await startKeyedService();
  await s.db.query(`INSERT INTO products (account_id, name, is_default) VALUES ($1, 'Default', true) ON CONFLICT DO NOTHING`, [s.accountId]);
});
after(() => s?.close());

const graph = (query: string, variables: Record<string, unknown> = {}): Promise<any> => graphBody(s.url, s.key, query, variables);

async function newLoan(terms: Record<string, unknown>): Promise<string> {
  const created = await s.rest.post('/api/loan', { Name: 'Edge loan', Status: 'servicing', ...terms });
  assert.equal(created.status, 201, created.text);
  return created.json.loan.id as string;
}

/** How many times `loanql_ledger` ran for `read`, in one transaction (`track_functions`). */
async function ledgerCalls(read: (tx: any) => Promise<unknown>): Promise<number> {
  return s.db.transaction(async (tx) => {
    await tx.query(`SET LOCAL track_functions = 'all'`);
    const calls = async (): Promise<number> =>
      (await tx.query<{ n: number }>(`SELECT coalesce(pg_stat_get_xact_function_calls('loanql_ledger(uuid, uuid, date)'::regprocedure), 0)::int AS n`)).rows[0]!.n;
    const before = await calls();
    await read(tx);
    return (await calls()) - before;
  });
}

describe('REST ledger reads', () => {
  it("compute the loan's ledger once per request, not once per figure (a 1,200-row loan's quote took 1.1 s, its ledger 2.6 s)", async () => {
    const loan = await newLoan({ Amount: 1000000, Rate: 6, Term: 1200, Frequency: 'monthly', Date_Funded: '2026-01-15' });
    assert.equal(await ledgerCalls((tx) => payoffQuoteJson(tx, s.accountId, loan, '2126-01-15')), 1);
    assert.equal(await ledgerCalls((tx) => ledgerJson(tx, s.accountId, loan, '2126-01-15')), 1);
    // and the answer over HTTP is the same figures: 100 years on, nothing paid, 1,199 late fees
    const quote = await s.rest.get(`/api/loan/${loan}/payoff?date=2126-01-15`);
    assert.equal(quote.status, 200, quote.text);
    assert.equal(quote.exact.principal_outstanding.text, '1000000.00');
    assert.equal(quote.exact.accrued_interest.text, '0.00');
    assert.equal(quote.exact.per_diem.text, '0.00');
    const ledger = await s.rest.get(`/api/loan/${loan}/ledger?date=2126-01-15`);
    assert.equal(ledger.status, 200, ledger.text);
    assert.equal(ledger.json.fees.length, 1199); // row 1,200, due that day, is not late yet
    assert.equal(ledger.exact.balances.payoff.text, quote.exact.payoff.text);
  });
});

describe('An amount too large to store, over REST (docs/ledger.md: refused as a whole, never a 500)', () => {
  it("a product's late fee, a back-dated new loan or a loan's new date that makes a loan's fees past 999,999,999,999.99 is a 400 naming the fields; nothing is written", async () => {
    const other = await s.newAccount();
    await s.db.query(`INSERT INTO products (account_id, name, is_default) VALUES ($1, 'Default', true) ON CONFLICT DO NOTHING`, [other.accountId]);
    // 900,000,000,000.00 at 0 % over 3 months, funded 2026-01-15: every row long late (the business date is today)
    const terms = { Name: 'Big loan', Status: 'servicing', Amount: 900000000000, Rate: 0, Term: 3, Frequency: 'monthly', Date_Funded: '2026-01-15' };
    const late = await other.rest.post('/api/loan', terms);
    assert.equal(late.status, 201, late.text);
    const stored = async (id: string): Promise<string> =>
      JSON.stringify((await s.db.query(`SELECT fees_due::text, date_funded::text FROM loans WHERE account_id = $1 AND id = $2`, [other.accountId, id])).rows[0]);
    const lateBefore = await stored(late.json.loan.id);
    assert.match(lateBefore, /"fees_due":"45000000000.00"/); // 3 late fees of 5 % of 300,000,000,000.00

    // the product: a fixed fee of 999,999,999,999.99 would make the loan's fees_due 3 × that
    const product = await other.rest.patch('/api/product', { late_fee_percent: null, late_fee_fixed: '999999999999.99' });
    assert.equal(product.status, 400, product.text);
    assert.match(product.json.error, /999,999,999,999\.99/);
    assert.deepEqual(Object.keys(product.json.fields).sort(), ['late_fee_fixed', 'late_fee_percent']);
    const settings = (await other.rest.get('/api/product')).json.product.settings;
    assert.equal(settings.late_fee_percent, 5);
    assert.equal(settings.late_fee_fixed, null);
    assert.equal(await stored(late.json.loan.id), lateBefore);

    // with that fee on a product whose loans are all current, a new back-dated loan, or an existing one moved back, is refused
    const current = await other.rest.post('/api/loan', { ...terms, Date_Funded: '2026-11-15' });
    assert.equal(current.status, 201, current.text);
    await s.db.query(`DELETE FROM loans WHERE account_id = $1 AND id = $2`, [other.accountId, late.json.loan.id]);
    const changed = await other.rest.patch('/api/product', { late_fee_percent: null, late_fee_fixed: '999999999999.99' });
    assert.equal(changed.status, 200, changed.text);
    const total = async (): Promise<number> => (await other.rest.get('/api/loan')).json.total;
    const loans = await total();

    const created = await other.rest.post('/api/loan', terms);
    assert.equal(created.status, 400, created.text);
    assert.match(created.json.error, /too large to store/);
    assert.deepEqual(Object.keys(created.json.fields).sort(), ['Amount', 'Date_Funded', 'Frequency', 'Rate', 'Status', 'Term']);
    assert.equal(await total(), loans);

    const before = await stored(current.json.loan.id);
    const moved = await other.rest.patch(`/api/loan/${current.json.loan.id}`, { Date_Funded: '2026-01-15' });
    assert.equal(moved.status, 400, moved.text);
    assert.deepEqual(Object.keys(moved.json.fields), ['Date_Funded']);
    assert.equal(await stored(current.json.loan.id), before);
  });
});

describe('The daily fee job and an amount too large to store', () => {
  it("a loan whose late fees pass 999,999,999,999.99 with time is left as it was and named; the account's other loans are assessed and the day recorded", async () => {
    const other = await s.newAccount();
    await s.db.query(`INSERT INTO products (account_id, name, is_default) VALUES ($1, 'Default', true) ON CONFLICT DO NOTHING`, [other.accountId]);
    assert.equal((await other.rest.patch('/api/product', { late_fee_percent: null, late_fee_fixed: '999999999999.99' })).status, 200);
    // due 2026-12-15, 2027-01-15, 2027-02-15: by 2027-03-01 three fees of 999,999,999,999.99 (no loan can store that) …
    const huge = await other.rest.post('/api/loan', { Name: 'Huge', Status: 'servicing', Amount: 900000000000, Rate: 0, Term: 3, Frequency: 'monthly', Date_Funded: '2026-11-15' });
    // … and one fee for a one-payment loan, which it can
    const small = await other.rest.post('/api/loan', { Name: 'Small', Status: 'servicing', Amount: 1000, Rate: 0, Term: 1, Frequency: 'monthly', Date_Funded: '2026-11-15' });
    assert.equal(huge.status, 201, huge.text);
    assert.equal(small.status, 201, small.text);
    const stored = async (id: string): Promise<string> =>
      JSON.stringify((await s.db.query(`SELECT fees_due::text, ledger_as_of::text FROM loans WHERE account_id = $1 AND id = $2`, [other.accountId, id])).rows[0]);
    const hugeBefore = await stored(huge.json.loan.id);
    await installTestClock(s.db);
    try {
      await setTestClock(s.db, '2027-03-01');
      const [run] = await assessFees(s.db, { accountSlug: other.account.slug });
      assert.deepEqual(run!.days, ['2027-03-01']);
      assert.deepEqual(run!.loansRefused, [huge.json.loan.id]);
      assert.equal(run!.feesAssessed, 1);
      assert.equal(await stored(small.json.loan.id), JSON.stringify({ fees_due: '999999999999.99', ledger_as_of: '2027-03-01' }));
      assert.equal(await stored(huge.json.loan.id), hugeBefore);
    } finally {
      await setTestClock(s.db, null);
    }
  });
});

describe('A lead with terms (not funded: SPEC §7, §12) owes nothing', () => {
  it('its payoff, accrued interest and per diem are null over GraphQL, and REST refuses its payoff quote and letter naming the status', async () => {
    // Funded on paper a year before the business date, with a schedule: a servicing loan of the same terms owes interest.
    const terms = { Amount: 100000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2025-01-15' };
    const lead = await newLoan({ ...terms, Status: 'lead' });
    const serviced = await newLoan(terms);
    const query = `query($id: uuid!) { loans_by_pk(id: $id) { status payoff(args: {as_of: "2025-06-01"}) accrued_interest(args: {as_of: "2025-06-01"}) per_diem(args: {as_of: "2025-06-01"}) amount_past_due days_past_due } }`;
    const leadRow = (await graph(query, { id: lead })).data.loans_by_pk;
    assert.deepEqual(
      { ...leadRow },
      { status: 'lead', payoff: null, accrued_interest: null, per_diem: null, amount_past_due: 0, days_past_due: 0 },
      'before session 40: payoff 100,000 plus interest, accrued interest and a per diem as if funded',
    );
    const servicedRow = (await graph(query, { id: serviced })).data.loans_by_pk;
    assert.ok(Number(servicedRow.payoff) > 100000 && Number(servicedRow.per_diem) > 0, JSON.stringify(servicedRow));

    for (const path of [`/api/loan/${lead}/payoff`, `/api/loan/${lead}/payoff?date=2025-06-01`, `/api/loan/${lead}/payoff?format=pdf`]) {
      const refused = await s.rest.get(path);
      assert.equal(refused.status, 409, `${path}: ${refused.text}`);
      assert.match(refused.json.fields.Status, /^lead: not funded/, refused.text);
      assert.match(refused.json.error, /is a lead \(status lead\): it is not funded, so nothing is owed and there is no payoff; a payoff quote is for a loan in servicing/);
    }
    assert.equal((await s.rest.get(`/api/loan/${serviced}/payoff?date=2025-06-01`)).status, 200);
  });
});
