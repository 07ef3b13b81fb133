import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { updateAccount } from '../../app/accounts.js';
import { assessFees } from '../../app/feeJob.js';
import { insertLedgerLoan } from '../support/ledgerLoan.js';
import { installTestClock, setTestClock } from '../support/testClock.js';
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

describe("an account's time zone put back a day (Pacific/Kiritimati to Pacific/Honolulu) after the fee job ran", () => {
  it('the days recorded after the new business date are run again when they come: a loan a payment brought back is brought forward', async () => {
    const db = database.db;
    const { accountId, loanId } = await insertLedgerLoan(db, 'c-kiritimati');
    await updateAccount(db, 'c-kiritimati', { timezone: 'Pacific/Kiritimati' });
    const businessDate = async (): Promise<string> => (await db.query<{ day: string }>(`SELECT loanql_business_date($1)::text AS day`, [accountId])).rows[0]!.day;
    const ledgerAsOf = async (): Promise<string> => (await db.query<{ day: string }>(`SELECT ledger_as_of::text AS day FROM loans WHERE id = $1`, [loanId])).rows[0]!.day;
    const kiritimatiDay = await businessDate();
    const [first] = await assessFees(db, { accountSlug: 'c-kiritimati' });
    assert.deepEqual(first!.days, [kiritimatiDay]);
    assert.equal(await ledgerAsOf(), kiritimatiDay);

    // The lender corrects the zone: UTC−10 is always the day before UTC+14.
    await updateAccount(db, 'c-kiritimati', { timezone: 'Pacific/Honolulu' });
    const honoluluDay = await businessDate();
    assert.ok(honoluluDay < kiritimatiDay, `${honoluluDay} is the day before ${kiritimatiDay}`);
    const [backDay] = await assessFees(db, { accountSlug: 'c-kiritimati' });
    assert.deepEqual([backDay!.loansReplayed, backDay!.loansForwarded, await ledgerAsOf()], [0, 0, kiritimatiDay], 'a loan of a later day is left as it is');
    // A payment dated the new "today" replays the loan to that day.
    await db.query(`INSERT INTO payments (account_id, loan_id, date, amount) VALUES ($1, $2, $3, 1066.19)`, [accountId, loanId, honoluluDay]);
    assert.equal(await ledgerAsOf(), honoluluDay);

    // The next day in Honolulu is the day the job did in Kiritimati: it runs again and brings the loan to it.
    await installTestClock(db);
    await setTestClock(db, kiritimatiDay);
    const [next] = await assessFees(db, { accountSlug: 'c-kiritimati' });
    // Before: the day counted as done ("already assessed") and the loan stayed of the day before,
    // its interest due and days past due a day behind, until the day after.
    assert.deepEqual(next!.days, [kiritimatiDay]);
    assert.equal(await ledgerAsOf(), kiritimatiDay);
    assert.deepEqual((await assessFees(db, { accountSlug: 'c-kiritimati' }))[0]!.days, [], 'and once only');
    await setTestClock(db, null);
  });
});
