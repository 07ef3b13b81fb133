/**
 * Rules on a payment that every writer meets (GraphQL, the dashboard, SQL), found by a user's
 * audit (session 29):
 *
 * - **Its day is one of the years 1900–2999**, the days every ledger read takes (`?date=` and
 *   `as_of` of REST, `app/ledgerReads.ts`). GraphQL's `date` took 9999-12-31: such a payment was
 *   applied (the stored ledger is as of the last payment's day) and could then be reversed only by
 *   a reversal dated on or after it.
 *   A fee's day (a manual fee's, given by its writer) likewise.
 * - **A reversal is dated on or before the business date**, or on the payment's own day when that
 *   is later (a payment dated ahead — a post-dated cheque — is cancelled on its own day): a
 *   reversal records a return that has happened. A reversal dated ahead was taken and moved the
 *   balances of today.
 * - **A lead takes no payment.** A `lead` has not been funded: its payoff is refused (no
 *   `date_funded`), late fees do not accrue on it, and the servicer role's insert already
 *   requires `servicing`; a payment on it became credit. Posting the first payment on a loan in
 *   `servicing` or after it (`closed`, `overpaid`: the money is credit, to refund) is unchanged.
 *
 * - **A loan is not created `overpaid`**: the ledger sets it (R9), and an update to it by hand
 *   was already refused (`loans_overpaid_by_ledger`, 0012); `POST /api/loan {"Status":
 *   "overpaid"}` was taken (a contract audit, session 30).
 *
 * A BEFORE trigger raising `check_violation` with the rule's own sentence and the column, which
 * the engine answers as a 400 naming the field (engine/execute/writeErrors.ts). Named so that it
 * runs before the other BEFORE triggers on `payments` (PostgreSQL runs them by name): a refused
 * payment is refused for its date before its refund is checked against the credit.
 */
export const name = '0050_payment_dates_and_leads';

export const sql = /* sql */ `
CREATE FUNCTION loanql_payment_rules() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  loan_status text;
  latest date;
BEGIN
  IF NEW.date < DATE '1900-01-01' OR NEW.date > DATE '2999-12-31' THEN
    RAISE EXCEPTION 'a payment is dated in the years 1900–2999, not %', NEW.date
      USING ERRCODE = 'check_violation', CONSTRAINT = 'payments_date_in_range', TABLE = 'payments', COLUMN = 'date';
  END IF;
  IF TG_OP = 'INSERT' THEN
    SELECT l.status INTO loan_status FROM loans l WHERE l.account_id = NEW.account_id AND l.id = NEW.loan_id;
    IF loan_status = 'lead' THEN
      RAISE EXCEPTION 'the loan is a lead (not funded): it takes payments once its status is servicing'
        USING ERRCODE = 'check_violation', CONSTRAINT = 'payments_loan_funded', TABLE = 'payments', COLUMN = 'loan_id';
    END IF;
  END IF;
  IF NEW.date_reversed IS NOT NULL AND (TG_OP = 'INSERT' OR OLD.date_reversed IS NULL) THEN
    latest := greatest(loanql_business_date(NEW.account_id), NEW.date);
    IF NEW.date_reversed > latest THEN
      RAISE EXCEPTION 'a reversal is dated on or before %, the business date (or the payment''s own day when later), not %', latest, NEW.date_reversed
        USING ERRCODE = 'check_violation', CONSTRAINT = 'payments_reversal_not_ahead', TABLE = 'payments', COLUMN = 'date_reversed';
    END IF;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER payments_check_rules BEFORE INSERT OR UPDATE OF date, date_reversed ON payments
  FOR EACH ROW EXECUTE FUNCTION loanql_payment_rules();

CREATE FUNCTION loanql_fee_date_rule() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.date < DATE '1900-01-01' OR NEW.date > DATE '2999-12-31' THEN
    RAISE EXCEPTION 'a fee is dated in the years 1900–2999, not %', NEW.date
      USING ERRCODE = 'check_violation', CONSTRAINT = 'fees_date_in_range', TABLE = 'fees', COLUMN = 'date';
  END IF;
  RETURN NEW;
END $$;
CREATE FUNCTION loanql_loan_created_overpaid() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('loanql.replaying', true) = 'on' THEN RETURN NEW; END IF;
  RAISE EXCEPTION 'overpaid is set by the ledger (when a loan is paid off with money to spare), not by hand'
    USING ERRCODE = 'check_violation', CONSTRAINT = 'loans_overpaid_by_ledger', TABLE = 'loans', COLUMN = 'status';
END $$;
CREATE TRIGGER loans_created_overpaid BEFORE INSERT ON loans
  FOR EACH ROW WHEN (NEW.status = 'overpaid') EXECUTE FUNCTION loanql_loan_created_overpaid();

-- Only a manual fee's day is given by a writer (late and NSF fees are dated by the replay and
-- the reversal): the WHEN keeps the replay's own inserts free of the call.
CREATE TRIGGER fees_check_date BEFORE INSERT OR UPDATE OF date ON fees
  FOR EACH ROW WHEN (NEW.kind = 'manual') EXECUTE FUNCTION loanql_fee_date_rule();
`;
