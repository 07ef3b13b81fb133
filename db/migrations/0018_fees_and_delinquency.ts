/**
 * Delinquency and fees, the write side (issue 31; SPEC §12 R3, R4, R8's NSF fee): waivers as
 * records, manual fees, the stored delinquency of each loan, and the daily job's record of the
 * days it has done. docs/ledger.md ("Fees, waivers and the daily job") has the decisions.
 *
 * - `loans.days_past_due` (R3, as of `ledger_as_of`; 0 for a loan not in servicing) is written
 *   by the replay; `loans.delinquency_bucket` follows it (a BEFORE trigger, `loanql_loan_bucket`:
 *   the product's `delinquency_buckets`, `loanql_delinquency_bucket` of 0014), and again for
 *   every loan of a product whose buckets change. The metadata's `loan.delinquency_changed`
 *   event is captured when the stored bucket changes, from a write or from the daily job.
 * - A late fee's id is its loan and schedule row (`loanql_late_fee_id`, an md5 uuid): a fee that
 *   a reversal removed and a later replay derives again is the same fee. Existing late fees (and
 *   the allocation lines that name them) are re-keyed to it below.
 * - `fee_waivers`: one record per fee (who, when, why), never deleted; its fee need not exist
 *   any more (a late fee a reversal removed) — when the replay derives the fee again the waiver
 *   applies again. Inserting one copies it onto the fee (`fees.waived_on/by/reason`, which the
 *   replay reads), and so replays the loan in the same transaction. Refused (a 400 naming the
 *   field): a fee not of the account, a second waiver, a waiver dated before its fee or after the
 *   business date, and a fee with nothing unpaid on the waiver's date.
 * - `fees.description` (a manual fee's note); a fee inserted without a date is dated the
 *   business date.
 * - `loanql_business_date` honours the setting `loanql.business_date` (a date): the daily job
 *   sets it for its own transaction when it assesses a day; tests set it to travel in time. The
 *   service never sets it otherwise.
 * - `ledger_job_days`: (account, job, business date) done, with what the day's run did;
 *   `loanql_assess_fees_batch(account, as_of, after, batch)` replays the next batch of the
 *   account's serviced loans whose stored ledger is of an earlier day than `as_of`, as of
 *   `as_of`, skipping loans another transaction holds (SKIP LOCKED: two processes share the work;
 *   a fee is assessed once whatever runs, since the replay locks each loan and late fees are
 *   unique per row). app/feeJob.ts drives it.
 *
 * Replay functions re-created here from 0016's (the faster replay), with only these changes:
 * - `loanql_ledger`: the late-fee id (`-- #31:` — a new late fee takes
 *   `loanql_late_fee_id(loan, row)` instead of `gen_random_uuid()`, and the waiver recorded for
 *   that id). Everything else is 0016's text.
 * - `loanql_replay_loans`: the loans' flattened results carry `days_past_due` and the final
 *   `UPDATE loans` writes it (`-- #31`).
 */
export const name = '0018_fees_and_delinquency';

export const sql = /* sql */ `
SET LOCAL loanql.capture_events = 'off';

-- Stored delinquency (R3) ----------------------------------------------------------------------
ALTER TABLE loans
  ADD COLUMN delinquency_bucket text,
  ADD COLUMN days_past_due integer NOT NULL DEFAULT 0;

-- The bucket of a number of days past due by the buckets of the loan's product (a loan without
-- a product: the account's default product's; no product at all: SPEC §12's default list).
CREATE FUNCTION loanql_loan_bucket(p_account uuid, p_product uuid, p_days integer) RETURNS text
LANGUAGE sql STABLE AS $$
  SELECT loanql_delinquency_bucket(coalesce(
    (SELECT pr.delinquency_buckets FROM products pr
      WHERE pr.account_id = p_account AND (pr.id = p_product OR (p_product IS NULL AND pr.is_default)) LIMIT 1),
    '[{"name": "current", "from": 0}, {"name": "1-29", "from": 1}, {"name": "30-59", "from": 30}, {"name": "60-89", "from": 60}, {"name": "90-119", "from": 90}, {"name": "120+", "from": 120}]'::jsonb),
    p_days)
$$;

CREATE FUNCTION loanql_loan_delinquency() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.delinquency_bucket := loanql_loan_bucket(NEW.account_id, NEW.product_id, NEW.days_past_due);
  RETURN NEW;
END $$;
CREATE TRIGGER loans_delinquency_insert BEFORE INSERT ON loans FOR EACH ROW EXECUTE FUNCTION loanql_loan_delinquency();
CREATE TRIGGER loans_delinquency_update BEFORE UPDATE OF days_past_due, product_id ON loans FOR EACH ROW
  WHEN (OLD.days_past_due IS DISTINCT FROM NEW.days_past_due OR OLD.product_id IS DISTINCT FROM NEW.product_id OR NEW.delinquency_bucket IS NULL)
  EXECUTE FUNCTION loanql_loan_delinquency();

-- A product's buckets renamed or moved: its loans' stored buckets follow.
CREATE FUNCTION loanql_product_buckets_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE loans l SET delinquency_bucket = loanql_delinquency_bucket(NEW.delinquency_buckets, l.days_past_due)
   WHERE l.account_id = NEW.account_id AND (l.product_id = NEW.id OR (l.product_id IS NULL AND NEW.is_default))
     AND l.delinquency_bucket IS DISTINCT FROM loanql_delinquency_bucket(NEW.delinquency_buckets, l.days_past_due);
  RETURN NULL;
END $$;
CREATE TRIGGER products_buckets_changed AFTER UPDATE OF delinquency_buckets ON products FOR EACH ROW
  WHEN (OLD.delinquency_buckets IS DISTINCT FROM NEW.delinquency_buckets)
  EXECUTE FUNCTION loanql_product_buckets_changed();

-- The business date, and the job's and tests' clock -----------------------------------------------
CREATE OR REPLACE FUNCTION loanql_business_date(p_account uuid) RETURNS date
LANGUAGE sql STABLE AS $$
  SELECT coalesce(nullif(current_setting('loanql.business_date', true), '')::date,
                  (now() AT TIME ZONE coalesce((SELECT timezone FROM accounts WHERE id = p_account), 'UTC'))::date)
$$;

-- Fees: identity, manual fees, waivers ------------------------------------------------------------
CREATE FUNCTION loanql_late_fee_id(p_loan uuid, p_row integer) RETURNS uuid
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$ SELECT md5(p_loan::text || ':late:' || p_row::text)::uuid $$;

ALTER TABLE fees ADD COLUMN description text CONSTRAINT fees_description_length CHECK (length(description) <= 500);

CREATE TABLE fee_waivers (
  account_id uuid NOT NULL,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  -- the fee waived (a late fee's id is its loan and row, so no foreign key: a reversal may remove
  -- the fee for a while, and the waiver applies again when the replay derives it again)
  fee_id uuid NOT NULL,
  loan_id uuid NOT NULL,
  waived_on date NOT NULL,
  waived_by text NOT NULL CONSTRAINT fee_waivers_waived_by CHECK (btrim(waived_by) <> '' AND length(waived_by) <= 200),
  reason text NOT NULL CONSTRAINT fee_waivers_reason CHECK (btrim(reason) <> '' AND length(reason) <= 500),
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (account_id, id),
  FOREIGN KEY (account_id, loan_id) REFERENCES loans (account_id, id) ON DELETE CASCADE,
  CONSTRAINT fee_waivers_one_per_fee UNIQUE (account_id, fee_id)
);
CREATE INDEX fee_waivers_loan ON fee_waivers (account_id, loan_id);

CREATE FUNCTION loanql_fee_waived_on(p_account uuid, p_fee uuid) RETURNS date
LANGUAGE sql STABLE AS $$ SELECT w.waived_on FROM fee_waivers w WHERE w.account_id = p_account AND w.fee_id = p_fee $$;

-- A waiver: of a fee of the account, dated from the fee's date to the business date (default),
-- by someone (given, or the session's loanql.actor: the dashboard's admin), of a fee with
-- something unpaid on that day.
CREATE FUNCTION loanql_fee_waiver_checked() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  fee record;
  today date := loanql_business_date(NEW.account_id);
  r loanql_ledger_result;
  unpaid numeric;
BEGIN
  SELECT f.loan_id, f.date, f.amount INTO fee FROM fees f WHERE f.account_id = NEW.account_id AND f.id = NEW.fee_id;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'no fee % on this account''s loans', NEW.fee_id
      USING ERRCODE = 'foreign_key_violation', CONSTRAINT = 'fee_waivers_fee', TABLE = 'fee_waivers', COLUMN = 'fee_id';
  END IF;
  NEW.loan_id := fee.loan_id;
  NEW.waived_on := coalesce(NEW.waived_on, today);
  NEW.waived_by := coalesce(nullif(btrim(NEW.waived_by), ''), nullif(current_setting('loanql.actor', true), ''));
  IF NEW.waived_on < fee.date OR NEW.waived_on > today THEN
    RAISE EXCEPTION 'a waiver is dated from its fee''s date (%) to the business date (%), not %', fee.date, today, NEW.waived_on
      USING ERRCODE = 'check_violation', CONSTRAINT = 'fee_waivers_waived_on', TABLE = 'fee_waivers', COLUMN = 'waived_on';
  END IF;
  r := loanql_ledger(NEW.account_id, fee.loan_id, NEW.waived_on);
  SELECT u.amount - u.paid - u.waived INTO unpaid
    FROM unnest(r.fee_id, r.fee_amount, r.fee_paid, r.fee_waived) AS u(id, amount, paid, waived) WHERE u.id = NEW.fee_id;
  IF coalesce(unpaid, fee.amount) <= 0 THEN
    RAISE EXCEPTION 'the fee is paid in full on %: there is nothing to waive (pay money back with a payment of type refund)', NEW.waived_on
      USING ERRCODE = 'check_violation', CONSTRAINT = 'fee_waivers_unpaid', TABLE = 'fee_waivers', COLUMN = 'fee_id';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER fee_waivers_checked BEFORE INSERT ON fee_waivers FOR EACH ROW EXECUTE FUNCTION loanql_fee_waiver_checked();
-- Waivers are records: never edited, never deleted (a loan's deletion takes them along).
CREATE FUNCTION loanql_fee_waiver_final() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' AND NOT EXISTS (SELECT 1 FROM loans l WHERE l.account_id = OLD.account_id AND l.id = OLD.loan_id) THEN RETURN OLD; END IF;
  RAISE EXCEPTION 'a fee waiver is a record: it is never changed or deleted'
    USING ERRCODE = 'check_violation', CONSTRAINT = 'fee_waivers_final', TABLE = 'fee_waivers';
END $$;
CREATE TRIGGER fee_waivers_final BEFORE UPDATE OR DELETE ON fee_waivers FOR EACH ROW EXECUTE FUNCTION loanql_fee_waiver_final();
-- The waiver onto its fee: the fee's waived_on changes, which replays the loan (0012's fees_replay_update).
CREATE FUNCTION loanql_fee_waiver_applied() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE fees SET waived_on = NEW.waived_on, waived_by = NEW.waived_by, waived_reason = NEW.reason
   WHERE account_id = NEW.account_id AND id = NEW.fee_id;
  RETURN NULL;
END $$;
CREATE TRIGGER fee_waivers_applied AFTER INSERT ON fee_waivers FOR EACH ROW EXECUTE FUNCTION loanql_fee_waiver_applied();

-- A fee as recorded: dated the business date when no date is given; a fee derived again (a late
-- fee a reversal had removed) carries its waiver again.
CREATE FUNCTION loanql_fee_as_recorded() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.date IS NULL THEN NEW.date := loanql_business_date(NEW.account_id); END IF;
  IF NEW.waived_on IS NULL THEN
    SELECT w.waived_on, w.waived_by, w.reason INTO NEW.waived_on, NEW.waived_by, NEW.waived_reason
      FROM fee_waivers w WHERE w.account_id = NEW.account_id AND w.fee_id = NEW.id;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER fees_as_recorded BEFORE INSERT ON fees FOR EACH ROW EXECUTE FUNCTION loanql_fee_as_recorded();

-- Existing late fees take their lasting id (the allocation lines that name them too).
UPDATE payment_allocations a SET fee_id = loanql_late_fee_id(f.loan_id, f.row_number)
  FROM fees f WHERE f.account_id = a.account_id AND f.id = a.fee_id AND f.kind = 'late' AND f.id <> loanql_late_fee_id(f.loan_id, f.row_number);
UPDATE fees SET id = loanql_late_fee_id(loan_id, row_number) WHERE kind = 'late' AND id <> loanql_late_fee_id(loan_id, row_number);

-- The daily job's record ---------------------------------------------------------------------------
CREATE TABLE ledger_job_days (
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  job text NOT NULL,
  business_date date NOT NULL,
  loans_replayed integer NOT NULL DEFAULT 0,
  fees_assessed integer NOT NULL DEFAULT 0,
  fees_amount numeric(14, 2) NOT NULL DEFAULT 0,
  finished_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (account_id, id),
  -- a day is done once per account and job
  CONSTRAINT ledger_job_days_once UNIQUE (account_id, job, business_date)
);

-- The next batch of the account's serviced loans whose stored ledger is of a day before p_as_of
-- (ids after p_after, in id order), replayed as of p_as_of; loans another transaction holds are
-- skipped (it is replaying them). Returns the batch's size, its last id, and the fees it assessed.
CREATE FUNCTION loanql_assess_fees_batch(p_account uuid, p_as_of date, p_after uuid DEFAULT NULL, p_batch integer DEFAULT 500,
                                         OUT loans_replayed integer, OUT last_id uuid, OUT fees_assessed integer, OUT fees_amount numeric)
LANGUAGE plpgsql AS $$
DECLARE
  started timestamptz := clock_timestamp();
  batch uuid[];
BEGIN
  PERFORM set_config('loanql.business_date', p_as_of::text, true);
  SELECT coalesce(array_agg(x.id ORDER BY x.id), '{}') INTO batch FROM (
    SELECT l.id FROM loans l
     WHERE l.account_id = p_account AND (p_after IS NULL OR l.id > p_after) AND l.status IN ('servicing', 'overpaid')
       AND (l.ledger_as_of IS NULL OR l.ledger_as_of < p_as_of)
     ORDER BY l.id LIMIT p_batch
       FOR NO KEY UPDATE SKIP LOCKED) x;
  loans_replayed := coalesce(cardinality(batch), 0);
  last_id := batch[loans_replayed];
  fees_assessed := 0;
  fees_amount := 0;
  IF loans_replayed = 0 THEN RETURN; END IF;
  PERFORM loanql_refresh_next(array_fill(p_account, ARRAY[loans_replayed]), batch);
  SELECT count(*), coalesce(sum(f.amount), 0) INTO fees_assessed, fees_amount
    FROM fees f WHERE f.account_id = p_account AND f.loan_id = ANY (batch) AND f.created_at >= started;
END $$;

-- The replay: 0016's functions, re-created with the changes marked #31 (see the header) ------------
CREATE OR REPLACE FUNCTION loanql_ledger(p_account uuid, p_loan uuid, p_as_of date) RETURNS loanql_ledger_result
LANGUAGE plpgsql STABLE AS $$
DECLARE
  lo record;
  res loanql_ledger_result;
  n integer := 0;
  nums integer[]; due date[]; eint numeric[]; eprin numeric[]; ebal numeric[]; pint numeric[]; pprin numeric[];
  nf integer := 0;
  fid uuid[]; fdate date[]; famt numeric[]; frow integer[]; fwaive date[]; fpaid numeric[]; fwaived numeric[]; fkind text[];
  -- late fees (R4): rows before late_done have been judged; the late fees already stored keep their ids and waivers
  late_done integer := 1; ex_id_at uuid[]; ex_waive_at date[]; fee_amount numeric; ins integer; fid_new uuid; wv date; fee_day date;
  late_fees boolean;
  factive boolean[]; fwdone boolean[];
  -- 0016: fees are kept in date order, so the active ones are a prefix: fees before fa are active,
  -- fees before ffo are active and settled (paid or waived in full); next_waive is the first day a
  -- waiver not yet applied can apply (null: none pending)
  fa integer := 1; ffo integer := 1; next_waive date;
  -- 0016: the day count's year and the periods per year, once; num and den of a half-up rounding
  ydays integer; ppy integer; num numeric; den numeric;
  credit numeric := 0;
  -- principal paid in all (curtailments included)
  prin_total numeric := 0;
  -- the lines: payment, row, fee, component, amount (nl of them)
  nl integer := 0;
  l_pay uuid[] := '{}'; l_row integer[] := '{}'; l_fee uuid[] := '{}'; l_comp text[] := '{}'; l_amt numeric[] := '{}';
  p record;
  rem numeric; x numeric; i integer; j integer; idx integer;
  -- k: the first row due after the current day; rows before fo are paid in full
  k integer := 1;
  fo integer := 1;
  -- unpaid interest of rows before k, and interest paid on rows from k on (kept as rows and payments move)
  due_int numeric := 0;
  ahead numeric := 0;
  fees_open numeric := 0;
  payoff_before numeric; accrued numeric; b_before numeric; start_date date;
  c numeric; b_new numeric; m integer; pmt numeric; bal numeric; mr numeric;
  settled_on date;
  fees_first boolean;
  any_payment boolean := false;
  moved_idx integer[]; nm integer;
  amount numeric;
BEGIN
  SELECT l.amount, l.rate, l.frequency, l.amortization, l.date_funded, l.first_payment_date, l.status, l.date_closed,
         coalesce(pr.allocation_order, 'interest_principal_then_fees') AS allocation_order,
         coalesce(pr.day_count, 'actual/360') AS day_count, coalesce(pr.arrears_tolerance, 0) AS arrears_tolerance,
         coalesce(pr.late_fee_grace_days, 10) AS grace, CASE WHEN pr.id IS NULL THEN 5 ELSE pr.late_fee_percent END AS late_fee_percent,
         pr.late_fee_fixed, pr.late_fee_min, pr.late_fee_max
    INTO lo
    -- the loan's product; a loan with none follows the account's default product
    FROM loans l LEFT JOIN products pr ON pr.account_id = l.account_id AND (pr.id = l.product_id OR (l.product_id IS NULL AND pr.is_default))
   WHERE l.account_id = p_account AND l.id = p_loan;
  IF NOT FOUND THEN RETURN NULL; END IF;
  fees_first := lo.allocation_order = 'fees_interest_principal';
  ydays := loanql_day_count_year(lo.day_count);
  ppy := loanql_periods_per_year(lo.frequency);
  -- Late fees accrue on serviced loans (not on leads, nor on a loan closed by hand before the ledger).
  late_fees := lo.status IN ('servicing', 'overpaid') OR (lo.status = 'closed' AND lo.date_closed IS NOT NULL);

  -- Rows in due order (then number); a row asks its payment: its interest, and the rest as principal.
  SELECT coalesce(array_agg(s.number ORDER BY s.due, s.number), '{}'), coalesce(array_agg(s.due ORDER BY s.due, s.number), '{}'),
         coalesce(array_agg(s.scheduled_interest ORDER BY s.due, s.number), '{}'),
         coalesce(array_agg(s.scheduled_payment - s.scheduled_interest ORDER BY s.due, s.number), '{}'),
         coalesce(array_agg(s.scheduled_balance ORDER BY s.due, s.number), '{}'),
         -- 0016: the late fee already stored for each row (at most one: fees_one_late_per_row), beside it
         coalesce(array_agg(lf.id ORDER BY s.due, s.number), '{}'), coalesce(array_agg(lf.waived_on ORDER BY s.due, s.number), '{}')
    INTO nums, due, eint, eprin, ebal, ex_id_at, ex_waive_at
    FROM schedules s
    LEFT JOIN fees lf ON lf.account_id = s.account_id AND lf.loan_id = s.loan_id AND lf.kind = 'late' AND lf.row_number = s.number
   WHERE s.account_id = p_account AND s.loan_id = p_loan;
  n := coalesce(array_length(nums, 1), 0);
  -- The principal lent: the loan's amount (a loan without one owes what its rows ask as principal).
  amount := lo.amount;
  IF amount IS NULL THEN
    amount := 0;
    FOR i IN 1..n LOOP amount := amount + eprin[i]; END LOOP;
  END IF;
  pint := array_fill(0::numeric, ARRAY[n]);
  pprin := array_fill(0::numeric, ARRAY[n]);

  -- Recorded fees (NSF, manual), in date order; late fees are derived below as the days pass.
  SELECT coalesce(array_agg(f.id ORDER BY f.date, f.created_at, f.id), '{}'), coalesce(array_agg(f.date ORDER BY f.date, f.created_at, f.id), '{}'),
         coalesce(array_agg(f.amount ORDER BY f.date, f.created_at, f.id), '{}'), coalesce(array_agg(f.row_number ORDER BY f.date, f.created_at, f.id), '{}'),
         coalesce(array_agg(f.waived_on ORDER BY f.date, f.created_at, f.id), '{}'), coalesce(array_agg(f.kind ORDER BY f.date, f.created_at, f.id), '{}')
    INTO fid, fdate, famt, frow, fwaive, fkind
    FROM fees f WHERE f.account_id = p_account AND f.loan_id = p_loan AND f.kind <> 'late';
  nf := coalesce(array_length(fid, 1), 0);
  fpaid := array_fill(0::numeric, ARRAY[nf]);
  fwaived := array_fill(0::numeric, ARRAY[nf]);
  factive := array_fill(false, ARRAY[nf]);
  fwdone := array_fill(false, ARRAY[nf]);
  FOR j IN 1..nf LOOP
    IF fwaive[j] IS NOT NULL THEN next_waive := least(next_waive, greatest(fwaive[j], fdate[j])); END IF;
  END LOOP;

  -- The payments in replay order, then the as-of day itself (id null): fees and waivers up to it.
  FOR p IN
    SELECT e.id, e.date, e.amount, e.type FROM (
      SELECT py.id, py.date, py.amount, py.type, 0 AS last, py.posted_at FROM payments py
       WHERE py.account_id = p_account AND py.loan_id = p_loan AND py.date_reversed IS NULL AND py.date <= p_as_of
      UNION ALL SELECT NULL::uuid, p_as_of, 0::numeric, 'end', 1, NULL::timestamptz) e
     ORDER BY e.date, e.last, e.posted_at, e.id
  LOOP
    -- R4: a row not fully paid by payments dated on or before due + grace gets one fee, dated
    -- due + grace + 1: of the row's payment (the interest-only balloon row: of its interest) × the
    -- percent, or the fixed amount, within min and max; 0.00 is not a fee.
    WHILE late_fees AND late_done <= n AND due[late_done] + lo.grace + 1 <= p.date LOOP
      i := late_done;
      late_done := late_done + 1;
      CONTINUE WHEN eint[i] - pint[i] + eprin[i] - pprin[i] <= 0;
      fee_day := due[i] + lo.grace + 1;
      -- (0016: loanql_round_div written out, here and below: a SQL function call per use cost more than the rest of the loop)
      num := lo.late_fee_percent * CASE WHEN lo.amortization = 'interest_only' AND i = n THEN eint[i] ELSE eint[i] + eprin[i] END;
      fee_amount := coalesce(lo.late_fee_fixed, CASE WHEN num >= 0 THEN div(num * 200 + 100, 200) / 100.0 ELSE -(div(-num * 200 + 100, 200) / 100.0) END::numeric(14, 2));
      IF lo.late_fee_min IS NOT NULL THEN fee_amount := greatest(fee_amount, lo.late_fee_min); END IF;
      IF lo.late_fee_max IS NOT NULL THEN fee_amount := least(fee_amount, lo.late_fee_max); END IF;
      CONTINUE WHEN coalesce(fee_amount, 0) <= 0;
      fid_new := ex_id_at[i]; wv := ex_waive_at[i];
      -- #31: a late fee's id is its loan and row (loanql_late_fee_id): a fee a reversal removed and
      -- a later replay derives again is the same fee, and keeps its waiver (fee_waivers).
      IF fid_new IS NULL THEN fid_new := loanql_late_fee_id(p_loan, nums[i]); wv := loanql_fee_waived_on(p_account, fid_new); END IF;
      IF wv IS NOT NULL THEN next_waive := least(next_waive, greatest(wv, fee_day)); END IF;
      -- after every fee dated on or before it (0016: the active ones all are: they are dated on or
      -- before the last payment's day, and this row was not late then)
      ins := nf + 1;
      FOR j IN fa..nf LOOP
        IF fdate[j] > fee_day THEN ins := j; EXIT; END IF;
      END LOOP;
      IF ins > nf THEN
        -- 0016: at the end (the usual case): set the next element instead of copying ten arrays
        nf := nf + 1;
        fid[nf] := fid_new  /* #31: was coalesce(fid_new, gen_random_uuid()) */; fdate[nf] := fee_day; famt[nf] := fee_amount; frow[nf] := nums[i];
        fwaive[nf] := wv; fkind[nf] := 'late'; fpaid[nf] := 0; fwaived[nf] := 0; factive[nf] := false; fwdone[nf] := false;
        CONTINUE;
      END IF;
      fid := fid[1:ins - 1] || fid_new  /* #31: was coalesce(fid_new, gen_random_uuid()) */ || fid[ins:nf];
      fdate := fdate[1:ins - 1] || fee_day || fdate[ins:nf];
      famt := famt[1:ins - 1] || fee_amount || famt[ins:nf];
      frow := frow[1:ins - 1] || nums[i] || frow[ins:nf];
      fwaive := fwaive[1:ins - 1] || wv || fwaive[ins:nf];
      fkind := fkind[1:ins - 1] || 'late'::text || fkind[ins:nf];
      fpaid := fpaid[1:ins - 1] || 0::numeric || fpaid[ins:nf];
      fwaived := fwaived[1:ins - 1] || 0::numeric || fwaived[ins:nf];
      factive := factive[1:ins - 1] || false || factive[ins:nf];
      fwdone := fwdone[1:ins - 1] || false || fwdone[ins:nf];
      nf := nf + 1;
    END LOOP;
    -- Within a day, fees and waivers come first; existing credit pays a new fee on its date.
    -- (0016: fees are in date order, so the ones that start now are those from fa on; a waiver
    -- touches only its own fee, so waivers follow all activations, and only on a day one is due.)
    WHILE fa <= nf AND fdate[fa] <= p.date LOOP
      j := fa;
      fa := fa + 1;
      factive[j] := true;
      fees_open := fees_open + famt[j];
      IF credit > 0 THEN
        x := least(credit, famt[j]);
        fpaid[j] := fpaid[j] + x; credit := credit - x; fees_open := fees_open - x;
        nl := nl + 1; l_pay[nl] := NULL; l_row[nl] := frow[j]; l_fee[nl] := fid[j]; l_comp[nl] := 'fee'; l_amt[nl] := x;
      END IF;
    END LOOP;
    IF next_waive <= p.date THEN
      next_waive := NULL;
      FOR j IN 1..nf LOOP
        CONTINUE WHEN fwdone[j] OR fwaive[j] IS NULL;
        IF factive[j] AND fwaive[j] <= p.date THEN
          fwdone[j] := true; fwaived[j] := famt[j] - fpaid[j]; fees_open := fees_open - fwaived[j];
        ELSE
          next_waive := least(next_waive, greatest(fwaive[j], fdate[j]));
        END IF;
      END LOOP;
    END IF;
    -- fees before ffo are settled: the loops that pay fees start there and stop at fa
    WHILE ffo < fa AND famt[ffo] - fpaid[ffo] - fwaived[ffo] = 0 LOOP ffo := ffo + 1; END LOOP;
    IF p.id IS NULL THEN
      IF fees_open > 0 THEN settled_on := NULL; END IF;
      EXIT;
    END IF;
    any_payment := true;

    rem := p.amount;
    IF p.type = 'refund' THEN
      -- A refund pays credit back (a new one above the credit is refused when it is posted:
      -- loanql_refund_within_credit). One that a later reversal left above the credit makes the
      -- credit negative: the borrower owes it back, and the payoff counts it.
      credit := credit - rem;
      nl := nl + 1; l_pay[nl] := p.id; l_row[nl] := NULL; l_fee[nl] := NULL; l_comp[nl] := 'refund'; l_amt[nl] := rem;
      CONTINUE;
    END IF;

    -- Rows that fall due by this day leave the "ahead" part.
    WHILE k <= n AND due[k] <= p.date LOOP
      due_int := due_int + eint[k] - pint[k];
      ahead := ahead - pint[k];
      k := k + 1;
    END LOOP;
    WHILE fo <= n AND eint[fo] = pint[fo] AND eprin[fo] = pprin[fo] LOOP fo := fo + 1; END LOOP;

    -- accrued(d) for row k (R2) and the payoff just before this payment (R5).
    accrued := 0;
    IF k <= n THEN
      b_before := CASE WHEN k = 1 THEN amount ELSE ebal[k - 1] END;
      start_date := CASE WHEN k > 1 THEN due[k - 1] WHEN lo.date_funded IS NOT NULL THEN lo.date_funded ELSE loanql_period_before(lo.frequency, due[1]) END;
      IF p.date > start_date THEN
        num := b_before * lo.rate * CASE WHEN lo.day_count = '30/360' THEN
            360 * (extract(year FROM p.date)::int - extract(year FROM start_date)::int)
            + 30 * (extract(month FROM p.date)::int - extract(month FROM start_date)::int)
            + (least(extract(day FROM p.date)::int, 30) - least(extract(day FROM start_date)::int, 30))
          ELSE p.date - start_date END;
        den := 100 * ydays;
        accrued := least(eint[k], CASE WHEN num >= 0 THEN div(num * 200 + den, den * 2) / 100.0 ELSE -(div(-num * 200 + den, den * 2) / 100.0) END::numeric(14, 2));
      END IF;
    END IF;
    payoff_before := amount - prin_total + due_int + accrued - ahead + fees_open - credit;

    -- A fee payment pays fees first.
    IF p.type = 'fee' THEN
      FOR j IN ffo..fa - 1 LOOP
        EXIT WHEN rem <= 0;
        x := least(rem, famt[j] - fpaid[j] - fwaived[j]);
        IF factive[j] AND x > 0 THEN
          fpaid[j] := fpaid[j] + x; rem := rem - x; fees_open := fees_open - x;
          nl := nl + 1; l_pay[nl] := p.id; l_row[nl] := frow[j]; l_fee[nl] := fid[j]; l_comp[nl] := 'fee'; l_amt[nl] := x;
        END IF;
      END LOOP;
    END IF;

    -- (1) what is due, row by row (with fees_interest_principal each row's own fees first); fees on
    -- no row (NSF, manual) then come with the other fees, in (2).
    FOR i IN fo..k - 1 LOOP
      EXIT WHEN rem <= 0;
      IF fees_first THEN
        FOR j IN ffo..fa - 1 LOOP
          EXIT WHEN rem <= 0;
          x := least(rem, famt[j] - fpaid[j] - fwaived[j]);
          IF factive[j] AND frow[j] = nums[i] AND x > 0 THEN
            fpaid[j] := fpaid[j] + x; rem := rem - x; fees_open := fees_open - x;
            nl := nl + 1; l_pay[nl] := p.id; l_row[nl] := nums[i]; l_fee[nl] := fid[j]; l_comp[nl] := 'fee'; l_amt[nl] := x;
          END IF;
        END LOOP;
      END IF;
      x := least(rem, eint[i] - pint[i]);
      IF x > 0 THEN
        pint[i] := pint[i] + x; rem := rem - x; due_int := due_int - x;
        nl := nl + 1; l_pay[nl] := p.id; l_row[nl] := nums[i]; l_fee[nl] := NULL; l_comp[nl] := 'interest'; l_amt[nl] := x;
      END IF;
      x := least(rem, eprin[i] - pprin[i]);
      IF x > 0 THEN
        pprin[i] := pprin[i] + x; rem := rem - x; prin_total := prin_total + x;
        nl := nl + 1; l_pay[nl] := p.id; l_row[nl] := nums[i]; l_fee[nl] := NULL; l_comp[nl] := 'principal'; l_amt[nl] := x;
      END IF;
    END LOOP;
    -- (2) every fee dated on or before the day still unpaid, oldest first
    IF fees_open > 0 THEN
      FOR j IN ffo..fa - 1 LOOP
        EXIT WHEN rem <= 0;
        x := least(rem, famt[j] - fpaid[j] - fwaived[j]);
        IF factive[j] AND x > 0 THEN
          fpaid[j] := fpaid[j] + x; rem := rem - x; fees_open := fees_open - x;
          nl := nl + 1; l_pay[nl] := p.id; l_row[nl] := frow[j]; l_fee[nl] := fid[j]; l_comp[nl] := 'fee'; l_amt[nl] := x;
        END IF;
      END LOOP;
    END IF;

    IF p.amount >= payoff_before AND rem > 0 THEN
      -- R6: settle (any payment but a refund that reaches payoff(d) as it stood just before it;
      -- a payoff payment below that is a regular one). Row k's interest is cut to accrued(d);
      -- interest paid ahead on rows after it becomes principal; then all principal.
      IF k <= n THEN
        eint[k] := accrued;
        IF pint[k] > accrued THEN
          x := pint[k] - accrued;
          pint[k] := accrued; pprin[k] := pprin[k] + x; prin_total := prin_total + x;
          idx := nl;
          WHILE x > 0 AND idx >= 1 LOOP
            IF l_row[idx] = nums[k] AND l_comp[idx] = 'interest' THEN
              IF l_amt[idx] <= x THEN
                l_comp[idx] := 'principal'; x := x - l_amt[idx];
              ELSE
                l_amt[idx] := l_amt[idx] - x;
                nl := nl + 1; l_pay[nl] := l_pay[idx]; l_row[nl] := nums[k]; l_fee[nl] := NULL; l_comp[nl] := 'principal'; l_amt[nl] := x;
                x := 0;
              END IF;
            END IF;
            idx := idx - 1;
          END LOOP;
        END IF;
        x := least(rem, eint[k] - pint[k]);
        IF x > 0 THEN
          pint[k] := pint[k] + x; rem := rem - x;
          nl := nl + 1; l_pay[nl] := p.id; l_row[nl] := nums[k]; l_fee[nl] := NULL; l_comp[nl] := 'interest'; l_amt[nl] := x;
        END IF;
        FOR i IN k + 1..n LOOP
          IF pint[i] > 0 THEN
            pprin[i] := pprin[i] + pint[i]; prin_total := prin_total + pint[i]; pint[i] := 0;
            FOR idx IN 1..nl LOOP
              IF l_row[idx] = nums[i] AND l_comp[idx] = 'interest' THEN l_comp[idx] := 'principal'; END IF;
            END LOOP;
          END IF;
          eint[i] := 0;
        END LOOP;
        ahead := 0;
        FOR i IN k..n LOOP ahead := ahead + pint[i]; END LOOP;
      END IF;
      FOR i IN fo..n LOOP
        EXIT WHEN rem <= 0 OR prin_total >= amount;
        x := least(rem, eprin[i] - pprin[i], amount - prin_total);
        IF x > 0 THEN
          pprin[i] := pprin[i] + x; rem := rem - x; prin_total := prin_total + x;
          nl := nl + 1; l_pay[nl] := p.id; l_row[nl] := nums[i]; l_fee[nl] := NULL; l_comp[nl] := 'principal'; l_amt[nl] := x;
        END IF;
      END LOOP;
      -- principal still owed because moved interest over-filled a row: the last row takes it
      IF rem > 0 AND prin_total < amount AND n > 0 THEN
        x := least(rem, amount - prin_total);
        pprin[n] := pprin[n] + x; rem := rem - x; prin_total := prin_total + x;
        nl := nl + 1; l_pay[nl] := p.id; l_row[nl] := nums[n]; l_fee[nl] := NULL; l_comp[nl] := 'principal'; l_amt[nl] := x;
      END IF;
      -- Paid off: from row k on, each row asks what it was paid (moved interest may have paid one
      -- row's principal a cent ahead of the next's).
      IF prin_total >= amount THEN
        FOR i IN least(k, n + 1)..n LOOP eprin[i] := pprin[i]; END LOOP;
      END IF;
    ELSIF p.type = 'principal' AND rem > 0 AND k <= n THEN
      -- R7: a curtailment. Row k stays; rows after it are rebuilt with §7's maths from row k's
      -- balance less the curtailment, over the same rows and dates. Money already paid ahead on
      -- those rows becomes principal with no row first (it too reduced the balance).
      moved_idx := '{}'; nm := 0;
      j := 0;
      mr := 0;
      FOR idx IN 1..nl LOOP
        IF l_row[idx] > nums[k] AND l_fee[idx] IS NULL THEN
          IF l_comp[idx] <> 'principal' THEN prin_total := prin_total + l_amt[idx]; END IF;
          mr := mr + l_amt[idx];
          nm := nm + 1; moved_idx[nm] := idx;
        END IF;
      END LOOP;
      -- the moved lines keep their payment and place, as principal with no row
      FOR idx IN 1..nm LOOP
        l_row[moved_idx[idx]] := NULL; l_comp[moved_idx[idx]] := 'principal';
      END LOOP;
      c := least(rem, greatest(ebal[k] - mr, 0));
      rem := rem - c;
      prin_total := prin_total + c;
      IF c > 0 THEN
        nl := nl + 1; l_pay[nl] := p.id; l_row[nl] := NULL; l_fee[nl] := NULL; l_comp[nl] := 'principal'; l_amt[nl] := c;
      END IF;
      b_new := ebal[k] - c - mr;
      -- row k asks what it asked; the balance it leaves is less the curtailment (interest accrues on that)
      ebal[k] := b_new;
      m := n - k;
      IF m > 0 THEN
        IF lo.amortization = 'interest_only' THEN
          FOR i IN k + 1..n LOOP
            num := b_new * lo.rate; den := 100 * ppy;
            eint[i] := CASE WHEN num >= 0 THEN div(num * 200 + den, den * 2) / 100.0 ELSE -(div(-num * 200 + den, den * 2) / 100.0) END::numeric(14, 2);
            eprin[i] := CASE WHEN i = n THEN b_new ELSE 0 END;
            ebal[i] := CASE WHEN i = n THEN 0 ELSE b_new END;
            pint[i] := 0; pprin[i] := 0;
          END LOOP;
        ELSE
          pmt := loanql_level_payment(b_new, lo.rate, lo.frequency, m);
          bal := b_new;
          FOR i IN k + 1..n LOOP
            num := bal * lo.rate; den := 100 * ppy;
            eint[i] := CASE WHEN num >= 0 THEN div(num * 200 + den, den * 2) / 100.0 ELSE -(div(-num * 200 + den, den * 2) / 100.0) END::numeric(14, 2);
            IF i = n OR pmt >= bal + eint[i] THEN eprin[i] := bal; ELSE eprin[i] := pmt - eint[i]; END IF;
            bal := bal - eprin[i];
            ebal[i] := bal;
            pint[i] := 0; pprin[i] := 0;
          END LOOP;
        END IF;
      END IF;
      fo := least(fo, k);
      -- what the curtailment could not take (more than row k's balance) pays row k
      IF rem > 0 THEN
        x := least(rem, eint[k] - pint[k]);
        IF x > 0 THEN
          pint[k] := pint[k] + x; rem := rem - x;
          nl := nl + 1; l_pay[nl] := p.id; l_row[nl] := nums[k]; l_fee[nl] := NULL; l_comp[nl] := 'interest'; l_amt[nl] := x;
        END IF;
        x := least(rem, eprin[k] - pprin[k]);
        IF x > 0 THEN
          pprin[k] := pprin[k] + x; rem := rem - x; prin_total := prin_total + x;
          nl := nl + 1; l_pay[nl] := p.id; l_row[nl] := nums[k]; l_fee[nl] := NULL; l_comp[nl] := 'principal'; l_amt[nl] := x;
        END IF;
      END IF;
      ahead := 0;
      FOR i IN k..n LOOP ahead := ahead + pint[i]; END LOOP;
    ELSE
      -- (3) rows not due yet, in due order: interest, then principal
      FOR i IN greatest(fo, k)..n LOOP
        EXIT WHEN rem <= 0;
        x := least(rem, eint[i] - pint[i]);
        IF x > 0 THEN
          pint[i] := pint[i] + x; rem := rem - x; ahead := ahead + x;
          nl := nl + 1; l_pay[nl] := p.id; l_row[nl] := nums[i]; l_fee[nl] := NULL; l_comp[nl] := 'interest'; l_amt[nl] := x;
        END IF;
        x := least(rem, eprin[i] - pprin[i]);
        IF x > 0 THEN
          pprin[i] := pprin[i] + x; rem := rem - x; prin_total := prin_total + x;
          nl := nl + 1; l_pay[nl] := p.id; l_row[nl] := nums[i]; l_fee[nl] := NULL; l_comp[nl] := 'principal'; l_amt[nl] := x;
        END IF;
      END LOOP;
    END IF;
    -- (4) the rest is credit
    IF rem > 0 THEN
      credit := credit + rem;
      nl := nl + 1; l_pay[nl] := p.id; l_row[nl] := NULL; l_fee[nl] := NULL; l_comp[nl] := 'credit'; l_amt[nl] := rem;
    END IF;

    -- settled: every row paid, no fee open
    WHILE fo <= n AND eint[fo] = pint[fo] AND eprin[fo] = pprin[fo] LOOP fo := fo + 1; END LOOP;
    IF fo > n AND n > 0 AND fees_open = 0 THEN settled_on := coalesce(settled_on, p.date); ELSE settled_on := NULL; END IF;
  END LOOP;


  -- Balances as of the day (R2), payoff (R5), days past due (R3).
  res.principal_outstanding := amount - prin_total;
  res.interest_due := 0;
  res.fees_due := fees_open;
  res.credit_balance := credit;
  k := n + 1;
  FOR i IN 1..n LOOP
    IF due[i] <= p_as_of THEN res.interest_due := res.interest_due + eint[i] - pint[i]; ELSIF k > n THEN k := i; END IF;
    IF res.oldest_unpaid_due IS NULL AND eint[i] - pint[i] + eprin[i] - pprin[i] > 0 THEN
      res.oldest_unpaid_due := due[i];
      res.next_row := nums[i];
    END IF;
  END LOOP;
  res.accrued_interest := 0;
  res.per_diem := 0;
  -- nothing accrues once no principal is owed (a paid-off loan), nor after maturity (k past the last row)
  IF k <= n AND res.principal_outstanding > 0 THEN
    b_before := CASE WHEN k = 1 THEN amount ELSE ebal[k - 1] END;
    start_date := CASE WHEN k > 1 THEN due[k - 1] WHEN lo.date_funded IS NOT NULL THEN lo.date_funded ELSE loanql_period_before(lo.frequency, due[1]) END;
    IF p_as_of > start_date THEN
      res.accrued_interest := least(eint[k], loanql_round_div(b_before * lo.rate * loanql_day_count_days(lo.day_count, start_date, p_as_of), 100 * loanql_day_count_year(lo.day_count)));
    END IF;
    res.per_diem := loanql_round_div(b_before * lo.rate, 100 * loanql_day_count_year(lo.day_count));
  END IF;
  res.interest_paid_ahead := 0;
  FOR i IN k..n LOOP res.interest_paid_ahead := res.interest_paid_ahead + pint[i]; END LOOP;
  res.payoff := res.principal_outstanding + res.interest_due + res.accrued_interest - res.interest_paid_ahead + res.fees_due - credit;
  -- R3: a row whose unpaid principal and interest is within the tolerance counts as paid.
  res.days_past_due := 0;
  FOR i IN 1..n LOOP
    EXIT WHEN due[i] >= p_as_of;
    IF eint[i] - pint[i] + eprin[i] - pprin[i] > lo.arrears_tolerance THEN res.days_past_due := p_as_of - due[i]; EXIT; END IF;
  END LOOP;
  res.settled := n > 0 AND any_payment AND settled_on IS NOT NULL AND res.principal_outstanding = 0;
  res.settled_on := CASE WHEN res.settled THEN settled_on END;

  res.line_payment := l_pay; res.line_row := l_row; res.line_fee := l_fee; res.line_component := l_comp; res.line_amount := l_amt;
  res.row_number := nums; res.row_interest := eint; res.row_principal := eprin; res.row_balance := ebal;
  res.row_interest_paid := pint; res.row_principal_paid := pprin;
  res.fee_id := fid; res.fee_paid := fpaid; res.fee_waived := fwaived;
  res.fee_kind := fkind; res.fee_row := frow; res.fee_date := fdate; res.fee_amount := famt;
  RETURN res;
END $$;

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

-- Every loan's stored days past due as of its ledger's day (what the replay now writes), without a
-- replay: from its schedule rows' paid amounts (R3: the earliest row due before that day whose
-- unpaid principal and interest is above the tolerance); the bucket trigger names the bucket.
UPDATE loans l SET days_past_due = CASE WHEN l.status = 'servicing' AND l.ledger_as_of IS NOT NULL THEN coalesce((
    SELECT l.ledger_as_of - min(s.due) FROM schedules s
     WHERE s.account_id = l.account_id AND s.loan_id = l.id AND s.due < l.ledger_as_of
       AND s.interest - s.interest_paid + s.principal - s.principal_paid > coalesce((
         SELECT pr.arrears_tolerance FROM products pr
          WHERE pr.account_id = l.account_id AND (pr.id = l.product_id OR (l.product_id IS NULL AND pr.is_default)) LIMIT 1), 0)), 0)
  ELSE 0 END;
`;
