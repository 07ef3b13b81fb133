import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Database } from '../../db/index.js';
import { insertLedgerLoan } from '../support/ledgerLoan.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';

/**
 * Migration 0043 (issue 29; docs/ledger.md, "Migration 0043"): a full replay whose result equals the
 * digest its loan's last full replay stored, with no row of the loan written since (0034's version),
 * neither compares nor writes — not even its state row; any row written since, by hand too, makes it
 * compare and repair as before. A resumed replay's version, built from the parts it wrote, is the one
 * read from every row.
 */
let database: TestDatabase;
let db: Database;
let accountId: string;
let loanId: string;

before(async () => {
  database = await openTestDatabase();
  db = database.db;
  ({ accountId, loanId } = await insertLedgerLoan(db, 'ledger-digest', { nsfFee: 25 }));
});
after(() => database?.close());

/** Everything a replay writes, as stored. */
async function stored(): Promise<unknown> {
  const read = async (sql: string): Promise<unknown[]> => (await db.query(sql, [loanId])).rows;
  return {
    lines: await read(`SELECT position, payment_id, row_number, fee_id, component, amount::text FROM payment_allocations WHERE loan_id = $1 ORDER BY position`),
    rows: await read(`SELECT number, interest::text, principal::text, interest_paid::text, principal_paid::text, is_next FROM schedules WHERE loan_id = $1 ORDER BY number`),
    fees: await read(`SELECT id, kind, row_number, date, amount::text, paid::text, waived::text FROM fees WHERE loan_id = $1 ORDER BY id`),
    loan: await read(`SELECT principal_outstanding::text, interest_due::text, fees_due::text, credit_balance::text, status, days_past_due FROM loans WHERE id = $1`),
  };
}

/** The loan's stored state row: its physical version (a new one whenever it is written), digest and version. */
async function stateRow(): Promise<{ at: string; digest: string | null; version: string; current: boolean }> {
  const { rows } = await db.query<{ at: string; digest: string | null; version: string; current: boolean }>(
    `SELECT ctid::text || ':' || xmin::text AS at, output_digest AS digest, version,
            version = loanql_ledger_resume_version(account_id, id, state) AS current
       FROM ledger_resume_states WHERE account_id = $1 AND id = $2`,
    [accountId, loanId],
  );
  return rows[0]!;
}

const replayInFull = (): Promise<unknown> => db.query(`SELECT loanql_replay_loans_in_full(ARRAY[$1::uuid], ARRAY[$2::uuid])`, [accountId, loanId]);

describe('the output digest of a full replay (migration 0043)', () => {
  it('a full replay whose result is the stored one writes nothing, its state row included', async () => {
    await replayInFull();
    const first = await stateRow();
    assert.notEqual(first.digest, null);
    assert.equal(first.current, true);
    const ledger = await stored();
    await replayInFull();
    const second = await stateRow();
    assert.equal(second.at, first.at, 'the state row is not written again');
    assert.deepEqual(await stored(), ledger);
  });

  it('a row written since (by hand) is compared and repaired, and the digest stored again', async () => {
    const ledger = await stored();
    const writes: readonly string[] = [
      `UPDATE payment_allocations SET amount = amount + 0.01 WHERE loan_id = $1 AND position = 2`,
      `UPDATE schedules SET principal_paid = 0 WHERE loan_id = $1 AND number = 3`,
      `UPDATE fees SET paid = paid + 1 WHERE loan_id = $1`,
      `UPDATE loans SET interest_due = interest_due + 5 WHERE id = $1`,
      // the same values: a new row version, so not trusted (the compare finds nothing to write)
      `UPDATE payment_allocations SET amount = amount WHERE loan_id = $1`,
    ];
    for (const write of writes) {
      const before = await stateRow();
      await db.transaction(async (tx) => {
        await tx.query(`SELECT set_config('loanql.replaying', 'on', true)`);
        await tx.query(write, [loanId]);
      });
      await replayInFull();
      assert.deepEqual(await stored(), ledger, write);
      const after = await stateRow();
      assert.notEqual(after.at, before.at, `${write}: compared in full and stored again`);
      assert.equal(after.current, true, write);
      assert.equal(after.digest, before.digest, `${write}: the same result`);
    }
  });

  it('a resumed replay stores the version read from every row, and no digest; the next full replay stores one', async () => {
    await replayInFull();
    const dues = (await db.query<{ due: string }>(`SELECT due::text AS due FROM schedules WHERE loan_id = $1 AND number >= 5 ORDER BY number`, [loanId])).rows;
    // each a payment after the last: part of a row, the rest of it, a row and a half, one paying a late fee first
    const posts: readonly [string, string][] = [
      [dues[0]!.due, '300'],
      [dues[0]!.due, '766.19'],
      [dues[1]!.due, '1600'],
      [dues[3]!.due, '2000'],
    ];
    let resumed = 0;
    for (const [date, amount] of posts) {
      const calls = await db.transaction(async (tx) => {
        const count = async (): Promise<number> =>
          Number((await tx.query<{ n: string }>(`SELECT coalesce(pg_stat_get_xact_function_calls('loanql_replay_loans_in_full(uuid[], uuid[])'::regprocedure), 0) AS n`)).rows[0]!.n);
        const before = await count();
        await tx.query(`INSERT INTO payments (account_id, loan_id, date, amount) VALUES ($1, $2, $3, $4)`, [accountId, loanId, date, amount]);
        return (await count()) - before;
      });
      const state = await stateRow();
      assert.equal(state.current, true, `${amount} on ${date}: the version built from the parts written is the one read from every row`);
      if (calls === 0) {
        resumed += 1;
        assert.equal(state.digest, null, `${amount} on ${date}: resumed, so no digest`);
      }
    }
    assert.ok(resumed >= 2, `${resumed} of ${posts.length} resumed`);
    await replayInFull();
    const state = await stateRow();
    assert.notEqual(state.digest, null);
    assert.equal(state.current, true);
    // and what the writes stored is a full replay's
    const ledger = await stored();
    await db.query(`DELETE FROM ledger_resume_states WHERE id = $1`, [loanId]);
    await replayInFull();
    assert.deepEqual(await stored(), ledger);
  });

  it('a reversal replays in full: compared, written, the digest stored again', async () => {
    await replayInFull();
    const before = await stateRow();
    await db.query(
      `UPDATE payments SET date_reversed = date + 3, reversal_reason = 'nsf' WHERE id = (SELECT id FROM payments WHERE loan_id = $1 ORDER BY date, posted_at, id LIMIT 1 OFFSET 1)`,
      [loanId],
    );
    const after = await stateRow();
    assert.notEqual(after.digest, before.digest);
    assert.equal(after.current, true);
    const ledger = await stored();
    await db.query(`DELETE FROM ledger_resume_states WHERE id = $1`, [loanId]);
    await replayInFull();
    assert.deepEqual(await stored(), ledger, 'a replay with no state writes nothing more');
  });
});
