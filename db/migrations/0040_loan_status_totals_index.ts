/**
 * The loan aggregates get an index of their own, and the status list its narrow index back
 * (issue 36: as fast as a server hand-written for one lender). Measured at scale 1 (10,000 loans,
 * PostgreSQL 15; backend CPU per execution from /proc, bench/README.md, "The single-lender server"):
 *
 * - `loans_account_status_totals (account_id, status) INCLUDE (amount, rate)`, new: an account's
 *   counts per status and total amount (bench q4) read every loan, and PostgreSQL took a
 *   sequential scan of the wide `loans` heap (541 pages: the ledger's balances, delinquency
 *   fields, custom fields) over 0037's covering index, whose keys also carry `created_at` and the
 *   uuid `id` (308 pages). This index holds the same rows in 74 pages and both aggregate shapes
 *   become index-only scans of it: q4 2,046 → 1,488 µs (the single-lender server's heap scan
 *   2,084 µs), q3 1,975 → 1,332 µs.
 * - `loans_account_status_created` is rebuilt as 0001 made it, `(account_id, status, created_at
 *   DESC, id)`, without 0037's `INCLUDE (amount, rate)` (the aggregates now read the index above).
 *   The wider index had cost PostgreSQL's estimate enough that q2 (servicing loans, newest first,
 *   `LIMIT 20 OFFSET 40`) was planned on `loans_account_created` with `status` as a filter: 635
 *   index rows and 801 buffers for 60 (the newest loans are leads, which the estimate does not
 *   know), against 60 rows and 222 buffers on this one: 617 → 487 µs.
 *
 * A loan's insert, and each update that is not HOT (one that changes an indexed column, such as
 * the ledger's `arrears_since`), writes one more index entry than before 0037.
 *
 * On a running database, as 0037: each index is built first (a SHARE lock on `loans`: reads go
 * on, writes of loans wait, about a second per 10,000 loans), then the old one is dropped and the
 * new one takes its name at the end of the migration's one transaction. No row is touched.
 */
export const name = '0040_loan_status_totals_index';

export const sql = /* sql */ `
CREATE INDEX loans_account_status_totals ON loans (account_id, status) INCLUDE (amount, rate);
CREATE INDEX loans_account_status_created_0040 ON loans (account_id, status, created_at DESC, id);
DROP INDEX loans_account_status_created;
ALTER INDEX loans_account_status_created_0040 RENAME TO loans_account_status_created;
`;
