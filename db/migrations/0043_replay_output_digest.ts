/**
 * Issue 29 ("replaying a 30-year monthly loan with 360 payments costs under 5 ms of server time";
 * docs/ledger.md, "Migration 0043"): a full replay whose result is what the loan's last full replay
 * stored reads one row, not the ~1,100 stored lines and rows.
 *
 * - **The output digest.** `loanql_ledger_output_digest` is 64-bit hashes (`hash_array_extended`,
 *   element by element, order-sensitive) of everything a full replay writes: the lines (by position),
 *   the rows (in due order), the next row, the fees (in the replay's order), the loan's balances,
 *   status, `date_closed`, `ledger_as_of` and days past due. A full replay of a write's few loans
 *   (≤ 10, those that store a resume state) stores it beside the state (`ledger_resume_states.
 *   output_digest`), taken from its own result: after its writes the stored rows equal that result.
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
  [
    '         version = loanql_ledger_resume_version(p_account, p_loan, r.state)\n',
    `         version = loanql_ledger_resume_version(p_account, p_loan, r.state),
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

${replayInFull}

${replayResume}
`;
