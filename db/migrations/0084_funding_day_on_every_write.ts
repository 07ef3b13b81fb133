/**
 * The funding day and a lead's figures on every write path (session 41's audit of 0081 and 0083).
 *
 * **A manual fee is not dated before its loan was funded, nor charged to a lead.** 0081 refused a
 * payment dated before `Date_Funded`, but `insert_fees_one` took a manual fee dated a year before
 * it (and one on a lead): money owed before the loan existed, which the replay then charged. A fee
 * a lender takes before funding (an application fee) is not part of the serviced loan — a lead
 * takes no payment (0050), so such a fee could not be paid either — and a fee charged at funding is
 * dated on the funding day. `loanql_fee_date_rule` (0050's, the manual fees' trigger) now refuses
 * a day before `Date_Funded` (`invalid_parameter_value` on `date`, as 0081's payment rule: a
 * GraphQL `validation-failed` naming `date` and the funding day) when the day is written, and a
 * new manual fee on a lead (`check_violation` on `loan_id`, `fees_loan_funded`, as 0050's
 * `payments_loan_funded`). Fees stored before keep.
 *
 * **`Date_Funded` is not moved past the loan's payments or fees.** `PATCH /api/loan/{id}`
 * `{"Date_Funded": …}`, `update_loans_by_pk` and the dashboard's terms form moved it after a
 * payment taken, and the loan then held payments dated before its funding, which 0081 refuses on
 * insert. A new `date_funded` after the loan's first payment not reversed, or after its first
 * fee not waived that a writer dated (manual, or a reversal's NSF fee; late fees are the replay's,
 * derived again from the new schedule), is refused naming the column and that day
 * (`invalid_parameter_value` on `date_funded`; REST: 400 naming `Date_Funded`). A payment posted
 * on a wrong day is reversed (money is never deleted), and the funding day then moves.
 *
 * **A lead owes nothing, in its stored figures too.** 0083 made a lead's `payoff`,
 * `accrued_interest` and `per_diem` null, but the replay still stored a lead's balances as if it
 * were funded — `principal_outstanding` 100,000, `interest_due` 6,355.49 for rows "due" since a
 * planned funding day — read by GraphQL, the dashboard's loan page and summed with the serviced
 * loans' — and REST's ledger quoted them with a payoff. `loanql_ledger` (0034's wrapper of
 * `loanql_ledger_from`, what every full replay, `ledger verify` and the REST reads call) now answers
 * a lead's money figures null — principal outstanding, interest due, fees due, credit, oldest
 * unpaid due, accrued interest, interest paid ahead, per diem, payoff — as a lead without terms
 * already had them: there is no figure before funding (its days past due and amount past due
 * stay 0, 0052). Funded (`servicing`), its status change replays it and stores the figures. The
 * leads stored before are written null here (no webhook events: nothing a client wrote changed).
 */
import { sql as paymentDatesAndLeads } from './0050_payment_dates_and_leads.js';
import { between, edited } from './textEdits.js';

export const name = '0084_funding_day_on_every_write';

const feeDateRule = edited('0084', between('0084', paymentDatesAndLeads, 'CREATE FUNCTION loanql_fee_date_rule()', '\nEND $$;'), [
  ['CREATE FUNCTION loanql_fee_date_rule() RETURNS trigger LANGUAGE plpgsql AS $$\nBEGIN', 'CREATE OR REPLACE FUNCTION loanql_fee_date_rule() RETURNS trigger LANGUAGE plpgsql AS $$\nDECLARE\n  loan_status text;\n  funded date;\nBEGIN'],
  [
    `      USING ERRCODE = 'check_violation', CONSTRAINT = 'fees_date_in_range', TABLE = 'fees', COLUMN = 'date';
  END IF;
`,
    `      USING ERRCODE = 'check_violation', CONSTRAINT = 'fees_date_in_range', TABLE = 'fees', COLUMN = 'date';
  END IF;
  SELECT l.status, l.date_funded INTO loan_status, funded FROM loans l WHERE l.account_id = NEW.account_id AND l.id = NEW.loan_id;
  IF TG_OP = 'INSERT' AND loan_status = 'lead' THEN
    RAISE EXCEPTION 'the loan is a lead (not funded): it is charged fees once its status is servicing'
      USING ERRCODE = 'check_violation', CONSTRAINT = 'fees_loan_funded', TABLE = 'fees', COLUMN = 'loan_id';
  END IF;
  IF NEW.date < funded THEN
    RAISE EXCEPTION 'date: % is before the loan was funded (%); a fee is dated on or after its loan''s Date_Funded', NEW.date, funded
      USING ERRCODE = 'invalid_parameter_value', TABLE = 'fees', COLUMN = 'date';
  END IF;
`,
  ],
]);

export const sql = /* sql */ `
${feeDateRule}

CREATE FUNCTION loanql_funding_day_rule() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  first_payment date;
  first_fee date;
BEGIN
  SELECT min(p.date) INTO first_payment FROM payments p
   WHERE p.account_id = NEW.account_id AND p.loan_id = NEW.id AND p.date_reversed IS NULL;
  IF first_payment < NEW.date_funded THEN
    RAISE EXCEPTION 'date_funded: % is after the loan''s first payment (%); a loan is funded on or before its payments'' days (a payment posted on a wrong day is reversed first)',
      NEW.date_funded, first_payment
      USING ERRCODE = 'invalid_parameter_value', TABLE = 'loans', COLUMN = 'date_funded';
  END IF;
  SELECT min(f.date) INTO first_fee FROM fees f
   WHERE f.account_id = NEW.account_id AND f.loan_id = NEW.id AND f.kind <> 'late' AND f.waived_on IS NULL;
  IF first_fee < NEW.date_funded THEN
    RAISE EXCEPTION 'date_funded: % is after the loan''s first fee (%); a loan is funded on or before its fees'' days (a fee charged on a wrong day is waived first)',
      NEW.date_funded, first_fee
      USING ERRCODE = 'invalid_parameter_value', TABLE = 'loans', COLUMN = 'date_funded';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER loans_funding_day_rule BEFORE UPDATE OF date_funded ON loans
  FOR EACH ROW WHEN (NEW.date_funded IS NOT NULL AND NEW.date_funded IS DISTINCT FROM OLD.date_funded)
  EXECUTE FUNCTION loanql_funding_day_rule();

-- (PL/pgSQL, so never inlined: a call of loanql_ledger is a full replay's computation, which tests count)
CREATE OR REPLACE FUNCTION loanql_ledger(p_account uuid, p_loan uuid, p_as_of date) RETURNS loanql_ledger_result
LANGUAGE plpgsql STABLE AS $$
DECLARE
  r loanql_ledger_result;
BEGIN
  r := loanql_ledger_from(p_account, p_loan, p_as_of, NULL);
  -- 0084: a lead owes nothing: no money figure before funding
  IF r.principal_outstanding IS NOT NULL AND EXISTS (SELECT 1 FROM loans l WHERE l.account_id = p_account AND l.id = p_loan AND l.status = 'lead') THEN
    r.principal_outstanding := NULL; r.interest_due := NULL; r.fees_due := NULL; r.credit_balance := NULL; r.oldest_unpaid_due := NULL;
    r.accrued_interest := NULL; r.interest_paid_ahead := NULL; r.per_diem := NULL; r.payoff := NULL;
  END IF;
  RETURN r;
END $$;

SELECT set_config('loanql.capture_events', 'off', true);
UPDATE loans l SET principal_outstanding = NULL, interest_due = NULL, fees_due = NULL, credit_balance = NULL, oldest_unpaid_due = NULL
 WHERE l.status = 'lead'
   AND (l.principal_outstanding, l.interest_due, l.fees_due, l.credit_balance, l.oldest_unpaid_due) IS DISTINCT FROM (NULL::numeric, NULL::numeric, NULL::numeric, NULL::numeric, NULL::date);
SELECT set_config('loanql.capture_events', '', true);
DELETE FROM ledger_resume_states s USING loans l WHERE l.status = 'lead' AND s.account_id = l.account_id AND s.id = l.id;
DELETE FROM ledger_fingerprints f USING loans l WHERE l.status = 'lead' AND f.account_id = l.account_id AND f.id = l.id;
`;
