/**
 * A lead is never past due (found by a ledger audit, session 31).
 *
 * A `lead` has not been funded: it takes no payment (0050), accrues no late fee, and its stored
 * `days_past_due` (0018) is 0. The computed fields were the replay's R3 whatever the status, so a
 * lead with a `Date_Funded` and a schedule was, as of its first due dates, "291 days past due",
 * bucket `120+`, with an amount past due — in `loans(where: {days_past_due: {_gte: 30}})` (the
 * index form reads 0019's `arrears_since`, which was set for every status), in
 * `days_past_due(args: {as_of})`, `delinquency_bucket`, `amount_past_due` and the REST payoff and
 * ledger — while its `stored_days_past_due` said 0. Now a lead has `arrears_since` null, is 0 days
 * past due (the first bucket) and has 0.00 past due, in every form and as of any day (it never
 * took a payment). Other statuses are unchanged: a loan closed or overpaid by the ledger owes
 * nothing, and one closed since keeps the days past due it had as of earlier days.
 */
export const name = '0052_leads_not_past_due';

export const sql = /* sql */ `
CREATE OR REPLACE FUNCTION loanql_loan_arrears_since() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.arrears_since := CASE WHEN NEW.status <> 'lead' THEN loanql_arrears_since(NEW.account_id, NEW.id, NEW.product_id) END;
  RETURN NEW;
END $$;

CREATE OR REPLACE FUNCTION loanql_product_arrears_since() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE loans l SET arrears_since = loanql_arrears_since(l.account_id, l.id, l.product_id)
   WHERE l.account_id = NEW.account_id AND (l.product_id = NEW.id OR (l.product_id IS NULL AND (NEW.is_default OR OLD.is_default)))
     AND l.status <> 'lead'
     AND l.arrears_since IS DISTINCT FROM loanql_arrears_since(l.account_id, l.id, l.product_id);
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION loanql_loan_days_past_due(p_account uuid, p_id uuid, as_of date DEFAULT NULL) RETURNS integer
LANGUAGE sql STABLE AS $$
  SELECT CASE WHEN l.status <> 'lead' THEN (loanql_ledger(p_account, p_id, coalesce(as_of, loanql_business_date(p_account)))).days_past_due ELSE 0 END
    FROM loans l WHERE l.account_id = p_account AND l.id = p_id
$$;

CREATE OR REPLACE FUNCTION loanql_loan_amount_past_due(p_account uuid, p_id uuid, as_of date DEFAULT NULL) RETURNS numeric
LANGUAGE sql STABLE AS $$
  SELECT coalesce(sum(r.interest - r.interest_paid + r.principal - r.principal_paid), 0)
    FROM (SELECT loanql_ledger(p_account, p_id, coalesce(as_of, loanql_business_date(p_account))) AS l
            FROM loans lo WHERE lo.account_id = p_account AND lo.id = p_id AND lo.status <> 'lead') x,
         unnest((x.l).row_number, (x.l).row_interest, (x.l).row_interest_paid, (x.l).row_principal, (x.l).row_principal_paid)
           AS r(number, interest, interest_paid, principal, principal_paid)
    JOIN schedules s ON s.account_id = p_account AND s.loan_id = p_id AND s.number = r.number
   WHERE s.due < coalesce(as_of, loanql_business_date(p_account))
$$;

-- Leads lose the date (no webhook events: nothing a client wrote changed).
SELECT set_config('loanql.capture_events', 'off', true);
UPDATE loans SET arrears_since = NULL WHERE status = 'lead' AND arrears_since IS NOT NULL;
SELECT set_config('loanql.capture_events', '', true);
`;
