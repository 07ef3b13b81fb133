/**
 * Servicing rules for writes through the GraphQL mutations (issue 14), kept by the database so
 * every writer obeys them:
 *
 * - a payment's amount is above 0, and a reversal is not dated before the payment;
 * - a payment's `date_reversed` is set once: a reversed payment cannot be reversed again (even
 *   with the same date), re-dated or un-reversed (a check violation naming `payments_reversal_final`);
 * - a loan's `custom_fields` is a JSON object;
 * - `is_next` stays right under concurrent writes to one loan: the refresh first locks the loans
 *   it recomputes (FOR NO KEY UPDATE, in id order), and only then reads the payments, each
 *   statement with a fresh snapshot (READ COMMITTED). A second transaction posting to the same
 *   loan waits for the first to end, then sees its payment, so the last refresh counts both.
 * - `idempotency_keys`: the responses of writes sent with an `Idempotency-Key` header (24 h).
 */
export const name = '0005_servicing_writes';

export const sql = /* sql */ `
ALTER TABLE payments
  ADD CONSTRAINT payments_amount_positive CHECK (amount > 0),
  ADD CONSTRAINT payments_reversed_after_posting CHECK (date_reversed IS NULL OR date_reversed >= date);

ALTER TABLE loans ADD CONSTRAINT loans_custom_fields_object CHECK (jsonb_typeof(custom_fields) = 'object');

CREATE FUNCTION loanql_payment_reversal_final() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- Any write of date_reversed on a reversed payment, even of the same date: a reversal happens once.
  IF OLD.date_reversed IS NOT NULL THEN
    RAISE EXCEPTION 'payment % is already reversed (on %): a reversal is final', OLD.id, OLD.date_reversed
      USING ERRCODE = 'check_violation', CONSTRAINT = 'payments_reversal_final', COLUMN = 'date_reversed', TABLE = 'payments';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER payments_reversal_final BEFORE UPDATE OF date_reversed ON payments
  FOR EACH ROW EXECUTE FUNCTION loanql_payment_reversal_final();

CREATE OR REPLACE FUNCTION loanql_refresh_next(p_account uuid[], p_loan uuid[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM loans l
    WHERE (l.account_id, l.id) IN (SELECT u.account_id, u.loan_id FROM unnest(p_account, p_loan) AS u(account_id, loan_id))
    ORDER BY l.account_id, l.id
    FOR NO KEY UPDATE;

  -- Two statements (clear, then set) because the unique "one next row" index is checked row by row.
  WITH next_rows AS (
    SELECT t.account_id, t.loan_id, loanql_next_schedule_id(t.account_id, t.loan_id) AS next_id
    FROM (SELECT DISTINCT * FROM unnest(p_account, p_loan) AS u(account_id, loan_id)) t
  )
  UPDATE schedules s SET is_next = false
  FROM next_rows n
  WHERE s.account_id = n.account_id AND s.loan_id = n.loan_id AND s.is_next AND s.id IS DISTINCT FROM n.next_id;

  WITH next_rows AS (
    SELECT t.account_id, loanql_next_schedule_id(t.account_id, t.loan_id) AS next_id
    FROM (SELECT DISTINCT * FROM unnest(p_account, p_loan) AS u(account_id, loan_id)) t
  )
  UPDATE schedules s SET is_next = true
  FROM next_rows n
  WHERE s.account_id = n.account_id AND s.id = n.next_id AND NOT s.is_next;
END $$;

CREATE TABLE idempotency_keys (
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  key text NOT NULL,
  -- SHA-256 of the route and the request body: the same key with another body is refused.
  request_hash bytea NOT NULL,
  status integer,
  response text,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, id),
  UNIQUE (account_id, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
`;
