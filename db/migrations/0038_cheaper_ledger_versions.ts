/**
 * Issue 29 ("replaying a 30-year monthly loan with 360 payments costs under 5 ms of server time";
 * docs/ledger.md, "Migration 0038"): cheaper versions and a cheaper computation, the same results.
 *
 * - **A version without text, sort or md5.** 0032's and 0034's versions name each row a replay
 *   reads or writes by its row version (`ctid`, `xmin`); they made it text, sorted it by `ctid`
 *   and hashed the whole with md5 (9.2 M instructions for the bench loan's ~1,450 rows, twice per
 *   resumed write). Now each row is one 64-bit hash of its `ctid` seeded with its `xmin`
 *   (`hashtidextended`), and each table's rows are summed (exact `numeric`): a sum does not depend
 *   on the order the rows are read in, so nothing is sorted (4.8 M). Same rows named, same
 *   decisions (0032's "Row versions, not values"); a change goes unseen only if two sums of 64-bit
 *   hashes collide, a risk 0032 weighed against md5's 128 bits and this migration accepts.
 * - **`loanql_ledger_from`** (0034's text, marked `0038`): accrued(d) and its share of the payoff
 *   before a payment are computed only when money is left after what is due and the fees (R6 needs
 *   it; a payment that pays what is due, the usual one, never reaches the payoff); after the loop the
 *   rows due by the day are summed in a variable up to the first row after it, and the oldest unpaid
 *   row and days past due are looked for from `fo` (rows before it are paid in full).
 *
 * Stored versions of the old form are deleted (they would never match).
 */
import { sql as replayResumesAfterLastPayment } from './0034_replay_resumes_after_last_payment.js';
import { between, edited } from './textEdits.js';

export const name = '0038_cheaper_ledger_versions';

// 0034's loanql_ledger_from (0018's loanql_ledger made resumable): accrued(d) computed only when R6
// can apply, and its balances after the loop cheaper.
const ledgerFromText = between('0038', replayResumesAfterLastPayment, 'CREATE FUNCTION loanql_ledger_from(', '\nEND $$;');
const accruedStep = between('0038', 
  ledgerFromText,
  '    -- accrued(d) for row k (R2) and the payoff just before this payment (R5).\n',
  '    payoff_before := amount - prin_total + due_int + accrued - ahead + fees_open - credit;\n',
);
const accruedOnly = accruedStep.split('\n').slice(1, -2).join('\n');
const ledgerFrom = edited('0038', ledgerFromText, [
  [
    accruedStep,
    `    -- 0038: the payoff just before this payment (R5) but its accrued(d), which is added below
    -- only when R6 can apply: money left after what is due and the fees
    payoff_before := amount - prin_total + due_int - ahead + fees_open - credit;
`,
  ],
  [
    '    IF p.amount >= payoff_before AND rem > 0 THEN\n',
    `    -- 0038: accrued(d) for row k (R2), as before this payment's steps (1) and (2), which change
    -- nothing it reads (k, row k, the rows' balances and dates)
    IF rem > 0 THEN
${accruedOnly}
      payoff_before := payoff_before + accrued;
    END IF;
    IF p.amount >= payoff_before AND rem > 0 THEN
`,
  ],
  ['CREATE FUNCTION loanql_ledger_from(', 'CREATE OR REPLACE FUNCTION loanql_ledger_from('],
  ['  last_date date; last_posted timestamptz; last_id uuid;\nBEGIN', '  last_date date; last_posted timestamptz; last_id uuid;\n  interest_due_sum numeric := 0;  -- 0038\nBEGIN'],
  [
    `  k := n + 1;
  FOR i IN 1..n LOOP
    IF due[i] <= p_as_of THEN res.interest_due := res.interest_due + eint[i] - pint[i]; ELSIF k > n THEN k := i; END IF;
    IF res.oldest_unpaid_due IS NULL AND eint[i] - pint[i] + eprin[i] - pprin[i] > 0 THEN
      res.oldest_unpaid_due := due[i];
      res.next_row := nums[i];
    END IF;
  END LOOP;
`,
    `  k := n + 1;
  -- 0038: the rows are in due order, so the rows due by the day are a prefix (k: the first after
  -- it), summed in a variable (the same additions in the same order); the rows before fo are paid
  -- in full (nothing unpaid), so the oldest unpaid row is looked for from fo on
  FOR i IN 1..n LOOP
    IF due[i] > p_as_of THEN k := i; EXIT; END IF;
    interest_due_sum := interest_due_sum + eint[i] - pint[i];
  END LOOP;
  res.interest_due := interest_due_sum;
  FOR i IN fo..n LOOP
    IF eint[i] - pint[i] + eprin[i] - pprin[i] > 0 THEN
      res.oldest_unpaid_due := due[i];
      res.next_row := nums[i];
      EXIT;
    END IF;
  END LOOP;
`,
  ],
  [
    `  FOR i IN 1..n LOOP
    EXIT WHEN due[i] >= p_as_of;
    IF eint[i] - pint[i] + eprin[i] - pprin[i] > lo.arrears_tolerance`,
    `  FOR i IN fo..n LOOP  -- 0038: from fo (before it nothing is unpaid, and the tolerance is never negative)
    EXIT WHEN due[i] >= p_as_of;
    IF eint[i] - pint[i] + eprin[i] - pprin[i] > lo.arrears_tolerance`,
  ],
]);

/** One table's rows named by version: the sum of a 64-bit hash of each row's ctid seeded with its xmin. */
const named = (alias: string): string => `sum(hashtidextended(${alias}.ctid, ${alias}.xmin::text::bigint))`;

export const sql = /* sql */ `
-- 0032's version of a loan's rows (and the as-of day), each table's rows summed: no text, no sort, no md5.
CREATE OR REPLACE FUNCTION loanql_ledger_inputs_version(p_account uuid, p_loan uuid) RETURNS text
LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN (
    SELECT concat_ws('|',
             hashtidextended(l.ctid, l.xmin::text::bigint),
             loanql_stored_as_of(p_account, p_loan)::text,
             (SELECT ${named('pr')} FROM products pr
               WHERE pr.account_id = p_account AND (pr.id = l.product_id OR (l.product_id IS NULL AND pr.is_default))),
             (SELECT ${named('s')} FROM schedules s WHERE s.account_id = p_account AND s.loan_id = p_loan),
             (SELECT ${named('py')} FROM payments py WHERE py.account_id = p_account AND py.loan_id = p_loan),
             (SELECT ${named('f')} FROM fees f WHERE f.account_id = p_account AND f.loan_id = p_loan),
             (SELECT ${named('w')} FROM fee_waivers w WHERE w.account_id = p_account AND w.loan_id = p_loan),
             (SELECT ${named('a')} FROM payment_allocations a WHERE a.account_id = p_account AND a.loan_id = p_loan))
      FROM loans l WHERE l.account_id = p_account AND l.id = p_loan);
END $$;

-- 0034's version (no as-of day; no payment sorting after the state's last one), the same way.
CREATE OR REPLACE FUNCTION loanql_ledger_resume_version(p_account uuid, p_loan uuid, p_state loanql_ledger_state) RETURNS text
LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN (
    SELECT concat_ws('|',
             hashtidextended(l.ctid, l.xmin::text::bigint),
             (SELECT ${named('pr')} FROM products pr
               WHERE pr.account_id = p_account AND (pr.id = l.product_id OR (l.product_id IS NULL AND pr.is_default))),
             (SELECT ${named('s')} FROM schedules s WHERE s.account_id = p_account AND s.loan_id = p_loan),
             (SELECT ${named('py')} FROM payments py
               WHERE py.account_id = p_account AND py.loan_id = p_loan
                 AND (py.date, py.posted_at, py.id) <= (p_state.last_date, p_state.last_posted_at, p_state.last_id)),
             (SELECT ${named('f')} FROM fees f WHERE f.account_id = p_account AND f.loan_id = p_loan),
             (SELECT ${named('w')} FROM fee_waivers w WHERE w.account_id = p_account AND w.loan_id = p_loan),
             (SELECT ${named('a')} FROM payment_allocations a WHERE a.account_id = p_account AND a.loan_id = p_loan))
      FROM loans l WHERE l.account_id = p_account AND l.id = p_loan);
END $$;

TRUNCATE ledger_fingerprints, ledger_resume_states;

${ledgerFrom}


`;
