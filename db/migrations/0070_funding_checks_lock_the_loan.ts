/**
 * SPEC §12 R10: a loan's funding sources may not fund more than its amount (Σ w ≤ 1; 0024's
 * `loanql_funding_within_amount` and `loanql_loan_amount_covers_funding`). Each check summed the
 * sources it could see — not those another transaction was writing at the same moment: two clerks
 * recording two investors' 60,000 participations in a 100,000 loan at once both passed, and every
 * later payment paid the investors 120 % of its principal and interest share while the lender's
 * lines went below zero (session 38: four rounds in five on PostgreSQL 15,
 * `tests/api/fundingConcurrency.test.ts`). The same held for a source written while the loan's
 * amount was lowered.
 *
 * Now the source's check locks the loan's row (`FOR NO KEY UPDATE`, as an update of the loan's
 * amount does) before it sums: writes of one loan's sources, and a change of its amount, take
 * turns, and the one that waits sums what the other committed (each statement of a PL/pgSQL
 * function sees the data committed before it began, under READ COMMITTED). The foreign key's
 * KEY SHARE lock does not conflict with it, so two writers holding that cannot deadlock here. Other
 * loans' writes, and reads of this one, do not wait. On PGlite (one session) it is always granted.
 *
 * `CREATE OR REPLACE` of 0024's function with the loan's row read `FOR NO KEY UPDATE`.
 */
export const name = '0070_funding_checks_lock_the_loan';

export const sql = /* sql */ `
CREATE OR REPLACE FUNCTION loanql_funding_within_amount() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  total numeric; loan_amount numeric;
BEGIN
  -- The loan's row first: another write of its sources (or of its amount) waits, then sees this one.
  SELECT l.amount INTO loan_amount FROM loans l WHERE l.account_id = NEW.account_id AND l.id = NEW.loan_id FOR NO KEY UPDATE;
  SELECT coalesce(sum(f.original_amount), 0) INTO total FROM funding_sources f WHERE f.account_id = NEW.account_id AND f.loan_id = NEW.loan_id;
  IF total > coalesce(loan_amount, 0) AND total > 0 THEN
    RAISE EXCEPTION 'the loan''s funding sources would total %, more than its amount % (SPEC §12 R10: the weights may not sum past 1)', total, coalesce(loan_amount, 0)
      USING ERRCODE = 'check_violation', CONSTRAINT = 'funding_sources_within_loan_amount', TABLE = 'funding_sources', COLUMN = 'original_amount';
  END IF;
  RETURN NULL;
END $$;
`;
