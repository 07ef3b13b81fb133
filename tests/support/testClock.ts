/**
 * A business date a test can set for every connection of its database (SPEC §12: the business
 * date is a day in the account's time zone). `loanql_business_date` already follows the setting
 * `loanql.business_date` (migration 0018), but a setting belongs to one session: on PGlite the
 * service and the test share that one session, on PostgreSQL the service's pool has many. So a
 * test that walks the calendar installs this clock: a one-row table in its own (throwaway)
 * database, which `loanql_business_date` reads after the setting and before the real day.
 */
import type { Queryable } from '../../db/index.js';

export async function installTestClock(db: Queryable): Promise<void> {
  await db.query(`CREATE TABLE IF NOT EXISTS loanql_test_clock (day date)`);
  await db.query(`DELETE FROM loanql_test_clock`);
  await db.query(`INSERT INTO loanql_test_clock (day) VALUES (NULL)`);
  await db.query(`CREATE OR REPLACE FUNCTION loanql_business_date(p_account uuid) RETURNS date
LANGUAGE sql STABLE AS $$
  SELECT coalesce(nullif(current_setting('loanql.business_date', true), '')::date,
                  (SELECT day FROM loanql_test_clock LIMIT 1),
                  (now() AT TIME ZONE coalesce((SELECT timezone FROM accounts WHERE id = p_account), 'UTC'))::date)
$$`);
}

/** Every connection's business date from now on (committed at once); null: the real day again. */
export async function setTestClock(db: Queryable, day: string | null): Promise<void> {
  await db.query(`UPDATE loanql_test_clock SET day = $1::date`, [day]);
}
