import type { Database, Queryable } from '../db/index.js';
import { buildSchedule, ScheduleInputError, type Schedule, type ScheduleRow } from '../domain/schedule.js';
import { replaceSchedule, scheduleInputOf, type ScheduleColumns } from './loanWrites.js';

/**
 * `loanql schedules regenerate`: brings stored schedules up to the current rules of SPEC §7
 * (exact half-up payments, anchored month-end and semi-monthly dates, a schedule that ends at the
 * row paying the loan off). Loans are read in batches, each batch in one transaction with its
 * loans locked; a loan whose stored rows (as §7 made them: `scheduled_*`, not what the ledger's
 * replay made of them), `regular_payment` or `date_maturity` differ from what the rules give gets
 * new rows and derived values. Payments reference loans, not schedule rows,
 * so they are kept, and the database triggers set `is_next` again. Given values stay given. A
 * loan whose fields the rules now refuse (say a given Regular_Payment on an interest_only loan,
 * or a given Date_Maturity that is not the schedule's last date) is left as it is and listed.
 */

export interface RegenerationOptions {
  /** Only this account's loans; all accounts when absent. */
  readonly accountId?: string;
  /** Compare only; write nothing. */
  readonly dryRun: boolean;
  /** Loans per transaction. */
  readonly batchSize?: number;
}

export interface RegenerationReport {
  readonly checked: number;
  /** Loans whose schedule or derived values changed (or would, in a dry run). */
  readonly changed: number;
  readonly refused: readonly { readonly loanId: string; readonly reason: string }[];
}

interface StoredLoan extends ScheduleColumns {
  id: string;
  account_id: string;
}

type StoredRow = Omit<ScheduleRow, 'number'> & { loan_id: string; number: number };

/** The rows and derived values the current rules give a stored loan. */
type Expected = { readonly kind: 'ok'; readonly schedule: Schedule | null } | { readonly kind: 'refused'; readonly reason: string };

function expectedOf(loan: StoredLoan): Expected {
  const input = scheduleInputOf(loan);
  if (!input) return { kind: 'ok', schedule: null };
  try {
    const schedule = buildSchedule(input);
    if (loan.date_maturity_given && loan.date_maturity !== schedule.dateMaturity) {
      return { kind: 'refused', reason: `given Date_Maturity ${loan.date_maturity} is not the schedule's last due date ${schedule.dateMaturity}` };
    }
    return { kind: 'ok', schedule };
  } catch (error) {
    if (error instanceof ScheduleInputError) return { kind: 'refused', reason: error.message };
    throw error;
  }
}

function sameRows(stored: readonly StoredRow[], expected: readonly ScheduleRow[]): boolean {
  return (
    stored.length === expected.length &&
    stored.every((row, i) => {
      const want = expected[i]!;
      return (
        row.number === want.number &&
        row.due === want.due &&
        row.payment === want.payment &&
        row.principal === want.principal &&
        row.interest === want.interest &&
        row.balance === want.balance
      );
    })
  );
}

/** Regenerates the schedules that differ from the current rules; see the module comment. */
export async function regenerateSchedules(db: Database, options: RegenerationOptions): Promise<RegenerationReport> {
  const batchSize = options.batchSize ?? 500;
  let checked = 0;
  let changed = 0;
  const refused: { loanId: string; reason: string }[] = [];
  let after: { accountId: string; id: string } | null = null;
  for (;;) {
    // The batch's outcome is returned, never gathered into the loop's variables from inside: a
    // transaction undone as a deadlock runs again, whole (db/conflictRetry.ts).
    type Batch = { last: { accountId: string; id: string } | null; checked: number; changed: number; refused: { loanId: string; reason: string }[] };
    const batch: Batch = await db.transaction(async (tx) => {
      const loans = await lockBatch(tx, options.accountId ?? null, after, batchSize);
      if (loans.length === 0) return { last: null, checked: 0, changed: 0, refused: [] };
      const rowsByLoan = await storedRows(tx, loans);
      let batchChanged = 0;
      const batchRefused: { loanId: string; reason: string }[] = [];
      for (const loan of loans) {
        const expected = expectedOf(loan);
        if (expected.kind === 'refused') {
          batchRefused.push({ loanId: loan.id, reason: expected.reason });
          continue;
        }
        const { schedule } = expected;
        const regularPayment = loan.regular_payment_given ? loan.regular_payment : (schedule?.regularPayment ?? null);
        const dateMaturity = loan.date_maturity_given ? loan.date_maturity : (schedule?.dateMaturity ?? null);
        const rowsSame = sameRows(rowsByLoan.get(loan.id) ?? [], schedule?.rows ?? []);
        if (rowsSame && regularPayment === loan.regular_payment && dateMaturity === loan.date_maturity) continue;
        batchChanged += 1;
        if (options.dryRun) continue;
        if (!rowsSame) await replaceSchedule(tx, loan.account_id, loan.id, schedule);
        await tx.query(
          `UPDATE loans SET regular_payment = $3::numeric, date_maturity = $4::date WHERE account_id = $1 AND id = $2`,
          [loan.account_id, loan.id, regularPayment, dateMaturity],
        );
      }
      const last = loans[loans.length - 1]!;
      return { last: { accountId: last.account_id, id: last.id }, checked: loans.length, changed: batchChanged, refused: batchRefused };
    });
    if (batch.last === null) break;
    refused.push(...batch.refused);
    checked += batch.checked;
    changed += batch.changed;
    after = batch.last;
  }
  return { checked, changed, refused };
}

/** The next batch of loans in (account, id) order, locked against concurrent writes until the batch commits. */
async function lockBatch(tx: Queryable, accountId: string | null, after: { accountId: string; id: string } | null, limit: number): Promise<StoredLoan[]> {
  const { rows } = await tx.query<StoredLoan>(
    `SELECT id, account_id, amount::text AS amount, rate::text AS rate, term, frequency, amortization, regular_payment::text AS regular_payment,
            date_funded::text AS date_funded, first_payment_date::text AS first_payment_date, date_maturity::text AS date_maturity,
            regular_payment_given, date_maturity_given
       FROM loans
      WHERE ($1::uuid IS NULL OR account_id = $1::uuid)
        AND ($2::uuid IS NULL OR (account_id, id) > ($2::uuid, $3::uuid))
      ORDER BY account_id, id
      LIMIT $4
        FOR UPDATE`,
    [accountId, after?.accountId ?? null, after?.id ?? null, limit],
  );
  return rows;
}

/**
 * The stored schedule rows of these loans as §7 made them, by loan, in row order: the
 * `scheduled_*` columns. `payment`, `principal`, `interest` and `balance` are what the ledger's
 * replay made of them since (a payoff cuts a row's interest, a curtailment rebuilds the rows after
 * it; docs/ledger.md), so comparing those counted every loan paid off early or curtailed as out of
 * date on every run, and rewrote its rows for nothing.
 */
async function storedRows(tx: Queryable, loans: readonly StoredLoan[]): Promise<Map<string, StoredRow[]>> {
  const { rows } = await tx.query<StoredRow>(
    `SELECT loan_id, number, due::text AS due, scheduled_payment::text AS payment, scheduled_principal::text AS principal,
            scheduled_interest::text AS interest, scheduled_balance::text AS balance
       FROM schedules
      WHERE (account_id, loan_id) IN (SELECT * FROM unnest($1::uuid[], $2::uuid[]))
      ORDER BY loan_id, number`,
    [loans.map((loan) => loan.account_id), loans.map((loan) => loan.id)],
  );
  const byLoan = new Map<string, StoredRow[]>();
  for (const row of rows) {
    let list = byLoan.get(row.loan_id);
    if (!list) byLoan.set(row.loan_id, (list = []));
    list.push(row);
  }
  return byLoan;
}
