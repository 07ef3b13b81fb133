/**
 * `loans` keeps half of each page free, so that the writes that bring a loan forward are HOT
 * updates: a new row version on the same page, and no new entry in any of the table's indexes
 * (issue 36; bench/README.md, "Runs 8 and 9" and "Migration 0044").
 *
 * Every serviced loan is written every day: the daily fee job's forward UPDATE (0022: its
 * `ledger_as_of`, `interest_due`, `days_past_due`), and a payment's replay writes the loan's
 * balances. None of those columns is indexed, so each could be a HOT update — but only where the
 * row's page has room for the new version. At the default fillfactor (100) the pages are full, so
 * each write put the row on another page and added an entry to each of the seven indexes of
 * `loans`. Measured on a copy of the scale-1 database (10,000 loans, 6,976 serviced; PostgreSQL 15;
 * the table rewritten at each fillfactor, then the job run for four days with a VACUUM after each):
 *
 * | fillfactor | HOT updates, day 1 / days 2–4 | heap pages, fresh → day 4 | `loans_account_status_totals` pages | `loans_pkey` pages |
 * |---|---|---|---|---|
 * | 100 | 46 of 6,976 / 0.5–2 % | 289 → 495 | 74 → 121 → 184 → 228 → 228 | 63 → 123 |
 * | 70 | 49 % / 72–100 % | 417 → 579 | 74 → 100 | 63 → 114 |
 * | 60 | 72 % / 91–99 % | 487 → 589 | 74 → 88 | 63 |
 * | **50** | **100 % / 99.6 %** | **587 → 593** | **74, unchanged** | **63, unchanged** |
 *
 * At 100 the aggregates' index (0040) grew three-fold in four days; past about twice its size its
 * index-only scan costs more than reading the heap and q3/q4-style aggregates read the whole table
 * (bench run 8: q4 0.81 against the single-lender server after one day's job). At 50 the heap is a
 * fifth larger than at 100 once both have been updated (593 against 495 pages: an updated row's
 * old version takes room on either until it is pruned), the indexes stay as built, and the job
 * took 0.59 s a day against 0.64–0.83 s.
 *
 * The setting alone applies only to pages written from now on, so the table is rewritten here
 * (`CLUSTER`: the one rewrite allowed inside the migration's transaction; the order it leaves,
 * by `id`, means nothing and is not kept — `SET WITHOUT CLUSTER`). Its indexes are rebuilt with
 * it, compact. On a running database that is an ACCESS EXCLUSIVE lock on `loans` while it runs
 * (0.1 s per 10,000 loans): reads and writes of loans wait. No row changes.
 */
export const name = '0044_loans_fillfactor';

export const sql = /* sql */ `
ALTER TABLE loans SET (fillfactor = 50);
CLUSTER loans USING loans_pkey;
ALTER TABLE loans SET WITHOUT CLUSTER;
`;
