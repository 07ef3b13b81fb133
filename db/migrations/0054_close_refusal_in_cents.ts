/**
 * Closing a loan by hand while money is owed (R9, 0012's `loanql_loan_status_by_hand`) is refused
 * with every amount in cents ("principal 5000.00, interest 0.00, fees 0.00 (credit 5000.00)"; it
 * printed "interest 0, fees 0"), and a loan without a schedule is told what settles it: its
 * payments become credit and never pay it off (docs/ledger.md, "A loan without a schedule"), so
 * "it closes by itself when paid off" sent a clerk in circles — it now says to give the loan its
 * terms. Same rule, constraint name and column; `CREATE OR REPLACE` (the trigger is unchanged);
 * made from 0012's text (`textEdits.ts`).
 */
import { sql as servicingLedger } from './0012_servicing_ledger.js';
import { between, edited } from './textEdits.js';

export const name = '0054_close_refusal_in_cents';

export const sql = edited('0054', between('0054', servicingLedger, 'CREATE FUNCTION loanql_loan_status_by_hand()', '\nEND $$;'), [
  ['CREATE FUNCTION loanql_loan_status_by_hand()', 'CREATE OR REPLACE FUNCTION loanql_loan_status_by_hand()'],
  [
    `      RAISE EXCEPTION 'the loan still owes principal %, interest %, fees % (credit %): it closes by itself when paid off',
        r.principal_outstanding, r.interest_due, r.fees_due, r.credit_balance`,
    `      RAISE EXCEPTION 'the loan still owes principal %, interest %, fees % (credit %): %',
        round(r.principal_outstanding, 2), round(r.interest_due, 2), round(r.fees_due, 2), round(r.credit_balance, 2),
        CASE WHEN EXISTS (SELECT 1 FROM schedules s WHERE s.account_id = NEW.account_id AND s.loan_id = NEW.id)
          THEN 'it closes by itself when paid off'
          ELSE 'it has no schedule, so payments do not pay it off (they become credit): give it its terms (Term, Rate, Frequency) first' END`,
  ],
]);
