/**
 * REST writes (SPEC §6–7): `regular_payment` and `date_maturity` are derived from the schedule
 * unless a client gave them. These flags remember which, so a later change of term or rate
 * re-derives a derived value and keeps a given one. Existing rows count as derived.
 */
export const name = '0004_loan_derived_fields';

export const sql = /* sql */ `
ALTER TABLE loans
  ADD COLUMN regular_payment_given boolean NOT NULL DEFAULT false,
  ADD COLUMN date_maturity_given boolean NOT NULL DEFAULT false;
`;
