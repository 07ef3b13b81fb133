/**
 * SPEC §12 R9: a loan is `closed` when principal, interest, fees **and credit** are all 0.00.
 * Credit goes below zero when a reversal leaves a refund larger than the credit it paid back —
 * the borrower owes it back and the payoff counts it (docs/ledger.md) — and such a loan stayed
 * `closed` (or `overpaid`) with a payoff above zero: `loanql_ledger_status` took "every row paid,
 * no fee open" for settled whatever the credit. Now a negative credit keeps the loan in (or puts
 * it back into) `servicing`, as a reversal that reopens any other balance does; paying the
 * amount back settles it again. `CREATE OR REPLACE`: same arguments, same callers.
 *
 * Loans already left closed or overpaid with a negative credit are replayed in full here (their
 * skip and resume states forgotten first, as `loanql ledger rebuild` does), which stores the
 * status the rule gives them.
 */
export const name = '0048_owed_credit_reopens';

export const sql = /* sql */ `
CREATE OR REPLACE FUNCTION loanql_ledger_status(status text, date_closed date, settled boolean, credit numeric, settled_on date,
                                                OUT new_status text, OUT new_closed date)
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN status IN ('servicing', 'closed', 'overpaid') AND settled AND credit >= 0 THEN CASE WHEN credit > 0 THEN 'overpaid' ELSE 'closed' END
              WHEN status = 'overpaid' OR (status = 'closed' AND date_closed IS NOT NULL) THEN 'servicing'
              ELSE status END,
         CASE WHEN status IN ('servicing', 'closed', 'overpaid') AND settled AND credit >= 0 THEN settled_on
              WHEN status = 'overpaid' OR (status = 'closed' AND date_closed IS NOT NULL) THEN NULL
              ELSE date_closed END
$$;

DELETE FROM ledger_fingerprints f USING loans l
 WHERE l.status IN ('closed', 'overpaid') AND l.credit_balance < 0 AND f.account_id = l.account_id AND f.id = l.id;
DELETE FROM ledger_resume_states s USING loans l
 WHERE l.status IN ('closed', 'overpaid') AND l.credit_balance < 0 AND s.account_id = l.account_id AND s.id = l.id;
SELECT loanql_refresh_next(array_agg(account_id), array_agg(id))
  FROM loans WHERE status IN ('closed', 'overpaid') AND credit_balance < 0 HAVING count(*) > 0;
`;
