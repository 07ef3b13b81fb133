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
 * status the rule gives them. The function is made from 0012's text (`textEdits.ts`).
 */
import { sql as servicingLedger } from './0012_servicing_ledger.js';
import { between, edited } from './textEdits.js';

export const name = '0048_owed_credit_reopens';

const ledgerStatus = edited('0048', between('0048', servicingLedger, 'CREATE FUNCTION loanql_ledger_status(', '\n$$;'), [
  ['CREATE FUNCTION loanql_ledger_status(', 'CREATE OR REPLACE FUNCTION loanql_ledger_status('],
  ["AND settled THEN CASE WHEN credit > 0", "AND settled AND credit >= 0 THEN CASE WHEN credit > 0"],
  ['AND settled THEN settled_on', 'AND settled AND credit >= 0 THEN settled_on'],
]);

export const sql = /* sql */ `
${ledgerStatus}

DELETE FROM ledger_fingerprints f USING loans l
 WHERE l.status IN ('closed', 'overpaid') AND l.credit_balance < 0 AND f.account_id = l.account_id AND f.id = l.id;
DELETE FROM ledger_resume_states s USING loans l
 WHERE l.status IN ('closed', 'overpaid') AND l.credit_balance < 0 AND s.account_id = l.account_id AND s.id = l.id;
SELECT loanql_refresh_next(array_agg(account_id), array_agg(id))
  FROM loans WHERE status IN ('closed', 'overpaid') AND credit_balance < 0 HAVING count(*) > 0;
`;
