import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assessFees } from '../../app/feeJob.js';
import { insertLedgerLoan } from '../support/ledgerLoan.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';

/**
 * The fee job's `--as-of` (`loanql fees assess --as-of DATE`, app/feeJob.ts) over accounts whose
 * business dates differ: each account's day is a day in its own time zone (SPEC §12), so at any
 * hour an account in UTC+14 is a day or two ahead of one in UTC−11.
 */
let database: TestDatabase;

before(async () => {
  database = await openTestDatabase();
});
after(() => database?.close());

describe('fees assess --as-of over accounts in different time zones', () => {
  it('a day after one account\'s business date is refused before any account is assessed: nothing is written', async () => {
    const db = database.db;
    // Alphabetical: the job takes `a-kiritimati` (UTC+14) first, then `b-pago-pago` (UTC−11).
    const ahead = await insertLedgerLoan(db, 'a-kiritimati');
    const behind = await insertLedgerLoan(db, 'b-pago-pago');
    await db.query(`UPDATE accounts SET timezone = 'Pacific/Kiritimati' WHERE id = $1`, [ahead.accountId]);
    await db.query(`UPDATE accounts SET timezone = 'Pacific/Pago_Pago' WHERE id = $1`, [behind.accountId]);
    const today = async (accountId: string): Promise<string> => (await db.query<{ day: string }>(`SELECT loanql_business_date($1)::text AS day`, [accountId])).rows[0]!.day;
    const aheadDay = await today(ahead.accountId);
    assert.ok(aheadDay > (await today(behind.accountId)), 'Kiritimati is always a day or more ahead of Pago Pago');

    const written = async (): Promise<string> =>
      JSON.stringify(
        (
          await db.query(
            `SELECT (SELECT count(*) FROM ledger_job_days)::int AS days, (SELECT count(*) FROM fees)::int AS fees,
                    (SELECT json_agg(ledger_as_of ORDER BY id) FROM loans)::text AS as_of`,
          )
        ).rows[0],
      );
    const before = await written();
    await assert.rejects(assessFees(db, { asOf: aheadDay }), /--as-of: \d{4}-\d\d-\d\d is after the business date of account b-pago-pago/);
    // Before: account a-kiritimati was assessed (its day recorded, its loan brought to the day) and
    // only then was the command refused for b-pago-pago, exiting 2 as a mistake.
    assert.equal(await written(), before);

    // Each account alone, or no --as-of, is fine.
    const [run] = await assessFees(db, { accountSlug: 'a-kiritimati', asOf: aheadDay });
    assert.deepEqual(run!.days, [aheadDay]);
  });
});
