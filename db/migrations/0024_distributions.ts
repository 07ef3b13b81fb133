/**
 * SPEC §12 R10, issue 32: `distributions`, each payment's allocation split between its loan's
 * funding sources and the lender, per component, to the cent. Lines are only ever inserted: a
 * re-derived allocation adds adjustment lines (new − old), it never edits or deletes a line
 * (docs/ledger.md, "Distributions (R10)").
 */
export const name = '0024_distributions';

export const sql = /* sql */ `
CREATE TABLE distributions (
  account_id uuid NOT NULL REFERENCES accounts,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  loan_id uuid NOT NULL,
  -- the payment whose allocation the line splits
  payment_id uuid NOT NULL,
  -- null: the lender (the account)
  funding_source_id uuid,
  -- the funding source's person (the investor role's filter)
  person_id uuid,
  component text NOT NULL CONSTRAINT distributions_component CHECK (component IN ('principal', 'interest', 'fees')),
  -- negative on an adjustment that takes money back
  amount numeric(14, 2) NOT NULL,
  adjustment boolean NOT NULL DEFAULT false,
  -- an adjustment's cause: the payment whose posting or reversal re-derived the allocation
  cause_payment_id uuid,
  -- an original line: the payment's date; an adjustment: the day it was recorded
  date date NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, id),
  UNIQUE (id),
  FOREIGN KEY (account_id, loan_id) REFERENCES loans (account_id, id) ON DELETE CASCADE,
  FOREIGN KEY (account_id, payment_id) REFERENCES payments (account_id, id) ON DELETE CASCADE
);
CREATE INDEX distributions_payment ON distributions (account_id, payment_id);
CREATE INDEX distributions_person_date ON distributions (account_id, person_id, date);
CREATE INDEX distributions_loan_date ON distributions (account_id, loan_id, date);
`;
