/**
 * A payment is taken only by a loan with a schedule (an open decision of session 31,
 * docs/ledger.md "A loan without a schedule").
 *
 * A loan with an `Amount` but no schedule (no `Term`, `Rate`, `Frequency` or start date, so no
 * rows) has nothing for a payment to pay: the ledger allocates interest and principal row by row
 * (SPEC §12), so every payment on it became credit, its principal stayed outstanding, and the
 * clerk saw "Payment posted." while nothing was paid. It is refused now, as a payment on a lead is
 * (0050): a `check_violation` naming `loan_id` (a 400 over REST and GraphQL), with the sentence
 * saying what to do, and nothing written. As in Apache Fineract, where repayments are taken only
 * by a loan disbursed with its schedule. Still taken on such a loan: a `refund` (it pays back
 * credit the loan holds from before) and a `fee` payment (it pays a manual fee, which needs no
 * row). A loan whose terms are cleared after payments keeps them (they become credit until it has
 * terms again, as before).
 *
 * Closing such a loan by hand while its principal is owed stays refused (0054); its sentence no
 * longer says payments "become credit" (they are refused), only what to do.
 *
 * `CREATE OR REPLACE` of 0050's `loanql_payment_rules` and 0054's `loanql_loan_status_by_hand`
 * (the triggers are unchanged), made from their text (`textEdits.ts`).
 */
import { sql as paymentRules } from './0050_payment_dates_and_leads.js';
import { sql as closeRefusal } from './0054_close_refusal_in_cents.js';
import { between, edited } from './textEdits.js';

export const name = '0061_payment_needs_schedule';

const takesPayments = edited('0061', between('0061', paymentRules, 'CREATE FUNCTION loanql_payment_rules()', '\nEND $$;'), [
  ['CREATE FUNCTION loanql_payment_rules()', 'CREATE OR REPLACE FUNCTION loanql_payment_rules()'],
  [
    `        USING ERRCODE = 'check_violation', CONSTRAINT = 'payments_loan_funded', TABLE = 'payments', COLUMN = 'loan_id';
    END IF;`,
    `        USING ERRCODE = 'check_violation', CONSTRAINT = 'payments_loan_funded', TABLE = 'payments', COLUMN = 'loan_id';
    END IF;
    IF loan_status IS NOT NULL AND NEW.type NOT IN ('refund', 'fee')
       AND NOT EXISTS (SELECT 1 FROM schedules s WHERE s.account_id = NEW.account_id AND s.loan_id = NEW.loan_id) THEN
      RAISE EXCEPTION 'the loan has no schedule, so a payment would pay nothing (it would become credit): give it its terms (Amount, Rate, Term, Frequency, and First_Payment_Date or Date_Funded) first'
        USING ERRCODE = 'check_violation', CONSTRAINT = 'payments_loan_scheduled', TABLE = 'payments', COLUMN = 'loan_id';
    END IF;`,
  ],
]);

const closeByHand = edited('0061', closeRefusal, [
  [
    `'it has no schedule, so payments do not pay it off (they become credit): give it its terms (Term, Rate, Frequency) first'`,
    `'it has no schedule, so it takes no payment: give it its terms (Term, Rate, Frequency) first'`,
  ],
]);

export const sql = `${takesPayments}\n${closeByHand}`;
