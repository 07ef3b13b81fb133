import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createAdmin } from '../../app/accounts.js';
import { startKeyedService, type KeyedService } from '../support/seededService.js';

/**
 * Who a task is for (migration 0087, session 42: servicing clerks share one account and could
 * not see "my tasks"). A task's `assignee_id` is a dashboard admin of the same account or null;
 * the database refuses another account's admin for every writer (the composite foreign key),
 * GraphQL reads and writes it with the `assignee` relationship (id and name only), an admin
 * removed leaves the task unassigned, and `task.completed` carries the assignee.
 */
let s: KeyedService;
let loan = '';
let sam = '';
let kim = '';
let stranger = '';

async function graph(query: string, variables: Record<string, unknown> = {}, key = s.key): Promise<any> {
  const response = await fetch(`${s.url}/api/graph`, { method: 'POST', headers: { authorization: `Token ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
  assert.equal(response.status, 200);
  return response.json();
}

async function taskCount(): Promise<number> {
  return Number((await s.db.query<{ n: string }>('SELECT count(*)::text AS n FROM tasks WHERE account_id = $1', [s.accountId])).rows[0]!.n);
}

const ADD_TASK = 'mutation ($loan: uuid, $name: String!, $who: uuid) { insert_tasks_one(object: {loan_id: $loan, name: $name, assignee_id: $who}) { id name assignee_id assignee { id name } } }';

before(async () => {
  s = await startKeyedService();
  await s.db.query(`INSERT INTO products (account_id, name, is_default) VALUES ($1, 'Default', true) ON CONFLICT DO NOTHING`, [s.accountId]);
  const created = await s.rest.post('/api/loan', { Name: 'Elm St', Amount: 12000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' });
  assert.equal(created.status, 201, created.text);
  loan = created.json.loan.id as string;
  sam = (await createAdmin(s.db, s.accountId, { email: 'sam@assignee.test', password: 'correct horse battery', name: 'Sam Servicer' })).id;
  kim = (await createAdmin(s.db, s.accountId, { email: 'kim@assignee.test', password: 'correct horse battery', name: 'Kim Clerk' })).id;
  const other = await s.newAccount();
  stranger = (await createAdmin(s.db, other.accountId, { email: 'lee@elsewhere.test', password: 'correct horse battery', name: 'Lee Elsewhere' })).id;
});
after(() => s?.close());

describe('A task\'s assignee (migration 0087)', () => {
  it("the database refuses another account's admin as a task's assignee (SQL), and takes its own or none", async () => {
    await assert.rejects(
      s.db.query(`INSERT INTO tasks (account_id, loan_id, name, assignee_id) VALUES ($1, $2, 'Call', $3)`, [s.accountId, loan, stranger]),
      (error: { code?: string; constraint?: string }) => error.code === '23503' && error.constraint === 'tasks_assignee_fkey',
    );
    const own = await s.db.query<{ id: string }>(`INSERT INTO tasks (account_id, loan_id, name, assignee_id) VALUES ($1, $2, 'Call', $3) RETURNING id`, [s.accountId, loan, sam]);
    await assert.rejects(
      s.db.query(`UPDATE tasks SET assignee_id = $3 WHERE account_id = $1 AND id = $2`, [s.accountId, own.rows[0]!.id, stranger]),
      (error: { code?: string }) => error.code === '23503',
    );
    await s.db.query(`UPDATE tasks SET assignee_id = NULL WHERE account_id = $1 AND id = $2`, [s.accountId, own.rows[0]!.id]);
  });

  it("GraphQL refuses another account's admin (insert and update) as not-found naming assignee_id, and writes nothing", async () => {
    const before = await taskCount();
    const refused = await graph(ADD_TASK, { loan, name: 'Chase the insurer', who: stranger });
    assert.equal(refused.data ?? null, null, JSON.stringify(refused));
    assert.equal(refused.errors?.[0]?.extensions?.code, 'not-found', JSON.stringify(refused));
    assert.deepEqual(refused.errors[0].extensions.fields, ['assignee_id']);
    assert.equal(refused.errors[0].message, 'insert_tasks_one: assignee_id: no such record');
    assert.equal(await taskCount(), before);

    const added = await graph(ADD_TASK, { loan, name: 'Chase the insurer', who: kim });
    const id = added.data.insert_tasks_one.id as string;
    const moved = await graph('mutation ($id: uuid!, $who: uuid) { update_tasks_by_pk(pk_columns: {id: $id}, _set: {assignee_id: $who}) { assignee_id } }', { id, who: stranger });
    assert.equal(moved.errors?.[0]?.extensions?.code, 'not-found', JSON.stringify(moved));
    assert.equal(moved.errors[0].message, 'update_tasks_by_pk: assignee_id: no such record');
    const stored = await s.db.query<{ assignee_id: string }>('SELECT assignee_id FROM tasks WHERE account_id = $1 AND id = $2', [s.accountId, id]);
    assert.equal(stored.rows[0]!.assignee_id, kim);
  });

  it('GraphQL writes an assignee, reads it with its name, filters by it, and unassigns', async () => {
    const added = await graph(ADD_TASK, { loan: null, name: 'Renew the licence', who: sam });
    assert.equal(added.errors, undefined, JSON.stringify(added));
    const task = added.data.insert_tasks_one;
    assert.deepEqual(task.assignee, { id: sam, name: 'Sam Servicer' });
    assert.equal(task.assignee_id, sam);

    const mine = await graph('query ($me: uuid!) { tasks(where: {assignee_id: {_eq: $me}, status: {_neq: "completed"}}, order_by: [{date_due: asc_nulls_last}]) { name assignee { name } } }', { me: sam });
    assert.deepEqual(mine.data.tasks, [{ name: 'Renew the licence', assignee: { name: 'Sam Servicer' } }]);
    const byName = await graph('{ tasks(where: {assignee: {name: {_eq: "Kim Clerk"}}}) { name } }');
    assert.deepEqual(byName.data.tasks, [{ name: 'Chase the insurer' }]);

    const unassigned = await graph('mutation ($id: uuid!) { update_tasks_by_pk(pk_columns: {id: $id}, _set: {assignee_id: null}) { assignee_id assignee { name } } }', { id: task.id });
    assert.deepEqual(unassigned.data.update_tasks_by_pk, { assignee_id: null, assignee: null });
  });

  it("the assignee shows only an admin's id and name: never the e-mail nor the password hash", async () => {
    for (const field of ['password_hash', 'email']) {
      const answer = await graph(`{ tasks { assignee { ${field} } } }`);
      assert.equal(answer.errors?.[0]?.extensions?.code, 'validation-failed', JSON.stringify(answer));
      assert.match(answer.errors[0].message, new RegExp(field));
    }
  });

  it("an admin removed leaves their tasks unassigned (ON DELETE SET NULL of the assignee only)", async () => {
    const gone = (await createAdmin(s.db, s.accountId, { email: 'gone@assignee.test', password: 'correct horse battery', name: 'Gone Soon' })).id;
    const task = (await graph(ADD_TASK, { loan, name: 'Left behind', who: gone })).data.insert_tasks_one.id as string;
    await s.db.query('DELETE FROM admins WHERE account_id = $1 AND id = $2', [s.accountId, gone]);
    const after = await s.db.query<{ account_id: string; assignee_id: string | null }>('SELECT account_id, assignee_id FROM tasks WHERE id = $1', [task]);
    assert.deepEqual(after.rows, [{ account_id: s.accountId, assignee_id: null }]);
  });

  it('task.completed carries the assignee (id and name), and null when unassigned', async () => {
    await s.db.query(`INSERT INTO webhook_endpoints (account_id, url, event_types, secret) VALUES ($1, 'https://example.test/hook', ARRAY['task.completed'], 'whsec_dGVzdA==')`, [s.accountId]);
    const assigned = (await graph(ADD_TASK, { loan, name: 'Send the statement', who: kim })).data.insert_tasks_one.id as string;
    const nobody = (await graph(ADD_TASK, { loan, name: 'File the letter', who: null })).data.insert_tasks_one.id as string;
    for (const id of [assigned, nobody]) {
      const done = await graph('mutation ($id: uuid!) { update_tasks_by_pk(pk_columns: {id: $id}, _set: {status: "completed"}) { status } }', { id });
      assert.equal(done.errors, undefined, JSON.stringify(done));
    }
    const payloads = new Map<string, any>();
    for (let attempt = 0; attempt < 50 && payloads.size < 2; attempt++) {
      const captured = await s.db.query<{ data: any }>(
        `SELECT data::jsonb AS data FROM webhook_outbox WHERE account_id = $1 AND type = 'task.completed'
         UNION ALL SELECT data::jsonb FROM webhook_events WHERE account_id = $1 AND type = 'task.completed'`,
        [s.accountId],
      );
      for (const { data } of captured.rows) if (data?.new?.id) payloads.set(data.new.id as string, data.new);
      if (payloads.size < 2) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(payloads.get(assigned)?.status, 'completed');
    assert.equal(payloads.get(assigned)?.assignee_id, kim);
    assert.deepEqual(payloads.get(assigned)?.assignee, { id: kim, name: 'Kim Clerk' });
    assert.equal(payloads.get(nobody)?.assignee_id, null);
    assert.equal(payloads.get(nobody)?.assignee, null);
  });
});
