import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { testDatabaseKind } from '../support/testDatabase.js';
import { createFundedLoans, payEachMutation, postGraph, startKeyedService, type KeyedService } from '../support/seededService.js';
import { verifyLedgers } from '../../app/ledgerVerify.js';
import { assessFees } from '../../app/feeJob.js';
import { createAccountWithAdmin, DashboardClient } from '../dashboard/dashboardClient.js';

/**
 * Servicing writes to the same loans at the same moment, through the service on a real socket.
 * A write that replays loans (a payment, a product's settings, the daily fee job) locks each loan
 * it replays, the replay in the loans' id order; a GraphQL mutation that pays several loans locks
 * them in the order it names them. Two such writes naming the loans in opposite orders deadlocked on
 * PostgreSQL (`TEST_DATABASE_URL`), which undid one of them (40P01): before session 37 that one
 * was answered 500 (`PATCH /api/product`) or `conflict` (GraphQL), though nothing of it was the
 * client's doing. The service runs a transaction PostgreSQL undid that way again, whole
 * (`db/conflictRetry.ts`), and such writes now take turns instead (migrations 0067 and 0071;
 * `servicingLockOrder.test.ts` counts the deadlocks). On PGlite the writes run one after another
 * and the same checks hold.
 */
let service: KeyedService;
const LOANS = 8;
const ROUNDS = 3;
let loans: string[] = [];

const graph = (query: string): Promise<{ status: number; text: string }> => postGraph(service, query);

/** One mutation paying each of `ids` 50.00 on `date`, in the order given. */
function payEach(ids: readonly string[], date: string): Promise<{ status: number; text: string }> {
  return graph(payEachMutation(ids, date));
}

function assertPaid(answer: { status: number; text: string }, what: string): void {
  assert.equal(answer.status, 200, `${what}: ${answer.text}`);
  const body = JSON.parse(answer.text) as { data?: Record<string, { id: string } | null>; errors?: unknown };
  assert.equal(body.errors, undefined, `${what}: ${answer.text}`);
  assert.equal(Object.values(body.data ?? {}).filter((row) => row?.id).length, LOANS, what);
}

/**
 * A batch's outcome under contention: every payment written, or — undone as a conflict on each of
 * its runs, which a loaded machine can make happen — GraphQL's `conflict` and nothing written (the
 * caller counts the payments). Anything else (a 500, another error) fails.
 */
function batchOutcome(answer: { status: number; text: string }, what: string): 'paid' | 'conflict' {
  const body = JSON.parse(answer.text) as { data?: Record<string, { id: string } | null> | null; errors?: { extensions?: { code?: string } }[] };
  if (answer.status === 200 && body.errors?.length === 1 && body.errors[0]!.extensions?.code === 'conflict') return 'conflict';
  assertPaid(answer, what);
  return 'paid';
}

/** Payments of the account dated `date` (each round pays on its own day). */
async function paymentsOn(date: string): Promise<number> {
  const { rows } = await service.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM payments WHERE account_id = $1 AND date = $2::date`, [service.accountId, date]);
  return rows[0]!.n;
}

/**
 * Retried inside the service, a write collides again only by bad luck several times running: over
 * a test's nine writes at most one may end as a conflict (before session 37, half the batches did,
 * and the settings change was a 500).
 */
const CONFLICTS_TOLERATED = 1;

/** What must hold after any mix of writes: stored ledgers equal a fresh replay, one next row per serviced loan, payments allocated in full, their distributions summing to their allocation. */
async function assertLedgersSound(): Promise<void> {
  const { db, accountId } = service;
  assert.deepEqual((await verifyLedgers(db, { accountId })).differing, []);
  const next = await db.query<{ id: string; n: number }>(
    `SELECT l.id, (SELECT count(*) FROM schedules s WHERE s.account_id = l.account_id AND s.loan_id = l.id AND s.is_next)::int AS n
       FROM loans l WHERE l.account_id = $1 AND l.status = 'servicing'`,
    [accountId],
  );
  assert.equal(next.rows.length, LOANS);
  for (const row of next.rows) assert.equal(row.n, 1, `loan ${row.id}: one is_next row`);
  const sums = await db.query<{ id: string; amount: string; allocated: string; distributed: string; principal_interest_fees: string }>(
    `SELECT p.id, p.amount::text,
            (SELECT coalesce(sum(a.amount), 0) FROM payment_allocations a WHERE a.account_id = p.account_id AND a.payment_id = p.id)::text AS allocated,
            (SELECT coalesce(sum(a.amount), 0) FROM payment_allocations a WHERE a.account_id = p.account_id AND a.payment_id = p.id AND a.component <> 'credit')::text AS principal_interest_fees,
            (SELECT coalesce(sum(d.amount), 0) FROM distributions d WHERE d.account_id = p.account_id AND d.payment_id = p.id)::text AS distributed
       FROM payments p WHERE p.account_id = $1 AND p.date_reversed IS NULL`,
    [accountId],
  );
  for (const row of sums.rows) {
    assert.equal(row.allocated, row.amount, `payment ${row.id} allocated in full`);
    assert.equal(row.distributed, row.principal_interest_fees, `payment ${row.id} distributed as allocated`);
  }
}

before(async () => {
  service = await startKeyedService();
  loans = await createFundedLoans(service, LOANS, 'concurrent');
});

after(async () => {
  await service?.close();
});

describe(`servicing writes at the same moment (${testDatabaseKind})`, () => {
  it(`a product settings change while mutations pay its ${LOANS} loans in both orders: each request retried until it succeeds (at most one clean conflict), never a 500`, { timeout: 120_000 }, async () => {
    let conflicts = 0;
    for (let round = 0; round < ROUNDS; round += 1) {
      const date = `2026-02-${String(10 + round).padStart(2, '0')}`;
      const before = (await service.rest.get('/api/product')).json;
      const percent = round % 2 ? 5 : 6;
      const [settings, ascending, descending] = await Promise.all([
        service.rest.patch('/api/product', { late_fee_percent: percent }),
        payEach(loans, date),
        payEach([...loans].reverse(), date),
      ]);
      const after = (await service.rest.get('/api/product')).json;
      if (settings.status === 409) {
        assert.equal(JSON.parse(settings.text).code, 'conflict', `round ${round}: PATCH /api/product: ${settings.text}`);
        assert.deepEqual(after, before, `round ${round}: a settings change undone as a conflict wrote nothing`);
        conflicts += 1;
      } else assert.equal(settings.status, 200, `round ${round}: PATCH /api/product: ${settings.text}`);
      const outcomes = [batchOutcome(ascending, `round ${round}: ascending`), batchOutcome(descending, `round ${round}: descending`)];
      conflicts += outcomes.filter((outcome) => outcome === 'conflict').length;
      assert.equal(await paymentsOn(date), LOANS * outcomes.filter((outcome) => outcome === 'paid').length, `round ${round}: the batches undone wrote nothing`);
    }
    assert.ok(conflicts <= CONFLICTS_TOLERATED, `${conflicts} of ${ROUNDS * 3} writes ended as conflicts`);
    await assertLedgersSound();
  });

  it(`the daily fee job while mutations pay the loans in both orders: the job succeeds, each batch retried until it does (at most one clean conflict)`, { timeout: 120_000 }, async () => {
    let conflicts = 0;
    for (let round = 0; round < ROUNDS; round += 1) {
      const date = `2026-03-${String(10 + round).padStart(2, '0')}`;
      // The job runs once a day: forget the day so that each round runs it again.
      await service.db.query(`DELETE FROM ledger_job_days WHERE account_id = $1`, [service.accountId]);
      const [runs, ascending, descending] = await Promise.all([assessFees(service.db, { accountSlug: service.account.slug }), payEach(loans, date), payEach([...loans].reverse(), date)]);
      assert.equal(runs.length, 1);
      assert.deepEqual(runs[0]!.loansRefused, [], `round ${round}: no loan refused`);
      const outcomes = [batchOutcome(ascending, `round ${round}: ascending`), batchOutcome(descending, `round ${round}: descending`)];
      conflicts += outcomes.filter((outcome) => outcome === 'conflict').length;
      assert.equal(await paymentsOn(date), LOANS * outcomes.filter((outcome) => outcome === 'paid').length, `round ${round}: the batches undone wrote nothing`);
    }
    assert.ok(conflicts <= CONFLICTS_TOLERATED, `${conflicts} of ${ROUNDS * 2} payment batches ended as conflicts`);
    await assertLedgersSound();
  });

  it('a write PostgreSQL undoes as a deadlock on every run is a 409 `conflict` after 5 runs (REST and the dashboard), nothing written', { timeout: 60_000 }, async () => {
    // A trigger raising deadlock_detected whenever the late fee becomes 7.77, counting its runs in
    // a sequence (which its transaction's rollback does not undo).
    await service.db.query(`CREATE SEQUENCE deadlocked_runs`);
    await service.db.query(`CREATE FUNCTION deadlock_on_777() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.late_fee_percent = 7.77 THEN PERFORM nextval('deadlocked_runs'); RAISE EXCEPTION 'deadlock detected' USING ERRCODE = '40P01'; END IF;
        RETURN NEW;
      END $$`);
    await service.db.query(`CREATE TRIGGER deadlock_on_777 BEFORE UPDATE ON products FOR EACH ROW EXECUTE FUNCTION deadlock_on_777()`);
    try {
      const before = await service.rest.get('/api/product');
      const answer = await service.rest.patch('/api/product', { late_fee_percent: 7.77 });
      assert.equal(answer.status, 409, answer.text);
      assert.equal(answer.json.code, 'conflict');
      assert.match(answer.json.error, /collided with concurrent writes .* nothing was written: send it again/);
      assert.equal((await service.db.query<{ runs: string }>(`SELECT last_value::text AS runs FROM deadlocked_runs`)).rows[0]!.runs, '5');
      assert.deepEqual((await service.rest.get('/api/product')).json, before.json, 'the product is as it was');

      // The dashboard's Settings > Servicing, the same write: a 409 page asking to send the form again.
      const { account, email } = await createAccountWithAdmin(service.db, 'conflict page password');
      const clerk = new DashboardClient(service.url);
      assert.equal((await clerk.logIn(email, 'conflict page password')).status, 303);
      await clerk.get('/dashboard/settings/servicing');
      const page = await clerk.postForm('/dashboard/settings/servicing', { late_fee_percent: '7.77' });
      assert.equal(page.status, 409, page.text);
      assert.match(page.text, /Someone changed this at the same moment/);
      assert.match(page.text, /Nothing was saved\. Go back and send the form again\./);
      const { rows } = await service.db.query<{ late_fee_percent: string }>(`SELECT late_fee_percent::text FROM products WHERE account_id = $1`, [account.id]);
      assert.notEqual(rows[0]?.late_fee_percent, '7.77');
      assert.equal((await service.db.query<{ runs: string }>(`SELECT last_value::text AS runs FROM deadlocked_runs`)).rows[0]!.runs, '10');
    } finally {
      await service.db.query(`DROP TRIGGER deadlock_on_777 ON products`);
    }
  });

  it('a mutation undone as a deadlock at its COMMIT on every run is a GraphQL `conflict`, not a 500', { timeout: 60_000 }, async () => {
    // A deferred trigger runs at COMMIT, which a mutation of several writes sends with its response statement.
    await service.db.query(`CREATE FUNCTION deadlock_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'deadlock detected' USING ERRCODE = '40P01'; END $$`);
    await service.db.query(`CREATE CONSTRAINT TRIGGER deadlock_at_commit AFTER INSERT ON tasks DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.name = 'deadlock at commit') EXECUTE FUNCTION deadlock_at_commit()`);
    try {
      const answer = await graph(`mutation { a: insert_tasks_one(object: {loan_id: "${loans[0]}", name: "deadlock at commit"}) { id } b: insert_tasks_one(object: {loan_id: "${loans[0]}", name: "second"}) { id } }`);
      assert.equal(answer.status, 200, answer.text);
      const body = JSON.parse(answer.text) as { errors?: { extensions: { code: string } }[] };
      assert.deepEqual(body.errors?.map((error) => error.extensions.code), ['conflict'], answer.text);
      const { rows } = await service.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM tasks WHERE account_id = $1 AND name IN ('deadlock at commit', 'second')`, [service.accountId]);
      assert.equal(rows[0]!.n, 0, 'nothing was written');
    } finally {
      await service.db.query(`DROP TRIGGER deadlock_at_commit ON tasks`);
    }
  });
});
