import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { splitComponent, type FundingSource } from '../../domain/ledger/index.js';
import { startKeyedService, type KeyedService } from '../support/seededService.js';
import { cents, graphData } from '../support/graphData.js';
import { installTestClock, setTestClock } from '../support/testClock.js';

/**
 * Issue 32, the paths the R10 example does not walk: what happens to the lines when a loan's
 * terms or its funding change after payments were split.
 *   - a loan's amount may not fall below what its sources funded (400 naming `amount`, nothing changed);
 *   - a product's `investor_fee_share` changed: the fee lines are split again, as adjustments;
 *   - a funding source deleted: its lines are taken back by adjustments and go to the lender.
 * After each change, per payment, party and component, the lines sum to the domain model's split
 * (domain/ledger/distribute.ts) of the allocation as stored, and no line written before is edited.
 */
let s: KeyedService;

before(async () => {
  s = await startKeyedService();
  await installTestClock(s.db);
  await setTestClock(s.db, '2026-04-30');
});
after(() => s?.close());

const graph = (query: string, variables: Record<string, unknown> = {}): Promise<any> => graphData(s.url, s.key, query, variables);

interface Line {
  id: string;
  payment_id: string;
  funding_source_id: string | null;
  component: string;
  amount: string;
  adjustment: boolean;
  date: string;
}

async function lines(loan: string): Promise<Line[]> {
  const { rows } = await s.db.query<Line>(
    `SELECT id, payment_id, funding_source_id, component, amount::text AS amount, adjustment, date::text AS date FROM distributions WHERE account_id = $1 AND loan_id = $2`,
    [s.accountId, loan],
  );
  return rows;
}

/** A loan of 100,000 at 12 % (SPEC §7's reference), a product with the given fee share, a late fee of 75.55 and fees paid first, two investors. */
async function fundedLoan(name: string, feeShare: string): Promise<{ loan: string; product: string; sources: FundingSource[] }> {
  const { rows } = await s.db.query<{ id: string }>(`INSERT INTO products (account_id, name, investor_fee_share, late_fee_grace_days, late_fee_percent, late_fee_fixed, allocation_order) VALUES ($1, $2, $3, 10, NULL, 75.55, 'fees_interest_principal') RETURNING id`, [s.accountId, `Product ${name}`, feeShare]);
  const product = rows[0]!.id;
  const created = await s.rest.post('/api/loan', { Name: name, Amount: 100000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' });
  assert.equal(created.status, 201, created.text);
  const loan = created.json.loan.id as string;
  // the product is an admin's setting (not a field of the loan's API): set in the database
  await s.db.query(`UPDATE loans SET product_id = $3 WHERE account_id = $1 AND id = $2`, [s.accountId, loan, product]);
  const sources: FundingSource[] = [];
  for (const [investor, amount, rate] of [['A', '60000.00', '10'], ['B', '30000.00', '9']] as const) {
    const person = (await graph(`mutation ($n: String!) { insert_people_one(object: {name: $n}) { id } }`, { n: `${name} investor ${investor}` })).insert_people_one.id;
    const id = (
      await graph(
        `mutation ($loan: uuid!, $person: uuid!, $amount: numeric!, $rate: numeric!) {
           insert_funding_sources_one(object: {loan_id: $loan, person_id: $person, original_amount: $amount, rate: $rate, date_funded: "2026-01-15"}) { id }
         }`,
        { loan, person, amount, rate },
      )
    ).insert_funding_sources_one.id as string;
    sources.push({ id, originalAmount: amount, rate, dateFunded: '2026-01-15' });
  }
  // nothing paid until 2026-03-20: row 1 (due 02-15) is late and charged its fee; this payment pays it
  await graph(`mutation ($loan: uuid!) { insert_payments_one(object: {loan_id: $loan, date: "2026-03-20", amount: 12000, method: "ach"}) { id } }`, { loan });
  await graph(`mutation ($loan: uuid!) { insert_payments_one(object: {loan_id: $loan, date: "2026-04-15", amount: 8884.88, method: "ach"}) { id } }`, { loan });
  return { loan, product, sources };
}

/** Per payment, party and component, the lines sum to the model's split of the stored allocation. */
async function assertSplit(loan: string, sources: readonly FundingSource[], feeShare: string): Promise<void> {
  const { rows: totals } = await s.db.query<{ payment_id: string; date: string; component: 'principal' | 'interest' | 'fee'; amount: string }>(
    `SELECT a.payment_id, p.date::text AS date, a.component, sum(a.amount)::text AS amount
       FROM payment_allocations a JOIN payments p ON p.account_id = a.account_id AND p.id = a.payment_id
      WHERE a.account_id = $1 AND a.loan_id = $2 AND a.component IN ('principal', 'interest', 'fee')
      GROUP BY 1, 2, 3`,
    [s.accountId, loan],
  );
  assert.ok(totals.some((t) => t.component === 'fee' && cents(t.amount) > 0n), 'a payment paid a fee');
  const written = await lines(loan);
  const terms = { loan: { amount: '100000.00', rate: '12' }, sources, investorFeeShare: feeShare };
  for (const total of totals) {
    const component = total.component === 'fee' ? 'fees' : total.component;
    for (const part of splitComponent(cents(total.amount), total.component, total.date, terms)) {
      const sum = written
        .filter((l) => l.payment_id === total.payment_id && l.component === component && l.funding_source_id === part.fundingSourceId)
        .reduce((acc, l) => acc + cents(l.amount), 0n);
      assert.equal(sum, part.amount, `payment ${total.date} ${component} ${part.fundingSourceId ?? 'lender'}`);
    }
  }
}

function assertUnchanged(before: readonly Line[], after: readonly Line[]): void {
  const now = new Map(after.map((l) => [l.id, l]));
  for (const line of before) assert.deepEqual(now.get(line.id), line, `line ${line.id} kept as written`);
}

describe('Distribution lines when a loan or its funding changes (issue 32)', () => {
  it('refuses a loan amount below its funding sources with a 400 naming amount, and changes nothing', async () => {
    const { loan, sources } = await fundedLoan('Lowered', '0.2500');
    const before = await lines(loan);
    const refused = await s.rest.patch(`/api/loan/${loan}`, { Amount: 80000 });
    assert.equal(refused.status, 400, refused.text);
    assert.match(refused.text, /amount/i);
    const read = await s.rest.get(`/api/loan/${loan}`);
    assert.equal(String(read.json.loan.amount), '100000');
    assert.deepEqual(await lines(loan), before);
    await assertSplit(loan, sources, '0.2500');
    // exactly what the sources funded is allowed
    const lowered = await s.rest.patch(`/api/loan/${loan}`, { Amount: 90000 });
    assert.equal(lowered.status, 200, lowered.text);
  });

  it('refuses a source of a negative amount, or at a negative rate, naming the field (a negative amount let the others fund past the loan)', async () => {
    const { loan, sources } = await fundedLoan('Negative', '0.2500');
    const before = await lines(loan);
    const person = (await graph(`mutation { insert_people_one(object: {name: "Negative investor"}) { id } }`)).insert_people_one.id;
    for (const [amount, rate, field] of [['-5.00', '9', 'original_amount'], ['-0.01', '9', 'original_amount'], ['5.00', '-9', 'rate']] as const) {
      const answer = await graphData(s.url, s.key, `mutation ($loan: uuid!, $person: uuid!, $amount: numeric!, $rate: numeric!) {
           insert_funding_sources_one(object: {loan_id: $loan, person_id: $person, original_amount: $amount, rate: $rate, date_funded: "2026-01-15"}) { id }
         }`, { loan, person, amount, rate }).then(() => null, (error: unknown) => String(error));
      assert.ok(answer !== null, `${amount} at ${rate} % was accepted`);
      assert.match(answer, /check-violation/, answer);
      assert.match(answer, new RegExp(`insert_funding_sources_one: ${field}: `), answer);
    }
    assert.equal(Number((await s.db.query<{ n: string }>('SELECT count(*) AS n FROM funding_sources WHERE account_id = $1 AND loan_id = $2', [s.accountId, loan])).rows[0]!.n), 2);
    assert.deepEqual(await lines(loan), before);
    await assertSplit(loan, sources, '0.2500');
  });

  it("splits the fees again by adjustment lines when the product's investor_fee_share changes", async () => {
    const { loan, product, sources } = await fundedLoan('Fee share', '0.2500');
    await assertSplit(loan, sources, '0.2500');
    const before = await lines(loan);
    await s.db.query(`UPDATE products SET investor_fee_share = 0.5 WHERE account_id = $1 AND id = $2`, [s.accountId, product]);
    const after = await lines(loan);
    assertUnchanged(before, after);
    const added = after.filter((l) => !before.some((b) => b.id === l.id));
    assert.ok(added.length > 0 && added.every((l) => l.adjustment && l.component === 'fees'), JSON.stringify(added));
    assert.equal(added.reduce((acc, l) => acc + cents(l.amount), 0n), 0n, 'the adjustments move money between parties only');
    await assertSplit(loan, sources, '0.5000');
  });

  it("takes a deleted source's lines back by adjustments, to the lender", async () => {
    const { loan, sources } = await fundedLoan('Deleted source', '0.2500');
    const before = await lines(loan);
    const gone = sources[1]!;
    await graph(`mutation ($id: uuid!) { delete_funding_sources_by_pk(id: $id) { id } }`, { id: gone.id });
    const after = await lines(loan);
    assertUnchanged(before, after);
    const ofGone = after.filter((l) => l.funding_source_id === gone.id);
    assert.ok(ofGone.some((l) => !l.adjustment) && ofGone.some((l) => l.adjustment));
    assert.equal(ofGone.reduce((acc, l) => acc + cents(l.amount), 0n), 0n, 'the deleted source nets to 0.00');
    await assertSplit(loan, [sources[0]!], '0.2500');
  });
});
