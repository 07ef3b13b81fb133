/**
 * A reversal's reason is as final as its date (found by a ledger audit, session 31).
 *
 * 0005 made `date_reversed` final (`payments_reversal_final`), but `reversal_reason` could still
 * be written on a payment already reversed. R8 acts on the reason only when the reversal is made
 * (`payments_nsf_fee`, 0012: an NSF reversal adds the product's `nsf_fee`), so a reason changed
 * afterwards left the record contradicting the ledger: a reversal re-labelled `nsf` had no NSF fee,
 * and one re-labelled from `nsf` to `other` kept its fee. Now any write of `reversal_reason` on a
 * reversed payment is refused, as a write of its `date_reversed` is: a `check_violation` naming
 * the column, which the engine answers as a 400-style `check-violation` naming `reversal_reason`.
 * Named so that it runs after `payments_reversal_final` (PostgreSQL runs BEFORE triggers by name):
 * a write of both columns is refused for its date.
 */
export const name = '0051_reversal_reason_final';

export const sql = /* sql */ `
CREATE FUNCTION loanql_reversal_reason_final() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the payment is already reversed (on %, reason %); a reversal is final, its reason included', OLD.date_reversed, coalesce(OLD.reversal_reason, 'none')
    USING ERRCODE = 'check_violation', CONSTRAINT = 'payments_reversal_reason_final', TABLE = 'payments', COLUMN = 'reversal_reason';
END $$;
CREATE TRIGGER payments_reversal_reason_final BEFORE UPDATE OF reversal_reason ON payments
  FOR EACH ROW WHEN (OLD.date_reversed IS NOT NULL) EXECUTE FUNCTION loanql_reversal_reason_final();
`;
