/**
 * A refused refund's message gives the credit in cents ("… more than the loan's credit balance
 * of 0.00 on 2026-03-21"), as every other amount the service shows; it printed the ledger's
 * figure as it came, "of 0" for a loan without credit. The engine now passes a trigger's own
 * sentence to the client (engine/execute/writeErrors.ts), so this is what an API client and the
 * dashboard read. Same rule, same constraint name and column; `CREATE OR REPLACE` on a running
 * database (the trigger that calls it is unchanged).
 */
export const name = '0047_refund_refusal_in_cents';

export const sql = /* sql */ `
CREATE OR REPLACE FUNCTION loanql_refund_within_credit() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  credit numeric;
BEGIN
  IF NEW.type = 'refund' AND NEW.date_reversed IS NULL THEN
    credit := (loanql_ledger(NEW.account_id, NEW.loan_id, NEW.date)).credit_balance;
    IF NEW.amount > coalesce(credit, 0) THEN
      RAISE EXCEPTION 'a refund of % is more than the loan''s credit balance of % on %', NEW.amount, coalesce(credit, 0)::numeric(14, 2), NEW.date
        USING ERRCODE = 'check_violation', CONSTRAINT = 'payments_refund_within_credit', TABLE = 'payments', COLUMN = 'amount';
    END IF;
  END IF;
  RETURN NEW;
END $$;
`;
