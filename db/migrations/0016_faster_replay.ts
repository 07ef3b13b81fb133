/**
 * A faster replay (issue 29, "the replay must be fast"): the same ledger, the same rows written,
 * measured and explained in docs/ledger.md ("Cost") and bench/README.md ("Ledger").
 *
 * Where the time went (bench/ledger.ts, PostgreSQL 15, a 30-year monthly loan with 360 payments,
 * server CPU time: 15.4 ms for a replay that writes nothing, 251 ms for reversing the first
 * payment, which rewrites every line and adds 359 late fees; after: 5.3 ms and 25.9 ms):
 *
 * 1. `loanql_replay_loans` computed each loan's ledger four times: the planner pulled the
 *    subquery that called `loanql_ledger` up into the outer query and so evaluated it once per
 *    reference — `t.r` in the row built, and `(t.r).settled`, `.credit_balance`, `.settled_on` in
 *    the status call. Now the subquery is a fence (`OFFSET 0`): one computation per loan.
 * 2. The writes joined the stored rows to `unnest(items)`, each row carrying its loan's whole
 *    ledger (a composite of every array, ~100 kB); with a generic plan (the sixth call in a
 *    session on) the planner sorted those rows — 40 MB sorted on disk to update 360 schedule rows.
 *    Now the results are first flattened into plain arrays (one `array_agg` statement each for
 *    loans, lines, rows and fees), and every write is one statement over `unnest` of those arrays:
 *    no write sees the composite.
 * 3. `loanql_ledger` was quadratic in fees: every payment walked every fee (to start the ones
 *    dated by then, and to apply waivers), every late fee searched the stored late fees and copied
 *    ten arrays to insert itself. A reversal early in a 30-year history makes every row late
 *    (359 late fees): 48 ms of computing. Fees are kept in date order, so now the fees that have
 *    started are a prefix (a pointer, `fa`), the settled ones a shorter prefix (`ffo`: the loops
 *    that pay fees start there), waivers are looked at only on a day one becomes due
 *    (`next_waive`), the stored late fee of each row is read beside the row, and a late fee that
 *    goes to the end of the list (the usual case) is set in place rather than spliced.
 * 4. `loanql_round_div`, `loanql_day_count_days` and `loanql_day_count_year` are SQL functions
 *    that cannot be inlined (STRICT with a CASE), so each call from PL/pgSQL ran the SQL-function
 *    executor: three per payment. The replay's loop now computes them in place (the same exact
 *    half-up rounding: `div` on exact numerics, then `numeric(14, 2)`); the functions stay for
 *    everything else.
 * 5. Every schedule row the replay updated ran `loanql_schedule_as_made` (a PL/pgSQL row trigger
 *    that does nothing while replaying). Its trigger now has a WHEN clause that skips the replay's
 *    own writes, as the function itself did.
 * 6. A payment's amount, date or type changed by an UPDATE replayed its loan twice: 0012's row
 *    trigger `payments_replay_changed`, then 0001's statement trigger that replays after every
 *    UPDATE of payments. The row trigger is dropped. An NSF reversal replayed twice too (the NSF
 *    fee's insert, then the UPDATE's statement trigger): the fee's insert no longer replays.
 *
 * 7. The demo seeder's replay batches grew one after another (7 s to 44 s at scale 1, in its one
 *    transaction): the stored lines of a batch were read by a join planned from statistics taken
 *    while payment_allocations was empty, as a walk of the account's whole index, so each batch
 *    read every line of the batches before it. Stored lines, rows and fees are now read per loan
 *    by their own index range (LATERAL); the batches take 3-4 s each.
 * 8. A replay that changes nothing (most) compares each loan's stored lines and rows, as ordered
 *    arrays, with the new ones first, and skips their writes.
 *
 * The phases and names are those of 0012 (0012 itself is unchanged: applied migrations never
 * change): `loanql_ledger` computes, `loanql_replay_loans` computes every loan of a batch once,
 * compares, flattens, then writes lines, rows, fees and loans, each only where something differs.
 * docs/ledger.md ("How a replay is built") describes the phases, and where a new stored value goes.
 */
export const name = '0016_faster_replay';

export const sql = /* sql */ `
-- The ledger of one loan as of a day (0012's, with the loops of note 3 and the arithmetic of note 4) --
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
        fid[nf] := coalesce(fid_new, gen_random_uuid()); fdate[nf] := fee_day; famt[nf] := fee_amount; frow[nf] := nums[i];
        fwaive[nf] := wv; fkind[nf] := 'late'; fpaid[nf] := 0; fwaived[nf] := 0; factive[nf] := false; fwdone[nf] := false;
        CONTINUE;
      END IF;
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


-- Replays the ledgers of these loans and stores them, set-wise (the caller holds their row locks).
-- Phases (docs/ledger.md, "How a replay is built"): compute, compare, flatten, write. Only what
-- changed is written: lines, schedule rows, fees and loans whose values differ. Stored rows are
-- read per loan by index range (LATERAL) and written by key, whatever the statistics say
-- (enable_seqscan off: a sequential scan of schedules per batch made a 10,000-loan seed take minutes).
CREATE OR REPLACE FUNCTION loanql_replay_loans(p_account uuid[], p_loan uuid[]) RETURNS void
LANGUAGE plpgsql SET enable_seqscan = off AS $$
DECLARE
  items loanql_replay_item[];
  -- Flattened results (0016): one element per loan, per line, per schedule row, per fee.
  lo_account uuid[]; lo_loan uuid[]; lo_status text[]; lo_closed date[]; lo_as_of date[]; lo_next integer[];
  lo_principal numeric[]; lo_interest numeric[]; lo_fees numeric[]; lo_credit numeric[]; lo_oldest date[];
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
         array_agg((i.r).credit_balance), array_agg((i.r).oldest_unpaid_due)
    INTO lo_account, lo_loan, lo_status, lo_closed, lo_as_of, lo_next, lo_principal, lo_interest, lo_fees, lo_credit, lo_oldest
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
         ledger_as_of = x.as_of
    FROM unnest(lo_account, lo_loan, lo_principal, lo_interest, lo_fees, lo_credit, lo_oldest, lo_status, lo_closed, lo_as_of)
           AS x(account_id, loan_id, principal, interest, fees, credit, oldest, status, closed, as_of)
   WHERE l.account_id = x.account_id AND l.id = x.loan_id
     AND (l.principal_outstanding, l.interest_due, l.fees_due, l.credit_balance, l.oldest_unpaid_due, l.status, l.date_closed, l.ledger_as_of)
         IS DISTINCT FROM (x.principal, x.interest, x.fees, x.credit, x.oldest, x.status, x.closed, x.as_of);
END $$;

-- Note 5: the replay's own schedule writes skip the "as made" trigger (its function did nothing for them).
DROP TRIGGER schedules_as_made_update ON schedules;
CREATE TRIGGER schedules_as_made_update BEFORE UPDATE OF payment, principal, interest, balance ON schedules
  FOR EACH ROW WHEN (current_setting('loanql.replaying', true) IS DISTINCT FROM 'on')
  EXECUTE FUNCTION loanql_schedule_as_made();

-- Note 6: one replay per payment statement. payments_refresh_next_update (0001, after every UPDATE
-- statement on payments) replays the loans of the updated payments anyway, and
-- payments_refresh_next_moved (0002) the loans a payment left; 0012's row trigger replayed the
-- same loan once more, first, for a change of amount, date or type.
DROP TRIGGER payments_replay_changed ON payments;
-- Likewise a reversal for insufficient funds: its NSF fee is inserted by this row trigger, in the
-- middle of the UPDATE, and the fee's insert trigger replayed the loan before the UPDATE's own
-- statement trigger replayed it again. The insert now leaves the replay to that statement trigger.
CREATE OR REPLACE FUNCTION loanql_nsf_fee() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  replaying text := current_setting('loanql.replaying', true);
BEGIN
  PERFORM set_config('loanql.replaying', 'on', true);
  INSERT INTO fees (account_id, loan_id, kind, payment_id, date, amount)
  SELECT NEW.account_id, NEW.loan_id, 'nsf', NEW.id, NEW.date_reversed, pr.nsf_fee
    FROM loans l JOIN products pr ON pr.account_id = l.account_id AND (pr.id = l.product_id OR (l.product_id IS NULL AND pr.is_default))
   WHERE l.account_id = NEW.account_id AND l.id = NEW.loan_id AND pr.nsf_fee > 0;
  PERFORM set_config('loanql.replaying', coalesce(replaying, 'off'), true);
  RETURN NULL;
END $$;
`;
