import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { graphBody } from '../support/graphData.js';
import { startKeyedService, type KeyedService } from '../support/seededService.js';
import { installTestClock, setTestClock } from '../support/testClock.js';

/**
 * The calendar as a lender's developer and a clerk meet it (SPEC §7, §12): a loan's dates, the
 * days its payments and ledger take, and timestamps in filters. What the ledger's own edges
 * (ledgerEdges.test.ts) and the payment's date rules (ledgerExamples.test.ts) do not reach.
 */
let s: KeyedService;

before(async () => {
  s = await startKeyedService();
  await s.db.query(`INSERT INTO products (account_id, name, is_default) VALUES ($1, 'Default', true) ON CONFLICT DO NOTHING`, [s.accountId]);
  await installTestClock(s.db);
});
after(() => s?.close());

const graph = (query: string, variables: Record<string, unknown> = {}): Promise<any> => graphBody(s.url, s.key, query, variables);
const TERMS = { Name: 'Calendar loan', Status: 'servicing', Amount: 12000, Rate: 12, Term: 12, Frequency: 'monthly' };

/** Every row the account has that a loan write touches (loans, schedules, fees), as one text. */
async function footprint(): Promise<string> {
  const { rows } = await s.db.query(
    `SELECT (SELECT json_agg(l ORDER BY l.id) FROM loans l WHERE l.account_id = $1)::text AS loans,
            (SELECT count(*) FROM schedules WHERE account_id = $1)::int AS rows, (SELECT count(*) FROM fees WHERE account_id = $1)::int AS fees`,
    [s.accountId],
  );
  return JSON.stringify(rows[0]);
}

describe("A loan's dates are days its payments and ledger take (the years 1900–2999)", () => {
  it('a Date_Funded, First_Payment_Date or Date_Maturity outside them (a slip of the year) is a 400 naming the field; nothing is written', async () => {
    const before = await footprint();
    const cases: [Record<string, unknown>, string, string][] = [
      // "0026" for "2026": the loan was taken, every row long late, 12 late fees dated in the year 27
      [{ Date_Funded: '0026-01-15' }, 'Date_Funded', '0026-01-15'],
      [{ Date_Funded: '1899-12-31' }, 'Date_Funded', '1899-12-31'],
      [{ Date_Funded: '3026-01-15' }, 'Date_Funded', '3026-01-15'],
      [{ Date_Funded: '2026-01-15', First_Payment_Date: '3026-02-15' }, 'First_Payment_Date', '3026-02-15'],
      [{ Date_Funded: '0001-01-01', First_Payment_Date: '2026-02-15' }, 'Date_Funded', '0001-01-01'],
      // no schedule (no Term): a given maturity alone
      [{ Name: 'No terms', Date_Maturity: '0027-01-15' }, 'Date_Maturity', '0027-01-15'],
    ];
    for (const [dates, field, day] of cases) {
      const body = 'Name' in dates ? dates : { ...TERMS, ...dates };
      const answer = await s.rest.post('/api/loan', body);
      assert.equal(answer.status, 400, `${JSON.stringify(dates)}: ${answer.text}`);
      assert.deepEqual(Object.keys(answer.json.fields), [field], answer.text);
      assert.equal(answer.json.fields[field], `${day} is not in the years 1900–2999, the days a loan's payments and ledger take`);
    }
    assert.equal(await footprint(), before);
  });

  it('a schedule whose rows run past 2999-12-31 is a 400 naming its inputs; one ending on 2999-12-31 is taken', async () => {
    const before = await footprint();
    const late = await s.rest.post('/api/loan', { ...TERMS, Date_Funded: '2999-01-31' });
    assert.equal(late.status, 400, late.text);
    assert.deepEqual(Object.keys(late.json.fields).sort(), ['Date_Funded', 'Frequency', 'Term']);
    assert.match(late.json.error, /its last due date 3000-01-31 is after 2999-12-31/);
    assert.equal(await footprint(), before);

    // Funded 2998-12-31: row 12 falls on 2999-12-31, the last day a payment takes, and pays it.
    const last = await s.rest.post('/api/loan', { ...TERMS, Date_Funded: '2998-12-31' });
    assert.equal(last.status, 201, last.text);
    assert.equal(last.json.loan.date_maturity, '2999-12-31');
    // A payment is dated at most a year after the business date (migration 0065): paid in 2999.
    await setTestClock(s.db, '2999-06-30');
    try {
      const paid = await graph(`mutation ($loan: uuid!) { insert_payments_one(object: {loan_id: $loan, date: "2999-12-31", amount: "20000.00"}) { id } }`, { loan: last.json.loan.id });
      assert.equal(paid.errors, undefined, JSON.stringify(paid));
    } finally {
      await setTestClock(s.db, null);
    }
  });

  it("a PATCH moving a loan's dates out of them is refused and changes nothing; a legacy loan dated outside them can still be renamed", async () => {
    const created = await s.rest.post('/api/loan', { ...TERMS, Date_Funded: '2026-01-31' });
    assert.equal(created.status, 201, created.text);
    const id = created.json.loan.id as string;
    const before = await footprint();
    const moved = await s.rest.patch(`/api/loan/${id}`, { Date_Funded: '0026-01-31' });
    assert.equal(moved.status, 400, moved.text);
    assert.deepEqual(Object.keys(moved.json.fields), ['Date_Funded']);
    const longer = await s.rest.patch(`/api/loan/${id}`, { Term: 1200, Frequency: 'annually' });
    assert.equal(longer.status, 400, longer.text);
    assert.match(longer.json.fields.Term, /its last due date 3226-01-31 is after 2999-12-31/);
    assert.equal(await footprint(), before);

    // A loan written before the rule (straight into the table) keeps its dates and takes a new name.
    await s.db.query(`UPDATE loans SET first_payment_date = '1899-02-28' WHERE account_id = $1 AND id = $2`, [s.accountId, id]);
    const renamed = await s.rest.patch(`/api/loan/${id}`, { Name: 'Renamed' });
    assert.equal(renamed.status, 200, renamed.text);
    assert.equal(renamed.json.loan.name, 'Renamed');
  });
});

describe('Timestamps in a filter', () => {
  it('an impossible day ("2026-02-30T00:00:00Z") is validation-failed naming the variable or the literal, not the database\'s data-exception', async () => {
    const variable = await graph(`query ($t: timestamptz!) { loans(where: {created_at: {_gt: $t}}) { id } }`, { t: '2026-02-30T00:00:00Z' });
    assert.equal(variable.errors?.[0]?.extensions?.code, 'validation-failed', JSON.stringify(variable));
    assert.match(variable.errors[0].message, /^Variable "\$t" got invalid value "2026-02-30T00:00:00Z"/);
    for (const literal of ['2026-02-30', '2027-02-29T12:00:00-05:00', '0000-01-01T00:00:00Z']) {
      const answer = await graph(`{ loans(where: {created_at: {_gt: "${literal}"}}) { id } }`);
      assert.equal(answer.errors?.[0]?.extensions?.code, 'validation-failed', `${literal}: ${JSON.stringify(answer)}`);
      assert.ok(answer.errors[0].locations, JSON.stringify(answer));
    }
    // 2028-02-29 is a day
    const leap = await graph(`{ loans(where: {created_at: {_gt: "2028-02-29T00:00:00Z"}}) { id } }`);
    assert.deepEqual(leap, { data: { loans: [] } });
  });

  it('an offset is the instant it names, across a DST change: 02:30-05:00 on 2026-03-08 (a New York hour that does not exist) is 07:30 UTC', async () => {
    const created = await s.rest.post('/api/loan', { Name: 'Made in the gap' });
    assert.equal(created.status, 201, created.text);
    const id = created.json.loan.id as string;
    await s.db.query(`UPDATE loans SET created_at = '2026-03-08 07:30:00+00' WHERE account_id = $1 AND id = $2`, [s.accountId, id]);
    const at = async (operator: string, instant: string): Promise<boolean> => {
      const answer = await graph(`query ($t: timestamptz!, $id: uuid!) { loans(where: {id: {_eq: $id}, created_at: {${operator}: $t}}) { id } }`, { t: instant, id });
      assert.equal(answer.errors, undefined, JSON.stringify(answer));
      return answer.data.loans.length === 1;
    };
    assert.equal(await at('_eq', '2026-03-08T02:30:00-05:00'), true);
    assert.equal(await at('_eq', '2026-03-08T03:30:00-04:00'), true);
    assert.equal(await at('_gt', '2026-03-08T02:29:59-05:00'), true);
    assert.equal(await at('_gt', '2026-03-08T02:30:00-05:00'), false);
  });
});
