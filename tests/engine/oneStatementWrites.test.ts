import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApiKey, deactivateApiKey, type AuthenticatedKey } from '../../app/apiKeys.js';
import { activeKeyGuard } from '../../app/keyGuards.js';
import type { Database } from '../../db/index.js';
import { sql as oneStatementWritesSql } from '../../db/migrations/0041_one_statement_writes.js';
import { GuardFailed, RequestError, type GraphEngine, type GraphRequest, type Principal, type StatementGuard } from '../../engine/index.js';
import { METADATA_PATH, send, startSeededService, type SeededService } from '../support/seededService.js';

/**
 * Issue 36 (bench m2): a mutation whose one write's rows are its whole response runs as ONE
 * statement in autocommit (`WITH _w AS (UPDATE … RETURNING …) SELECT <response>`), answering
 * byte for byte what the two-statement form in a transaction answers; the role's `check` and the
 * key's guard fail that statement (nothing written) with the same answers; a table with a user
 * AFTER trigger keeps the two-statement form; webhook capture and change notices still happen.
 * The two-statement form is the engine's own (`runMutation` in a transaction), run on the same
 * database for every comparison.
 */
const ROLE = `roles:
  task_keeper:
    collections:
      tasks: { select: { columns: '*', filter: { status: { _neq: hidden } } }, insert: { columns: '*', check: { name: { _nlike: "forbidden%" } } }, update: { columns: '*', check: { name: { _nlike: "forbidden%" } } }, delete: {} }
`;
let dir: string;
let s: SeededService;
let accountId: string;
let loanId: string;
let taskId: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'loanql-one-statement-'));
  const metadataPath = join(dir, 'loanql.yaml');
  const original = readFileSync(METADATA_PATH, 'utf8');
  assert.ok(original.includes('\nroles:\n'));
  writeFileSync(metadataPath, original.replace('\nroles:\n', `\n${ROLE}`));
  s = await startSeededService({ scale: 0.01, config: { metadataPath } });
  accountId = s.account.id;
  loanId = (await s.sql<{ id: string }>(`SELECT id FROM loans WHERE account_id = $1 AND status = 'servicing' ORDER BY id LIMIT 1`, [accountId]))[0]!.id;
  taskId = (await s.sql<{ id: string }>(`INSERT INTO tasks (account_id, loan_id, name) VALUES ($1, $2, 'call the borrower') RETURNING id`, [accountId, loanId]))[0]!.id;
  await s.sql(`INSERT INTO tasks (account_id, loan_id, name) VALUES ($1, $2, 'b'), ($1, $2, 'a')`, [accountId, loanId]);
});

after(async () => {
  await s?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Runs `work` on a view of the database that counts the statements sent and the transactions opened. */
async function counting<T>(work: (db: Database) => Promise<T>): Promise<{ result: T; statements: string[]; transactions: number }> {
  const statements: string[] = [];
  let transactions = 0;
  const db = new Proxy(s.db, {
    get(target, property) {
      if (property === 'transaction') return (inner: (tx: never) => Promise<unknown>) => (transactions++, target.transaction(inner as never));
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  const stop = s.db.observe((text) => statements.push(text));
  try {
    return { result: await work(db), statements, transactions };
  } finally {
    stop();
  }
}

/** The request as the engine serves it now (one statement where it can). */
const served = (engine: GraphEngine, request: GraphRequest, principal: Principal, guard?: StatementGuard) => counting((db) => engine.execute(db, request, principal, guard));

/** The request in the two-statement form: its writes, the guard and the response in one transaction. */
const inTransaction = (engine: GraphEngine, request: GraphRequest, principal: Principal, guard?: StatementGuard) =>
  counting((db) =>
    db.transaction((tx) => {
      const prepared = engine.prepare(request, principal);
      assert.equal(prepared.kind, 'mutation');
      return engine.runMutation(tx, prepared as Extract<typeof prepared, { kind: 'mutation' }>, { guard });
    }),
  );

/** What a call answered: its text, or its error's class and client errors. */
async function outcome(call: Promise<{ result: string }>): Promise<unknown> {
  try {
    return { text: (await call).result };
  } catch (error) {
    if (error instanceof RequestError) return { requestError: error.errors, stage: error.stage };
    if (error instanceof GuardFailed) return { guardFailed: true };
    throw error;
  }
}

/** Every task row of the account, to show that nothing changed. */
const tasksDigest = async (): Promise<string> =>
  (await s.sql<{ d: string }>(`SELECT count(*) || ':' || coalesce(md5(string_agg(t::text, ',' ORDER BY t.id)), '') AS d FROM tasks t WHERE account_id = $1`, [accountId]))[0]!.d;

async function keyOf(role: string): Promise<AuthenticatedKey & { secret: string }> {
  const created = await createApiKey(s.db, accountId, `${role} key`, { role, variables: new Map() });
  return { accountId, keyId: created.id, prefix: created.prefix, role, variables: new Map(), secret: created.key };
}

describe('a write whose response is its own rows runs as one statement in autocommit', () => {
  /** Each shape: what, the request, and what to set up before each of the two forms runs it (a delete needs its rows back). */
  const shapes: readonly (readonly [string, () => GraphRequest, (() => Promise<void>)?])[] = [
    ['update_by_pk (bench m2)', () => ({ query: `mutation ($id: uuid!) { update_tasks_by_pk(pk_columns: {id: $id}, _set: {status: "completed"}) { id name status __typename } }`, variables: { id: taskId } })],
    [
      'update with affected_rows and returning, several rows in key order',
      () => ({
        query: `mutation ($loan: uuid!) { __typename update_tasks(where: {loan_id: {_eq: $loan}}, _set: {date_due: "2027-01-02"}) { affected_rows returning { id name date_due created_at } } }`,
        variables: { loan: loanId },
      }),
    ],
    ['update_many with one update', () => ({ query: `mutation ($id: uuid!) { update_tasks_many(updates: [{where: {id: {_eq: $id}}, _set: {name: "renamed"}}]) { affected_rows returning { name } } }`, variables: { id: taskId } })],
    ['an update that matches no row', () => ({ query: `mutation { update_tasks_by_pk(pk_columns: {id: "00000000-0000-4000-8000-000000000000"}, _set: {name: "x"}) { id } }` })],
    ['insert of several rows, returned in the order written', () => ({ query: `mutation ($loan: uuid!) { insert_tasks(objects: [{name: "z", loan_id: $loan}, {name: "y"}, {name: "x", status: "completed"}]) { affected_rows returning { name status loan_id } } }`, variables: { loan: loanId } })],
    ['insert_one', () => ({ query: `mutation { insert_tasks_one(object: {name: "one", date_due: "2027-03-04"}) { name status date_due } }` })],
    [
      'delete with returning',
      () => ({ query: `mutation { delete_tasks(where: {name: {_eq: "gone"}}) { affected_rows returning { name } } }` }),
      async () => void (await s.sql(`INSERT INTO tasks (account_id, name) VALUES ($1, 'gone'), ($1, 'gone')`, [accountId])),
    ],
  ];
  for (const [what, request, prepare] of shapes) {
    it(`${what}: one statement, no transaction, the two-statement form's answer byte for byte`, async () => {
      const engine = s.service.engine;
      await prepare?.();
      const one = await served(engine, request(), accountId);
      assert.equal(one.transactions, 0);
      assert.equal(one.statements.length, 1, one.statements.join('\n'));
      assert.match(one.statements[0]!, /^WITH "_w0?" AS \((UPDATE|INSERT INTO|DELETE FROM) "tasks" /);
      await prepare?.();
      const two = await inTransaction(engine, request(), accountId);
      assert.equal(two.transactions, 1);
      assert.ok(two.statements.length >= 2, two.statements.join('\n'));
      assert.equal(one.result, two.result);
      assert.doesNotMatch(one.result, /"errors"/);
    });
  }

  it('with a key\'s guard: still one statement, the guard asserted in it', async () => {
    const key = await keyOf('admin');
    const request = { query: `mutation ($id: uuid!) { update_tasks_by_pk(pk_columns: {id: $id}, _set: {date_due: "2027-05-06"}) { date_due } }`, variables: { id: taskId } };
    const one = await served(s.service.engine, request, accountId, activeKeyGuard(key));
    assert.deepEqual([one.transactions, one.statements.length], [0, 1]);
    assert.match(one.statements[0]!, /loanql_assert\(EXISTS \(SELECT 1 FROM api_keys WHERE/);
    assert.equal(one.result, '{"data":{"update_tasks_by_pk":{"date_due":"2027-05-06"}}}');
  });

  it('a response that reads a relationship keeps the two-statement form', async () => {
    const request = { query: `mutation ($id: uuid!) { update_tasks_by_pk(pk_columns: {id: $id}, _set: {status: "open"}) { id loan { id } } }`, variables: { id: taskId } };
    const one = await served(s.service.engine, request, accountId);
    assert.equal(one.transactions, 1);
    assert.equal(JSON.parse(one.result).data.update_tasks_by_pk.loan.id, loanId);
  });

  it('a payment (AFTER triggers on payments) keeps the two-statement form', async () => {
    const request = { query: `mutation ($loan: uuid!) { insert_payments_one(object: {loan_id: $loan, date: "2026-11-20", amount: 1, type: "regular", method: "ach"}) { amount } }`, variables: { loan: loanId } };
    const { result, transactions } = await served(s.service.engine, request, accountId);
    assert.equal(transactions, 1);
    assert.equal(result, '{"data":{"insert_payments_one":{"amount":1.00}}}');
  });
});

describe('a failing check or guard in the one statement writes nothing and answers as before', () => {
  const principal = (): Principal => ({ accountId, keyVariables: new Map() });

  for (const [what, request] of [
    ['an update', () => ({ query: `mutation ($id: uuid!) { update_tasks_by_pk(pk_columns: {id: $id}, _set: {name: "forbidden name"}) { id name } }`, variables: { id: taskId } })],
    ['an insert of two rows, one failing', () => ({ query: `mutation { insert_tasks(objects: [{name: "fine"}, {name: "forbidden too"}]) { affected_rows } }` })],
  ] as const) {
    it(`the role's check fails on ${what}: permission-error, nothing written`, async () => {
      const engine = s.service.engine.forRole('task_keeper')!;
      const key = await keyOf('task_keeper');
      const before = await tasksDigest();
      const one = await outcome(served(engine, request(), principal(), activeKeyGuard(key)));
      assert.equal(await tasksDigest(), before);
      const two = await outcome(inTransaction(engine, request(), principal(), activeKeyGuard(key)));
      assert.equal(await tasksDigest(), before);
      assert.deepEqual(one, two);
      assert.equal((one as { requestError: { extensions: { code: string } }[] }).requestError[0]!.extensions.code, 'permission-error');
    });
  }

  it('the role may write what passes its check, in one statement', async () => {
    const engine = s.service.engine.forRole('task_keeper')!;
    const { result, statements, transactions } = await served(engine, { query: `mutation { insert_tasks_one(object: {name: "allowed"}) { name } }` }, principal());
    assert.deepEqual([transactions, statements.length], [0, 1]);
    assert.match(statements[0]!, /loanql_assert\("loanql_failing"\."loanql_failing" = 0/);
    assert.equal(result, '{"data":{"insert_tasks_one":{"name":"allowed"}}}');
  });

  it('a key deactivated since it was verified: GuardFailed from the engine, 403 over HTTP, nothing written', async () => {
    const key = await keyOf('admin');
    const request = { query: `mutation ($id: uuid!) { update_tasks_by_pk(pk_columns: {id: $id}, _set: {name: "never written"}) { name } }`, variables: { id: taskId } };
    const post = () => send(`${s.url}/api/graph`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Token ${key.secret}` }, body: JSON.stringify(request) });
    // Verified once (the service remembers the key's identity, never its state).
    assert.equal((await send(`${s.url}/api/graph`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Token ${key.secret}` }, body: JSON.stringify({ query: '{ tasks(limit: 1) { id } }' }) })).status, 200);
    assert.ok(await deactivateApiKey(s.db, key.prefix, accountId));
    const before = await tasksDigest();
    const one = await outcome(served(s.service.engine, request, accountId, activeKeyGuard(key)));
    const two = await outcome(inTransaction(s.service.engine, request, accountId, activeKeyGuard(key)));
    assert.deepEqual(one, { guardFailed: true });
    assert.deepEqual(two, one);
    const answer = await post();
    assert.deepEqual([answer.status, answer.text], [403, 'Not authorized']);
    assert.equal(await tasksDigest(), before);
  });

  it('a write error (a reference to no loan) is the same clear error, nothing written', async () => {
    const request = { query: `mutation { insert_tasks_one(object: {name: "orphan", loan_id: "00000000-0000-4000-8000-000000000000"}) { name } }` };
    const before = await tasksDigest();
    const one = await outcome(served(s.service.engine, request, accountId));
    const two = await outcome(inTransaction(s.service.engine, request, accountId));
    assert.deepEqual(one, two);
    assert.equal((one as { requestError: { extensions: { code: string } }[] }).requestError[0]!.extensions.code, 'not-found');
    assert.equal(await tasksDigest(), before);
  });
});

describe('webhooks and change notices of a one-statement write', () => {
  it('captures task.completed and sends the tasks change notice, as the transaction did', async () => {
    await s.sql(`INSERT INTO webhook_endpoints (account_id, url, event_types, secret) VALUES ($1, 'https://example.test/hook', ARRAY['task.completed'], 'whsec_dGVzdA==')`, [accountId]);
    const task = (await s.sql<{ id: string }>(`INSERT INTO tasks (account_id, loan_id, name) VALUES ($1, $2, 'to complete') RETURNING id`, [accountId, loanId]))[0]!.id;
    let noticed: (payload: string) => void = () => undefined;
    const notice = new Promise<string>((resolve) => (noticed = resolve));
    const stop = await s.db.listen('loanql_changes', (payload) => {
      if (payload.startsWith(`tasks ${accountId}`)) noticed(payload);
    });
    try {
      const { result, transactions } = await served(s.service.engine, { query: `mutation ($id: uuid!) { update_tasks_by_pk(pk_columns: {id: $id}, _set: {status: "completed"}) { status } }`, variables: { id: task } }, accountId);
      assert.equal(transactions, 0);
      assert.equal(result, '{"data":{"update_tasks_by_pk":{"status":"completed"}}}');
      assert.ok((await notice).includes(loanId));
    } finally {
      await stop();
    }
    const captured = await s.sql<{ n: string }>(
      `SELECT count(*)::text AS n FROM (SELECT data::jsonb AS data FROM webhook_outbox WHERE account_id = $1 AND type = 'task.completed'
         UNION ALL SELECT data::jsonb FROM webhook_events WHERE account_id = $1 AND type = 'task.completed') AS e WHERE e.data -> 'new' ->> 'id' = $2`,
      [accountId, task],
    );
    assert.equal(captured[0]!.n, '1');
  });
});

describe('a table with a user AFTER trigger that changes the written row', () => {
  it('keeps the two-statement form, and the response shows the trigger\'s change; without the trigger, one statement again', async () => {
    await s.db.script(`
      CREATE FUNCTION test_mark_seen() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE tasks SET name = NEW.name || ' (seen)' WHERE account_id = NEW.account_id AND id = NEW.id;
        RETURN NULL;
      END $$;
      CREATE TRIGGER test_mark_seen AFTER UPDATE OF status ON tasks FOR EACH ROW WHEN (NEW.name NOT LIKE '% (seen)') EXECUTE FUNCTION test_mark_seen();`);
    const request = (status: string) => ({ query: `mutation ($id: uuid!) { update_tasks_by_pk(pk_columns: {id: $id}, _set: {status: "${status}"}) { name status } }`, variables: { id: taskId } });
    await s.sql(`UPDATE tasks SET name = 'watched' WHERE account_id = $1 AND id = $2`, [accountId, taskId]);
    try {
      assert.deepEqual(await s.service.engines.reload(), { ok: true });
      const { result, transactions, statements } = await served(s.service.engine, request('open'), accountId);
      assert.equal(transactions, 1);
      assert.ok(statements.length >= 2);
      assert.equal(result, '{"data":{"update_tasks_by_pk":{"name":"watched (seen)","status":"open"}}}');
    } finally {
      await s.db.script(`DROP TRIGGER test_mark_seen ON tasks; DROP FUNCTION test_mark_seen();`);
    }
    assert.deepEqual(await s.service.engines.reload(), { ok: true });
    const again = await served(s.service.engine, request('completed'), accountId);
    assert.deepEqual([again.transactions, again.statements.length], [0, 1]);
    assert.equal(again.result, '{"data":{"update_tasks_by_pk":{"name":"watched (seen)","status":"completed"}}}');
  });
});

describe('loanql_assert (migration 0041)', () => {
  it('returns true when the condition holds, and raises LQ001 with the reason as the message when it is false or null', async () => {
    assert.deepEqual(await s.sql(`SELECT loanql_assert(true, 'guard') AS ok`), [{ ok: true }]);
    for (const holds of [false, null]) {
      await assert.rejects(s.db.query(`SELECT loanql_assert($1::boolean, 'check 2')`, [holds]), (error: { code?: string; message?: string }) => {
        assert.deepEqual([error.code, error.message], ['LQ001', 'check 2']);
        return true;
      });
    }
  });

  it('a database without it (not migrated to 0041) keeps the two-statement form', async () => {
    const request = { query: `mutation ($id: uuid!) { update_tasks_by_pk(pk_columns: {id: $id}, _set: {date_due: "2027-07-08"}) { date_due } }`, variables: { id: taskId } };
    await s.db.script('DROP FUNCTION loanql_assert(boolean, text)');
    try {
      assert.deepEqual(await s.service.engines.reload(), { ok: true });
      const { result, transactions } = await served(s.service.engine, request, accountId);
      assert.equal(transactions, 1);
      assert.equal(result, '{"data":{"update_tasks_by_pk":{"date_due":"2027-07-08"}}}');
    } finally {
      await s.db.script(oneStatementWritesSql);
    }
    assert.deepEqual(await s.service.engines.reload(), { ok: true });
    assert.equal((await served(s.service.engine, request, accountId)).transactions, 0);
  });
});
