import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Database } from '../../db/index.js';
import { assessFees } from '../../app/feeJob.js';
import { buildSchedule } from '../../domain/schedule.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';

/**
 * SPEC §12 R4: time alone creates fees and makes interest due; the daily job (app/feeJob.ts, run
 * by the service beside its worker, by `loanql worker`, and by `loanql fees assess` or its alias
 * `loanql ledger refresh`) brings every serviced loan whose stored ledger is of an earlier day
 * than its account's business date (the account's time zone) to that day.
 */
let database: TestDatabase;
let db: Database;
let accountId: string;

before(async () => {
  database = await openTestDatabase();
  db = database.db;
  accountId = (await db.query<{ id: string }>(`INSERT INTO accounts (slug, name) VALUES ('ledger-refresh', 'r') RETURNING id`)).rows[0]!.id;
});
after(() => database?.close());

async function loanDueFrom(firstDue: string): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO loans (account_id, name, amount, status, rate, term, frequency, first_payment_date) VALUES ($1, 'r', 12000, 'servicing', 12, 12, 'monthly', $2) RETURNING id`,
    [accountId, firstDue],
  );
  const id = rows[0]!.id;
  const schedule = buildSchedule({ amount: '12000', rate: '12', term: 12, frequency: 'monthly', firstPaymentDate: firstDue, amortization: 'amortizing' } as never);
  for (const row of schedule.rows) {
    await db.query(`INSERT INTO schedules (account_id, loan_id, number, due, payment, principal, interest, balance) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, [
      accountId, id, row.number, row.due, row.payment, row.principal, row.interest, row.balance,
    ]);
  }
  return id;
}

describe('The ledger refresh for the business date (SPEC §12 R4)', () => {
  it('replays a loan whose stored day has passed: its late fees and interest due catch up, and a second run does nothing', async () => {
    const loan = await loanDueFrom('2026-01-01');
    const stored = async () => (await db.query<{ fees: number; interest_due: string; as_of: string }>(
      `SELECT (SELECT count(*)::int FROM fees f WHERE f.loan_id = l.id) AS fees, interest_due::text, ledger_as_of::text AS as_of FROM loans l WHERE id = $1`, [loan])).rows[0]!;
    const now = await stored();
    assert.ok(now.fees >= 1, 'fees accrued up to today');
    // As if the ledger had last run on 2026-01-05: nothing was due yet.
    await db.query(`SELECT set_config('loanql.replaying', 'on', false)`);
    await db.query(`DELETE FROM fees WHERE loan_id = $1`, [loan]);
    await db.query(`UPDATE loans SET interest_due = 0, ledger_as_of = '2026-01-05' WHERE id = $1`, [loan]);
    await db.query(`SELECT set_config('loanql.replaying', 'off', false)`);
    assert.deepEqual([(await stored()).fees, (await stored()).interest_due], [0, '0.00']);
    const run = async () => (await assessFees(db, { accountSlug: 'ledger-refresh' }))[0]!;
    assert.ok((await run()).loansReplayed >= 1);
    assert.deepEqual(await stored(), now);
    const again = await run();
    assert.equal(again.loansReplayed + again.loansForwarded, 0, 'nothing is stale any more');
  });

  it('takes the business date in the account\'s time zone', async () => {
    const { rows } = await db.query<{ utc: string; kiritimati: string }>(
      `SELECT loanql_business_date($1)::text AS utc, (now() AT TIME ZONE 'Pacific/Kiritimati')::date::text AS kiritimati`, [accountId]);
    await db.query(`UPDATE accounts SET timezone = 'Pacific/Kiritimati' WHERE id = $1`, [accountId]);
    const after = (await db.query<{ day: string }>(`SELECT loanql_business_date($1)::text AS day`, [accountId])).rows[0]!.day;
    assert.equal(after, rows[0]!.kiritimati);
    await db.query(`UPDATE accounts SET timezone = 'UTC' WHERE id = $1`, [accountId]);
  });
});
