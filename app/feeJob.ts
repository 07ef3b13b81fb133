import type { Database } from '../db/index.js';
import { isCalendarDay } from '../domain/calendar.js';
import { UserInputError } from './errors.js';

/**
 * The daily fee job (SPEC §12 R4: time alone creates late fees; R3: and moves loans between
 * delinquency buckets). For each account it brings every serviced loan's stored ledger to the
 * account's business date (its time zone, `loanql_business_date`), 1,000 loans per transaction
 * (`loanql_assess_fees_batch`, migration 0022): the loans the passing days can change (a late fee
 * falling due, a payment, fee or waiver dated after the stored day) are replayed, the others are
 * brought forward by one UPDATE (interest falling due, days past due, `ledger_as_of`) — the values
 * a replay would store (docs/ledger.md, "Bringing a ledger forward without a replay"). Then it
 * records the day — and every day missed since the last recorded one — in `ledger_job_days`, so a
 * day is done once per account: complete when no loan was left behind, else (a loan another
 * transaction held and did not bring to the day) incomplete, and the next run takes the loans still
 * behind (migration 0075).
 *
 * Idempotent: a recorded day is not run again, and a loan already at the day is not replayed; a
 * catch-up after downtime is one replay as of the target day (the replay derives each late fee
 * with its own date, so the fees and buckets equal those of running every day). Two processes
 * at once share the loans (SKIP LOCKED) and each fee is assessed once (the replay locks each
 * loan; a late fee is unique per loan and row). The service runs it beside its webhook worker
 * (`startFeeJob`), as does `loanql worker`; `loanql fees assess` runs it by hand.
 */
export const FEE_JOB = 'fees';
const BATCH = 1000;

export interface FeeJobRun {
  readonly accountId: string;
  readonly slug: string;
  /** The day the loans were brought to. */
  readonly asOf: string;
  /** The days recorded as done by this run (the missed ones and `asOf`); empty: already done. */
  readonly days: readonly string[];
  /** Loans replayed (the days could change more than their balances' dates). */
  readonly loansReplayed: number;
  /** Loans brought to the day without a replay (docs/ledger.md). */
  readonly loansForwarded: number;
  readonly feesAssessed: number;
  /** Sum of the fees assessed, exact (numeric as text). */
  readonly feesAmount: string;
  /**
   * Loans left as they were because their replay made an amount too large to store (a balance, the
   * credit or the fees past 999,999,999,999.99): their ids. The other loans are assessed; these are
   * tried again on the next day.
   */
  readonly loansRefused: readonly string[];
  /**
   * Loans still of an earlier day after the run, not refused: another transaction held them (SKIP
   * LOCKED) and did not bring them to the day (it rolled back, or has not committed yet). The day
   * is then recorded incomplete (`ledger_job_days.complete`, migration 0075) and left out of
   * `days`: the next run the same day assesses these loans, once each.
   */
  readonly loansSkipped: number;
}

export interface FeeJobOptions {
  /** Only this account (by slug). */
  readonly accountSlug?: string;
  /** Assess as of this day instead of each account's business date (not after it). */
  readonly asOf?: string;
}

/** Runs the job once over every account (or one); returns what each account's run did. */
export async function assessFees(db: Database, options: FeeJobOptions = {}): Promise<FeeJobRun[]> {
  if (options.asOf !== undefined && !isCalendarDay(options.asOf)) {
    throw new UserInputError(`--as-of: ${JSON.stringify(options.asOf)} is not a date (YYYY-MM-DD)`);
  }
  const { rows: accounts } = await db.query<{ id: string; slug: string; today: string; last_done: string | null }>(
    `SELECT a.id, a.slug, loanql_business_date(a.id)::text AS today,
            (SELECT max(d.business_date)::text FROM ledger_job_days d WHERE d.account_id = a.id AND d.job = $2 AND d.complete) AS last_done
       FROM accounts a WHERE $1::text IS NULL OR a.slug = $1 ORDER BY a.slug`,
    [options.accountSlug ?? null, FEE_JOB],
  );
  if (options.accountSlug !== undefined && accounts.length === 0) throw new UserInputError(`--account: no account ${JSON.stringify(options.accountSlug)}`);
  // Every account's day is checked before any is assessed: accounts in other time zones have
  // other business dates, and a refusal after the first accounts were assessed wrote their days.
  for (const account of accounts) {
    const asOf = options.asOf ?? account.today;
    if (asOf > account.today) throw new UserInputError(`--as-of: ${asOf} is after the business date of account ${account.slug} (${account.today}); fees are assessed for days that have begun`);
  }
  const runs: FeeJobRun[] = [];
  for (const account of accounts) runs.push(await assessAccount(db, account.id, account.slug, options.asOf ?? account.today, account.last_done));
  return runs;
}

interface BatchRow {
  readonly loans_taken: number;
  readonly loans_replayed: number;
  readonly loans_forwarded: number;
  readonly last_id: string | null;
  readonly fees_assessed: number;
  readonly fees_amount: string;
}

async function assessAccount(db: Database, accountId: string, slug: string, asOf: string, lastDone: string | null): Promise<FeeJobRun> {
  if (lastDone !== null && lastDone >= asOf) return { accountId, slug, asOf, days: [], loansReplayed: 0, loansForwarded: 0, feesAssessed: 0, feesAmount: '0.00', loansRefused: [], loansSkipped: 0 };
  let after: string | null = null;
  let loansReplayed = 0;
  let loansForwarded = 0;
  let feesAssessed = 0;
  const amounts: string[] = [];
  const loansRefused: string[] = [];
  // One loan whose replay makes an amount too large to store (SQLSTATE 22003: its late fees past
  // 999,999,999,999.99 under a product's fee near the largest amount) fails its whole batch, which
  // every run would take again: no fee for the other loans of the batch, the day never recorded,
  // and the accounts after this one never reached. So a failed batch is taken again one loan at a
  // time, up to the loan that fails, which is left as it was and named; then batches go on.
  let size = BATCH;
  for (;;) {
    let batch: BatchRow;
    try {
      // One statement in autocommit: undone as a deadlock (a mutation paying several of the
      // batch's loans in another order than the job's), it runs again (db/conflictRetry.ts).
      const result: { rows: BatchRow[] } = await db.query<BatchRow>(
        'SELECT loans_taken, loans_replayed, loans_forwarded, last_id, fees_assessed, fees_amount::text FROM loanql_assess_fees_batch($1, $2::date, $3::uuid, $4)',
        [accountId, asOf, after, size],
      );
      batch = result.rows[0]!;
    } catch (error) {
      if ((error as { code?: unknown }).code !== '22003') throw error;
      if (size > 1) {
        size = 1;
        continue;
      }
      const failed = await nextLoanToAssess(db, accountId, asOf, after);
      if (failed === null) throw error;
      loansRefused.push(failed);
      after = failed;
      size = BATCH;
      continue;
    }
    loansReplayed += Number(batch.loans_replayed);
    loansForwarded += Number(batch.loans_forwarded);
    feesAssessed += Number(batch.fees_assessed);
    amounts.push(batch.fees_amount);
    if (Number(batch.loans_taken) < size || batch.last_id === null) break;
    after = batch.last_id;
  }
  // A loan skipped because another transaction held it is still of an earlier day if that
  // transaction rolled back (or has not committed): the day is then recorded incomplete, and the
  // next run takes the loans still behind (migration 0075).
  const { rows: behind } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM loans l
      WHERE l.account_id = $1 AND l.status IN ('servicing', 'overpaid') AND (l.ledger_as_of IS NULL OR l.ledger_as_of < $2::date)
        AND NOT (l.id = ANY ($3::uuid[]))`,
    [accountId, asOf, loansRefused],
  );
  const loansSkipped = behind[0]!.n;
  // The day, and each day missed since the last recorded one (a first run records its day only).
  const { rows: recorded } = await db.query<{ business_date: string; fees_amount: string; complete: boolean }>(
    `WITH days AS (
       SELECT d::date AS business_date FROM generate_series(coalesce($3::date + 1, $2::date), $2::date, interval '1 day') AS d)
     INSERT INTO ledger_job_days AS j (account_id, job, business_date, loans_replayed, loans_forwarded, fees_assessed, fees_amount, complete)
     SELECT $1, $4, days.business_date,
            CASE WHEN days.business_date = $2::date THEN $5::integer ELSE 0 END,
            CASE WHEN days.business_date = $2::date THEN $8::integer ELSE 0 END,
            CASE WHEN days.business_date = $2::date THEN $6::integer ELSE 0 END,
            CASE WHEN days.business_date = $2::date THEN (SELECT coalesce(sum(x), 0) FROM unnest($7::numeric[]) AS x) ELSE 0 END,
            days.business_date < $2::date OR $9::boolean
       FROM days
     ON CONFLICT (account_id, job, business_date) DO UPDATE
       SET loans_replayed = j.loans_replayed + EXCLUDED.loans_replayed, loans_forwarded = j.loans_forwarded + EXCLUDED.loans_forwarded,
           fees_assessed = j.fees_assessed + EXCLUDED.fees_assessed,
           fees_amount = j.fees_amount + EXCLUDED.fees_amount,
           complete = j.complete OR EXCLUDED.complete
     RETURNING business_date::text, complete, (SELECT coalesce(sum(x), 0) FROM unnest($7::numeric[]) AS x)::numeric(14, 2)::text AS fees_amount`,
    [accountId, asOf, lastDone, FEE_JOB, loansReplayed, feesAssessed, amounts, loansForwarded, loansSkipped === 0],
  );
  const days = recorded.filter((row) => row.complete).map((row) => row.business_date).sort();
  return { accountId, slug, asOf, days, loansReplayed, loansForwarded, feesAssessed, feesAmount: recorded[0]?.fees_amount ?? '0.00', loansRefused, loansSkipped };
}

/** The loan a batch of one after `after` takes (`loanql_assess_fees_batch`'s choice: serviced, its ledger of an earlier day, by id). */
async function nextLoanToAssess(db: Database, accountId: string, asOf: string, after: string | null): Promise<string | null> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT l.id FROM loans l
      WHERE l.account_id = $1 AND ($3::uuid IS NULL OR l.id > $3) AND l.status IN ('servicing', 'overpaid')
        AND (l.ledger_as_of IS NULL OR l.ledger_as_of < $2::date)
      ORDER BY l.id LIMIT 1`,
    [accountId, asOf, after],
  );
  return rows[0]?.id ?? null;
}

export interface FeeJobLogger {
  info(object: Record<string, unknown>, message: string): void;
  warn(object: Record<string, unknown>, message: string): void;
}

/**
 * Runs `assessFees` a second from now and every `intervalMs` after (5 minutes: accounts in other
 * time zones begin their day at other hours; a tick with every account's day done is one small
 * query); returns a stop function that cancels the runs not begun and resolves once the one under
 * way (if any) has ended, so a caller can close the database after it.
 */
export function startFeeJob(db: Database, logger: FeeJobLogger, intervalMs = 5 * 60 * 1000): () => Promise<void> {
  let running: Promise<void> | null = null;
  let stopped = false;
  const tick = (): void => {
    if (running || stopped) return;
    running = assessFees(db)
      .then((runs) => {
        for (const run of runs) {
          if (run.days.length) logger.info({ account: run.slug, days: run.days, loans: run.loansReplayed, forwarded: run.loansForwarded, fees: run.feesAssessed, amount: run.feesAmount }, 'fee job: day assessed');
          if (run.loansSkipped) logger.info({ account: run.slug, day: run.asOf, loans: run.loansSkipped }, 'fee job: loans another transaction held are still behind the day; the next run assesses them');
          if (run.loansRefused.length) logger.warn({ account: run.slug, loans: run.loansRefused }, 'fee job: loans left as they were: their ledger makes an amount too large to store (past 999,999,999,999.99)');
        }
      })
      .catch((error: unknown) => logger.warn({ err: error }, 'the fee job failed; the next run tries again'))
      .finally(() => {
        running = null;
      });
  };
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  const first = setTimeout(tick, 1000);
  first.unref();
  return async () => {
    stopped = true;
    clearInterval(timer);
    clearTimeout(first);
    await running;
  };
}
