import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { dataOf, send, startSeededService, type SeededService } from '../support/seededService.js';
import { testDatabaseKind } from '../support/testDatabase.js';

/**
 * Issue 19, done-when 3: a query filtering `loans.custom_fields` with `_contains` uses the GIN
 * index of migration 0009 (`loans_custom_fields_gin`) at scale 1, on PGlite and on PostgreSQL
 * — shown by `POST /api/graph/explain` (PostgreSQL's EXPLAIN of the request's one statement)
 * after ANALYZE.
 *
 * The value is a selective one on purpose: the seed gives 6 % of loans a loan officer (one of
 * eight) and 30 % of those a broker (one of four), so `{broker: "Summit Loan Partners"}` is
 * about 0.5 % of the account's loans. For a value most rows contain (`{}` is contained in every
 * loan) a sequential scan is the right plan and PostgreSQL rightly chooses it; the test does
 * not ask the planner to be wrong. (The same holds for `_has_key: "broker"`, about 2 % of loans:
 * PGlite's planner estimates it above the point where the index pays, and scans.)
 */
let s: SeededService;

before(async () => {
  s = await startSeededService({ scale: 1, cached: true });
  await s.sql('ANALYZE loans');
});

after(async () => {
  await s?.close();
});

interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Index Name'?: string;
  readonly Plans?: readonly PlanNode[];
}

/** Every node of a plan tree, depth first. */
function nodesOf(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(nodesOf)];
}

async function explain(query: string): Promise<{ sql: string; nodes: PlanNode[] }> {
  const answer = await send(`${s.url}/api/graph/explain`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Token ${s.apiKey}` },
    body: JSON.stringify({ query }),
  });
  assert.equal(answer.status, 200, answer.text);
  const body = answer.body as { sql: string; plan: { Plan: PlanNode }[] };
  return { sql: body.sql, nodes: nodesOf(body.plan[0]!.Plan) };
}

describe(`the GIN index on loans.custom_fields (${testDatabaseKind}, scale 1)`, () => {
  it('the account has the loans of scale 1, and the chosen value is selective', async (t) => {
    const [counts] = await s.sql<{ loans: string; broker: string }>(
      `SELECT count(*) AS loans, count(*) FILTER (WHERE custom_fields @> '{"broker": "Summit Loan Partners"}') AS broker FROM loans WHERE account_id = $1`,
      [s.account.id],
    );
    const loans = Number(counts!.loans);
    const broker = Number(counts!.broker);
    t.diagnostic(`${broker} of ${loans} loans have the broker`);
    assert.ok(loans >= 5000, `${loans} loans`);
    assert.ok(broker > 0 && broker / loans < 0.02, `${broker} of ${loans} loans have that broker`);
  });

  it('_contains on custom_fields is answered through loans_custom_fields_gin', async (t) => {
    const query = '{ loans(where: {custom_fields: {_contains: {broker: "Summit Loan Partners"}}}) { id name custom_fields } }';
    const { sql, nodes } = await explain(query);
    assert.match(sql, /"custom_fields" @> \$\d+::jsonb/);
    const indexNodes = nodes.filter((node) => node['Index Name'] === 'loans_custom_fields_gin');
    t.diagnostic(`plan nodes: ${nodes.map((node) => `${node['Node Type']}${node['Index Name'] ? ` on ${node['Index Name']}` : ''}`).join(' > ')}`);
    assert.ok(indexNodes.length > 0, `no node uses the GIN index: ${nodes.map((node) => node['Node Type']).join(', ')}`);
    assert.ok(!nodes.some((node) => node['Node Type'] === 'Seq Scan'), 'no sequential scan of loans');
    // And the answer is the right one.
    const data = dataOf<{ loans: { custom_fields: { broker?: string } }[] }>(await s.graph(query));
    const [expected] = await s.sql<{ n: string }>(`SELECT count(*) AS n FROM loans WHERE account_id = $1 AND custom_fields->>'broker' = 'Summit Loan Partners'`, [s.account.id]);
    assert.equal(data.loans.length, Number(expected!.n));
    assert.ok(data.loans.every((loan) => loan.custom_fields.broker === 'Summit Loan Partners'));
  });
});
