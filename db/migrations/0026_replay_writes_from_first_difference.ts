/**
 * A cheaper replay when little changes (issue 29: "replaying a 30-year monthly loan with 360
 * payments costs under 5 ms of server time"). The same ledger and the same rows written; only
 * `loanql_replay_loans` is re-created, from 0018's text, with its changes marked `0026`:
 *
 * - Compare finds, per loan, where the stored lines and schedule rows first differ from the new
 *   ones (an element-wise pass over the arrays it already builds, only when they differ), and
 *   the writes take only what lies from there on. A payment posted after the others — the usual
 *   write — changes its own lines at the end and the rows from the one it pays: the lines write
 *   read and paired the loan's 720 stored lines with 721 new ones to insert one; it now reads
 *   none and inserts one. Lines are still paired as 0016 pairs them (the k-th stored line of a
 *   payment with its k-th new line): the lines before the first difference are the same on both
 *   sides, so a payment's k-th line after it is its k-th line overall less the same count on both
 *   sides. A stored position out of step (a duplicate) makes the first difference position 1.
 * - Compare compares the fees too (by id); when they are equal the fees write is skipped: that
 *   statement, even when it changed nothing, ran its four parts and fired the statement triggers
 *   of `fees` (0.7 ms for a loan with no fee at all).
 *
 * - The function runs with `jit = off` (a session with JIT on — psql, any client but the service's
 *   pool — compiled the Compare statement on every replay: 17 ms) and `plan_cache_mode =
 *   force_generic_plan`: its statements take the loans as array parameters, whose length a custom
 *   plan knows and a generic one does not, so PL/pgSQL kept planning them afresh on every call
 *   (~12 % of a replay's instructions); every read and write in it goes through per-loan index
 *   ranges (0016), so the generic plan is the one a custom plan makes.
 *
 * - It keeps 0024's two distribution steps (marked `0024 (R10)`): the payments whose allocation
 *   moves are found before the lines are written — here from each loan's first difference on, on
 *   both sides — and split again after (`loanql_distribute_payments`), in the same transaction.
 *
 * docs/ledger.md ("How a replay is built", "Cost") has where the time goes and the measurements.
 */
export const name = '0026_replay_writes_from_first_difference';

export const sql = /* sql */ `
CREATE OR REPLACE FUNCTION loanql_replay_loans(p_account uuid[], p_loan uuid[]) RETURNS void
LANGUAGE plpgsql SET enable_seqscan = off SET jit = off SET plan_cache_mode = force_generic_plan AS $$
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
  -- 0026: per loan (in the order of items), where its first difference is: the first line position
  -- (lines from it on are written; 0: none differs), the first schedule row (its index in due
  -- order, 0: none, and its due date, infinity: none), and whether any loan's fees differ. (No
  -- nulls: an element of an array without nulls is read in constant time.)
  cm_account uuid[]; cm_loan uuid[]; cm_line_from integer[]; cm_row_from integer[]; cm_row_from_due date[];
  fees_differ boolean;
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

  -- Compare (0016; 0026: and where). Each loan's stored lines and rows are read in order into
  -- arrays and compared whole with the new ones; a replay that changes nothing (most) then skips
  -- the writes below. Read in an ordered subquery: were that order not kept, the positions
  -- (numbers) would not match and the writes would run: never a change missed.
  -- 0026: where they differ, the first difference: lines before it are stored as they are new,
  -- so the writes take only the lines from it on (a payment posted after the others: its lines
  -- alone), and only the rows from it on (in due order). A stored position out of step (a
  -- duplicate) falls back to position 1, every line. The fees are compared too (by id): equal,
  -- their write, which fires the fees' statement triggers even when it changes nothing, is skipped.
  -- (Each LATERAL is fenced with OFFSET 0: pulled up, its expression would be evaluated once per
  -- reference — line_from twice, row_from three times, the is_next array in every comparison.)
  SELECT coalesce(array_agg(i.account_id ORDER BY i.n), '{}'), coalesce(array_agg(i.loan_id ORDER BY i.n), '{}'),
         coalesce(array_agg(coalesce(ol.line_from, 0) ORDER BY i.n), '{}'), coalesce(array_agg(coalesce(orw.row_from, 0) ORDER BY i.n), '{}'),
         coalesce(array_agg(coalesce(orw.row_from_due, 'infinity') ORDER BY i.n), '{}'),
         coalesce(bool_or(ol.line_from IS NOT NULL), false), coalesce(bool_or(orw.row_from IS NOT NULL), false), coalesce(bool_or(ofe.differ), false)
    INTO cm_account, cm_loan, cm_line_from, cm_row_from, cm_row_from_due, lines_differ, rows_differ, fees_differ
    FROM unnest(items) WITH ORDINALITY AS i(account_id, loan_id, new_status, new_closed, r, as_of, n)
    CROSS JOIN LATERAL (
          SELECT CASE WHEN (coalesce(a.pos[1:c.l], '{}'), coalesce(a.pay[1:c.l], '{}'), coalesce(a.rw[1:c.l], '{}'), coalesce(a.fee[1:c.l], '{}'),
                            coalesce(a.comp[1:c.l], '{}'), coalesce(a.amt[1:c.l], '{}'))
                           IS DISTINCT FROM (ARRAY(SELECT generate_series(1, c.l)), (i.r).line_payment[1:c.l], (i.r).line_row[1:c.l],
                                             (i.r).line_fee[1:c.l], (i.r).line_component[1:c.l], (i.r).line_amount[1:c.l])
                        -- differ within the lines both have: every line from the first
                        THEN 1
                      WHEN c.n_old = c.n_new THEN NULL
                      -- the same lines, and lines added or removed at the end: the lines from there
                      WHEN a.pos[c.l + 1] IS NULL OR a.pos[c.l + 1] > c.l THEN c.l + 1
                      ELSE 1
                 END AS line_from
            FROM (SELECT array_agg(a.position) AS pos, array_agg(a.payment_id) AS pay, array_agg(a.row_number) AS rw,
                         array_agg(a.fee_id) AS fee, array_agg(a.component) AS comp, array_agg(a.amount) AS amt
                    FROM (SELECT a.position, a.payment_id, a.row_number, a.fee_id, a.component, a.amount FROM payment_allocations a
                           WHERE a.account_id = i.account_id AND a.loan_id = i.loan_id ORDER BY a.position) a) a
            CROSS JOIN LATERAL (SELECT coalesce(cardinality(a.pos), 0) AS n_old, cardinality((i.r).line_payment) AS n_new,
                                       least(coalesce(cardinality(a.pos), 0), cardinality((i.r).line_payment)) AS l) c
          OFFSET 0) ol
    CROSS JOIN LATERAL (
          SELECT ARRAY(SELECT i.new_status = 'servicing' AND u.number IS NOT DISTINCT FROM (i.r).next_row
                         FROM unnest((i.r).row_number) WITH ORDINALITY AS u(number, k) ORDER BY u.k) AS is_next OFFSET 0) nx
    CROSS JOIN LATERAL (
          SELECT d.row_from, CASE WHEN d.row_from IS NOT NULL THEN coalesce(s.due[d.row_from], '-infinity') END AS row_from_due
            FROM (SELECT array_agg(s.number) AS num, array_agg(s.interest) AS sint, array_agg(s.principal) AS prin, array_agg(s.balance) AS bal,
                         array_agg(s.interest_paid) AS ipaid, array_agg(s.principal_paid) AS ppaid, array_agg(s.is_next) AS nxt, array_agg(s.due) AS due
                    FROM (SELECT s.number, s.interest, s.principal, s.balance, s.interest_paid, s.principal_paid, s.is_next, s.due FROM schedules s
                           WHERE s.account_id = i.account_id AND s.loan_id = i.loan_id ORDER BY s.due, s.number) s) s
            -- the stored next row (the first with something unpaid): a payment after the others changes no row before it
            CROSS JOIN LATERAL (SELECT coalesce(array_position(s.nxt, true), 1) AS c) c
            CROSS JOIN LATERAL (
                  SELECT CASE WHEN (coalesce(s.num, '{}'), coalesce(s.sint, '{}'), coalesce(s.prin, '{}'), coalesce(s.bal, '{}'), coalesce(s.ipaid, '{}'),
                                    coalesce(s.ppaid, '{}'), coalesce(s.nxt, '{}'))
                                   IS NOT DISTINCT FROM ((i.r).row_number, (i.r).row_interest, (i.r).row_principal, (i.r).row_balance, (i.r).row_interest_paid,
                                                         (i.r).row_principal_paid, nx.is_next)
                                THEN NULL
                              -- the rows before the stored next one unchanged: the rows from it
                              WHEN c.c > 1 AND (s.num[1:c.c - 1], s.sint[1:c.c - 1], s.prin[1:c.c - 1], s.bal[1:c.c - 1], s.ipaid[1:c.c - 1], s.ppaid[1:c.c - 1], s.nxt[1:c.c - 1])
                                   IS NOT DISTINCT FROM ((i.r).row_number[1:c.c - 1], (i.r).row_interest[1:c.c - 1], (i.r).row_principal[1:c.c - 1],
                                                         (i.r).row_balance[1:c.c - 1], (i.r).row_interest_paid[1:c.c - 1], (i.r).row_principal_paid[1:c.c - 1],
                                                         nx.is_next[1:c.c - 1])
                                THEN c.c
                              ELSE 1
                         END AS row_from) d
          OFFSET 0) orw
    CROSS JOIN LATERAL (
          SELECT (SELECT (coalesce(array_agg(f.id), '{}'), coalesce(array_agg(f.kind), '{}'), coalesce(array_agg(f.row_number), '{}'), coalesce(array_agg(f.date), '{}'),
                          coalesce(array_agg(f.amount), '{}'), coalesce(array_agg(f.paid), '{}'), coalesce(array_agg(f.waived), '{}'))
                    FROM (SELECT f.* FROM (SELECT f.id, f.kind, f.row_number, f.date, f.amount, f.paid, f.waived FROM fees f
                                            WHERE f.account_id = i.account_id AND f.loan_id = i.loan_id OFFSET 0) f ORDER BY f.id) f)
                 IS DISTINCT FROM
                 (SELECT (coalesce(array_agg(n.id), '{}'), coalesce(array_agg(n.kind), '{}'), coalesce(array_agg(n.row_number), '{}'), coalesce(array_agg(n.date), '{}'),
                          coalesce(array_agg(n.amount), '{}'), coalesce(array_agg(n.paid), '{}'), coalesce(array_agg(n.waived), '{}'))
                    FROM (SELECT n.* FROM unnest((i.r).fee_id, (i.r).fee_kind, (i.r).fee_row, (i.r).fee_date, (i.r).fee_amount, (i.r).fee_paid, (i.r).fee_waived)
                                            AS n(id, kind, row_number, date, amount, paid, waived) ORDER BY n.id) n) AS differ
          OFFSET 0) ofe;

  -- Flatten (0016): plain arrays, so no write joins a row to its loan's whole ledger.
  SELECT array_agg(i.account_id), array_agg(i.loan_id), array_agg(i.new_status), array_agg(i.new_closed), array_agg(i.as_of),
         array_agg((i.r).next_row), array_agg((i.r).principal_outstanding), array_agg((i.r).interest_due), array_agg((i.r).fees_due),
         array_agg((i.r).credit_balance), array_agg((i.r).oldest_unpaid_due),
         -- #31: days past due as of ledger_as_of (R3), 0 for a loan not in servicing; the bucket follows (loanql_loan_bucket)
         array_agg(CASE WHEN i.new_status = 'servicing' THEN (i.r).days_past_due ELSE 0 END)
    INTO lo_account, lo_loan, lo_status, lo_closed, lo_as_of, lo_next, lo_principal, lo_interest, lo_fees, lo_credit, lo_oldest, lo_dpd
    FROM unnest(items) i;
  IF fees_differ THEN  -- 0026
  SELECT coalesce(array_agg(i.account_id), '{}'), coalesce(array_agg(i.loan_id), '{}'), coalesce(array_agg(u.id), '{}'),
         coalesce(array_agg(u.kind), '{}'), coalesce(array_agg(u.row_number), '{}'), coalesce(array_agg(u.date), '{}'),
         coalesce(array_agg(u.amount), '{}'), coalesce(array_agg(u.paid), '{}'), coalesce(array_agg(u.waived), '{}')
    INTO fe_account, fe_loan, fe_id, fe_kind, fe_row, fe_date, fe_amount, fe_paid, fe_waived
    FROM unnest(items) i,
         unnest((i.r).fee_id, (i.r).fee_kind, (i.r).fee_row, (i.r).fee_date, (i.r).fee_amount, (i.r).fee_paid, (i.r).fee_waived)
           AS u(id, kind, row_number, date, amount, paid, waived);
  END IF;

  -- Write (0016: each write one statement over the flattened arrays) ------------------------

  -- Allocation lines: each payment's stored lines are matched, in order, with its new lines (the
  -- k-th line of payment P with the new k-th line of P); a matched line that differs is updated in
  -- place, the others are deleted or inserted. A line keeps its payment and loan, so no foreign
  -- key is checked again: reversing an early payment moves every line but inserts none.
  IF lines_differ THEN
    SELECT coalesce(array_agg(i.account_id), '{}'), coalesce(array_agg(i.loan_id), '{}'), coalesce(array_agg(u2.position::integer), '{}'),
           coalesce(array_agg(u.payment_id), '{}'), coalesce(array_agg(u.row_number), '{}'), coalesce(array_agg(u.fee_id), '{}'),
           coalesce(array_agg(u.component), '{}'), coalesce(array_agg(u.amount), '{}')
      INTO ln_account, ln_loan, ln_position, ln_payment, ln_row, ln_fee, ln_component, ln_amount
      -- 0026: each loan's lines from its first difference on (items and cm_* are in the same order)
      FROM unnest(items) WITH ORDINALITY AS i(account_id, loan_id, new_status, new_closed, r, as_of, n)
      CROSS JOIN LATERAL unnest((i.r).line_payment[cm_line_from[i.n]:], (i.r).line_row[cm_line_from[i.n]:], (i.r).line_fee[cm_line_from[i.n]:],
                                (i.r).line_component[cm_line_from[i.n]:], (i.r).line_amount[cm_line_from[i.n]:])
             WITH ORDINALITY AS u(payment_id, row_number, fee_id, component, amount, k)
      CROSS JOIN LATERAL (SELECT u.k + cm_line_from[i.n] - 1 AS position) u2
     WHERE cm_line_from[i.n] > 0;

    -- 0024 (R10): which payments' component totals move (read before the lines are written), so
    -- only their distributions are split again: a payment posted at the end of a long history
    -- touches its own lines only. (0026: both sides from each loan's first difference on — the
    -- lines before it are equal — so a payment is a candidate only if a line of it moved;
    -- loanql_distribute_payments splits each candidate from its stored lines after the write.)
    SELECT coalesce(array_agg(d.account_id), '{}'), coalesce(array_agg(d.payment_id), '{}') INTO dp_account, dp_payment
      FROM (SELECT DISTINCT coalesce(n.account_id, o.account_id) AS account_id, coalesce(n.payment_id, o.payment_id) AS payment_id
              FROM (SELECT n.account_id, n.payment_id, n.component, sum(n.amount) AS amount
                      FROM unnest(ln_account, ln_payment, ln_component, ln_amount) AS n(account_id, payment_id, component, amount)
                     WHERE n.payment_id IS NOT NULL AND n.component IN ('principal', 'interest', 'fee')
                     GROUP BY 1, 2, 3) n
              FULL JOIN (
                    SELECT o.account_id, o.payment_id, o.component, sum(o.amount) AS amount
                      FROM unnest(cm_account, cm_loan, cm_line_from) AS l(account_id, loan_id, line_from)
                     CROSS JOIN LATERAL (
                           SELECT a.account_id, a.payment_id, a.component, a.amount FROM payment_allocations a
                            WHERE a.account_id = l.account_id AND a.loan_id = l.loan_id AND a.payment_id IS NOT NULL
                              AND a.position >= l.line_from
                              AND a.component IN ('principal', 'interest', 'fee') OFFSET 0) o
                     WHERE l.line_from > 0
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
           -- (0026: from the loan's first difference on, as the new lines; the lines before it are
           -- the same on both sides, so the k-th of a payment here is its k-th there)
           SELECT o.* FROM unnest(cm_account, cm_loan, cm_line_from) AS l(account_id, loan_id, line_from)
            CROSS JOIN LATERAL (
                  SELECT a.account_id, a.id, a.loan_id, a.position, a.row_number, a.fee_id, a.component, a.amount,
                         coalesce(a.payment_id, '00000000-0000-0000-0000-000000000000') AS payment_key,
                         row_number() OVER (PARTITION BY a.payment_id ORDER BY a.position) AS nth
                    FROM payment_allocations a WHERE a.account_id = l.account_id AND a.loan_id = l.loan_id AND a.position >= l.line_from) o
            WHERE l.line_from > 0),
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
      -- 0026: each loan's rows from its first difference on (in due order)
      FROM unnest(items) WITH ORDINALITY AS i(account_id, loan_id, new_status, new_closed, r, as_of, n)
      CROSS JOIN LATERAL unnest((i.r).row_number[cm_row_from[i.n]:], (i.r).row_interest[cm_row_from[i.n]:], (i.r).row_principal[cm_row_from[i.n]:],
                                (i.r).row_balance[cm_row_from[i.n]:], (i.r).row_interest_paid[cm_row_from[i.n]:], (i.r).row_principal_paid[cm_row_from[i.n]:])
             AS u(number, interest, principal, balance, interest_paid, principal_paid)
     WHERE cm_row_from[i.n] > 0;

    UPDATE schedules s SET is_next = false
      FROM unnest(lo_account, lo_loan, lo_status, lo_next) AS l(account_id, loan_id, status, next_row)
     WHERE s.account_id = l.account_id AND s.loan_id = l.loan_id AND s.is_next
       AND (l.status <> 'servicing' OR s.number IS DISTINCT FROM l.next_row);
    -- (each loan's rows read by its own index range, as the lines are; then only the rows that differ, by key)
    WITH changed AS (
           SELECT o.account_id, o.id, x.interest, x.principal, x.balance, x.interest_paid, x.principal_paid, x.is_next
             FROM unnest(cm_account, cm_loan, cm_row_from_due) AS l(account_id, loan_id, row_from_due)
            CROSS JOIN LATERAL (
                  SELECT s.account_id, s.id, s.loan_id, s.number, s.interest, s.principal, s.balance, s.interest_paid, s.principal_paid, s.is_next
                    FROM schedules s WHERE s.account_id = l.account_id AND s.loan_id = l.loan_id AND s.due >= l.row_from_due OFFSET 0) o
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
  IF fees_differ THEN  -- 0026
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
  END IF;

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
`;
