import type { Database, Queryable } from '../db/index.js';

/**
 * `loanql ledger verify` and `loanql ledger rebuild` (SPEC §12, issue 29).
 *
 * Verify: for every loan, the ledger is computed afresh with `loanql_ledger` (migration 0012) as of
 * the day the stored replay uses — the later of the account's business date and the loan's last
 * non-reversed payment — and compared with what is stored: the allocation lines in position order
 * (payment, row, fee, component, amount), the loan's balances, its status and `date_closed` (R9, as
 * `loanql_replay_loans` derives them from the stored status), each schedule row's effective
 * interest, principal, payment and balance, what it has been paid and `is_next`, and each fee's
 * `paid` and `waived`. Loans are read in batches (keyset on account and id); each batch is one
 * statement, so the stored rows and the fresh ledger come from one snapshot and a write committed
 * meanwhile cannot show up as a difference. Nothing is locked or written.
 *
 * A loan with nothing to replay — no schedule row, payment or fee — has never been replayed (no
 * trigger fires for a loan alone: a lead without terms) and keeps null balances; that is not
 * reported (a rebuild fills them in: principal outstanding = amount, nothing due).
 *
 * Values that depend on the day (`interest_due`, fees that fall due, what credit pays of them)
 * were stored as of the loan's last write: when the business date has since passed a due date or
 * a fee's date with no write to the loan, verify reports them as differing, and rebuild brings
 * them up to the day.
 *
 * Rebuild: every loan replayed in full (`loanql_refresh_next`, which locks the batch's loans FOR NO KEY
 * UPDATE in id order, as every writer does, after the batch's `ledger_fingerprints` and
 * `ledger_resume_states` are deleted, so no replay is skipped or resumed: migrations 0032, 0034), one
 * transaction per batch.
 */

export interface LedgerScope {
  /** Only this account's loans; every account's when absent. */
  readonly accountId?: string;
  /** Loans per batch (one statement for verify, one transaction for rebuild). */
  readonly batchSize?: number;
  /** Called after each batch with the loans done so far. */
  readonly onProgress?: (done: number) => void;
}

/** One stored value that differs from the fresh replay (null: no such stored row / no such replayed row). */
export interface LedgerDifference {
  readonly what: string;
  readonly stored: string | null;
  readonly replay: string | null;
}

export interface LoanLedgerDifferences {
  readonly accountId: string;
  readonly accountSlug: string;
  readonly loanId: string;
  readonly loanName: string | null;
  /** In order: balances and status, allocation lines, schedule rows, fees. */
  readonly differences: readonly LedgerDifference[];
}

export interface LedgerVerifyReport {
  readonly checked: number;
  readonly differing: readonly LoanLedgerDifferences[];
}

export interface LedgerRebuildReport {
  readonly replayed: number;
  readonly batches: number;
}

const DEFAULT_BATCH = 500;

type LoanKey = { readonly accountId: string; readonly id: string };

/** The next batch of loans in (account, id) order after `after`. */
async function nextBatch(db: Queryable, accountId: string | null, after: LoanKey | null, limit: number): Promise<LoanKey[]> {
  const { rows } = await db.query<{ account_id: string; id: string }>(
    `SELECT account_id, id FROM loans
      WHERE ($1::uuid IS NULL OR account_id = $1::uuid)
        AND ($2::uuid IS NULL OR (account_id, id) > ($2::uuid, $3::uuid))
      ORDER BY account_id, id
      LIMIT $4`,
    [accountId, after?.accountId ?? null, after?.id ?? null, limit],
  );
  return rows.map((row) => ({ accountId: row.account_id, id: row.id }));
}

/**
 * Every stored value of these loans that differs from a fresh replay, one row per value, in the
 * order (account, loan, part, place). The expected status is the replay's own rule (`loanql_ledger_status`, 0012).
 */
const DIFFERENCES_SQL = /* sql */ `
WITH b AS MATERIALIZED (
  SELECT l.account_id, l.id, l.status, l.date_closed, l.principal_outstanding, l.interest_due, l.fees_due, l.credit_balance, l.oldest_unpaid_due,
         loanql_ledger(l.account_id, l.id, loanql_stored_as_of(l.account_id, l.id)) AS r,
         -- never replayed: no schedule row, payment or fee was ever written for it, so no trigger ran
         (l.principal_outstanding IS NULL AND l.interest_due IS NULL AND l.fees_due IS NULL AND l.credit_balance IS NULL
          AND NOT EXISTS (SELECT 1 FROM schedules sc WHERE sc.account_id = l.account_id AND sc.loan_id = l.id)
          AND NOT EXISTS (SELECT 1 FROM payments py WHERE py.account_id = l.account_id AND py.loan_id = l.id)
          AND NOT EXISTS (SELECT 1 FROM fees fe WHERE fe.account_id = l.account_id AND fe.loan_id = l.id)) AS never_replayed
    FROM loans l
   WHERE (l.account_id, l.id) IN (SELECT * FROM unnest($1::uuid[], $2::uuid[]))
),
e AS MATERIALIZED (
  SELECT b.*, st.new_status AS want_status, st.new_closed AS want_closed
    FROM b CROSS JOIN LATERAL loanql_ledger_status(b.status, b.date_closed, (b.r).settled, (b.r).credit_balance, (b.r).settled_on) st
   WHERE NOT (b.r IS NULL)  -- a composite IS NOT NULL only when every field is
)
-- the loan's balances and status
SELECT e.account_id, e.id AS loan_id, 1 AS part, v.place, v.what, v.stored, v.replay
  FROM e CROSS JOIN LATERAL (VALUES
    (1, 'principal_outstanding', e.principal_outstanding::text, ((e.r).principal_outstanding)::numeric(14, 2)::text),
    (2, 'interest_due', e.interest_due::text, ((e.r).interest_due)::numeric(14, 2)::text),
    (3, 'fees_due', e.fees_due::text, ((e.r).fees_due)::numeric(14, 2)::text),
    (4, 'credit_balance', e.credit_balance::text, ((e.r).credit_balance)::numeric(14, 2)::text),
    (5, 'oldest_unpaid_due', e.oldest_unpaid_due::text, ((e.r).oldest_unpaid_due)::text),
    (6, 'status', e.status, e.want_status),
    (7, 'date_closed', e.date_closed::text, e.want_closed::text)
  ) AS v(place, what, stored, replay)
 WHERE v.stored IS DISTINCT FROM v.replay AND NOT (e.never_replayed AND v.place <= 4)
UNION ALL
-- the allocation lines, by position
SELECT e.account_id, e.id, 2, d.position, 'allocation line ' || d.position, d.stored, d.replay
  FROM e CROSS JOIN LATERAL (
    SELECT coalesce(a.position, u.position)::integer AS position,
           CASE WHEN a.position IS NOT NULL THEN
             concat_ws(' ', a.component, a.amount::text, 'payment ' || a.payment_id, 'row ' || a.row_number, 'fee ' || a.fee_id) END AS stored,
           CASE WHEN u.position IS NOT NULL THEN
             concat_ws(' ', u.component, u.amount::numeric(14, 2)::text, 'payment ' || u.payment_id, 'row ' || u.row_number, 'fee ' || u.fee_id) END AS replay
      FROM (SELECT * FROM payment_allocations pa WHERE pa.account_id = e.account_id AND pa.loan_id = e.id) a
      FULL JOIN unnest((e.r).line_payment, (e.r).line_row, (e.r).line_fee, (e.r).line_component, (e.r).line_amount)
                WITH ORDINALITY AS u(payment_id, row_number, fee_id, component, amount, position)
        ON a.position = u.position
     WHERE (a.payment_id, a.row_number, a.fee_id, a.component, a.amount) IS DISTINCT FROM (u.payment_id, u.row_number, u.fee_id, u.component, u.amount)
  ) d
UNION ALL
-- the schedule's effective rows, what each has been paid, is_next
SELECT e.account_id, e.id, 3, d.number * 10 + v.place, rtrim('schedule row ' || d.number || ' ' || v.what), v.stored, v.replay
  FROM e CROSS JOIN LATERAL (
    SELECT coalesce(s.number, u.number) AS number, s.number IS NOT NULL AS has_s, u.number IS NOT NULL AS has_u,
           s.interest AS s_interest, s.principal AS s_principal, s.payment AS s_payment, s.balance AS s_balance,
           s.interest_paid AS s_interest_paid, s.principal_paid AS s_principal_paid, s.is_next AS s_is_next,
           u.interest AS u_interest, u.principal AS u_principal, u.balance AS u_balance,
           u.interest_paid AS u_interest_paid, u.principal_paid AS u_principal_paid
      FROM (SELECT * FROM schedules sc WHERE sc.account_id = e.account_id AND sc.loan_id = e.id) s
      FULL JOIN unnest((e.r).row_number, (e.r).row_interest, (e.r).row_principal, (e.r).row_balance, (e.r).row_interest_paid, (e.r).row_principal_paid)
                AS u(number, interest, principal, balance, interest_paid, principal_paid)
        ON s.number = u.number
  ) d
  CROSS JOIN LATERAL (VALUES
    (0, '', CASE WHEN d.has_s THEN 'a row' END, CASE WHEN d.has_u THEN 'a row' END),
    (1, 'interest', d.s_interest::text, d.u_interest::numeric(14, 2)::text),
    (2, 'principal', d.s_principal::text, d.u_principal::numeric(14, 2)::text),
    (3, 'payment', d.s_payment::text, (d.u_interest + d.u_principal)::numeric(14, 2)::text),
    (4, 'balance', d.s_balance::text, d.u_balance::numeric(14, 2)::text),
    (5, 'interest_paid', d.s_interest_paid::text, d.u_interest_paid::numeric(14, 2)::text),
    (6, 'principal_paid', d.s_principal_paid::text, d.u_principal_paid::numeric(14, 2)::text),
    (7, 'is_next', d.s_is_next::text, CASE WHEN d.has_u THEN (e.want_status = 'servicing' AND d.number IS NOT DISTINCT FROM (e.r).next_row)::text END)
  ) AS v(place, what, stored, replay)
 WHERE v.stored IS DISTINCT FROM v.replay AND (v.place = 0 OR (d.has_s AND d.has_u))
UNION ALL
-- each fee's paid and waived
SELECT e.account_id, e.id, 4, d.ord * 10 + v.place, rtrim('fee ' || d.id || ' ' || v.what), v.stored, v.replay
  FROM e CROSS JOIN LATERAL (
    SELECT coalesce(f.id, u.id) AS id, coalesce(u.ord, 0)::integer AS ord, f.id IS NOT NULL AS has_f, u.id IS NOT NULL AS has_u,
           f.paid AS f_paid, f.waived AS f_waived, u.paid AS u_paid, u.waived AS u_waived
      FROM (SELECT * FROM fees fe WHERE fe.account_id = e.account_id AND fe.loan_id = e.id) f
      FULL JOIN unnest((e.r).fee_id, (e.r).fee_paid, (e.r).fee_waived) WITH ORDINALITY AS u(id, paid, waived, ord) ON f.id = u.id
  ) d
  CROSS JOIN LATERAL (VALUES
    (0, '', CASE WHEN d.has_f THEN 'a fee' END, CASE WHEN d.has_u THEN 'a fee' END),
    (1, 'paid', d.f_paid::text, d.u_paid::numeric(14, 2)::text),
    (2, 'waived', d.f_waived::text, d.u_waived::numeric(14, 2)::text)
  ) AS v(place, what, stored, replay)
 WHERE v.stored IS DISTINCT FROM v.replay AND (v.place = 0 OR (d.has_f AND d.has_u))
ORDER BY 1, 2, 3, 4`;

interface DifferenceRow {
  account_id: string;
  loan_id: string;
  what: string;
  stored: string | null;
  replay: string | null;
}

/** Compares every loan's stored ledger with a fresh replay; see the module comment. */
export async function verifyLedgers(db: Database, scope: LedgerScope = {}): Promise<LedgerVerifyReport> {
  const batchSize = scope.batchSize ?? DEFAULT_BATCH;
  let checked = 0;
  const found = new Map<string, { accountId: string; loanId: string; differences: LedgerDifference[] }>();
  let after: LoanKey | null = null;
  for (;;) {
    const loans = await nextBatch(db, scope.accountId ?? null, after, batchSize);
    if (loans.length === 0) break;
    const { rows } = await db.query<DifferenceRow>(DIFFERENCES_SQL, [loans.map((loan) => loan.accountId), loans.map((loan) => loan.id)]);
    for (const row of rows) {
      let loan = found.get(row.loan_id);
      if (!loan) found.set(row.loan_id, (loan = { accountId: row.account_id, loanId: row.loan_id, differences: [] }));
      loan.differences.push({ what: row.what, stored: row.stored, replay: row.replay });
    }
    checked += loans.length;
    after = loans[loans.length - 1]!;
    scope.onProgress?.(checked);
  }
  const names = new Map<string, { slug: string; name: string | null }>();
  if (found.size > 0) {
    const ids = [...found.values()];
    const { rows } = await db.query<{ id: string; slug: string; name: string | null }>(
      `SELECT l.id, a.slug, l.name FROM loans l JOIN accounts a ON a.id = l.account_id
        WHERE (l.account_id, l.id) IN (SELECT * FROM unnest($1::uuid[], $2::uuid[]))`,
      [ids.map((loan) => loan.accountId), ids.map((loan) => loan.loanId)],
    );
    for (const row of rows) names.set(row.id, { slug: row.slug, name: row.name });
  }
  const differing = [...found.values()].map((loan) => ({
    accountId: loan.accountId,
    accountSlug: names.get(loan.loanId)?.slug ?? loan.accountId,
    loanId: loan.loanId,
    loanName: names.get(loan.loanId)?.name ?? null,
    differences: loan.differences,
  }));
  return { checked, differing };
}

/** Replays every loan's ledger and stores it (`loanql_refresh_next`), one transaction per batch. */
export async function rebuildLedgers(db: Database, scope: LedgerScope = {}): Promise<LedgerRebuildReport> {
  const batchSize = scope.batchSize ?? DEFAULT_BATCH;
  let replayed = 0;
  let batches = 0;
  let after: LoanKey | null = null;
  for (;;) {
    const last: { key: LoanKey; count: number } | null = await db.transaction(async (tx) => {
      const loans = await nextBatch(tx, scope.accountId ?? null, after, batchSize);
      if (loans.length === 0) return null;
      const keys = [loans.map((loan) => loan.accountId), loans.map((loan) => loan.id)];
      // A rebuild replays in full: the versions a replay would skip on are forgotten first (migration 0032).
      await tx.query('DELETE FROM ledger_fingerprints f USING unnest($1::uuid[], $2::uuid[]) AS k(account_id, id) WHERE f.account_id = k.account_id AND f.id = k.id', keys);
      // …and the states a write's replay would resume from (migration 0034).
      await tx.query('DELETE FROM ledger_resume_states s USING unnest($1::uuid[], $2::uuid[]) AS k(account_id, id) WHERE s.account_id = k.account_id AND s.id = k.id', keys);
      await tx.query('SELECT loanql_refresh_next($1::uuid[], $2::uuid[])', keys);
      // Counted after the commit, not here: a batch undone as a deadlock runs again (db/conflictRetry.ts).
      return { key: loans[loans.length - 1]!, count: loans.length };
    });
    if (last === null) break;
    replayed += last.count;
    batches += 1;
    after = last.key;
    scope.onProgress?.(replayed);
  }
  return { replayed, batches };
}
