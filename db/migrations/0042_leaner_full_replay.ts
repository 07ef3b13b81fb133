/**
 * Issue 29 ("replaying a 30-year monthly loan with 360 payments costs under 5 ms of server time";
 * docs/ledger.md, "Migration 0042"): a full replay from scratch that finds nothing to write, cheaper;
 * the same results, the same writes.
 *
 * - **`loanql_ledger_from`** (0038's text, marked `0042`): fewer PL/pgSQL statements per payment.
 *   The last applied payment's key and `any_payment` are read only at the as-of step, so they come
 *   from the loop's query (`lag` over the same order) instead of four assignments per payment; the
 *   payoff before a payment (R5) is computed only when money is left after what is due and the fees
 *   — the only time R6 reads it — as the payoff now plus what the fee step, (1) and (2) took (each
 *   step lowers the payoff by what it takes); and a payment with nothing left after them skips R6,
 *   R7, step (3) and step (4) at once (each tested `rem > 0`); `fo` passes rows paid in full once
 *   before the payments (only a payment's steps pay rows, and the end of each passes those it paid);
 *   a loan without fees skips the three fee steps of each day with one test; and the rows are read
 *   without the join to their late fees when the loan has none (a probe of `fees` per row); a line's
 *   fee is set on fee lines only (`l_fee` made 1..nl once at the end).
 * - **`loanql_replay_loans_in_full`** (0034's text, marked `0042`): Compare checks first whether a
 *   loan's stored lines equal the new ones whole (positions 1..n), before the slices that find the
 *   first difference; and the rows' `is_next` is compared as the position of the stored next row
 *   (`array_positions`, at most one: `schedules_one_next`) instead of building the whole array, which
 *   is built only when the rows differ; the LATERAL that compares the rows is fenced (`OFFSET 0`),
 *   so its CASE runs once, not once per reference of `row_from` (twice).
 *
 * What a replay computes from the same rows is unchanged, so stored versions and states stay valid.
 */
import { sql as replayResumesAfterLastPayment } from './0034_replay_resumes_after_last_payment.js';
import { sql as cheaperLedgerVersions } from './0038_cheaper_ledger_versions.js';
import { between, edited } from './textEdits.js';

export const name = '0042_leaner_full_replay';

const ledgerFromText = between('0042', cheaperLedgerVersions, 'CREATE OR REPLACE FUNCTION loanql_ledger_from(', '\nEND $$;');

/**
 * One of 0034's reads of the rows (with each row's stored late fee, by a LEFT JOIN probing `fees` once
 * per row) run only when the loan has a late fee; otherwise the same read without the join (the rows'
 * late fees are then none: `ex_id_at` and `ex_waive_at` empty, which reads as null for every row).
 */
function lateFeesOnlyWhenAny(text: string, start: string, indent: string): readonly [string, string] {
  const read = between('0042', text, start, ' OFFSET 0) s;\n');
  const withoutJoin = edited('0042', read, [
    ["coalesce(array_agg(s.late_id), '{}'), coalesce(array_agg(s.late_waived_on), '{}')", ''],
    [', ex_id_at, ex_waive_at', ''],
    [' AS late_id, lf.waived_on AS late_waived_on', ''],
  ])
    .replace(/\n *LEFT JOIN fees lf ON [^\n]*/, '')
    // the columns and aggregates left dangling by the cuts above
    .replace(/,\s*lf\.id\n/, '\n')
    .replace(/,\s*(?:-- 0016:[^\n]*\n\s*)?\n(\s*INTO)/, '\n$1');
  return [
    read,
    `${indent}-- 0042: the join with the rows' late fees only when the loan has one (a probe per row otherwise)
${indent}IF EXISTS (SELECT 1 FROM fees lf WHERE lf.account_id = p_account AND lf.loan_id = p_loan AND lf.kind = 'late') THEN
${read}${indent}ELSE
${indent}ex_id_at := '{}'; ex_waive_at := '{}';
${withoutJoin}${indent}END IF;
`,
  ];
}

const ledgerFromEdited = edited('0042', ledgerFromText, [
  lateFeesOnlyWhenAny(ledgerFromText, "    SELECT coalesce(array_agg(s.number), '{}'), coalesce(array_agg(s.due), '{}'), coalesce(array_agg(s.interest), '{}'),", '    '),
  lateFeesOnlyWhenAny(ledgerFromText, "  SELECT coalesce(array_agg(s.number), '{}'), coalesce(array_agg(s.due), '{}'), coalesce(array_agg(s.scheduled_interest), '{}'),", '  '),
  // rows paid in full before the first payment passed once; after that only a payment's steps pay rows, and
  // the end of each payment passes the rows it paid in full (the fee and as-of steps, and refunds, pay none)
  [
    '\n  -- The payments in replay order, then the as-of day itself (id null): fees and waivers up to it.\n',
    `
  -- 0042: fo past the rows paid in full (rows asking nothing) once, here, instead of before each payment
  WHILE fo <= n AND eint[fo] = pint[fo] AND eprin[fo] = pprin[fo] LOOP fo := fo + 1; END LOOP;

  -- The payments in replay order, then the as-of day itself (id null): fees and waivers up to it.
`,
  ],
  [
    `      k := k + 1;
    END LOOP;
    WHILE fo <= n AND eint[fo] = pint[fo] AND eprin[fo] = pprin[fo] LOOP fo := fo + 1; END LOOP;
`,
    `      k := k + 1;
    END LOOP;
`,
  ],
  // a loan without fees: the three fee steps of each day at once
  [
    '    WHILE fa <= nf AND fdate[fa] <= p.date LOOP\n',
    '    IF nf > 0 THEN  -- 0042: a loan without fees skips the three fee steps at once\n    WHILE fa <= nf AND fdate[fa] <= p.date LOOP\n',
  ],
  [
    '    WHILE ffo < fa AND famt[ffo] - fpaid[ffo] - fwaived[ffo] = 0 LOOP ffo := ffo + 1; END LOOP;\n',
    '    WHILE ffo < fa AND famt[ffo] - fpaid[ffo] - fwaived[ffo] = 0 LOOP ffo := ffo + 1; END LOOP;\n    END IF;  -- 0042: nf > 0\n',
  ],
  // the loop's query: each row carries the key of the payment before it (the as-of row: the last one)
  [
    '    SELECT e.id, e.date, e.amount, e.type, e.posted_at FROM (',
    `    -- 0042: each row with the key of the row before it (the as-of row's: the last payment applied)
    SELECT e.id, e.date, e.amount, e.type, e.posted_at,
           lag(e.date) OVER w AS prev_date, lag(e.posted_at) OVER w AS prev_posted_at, lag(e.id) OVER w AS prev_id FROM (`,
  ],
  ['     ORDER BY e.date, e.last, e.posted_at, e.id\n', '     WINDOW w AS (ORDER BY e.date, e.last, e.posted_at, e.id)\n     ORDER BY e.date, e.last, e.posted_at, e.id\n'],
  [
    '    IF p.id IS NULL THEN\n      res.state := ROW(',
    `    IF p.id IS NULL THEN
      -- 0042: the last payment applied (none here: the state's, or none), read once instead of set by each
      IF p.prev_id IS NOT NULL THEN
        last_date := p.prev_date; last_posted := p.prev_posted_at; last_id := p.prev_id; any_payment := true;
      END IF;
      res.state := ROW(`,
  ],
  ['    any_payment := true;\n    last_date := p.date; last_posted := p.posted_at; last_id := p.id;  -- 0034\n', ''],
  // the payoff before the payment only when R6 can apply
  [
    `    -- 0038: the payoff just before this payment (R5) but its accrued(d), which is added below
    -- only when R6 can apply: money left after what is due and the fees
    payoff_before := amount - prin_total + due_int - ahead + fees_open - credit;
`,
    '',
  ],
  [
    '    IF rem > 0 THEN\n    accrued := 0;\n',
    `    -- 0042: nothing left after what is due and the fees (the usual payment): R6, R7, (3) and (4)
    -- all need money left, so they are skipped at once
    IF rem > 0 THEN
    accrued := 0;
`,
  ],
  [
    '      payoff_before := payoff_before + accrued;\n    END IF;\n    IF p.amount >= payoff_before AND rem > 0 THEN\n',
    `    -- 0042: the payoff just before this payment (R5): the payoff now plus what the fee step, (1)
    -- and (2) took (each lowered it by what it took: p.amount - rem), with accrued(d)
    payoff_before := amount - prin_total + due_int - ahead + fees_open - credit + (p.amount - rem) + accrued;
    IF p.amount >= payoff_before AND rem > 0 THEN
`,
  ],
  [
    `      nl := nl + 1; l_pay[nl] := p.id; l_row[nl] := NULL; l_fee[nl] := NULL; l_comp[nl] := 'credit'; l_amt[nl] := rem;
    END IF;
`,
    `      nl := nl + 1; l_pay[nl] := p.id; l_row[nl] := NULL; l_fee[nl] := NULL; l_comp[nl] := 'credit'; l_amt[nl] := rem;
    END IF;
    END IF;  -- 0042: rem > 0
`,
  ],
]);

/** `text` with every `from` removed; `count` of them expected. */
function withoutEvery(text: string, from: string, count: number): string {
  const parts = text.split(from);
  if (parts.length - 1 !== count) throw new Error(`0042: expected ${count} of ${JSON.stringify(from)}, found ${parts.length - 1}`);
  return parts.join('');
}

// A line's fee is set only on a fee line: an array element assignment is ~860 instructions, and most
// lines (interest, principal, credit) have none. An element past either end of l_fee reads as null;
// the array is made 1..nl once, before it is returned.
const ledgerFrom = edited('0042', withoutEvery(ledgerFromEdited, 'l_fee[nl] := NULL; ', 13), [
  [
    '  res.line_payment := l_pay; res.line_row := l_row; res.line_fee := l_fee;',
    `  -- 0042: l_fee is set on fee lines only (an element past either end reads null): made 1..nl here
  IF nl > 0 THEN l_fee[1] := l_fee[1]; l_fee[nl] := l_fee[nl]; END IF;
  res.line_payment := l_pay; res.line_row := l_row; res.line_fee := l_fee;`,
  ],
]);

const replayInFull = edited('0042', between('0042', replayResumesAfterLastPayment, 'CREATE OR REPLACE FUNCTION loanql_replay_loans_in_full(', '\nEND $$;'), [
  // lines: equal whole first
  [
    '          SELECT CASE WHEN (coalesce(a.pos[1:c.l], \'{}\')',
    `          SELECT CASE -- 0042: equal whole (the usual replay), before the slices that find where they differ
                      WHEN c.n_old = c.n_new
                           AND (coalesce(a.pay, '{}'), coalesce(a.amt, '{}'), coalesce(a.comp, '{}'), coalesce(a.rw, '{}'), coalesce(a.fee, '{}'), coalesce(a.pos, '{}'))
                               IS NOT DISTINCT FROM ((i.r).line_payment, (i.r).line_amount, (i.r).line_component, (i.r).line_row, (i.r).line_fee,
                                                     ARRAY(SELECT generate_series(1, c.n_new)))
                        THEN NULL
                      WHEN (coalesce(a.pos[1:c.l], '{}')`,
  ],
  // rows: is_next as the stored next row's position; the whole array only when the rows differ
  [
    `    CROSS JOIN LATERAL (
          SELECT ARRAY(SELECT i.new_status = 'servicing' AND u.number IS NOT DISTINCT FROM (i.r).next_row
                         FROM unnest((i.r).row_number) WITH ORDINALITY AS u(number, k) ORDER BY u.k) AS is_next OFFSET 0) nx
`,
    '',
  ],
  [
    `                                    coalesce(s.ppaid, '{}'), coalesce(s.nxt, '{}'))
                                   IS NOT DISTINCT FROM ((i.r).row_number, (i.r).row_interest, (i.r).row_principal, (i.r).row_balance, (i.r).row_interest_paid,
                                                         (i.r).row_principal_paid, nx.is_next)
                                THEN NULL`,
    `                                    coalesce(s.ppaid, '{}'))
                                   IS NOT DISTINCT FROM ((i.r).row_number, (i.r).row_interest, (i.r).row_principal, (i.r).row_balance, (i.r).row_interest_paid,
                                                         (i.r).row_principal_paid)
                                   -- 0042: the next row where it should be (is_next is never null, true at most once)
                                   AND coalesce(array_positions(s.nxt, true), '{}')
                                       = CASE WHEN i.new_status = 'servicing' THEN array_positions((i.r).row_number, (i.r).next_row) ELSE '{}' END
                                THEN NULL`,
  ],
  [
    "                         END AS row_from) d\n",
    // 0042: fenced, as the other LATERALs (pulled up, the CASE above ran once per reference of row_from: twice)
    "                         END AS row_from OFFSET 0) d\n",
  ],
  [
    '                                                         nx.is_next[1:c.c - 1])',
    `                                                         -- 0042: (the new is_next array, built only here)
                                                         (ARRAY(SELECT i.new_status = 'servicing' AND u.number IS NOT DISTINCT FROM (i.r).next_row
                                                                  FROM unnest((i.r).row_number) WITH ORDINALITY AS u(number, k) ORDER BY u.k))[1:c.c - 1])`,
  ],
]);

export const sql = /* sql */ `
${ledgerFrom}

${replayInFull}
`;
