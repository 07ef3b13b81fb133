/**
 * The sentences of the servicing tables' CHECK rules, moved from the engine to the database
 * (session 40). Before, `engine/execute/writeErrors.ts` kept them in a list of loanql's own
 * constraint names, so a lender's own table got only "the value breaks the rule <name>". Now the
 * engine reads every CHECK constraint's comment with the catalogue, once per metadata load
 * (`metadata/checkAgainstDatabase.ts`, `constraintSentence`): `<column>: <sentence>` says the
 * sentence and the column (one of the constraint's) it concerns; a comment without such a prefix
 * is the sentence alone, about all of the constraint's columns. The comments below are the list's
 * sentences exactly, so the answers are unchanged ("update_loans_by_pk: status: expected one of
 * lead, servicing, closed, overpaid", as REST words it).
 *
 * `payments_reversal_final` is a trigger's rule, not a constraint: the engine replaced its message
 * ("payment <id> is already reversed (on <day>): a reversal is final") with its own sentence. The
 * trigger now raises that sentence, which the engine keeps as it keeps any trigger's.
 */
export const name = '0079_rule_sentences_in_the_database';

export const sql = /* sql */ `
COMMENT ON CONSTRAINT payments_reversed_after_posting ON payments IS 'date_reversed: a payment is reversed on or after its own date, not before';
COMMENT ON CONSTRAINT payments_amount_positive ON payments IS 'amount: a payment is more than 0.00';
COMMENT ON CONSTRAINT payments_type ON payments IS 'type: expected one of regular, payoff, principal, refund, fee';
COMMENT ON CONSTRAINT payments_reversal_reason ON payments IS 'reversal_reason: expected one of nsf, error, returned, other';
COMMENT ON CONSTRAINT payments_reason_with_reversal ON payments IS 'reversal_reason: a reason is given with a reversal (date_reversed), not without one';
COMMENT ON CONSTRAINT fees_amount_positive ON fees IS 'amount: a fee is more than 0.00';
COMMENT ON CONSTRAINT fees_description_length ON fees IS 'description: a fee''s description is at most 500 characters';
COMMENT ON CONSTRAINT fees_kind ON fees IS 'kind: expected one of late, nsf, manual';
COMMENT ON CONSTRAINT fees_waiver_complete ON fees IS 'waived_on: a fee''s waiver has both its day (waived_on) and who waived it (waived_by)';
COMMENT ON CONSTRAINT fee_waivers_waived_by ON fee_waivers IS 'waived_by: who waives the fee is not blank and at most 200 characters';
COMMENT ON CONSTRAINT fee_waivers_reason ON fee_waivers IS 'reason: why the fee is waived is not blank and at most 500 characters';
-- A loan's status and name as REST words them (app/loanInput.ts); overpaid, though listed, is set
-- by the ledger only (its trigger says so when it is written by hand).
COMMENT ON CONSTRAINT loans_status_check ON loans IS 'status: expected one of lead, servicing, closed, overpaid';
COMMENT ON CONSTRAINT loans_name_not_blank ON loans IS 'name: a loan''s name is not blank';

CREATE OR REPLACE FUNCTION loanql_payment_reversal_final() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- Any write of date_reversed on a reversed payment, even of the same date: a reversal happens once.
  IF OLD.date_reversed IS NOT NULL THEN
    RAISE EXCEPTION 'the payment is already reversed; a reversal is final (it cannot be reversed again, re-dated or undone)'
      USING ERRCODE = 'check_violation', CONSTRAINT = 'payments_reversal_final', COLUMN = 'date_reversed', TABLE = 'payments';
  END IF;
  RETURN NEW;
END $$;
`;
