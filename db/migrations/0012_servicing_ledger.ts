/**
 * The servicing ledger (SPEC §12, issue 29), kept by the database for every writer.
 *
 * Where the replay runs: in PL/pgSQL, fired by the same statement-level triggers that kept
 * `is_next` (0001, 0002, 0005 call `loanql_refresh_next`, which now replays the loans a statement
 * touched). So a payment posted through GraphQL, REST, the dashboard, the CLI or plain SQL has its
 * allocation in the same transaction, and no reader ever sees one without it; concurrent writes
 * to one loan serialise on the loan's row lock (FOR NO KEY UPDATE, in id order) and the last
 * replay reads every committed payment (READ COMMITTED: each statement takes a fresh snapshot).
 * The same computation, `loanql_ledger(account, loan, as_of)`, answers as-of questions (payoff,
 * accrued interest, per diem) in one statement with a read, so the engine can expose them as
 * computed fields. `domain/ledger/` is the same rules in TypeScript, written from the SPEC alone:
 * the tests compare the two.
 *
 * Money is `numeric`; every rounding is an exact half-up to cents (`loanql_round_div`, integer
 * division on exact numerics), only where §12 says.
 *
 * Stored: `payment_allocations` (a line per payment, schedule row or fee, component, amount);
 * the schedule's effective rows (`interest`, `principal`, `payment`, `balance`: what each row asks
 * now — R6 cuts and R7 rebuilds change them) beside the rows §7 made (`scheduled_*`), and what each
 * row has been paid; the loan's balances as of its business date (or its last payment's date,
 * when later); status (R9).
 */
export const name = '0012_servicing_ledger';

export const sql = /* sql */ `
-- Settings (SPEC §12) -------------------------------------------------------------------------
ALTER TABLE accounts ADD COLUMN timezone text NOT NULL DEFAULT 'UTC';

ALTER TABLE products
  ADD COLUMN allocation_order text NOT NULL DEFAULT 'interest_principal_then_fees'
    CONSTRAINT products_allocation_order CHECK (allocation_order IN ('interest_principal_then_fees', 'fees_interest_principal')),
  ADD COLUMN day_count text NOT NULL DEFAULT 'actual/360'
    CONSTRAINT products_day_count CHECK (day_count IN ('actual/360', 'actual/365', '30/360')),
  ADD COLUMN late_fee_grace_days integer NOT NULL DEFAULT 10 CONSTRAINT products_late_fee_grace_days CHECK (late_fee_grace_days BETWEEN 0 AND 365),
  ADD COLUMN late_fee_percent numeric(7, 4) DEFAULT 5 CONSTRAINT products_late_fee_percent CHECK (late_fee_percent BETWEEN 0 AND 100),
  ADD COLUMN late_fee_fixed numeric(14, 2) CONSTRAINT products_late_fee_fixed CHECK (late_fee_fixed >= 0),
  ADD COLUMN late_fee_min numeric(14, 2) CONSTRAINT products_late_fee_min CHECK (late_fee_min >= 0),
  ADD COLUMN late_fee_max numeric(14, 2) CONSTRAINT products_late_fee_max CHECK (late_fee_max >= 0),
  ADD COLUMN nsf_fee numeric(14, 2) NOT NULL DEFAULT 0 CONSTRAINT products_nsf_fee CHECK (nsf_fee >= 0),
  ADD COLUMN arrears_tolerance numeric(14, 2) NOT NULL DEFAULT 0 CONSTRAINT products_arrears_tolerance CHECK (arrears_tolerance >= 0),
  ADD COLUMN delinquency_buckets jsonb NOT NULL DEFAULT '[{"name": "current", "from": 0}, {"name": "1-29", "from": 1}, {"name": "30-59", "from": 30}, {"name": "60-89", "from": 60}, {"name": "90-119", "from": 90}, {"name": "120+", "from": 120}]',
  ADD COLUMN investor_fee_share numeric(5, 4) NOT NULL DEFAULT 0 CONSTRAINT products_investor_fee_share CHECK (investor_fee_share BETWEEN 0 AND 1),
  ADD CONSTRAINT products_late_fee_range CHECK (late_fee_min IS NULL OR late_fee_max IS NULL OR late_fee_min <= late_fee_max);

-- Payments: replay order, types, reversal reasons -------------------------------------------
ALTER TABLE payments ADD COLUMN posted_at timestamptz NOT NULL DEFAULT clock_timestamp();
-- Earlier payments keep their order: by date, then id (they had no posting time).
UPDATE payments SET type = CASE type WHEN 'late_fee' THEN 'fee' WHEN 'fee' THEN 'fee' WHEN 'payoff' THEN 'payoff'
                                     WHEN 'principal' THEN 'principal' WHEN 'refund' THEN 'refund' ELSE 'regular' END
  WHERE type IS DISTINCT FROM 'regular';
ALTER TABLE payments
  ADD CONSTRAINT payments_type CHECK (type IN ('regular', 'payoff', 'principal', 'refund', 'fee')),
  ADD COLUMN reversal_reason text CONSTRAINT payments_reversal_reason CHECK (reversal_reason IN ('nsf', 'error', 'returned', 'other')),
  ADD CONSTRAINT payments_reason_with_reversal CHECK (reversal_reason IS NULL OR date_reversed IS NOT NULL);

-- Loans: balances and the ledger's status ----------------------------------------------------
ALTER TABLE loans DROP CONSTRAINT loans_status_check;
ALTER TABLE loans
  ADD CONSTRAINT loans_status_check CHECK (status IN ('lead', 'servicing', 'closed', 'overpaid')),
  ADD COLUMN principal_outstanding numeric(14, 2),
  ADD COLUMN interest_due numeric(14, 2),
  ADD COLUMN fees_due numeric(14, 2),
  ADD COLUMN credit_balance numeric(14, 2),
  ADD COLUMN oldest_unpaid_due date,
  ADD COLUMN date_closed date,
  -- the day the stored ledger is as of (a daily refresh replays loans whose day has passed)
  ADD COLUMN ledger_as_of date;

-- Schedules: the rows §7 made, and what each row has been paid --------------------------------
ALTER TABLE schedules
  ADD COLUMN scheduled_payment numeric(14, 2),
  ADD COLUMN scheduled_principal numeric(14, 2),
  ADD COLUMN scheduled_interest numeric(14, 2),
  ADD COLUMN scheduled_balance numeric(14, 2),
  ADD COLUMN interest_paid numeric(14, 2) NOT NULL DEFAULT 0,
  ADD COLUMN principal_paid numeric(14, 2) NOT NULL DEFAULT 0;
UPDATE schedules SET scheduled_payment = payment, scheduled_principal = principal, scheduled_interest = interest, scheduled_balance = balance;
ALTER TABLE schedules
  ALTER COLUMN scheduled_payment SET NOT NULL, ALTER COLUMN scheduled_principal SET NOT NULL,
  ALTER COLUMN scheduled_interest SET NOT NULL, ALTER COLUMN scheduled_balance SET NOT NULL;

-- A writer that is not the replay sets a row's amounts: they are the rows §7 made.
CREATE FUNCTION loanql_schedule_as_made() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    NEW.scheduled_payment := coalesce(NEW.scheduled_payment, NEW.payment);
    NEW.scheduled_principal := coalesce(NEW.scheduled_principal, NEW.principal);
    NEW.scheduled_interest := coalesce(NEW.scheduled_interest, NEW.interest);
    NEW.scheduled_balance := coalesce(NEW.scheduled_balance, NEW.balance);
  ELSIF current_setting('loanql.replaying', true) IS DISTINCT FROM 'on' THEN
    NEW.scheduled_payment := NEW.payment;
    NEW.scheduled_principal := NEW.principal;
    NEW.scheduled_interest := NEW.interest;
    NEW.scheduled_balance := NEW.balance;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER schedules_as_made_insert BEFORE INSERT ON schedules FOR EACH ROW
  WHEN (NEW.scheduled_payment IS NULL OR NEW.scheduled_principal IS NULL OR NEW.scheduled_interest IS NULL OR NEW.scheduled_balance IS NULL)
  EXECUTE FUNCTION loanql_schedule_as_made();
CREATE TRIGGER schedules_as_made_update BEFORE UPDATE OF payment, principal, interest, balance ON schedules
  FOR EACH ROW EXECUTE FUNCTION loanql_schedule_as_made();

-- Fees (R4, R8's NSF; assessed by the delinquency work) -----------------------------------------
CREATE TABLE fees (
  account_id uuid NOT NULL,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  loan_id uuid NOT NULL,
  kind text NOT NULL CONSTRAINT fees_kind CHECK (kind IN ('late', 'nsf', 'manual')),
  row_number integer,
  payment_id uuid,
  date date NOT NULL,
  amount numeric(14, 2) NOT NULL CONSTRAINT fees_amount_positive CHECK (amount > 0),
  paid numeric(14, 2) NOT NULL DEFAULT 0,
  waived numeric(14, 2) NOT NULL DEFAULT 0,
  waived_on date,
  waived_by text,
  waived_reason text,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (account_id, id),
  FOREIGN KEY (account_id, loan_id) REFERENCES loans (account_id, id) ON DELETE CASCADE,
  CONSTRAINT fees_waiver_complete CHECK ((waived_on IS NULL) = (waived_by IS NULL))
);
CREATE INDEX fees_loan ON fees (account_id, loan_id, date);
-- Never a second late fee for the same row.
CREATE UNIQUE INDEX fees_one_late_per_row ON fees (account_id, loan_id, row_number) WHERE kind = 'late';

-- Allocations (R1) ---------------------------------------------------------------------------
CREATE TABLE payment_allocations (
  account_id uuid NOT NULL,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  loan_id uuid NOT NULL,
  -- null: money that was not a payment's (credit paying a fee)
  payment_id uuid,
  -- the schedule row paid (null: a fee, credit, a refund or a curtailment)
  row_number integer,
  fee_id uuid,
  component text NOT NULL CONSTRAINT payment_allocations_component CHECK (component IN ('interest', 'principal', 'fee', 'credit', 'refund')),
  amount numeric(14, 2) NOT NULL,
  position integer NOT NULL,
  PRIMARY KEY (account_id, id),
  FOREIGN KEY (account_id, loan_id) REFERENCES loans (account_id, id) ON DELETE CASCADE,
  FOREIGN KEY (account_id, payment_id) REFERENCES payments (account_id, id) ON DELETE CASCADE
);
CREATE INDEX payment_allocations_payment ON payment_allocations (account_id, payment_id);
CREATE INDEX payment_allocations_loan ON payment_allocations (account_id, loan_id, position);

-- Exact arithmetic -------------------------------------------------------------------------
-- round_half_up(num / den) to cents, exactly, for num >= 0 and den > 0: div() truncates the
-- exact quotient, so no digit limit of numeric division can move a tie.
CREATE FUNCTION loanql_round_div(num numeric, den numeric) RETURNS numeric
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT CASE WHEN num >= 0 THEN div(num * 200 + den, den * 2) / 100.0
              ELSE -(div(-num * 200 + den, den * 2) / 100.0) END::numeric(14, 2)
$$;

-- Days of a period under a day count (R2): actual, or 30E/360.
CREATE FUNCTION loanql_day_count_days(day_count text, from_date date, to_date date) RETURNS integer
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT CASE WHEN day_count = '30/360' THEN
      360 * (extract(year FROM to_date)::int - extract(year FROM from_date)::int)
      + 30 * (extract(month FROM to_date)::int - extract(month FROM from_date)::int)
      + (least(extract(day FROM to_date)::int, 30) - least(extract(day FROM from_date)::int, 30))
    ELSE to_date - from_date END
$$;

CREATE FUNCTION loanql_day_count_year(day_count text) RETURNS integer
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT CASE WHEN day_count = 'actual/365' THEN 365 ELSE 360 END
$$;

CREATE FUNCTION loanql_periods_per_year(frequency text) RETURNS integer
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT CASE frequency WHEN 'monthly' THEN 12 WHEN 'quarterly' THEN 4 WHEN 'semi_monthly' THEN 24
                        WHEN 'biweekly' THEN 26 WHEN 'weekly' THEN 52 WHEN 'annually' THEN 1 END
$$;

-- One period before a date (the start of row 1's period when the loan has no Date_Funded).
CREATE FUNCTION loanql_period_before(frequency text, due date) RETURNS date
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT CASE frequency WHEN 'monthly' THEN (due - interval '1 month')::date WHEN 'quarterly' THEN (due - interval '3 months')::date
                        WHEN 'annually' THEN (due - interval '1 year')::date WHEN 'semi_monthly' THEN due - 15
                        WHEN 'biweekly' THEN due - 14 ELSE due - 7 END
$$;

-- §7's level payment of a balance over m rows at the loan's periodic rate, exact: with
-- r = R / D (R the rate in ten-thousandths, D = 100 × periods × 10,000), the payment is
-- B·R·(D+R)^m / (D·((D+R)^m − D^m)), rounded half-up to cents; B/m at 0 %.
CREATE FUNCTION loanql_level_payment(balance numeric, rate numeric, frequency text, m integer) RETURNS numeric
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  r_num numeric := round(rate * 10000);
  r_den numeric := 100 * loanql_periods_per_year(frequency) * 10000::numeric;
  grown numeric := 1;
  base numeric := 1;
BEGIN
  IF m <= 0 THEN RETURN balance; END IF;
  IF r_num = 0 THEN RETURN loanql_round_div(balance, m); END IF;
  FOR i IN 1..m LOOP
    grown := grown * (r_den + r_num);
    base := base * r_den;
  END LOOP;
  RETURN loanql_round_div(balance * r_num * grown, r_den * (grown - base));
END $$;

-- The ledger of one loan as of a day (R1–R3, R5–R9) -----------------------------------------
CREATE TYPE loanql_ledger_result AS (
  principal_outstanding numeric,
  interest_due numeric,
  fees_due numeric,
  credit_balance numeric,
  oldest_unpaid_due date,
  accrued_interest numeric,
  per_diem numeric,
  payoff numeric,
  -- interest already paid on rows due after the day (R5 takes it off the payoff)
  interest_paid_ahead numeric,
  days_past_due integer,
  -- the date the last payment left nothing owed (null while something is owed)
  settled_on date,
  settled boolean,
  next_row integer,
  line_payment uuid[],
  line_row integer[],
  line_fee uuid[],
  line_component text[],
  line_amount numeric[],
  row_number integer[],
  row_interest numeric[],
  row_principal numeric[],
  row_balance numeric[],
  row_interest_paid numeric[],
  row_principal_paid numeric[],
  fee_id uuid[],
  fee_paid numeric[],
  fee_waived numeric[],
  -- every fee: its kind, row, date and amount (late fees are derived by the replay, R4)
  fee_kind text[],
  fee_row integer[],
  fee_date date[],
  fee_amount numeric[]
);

CREATE FUNCTION loanql_ledger(p_account uuid, p_loan uuid, p_as_of date) RETURNS loanql_ledger_result
LANGUAGE plpgsql STABLE AS $$
DECLARE
  lo record;
  res loanql_ledger_result;
  n integer := 0;
  nums integer[]; due date[]; eint numeric[]; eprin numeric[]; ebal numeric[]; pint numeric[]; pprin numeric[];
  nf integer := 0;
  fid uuid[]; fdate date[]; famt numeric[]; frow integer[]; fwaive date[]; fpaid numeric[]; fwaived numeric[]; fkind text[];
  -- late fees (R4): rows before late_done have been judged; the late fees already stored keep their ids and waivers
  late_done integer := 1; ex_row integer[]; ex_id uuid[]; ex_waive date[]; fee_amount numeric; ins integer; fid_new uuid; wv date; fee_day date;
  late_fees boolean;
  factive boolean[]; fwdone boolean[];
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
  -- Late fees accrue on serviced loans (not on leads, nor on a loan closed by hand before the ledger).
  late_fees := lo.status IN ('servicing', 'overpaid') OR (lo.status = 'closed' AND lo.date_closed IS NOT NULL);

  -- Rows in due order (then number); a row asks its payment: its interest, and the rest as principal.
  SELECT coalesce(array_agg(s.number ORDER BY s.due, s.number), '{}'), coalesce(array_agg(s.due ORDER BY s.due, s.number), '{}'),
         coalesce(array_agg(s.scheduled_interest ORDER BY s.due, s.number), '{}'),
         coalesce(array_agg(s.scheduled_payment - s.scheduled_interest ORDER BY s.due, s.number), '{}'),
         coalesce(array_agg(s.scheduled_balance ORDER BY s.due, s.number), '{}')
    INTO nums, due, eint, eprin, ebal
    FROM schedules s WHERE s.account_id = p_account AND s.loan_id = p_loan;
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
  SELECT coalesce(array_agg(f.row_number), '{}'), coalesce(array_agg(f.id), '{}'), coalesce(array_agg(f.waived_on), '{}')
    INTO ex_row, ex_id, ex_waive
    FROM fees f WHERE f.account_id = p_account AND f.loan_id = p_loan AND f.kind = 'late';
  nf := coalesce(array_length(fid, 1), 0);
  fpaid := array_fill(0::numeric, ARRAY[nf]);
  fwaived := array_fill(0::numeric, ARRAY[nf]);
  factive := array_fill(false, ARRAY[nf]);
  fwdone := array_fill(false, ARRAY[nf]);

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
      fee_amount := coalesce(lo.late_fee_fixed, loanql_round_div(lo.late_fee_percent * CASE WHEN lo.amortization = 'interest_only' AND i = n THEN eint[i] ELSE eint[i] + eprin[i] END, 100));
      IF lo.late_fee_min IS NOT NULL THEN fee_amount := greatest(fee_amount, lo.late_fee_min); END IF;
      IF lo.late_fee_max IS NOT NULL THEN fee_amount := least(fee_amount, lo.late_fee_max); END IF;
      CONTINUE WHEN coalesce(fee_amount, 0) <= 0;
      fid_new := NULL; wv := NULL;
      FOR j IN 1..coalesce(array_length(ex_row, 1), 0) LOOP
        IF ex_row[j] = nums[i] THEN fid_new := ex_id[j]; wv := ex_waive[j]; END IF;
      END LOOP;
      ins := nf + 1;
      FOR j IN 1..nf LOOP
        IF fdate[j] > fee_day THEN ins := j; EXIT; END IF;
      END LOOP;
      fid := fid[1:ins - 1] || coalesce(fid_new, gen_random_uuid()) || fid[ins:nf];
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
    FOR j IN 1..nf LOOP
      IF NOT factive[j] AND fdate[j] <= p.date THEN
        factive[j] := true;
        fees_open := fees_open + famt[j];
        IF credit > 0 THEN
          x := least(credit, famt[j]);
          fpaid[j] := fpaid[j] + x; credit := credit - x; fees_open := fees_open - x;
          nl := nl + 1; l_pay[nl] := NULL; l_row[nl] := frow[j]; l_fee[nl] := fid[j]; l_comp[nl] := 'fee'; l_amt[nl] := x;
        END IF;
      END IF;
      IF factive[j] AND NOT fwdone[j] AND fwaive[j] IS NOT NULL AND fwaive[j] <= p.date THEN
        fwdone[j] := true; fwaived[j] := famt[j] - fpaid[j]; fees_open := fees_open - fwaived[j];
      END IF;
    END LOOP;
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
        accrued := least(eint[k], loanql_round_div(b_before * lo.rate * loanql_day_count_days(lo.day_count, start_date, p.date), 100 * loanql_day_count_year(lo.day_count)));
      END IF;
    END IF;
    payoff_before := amount - prin_total + due_int + accrued - ahead + fees_open - credit;

    -- A fee payment pays fees first.
    IF p.type = 'fee' THEN
      FOR j IN 1..nf LOOP
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
        FOR j IN 1..nf LOOP
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
      FOR j IN 1..nf LOOP
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
            eint[i] := loanql_round_div(b_new * lo.rate, 100 * loanql_periods_per_year(lo.frequency));
            eprin[i] := CASE WHEN i = n THEN b_new ELSE 0 END;
            ebal[i] := CASE WHEN i = n THEN 0 ELSE b_new END;
            pint[i] := 0; pprin[i] := 0;
          END LOOP;
        ELSE
          pmt := loanql_level_payment(b_new, lo.rate, lo.frequency, m);
          bal := b_new;
          FOR i IN k + 1..n LOOP
            eint[i] := loanql_round_div(bal * lo.rate, 100 * loanql_periods_per_year(lo.frequency));
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

-- The account's business date (SPEC §12: a day in the account's time zone).
CREATE FUNCTION loanql_business_date(p_account uuid) RETURNS date
LANGUAGE sql STABLE AS $$
  SELECT (now() AT TIME ZONE coalesce((SELECT timezone FROM accounts WHERE id = p_account), 'UTC'))::date
$$;

-- As-of values of a loan, for the metadata's computed fields (payoff(args: {as_of: …}) …):
-- (tenant, key, as_of), as_of defaulting to the account's business date.
CREATE FUNCTION loanql_loan_payoff(p_account uuid, p_id uuid, as_of date DEFAULT NULL) RETURNS numeric
LANGUAGE sql STABLE AS $$ SELECT (loanql_ledger(p_account, p_id, coalesce(as_of, loanql_business_date(p_account)))).payoff $$;
CREATE FUNCTION loanql_loan_accrued_interest(p_account uuid, p_id uuid, as_of date DEFAULT NULL) RETURNS numeric
LANGUAGE sql STABLE AS $$ SELECT (loanql_ledger(p_account, p_id, coalesce(as_of, loanql_business_date(p_account)))).accrued_interest $$;
CREATE FUNCTION loanql_loan_per_diem(p_account uuid, p_id uuid, as_of date DEFAULT NULL) RETURNS numeric
LANGUAGE sql STABLE AS $$ SELECT (loanql_ledger(p_account, p_id, coalesce(as_of, loanql_business_date(p_account)))).per_diem $$;
CREATE FUNCTION loanql_loan_days_past_due(p_account uuid, p_id uuid, as_of date DEFAULT NULL) RETURNS integer
LANGUAGE sql STABLE AS $$ SELECT (loanql_ledger(p_account, p_id, coalesce(as_of, loanql_business_date(p_account)))).days_past_due $$;

-- R9: the status the ledger leaves a loan in (leads are not serviced; a loan closed by hand
-- before the ledger, date_closed null, keeps its status until its payments settle it).
CREATE FUNCTION loanql_ledger_status(status text, date_closed date, settled boolean, credit numeric, settled_on date,
                                     OUT new_status text, OUT new_closed date)
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN status IN ('servicing', 'closed', 'overpaid') AND settled THEN CASE WHEN credit > 0 THEN 'overpaid' ELSE 'closed' END
              WHEN status = 'overpaid' OR (status = 'closed' AND date_closed IS NOT NULL) THEN 'servicing'
              ELSE status END,
         CASE WHEN status IN ('servicing', 'closed', 'overpaid') AND settled THEN settled_on
              WHEN status = 'overpaid' OR (status = 'closed' AND date_closed IS NOT NULL) THEN NULL
              ELSE date_closed END
$$;

-- The day a stored ledger is as of: the account's business date, or the last payment's when later.
CREATE FUNCTION loanql_stored_as_of(p_account uuid, p_loan uuid) RETURNS date
LANGUAGE sql STABLE AS $$
  SELECT greatest(loanql_business_date(p_account), max(py.date))
    FROM payments py WHERE py.account_id = p_account AND py.loan_id = p_loan AND py.date_reversed IS NULL
$$;

CREATE TYPE loanql_replay_item AS (account_id uuid, loan_id uuid, new_status text, new_closed date, r loanql_ledger_result, as_of date);

-- Replays the ledgers of these loans and stores them, set-wise (the caller holds their row locks).
-- Only what changed is written: allocation lines from each loan's first differing line, schedule
-- rows, fees and loans whose values differ.
-- Every write here reaches its rows by key: index scans, whatever the (possibly stale, e.g. mid
-- bulk load) statistics say — a sequential scan of schedules per batch is what made a 10,000-loan
-- seed take minutes.
CREATE FUNCTION loanql_replay_loans(p_account uuid[], p_loan uuid[]) RETURNS void
LANGUAGE plpgsql SET enable_seqscan = off AS $$
DECLARE
  items loanql_replay_item[];
BEGIN
  SELECT array_agg(ROW(t.account_id, t.id, st.new_status, st.new_closed, t.r, t.as_of)::loanql_replay_item) INTO items
    FROM (SELECT l.account_id, l.id, l.status, l.date_closed, a.as_of, loanql_ledger(l.account_id, l.id, a.as_of) AS r
            FROM loans l JOIN (SELECT DISTINCT * FROM unnest(p_account, p_loan) AS u(account_id, loan_id)) u
              ON l.account_id = u.account_id AND l.id = u.loan_id
            CROSS JOIN LATERAL (SELECT loanql_stored_as_of(l.account_id, l.id) AS as_of) a) t
    CROSS JOIN LATERAL loanql_ledger_status(t.status, t.date_closed, (t.r).settled, (t.r).credit_balance, (t.r).settled_on) st;
  IF items IS NULL THEN RETURN; END IF;

  -- Allocation lines: from each loan's first line that differs (a new payment usually adds lines at the end).
  WITH new_lines AS (
         SELECT i.account_id, i.loan_id, u.payment_id, u.row_number, u.fee_id, u.component, u.amount, u.position
           FROM unnest(items) i,
                unnest((i.r).line_payment, (i.r).line_row, (i.r).line_fee, (i.r).line_component, (i.r).line_amount)
                  WITH ORDINALITY AS u(payment_id, row_number, fee_id, component, amount, position)),
       old_lines AS (
         SELECT a.* FROM payment_allocations a JOIN unnest(items) i ON a.account_id = i.account_id AND a.loan_id = i.loan_id),
       first AS (
         SELECT coalesce(n.account_id, o.account_id) AS account_id, coalesce(n.loan_id, o.loan_id) AS loan_id, min(coalesce(n.position, o.position)) AS position
           FROM new_lines n FULL JOIN old_lines o ON o.account_id = n.account_id AND o.loan_id = n.loan_id AND o.position = n.position
          WHERE (o.payment_id, o.row_number, o.fee_id, o.component, o.amount) IS DISTINCT FROM (n.payment_id, n.row_number, n.fee_id, n.component, n.amount)
          GROUP BY 1, 2),
       removed AS (
         DELETE FROM payment_allocations a USING first f
          WHERE a.account_id = f.account_id AND a.loan_id = f.loan_id AND a.position >= f.position)
  INSERT INTO payment_allocations (account_id, loan_id, payment_id, row_number, fee_id, component, amount, position)
    SELECT n.account_id, n.loan_id, n.payment_id, n.row_number, n.fee_id, n.component, n.amount, n.position
      FROM new_lines n JOIN first f ON f.account_id = n.account_id AND f.loan_id = n.loan_id
     WHERE n.position >= f.position;

  -- Schedule rows: what each asks now, what it has been paid, and the next one (one per loan: cleared first).
  UPDATE schedules s SET is_next = false
    FROM unnest(items) i
   WHERE s.account_id = i.account_id AND s.loan_id = i.loan_id AND s.is_next
     AND (i.new_status <> 'servicing' OR s.number IS DISTINCT FROM (i.r).next_row);
  UPDATE schedules s
     SET interest = x.interest, principal = x.principal, payment = x.interest + x.principal, balance = x.balance,
         interest_paid = x.interest_paid, principal_paid = x.principal_paid, is_next = x.is_next
    FROM (SELECT i.account_id, i.loan_id, u.number, u.interest, u.principal, u.balance, u.interest_paid, u.principal_paid,
                 (i.new_status = 'servicing' AND u.number IS NOT DISTINCT FROM (i.r).next_row) AS is_next
            FROM unnest(items) i,
                 unnest((i.r).row_number, (i.r).row_interest, (i.r).row_principal, (i.r).row_balance, (i.r).row_interest_paid, (i.r).row_principal_paid)
                   AS u(number, interest, principal, balance, interest_paid, principal_paid)) x
   WHERE s.account_id = x.account_id AND s.loan_id = x.loan_id AND s.number = x.number
     AND (s.interest, s.principal, s.balance, s.interest_paid, s.principal_paid, s.is_next)
         IS DISTINCT FROM (x.interest, x.principal, x.balance, x.interest_paid, x.principal_paid, x.is_next);

  -- Late fees are the replay's (R4: a reversal can create or remove one); other fees keep what was paid and waived.
  DELETE FROM fees f USING unnest(items) i
   WHERE f.account_id = i.account_id AND f.loan_id = i.loan_id AND f.kind = 'late' AND NOT (f.id = ANY ((i.r).fee_id));
  INSERT INTO fees (account_id, id, loan_id, kind, row_number, date, amount, paid, waived)
    SELECT i.account_id, u.id, i.loan_id, 'late', u.row_number, u.date, u.amount, u.paid, u.waived
      FROM unnest(items) i,
           unnest((i.r).fee_id, (i.r).fee_kind, (i.r).fee_row, (i.r).fee_date, (i.r).fee_amount, (i.r).fee_paid, (i.r).fee_waived)
             AS u(id, kind, row_number, date, amount, paid, waived)
     WHERE u.kind = 'late'
  ON CONFLICT (account_id, id) DO UPDATE SET row_number = EXCLUDED.row_number, date = EXCLUDED.date, amount = EXCLUDED.amount, paid = EXCLUDED.paid, waived = EXCLUDED.waived
     WHERE (fees.row_number, fees.date, fees.amount, fees.paid, fees.waived) IS DISTINCT FROM (EXCLUDED.row_number, EXCLUDED.date, EXCLUDED.amount, EXCLUDED.paid, EXCLUDED.waived);
  UPDATE fees f SET paid = x.paid, waived = x.waived
    FROM (SELECT i.account_id, u.id, u.paid, u.waived
            FROM unnest(items) i, unnest((i.r).fee_id, (i.r).fee_kind, (i.r).fee_paid, (i.r).fee_waived) AS u(id, kind, paid, waived)
           WHERE u.kind <> 'late') x
   WHERE f.account_id = x.account_id AND f.id = x.id AND (f.paid, f.waived) IS DISTINCT FROM (x.paid, x.waived);

  UPDATE loans l
     SET principal_outstanding = (i.r).principal_outstanding, interest_due = (i.r).interest_due, fees_due = (i.r).fees_due,
         credit_balance = (i.r).credit_balance, oldest_unpaid_due = (i.r).oldest_unpaid_due, status = i.new_status, date_closed = i.new_closed,
         ledger_as_of = i.as_of
    FROM unnest(items) i
   WHERE l.account_id = i.account_id AND l.id = i.loan_id
     AND (l.principal_outstanding, l.interest_due, l.fees_due, l.credit_balance, l.oldest_unpaid_due, l.status, l.date_closed, l.ledger_as_of)
         IS DISTINCT FROM ((i.r).principal_outstanding, (i.r).interest_due, (i.r).fees_due, (i.r).credit_balance, (i.r).oldest_unpaid_due, i.new_status, i.new_closed, i.as_of);
END $$;

-- Time alone changes a ledger (rows fall due, late fees accrue, R4): replays up to batch loans
-- whose stored ledger is of an earlier day than their account's business date. Idempotent; run
-- daily by the worker (and loanql ledger refresh), catching up after any downtime. Returns how
-- many loans it replayed.
CREATE FUNCTION loanql_refresh_stale_ledgers(batch integer DEFAULT 500) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  accounts uuid[];
  loans uuid[];
BEGIN
  SELECT coalesce(array_agg(l.account_id), '{}'), coalesce(array_agg(l.id), '{}') INTO accounts, loans
    FROM (SELECT l.account_id, l.id FROM loans l
           WHERE l.status IN ('servicing', 'overpaid')
             AND (l.ledger_as_of IS NULL OR l.ledger_as_of < loanql_business_date(l.account_id))
           ORDER BY l.account_id, l.id
           LIMIT batch) l;
  PERFORM loanql_refresh_next(accounts, loans);
  RETURN coalesce(array_length(loans, 1), 0);
END $$;

-- The triggers of 0001/0002/0005 call this for the loans a statement touched: it now replays
-- their ledgers (is_next included). The replay's own writes do not replay again.
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
END $$;

-- Fees replay their loan too.
CREATE TRIGGER fees_replay_insert AFTER INSERT ON fees
  REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION loanql_refresh_next_from_new();
CREATE TRIGGER fees_replay_delete AFTER DELETE ON fees
  REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION loanql_refresh_next_from_new();
CREATE TRIGGER fees_replay_update AFTER UPDATE OF date, amount, row_number, waived_on ON fees
  FOR EACH ROW EXECUTE FUNCTION loanql_refresh_next_for_old_and_new();
-- A loan's amount or rate changes the ledger even when its schedule rows do not move.
CREATE FUNCTION loanql_replay_loan_terms() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM loanql_refresh_next(ARRAY[NEW.account_id], ARRAY[NEW.id]);
  RETURN NULL;
END $$;
CREATE TRIGGER loans_replay_terms AFTER UPDATE OF amount, rate, frequency, amortization, date_funded, product_id ON loans
  FOR EACH ROW WHEN ((OLD.amount, OLD.rate, OLD.frequency, OLD.amortization, OLD.date_funded, OLD.product_id)
                     IS DISTINCT FROM (NEW.amount, NEW.rate, NEW.frequency, NEW.amortization, NEW.date_funded, NEW.product_id))
  EXECUTE FUNCTION loanql_replay_loan_terms();
-- A payment's amount, date or type changes its loan's ledger (reversals already replay).
CREATE TRIGGER payments_replay_changed AFTER UPDATE OF amount, date, type ON payments
  FOR EACH ROW WHEN ((OLD.amount, OLD.date, OLD.type) IS DISTINCT FROM (NEW.amount, NEW.date, NEW.type))
  EXECUTE FUNCTION loanql_refresh_next_for_old_and_new();

-- R8: a reversal for insufficient funds adds the product's NSF fee, dated the reversal (none when it is 0.00).
CREATE FUNCTION loanql_nsf_fee() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO fees (account_id, loan_id, kind, payment_id, date, amount)
  SELECT NEW.account_id, NEW.loan_id, 'nsf', NEW.id, NEW.date_reversed, pr.nsf_fee
    FROM loans l JOIN products pr ON pr.account_id = l.account_id AND (pr.id = l.product_id OR (l.product_id IS NULL AND pr.is_default))
   WHERE l.account_id = NEW.account_id AND l.id = NEW.loan_id AND pr.nsf_fee > 0;
  RETURN NULL;
END $$;
CREATE TRIGGER payments_nsf_fee AFTER UPDATE OF date_reversed, reversal_reason ON payments
  FOR EACH ROW WHEN (OLD.date_reversed IS NULL AND NEW.date_reversed IS NOT NULL AND NEW.reversal_reason = 'nsf')
  EXECUTE FUNCTION loanql_nsf_fee();

-- R9: a refund pays back credit: more than the credit the loan holds on its day is refused.
CREATE FUNCTION loanql_refund_within_credit() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  credit numeric;
BEGIN
  IF NEW.type = 'refund' AND NEW.date_reversed IS NULL THEN
    credit := (loanql_ledger(NEW.account_id, NEW.loan_id, NEW.date)).credit_balance;
    IF NEW.amount > coalesce(credit, 0) THEN
      RAISE EXCEPTION 'a refund of % is more than the loan''s credit balance of % on %', NEW.amount, coalesce(credit, 0), NEW.date
        USING ERRCODE = 'check_violation', CONSTRAINT = 'payments_refund_within_credit', TABLE = 'payments', COLUMN = 'amount';
    END IF;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER payments_refund_within_credit BEFORE INSERT ON payments FOR EACH ROW WHEN (NEW.type = 'refund') EXECUTE FUNCTION loanql_refund_within_credit();

-- A product's servicing settings apply to every loan of the product: their ledgers are replayed.
CREATE FUNCTION loanql_replay_product_loans() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM loanql_refresh_next(array_agg(l.account_id), array_agg(l.id))
     FROM loans l WHERE l.account_id = NEW.account_id AND (l.product_id = NEW.id OR (l.product_id IS NULL AND NEW.is_default));
  RETURN NULL;
END $$;
CREATE TRIGGER products_replay_loans AFTER UPDATE OF allocation_order, day_count, arrears_tolerance ON products
  FOR EACH ROW WHEN ((OLD.allocation_order, OLD.day_count, OLD.arrears_tolerance) IS DISTINCT FROM (NEW.allocation_order, NEW.day_count, NEW.arrears_tolerance))
  EXECUTE FUNCTION loanql_replay_product_loans();

-- R9: closing by hand while money is owed is refused, naming what is owed; overpaid is the ledger's to set.
CREATE FUNCTION loanql_loan_status_by_hand() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  r loanql_ledger_result;
BEGIN
  IF current_setting('loanql.replaying', true) = 'on' OR NEW.status IS NOT DISTINCT FROM OLD.status THEN RETURN NEW; END IF;
  IF NEW.status = 'overpaid' THEN
    RAISE EXCEPTION 'overpaid is set by the ledger (when a loan is paid off with money to spare), not by hand'
      USING ERRCODE = 'check_violation', CONSTRAINT = 'loans_overpaid_by_ledger', TABLE = 'loans', COLUMN = 'status';
  END IF;
  IF NEW.status = 'closed' AND OLD.status IN ('servicing', 'overpaid') THEN
    r := loanql_ledger(NEW.account_id, NEW.id, loanql_stored_as_of(NEW.account_id, NEW.id));
    IF r.principal_outstanding + r.interest_due + r.fees_due > 0 OR r.credit_balance > 0 THEN
      RAISE EXCEPTION 'the loan still owes principal %, interest %, fees % (credit %): it closes by itself when paid off',
        r.principal_outstanding, r.interest_due, r.fees_due, r.credit_balance
        USING ERRCODE = 'check_violation', CONSTRAINT = 'loans_close_with_balance', TABLE = 'loans', COLUMN = 'status';
    END IF;
    NEW.date_closed := coalesce(NEW.date_closed, loanql_business_date(NEW.account_id));
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER loans_status_by_hand BEFORE UPDATE OF status ON loans FOR EACH ROW EXECUTE FUNCTION loanql_loan_status_by_hand();

-- Every existing loan's ledger, derived now.
SELECT loanql_refresh_next(array_agg(account_id), array_agg(id)) FROM loans;
`;
