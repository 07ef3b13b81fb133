/**
 * Issue 32, the remittance run: `remittances` records that the lender paid its investors what
 * their distribution lines (0024) owed up to a day — who marked it and when — and each line it
 * paid carries the stamp `distributions.remittance_id`. A line's amount never changes; the stamp
 * goes from null to a remittance once and is never changed or cleared (trigger below), so what a
 * remittance paid is always the sum of its lines. An adjustment recorded after a period was
 * remitted is a new, unstamped line: the next run pays it (docs/investors.md).
 */
export const name = '0025_remittances';

export const sql = /* sql */ `
CREATE TABLE remittances (
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  period_from date NOT NULL,
  period_to date NOT NULL,
  remitted_at timestamptz NOT NULL DEFAULT now(),
  -- who marked it, never a secret: 'key <prefix> (<name>)' or 'admin <e-mail>'
  remitted_by text NOT NULL,
  remitted_by_key_id uuid,
  remitted_by_admin_id uuid,
  -- what was owed to investors at marking (the stamped lines' sum; they never change)
  total numeric(14, 2) NOT NULL,
  line_count integer NOT NULL,
  PRIMARY KEY (account_id, id),
  CONSTRAINT remittances_period CHECK (period_from <= period_to)
);
CREATE INDEX remittances_period ON remittances (account_id, period_to);

ALTER TABLE distributions ADD COLUMN remittance_id uuid;
ALTER TABLE distributions ADD CONSTRAINT distributions_remittance
  FOREIGN KEY (account_id, remittance_id) REFERENCES remittances (account_id, id);
-- what a run owes: the unstamped investor lines up to a day
CREATE INDEX distributions_unremitted ON distributions (account_id, date) WHERE remittance_id IS NULL AND funding_source_id IS NOT NULL;
CREATE INDEX distributions_remittance ON distributions (account_id, remittance_id) WHERE remittance_id IS NOT NULL;

-- A line is money already split: an UPDATE may only set its remittance stamp, once.
CREATE FUNCTION loanql_distribution_stamp_once() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.remittance_id IS NOT NULL AND NEW.remittance_id IS DISTINCT FROM OLD.remittance_id THEN
    RAISE EXCEPTION 'distribution % was remitted already (remittance %): its stamp never changes', OLD.id, OLD.remittance_id
      USING ERRCODE = 'check_violation';
  END IF;
  IF (NEW.account_id, NEW.id, NEW.loan_id, NEW.payment_id, NEW.funding_source_id, NEW.person_id, NEW.component, NEW.amount,
      NEW.adjustment, NEW.cause_payment_id, NEW.date, NEW.created_at)
     IS DISTINCT FROM
     (OLD.account_id, OLD.id, OLD.loan_id, OLD.payment_id, OLD.funding_source_id, OLD.person_id, OLD.component, OLD.amount,
      OLD.adjustment, OLD.cause_payment_id, OLD.date, OLD.created_at) THEN
    RAISE EXCEPTION 'distribution % is never edited: only its remittance stamp is set, once', OLD.id
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER distributions_stamp_once BEFORE UPDATE ON distributions
  FOR EACH ROW EXECUTE FUNCTION loanql_distribution_stamp_once();
`;
