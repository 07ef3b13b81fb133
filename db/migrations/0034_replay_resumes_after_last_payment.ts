/**
 * A write that adds payments after a loan's last one replays only those payments (issue 29:
 * "replaying a 30-year monthly loan with 360 payments costs under 5 ms of server time";
 * docs/ledger.md, "Migration 0034"). The same ledger and the same rows as a full replay.
 *
 * - **The state after the last payment.** `loanql_ledger`'s loop keeps, besides the rows' paid
 *   amounts, a few running values (pointers into the rows and fees, running totals, the fees in
 *   date order). Its state at the start of its last step (the as-of day: late fees judged,
 *   fees activated and waived up to it — a step that changes no row) is `loanql_ledger_state`: the
 *   last applied payment's key (date, posted_at, id), the line count, the scalars and the fee
 *   arrays. The rows are not in it: after a replay the stored schedule rows are the loop's rows
 *   after its last payment. The state does not depend on the as-of day.
 * - **Stored** in `ledger_resume_states` (unlogged; a lost row costs one full replay) by the full
 *   replay of a call with at most 10 loans (a write's; not the seeder's or the fee job's batches),
 *   and by a resumed replay, with a version of the loan's rows (0032's, without the as-of day and
 *   without the payments that sort after the state's last payment) taken after the writes.
 * - **Resumed** (`loanql_replay_resume`) when the loan's version, new payments left out, is the
 *   stored one — every other row a replay reads or writes is the version the state was stored
 *   with — and the lines stored are those counted by the state (no line of the last as-of step is
 *   stored: otherwise a full replay, which pairs them). `loanql_ledger_from(…, state)` is 0018's
 *   `loanql_ledger` with its marked `0034` changes: it reads the rows' stored values and the
 *   state instead of starting from the first payment, replays the payments after the state's key
 *   and the as-of day, and gives up (null: a full replay instead, nothing written) where a step
 *   rewrites earlier lines — a payoff (R6) or a curtailment (R7) — or the loan's status no longer
 *   gives the state's late-fee rule. The writes: the new lines appended, the payments they name
 *   split (R10), the rows those lines pay and the next row, the fees (only when the loan has
 *   some), the loan.
 * - Only a write that adds a payment (not reversed) after the state's last one resumes; any other
 *   replay runs as before (0032's skip included).
 * - `loanql_replay_loans` (0032's) tries the resume for each loan of a call with at most 10 loans
 *   first (before 0032's version check, which such a write always fails), then goes on as before;
 *   `loanql_replay_loans_in_full` (0026's) stores the states. `loanql_ledger(account, loan, as_of)`
 *   is `loanql_ledger_from(…, null)`; its rows are read with one sort (an ordered subquery) instead
 *   of one per `array_agg(… ORDER BY …)`.
 *
 * The functions are made from the texts of their latest definitions (0018's `loanql_ledger`,
 * 0026's replay, 0032's check around it) by the replacements below, each one checked.
 */
import { sql as feesAndDelinquency } from './0018_fees_and_delinquency.js';
import { sql as replayWritesFromFirstDifference } from './0026_replay_writes_from_first_difference.js';
import { sql as replaySkipsUnchangedInputs } from './0032_replay_skips_unchanged_inputs.js';
import { between, edited } from './textEdits.js';

export const name = '0034_replay_resumes_after_last_payment';

const ledgerFrom = edited('0034', 
  between('0034', feesAndDelinquency, 'CREATE OR REPLACE FUNCTION loanql_ledger(', '\nEND $$;'),
  [
    [
      'CREATE OR REPLACE FUNCTION loanql_ledger(p_account uuid, p_loan uuid, p_as_of date) RETURNS loanql_ledger_result',
      'CREATE FUNCTION loanql_ledger_from(p_account uuid, p_loan uuid, p_as_of date, p_state loanql_ledger_state) RETURNS loanql_ledger_result',
    ],
    [
      '  amount numeric;\nBEGIN',
      `  amount numeric;
  -- 0034: resuming from p_state (the state after the last payment of a stored replay); line_base
  -- lines are stored before the ones made here; the key of the last payment applied
  resuming boolean := NOT (p_state IS NULL); line_base integer := coalesce(p_state.lines, 0);
  last_date date; last_posted timestamptz; last_id uuid;
BEGIN`,
    ],
    [
      "  late_fees := lo.status IN ('servicing', 'overpaid') OR (lo.status = 'closed' AND lo.date_closed IS NOT NULL);\n",
      `  late_fees := lo.status IN ('servicing', 'overpaid') OR (lo.status = 'closed' AND lo.date_closed IS NOT NULL);
  -- 0034: the state was made under the other rule: replay in full
  IF resuming AND late_fees IS DISTINCT FROM p_state.late_fees THEN RETURN NULL; END IF;
`,
    ],
    [
      '  -- Rows in due order (then number); a row asks its payment: its interest, and the rest as principal.\n',
      `  IF resuming THEN
    -- 0034: the rows as the stored replay left them (what each asks and has been paid), in due order
    -- (one sort, in an ordered subquery, rather than one per array_agg(… ORDER BY …))
    SELECT coalesce(array_agg(s.number), '{}'), coalesce(array_agg(s.due), '{}'), coalesce(array_agg(s.interest), '{}'),
           coalesce(array_agg(s.principal), '{}'), coalesce(array_agg(s.balance), '{}'),
           coalesce(array_agg(s.interest_paid), '{}'), coalesce(array_agg(s.principal_paid), '{}'),
           coalesce(array_agg(s.late_id), '{}'), coalesce(array_agg(s.late_waived_on), '{}')
      INTO nums, due, eint, eprin, ebal, pint, pprin, ex_id_at, ex_waive_at
      FROM (SELECT s.number, s.due, s.interest, s.principal, s.balance, s.interest_paid, s.principal_paid, lf.id AS late_id, lf.waived_on AS late_waived_on
              FROM schedules s
              LEFT JOIN fees lf ON lf.account_id = s.account_id AND lf.loan_id = s.loan_id AND lf.kind = 'late' AND lf.row_number = s.number
             WHERE s.account_id = p_account AND s.loan_id = p_loan
             ORDER BY s.due, s.number OFFSET 0) s;
  ELSE
  -- Rows in due order (then number); a row asks its payment: its interest, and the rest as principal.
`,
    ],
    [
      `  SELECT coalesce(array_agg(s.number ORDER BY s.due, s.number), '{}'), coalesce(array_agg(s.due ORDER BY s.due, s.number), '{}'),
         coalesce(array_agg(s.scheduled_interest ORDER BY s.due, s.number), '{}'),
         coalesce(array_agg(s.scheduled_payment - s.scheduled_interest ORDER BY s.due, s.number), '{}'),
         coalesce(array_agg(s.scheduled_balance ORDER BY s.due, s.number), '{}'),
         -- 0016: the late fee already stored for each row (at most one: fees_one_late_per_row), beside it
         coalesce(array_agg(lf.id ORDER BY s.due, s.number), '{}'), coalesce(array_agg(lf.waived_on ORDER BY s.due, s.number), '{}')
    INTO nums, due, eint, eprin, ebal, ex_id_at, ex_waive_at
    FROM schedules s
    LEFT JOIN fees lf ON lf.account_id = s.account_id AND lf.loan_id = s.loan_id AND lf.kind = 'late' AND lf.row_number = s.number
   WHERE s.account_id = p_account AND s.loan_id = p_loan;
`,
      `  -- 0034: one sort, in an ordered subquery, rather than one per array_agg(… ORDER BY …)
  SELECT coalesce(array_agg(s.number), '{}'), coalesce(array_agg(s.due), '{}'), coalesce(array_agg(s.scheduled_interest), '{}'),
         coalesce(array_agg(s.scheduled_principal), '{}'), coalesce(array_agg(s.scheduled_balance), '{}'),
         -- 0016: the late fee already stored for each row (at most one: fees_one_late_per_row), beside it
         coalesce(array_agg(s.late_id), '{}'), coalesce(array_agg(s.late_waived_on), '{}')
    INTO nums, due, eint, eprin, ebal, ex_id_at, ex_waive_at
    FROM (SELECT s.number, s.due, s.scheduled_interest, s.scheduled_payment - s.scheduled_interest AS scheduled_principal, s.scheduled_balance,
                 lf.id AS late_id, lf.waived_on AS late_waived_on
            FROM schedules s
            LEFT JOIN fees lf ON lf.account_id = s.account_id AND lf.loan_id = s.loan_id AND lf.kind = 'late' AND lf.row_number = s.number
           WHERE s.account_id = p_account AND s.loan_id = p_loan
           ORDER BY s.due, s.number OFFSET 0) s;
  END IF;
`,
    ],
    ['  amount := lo.amount;\n', '  amount := CASE WHEN resuming THEN p_state.amount ELSE lo.amount END;  -- 0034\n'],
    [
      '  pint := array_fill(0::numeric, ARRAY[n]);\n  pprin := array_fill(0::numeric, ARRAY[n]);\n',
      '  IF NOT resuming THEN  -- 0034\n  pint := array_fill(0::numeric, ARRAY[n]);\n  pprin := array_fill(0::numeric, ARRAY[n]);\n  END IF;\n',
    ],
    [
      '  -- Recorded fees (NSF, manual), in date order; late fees are derived below as the days pass.\n',
      `  IF resuming THEN
    -- 0034: the fees and the loop's running values as they stood after the last payment
    fid := p_state.fid; fdate := p_state.fdate; famt := p_state.famt; frow := p_state.frow; fwaive := p_state.fwaive;
    fkind := p_state.fkind; fpaid := p_state.fpaid; fwaived := p_state.fwaived; factive := p_state.factive; fwdone := p_state.fwdone;
    nf := coalesce(cardinality(fid), 0);
    k := p_state.k; fo := p_state.fo; late_done := p_state.late_done; fa := p_state.fa; ffo := p_state.ffo; next_waive := p_state.next_waive;
    credit := p_state.credit; prin_total := p_state.prin_total; due_int := p_state.due_int; ahead := p_state.ahead;
    fees_open := p_state.fees_open; settled_on := p_state.settled_on; any_payment := p_state.any_payment;
    last_date := p_state.last_date; last_posted := p_state.last_posted_at; last_id := p_state.last_id;
  ELSE
  -- Recorded fees (NSF, manual), in date order; late fees are derived below as the days pass.
`,
    ],
    [
      '\n\n  -- The payments in replay order, then the as-of day itself (id null): fees and waivers up to it.\n',
      '\n  END IF;\n\n  -- The payments in replay order, then the as-of day itself (id null): fees and waivers up to it.\n',
    ],
    ['    SELECT e.id, e.date, e.amount, e.type FROM (', '    SELECT e.id, e.date, e.amount, e.type, e.posted_at FROM ('],
    [
      '       WHERE py.account_id = p_account AND py.loan_id = p_loan AND py.date_reversed IS NULL AND py.date <= p_as_of\n',
      `       WHERE py.account_id = p_account AND py.loan_id = p_loan AND py.date_reversed IS NULL AND py.date <= p_as_of
         -- 0034: resuming, the payments after the state's last one only
         AND (NOT resuming OR p_state.last_id IS NULL OR (py.date, py.posted_at, py.id) > (p_state.last_date, p_state.last_posted_at, p_state.last_id))
`,
    ],
    [
      '  LOOP\n    -- R4: a row not fully paid',
      `  LOOP
    -- 0034: the state after the last payment, before the as-of day's step (which changes no row)
    IF p.id IS NULL THEN
      res.state := ROW(last_date, last_posted, last_id, line_base + nl, late_fees, amount, k, fo, late_done, fa, ffo, next_waive,
                       credit, prin_total, due_int, ahead, fees_open, settled_on, any_payment,
                       fid, fdate, famt, frow, fwaive, fkind, fpaid, fwaived, factive, fwdone)::loanql_ledger_state;
    END IF;
    -- R4: a row not fully paid`,
    ],
    [
      '    any_payment := true;\n',
      '    any_payment := true;\n    last_date := p.date; last_posted := p.posted_at; last_id := p.id;  -- 0034\n',
    ],
    [
      '    IF p.amount >= payoff_before AND rem > 0 THEN\n',
      '    IF p.amount >= payoff_before AND rem > 0 THEN\n      IF resuming THEN RETURN NULL; END IF;  -- 0034: R6 re-labels earlier lines: replay in full\n',
    ],
    [
      "    ELSIF p.type = 'principal' AND rem > 0 AND k <= n THEN\n",
      "    ELSIF p.type = 'principal' AND rem > 0 AND k <= n THEN\n      IF resuming THEN RETURN NULL; END IF;  -- 0034: R7 moves earlier lines: replay in full\n",
    ],
  ],
);

// 0026's replay (renamed by 0032), storing the states of a small call's loans at its end.
const replayInFull = edited('0034', replayWritesFromFirstDifference.slice(replayWritesFromFirstDifference.indexOf('CREATE OR REPLACE FUNCTION loanql_replay_loans(')), [
  ['CREATE OR REPLACE FUNCTION loanql_replay_loans(', 'CREATE OR REPLACE FUNCTION loanql_replay_loans_in_full('],
  [
    '         IS DISTINCT FROM (x.principal, x.interest, x.fees, x.credit, x.oldest, x.status, x.closed, x.as_of, x.dpd);\nEND $$;',
    `         IS DISTINCT FROM (x.principal, x.interest, x.fees, x.credit, x.oldest, x.status, x.closed, x.as_of, x.dpd);

  -- 0034: each loan's state after its last payment, for the next write to resume from, with the
  -- version of its rows now (after the writes); only for a write's few loans
  IF cardinality(items) <= 10 THEN
    INSERT INTO ledger_resume_states (account_id, id, version, lines, fees, state)
    SELECT i.account_id, i.loan_id, loanql_ledger_resume_version(i.account_id, i.loan_id, (i.r).state),
           cardinality((i.r).line_payment), cardinality((i.r).fee_id), (i.r).state
      FROM unnest(items) i
    ON CONFLICT (account_id, id) DO UPDATE SET version = excluded.version, lines = excluded.lines, fees = excluded.fees, state = excluded.state;
  END IF;
END $$;`,
  ],
]);

// 0032's check around it, trying the resume first.
const replayLoans = edited('0034', between('0034', replaySkipsUnchangedInputs, 'CREATE FUNCTION loanql_replay_loans(', '\nEND $$;'), [
  ['CREATE FUNCTION loanql_replay_loans(', 'CREATE OR REPLACE FUNCTION loanql_replay_loans('],
  [
    '  r_account uuid[]; r_loan uuid[]; had_version boolean; written bigint;\nBEGIN\n',
    `  r_account uuid[]; r_loan uuid[]; had_version boolean; written bigint;
  f_account uuid[] := '{}'; f_loan uuid[] := '{}'; d record;  -- 0034
BEGIN
  -- 0034: a loan whose write added payments after its last one, its stored state still its rows',
  -- resumes from that state (before the version check: such a write always changes the version);
  -- the others go on as before
  IF cardinality(p_loan) <= 10 THEN
    FOR d IN SELECT DISTINCT * FROM unnest(p_account, p_loan) AS u(account_id, loan_id) LOOP
      CONTINUE WHEN loanql_replay_resume(d.account_id, d.loan_id);
      f_account := f_account || d.account_id; f_loan := f_loan || d.loan_id;
    END LOOP;
    IF cardinality(f_loan) = 0 THEN RETURN; END IF;
  ELSE
    f_account := p_account; f_loan := p_loan;
  END IF;
`,
  ],
  ['FROM (SELECT DISTINCT * FROM unnest(p_account, p_loan) AS u(account_id, loan_id)) u', 'FROM (SELECT DISTINCT * FROM unnest(f_account, f_loan) AS u(account_id, loan_id)) u'],
]);

export const sql = /* sql */ `
-- The loop's state after a loan's last payment (loanql_ledger_from).
CREATE TYPE loanql_ledger_state AS (
  last_date date, last_posted_at timestamptz, last_id uuid,
  -- allocation lines made up to that point, the late-fee rule (false: no late fees), the principal lent
  lines integer, late_fees boolean, amount numeric,
  k integer, fo integer, late_done integer, fa integer, ffo integer, next_waive date,
  credit numeric, prin_total numeric, due_int numeric, ahead numeric, fees_open numeric, settled_on date, any_payment boolean,
  fid uuid[], fdate date[], famt numeric[], frow integer[], fwaive date[], fkind text[], fpaid numeric[], fwaived numeric[],
  factive boolean[], fwdone boolean[]
);
ALTER TYPE loanql_ledger_result ADD ATTRIBUTE state loanql_ledger_state CASCADE;

CREATE UNLOGGED TABLE ledger_resume_states (
  account_id uuid NOT NULL,
  -- the loan's id
  id uuid NOT NULL,
  -- loanql_ledger_resume_version after the replay that stored it
  version text NOT NULL,
  -- allocation lines and fees stored by that replay
  lines integer NOT NULL,
  fees integer NOT NULL,
  state loanql_ledger_state NOT NULL,
  PRIMARY KEY (account_id, id),
  FOREIGN KEY (account_id, id) REFERENCES loans (account_id, id) ON DELETE CASCADE
);

-- 0032's version of the loan's rows, without the as-of day (the state does not depend on it) and
-- without the payments that sort after the state's last one (reversed ones, or new).
CREATE FUNCTION loanql_ledger_resume_version(p_account uuid, p_loan uuid, p_state loanql_ledger_state) RETURNS text
LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN (
    SELECT md5(concat_ws('|',
             l.ctid::text || l.xmin::text,
             (SELECT string_agg(pr.ctid::text || pr.xmin::text, ',' ORDER BY pr.ctid) FROM products pr
               WHERE pr.account_id = p_account AND (pr.id = l.product_id OR (l.product_id IS NULL AND pr.is_default))),
             (SELECT string_agg(s.ctid::text || s.xmin::text, ',' ORDER BY s.ctid) FROM schedules s WHERE s.account_id = p_account AND s.loan_id = p_loan),
             (SELECT string_agg(py.ctid::text || py.xmin::text, ',' ORDER BY py.ctid) FROM payments py
               WHERE py.account_id = p_account AND py.loan_id = p_loan
                 AND (py.date, py.posted_at, py.id) <= (p_state.last_date, p_state.last_posted_at, p_state.last_id)),
             (SELECT string_agg(f.ctid::text || f.xmin::text, ',' ORDER BY f.ctid) FROM fees f WHERE f.account_id = p_account AND f.loan_id = p_loan),
             (SELECT string_agg(w.ctid::text || w.xmin::text, ',' ORDER BY w.ctid) FROM fee_waivers w WHERE w.account_id = p_account AND w.loan_id = p_loan),
             (SELECT string_agg(a.ctid::text || a.xmin::text, ',' ORDER BY a.ctid) FROM payment_allocations a WHERE a.account_id = p_account AND a.loan_id = p_loan)))
      FROM loans l WHERE l.account_id = p_account AND l.id = p_loan);
END $$;

${ledgerFrom}

-- (PL/pgSQL, so never inlined: a call of loanql_ledger is a full replay's computation, which tests count)
CREATE OR REPLACE FUNCTION loanql_ledger(p_account uuid, p_loan uuid, p_as_of date) RETURNS loanql_ledger_result
LANGUAGE plpgsql STABLE AS $$ BEGIN RETURN loanql_ledger_from(p_account, p_loan, p_as_of, NULL); END $$;

-- One loan's replay resumed from its stored state (the caller holds the loan's row lock); false,
-- having written nothing, when it cannot be (then the caller replays it in full).
CREATE FUNCTION loanql_replay_resume(p_account uuid, p_loan uuid) RETURNS boolean
LANGUAGE plpgsql SET enable_seqscan = off SET jit = off AS $$
DECLARE
  saved ledger_resume_states;
  r loanql_ledger_result;
  st record;
  paid_rows integer[];
  pays uuid[];
  as_of date;
BEGIN
  SELECT * INTO saved FROM ledger_resume_states s WHERE s.account_id = p_account AND s.id = p_loan;
  -- (lines of the last as-of step stored, e.g. credit paying a fee: the full replay pairs them)
  IF NOT FOUND OR saved.lines <> (saved.state).lines THEN RETURN false; END IF;
  -- only a write that adds payments after the last one resumes (any other replay is in full, as before)
  IF NOT EXISTS (SELECT 1 FROM payments py
                  WHERE py.account_id = p_account AND py.loan_id = p_loan AND py.date_reversed IS NULL
                    AND ((saved.state).last_id IS NULL
                         OR (py.date, py.posted_at, py.id) > ((saved.state).last_date, (saved.state).last_posted_at, (saved.state).last_id))) THEN
    RETURN false;
  END IF;
  IF saved.version IS DISTINCT FROM loanql_ledger_resume_version(p_account, p_loan, saved.state) THEN RETURN false; END IF;
  as_of := loanql_stored_as_of(p_account, p_loan);
  r := loanql_ledger_from(p_account, p_loan, as_of, saved.state);
  IF r IS NULL THEN RETURN false; END IF;
  SELECT s.new_status, s.new_closed INTO st
    FROM loans l CROSS JOIN LATERAL loanql_ledger_status(l.status, l.date_closed, r.settled, r.credit_balance, r.settled_on) s
   WHERE l.account_id = p_account AND l.id = p_loan;

  -- Lines: the new ones after the stored ones; the payments they name are split (R10).
  IF cardinality(r.line_payment) > 0 THEN
    INSERT INTO payment_allocations (account_id, loan_id, payment_id, row_number, fee_id, component, amount, position)
      SELECT p_account, p_loan, u.payment_id, u.row_number, u.fee_id, u.component, u.amount, saved.lines + u.k::integer
        FROM unnest(r.line_payment, r.line_row, r.line_fee, r.line_component, r.line_amount) WITH ORDINALITY AS u(payment_id, row_number, fee_id, component, amount, k);
    SELECT coalesce(array_agg(DISTINCT u.payment_id) FILTER (WHERE u.payment_id IS NOT NULL AND u.component IN ('principal', 'interest', 'fee')), '{}'),
           coalesce(array_agg(DISTINCT u.row_number) FILTER (WHERE u.row_number IS NOT NULL AND u.component IN ('principal', 'interest')), '{}')
      INTO pays, paid_rows
      FROM unnest(r.line_payment, r.line_row, r.line_component) AS u(payment_id, row_number, component);
    IF cardinality(pays) > 0 THEN PERFORM loanql_distribute_payments(array_fill(p_account, ARRAY[cardinality(pays)]), pays); END IF;
  ELSE
    paid_rows := '{}';
  END IF;

  -- Rows: those the new lines pay, and the next row (cleared first where it moves, as 0026 does).
  UPDATE schedules s SET is_next = false
   WHERE s.account_id = p_account AND s.loan_id = p_loan AND s.is_next AND (st.new_status <> 'servicing' OR s.number IS DISTINCT FROM r.next_row);
  UPDATE schedules s SET interest_paid = x.interest_paid, principal_paid = x.principal_paid, is_next = x.is_next
    FROM (SELECT u.number, u.interest_paid, u.principal_paid, st.new_status = 'servicing' AND u.number IS NOT DISTINCT FROM r.next_row AS is_next
            FROM unnest(r.row_number, r.row_interest_paid, r.row_principal_paid) AS u(number, interest_paid, principal_paid)
           WHERE u.number = ANY (paid_rows) OR u.number = r.next_row) x
   WHERE s.account_id = p_account AND s.loan_id = p_loan AND s.number = x.number
     AND (s.interest_paid, s.principal_paid, s.is_next) IS DISTINCT FROM (x.interest_paid, x.principal_paid, x.is_next);

  -- Fees (0026's write, for one loan), when the loan has any.
  IF saved.fees > 0 OR cardinality(r.fee_id) > 0 THEN
  WITH new_fees AS (
         SELECT p_account AS account_id, p_loan AS loan_id, n.* FROM unnest(r.fee_id, r.fee_kind, r.fee_row, r.fee_date, r.fee_amount, r.fee_paid, r.fee_waived)
                  AS n(id, kind, row_number, date, amount, paid, waived)),
       old_fees AS (
         SELECT f.account_id, f.id, f.kind, f.row_number, f.date, f.amount, f.paid, f.waived
           FROM fees f WHERE f.account_id = p_account AND f.loan_id = p_loan),
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
  END IF;

  UPDATE loans l
     SET principal_outstanding = r.principal_outstanding, interest_due = r.interest_due, fees_due = r.fees_due,
         credit_balance = r.credit_balance, oldest_unpaid_due = r.oldest_unpaid_due, status = st.new_status, date_closed = st.new_closed,
         ledger_as_of = x.as_of, days_past_due = x.dpd
    FROM (SELECT as_of AS as_of, CASE WHEN st.new_status = 'servicing' THEN r.days_past_due ELSE 0 END AS dpd) x
   WHERE l.account_id = p_account AND l.id = p_loan
     AND (l.principal_outstanding, l.interest_due, l.fees_due, l.credit_balance, l.oldest_unpaid_due, l.status, l.date_closed, l.ledger_as_of, l.days_past_due)
         IS DISTINCT FROM (r.principal_outstanding, r.interest_due, r.fees_due, r.credit_balance, r.oldest_unpaid_due, st.new_status, st.new_closed, x.as_of, x.dpd);

  DELETE FROM ledger_fingerprints f WHERE f.account_id = p_account AND f.id = p_loan;  -- (as 0032's full replay does)
  UPDATE ledger_resume_states s
     SET state = r.state, lines = saved.lines + cardinality(r.line_payment), fees = cardinality(r.fee_id),
         version = loanql_ledger_resume_version(p_account, p_loan, r.state)
   WHERE s.account_id = p_account AND s.id = p_loan;
  RETURN true;
END $$;

${replayInFull}

${replayLoans}
`;
