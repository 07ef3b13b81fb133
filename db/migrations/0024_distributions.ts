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

-- One row per payment each time its distribution lines are written (the original split, or an
-- adjustment): what the event distribution.created is captured from, with its lines.
CREATE TABLE distribution_batches (
  account_id uuid NOT NULL REFERENCES accounts,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  loan_id uuid NOT NULL,
  payment_id uuid NOT NULL,
  adjustment boolean NOT NULL,
  cause_payment_id uuid,
  date date NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, id),
  FOREIGN KEY (account_id, loan_id) REFERENCES loans (account_id, id) ON DELETE CASCADE,
  FOREIGN KEY (account_id, payment_id) REFERENCES payments (account_id, id) ON DELETE CASCADE
);
CREATE INDEX distribution_batches_payment ON distribution_batches (account_id, payment_id);
ALTER TABLE distributions ADD COLUMN batch_id uuid;
CREATE INDEX distributions_batch ON distributions (account_id, batch_id);

-- R10's split of payments' allocations, written as lines new − existing (per party and
-- component): the first lines of a payment are its original split, later ones adjustments. Lines
-- are never updated or deleted. Σ w ≤ 1 is kept by loanql_funding_within_amount (below).
--   w_f = original_amount_f / amount, for sources with date_funded ≤ the payment's date;
--   principal × w_f; interest × w_f × min(rate_f, rate) / rate; fees × w_f × investor_fee_share.
-- Exact: per component every party's share is an integer over one common denominator D (cents ×
-- amount in cents × rates in ten-thousandths), so floors and remainders are integers and ties exact.
CREATE FUNCTION loanql_distribute_payments(p_account uuid[], p_payment uuid[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  cause uuid := nullif(current_setting('loanql.distribution_cause', true), '')::uuid;
BEGIN
  IF coalesce(cardinality(p_payment), 0) = 0 THEN RETURN; END IF;
  WITH pay AS (
         SELECT DISTINCT p.account_id, p.id, p.loan_id, p.date
           FROM unnest(p_account, p_payment) AS u(account_id, id)
           JOIN payments p ON p.account_id = u.account_id AND p.id = u.id),
       terms AS (
         SELECT pay.*, l.amount * 100 AS amount_cents, l.rate * 10000 AS rate4,
                coalesce(pr.investor_fee_share, 0) * 10000 AS share4
           FROM pay JOIN loans l ON l.account_id = pay.account_id AND l.id = pay.loan_id
           LEFT JOIN LATERAL (SELECT pr.investor_fee_share FROM products pr
                               WHERE pr.account_id = l.account_id AND (pr.id = l.product_id OR (l.product_id IS NULL AND pr.is_default))
                               ORDER BY pr.id = l.product_id DESC LIMIT 1) pr ON true),
       -- each payment's total per component now, in cents (a reversed payment has no lines: 0)
       totals AS (
         SELECT t.*, c.component, coalesce(s.cents, 0) AS cents,
                CASE c.component
                  WHEN 'principal' THEN t.amount_cents
                  WHEN 'interest' THEN t.amount_cents * t.rate4
                  ELSE t.amount_cents * 10000 END AS den
           FROM terms t
          CROSS JOIN (VALUES ('principal', 'principal'), ('interest', 'interest'), ('fees', 'fee')) AS c(component, allocation_component)
           LEFT JOIN LATERAL (SELECT sum(a.amount) * 100 AS cents FROM payment_allocations a
                               WHERE a.account_id = t.account_id AND a.payment_id = t.id AND a.component = c.allocation_component) s ON true),
       -- the funding sources sharing each component (none when the loan has no amount, or no rate for interest)
       shares AS (
         SELECT x.account_id, x.id AS payment_id, x.loan_id, x.component, x.cents, x.den, f.id AS funding_source_id, f.person_id,
                row_number() OVER (PARTITION BY x.account_id, x.id, x.component ORDER BY f.date_funded, f.id) AS ord,
                x.cents * f.original_amount * 100 * CASE x.component
                  WHEN 'principal' THEN 1
                  WHEN 'interest' THEN least(coalesce(f.rate, x.rate4 / 10000) * 10000, x.rate4)
                  ELSE x.share4 END AS num
           FROM totals x
           JOIN funding_sources f ON f.account_id = x.account_id AND f.loan_id = x.loan_id
            AND f.date_funded <= x.date AND f.original_amount > 0
          WHERE x.den > 0),
       parties AS (
         SELECT s.account_id, s.payment_id, s.loan_id, s.component, s.cents, s.den, s.funding_source_id, s.person_id, s.ord, s.num FROM shares s
         UNION ALL
         -- the lender: the rest, last on ties
         SELECT x.account_id, x.id, x.loan_id, x.component, x.cents, greatest(x.den, 1), NULL, NULL, 1000000,
                x.cents * greatest(x.den, 1) - coalesce((SELECT sum(s.num) FROM shares s
                                                           WHERE s.account_id = x.account_id AND s.payment_id = x.id AND s.component = x.component), 0)
           FROM totals x),
       floored AS (
         SELECT p.*, q.fl, p.num - q.fl * p.den AS rem
           FROM parties p
          CROSS JOIN LATERAL (SELECT div(p.num, p.den) - CASE WHEN p.num < 0 AND mod(p.num, p.den) <> 0 THEN 1 ELSE 0 END AS fl) q),
       ranked AS (
         SELECT f.*, f.cents - sum(f.fl) OVER w AS leftover,
                row_number() OVER (PARTITION BY f.account_id, f.payment_id, f.component ORDER BY f.rem DESC, f.ord) AS place
           FROM floored f
         WINDOW w AS (PARTITION BY f.account_id, f.payment_id, f.component)),
       split AS (
         SELECT r.account_id, r.payment_id, r.loan_id, r.component, r.funding_source_id, r.person_id,
                (r.fl + CASE WHEN r.place <= r.leftover THEN 1 ELSE 0 END) / 100.0 AS amount
           FROM ranked r),
       existing AS (
         SELECT d.account_id, d.payment_id, d.funding_source_id, d.component, sum(d.amount) AS amount,
                (array_agg(d.person_id))[1] AS person_id
           FROM pay JOIN distributions d ON d.account_id = pay.account_id AND d.payment_id = pay.id
          GROUP BY 1, 2, 3, 4),
       delta AS (
         SELECT coalesce(s.account_id, e.account_id) AS account_id, coalesce(s.payment_id, e.payment_id) AS payment_id,
                coalesce(s.funding_source_id, e.funding_source_id) AS funding_source_id, coalesce(s.person_id, e.person_id) AS person_id,
                coalesce(s.component, e.component) AS component, coalesce(s.amount, 0) - coalesce(e.amount, 0) AS amount
           FROM split s FULL JOIN existing e
             ON e.account_id = s.account_id AND e.payment_id = s.payment_id AND e.component = s.component
            AND coalesce(e.funding_source_id, '00000000-0000-0000-0000-000000000000') = coalesce(s.funding_source_id, '00000000-0000-0000-0000-000000000000')),
       changed AS (
         SELECT d.* FROM delta d WHERE d.amount <> 0),
       -- one batch per payment written: original lines (the payment's date), or adjustments dated the
       -- cause's reversal (a reversal) or the business date (a posting), caused by the payment this
       -- transaction wrote last on the loan (loanql.distribution_cause), or the payment itself when reversed
       batch AS (
         SELECT pay.account_id, gen_random_uuid() AS id, pay.loan_id, pay.id AS payment_id, a.adjustment,
                CASE WHEN NOT a.adjustment THEN NULL WHEN me.date_reversed IS NOT NULL THEN pay.id ELSE c.id END AS cause_payment_id,
                CASE WHEN NOT a.adjustment THEN pay.date
                     WHEN me.date_reversed IS NOT NULL THEN me.date_reversed
                     ELSE coalesce(c.date_reversed, loanql_business_date(pay.account_id)) END AS date
           FROM pay
           JOIN payments me ON me.account_id = pay.account_id AND me.id = pay.id
          CROSS JOIN LATERAL (SELECT EXISTS (SELECT 1 FROM existing e WHERE e.account_id = pay.account_id AND e.payment_id = pay.id) AS adjustment) a
           LEFT JOIN payments c ON c.account_id = pay.account_id AND c.id = cause AND c.loan_id = pay.loan_id
          WHERE EXISTS (SELECT 1 FROM changed d WHERE d.account_id = pay.account_id AND d.payment_id = pay.id)),
       batches AS (
         INSERT INTO distribution_batches (account_id, id, loan_id, payment_id, adjustment, cause_payment_id, date)
         SELECT b.account_id, b.id, b.loan_id, b.payment_id, b.adjustment, b.cause_payment_id, b.date FROM batch b
         RETURNING *)
  INSERT INTO distributions (account_id, loan_id, payment_id, funding_source_id, person_id, component, amount, adjustment, cause_payment_id, date, batch_id)
  SELECT d.account_id, b.loan_id, d.payment_id, d.funding_source_id, d.person_id, d.component, d.amount, b.adjustment, b.cause_payment_id, b.date, b.id
    FROM changed d JOIN batches b ON b.account_id = d.account_id AND b.payment_id = d.payment_id
   ORDER BY d.payment_id, CASE d.component WHEN 'principal' THEN 1 WHEN 'interest' THEN 2 ELSE 3 END, d.funding_source_id IS NULL;
END $$;

-- Every payment of the given loans split again: a funding source written, a loan's amount or
-- rate, a product's investor_fee_share changed (the weights move; allocations may not).
CREATE FUNCTION loanql_distribute_loans(p_account uuid[], p_loan uuid[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  accounts uuid[]; ids uuid[];
BEGIN
  SELECT coalesce(array_agg(p.account_id), '{}'), coalesce(array_agg(p.id), '{}') INTO accounts, ids
    FROM (SELECT DISTINCT * FROM unnest(p_account, p_loan) AS u(account_id, loan_id)) u
    JOIN payments p ON p.account_id = u.account_id AND p.loan_id = u.loan_id;
  PERFORM loanql_distribute_payments(accounts, ids);
END $$;

-- The payment a write posts or reverses is the cause of the adjustments its replay records.
CREATE FUNCTION loanql_distribution_cause() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('loanql.distribution_cause', NEW.id::text, true);
  RETURN NEW;
END $$;
CREATE TRIGGER payments_distribution_cause_insert BEFORE INSERT ON payments FOR EACH ROW EXECUTE FUNCTION loanql_distribution_cause();
CREATE TRIGGER payments_distribution_cause_reversal BEFORE UPDATE OF date_reversed ON payments
  FOR EACH ROW WHEN (OLD.date_reversed IS DISTINCT FROM NEW.date_reversed) EXECUTE FUNCTION loanql_distribution_cause();

-- R10: Σ w ≤ 1 — a loan's funding sources may not fund more than its amount (a 400 naming original_amount).
CREATE FUNCTION loanql_funding_within_amount() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  total numeric; loan_amount numeric;
BEGIN
  SELECT l.amount INTO loan_amount FROM loans l WHERE l.account_id = NEW.account_id AND l.id = NEW.loan_id;
  SELECT coalesce(sum(f.original_amount), 0) INTO total FROM funding_sources f WHERE f.account_id = NEW.account_id AND f.loan_id = NEW.loan_id;
  IF total > coalesce(loan_amount, 0) AND total > 0 THEN
    RAISE EXCEPTION 'the loan''s funding sources would total %, more than its amount % (SPEC §12 R10: the weights may not sum past 1)', total, coalesce(loan_amount, 0)
      USING ERRCODE = 'check_violation', CONSTRAINT = 'funding_sources_within_loan_amount', TABLE = 'funding_sources', COLUMN = 'original_amount';
  END IF;
  RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER funding_sources_within_loan_amount AFTER INSERT OR UPDATE OF original_amount, loan_id ON funding_sources
  FOR EACH ROW EXECUTE FUNCTION loanql_funding_within_amount();
-- and a loan's amount may not fall below what its funding sources put in
CREATE FUNCTION loanql_loan_amount_covers_funding() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  total numeric;
BEGIN
  SELECT coalesce(sum(f.original_amount), 0) INTO total FROM funding_sources f WHERE f.account_id = NEW.account_id AND f.loan_id = NEW.id;
  IF total > coalesce(NEW.amount, 0) AND total > 0 THEN
    RAISE EXCEPTION 'the loan''s funding sources total %, more than the amount % (SPEC §12 R10)', total, coalesce(NEW.amount, 0)
      USING ERRCODE = 'check_violation', CONSTRAINT = 'loans_amount_covers_funding', TABLE = 'loans', COLUMN = 'amount';
  END IF;
  RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER loans_amount_covers_funding AFTER UPDATE OF amount ON loans
  FOR EACH ROW EXECUTE FUNCTION loanql_loan_amount_covers_funding();

-- The weights moved: split every payment of the loans again (after the replay of 0012's
-- loans_replay_terms, which sorts before these by name). The seeder loads with
-- loanql.replaying on and replays everything at the end, which writes the lines.
CREATE FUNCTION loanql_funding_redistribute() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('loanql.replaying', true) = 'on' THEN RETURN NULL; END IF;
  PERFORM loanql_distribute_loans(array_agg(c.account_id), array_agg(c.loan_id)) FROM changed_rows c;
  RETURN NULL;
END $$;
CREATE TRIGGER funding_sources_redistribute_insert AFTER INSERT ON funding_sources
  REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION loanql_funding_redistribute();
CREATE TRIGGER funding_sources_redistribute_update AFTER UPDATE ON funding_sources
  REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION loanql_funding_redistribute();
CREATE TRIGGER funding_sources_redistribute_delete AFTER DELETE ON funding_sources
  REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION loanql_funding_redistribute();
CREATE FUNCTION loanql_loan_terms_redistribute() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('loanql.replaying', true) = 'on' THEN RETURN NULL; END IF;
  PERFORM loanql_distribute_loans(ARRAY[NEW.account_id], ARRAY[NEW.id]);
  RETURN NULL;
END $$;
CREATE TRIGGER loans_terms_redistribute AFTER UPDATE OF amount, rate, product_id ON loans
  FOR EACH ROW WHEN ((OLD.amount, OLD.rate, OLD.product_id) IS DISTINCT FROM (NEW.amount, NEW.rate, NEW.product_id))
  EXECUTE FUNCTION loanql_loan_terms_redistribute();
CREATE FUNCTION loanql_product_fee_share_redistribute() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('loanql.replaying', true) = 'on' THEN RETURN NULL; END IF;
  PERFORM loanql_distribute_loans(array_agg(l.account_id), array_agg(l.id))
     FROM loans l
    WHERE l.account_id = NEW.account_id AND (l.product_id = NEW.id OR (l.product_id IS NULL AND NEW.is_default));
  RETURN NULL;
END $$;
CREATE TRIGGER products_fee_share_redistribute AFTER UPDATE OF investor_fee_share ON products
  FOR EACH ROW WHEN (OLD.investor_fee_share IS DISTINCT FROM NEW.investor_fee_share)
  EXECUTE FUNCTION loanql_product_fee_share_redistribute();

-- 0012's loanql_refresh_next, which now also forgets the distribution cause once the statement's
-- loans are replayed (a later write of the transaction, e.g. a fee, has its own cause or none).
CREATE OR REPLACE FUNCTION loanql_refresh_next(p_account uuid[], p_loan uuid[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  accounts uuid[];
  loans uuid[];
  b integer;
BEGIN
  IF current_setting('loanql.replaying', true) = 'on' THEN RETURN; END IF;
  -- Transaction-local: an error rolls the setting back with the (sub)transaction.
  PERFORM set_config('loanql.replaying', 'on', true);
  -- Lock first (in id order), then replay in batches of 500 loans.
  SELECT coalesce(array_agg(x.account_id ORDER BY x.account_id, x.id), '{}'), coalesce(array_agg(x.id ORDER BY x.account_id, x.id), '{}')
    INTO accounts, loans
    FROM (SELECT l.account_id, l.id FROM loans l
           WHERE (l.account_id, l.id) IN (SELECT u.account_id, u.loan_id FROM unnest(p_account, p_loan) AS u(account_id, loan_id))
           ORDER BY l.account_id, l.id
             FOR NO KEY UPDATE) x;
  FOR b IN 0..(coalesce(array_length(loans, 1), 0) - 1) / 500 LOOP
    PERFORM loanql_replay_loans(accounts[b * 500 + 1:b * 500 + 500], loans[b * 500 + 1:b * 500 + 500]);
  END LOOP;
  PERFORM set_config('loanql.replaying', 'off', true);
  PERFORM set_config('loanql.distribution_cause', '', true);
END $$;

-- The replay (0018's loanql_replay_loans with the two R10 steps marked 0024).
CREATE OR REPLACE FUNCTION loanql_replay_loans(p_account uuid[], p_loan uuid[]) RETURNS void
LANGUAGE plpgsql SET enable_seqscan = off AS $$
DECLARE
  items loanql_replay_item[];
  -- Flattened results (0016): one element per loan, per line, per schedule row, per fee.
  lo_account uuid[]; lo_loan uuid[]; lo_status text[]; lo_closed date[]; lo_as_of date[]; lo_next integer[];
  lo_principal numeric[]; lo_interest numeric[]; lo_fees numeric[]; lo_credit numeric[]; lo_oldest date[];
  lo_dpd integer[];  -- #31
  ln_account uuid[]; ln_loan uuid[]; ln_position integer[]; ln_payment uuid[]; ln_row integer[]; ln_fee uuid[]; ln_component text[]; ln_amount numeric[];
  rw_account uuid[]; rw_loan uuid[]; rw_number integer[]; rw_interest numeric[]; rw_principal numeric[]; rw_balance numeric[];
  rw_interest_paid numeric[]; rw_principal_paid numeric[]; rw_is_next boolean[];
  fe_account uuid[]; fe_loan uuid[]; fe_id uuid[]; fe_kind text[]; fe_row integer[]; fe_date date[]; fe_amount numeric[]; fe_paid numeric[]; fe_waived numeric[];
  -- whether any loan's stored lines, or schedule rows, differ from the new ones at all
  lines_differ boolean; rows_differ boolean;
  -- 0024 (R10): the payments whose per-component totals (principal, interest, fee) the new lines change
  dp_account uuid[]; dp_payment uuid[];
BEGIN
  -- Compute: each loan's ledger once (OFFSET 0 keeps the planner from pulling the subquery up
  -- and calling loanql_ledger again for every (t.r) below), and the status it leaves (R9).
  SELECT array_agg(ROW(t.account_id, t.id, st.new_status, st.new_closed, t.r, t.as_of)::loanql_replay_item) INTO items
    FROM (SELECT l.account_id, l.id, l.status, l.date_closed, a.as_of, loanql_ledger(l.account_id, l.id, a.as_of) AS r
            FROM loans l JOIN (SELECT DISTINCT * FROM unnest(p_account, p_loan) AS u(account_id, loan_id)) u
              ON l.account_id = u.account_id AND l.id = u.loan_id
            CROSS JOIN LATERAL (SELECT loanql_stored_as_of(l.account_id, l.id) AS as_of) a
          OFFSET 0) t
    CROSS JOIN LATERAL loanql_ledger_status(t.status, t.date_closed, (t.r).settled, (t.r).credit_balance, (t.r).settled_on) st;
  IF items IS NULL THEN RETURN; END IF;

  -- Compare (0016): each loan's stored lines and rows read in order into arrays, compared whole
  -- with the new ones; a replay that changes nothing (most) then skips the writes below. Read in
  -- an ordered subquery: were that order not kept, the positions (numbers) would not match and
  -- the write below, which compares line by line, would run: never a change missed.
  SELECT coalesce(bool_or(ol.differ), false), coalesce(bool_or(orw.differ), false) INTO lines_differ, rows_differ
    FROM unnest(items) i
    CROSS JOIN LATERAL (
          SELECT (coalesce(array_agg(a.position), '{}'), coalesce(array_agg(a.payment_id), '{}'), coalesce(array_agg(a.row_number), '{}'),
                  coalesce(array_agg(a.fee_id), '{}'), coalesce(array_agg(a.component), '{}'), coalesce(array_agg(a.amount), '{}'))
                 IS DISTINCT FROM (ARRAY(SELECT generate_series(1, cardinality((i.r).line_payment))), (i.r).line_payment, (i.r).line_row,
                                   (i.r).line_fee, (i.r).line_component, (i.r).line_amount) AS differ
            FROM (SELECT a.position, a.payment_id, a.row_number, a.fee_id, a.component, a.amount FROM payment_allocations a
                   WHERE a.account_id = i.account_id AND a.loan_id = i.loan_id ORDER BY a.position) a) ol
    CROSS JOIN LATERAL (
          SELECT (coalesce(array_agg(s.number), '{}'), coalesce(array_agg(s.interest), '{}'), coalesce(array_agg(s.principal), '{}'),
                  coalesce(array_agg(s.balance), '{}'), coalesce(array_agg(s.interest_paid), '{}'), coalesce(array_agg(s.principal_paid), '{}'),
                  coalesce(array_agg(s.is_next), '{}'))
                 IS DISTINCT FROM ((i.r).row_number, (i.r).row_interest, (i.r).row_principal, (i.r).row_balance, (i.r).row_interest_paid,
                                   (i.r).row_principal_paid,
                                   ARRAY(SELECT i.new_status = 'servicing' AND u.number IS NOT DISTINCT FROM (i.r).next_row
                                           FROM unnest((i.r).row_number) WITH ORDINALITY AS u(number, k) ORDER BY u.k)) AS differ
            FROM (SELECT s.number, s.interest, s.principal, s.balance, s.interest_paid, s.principal_paid, s.is_next FROM schedules s
                   WHERE s.account_id = i.account_id AND s.loan_id = i.loan_id ORDER BY s.due, s.number) s) orw;

  -- Flatten (0016): plain arrays, so no write joins a row to its loan's whole ledger.
  SELECT array_agg(i.account_id), array_agg(i.loan_id), array_agg(i.new_status), array_agg(i.new_closed), array_agg(i.as_of),
         array_agg((i.r).next_row), array_agg((i.r).principal_outstanding), array_agg((i.r).interest_due), array_agg((i.r).fees_due),
         array_agg((i.r).credit_balance), array_agg((i.r).oldest_unpaid_due),
         -- #31: days past due as of ledger_as_of (R3), 0 for a loan not in servicing; the bucket follows (loanql_loan_bucket)
         array_agg(CASE WHEN i.new_status = 'servicing' THEN (i.r).days_past_due ELSE 0 END)
    INTO lo_account, lo_loan, lo_status, lo_closed, lo_as_of, lo_next, lo_principal, lo_interest, lo_fees, lo_credit, lo_oldest, lo_dpd
    FROM unnest(items) i;
  SELECT coalesce(array_agg(i.account_id), '{}'), coalesce(array_agg(i.loan_id), '{}'), coalesce(array_agg(u.id), '{}'),
         coalesce(array_agg(u.kind), '{}'), coalesce(array_agg(u.row_number), '{}'), coalesce(array_agg(u.date), '{}'),
         coalesce(array_agg(u.amount), '{}'), coalesce(array_agg(u.paid), '{}'), coalesce(array_agg(u.waived), '{}')
    INTO fe_account, fe_loan, fe_id, fe_kind, fe_row, fe_date, fe_amount, fe_paid, fe_waived
    FROM unnest(items) i,
         unnest((i.r).fee_id, (i.r).fee_kind, (i.r).fee_row, (i.r).fee_date, (i.r).fee_amount, (i.r).fee_paid, (i.r).fee_waived)
           AS u(id, kind, row_number, date, amount, paid, waived);

  -- Write (0016: each write one statement over the flattened arrays) ------------------------

  -- Allocation lines: each payment's stored lines are matched, in order, with its new lines (the
  -- k-th line of payment P with the new k-th line of P); a matched line that differs is updated in
  -- place, the others are deleted or inserted. A line keeps its payment and loan, so no foreign
  -- key is checked again: reversing an early payment moves every line but inserts none.
  IF lines_differ THEN
    SELECT coalesce(array_agg(i.account_id), '{}'), coalesce(array_agg(i.loan_id), '{}'), coalesce(array_agg(u.position::integer), '{}'),
           coalesce(array_agg(u.payment_id), '{}'), coalesce(array_agg(u.row_number), '{}'), coalesce(array_agg(u.fee_id), '{}'),
           coalesce(array_agg(u.component), '{}'), coalesce(array_agg(u.amount), '{}')
      INTO ln_account, ln_loan, ln_position, ln_payment, ln_row, ln_fee, ln_component, ln_amount
      FROM unnest(items) i,
           unnest((i.r).line_payment, (i.r).line_row, (i.r).line_fee, (i.r).line_component, (i.r).line_amount)
             WITH ORDINALITY AS u(payment_id, row_number, fee_id, component, amount, position);

    -- 0024 (R10): which payments' component totals move (read before the lines are written), so
    -- only their distributions are split again: a payment posted at the end of a long history
    -- touches its own lines only.
    SELECT coalesce(array_agg(d.account_id), '{}'), coalesce(array_agg(d.payment_id), '{}') INTO dp_account, dp_payment
      FROM (SELECT DISTINCT coalesce(n.account_id, o.account_id) AS account_id, coalesce(n.payment_id, o.payment_id) AS payment_id
              FROM (SELECT n.account_id, n.payment_id, n.component, sum(n.amount) AS amount
                      FROM unnest(ln_account, ln_payment, ln_component, ln_amount) AS n(account_id, payment_id, component, amount)
                     WHERE n.payment_id IS NOT NULL AND n.component IN ('principal', 'interest', 'fee')
                     GROUP BY 1, 2, 3) n
              FULL JOIN (
                    SELECT o.account_id, o.payment_id, o.component, sum(o.amount) AS amount
                      FROM unnest(lo_account, lo_loan) AS l(account_id, loan_id)
                     CROSS JOIN LATERAL (
                           SELECT a.account_id, a.payment_id, a.component, a.amount FROM payment_allocations a
                            WHERE a.account_id = l.account_id AND a.loan_id = l.loan_id AND a.payment_id IS NOT NULL
                              AND a.component IN ('principal', 'interest', 'fee') OFFSET 0) o
                     GROUP BY 1, 2, 3) o
                ON o.account_id = n.account_id AND o.payment_id = n.payment_id AND o.component = n.component
             WHERE n.amount IS DISTINCT FROM o.amount) d;

    WITH new_lines AS (
           SELECT n.*, coalesce(n.payment_id, '00000000-0000-0000-0000-000000000000') AS payment_key,
                  row_number() OVER (PARTITION BY n.account_id, n.loan_id, n.payment_id ORDER BY n.position) AS nth
             FROM unnest(ln_account, ln_loan, ln_position, ln_payment, ln_row, ln_fee, ln_component, ln_amount)
                    AS n(account_id, loan_id, position, payment_id, row_number, fee_id, component, amount)),
         -- each loan's lines by its own index range (LATERAL, and the window keeps the subquery
         -- apart): a plan cached while the table was small never scans all of it per batch
         old_lines AS (
           SELECT o.* FROM unnest(lo_account, lo_loan) AS l(account_id, loan_id)
            CROSS JOIN LATERAL (
                  SELECT a.account_id, a.id, a.loan_id, a.position, a.row_number, a.fee_id, a.component, a.amount,
                         coalesce(a.payment_id, '00000000-0000-0000-0000-000000000000') AS payment_key,
                         row_number() OVER (PARTITION BY a.payment_id ORDER BY a.position) AS nth
                    FROM payment_allocations a WHERE a.account_id = l.account_id AND a.loan_id = l.loan_id) o),
         pairs AS (
           SELECT n.account_id, n.loan_id, n.payment_id, n.position, n.row_number, n.fee_id, n.component, n.amount,
                  o.account_id AS old_account_id, o.id AS old_id,
                  (o.position, o.row_number, o.fee_id, o.component, o.amount) IS DISTINCT FROM (n.position, n.row_number, n.fee_id, n.component, n.amount) AS changed
             FROM new_lines n FULL JOIN old_lines o
               ON o.account_id = n.account_id AND o.loan_id = n.loan_id AND o.payment_key = n.payment_key AND o.nth = n.nth),
         moved AS (
           UPDATE payment_allocations a
              SET position = p.position, row_number = p.row_number, fee_id = p.fee_id, component = p.component, amount = p.amount
             FROM pairs p
            WHERE p.old_id IS NOT NULL AND p.position IS NOT NULL AND p.changed AND a.account_id = p.old_account_id AND a.id = p.old_id),
         removed AS (
           DELETE FROM payment_allocations a USING pairs p
            WHERE p.position IS NULL AND a.account_id = p.old_account_id AND a.id = p.old_id)
    INSERT INTO payment_allocations (account_id, loan_id, payment_id, row_number, fee_id, component, amount, position)
      SELECT p.account_id, p.loan_id, p.payment_id, p.row_number, p.fee_id, p.component, p.amount, p.position
        FROM pairs p WHERE p.old_id IS NULL;

    -- 0024 (R10): distributions follow the allocation in the same transaction.
    PERFORM loanql_distribute_payments(dp_account, dp_payment);
  END IF;

  -- Schedule rows: what each asks now, what it has been paid, and the next one (one per loan: cleared first).
  IF rows_differ THEN
    SELECT coalesce(array_agg(i.account_id), '{}'), coalesce(array_agg(i.loan_id), '{}'), coalesce(array_agg(u.number), '{}'),
           coalesce(array_agg(u.interest), '{}'), coalesce(array_agg(u.principal), '{}'), coalesce(array_agg(u.balance), '{}'),
           coalesce(array_agg(u.interest_paid), '{}'), coalesce(array_agg(u.principal_paid), '{}'),
           coalesce(array_agg(i.new_status = 'servicing' AND u.number IS NOT DISTINCT FROM (i.r).next_row), '{}')
      INTO rw_account, rw_loan, rw_number, rw_interest, rw_principal, rw_balance, rw_interest_paid, rw_principal_paid, rw_is_next
      FROM unnest(items) i,
           unnest((i.r).row_number, (i.r).row_interest, (i.r).row_principal, (i.r).row_balance, (i.r).row_interest_paid, (i.r).row_principal_paid)
             AS u(number, interest, principal, balance, interest_paid, principal_paid);

    UPDATE schedules s SET is_next = false
      FROM unnest(lo_account, lo_loan, lo_status, lo_next) AS l(account_id, loan_id, status, next_row)
     WHERE s.account_id = l.account_id AND s.loan_id = l.loan_id AND s.is_next
       AND (l.status <> 'servicing' OR s.number IS DISTINCT FROM l.next_row);
    -- (each loan's rows read by its own index range, as the lines are; then only the rows that differ, by key)
    WITH changed AS (
           SELECT o.account_id, o.id, x.interest, x.principal, x.balance, x.interest_paid, x.principal_paid, x.is_next
             FROM unnest(lo_account, lo_loan) AS l(account_id, loan_id)
            CROSS JOIN LATERAL (
                  SELECT s.account_id, s.id, s.loan_id, s.number, s.interest, s.principal, s.balance, s.interest_paid, s.principal_paid, s.is_next
                    FROM schedules s WHERE s.account_id = l.account_id AND s.loan_id = l.loan_id OFFSET 0) o
             JOIN unnest(rw_account, rw_loan, rw_number, rw_interest, rw_principal, rw_balance, rw_interest_paid, rw_principal_paid, rw_is_next)
                    AS x(account_id, loan_id, number, interest, principal, balance, interest_paid, principal_paid, is_next)
               ON x.account_id = o.account_id AND x.loan_id = o.loan_id AND x.number = o.number
            WHERE (o.interest, o.principal, o.balance, o.interest_paid, o.principal_paid, o.is_next)
                  IS DISTINCT FROM (x.interest, x.principal, x.balance, x.interest_paid, x.principal_paid, x.is_next))
    UPDATE schedules s
       SET interest = c.interest, principal = c.principal, payment = c.interest + c.principal, balance = c.balance,
           interest_paid = c.interest_paid, principal_paid = c.principal_paid, is_next = c.is_next
      FROM changed c
     WHERE s.account_id = c.account_id AND s.id = c.id;
  END IF;

  -- Fees: the stored fees of these loans matched with the new ones by id. Late fees are the
  -- replay's (R4: a reversal can create or remove one); other fees keep what was paid and waived.
  WITH new_fees AS (
         SELECT * FROM unnest(fe_account, fe_loan, fe_id, fe_kind, fe_row, fe_date, fe_amount, fe_paid, fe_waived)
                  AS n(account_id, loan_id, id, kind, row_number, date, amount, paid, waived)),
       old_fees AS (
         SELECT o.* FROM unnest(lo_account, lo_loan) AS l(account_id, loan_id)
          CROSS JOIN LATERAL (
                SELECT f.account_id, f.id, f.kind, f.row_number, f.date, f.amount, f.paid, f.waived
                  FROM fees f WHERE f.account_id = l.account_id AND f.loan_id = l.loan_id OFFSET 0) o),
       pairs AS (
         SELECT n.*, o.account_id AS old_account_id, o.id AS old_id, o.kind AS old_kind,
                (o.row_number, o.date, o.amount) IS DISTINCT FROM (n.row_number, n.date, n.amount) AS moved,
                (o.paid, o.waived) IS DISTINCT FROM (n.paid, n.waived) AS repaid
           FROM new_fees n FULL JOIN old_fees o ON o.account_id = n.account_id AND o.id = n.id),
       removed AS (
         DELETE FROM fees f USING pairs p
          WHERE p.id IS NULL AND p.old_kind = 'late' AND f.account_id = p.old_account_id AND f.id = p.old_id),
       late_moved AS (
         UPDATE fees f SET row_number = p.row_number, date = p.date, amount = p.amount, paid = p.paid, waived = p.waived
           FROM pairs p WHERE p.kind = 'late' AND p.old_id IS NOT NULL AND p.moved AND f.account_id = p.account_id AND f.id = p.id),
       repaid AS (
         UPDATE fees f SET paid = p.paid, waived = p.waived
           FROM pairs p WHERE p.old_id IS NOT NULL AND NOT (p.kind = 'late' AND p.moved) AND p.repaid AND f.account_id = p.account_id AND f.id = p.id)
  INSERT INTO fees (account_id, id, loan_id, kind, row_number, date, amount, paid, waived)
    SELECT p.account_id, p.id, p.loan_id, 'late', p.row_number, p.date, p.amount, p.paid, p.waived
      FROM pairs p WHERE p.kind = 'late' AND p.old_id IS NULL;

  UPDATE loans l
     SET principal_outstanding = x.principal, interest_due = x.interest, fees_due = x.fees,
         credit_balance = x.credit, oldest_unpaid_due = x.oldest, status = x.status, date_closed = x.closed,
         ledger_as_of = x.as_of, days_past_due = x.dpd  -- #31
    FROM unnest(lo_account, lo_loan, lo_principal, lo_interest, lo_fees, lo_credit, lo_oldest, lo_status, lo_closed, lo_as_of, lo_dpd)
           AS x(account_id, loan_id, principal, interest, fees, credit, oldest, status, closed, as_of, dpd)
   WHERE l.account_id = x.account_id AND l.id = x.loan_id
     AND (l.principal_outstanding, l.interest_due, l.fees_due, l.credit_balance, l.oldest_unpaid_due, l.status, l.date_closed, l.ledger_as_of, l.days_past_due)
         IS DISTINCT FROM (x.principal, x.interest, x.fees, x.credit, x.oldest, x.status, x.closed, x.as_of, x.dpd);
END $$;

-- Every payment already allocated gets its original lines.
SELECT loanql_distribute_payments(coalesce(array_agg(p.account_id), '{}'), coalesce(array_agg(p.id), '{}'))
  FROM payments p WHERE p.date_reversed IS NULL;
`;
