/**
 * A loan that has taken a payment is not made a lead again (found by a ledger audit, session 31).
 *
 * 0050 refuses a payment on a `lead` (not funded), but a serviced loan with payments could still be
 * set back to `lead` by hand (`PATCH /api/loan/{id} {"Status": "lead"}`, GraphQL, the dashboard).
 * Its replay then treated it as never funded: its late fees were deleted (a lead accrues none),
 * its days past due and bucket went to 0, and the loan was a lead holding payments, which no
 * writer may create. A status typed wrongly silently dropped the fees a borrower owed. Now such a
 * change is a `check_violation` naming `status` (a 400 naming `Status` over REST) and nothing is
 * written; a loan with no payment (set to servicing by mistake) still goes back to lead.
 */
export const name = '0053_funded_loan_not_lead';

export const sql = /* sql */ `
CREATE FUNCTION loanql_funded_loan_not_lead() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM payments p WHERE p.account_id = NEW.account_id AND p.loan_id = NEW.id) THEN
    RAISE EXCEPTION 'the loan has taken payments, so it has been funded: it cannot be a lead again (its payments would be left on a loan not funded, and its late fees dropped)'
      USING ERRCODE = 'check_violation', CONSTRAINT = 'loans_funded_not_lead', TABLE = 'loans', COLUMN = 'status';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER loans_funded_not_lead BEFORE UPDATE OF status ON loans
  FOR EACH ROW WHEN (NEW.status = 'lead' AND OLD.status IS DISTINCT FROM 'lead')
  EXECUTE FUNCTION loanql_funded_loan_not_lead();
`;
