import type { Queryable } from '../db/index.js';
import { UserInputError } from './errors.js';

/**
 * Reads of the servicing ledger (SPEC §12) for REST: a payoff quote for a day and a loan's
 * ledger. The figures come from the database's own replay (`loanql_ledger`, migration 0012),
 * the same computation every write stores, so a quote never disagrees with what a payment of
 * that amount would do. Callers check first that the key's role may see the loan.
 *
 * The ledger is computed once per read: its CTE is `MATERIALIZED`. Inlined (PostgreSQL inlines a
 * CTE read once), each `(r.l).field` called `loanql_ledger` again — ten times for a payoff quote,
 * twenty-three for a ledger: 1.1 s and 2.6 s for a 1,200-row loan whose own ledger takes 0.1 s.
 */

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A `YYYY-MM-DD` calendar day (years 1900–2999), or a 400 naming `name`. */
export function dayParameter(name: string, value: unknown): string | null {
  if (value === undefined) return null;
  const match = typeof value === 'string' ? DAY.exec(value) : null;
  const [year, month, day] = match ? [Number(match[1]), Number(match[2]), Number(match[3])] : [0, 0, 0];
  const date = new Date(Date.UTC(year, month - 1, day));
  const valid = match !== null && year >= 1900 && year <= 2999 && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
  if (!valid) throw new UserInputError(`${name} must be a calendar day as YYYY-MM-DD in the years 1900–2999`, 400, new Map([[name, 'expected a day as YYYY-MM-DD (1900–2999)']]));
  return value as string;
}

/**
 * A payoff quote asked of a lead: 409 naming its status. A lead is not funded, so nothing is owed
 * (README "Servicing ledger"; the GraphQL computed fields `payoff`, `accrued_interest` and
 * `per_diem` are null for it, migration 0083); before session 40 it was quoted as if funded.
 */
export class LeadHasNoPayoff extends UserInputError {
  constructor(loanId: string) {
    super(
      `loan ${loanId} is a lead (status lead): it is not funded, so nothing is owed and there is no payoff; a payoff quote is for a loan in servicing`,
      409,
      new Map([['Status', 'lead: not funded (a payoff quote needs servicing, closed or overpaid)']]),
    );
    this.name = 'LeadHasNoPayoff';
  }
}

/**
 * `GET /api/loan/{id}/payoff?date=`: R5's quote with its parts, as JSON text; null for no such loan;
 * a lead is refused (`LeadHasNoPayoff`). A loan never funded — a lead, or a loan closed with no
 * payment — is never past due (0, as stored: migrations 0052, 0081).
 */
export async function payoffQuoteJson(db: Queryable, accountId: string, loanId: string, day: string | null): Promise<string | null> {
  const { rows } = await db.query<{ body: string | null; lead: boolean }>(
    `WITH d AS (SELECT coalesce($3::date, loanql_business_date($1)) AS as_of),
          r AS MATERIALIZED (SELECT d.as_of, loanql_ledger($1, $2, d.as_of) AS l FROM d)
     SELECT json_build_object(
              'loan_id', $2::uuid, 'as_of', r.as_of, 'payoff', round((r.l).payoff, 2),
              'principal_outstanding', round((r.l).principal_outstanding, 2), 'interest_due', round((r.l).interest_due, 2),
              'accrued_interest', round((r.l).accrued_interest, 2), 'interest_paid_ahead', round((r.l).interest_paid_ahead, 2),
              'fees_due', round((r.l).fees_due, 2), 'credit_balance', round((r.l).credit_balance, 2), 'per_diem', round((r.l).per_diem, 2),
              'days_past_due', CASE WHEN NOT loanql_loan_never_funded(l.account_id, l.id, l.status) THEN (r.l).days_past_due ELSE 0 END)::text AS body,
            l.status = 'lead' AS lead
       FROM r JOIN loans l ON l.account_id = $1 AND l.id = $2 WHERE (r.l).principal_outstanding IS NOT NULL OR l.status = 'lead'`,
    [accountId, loanId, day],
  );
  if (rows[0]?.lead) throw new LeadHasNoPayoff(loanId);
  return rows[0]?.body ?? null;
}

/**
 * `GET /api/loan/{id}/ledger`: the loan's balances as of a day (default the business date),
 * every payment dated up to it with its allocation lines, and its fees as of that day, as JSON
 * text; null for no such loan.
 */
export async function ledgerJson(db: Queryable, accountId: string, loanId: string, day: string | null): Promise<string | null> {
  const { rows } = await db.query<{ body: string | null }>(
    `WITH d AS (SELECT coalesce($3::date, loanql_business_date($1)) AS as_of),
          r AS MATERIALIZED (SELECT d.as_of, loanql_ledger($1, $2, d.as_of) AS l FROM d)
     SELECT json_build_object(
              'loan_id', l.id, 'status', l.status, 'date_closed', l.date_closed, 'as_of', r.as_of,
              'balances', json_build_object(
                 'principal_outstanding', round((r.l).principal_outstanding, 2), 'interest_due', round((r.l).interest_due, 2),
                 'fees_due', round((r.l).fees_due, 2), 'credit_balance', round((r.l).credit_balance, 2), 'oldest_unpaid_due', (r.l).oldest_unpaid_due,
                 'accrued_interest', round((r.l).accrued_interest, 2), 'per_diem', round((r.l).per_diem, 2), 'payoff', round((r.l).payoff, 2),
                 'days_past_due', CASE WHEN NOT loanql_loan_never_funded(l.account_id, l.id, l.status) THEN (r.l).days_past_due ELSE 0 END),
              'payments', coalesce((
                 SELECT json_agg(json_build_object(
                          'id', p.id, 'date', p.date, 'amount', p.amount, 'type', p.type, 'method', p.method,
                          'date_reversed', p.date_reversed, 'reversal_reason', p.reversal_reason, 'posted_at', p.posted_at,
                          'allocations', coalesce((
                             SELECT json_agg(json_build_object('row_number', a.row_number, 'fee_id', a.fee_id, 'component', a.component, 'amount', a.amount) ORDER BY a.position)
                               FROM payment_allocations a WHERE a.account_id = p.account_id AND a.payment_id = p.id), '[]'::json))
                        ORDER BY p.date, p.posted_at, p.id)
                   FROM payments p WHERE p.account_id = l.account_id AND p.loan_id = l.id AND p.date <= r.as_of), '[]'::json),
              -- the fees as of the day (late fees are derived day by day, R4)
              'fees', coalesce((
                 SELECT json_agg(json_build_object('id', u.id, 'kind', u.kind, 'row_number', u.row_number, 'date', u.date, 'amount', round(u.amount, 2),
                                                   'paid', round(u.paid, 2), 'waived', round(u.waived, 2), 'waived_on', f.waived_on, 'waived_by', f.waived_by,
                                                   'waived_reason', f.waived_reason) ORDER BY u.position)
                   FROM unnest((r.l).fee_id, (r.l).fee_kind, (r.l).fee_row, (r.l).fee_date, (r.l).fee_amount, (r.l).fee_paid, (r.l).fee_waived)
                        WITH ORDINALITY AS u(id, kind, row_number, date, amount, paid, waived, position)
                   LEFT JOIN fees f ON f.account_id = l.account_id AND f.id = u.id
                  WHERE u.date <= r.as_of), '[]'::json)
            )::text AS body
       FROM r, loans l WHERE l.account_id = $1 AND l.id = $2`,
    [accountId, loanId, day],
  );
  return rows[0]?.body ?? null;
}

/** The account's business date (SPEC §12: today in the account's time zone), as `YYYY-MM-DD`. */
export async function businessDate(db: Queryable, accountId: string): Promise<string> {
  const { rows } = await db.query<{ day: string }>(`SELECT loanql_business_date($1)::text AS day`, [accountId]);
  return rows[0]!.day;
}
