import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { graphBody } from '../support/graphData.js';
import { startKeyedService, type KeyedService } from '../support/seededService.js';
import { ledgerJson, payoffQuoteJson } from '../../app/ledgerReads.js';

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
