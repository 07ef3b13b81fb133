import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Database, Queryable } from '../../db/index.js';
import { insertLedgerLoan } from '../support/ledgerLoan.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';

/**
 * Migration 0032 (issue 29; docs/ledger.md, "Migration 0032"): a replay of a loan whose rows are
 * exactly those its last replay started from and left unchanged is skipped; any write of a row the
 * replay reads or writes — by hand too, or one that sets the same values — and a new as-of day make
 * it run again. Whether it ran is read from PostgreSQL's own count of `loanql_ledger` calls in the
 * transaction (`track_functions`).
 */
let database: TestDatabase;
let db: Database;
let accountId: string;
let loanId: string;

before(async () => {
  database = await openTestDatabase();
  db = database.db;
  ({ accountId, loanId } = await insertLedgerLoan(db, 'ledger-skip'));
});
after(() => database?.close());

/** Runs `write` then the loan's replay in one transaction: how many times `loanql_ledger` and `loanql_ledger_inputs_version` ran in it. */
async function replayCalls(write?: (tx: Queryable) => Promise<unknown>, replay = true): Promise<{ ledger: number; versions: number }> {
  return db.transaction(async (tx) => {
    await tx.query(`SET LOCAL track_functions = 'all'`);
    // (the counts are of calls not yet reported to the statistics: read before and after)
    const calls = async (): Promise<{ ledger: number; versions: number }> =>
      (
        await tx.query<{ ledger: number; versions: number }>(
          `SELECT coalesce(pg_stat_get_xact_function_calls('loanql_ledger(uuid, uuid, date)'::regprocedure), 0)::int AS ledger,
                  coalesce(pg_stat_get_xact_function_calls('loanql_ledger_inputs_version(uuid, uuid)'::regprocedure), 0)::int AS versions`,
        )
      ).rows[0]!;
    const before = await calls();
    if (write) await write(tx);
    if (replay) await tx.query(`SELECT loanql_refresh_next(ARRAY[$1::uuid], ARRAY[$2::uuid])`, [accountId, loanId]);
    const after = await calls();
    return { ledger: after.ledger - before.ledger, versions: after.versions - before.versions };
  });
}
const ledgerRuns = async (write?: (tx: Queryable) => Promise<unknown>): Promise<number> => (await replayCalls(write)).ledger;

const stored = async (): Promise<unknown> =>
  (
    await db.query(
      `SELECT l.principal_outstanding, l.interest_due, l.fees_due, l.credit_balance, l.ledger_as_of::text,
              (SELECT json_agg(json_build_object('p', a.position, 'c', a.component, 'a', a.amount) ORDER BY a.position) FROM payment_allocations a WHERE a.loan_id = l.id) AS lines,
              (SELECT json_agg(json_build_object('n', s.number, 'ip', s.interest_paid, 'pp', s.principal_paid, 'x', s.is_next) ORDER BY s.number) FROM schedules s WHERE s.loan_id = l.id) AS rows,
              (SELECT json_agg(json_build_object('id', f.id, 'a', f.amount, 'p', f.paid, 'w', f.waived) ORDER BY f.id) FROM fees f WHERE f.loan_id = l.id) AS fees
         FROM loans l WHERE l.id = $1`,
      [loanId],
    )
  ).rows[0];

describe('A replay that would change nothing is skipped (migration 0032)', () => {
  it('runs once more to learn that nothing changes, then is skipped', async () => {
    const ledger = await stored();
    assert.equal(await ledgerRuns(), 1, 'the first replay after the payments runs');
    assert.equal(await ledgerRuns(), 0, 'the same rows again: skipped');
    assert.equal(await ledgerRuns(), 0);
    assert.deepEqual(await stored(), ledger);
    const fingerprint = await db.query<{ same: boolean }>(
      `SELECT version = loanql_ledger_inputs_version(account_id, id) AS same FROM ledger_fingerprints WHERE account_id = $1 AND id = $2`,
      [accountId, loanId],
    );
    assert.deepEqual(fingerprint.rows, [{ same: true }]);
  });

  it('replays after a write by hand of any row it reads or writes, and repairs what was changed', async () => {
    assert.equal(await ledgerRuns(), 0);
    const ledger = await stored();
    const writes: readonly string[] = [
      `UPDATE payment_allocations SET amount = amount + 0.01 WHERE loan_id = $1 AND position = 1`,
      `UPDATE schedules SET interest_paid = 0 WHERE loan_id = $1 AND number = 2`,
      `UPDATE fees SET paid = paid + 1 WHERE loan_id = $1`,
      `UPDATE loans SET principal_outstanding = principal_outstanding - 100 WHERE id = $1`,
      // the same values: still a new row version, so a replay (it finds nothing to change)
      `UPDATE payments SET amount = amount WHERE loan_id = $1`,
    ];
    for (const write of writes) {
      await db.transaction(async (tx) => {
        // by hand: without the replay its triggers would start
        await tx.query(`SELECT set_config('loanql.replaying', 'on', true)`);
        await tx.query(write, [loanId]);
      });
      assert.equal(await ledgerRuns(), 1, write);
      assert.deepEqual(await stored(), ledger, write);
      // a replay that wrote (repaired) is followed by one that learns that nothing changes; then skipped
      assert.equal(await ledgerRuns(), write.includes('SET amount = amount WHERE') ? 0 : 1, `${write}: learnt`);
      assert.equal(await ledgerRuns(), 0, `${write}: then skipped again`);
    }
  });

  it('replays when the as-of day moves, a waiver is recorded or the product changes', async () => {
    await ledgerRuns();
    await ledgerRuns();
    assert.equal(await ledgerRuns((tx) => tx.query(`SELECT set_config('loanql.business_date', '2026-12-01', true)`)), 1, 'a later business date');
    const fee = (await db.query<{ id: string }>(`SELECT id FROM fees WHERE loan_id = $1 AND kind = 'late' AND row_number = 4`, [loanId])).rows[0]!;
    await db.transaction(async (tx) => {
      await tx.query(`SELECT set_config('loanql.replaying', 'on', true)`);
      await tx.query(`INSERT INTO fee_waivers (account_id, fee_id, loan_id, waived_on, waived_by, reason) VALUES ($1, $2, $3, '2026-06-20', 'test', 'goodwill')`, [accountId, fee.id, loanId]);
    });
    assert.equal(await ledgerRuns(), 1, 'a waiver');
    await ledgerRuns();
    assert.equal(await ledgerRuns(), 0);
    await db.transaction(async (tx) => {
      await tx.query(`SELECT set_config('loanql.replaying', 'on', true)`);
      await tx.query(`UPDATE products SET late_fee_percent = 4 WHERE account_id = $1`, [accountId]);
    });
    assert.equal(await ledgerRuns(), 1, 'the product');
  });

  it('a replay rolled back takes its stored version with it', async () => {
    await ledgerRuns();
    await ledgerRuns();
    const before = (await db.query<{ version: string }>(`SELECT version FROM ledger_fingerprints WHERE id = $1`, [loanId])).rows[0]!.version;
    await db
      .transaction(async (tx) => {
        await tx.query(`INSERT INTO payments (account_id, loan_id, date, amount) VALUES ($1, $2, '2026-06-15', 100)`, [accountId, loanId]);
        throw new Error('roll back');
      })
      .catch(() => undefined);
    assert.equal((await db.query<{ version: string }>(`SELECT version FROM ledger_fingerprints WHERE id = $1`, [loanId])).rows[0]!.version, before);
    assert.equal(await ledgerRuns(), 0);
  });

  it('a write computes no version (0034: one after the last payment resumes, before any version, and computes no full ledger); a replay that changes nothing computes one', async () => {
    await ledgerRuns();
    await ledgerRuns();
    const post = (date: string) => (tx: Queryable) => tx.query(`INSERT INTO payments (account_id, loan_id, date, amount) VALUES ($1, $2, $3, 10)`, [accountId, loanId, date]);
    assert.deepEqual(await replayCalls(post('2026-06-16'), false), { ledger: 0, versions: 0 }, 'after a skip: resumed first, so no version (0034)');
    assert.deepEqual(await replayCalls(post('2026-06-17'), false), { ledger: 0, versions: 0 }, 'a write after a write');
    assert.deepEqual(await replayCalls(), { ledger: 1, versions: 1 }, 'nothing changed: replayed, and its version stored');
    assert.deepEqual(await replayCalls(), { ledger: 0, versions: 1 }, 'nothing changed again: the version only');
  });
});

