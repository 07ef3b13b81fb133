/**
 * The ledger tests' loan, written straight into a database (no service): an account of its own
 * with a default product, a 12-month amortizing loan of 12,000 at 12 % funded 2026-01-15, its
 * schedule from `domain/schedule.ts`, and payments of rows 1–3 on their due dates and row 4 twenty
 * days late (a late fee). For tests of what a replay stores and skips (`db/ledgerSkip`,
 * `db/ledgerDigest`).
 */
import type { Queryable } from '../../db/index.js';
import { buildSchedule } from '../../domain/schedule.js';

export interface LedgerLoan {
  readonly accountId: string;
  readonly loanId: string;
}

/** Writes the loan above into an account `slug`; `nsfFee` sets the default product's NSF fee (0 when absent, the column's default). */
export async function insertLedgerLoan(db: Queryable, slug: string, options: { nsfFee?: number } = {}): Promise<LedgerLoan> {
  const accountId = (await db.query<{ id: string }>(`INSERT INTO accounts (slug, name) VALUES ($1, $1) RETURNING id`, [slug])).rows[0]!.id;
  await db.query(`INSERT INTO products (account_id, name, is_default, nsf_fee) VALUES ($1, 'Default', true, $2)`, [accountId, options.nsfFee ?? 0]);
  const loanId = (
    await db.query<{ id: string }>(
      `INSERT INTO loans (account_id, name, amount, status, rate, term, frequency, first_payment_date, date_funded)
       VALUES ($1, $2, 12000, 'servicing', 12, 12, 'monthly', '2026-02-15', '2026-01-15') RETURNING id`,
      [accountId, slug],
    )
  ).rows[0]!.id;
  const schedule = buildSchedule({ amount: '12000', rate: '12', term: 12, frequency: 'monthly', firstPaymentDate: '2026-02-15', amortization: 'amortizing' } as never);
  for (const row of schedule.rows) {
    await db.query(`INSERT INTO schedules (account_id, loan_id, number, due, payment, principal, interest, balance) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, [
      accountId, loanId, row.number, row.due, row.payment, row.principal, row.interest, row.balance,
    ]);
  }
  // Rows 1–3 paid on time, row 4 late (a late fee).
  await db.query(
    `INSERT INTO payments (account_id, loan_id, date, amount)
     SELECT account_id, loan_id, CASE WHEN number = 4 THEN due + 20 ELSE due END, payment FROM schedules WHERE loan_id = $1 AND number <= 4`,
    [loanId],
  );
  return { accountId, loanId };
}
