import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { dataOf, send, startSeededService, type SeededService } from '../support/seededService.js';
import { testDatabaseKind } from '../support/testDatabase.js';

/**
 * Issue 20: a string written in the document that equals a text constant of a partial index's
 * predicate (`tasks_due_open … WHERE status <> 'completed'`), or one of the values a CHECK
 * constraint allows the column (`loans_status_check`), is SQL text in the statement, read from
 * the live catalogue — so a prepared statement's generic plan can use the index, and reads a
 * constant — while every other string, and every variable, stays a bound parameter. Results are
 * the same either way.
 */
let s: SeededService;

before(async () => {
  s = await startSeededService();
});

after(async () => {
  await s?.close();
});

async function explain(query: string, variables: Record<string, unknown> = {}): Promise<{ sql: string; params: unknown[] }> {
  const answer = await send(`${s.url}/api/graph/explain`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Token ${s.apiKey}` },
    body: JSON.stringify({ query, variables }),
  });
  assert.equal(answer.status, 200, answer.text);
  return answer.body as { sql: string; params: unknown[] };
}

async function graph(query: string, variables: Record<string, unknown> = {}): Promise<unknown> {
  const answer = await send(`${s.url}/api/graph`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Token ${s.apiKey}` },
    body: JSON.stringify({ query, variables }),
  });
  assert.equal(answer.status, 200, answer.text);
  return dataOf(answer);
}

const TASKS = (condition: string, head = '') => `query ${head} { tasks(where: {status: ${condition}}, order_by: [{date_due: asc}, {id: asc}], limit: 500) { id status date_due } }`;

describe(`constants of the catalogue in the statement text (${testDatabaseKind})`, () => {
  it('the partial index tasks_due_open exists with the constant the test relies on', async () => {
    const rows = await s.sql<{ predicate: string }>(`SELECT pg_get_expr(i.indpred, i.indrelid) AS predicate FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = 'tasks_due_open'`);
    assert.match(rows[0]!.predicate, /status <> 'completed'::text/);
  });

  it('`_neq: "completed"` written in the document is SQL text, not a parameter', async () => {
    const { sql, params } = await explain(TASKS('{_neq: "completed"}'));
    assert.match(sql, /"status" <> 'completed'::text/);
    assert.ok(!params.includes('completed'), `params: ${JSON.stringify(params)}`);
  });

  it('any other string stays a parameter, also one that differs only in case', async () => {
    for (const value of ['open', 'Completed', "completed' OR true --"]) {
      const { sql, params } = await explain(TASKS(`{_neq: ${JSON.stringify(value)}}`));
      assert.ok(!sql.includes(`'${value}'`), sql);
      assert.ok(params.includes(value), `${value}: params ${JSON.stringify(params)}`);
    }
  });

  it('a variable stays a parameter even when its value is the constant', async () => {
    const { sql, params } = await explain(TASKS('{_neq: $status}', '($status: String!)'), { status: 'completed' });
    assert.ok(!sql.includes("'completed'"), sql);
    assert.ok(params.includes('completed'));
  });

  it('a value a CHECK constraint lists for the column (loans.status) is SQL text too; another string, or a variable, stays a parameter', async () => {
    const LOANS = (condition: string, head = '') => `query ${head} { loans_aggregate(where: {status: ${condition}}) { aggregate { count } } }`;
    const listed = await explain(LOANS('{_eq: "servicing"}'));
    assert.match(listed.sql, /"status" = 'servicing'::text/);
    assert.ok(!listed.params.includes('servicing'), `params: ${JSON.stringify(listed.params)}`);
    for (const value of ['Servicing', 'paid', "servicing' OR true --"]) {
      const { sql, params } = await explain(LOANS(`{_eq: ${JSON.stringify(value)}}`));
      assert.ok(!sql.includes(`'${value}'`), sql);
      assert.ok(params.includes(value), `${value}: params ${JSON.stringify(params)}`);
    }
    const variable = await explain(LOANS('{_eq: $status}', '($status: String!)'), { status: 'servicing' });
    assert.ok(!variable.sql.includes("'servicing'"), variable.sql);
    const counted = async (query: string, variables: Record<string, unknown> = {}) => ((await graph(query, variables)) as { loans_aggregate: { aggregate: { count: number } } }).loans_aggregate.aggregate.count;
    const [expected] = await s.sql<{ n: string }>(`SELECT count(*) AS n FROM loans WHERE account_id = $1 AND status = 'servicing'`, [s.account.id]);
    assert.equal(await counted(LOANS('{_eq: "servicing"}')), Number(expected!.n));
    assert.equal(await counted(LOANS('{_eq: $status}', '($status: String!)'), { status: 'servicing' }), Number(expected!.n));
  });

  it('the answers are the same as with the value bound, and match the data', async () => {
    const literal = (await graph(TASKS('{_neq: "completed"}'))) as { tasks: { status: string }[] };
    const bound = await graph(TASKS('{_neq: $status}', '($status: String!)'), { status: 'completed' });
    assert.deepEqual(literal, bound);
    const [expected] = await s.sql<{ n: string }>(`SELECT count(*) AS n FROM tasks WHERE account_id = $1 AND status <> 'completed'`, [s.account.id]);
    assert.equal(literal.tasks.length, Math.min(500, Number(expected!.n)));
    assert.ok(literal.tasks.length > 0 && literal.tasks.every((task) => task.status !== 'completed'));
    const equal = (await graph(TASKS('{_eq: "completed"}'))) as { tasks: { status: string }[] };
    assert.ok(equal.tasks.length > 0 && equal.tasks.every((task) => task.status === 'completed'));
  });
});
