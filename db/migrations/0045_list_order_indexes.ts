/**
 * Indexes that give a loan's lists their order (issue 36; bench/README.md, "Lists as ARRAY
 * sublinks").
 *
 * A list the request does not order is ordered by the primary key (SPEC §5), and the engine
 * writes it as `ARRAY(SELECT … ORDER BY id)` (engine/sql/jsonText.ts, `jsonList`). Where the only
 * index on the parent's key stopped before `id`, PostgreSQL added a Sort node to the subplan — and
 * it starts every subplan's nodes at each execution of a statement, rows or none: about 16,000
 * instructions a list. With `id` after the parent's key the index gives the order and there is no
 * Sort. Measured with `bench/statementCallgrind.sh` on the scale-1 account: q1 (a loan with its
 * borrowers, next scheduled payment and addresses) 578 → 557 thousand instructions an execution,
 * q2 (a page of loans with their borrowers) 2,937 → 2,846 thousand, q1i 525 → 511 thousand.
 *
 * - `borrows_loan` and `address_details_loan`: new, `(account_id, loan_id, id)`. Both tables take
 *   a row when a loan gains a borrower or an address, so the extra index costs a write little.
 * - `schedules_next` (`(account_id, loan_id) WHERE is_next`, made in 0001) duplicated the unique
 *   `schedules_one_next` on the same columns and rows; it becomes `(account_id, loan_id, id)
 *   WHERE is_next`, so a payment that moves `is_next` maintains no more index entries than before.
 *
 * On a running database: built under a temporary name first (a SHARE lock: reads go on, writes to
 * that table wait for the build), the old `schedules_next` dropped and the new one renamed at the
 * end of the migration's one transaction. No row is touched.
 */
export const name = '0045_list_order_indexes';

export const sql = /* sql */ `
CREATE INDEX borrows_loan ON borrows (account_id, loan_id, id);
CREATE INDEX address_details_loan ON address_details (account_id, loan_id, id);
CREATE INDEX schedules_next_0045 ON schedules (account_id, loan_id, id) WHERE is_next;
DROP INDEX schedules_next;
ALTER INDEX schedules_next_0045 RENAME TO schedules_next;
`;
