/**
 * Days past due through an index (issue 31, SPEC §12 R3), and the as-of fields beside it.
 *
 * R3's days past due on D is `D − x` when x is before D, else 0, where x is the due date of the
 * earliest row whose unpaid principal and interest exceeds the product's `arrears_tolerance`.
 * 0012 stores `oldest_unpaid_due` — the earliest row with anything unpaid, the tolerance NOT
 * counted — so it is not that x when a product has a tolerance. This stores x itself,
 * `loans.arrears_since`, beside it, and indexes `(account_id, arrears_since)`: "30 days or more"
 * is then `arrears_since <= D − 30`, one range of the index (the metadata's `stored_form` of
 * `days_past_due`, metadata/README.md).
 *
 * Where x comes from: the stored schedule rows (what each asks and has been paid, as of
 * `ledger_as_of`), read by a BEFORE trigger on every write of a loan row. The replay
 * (`loanql_replay_loans`) writes the schedule rows first and then the loan row whenever a
 * balance, `oldest_unpaid_due` or `ledger_as_of` changes, so the trigger sees the rows it just
 * wrote, without a second UPDATE of the loan (no extra `loan.updated` event). A product's
 * tolerance (or which product is the default) changes x without a replay writing the loans: a
 * trigger on products rewrites x of its loans. Time alone does not move x (only payments do),
 * so a stale ledger's x is still right; a payment dated after the business date is in the
 * stored rows (ledger_as_of is that date) — for such a loan the stored form counts it.
 *
 * Also: `loanql_loan_amount_past_due` and `loanql_loan_delinquency_bucket` (as-of computed
 * fields, exact replays like 0012's), and `loanql_stored_amount_past_due` (the same figure from
 * the stored rows, for the collections queue).
 */
export const name = '0019_days_past_due_index';

export const sql = /* sql */ `
ALTER TABLE loans ADD COLUMN arrears_since date;

-- x of R3 from the stored rows: the earliest due date whose unpaid principal and interest is
-- above the tolerance of the loan's product (the account's default product when it has none).
CREATE FUNCTION loanql_arrears_since(p_account uuid, p_loan uuid, p_product uuid) RETURNS date
LANGUAGE sql STABLE AS $$
  SELECT min(s.due) FROM schedules s
   WHERE s.account_id = p_account AND s.loan_id = p_loan
     AND s.payment - s.interest_paid - s.principal_paid > coalesce(
           (SELECT pr.arrears_tolerance FROM products pr
             WHERE pr.account_id = p_account AND (pr.id = p_product OR (p_product IS NULL AND pr.is_default))
             ORDER BY pr.id = p_product DESC LIMIT 1), 0)
$$;

CREATE FUNCTION loanql_loan_arrears_since() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.arrears_since := loanql_arrears_since(NEW.account_id, NEW.id, NEW.product_id);
  RETURN NEW;
END $$;
CREATE TRIGGER loans_arrears_since BEFORE INSERT OR UPDATE ON loans FOR EACH ROW EXECUTE FUNCTION loanql_loan_arrears_since();

CREATE FUNCTION loanql_product_arrears_since() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE loans l SET arrears_since = loanql_arrears_since(l.account_id, l.id, l.product_id)
   WHERE l.account_id = NEW.account_id AND (l.product_id = NEW.id OR (l.product_id IS NULL AND (NEW.is_default OR OLD.is_default)))
     AND l.arrears_since IS DISTINCT FROM loanql_arrears_since(l.account_id, l.id, l.product_id);
  RETURN NULL;
END $$;
CREATE TRIGGER products_arrears_since AFTER UPDATE OF arrears_tolerance, is_default ON products
  FOR EACH ROW WHEN ((OLD.arrears_tolerance, OLD.is_default) IS DISTINCT FROM (NEW.arrears_tolerance, NEW.is_default))
  EXECUTE FUNCTION loanql_product_arrears_since();

-- Existing loans (no webhook events: nothing a client wrote changed).
SELECT set_config('loanql.capture_events', 'off', true);
UPDATE loans SET arrears_since = NULL;
SELECT set_config('loanql.capture_events', '', true);

CREATE INDEX loans_arrears_since ON loans (account_id, arrears_since);

-- The product's buckets of a loan (its own product, else the account's default; else §12's default).
CREATE FUNCTION loanql_loan_buckets(p_account uuid, p_product uuid) RETURNS jsonb
LANGUAGE sql STABLE AS $$
  SELECT coalesce(
    (SELECT pr.delinquency_buckets FROM products pr
      WHERE pr.account_id = p_account AND (pr.id = p_product OR (p_product IS NULL AND pr.is_default))
      ORDER BY pr.id = p_product DESC LIMIT 1),
    '[{"name": "current", "from": 0}, {"name": "1-29", "from": 1}, {"name": "30-59", "from": 30}, {"name": "60-89", "from": 60}, {"name": "90-119", "from": 90}, {"name": "120+", "from": 120}]'::jsonb)
$$;

-- As-of values for the metadata's computed fields, like 0012's (as_of defaults to the business date).
-- Amount past due: the unpaid principal and interest of the rows due before the day.
CREATE FUNCTION loanql_loan_amount_past_due(p_account uuid, p_id uuid, as_of date DEFAULT NULL) RETURNS numeric
LANGUAGE sql STABLE AS $$
  SELECT coalesce(sum(r.interest - r.interest_paid + r.principal - r.principal_paid), 0)
    FROM (SELECT loanql_ledger(p_account, p_id, coalesce(as_of, loanql_business_date(p_account))) AS l) x,
         unnest((x.l).row_number, (x.l).row_interest, (x.l).row_interest_paid, (x.l).row_principal, (x.l).row_principal_paid)
           AS r(number, interest, interest_paid, principal, principal_paid)
    JOIN schedules s ON s.account_id = p_account AND s.loan_id = p_id AND s.number = r.number
   WHERE s.due < coalesce(as_of, loanql_business_date(p_account))
$$;
CREATE FUNCTION loanql_loan_delinquency_bucket(p_account uuid, p_id uuid, as_of date DEFAULT NULL) RETURNS text
LANGUAGE sql STABLE AS $$
  SELECT loanql_delinquency_bucket(loanql_loan_buckets(l.account_id, l.product_id), loanql_loan_days_past_due(p_account, p_id, as_of))
    FROM loans l WHERE l.account_id = p_account AND l.id = p_id
$$;
-- The amount past due on the day from the stored rows (exact when the loan's ledger is current).
CREATE FUNCTION loanql_stored_amount_past_due(p_account uuid, p_loan uuid, p_day date) RETURNS numeric
LANGUAGE sql STABLE AS $$
  SELECT coalesce(sum(s.payment - s.interest_paid - s.principal_paid), 0) FROM schedules s
   WHERE s.account_id = p_account AND s.loan_id = p_loan AND s.due < p_day
$$;
`;
