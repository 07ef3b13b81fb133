/**
 * A lead owes nothing (a gap of session 39's audits, fixed in session 40).
 *
 * A `lead` has not been funded (SPEC §7, §12): it takes no payment (0050) and is never past due
 * (0052). But a lead with terms and a schedule showed, through the GraphQL computed fields, the
 * replay's figures as if funded — `payoff(args: {as_of})` 103,908.98 on a 100,000 lead, an
 * `accrued_interest` and a `per_diem` — while REST's payoff quote is a quote for a serviced loan.
 * These three now answer null for a lead (there is no figure: nothing is owed before funding),
 * as REST refuses its quote (409 naming `Status`, `LeadHasNoPayoff` in `app/ledgerReads.ts`). Other statuses are unchanged.
 */
export const name = '0083_leads_owe_nothing';

export const sql = /* sql */ `
CREATE OR REPLACE FUNCTION loanql_loan_payoff(p_account uuid, p_id uuid, as_of date DEFAULT NULL) RETURNS numeric
LANGUAGE sql STABLE AS $$
  SELECT (loanql_ledger(p_account, p_id, coalesce(as_of, loanql_business_date(p_account)))).payoff
    FROM loans l WHERE l.account_id = p_account AND l.id = p_id AND l.status <> 'lead'
$$;
CREATE OR REPLACE FUNCTION loanql_loan_accrued_interest(p_account uuid, p_id uuid, as_of date DEFAULT NULL) RETURNS numeric
LANGUAGE sql STABLE AS $$
  SELECT (loanql_ledger(p_account, p_id, coalesce(as_of, loanql_business_date(p_account)))).accrued_interest
    FROM loans l WHERE l.account_id = p_account AND l.id = p_id AND l.status <> 'lead'
$$;
CREATE OR REPLACE FUNCTION loanql_loan_per_diem(p_account uuid, p_id uuid, as_of date DEFAULT NULL) RETURNS numeric
LANGUAGE sql STABLE AS $$
  SELECT (loanql_ledger(p_account, p_id, coalesce(as_of, loanql_business_date(p_account)))).per_diem
    FROM loans l WHERE l.account_id = p_account AND l.id = p_id AND l.status <> 'lead'
$$;
`;
