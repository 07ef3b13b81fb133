/**
 * The first key of an account's ledger-writers advisory lock, `(LEDGER_WRITERS_LOCK,
 * hashtext(account_id::text))` (migration 0067): every payment write takes it SHARE before it locks
 * a loan, a product's settings change EXCLUSIVE as its transaction's first statement, so the two
 * take turns instead of deadlocking. Its own module so that a start that applies no migration
 * loads none of their SQL.
 */
export const LEDGER_WRITERS_LOCK = 4242003;
