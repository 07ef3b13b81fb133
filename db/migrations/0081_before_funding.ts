/**
 * Before a loan was funded (a book-migration audit, session 40): it is not past due, and it took no payment.
 *
 * **A loan closed before it was funded is not past due.** 0052 made a `lead` never past due; a loan `closed` without ever taking a payment — created
 * `closed` (a lender moving its book loads a loan paid off long ago without its history) or a lead
 * closed by hand (an application withdrawn) — was still read through the replay's R3 as of the
 * business date: a loan funded 2020-01-15 and closed was "2,327 days past due", bucket `120+`,
 * 106,618.53 past due, in `loans(where: {days_past_due: {_gte: 30}})`, in `delinquency_bucket`,
 * `amount_past_due` and the REST payoff and ledger, while its `stored_days_past_due` said 0 and its
 * stored bucket `current`. Such a loan never was in servicing: a serviced loan is closed by the
 * ledger (its payments settle it) or by hand only when it owes nothing (0054, 0078), and any
 * payment it took is still there (reversed ones too: money is never deleted). So "never funded"
 * is now a lead, or a closed loan with no payment: not past due, 0.00 past due, no
 * `arrears_since`, in every form and as of any day. A loan closed by its payments keeps the days
 * past due it had as of earlier days.
 *
 * **A payment is not dated before its loan was funded.** A lender moving its book posts years of
 * history; a payment dated 2024-12-01 on a loan funded 2025-01-15 (a typo of a year) was taken and
 * applied to row 1's interest ahead of time — money received before the loan existed — and the
 * ledger then differed from the lender's without a word. `loanql_payment_rules` (0067's text, one
 * check added) now refuses it on every write path, as `invalid_parameter_value` on `date` (a GraphQL
 * `validation-failed` naming `date` and the funding day), when the payment is written (an insert, or
 * an update that changes `date`): a payment stored before keeps and can be reversed, and a loan
 * without `Date_Funded` (a `First_Payment_Date` alone) has no such day.
 */
import { sql as waitsForSettings } from './0067_settings_change_waits_for_payments.js';
import { between, edited } from './textEdits.js';

export const name = '0081_before_funding';

const paymentRules = edited('0081', between('0081', waitsForSettings, 'CREATE OR REPLACE FUNCTION loanql_payment_rules()', '\nEND $$;'), [
  [
    `  loan_status text;
`,
    `  loan_status text;
  funded date;
`,
  ],
  [
    // In the block that already runs for a new date (the year-ahead check), one read of the loan:
    // its funding day for this check, its status for the insert's checks below.
    `        USING ERRCODE = 'invalid_parameter_value', TABLE = 'payments', COLUMN = 'date';
    END IF;
  END IF;
  IF TG_OP = 'INSERT' THEN
    SELECT l.status INTO loan_status FROM loans l WHERE l.account_id = NEW.account_id AND l.id = NEW.loan_id;
`,
    `        USING ERRCODE = 'invalid_parameter_value', TABLE = 'payments', COLUMN = 'date';
    END IF;
    SELECT l.status, l.date_funded INTO loan_status, funded FROM loans l WHERE l.account_id = NEW.account_id AND l.id = NEW.loan_id;
    IF NEW.date < funded THEN
      RAISE EXCEPTION 'date: % is before the loan was funded (%); a payment is dated on or after its loan''s Date_Funded', NEW.date, funded
        USING ERRCODE = 'invalid_parameter_value', TABLE = 'payments', COLUMN = 'date';
    END IF;
  END IF;
  IF TG_OP = 'INSERT' THEN
`,
  ],
]);

export const sql = /* sql */ `
${paymentRules}

CREATE FUNCTION loanql_loan_never_funded(p_account uuid, p_id uuid, p_status text) RETURNS boolean
LANGUAGE sql STABLE AS $$
  SELECT p_status = 'lead'
      OR (p_status = 'closed' AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.account_id = p_account AND p.loan_id = p_id))
$$;

CREATE OR REPLACE FUNCTION loanql_loan_arrears_since() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.arrears_since := CASE WHEN NOT loanql_loan_never_funded(NEW.account_id, NEW.id, NEW.status) THEN loanql_arrears_since(NEW.account_id, NEW.id, NEW.product_id) END;
  RETURN NEW;
END $$;

CREATE OR REPLACE FUNCTION loanql_product_arrears_since() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE loans l SET arrears_since = loanql_arrears_since(l.account_id, l.id, l.product_id)
   WHERE l.account_id = NEW.account_id AND (l.product_id = NEW.id OR (l.product_id IS NULL AND (NEW.is_default OR OLD.is_default)))
     AND NOT loanql_loan_never_funded(l.account_id, l.id, l.status)
     AND l.arrears_since IS DISTINCT FROM loanql_arrears_since(l.account_id, l.id, l.product_id);
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION loanql_loan_days_past_due(p_account uuid, p_id uuid, as_of date DEFAULT NULL) RETURNS integer
LANGUAGE sql STABLE AS $$
  SELECT CASE WHEN NOT loanql_loan_never_funded(p_account, p_id, l.status) THEN (loanql_ledger(p_account, p_id, coalesce(as_of, loanql_business_date(p_account)))).days_past_due ELSE 0 END
    FROM loans l WHERE l.account_id = p_account AND l.id = p_id
$$;

CREATE OR REPLACE FUNCTION loanql_loan_amount_past_due(p_account uuid, p_id uuid, as_of date DEFAULT NULL) RETURNS numeric
LANGUAGE sql STABLE AS $$
  SELECT coalesce(sum(r.interest - r.interest_paid + r.principal - r.principal_paid), 0)
    FROM (SELECT loanql_ledger(p_account, p_id, coalesce(as_of, loanql_business_date(p_account))) AS l
            FROM loans lo WHERE lo.account_id = p_account AND lo.id = p_id AND NOT loanql_loan_never_funded(p_account, p_id, lo.status)) x,
         unnest((x.l).row_number, (x.l).row_interest, (x.l).row_interest_paid, (x.l).row_principal, (x.l).row_principal_paid)
           AS r(number, interest, interest_paid, principal, principal_paid)
    JOIN schedules s ON s.account_id = p_account AND s.loan_id = p_id AND s.number = r.number
   WHERE s.due < coalesce(as_of, loanql_business_date(p_account))
$$;

-- Such loans lose the date (no webhook events: nothing a client wrote changed).
SELECT set_config('loanql.capture_events', 'off', true);
UPDATE loans l SET arrears_since = NULL
 WHERE l.status = 'closed' AND l.arrears_since IS NOT NULL AND loanql_loan_never_funded(l.account_id, l.id, l.status);
SELECT set_config('loanql.capture_events', '', true);
`;
