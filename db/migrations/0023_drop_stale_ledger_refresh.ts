/**
 * `loanql_refresh_stale_ledgers` (0012) replayed every serviced loan whose stored day had passed,
 * for the 15-minute refresh the daily fee job replaced (0018, 0022). Left in place it was a
 * second way to move ledgers to a new day that records no day in `ledger_job_days` and knows no
 * forward path: `loanql fees assess` (alias `loanql ledger refresh`) is the one way now.
 */
export const name = '0023_drop_stale_ledger_refresh';

export const sql = /* sql */ `
DROP FUNCTION loanql_refresh_stale_ledgers(integer);
`;
