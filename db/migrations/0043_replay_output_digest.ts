/**
 * Issue 29 ("replaying a 30-year monthly loan with 360 payments costs under 5 ms of server time";
 * docs/ledger.md, "Migration 0043"): a full replay whose result is what the loan's last full replay
 * stored reads one row, not the ~1,100 stored lines and rows.
 *
 * - **The output digest.** `loanql_ledger_output_digest` is 64-bit hashes (`hash_array_extended`,
 *   element by element, order-sensitive) of everything a full replay writes: the lines (by position),
 *   the rows (in due order), the next row, the fees (in the replay's order), the loan's balances,
 *   status, `date_closed`, `ledger_as_of` and days past due. A full replay of a write's few loans
 *   (≤ 10, those that store a resume state) stores it beside the state
 *   (`ledger_resume_states.output_digest`), taken from its own result: after its writes the stored rows equal that result.
 * - **When it is trusted.** Before Compare, when every loan of the call has a stored digest equal to
 *   the new result's, a stored state equal to the new one, and a version (0034's
 *   `loanql_ledger_resume_version`: the physical identity of every row of the loan a replay reads or
 *   writes, the payments after the state's key left out — none here, the states being equal) equal
 *   to the one stored with them, no stored row has changed since that replay wrote them, so they are
 *   the new result: nothing is read, written or stored again (the state row and its version already
 *   say so). Any other case — a row written since, by a replay or by hand; no digest; a new
 *   result — runs Compare and the writes as before, and stores the new digest.
 * - A resumed replay (0034) writes part of the result only, so it clears the digest (the next full
 *   replay compares in full and stores it again).
 * - **A resumed replay's version after its writes** is its version before (checked by parts,
 *   `loanql_ledger_resume_version_parts`: the same text as 0038's function) with the parts its writes
 *   change (`loanql_ledger_resume_version_after`: each part is a sum, so it moves by the versions of
 *   the rows written — the loan, the rows it may update, the payments up to the new key, the lines it
 *   appends, the fees when it wrote them), not every row of the loan read again.
 * - `ledger verify` still reads and compares the stored lines, rows, fees and loans (never the
 *   digest); `ledger rebuild` deletes the states, digests with them.
 *
 * What a replay computes and writes is unchanged; the stored versions and states stay valid (a
 * state from before 0043 has no digest: its loan's next full replay compares in full).
 */
import { sql as replayResumesAfterLastPayment } from './0034_replay_resumes_after_last_payment.js';
import { sql as leanerFullReplay } from './0042_leaner_full_replay.js';
import { between, edited } from './textEdits.js';

export const name = '0043_replay_output_digest';

const replayInFull = edited('0043', between('0043', leanerFullReplay, 'CREATE OR REPLACE FUNCTION loanql_replay_loans_in_full(', '\nEND $$;'), [
  [
    '  IF items IS NULL THEN RETURN; END IF;\n',
    `  IF items IS NULL THEN RETURN; END IF;

  -- 0043: every loan's result is what its last full replay stored (its digest), from the same
  -- state, and no row of the loan was written since (the version stored with them): the stored
  -- rows are the result; nothing to read, write or store. (CASE: each test only when the one
  -- before it passed; the version, the costly one, last.)
  IF cardinality(items) <= 10 AND NOT EXISTS (
       SELECT 1 FROM unnest(items) i
         LEFT JOIN ledger_resume_states s ON s.account_id = i.account_id AND s.id = i.loan_id
        WHERE CASE WHEN s.output_digest IS NULL THEN true
                   WHEN s.output_digest <> loanql_ledger_output_digest(i.new_status, i.new_closed, i.as_of, i.r) THEN true
                   WHEN s.state IS DISTINCT FROM (i.r).state THEN true
                   ELSE s.version IS DISTINCT FROM loanql_ledger_resume_version(i.account_id, i.loan_id, s.state)
              END) THEN
    RETURN;
  END IF;
`,
  ],
  [
    `    INSERT INTO ledger_resume_states (account_id, id, version, lines, fees, state)
    SELECT i.account_id, i.loan_id, loanql_ledger_resume_version(i.account_id, i.loan_id, (i.r).state),
           cardinality((i.r).line_payment), cardinality((i.r).fee_id), (i.r).state
      FROM unnest(items) i
    ON CONFLICT (account_id, id) DO UPDATE SET version = excluded.version, lines = excluded.lines, fees = excluded.fees, state = excluded.state;`,
    `    -- 0043: and the digest of the result, which the stored rows now are
    INSERT INTO ledger_resume_states (account_id, id, version, lines, fees, state, output_digest)
    SELECT i.account_id, i.loan_id, loanql_ledger_resume_version(i.account_id, i.loan_id, (i.r).state),
           cardinality((i.r).line_payment), cardinality((i.r).fee_id), (i.r).state,
           loanql_ledger_output_digest(i.new_status, i.new_closed, i.as_of, i.r)
      FROM unnest(items) i
    ON CONFLICT (account_id, id) DO UPDATE SET version = excluded.version, lines = excluded.lines, fees = excluded.fees, state = excluded.state,
                                               output_digest = excluded.output_digest;`,
  ],
]);

const replayResume = edited('0043', between('0043', replayResumesAfterLastPayment, 'CREATE FUNCTION loanql_replay_resume(', '\nEND $$;'), [
  ['CREATE FUNCTION loanql_replay_resume(', 'CREATE OR REPLACE FUNCTION loanql_replay_resume('],
  ['  as_of date;\n', '  as_of date;\n  v numeric[]; rows_written integer[]; rows_before numeric;  -- 0043\n'],
  // the version before, by parts (the same text as 0038's function)
  [
    '  IF saved.version IS DISTINCT FROM loanql_ledger_resume_version(p_account, p_loan, saved.state) THEN RETURN false; END IF;\n',
    `  -- 0043: by parts, so the version after the writes is this one with the parts they change
  v := loanql_ledger_resume_version_parts(p_account, p_loan, saved.state);
  IF saved.version IS DISTINCT FROM concat_ws('|', VARIADIC v) THEN RETURN false; END IF;
`,
  ],
  // the rows the two updates below may write, and their versions before
  [
    '  -- Rows: those the new lines pay, and the next row (cleared first where it moves, as 0026 does).\n',
    `  -- 0043: the rows the two updates below may write (the stored next row, the rows paid, the new next
  -- row), by number, and the sum of their versions before
  SELECT coalesce(array_agg(s.number), '{}'), sum(hashtidextended(s.ctid, s.xmin::text::bigint)) INTO rows_written, rows_before
    FROM schedules s
   WHERE s.account_id = p_account AND s.loan_id = p_loan AND (s.is_next OR s.number = ANY (paid_rows) OR s.number = r.next_row);
  -- Rows: those the new lines pay, and the next row (cleared first where it moves, as 0026 does).
`,
  ],
  [
    '         version = loanql_ledger_resume_version(p_account, p_loan, r.state)\n',
    `         -- 0043: the version before with the parts the writes changed (sums: less the rows' versions
         -- before, plus after), not every row read again; equal to loanql_ledger_resume_version
         version = concat_ws('|', VARIADIC loanql_ledger_resume_version_after(p_account, p_loan, saved.state, r.state, v, rows_written, rows_before,
                                                                              saved.lines, saved.fees > 0 OR cardinality(r.fee_id) > 0)),
         output_digest = NULL  -- 0043: part of the result written; the next full replay compares in full
`,
  ],
]);

export const sql = /* sql */ `
-- the digest of the result of the full replay that stored the row (null: none, or a resumed replay since)
ALTER TABLE ledger_resume_states ADD COLUMN output_digest text;

-- Everything a full replay writes, as hashes: lines by position, rows in due order, the next row,
-- fees in the replay's order, the loan's stored values (days past due as stored: 0 unless in servicing).
CREATE FUNCTION loanql_ledger_output_digest(p_status text, p_closed date, p_as_of date, r loanql_ledger_result) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  -- (format: a null is an empty field, so every value keeps its place; concat_ws would skip it)
  SELECT format(repeat('%s|', 31),
                p_status, p_closed, p_as_of, CASE WHEN p_status = 'servicing' THEN r.next_row END,
                r.principal_outstanding, r.interest_due, r.fees_due, r.credit_balance, r.oldest_unpaid_due,
                CASE WHEN p_status = 'servicing' THEN r.days_past_due ELSE 0 END,
                cardinality(r.line_payment), cardinality(r.row_number), cardinality(r.fee_id),
                hash_array_extended(r.line_payment, 0), hash_array_extended(r.line_row, 0), hash_array_extended(r.line_fee, 0),
                hash_array_extended(r.line_component, 0), hash_array_extended(r.line_amount, 0),
                hash_array_extended(r.row_number, 0), hash_array_extended(r.row_interest, 0), hash_array_extended(r.row_principal, 0),
                hash_array_extended(r.row_balance, 0), hash_array_extended(r.row_interest_paid, 0), hash_array_extended(r.row_principal_paid, 0),
                hash_array_extended(r.fee_id, 0), hash_array_extended(r.fee_kind, 0), hash_array_extended(r.fee_row, 0),
                hash_array_extended(r.fee_date, 0), hash_array_extended(r.fee_amount, 0), hash_array_extended(r.fee_paid, 0),
                hash_array_extended(r.fee_waived, 0))
$$;

-- 0038's loanql_ledger_resume_version by parts (null where a part is null, as concat_ws skips it):
-- the loan, its product, rows, payments up to the state's key, fees, waivers, lines.
CREATE FUNCTION loanql_ledger_resume_version_parts(p_account uuid, p_loan uuid, p_state loanql_ledger_state) RETURNS numeric[]
LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN (
    SELECT ARRAY[hashtidextended(l.ctid, l.xmin::text::bigint)::numeric,
             (SELECT sum(hashtidextended(pr.ctid, pr.xmin::text::bigint)) FROM products pr
               WHERE pr.account_id = p_account AND (pr.id = l.product_id OR (l.product_id IS NULL AND pr.is_default))),
             (SELECT sum(hashtidextended(s.ctid, s.xmin::text::bigint)) FROM schedules s WHERE s.account_id = p_account AND s.loan_id = p_loan),
             (SELECT sum(hashtidextended(py.ctid, py.xmin::text::bigint)) FROM payments py
               WHERE py.account_id = p_account AND py.loan_id = p_loan
                 AND (py.date, py.posted_at, py.id) <= (p_state.last_date, p_state.last_posted_at, p_state.last_id)),
             (SELECT sum(hashtidextended(f.ctid, f.xmin::text::bigint)) FROM fees f WHERE f.account_id = p_account AND f.loan_id = p_loan),
             (SELECT sum(hashtidextended(w.ctid, w.xmin::text::bigint)) FROM fee_waivers w WHERE w.account_id = p_account AND w.loan_id = p_loan),
             (SELECT sum(hashtidextended(a.ctid, a.xmin::text::bigint)) FROM payment_allocations a WHERE a.account_id = p_account AND a.loan_id = p_loan)]
      FROM loans l WHERE l.account_id = p_account AND l.id = p_loan);
END $$;

-- The parts after a resumed replay's writes, from \`p_before\` (the parts before them): the loan read
-- again; the rows less the versions before (\`p_rows_before\`) of the rows \`p_rows\` it may have
-- written, plus their versions now; the payments after the old state's key up to the new one added;
-- the lines past the \`p_lines\` stored before added (it only appends lines); the fees read again
-- when it wrote them (\`p_fees\`); the product and the waivers as they were (it writes neither).
CREATE FUNCTION loanql_ledger_resume_version_after(p_account uuid, p_loan uuid, p_old loanql_ledger_state, p_new loanql_ledger_state,
                                                   p_before numeric[], p_rows integer[], p_rows_before numeric, p_lines integer, p_fees boolean)
RETURNS numeric[] LANGUAGE plpgsql STABLE AS $$
DECLARE
  added numeric;
  v numeric[] := p_before;
BEGIN
  v[1] := (SELECT hashtidextended(l.ctid, l.xmin::text::bigint) FROM loans l WHERE l.account_id = p_account AND l.id = p_loan);
  IF cardinality(p_rows) > 0 THEN
    added := (SELECT sum(hashtidextended(s.ctid, s.xmin::text::bigint)) FROM schedules s
               WHERE s.account_id = p_account AND s.loan_id = p_loan AND s.number = ANY (p_rows));
    v[3] := v[3] - coalesce(p_rows_before, 0) + coalesce(added, 0);
  END IF;
  IF p_new.last_id IS NULL THEN
    v[4] := NULL;
  ELSE
    added := (SELECT sum(hashtidextended(py.ctid, py.xmin::text::bigint)) FROM payments py
               WHERE py.account_id = p_account AND py.loan_id = p_loan
                 AND (py.date, py.posted_at, py.id) <= (p_new.last_date, p_new.last_posted_at, p_new.last_id)
                 AND (p_old.last_id IS NULL OR (py.date, py.posted_at, py.id) > (p_old.last_date, p_old.last_posted_at, p_old.last_id)));
    IF added IS NOT NULL THEN v[4] := coalesce(v[4], 0) + added; END IF;
  END IF;
  IF p_fees THEN
    v[5] := (SELECT sum(hashtidextended(f.ctid, f.xmin::text::bigint)) FROM fees f WHERE f.account_id = p_account AND f.loan_id = p_loan);
  END IF;
  added := (SELECT sum(hashtidextended(a.ctid, a.xmin::text::bigint)) FROM payment_allocations a
             WHERE a.account_id = p_account AND a.loan_id = p_loan AND a.position > p_lines);
  IF added IS NOT NULL THEN v[7] := coalesce(v[7], 0) + added; END IF;
  RETURN v;
END $$;

${replayInFull}

${replayResume}
`;
