/**
 * Closing a loan by hand and its credit (R9, a loan-lifecycle audit, session 39).
 *
 * - A loan owing credit back (a negative `credit_balance`: a refund paid out, then the payment it
 *   refunded reversed; docs/ledger.md, "Refunds") was let through `loanql_loan_status_by_hand`,
 *   which refused only a positive credit; the replay then put it back in `servicing` (0048), so
 *   `PATCH {"Status": "closed"}` answered 200 with the loan still in servicing. It is now refused,
 *   like any other money owed, naming Status.
 * - An `overpaid` loan (nothing owed, credit held) was told "the loan still owes principal 0.00,
 *   interest 0.00, fees 0.00 (credit 50.00): it closes by itself when paid off" — it owes nothing,
 *   and no payment closes it. It is now told what does: a refund of the credit.
 *
 * - A paid-off loan (`closed` or `overpaid` by the ledger) set to `servicing` by hand answered 200
 *   and stayed as it was: the replay that followed settled it again. Its status follows the ledger
 *   (R9), so the change is refused, naming Status (`loans_settled_by_ledger`), and the answer says
 *   what reopens it. A loan closed by hand before it was funded (a lead) still goes to servicing.
 *
 * The closing rule keeps its constraint name and column; `CREATE OR REPLACE` (the trigger is unchanged), made from
 * 0061's text (`textEdits.ts`).
 */
import { sql as paymentNeedsSchedule } from './0061_payment_needs_schedule.js';
import { between, edited } from './textEdits.js';

export const name = '0078_close_by_hand_credit';

export const sql = edited('0078', between('0078', paymentNeedsSchedule, 'CREATE OR REPLACE FUNCTION loanql_loan_status_by_hand()', '\nEND $$;'), [
  [
    `  IF NEW.status = 'closed' AND OLD.status IN ('servicing', 'overpaid') THEN`,
    `  IF NEW.status = 'servicing' AND OLD.status IN ('closed', 'overpaid') THEN
    r := loanql_ledger(NEW.account_id, NEW.id, loanql_stored_as_of(NEW.account_id, NEW.id));
    IF r.settled AND r.credit_balance >= 0 THEN
      RAISE EXCEPTION 'the loan is paid off (settled on %): its status follows the ledger, and it goes back to servicing by itself when a payment is reversed or its terms change so that it owes again',
        r.settled_on
        USING ERRCODE = 'check_violation', CONSTRAINT = 'loans_settled_by_ledger', TABLE = 'loans', COLUMN = 'status';
    END IF;
  END IF;
  IF NEW.status = 'closed' AND OLD.status IN ('servicing', 'overpaid') THEN`,
  ],
  [
    `    IF r.principal_outstanding + r.interest_due + r.fees_due > 0 OR r.credit_balance > 0 THEN`,
    `    IF r.principal_outstanding + r.interest_due + r.fees_due = 0 AND r.credit_balance > 0 THEN
      RAISE EXCEPTION 'the loan owes nothing but holds credit %: refund it (a payment of type refund) and it closes by itself',
        round(r.credit_balance, 2)
        USING ERRCODE = 'check_violation', CONSTRAINT = 'loans_close_with_balance', TABLE = 'loans', COLUMN = 'status';
    END IF;
    IF r.principal_outstanding + r.interest_due + r.fees_due > 0 OR r.credit_balance <> 0 THEN`,
  ],
]);
