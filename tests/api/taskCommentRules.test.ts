import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startKeyedService, type KeyedService } from '../support/seededService.js';

/**
 * A task and a comment written over GraphQL meet the dashboard forms' rules (migration 0074, a
 * collections clerk's audit): a task's name not blank and at most 500 characters, its status not
 * blank, its due day in the years 1900–2999; a comment not blank and at most 10,000 characters.
 * Before, GraphQL took a blank task (the loan page showed an unnamed one, "Complete “”"), a task
 * due in the year 0026 (a slip for 2026: overdue for ever on the clerk's pages) and a blank
 * comment. Each refusal is a `check-violation` naming the field, and writes nothing; a task stored
 * before the rule can still be completed.
 */
let s: KeyedService;
let loan = '';

async function graph(query: string, variables: Record<string, unknown> = {}): Promise<any> {
  const response = await fetch(`${s.url}/api/graph`, { method: 'POST', headers: { authorization: `Token ${s.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
  assert.equal(response.status, 200);
  return response.json();
}

const ADD_TASK = 'mutation ($loan: uuid!, $name: String!, $due: date, $status: String) { insert_tasks_one(object: {loan_id: $loan, name: $name, date_due: $due, status: $status}) { id name status date_due } }';
const ADD_COMMENT = 'mutation ($loan: uuid!, $text: String!) { insert_comments_one(object: {loan_id: $loan, text: $text}) { id } }';

async function counts(): Promise<string> {
  const { rows } = await s.db.query<{ tasks: string; comments: string }>(
    `SELECT (SELECT count(*) FROM tasks WHERE account_id = $1) AS tasks, (SELECT count(*) FROM comments WHERE account_id = $1) AS comments`,
    [s.accountId],
  );
  return JSON.stringify(rows[0]);
}

before(async () => {
  s = await startKeyedService();
  await s.db.query(`INSERT INTO products (account_id, name, is_default) VALUES ($1, 'Default', true) ON CONFLICT DO NOTHING`, [s.accountId]);
  const created = await s.rest.post('/api/loan', { Name: 'Late loan', Amount: 12000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' });
  assert.equal(created.status, 201, created.text);
  loan = created.json.loan.id as string;
});
after(() => s?.close());

describe('Tasks and comments over GraphQL (migration 0074)', () => {
  it('a blank or overlong task name, a blank status, a due day outside 1900–2999 are check-violations naming the field; nothing is written', async () => {
    const before = await counts();
    const cases: [Record<string, unknown>, string, string][] = [
      [{ name: '', due: '2026-12-01' }, 'name', 'insert_tasks_one: name: give the task a name (it is blank)'],
      [{ name: ' \t\n', due: null }, 'name', 'insert_tasks_one: name: give the task a name (it is blank)'],
      [{ name: 'x'.repeat(501), due: null }, 'name', "insert_tasks_one: name: a task's name is at most 500 characters, not 501"],
      [{ name: 'Call', due: null, status: ' ' }, 'status', "insert_tasks_one: status: a task's status is not blank (open, completed, …)"],
      [{ name: 'Call', due: '0026-12-01' }, 'date_due', 'insert_tasks_one: date_due: a task is due in the years 1900–2999, not 0026-12-01'],
      [{ name: 'Call', due: '9999-12-31' }, 'date_due', 'insert_tasks_one: date_due: a task is due in the years 1900–2999, not 9999-12-31'],
      [{ name: 'Call', due: '1899-12-31' }, 'date_due', 'insert_tasks_one: date_due: a task is due in the years 1900–2999, not 1899-12-31'],
    ];
    for (const [variables, field, message] of cases) {
      const answer = await graph(ADD_TASK, { loan, status: 'open', ...variables });
      assert.equal(answer.errors?.[0]?.extensions?.code, 'check-violation', JSON.stringify(answer));
      assert.deepEqual(answer.errors[0].extensions.fields, [field]);
      assert.equal(answer.errors[0].message, message);
    }
    assert.equal(await counts(), before);
  });

  it('a blank or overlong comment is a check-violation naming text; nothing is written', async () => {
    const before = await counts();
    for (const [text, message] of [
      ['', 'insert_comments_one: text: write something first (the comment is blank)'],
      ['  \r\n ', 'insert_comments_one: text: write something first (the comment is blank)'],
      ['y'.repeat(10_001), 'insert_comments_one: text: a comment is at most 10,000 characters, not 10001'],
    ] as const) {
      const answer = await graph(ADD_COMMENT, { loan, text });
      assert.equal(answer.errors?.[0]?.extensions?.code, 'check-violation', JSON.stringify(answer).slice(0, 500));
      assert.deepEqual(answer.errors[0].extensions.fields, ['text']);
      assert.equal(answer.errors[0].message, message);
    }
    assert.equal(await counts(), before);
  });

  it('takes the edges (1900-01-01, 2999-12-31, 500 and 10,000 characters) and no due day', async () => {
    for (const due of ['1900-01-01', '2999-12-31', null]) {
      const answer = await graph(ADD_TASK, { loan, name: 'n'.repeat(500), due, status: 'open' });
      assert.equal(answer.errors, undefined, JSON.stringify(answer).slice(0, 500));
      assert.equal(answer.data.insert_tasks_one.date_due, due);
    }
    const comment = await graph(ADD_COMMENT, { loan, text: 'c'.repeat(10_000) });
    assert.equal(comment.errors, undefined, JSON.stringify(comment).slice(0, 500));
  });

  it('moving a task to the year 0026 is refused; a task stored blank before the rule can still be completed', async () => {
    const made = await graph(ADD_TASK, { loan, name: 'Call the borrower', due: '2026-12-01', status: 'open' });
    const id = made.data.insert_tasks_one.id as string;
    const moved = await graph('mutation ($id: uuid!) { update_tasks_by_pk(pk_columns: {id: $id}, _set: {date_due: "0026-12-02"}) { id } }', { id });
    assert.equal(moved.errors?.[0]?.message, 'update_tasks_by_pk: date_due: a task is due in the years 1900–2999, not 0026-12-02', JSON.stringify(moved));
    assert.equal((await s.db.query<{ d: string }>('SELECT date_due::text AS d FROM tasks WHERE account_id = $1 AND id = $2', [s.accountId, id])).rows[0]!.d, '2026-12-01');

    // A row written before migration 0074 (the rule's trigger off, as it was then).
    await s.db.query('ALTER TABLE tasks DISABLE TRIGGER tasks_check_rules');
    const old = (await s.db.query<{ id: string }>(`INSERT INTO tasks (account_id, loan_id, name, date_due) VALUES ($1, $2, '', '0026-01-01') RETURNING id`, [s.accountId, loan])).rows[0]!.id;
    await s.db.query('ALTER TABLE tasks ENABLE TRIGGER tasks_check_rules');
    const completed = await graph('mutation ($id: uuid!) { update_tasks_by_pk(pk_columns: {id: $id}, _set: {status: "completed", name: "", date_due: "0026-01-01"}) { status } }', { id: old });
    assert.equal(completed.errors, undefined, JSON.stringify(completed));
    assert.equal(completed.data.update_tasks_by_pk.status, 'completed');
  });
});
