/**
 * The daily fee job records a day as done only when it left no loan behind it (`ledger_job_days.complete`).
 *
 * The job takes each batch of loans `FOR NO KEY UPDATE SKIP LOCKED` (0018, 0022): a loan another
 * transaction is writing is skipped, since that writer's replay brings it to the day. But a writer
 * that rolls back leaves the loan's stored ledger of its earlier day, and the job had already
 * recorded the day: every later run that day returned at once, and the loan's late fee and days
 * past due were a day behind until the next day's run (session 38's audit). Now a run that leaves
 * a loan behind (one it skipped is still of an earlier day after its batches; not one it refused as
 * too large to store) records the day with `complete = false` — its counts kept — and a later run
 * the same day (the service runs the job every 5 minutes) assesses the loans still behind, once
 * each (a loan at the day is not taken), and marks the day complete. A day counts as done only
 * when complete (`app/feeJob.ts`). Existing rows are complete; no row is rewritten.
 */
export const name = '0075_fee_job_day_complete';

export const sql = /* sql */ `
ALTER TABLE ledger_job_days ADD COLUMN complete boolean NOT NULL DEFAULT true;
COMMENT ON COLUMN ledger_job_days.complete IS
  'false: the run left loans behind (another transaction held them); the day is run again (migration 0075).';
`;
