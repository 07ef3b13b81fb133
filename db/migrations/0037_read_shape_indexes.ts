/**
 * Indexes shaped like the reads (issue 36: as fast as a server hand-written for one lender).
 *
 * Measured with `EXPLAIN (ANALYZE, BUFFERS)` of the engine's statements against those of a
 * server written for one lender on the same data (bench/README.md, "The single-lender server"):
 * where loanql touched more pages or sorted rows, it was not the tenant column in itself but
 * indexes that stopped one column short of the query's order or columns.
 *
 * - `loans_account_status_created` gains `INCLUDE (amount, rate)`: q3 (`loans_aggregate` of one
 *   status: count, sum of amount, avg/min/max of rate) and q4 (counts per status, count and sum
 *   of amount over the account) become index-only scans of the account's range — about a quarter
 *   of the pages of the sequential scan of the wide `loans` rows (ledger columns, custom fields)
 *   they were. The same index still serves q2's "status, newest first" page; one index, not two,
 *   so writes of a loan maintain no more indexes than before.
 *   (0040 undoes this: at scale 1 the wider index turned q2 to another plan, and the aggregates
 *   got a narrow index of their own.)
 * - Every ordered list ends with the primary key (SPEC §5), so an index that stops before `id`
 *   made PostgreSQL read ALL of a parent's rows and sort them even under a LIMIT (q1's "last 5
 *   payments" read all ~90–130 of the loan's payments from the heap for 5). With `id` last the
 *   index gives the order and a LIMIT stops after its rows:
 *   `payments_loan_date` (q1, q7, q8), `valuations_address_date` (q1, q8), `tasks_due_open` (q6,
 *   same predicate, so its constant stays in the engine's text), `comments_loan` (q8) and
 *   `tasks_loan` (q8; still the index of the tasks' foreign key to loans).
 *
 * On a running database: each index is built under the name `<name>_0037` first (a SHARE lock:
 * reads go on, writes to that table wait for the build), then the old index is dropped and the
 * new one takes its name, at the end of the migration's one transaction, so the exclusive locks
 * the drops take last only from there to the commit. No row is touched.
 */
export const name = '0037_read_shape_indexes';

export const sql = /* sql */ `
CREATE INDEX loans_account_status_created_0037 ON loans (account_id, status, created_at DESC, id) INCLUDE (amount, rate);
CREATE INDEX payments_loan_date_0037 ON payments (account_id, loan_id, date DESC, id);
CREATE INDEX valuations_address_date_0037 ON valuations (account_id, address_id, report_date DESC, id);
CREATE INDEX tasks_due_open_0037 ON tasks (account_id, date_due, id) WHERE status <> 'completed';
CREATE INDEX comments_loan_0037 ON comments (account_id, loan_id, created_at, id);
CREATE INDEX tasks_loan_0037 ON tasks (account_id, loan_id, id);

DROP INDEX loans_account_status_created;
DROP INDEX payments_loan_date;
DROP INDEX valuations_address_date;
DROP INDEX tasks_due_open;
DROP INDEX comments_loan;
DROP INDEX tasks_loan;

ALTER INDEX loans_account_status_created_0037 RENAME TO loans_account_status_created;
ALTER INDEX payments_loan_date_0037 RENAME TO payments_loan_date;
ALTER INDEX valuations_address_date_0037 RENAME TO valuations_address_date;
ALTER INDEX tasks_due_open_0037 RENAME TO tasks_due_open;
ALTER INDEX comments_loan_0037 RENAME TO comments_loan;
ALTER INDEX tasks_loan_0037 RENAME TO tasks_loan;
`;
