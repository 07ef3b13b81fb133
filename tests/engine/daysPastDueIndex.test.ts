import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createAccountWithKey } from '../support/http.js';
import { dataOf, send, startService, type RunningService } from '../support/seededService.js';
import { openTestDatabase, testDatabaseKind, type TestDatabase } from '../support/testDatabase.js';

/**
 * Issue 31, done-when 3: filtering and ordering loans by `days_past_due` (no `as_of`: the
 * metadata's `stored_form`) is answered through `loans_arrears_since` (migration 0019), shown by
 * `POST /api/graph/explain` after ANALYZE. 20,000 loans, of which 60 have a schedule row falling
 * due in the last 60 weeks — few late loans among many, as a portfolio has them.
 */
let database: TestDatabase;
let service: RunningService;
let accountId: string;
let apiKey: string;

before(async () => {
  database = await openTestDatabase();
  const { account, apiKey: key } = await createAccountWithKey(database.db, 'dpd-index');
  accountId = account.id;
  apiKey = key.key;
  await database.db.query(`SELECT set_config('loanql.capture_events', 'off', false)`);
  await database.db.query(`INSERT INTO loans (account_id, name, status) SELECT $1, 'Loan ' || g, 'servicing' FROM generate_series(1, 20000) g`, [accountId]);
  await database.db.query(
    `INSERT INTO schedules (account_id, loan_id, number, due, payment, principal, interest, balance)
     SELECT $1, l.id, 1, loanql_business_date($1) - 7 * row_number() OVER (ORDER BY l.id)::integer, 100, 90, 10, 0
       FROM (SELECT id FROM loans WHERE account_id = $1 ORDER BY id LIMIT 60) l`,
    [accountId],
  );
  await database.db.query(`SELECT set_config('loanql.capture_events', '', false)`);
  await database.db.query('ANALYZE loans');
  service = await startService(database.db);
});

after(async () => {
  await service?.close();
  await database?.close();
});

interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Index Name'?: string;
  readonly 'Relation Name'?: string;
  readonly Plans?: readonly PlanNode[];
}

const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];
const describePlan = (nodes: PlanNode[]): string => nodes.map((node) => `${node['Node Type']}${node['Index Name'] ? ` on ${node['Index Name']}` : ''}`).join(' > ');

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

const graph = async (query: string) =>
  dataOf<any>(await send(`${service.url}/api/graph`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Token ${apiKey}` }, body: JSON.stringify({ query }) }));

describe(`days_past_due through loans_arrears_since (${testDatabaseKind}, 20,000 loans)`, () => {
  it('where days_past_due >= 30, ordered most days first: an index range of arrears_since, no sequential scan of loans', async (t) => {
    const query = '{ loans(where: {days_past_due: {_gte: 30}}, order_by: {days_past_due: desc}) { id days_past_due } }';
    const { sql, nodes } = await explain(query);
    t.diagnostic(describePlan(nodes));
    assert.match(sql, /"arrears_since" <= \("loanql_business_date"\(\$1\) - \$\d+::integer\)/);
    assert.ok(nodes.some((node) => node['Index Name'] === 'loans_arrears_since'), describePlan(nodes));
    assert.ok(!nodes.some((node) => node['Node Type'] === 'Seq Scan' && node['Relation Name'] === 'loans'), describePlan(nodes));
    const loans = (await graph(query)).loans as { days_past_due: number }[];
    // Rows due 7, 14, …, 420 days ago: those 30 days or more late are the 56 from 35 days on.
    assert.equal(loans.length, 56);
    assert.deepEqual(loans.map((loan) => loan.days_past_due), Array.from({ length: 56 }, (_, i) => 420 - 7 * i));
  });

  it('order_by days_past_due desc with a limit reads the index in order (only ties are sorted, by id: an incremental sort)', async (t) => {
    const query = '{ loans(order_by: {days_past_due: desc}, limit: 5) { id days_past_due } }';
    const { nodes } = await explain(query);
    t.diagnostic(describePlan(nodes));
    assert.ok(nodes.some((node) => node['Index Name'] === 'loans_arrears_since'), describePlan(nodes));
    assert.ok(!nodes.some((node) => node['Node Type'] === 'Seq Scan' && node['Relation Name'] === 'loans'), describePlan(nodes));
    assert.deepEqual(((await graph(query)).loans as { days_past_due: number }[]).map((loan) => loan.days_past_due), [420, 413, 406, 399, 392]);
  });
});
