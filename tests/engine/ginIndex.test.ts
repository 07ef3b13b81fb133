import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Database } from '../../db/index.js';
import { createDefaultProduct, DEMO_CUSTOM_FIELDS } from '../../app/products.js';
import { planPortfolio } from '../../app/seed/generate.js';
import { createAccountWithKey } from '../support/http.js';
import { dataOf, send, startService, type RunningService } from '../support/seededService.js';
import { openBuiltTestDatabase, testDatabaseKind, type TestDatabase } from '../support/testDatabase.js';

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
/**
 * The loans of the scale-1 portfolio — the seeder's own plan (`planPortfolio`), so the custom
 * fields have the seed's distribution — written as leads, without their people, schedules,
 * payments and ledger: the index and the planner only see `loans`, and the whole seed with its
 * ledger replay took most of `npm test`'s time (issue #28). Built once, kept as a dump.
 */
async function loansOfScaleOne(db: Database): Promise<{ accountId: string; key: string }> {
  const { account, apiKey } = await createAccountWithKey(db, 'gin-scale-1');
  // The demo product declares the keys the plan writes (`loan_officer`, `broker`), as the demo has it.
  await createDefaultProduct(db, account.id, DEMO_CUSTOM_FIELDS);
  const plan = planPortfolio({ accountId: account.id, seed: 1, scale: 1, adminIds: [], productId: null });
  const rows = plan.loans.map(({ row }) => ({ id: row.id, name: row.name, custom_fields: row.custom_fields }));
  for (let from = 0; from < rows.length; from += 2000) {
    await db.query(
      `INSERT INTO loans (account_id, id, name, custom_fields) SELECT $2::uuid, r.id, r.name, r.custom_fields FROM json_populate_recordset(NULL::loans, $1::json) r`,
      [JSON.stringify(rows.slice(from, from + 2000)), account.id],
    );
  }
  return { accountId: account.id, key: apiKey.key };
}

let database: TestDatabase;
let service: RunningService;
let accountId: string;
let apiKey: string;
const queryRows = async <R>(text: string, values: unknown[]): Promise<R[]> => (await database.db.query(text, values)).rows as R[];
const graph = (query: string) =>
  send(`${service.url}/api/graph`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Token ${apiKey}` }, body: JSON.stringify({ query }) });

before(async () => {
  let built: { accountId: string; key: string };
  ({ database, built } = await openBuiltTestDatabase('gin index: the loans of scale 1', ['app/seed', 'app/products.ts', 'tests/engine/ginIndex.test.ts'], loansOfScaleOne));
  ({ accountId, key: apiKey } = built);
  service = await startService(database.db);
  await database.db.query('ANALYZE loans');
});

after(async () => {
  await service?.close();
  await database?.close();
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
  const answer = await send(`${service.url}/api/graph/explain`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Token ${apiKey}` },
    body: JSON.stringify({ query }),
  });
  assert.equal(answer.status, 200, answer.text);
  const body = answer.body as { sql: string; plan: { Plan: PlanNode }[] };
  return { sql: body.sql, nodes: nodesOf(body.plan[0]!.Plan) };
}

describe(`the GIN index on loans.custom_fields (${testDatabaseKind}, scale 1)`, () => {
  it('the account has the loans of scale 1, and the chosen value is selective', async (t) => {
    const [counts] = await queryRows<{ loans: string; broker: string }>(
      `SELECT count(*) AS loans, count(*) FILTER (WHERE custom_fields @> '{"broker": "Summit Loan Partners"}') AS broker FROM loans WHERE account_id = $1`,
      [accountId],
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
    const data = dataOf<{ loans: { custom_fields: { broker?: string } }[] }>(await graph(query));
    const [expected] = await queryRows<{ n: string }>(`SELECT count(*) AS n FROM loans WHERE account_id = $1 AND custom_fields->>'broker' = 'Summit Loan Partners'`, [accountId]);
    assert.equal(data.loans.length, Number(expected!.n));
    assert.ok(data.loans.every((loan) => loan.custom_fields.broker === 'Summit Loan Partners'));
  });
});
