/**
 * A narrow covering index for the loan aggregates (issue 36: as fast as a server hand-written for
 * one lender): `loans_account_status_totals (account_id, status) INCLUDE (amount, rate)`.
 *
 * At 10,000 loans an account's counts per status and total amount (bench q4) read every loan:
 * PostgreSQL took a sequential scan of the wide `loans` heap (541 pages at scale 1: the ledger's
 * balances, delinquency fields, custom fields) over 0037's covering index, whose keys also carry
 * `created_at` and the uuid `id` for q2's order (308 pages). The single-lender server reads 208
 * narrow heap pages. This index is 74 pages for the same rows, and both aggregate shapes become
 * index-only scans of it: backend CPU per execution q4 2,617 → 1,615 µs (single-lender 2,120),
 * q3 1,715 → 1,414 µs (bench/README.md, "The single-lender server"). A loan's insert, and each update
 * that is not HOT (one that changes an indexed column, such as the ledger's `arrears_since`),
 * writes one more index entry. 0037's `INCLUDE (amount, rate)` on `loans_account_status_created` is left
 * as it is (q2's page still reads it; removing it would rebuild that index for a few pages).
 *
 * On a running database: one `CREATE INDEX` in the migration's transaction — a SHARE lock on
 * `loans` while it builds (reads go on; writes of loans wait, about a second per 10,000 loans),
 * no row touched.
 */
export const name = '0040_loan_status_totals_index';

export const sql = /* sql */ `
CREATE INDEX loans_account_status_totals ON loans (account_id, status) INCLUDE (amount, rate);
`;
