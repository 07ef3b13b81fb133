/**
 * SPEC §12 R10: a funding source's weight is `original_amount` / the loan's amount, and the
 * weights may not sum past 1 (`loanql_funding_within_amount`, migration 0024). A source of
 * `original_amount` -5 passed that check by lowering the sum, and let the others fund more than
 * the loan: the investors were then paid more than the payment (the lender's principal lines
 * went below zero). And a negative `rate` paid an investor negative interest. Now a source's
 * `original_amount` is 0 or more (0, or none: committed and not funded yet, no share — as before)
 * and its rate 0 or more, as `loans.rate` already must be.
 *
 * `NOT VALID`: a running database whose sources break the rule takes the migration and refuses
 * only new writes that break it (`ALTER TABLE … VALIDATE CONSTRAINT` once they are corrected).
 */
export const name = '0049_funding_source_amounts';

export const sql = /* sql */ `
ALTER TABLE funding_sources
  ADD CONSTRAINT funding_sources_original_amount_not_negative CHECK (original_amount >= 0) NOT VALID,
  ADD CONSTRAINT funding_sources_rate_not_negative CHECK (rate >= 0) NOT VALID;
`;
