/**
 * Servicing rules that still differed between write paths (session 41's audits, left over).
 *
 * **A closed loan is charged no manual fee.** The dashboard's fee form and the `servicer` role
 * refused a manual fee on a `closed` loan, but the admin's `insert_fees_one` and SQL took one, and
 * the replay then reopened the loan (R9: settled is cleared while a fee is open): a borrower told
 * "paid off" — a payoff letter sent, the lien released — owed again, the loan back in collections.
 * A lender charges what is owed at payoff (a payoff-statement or release fee) before the payoff is
 * posted, as its quote includes it; a closed loan is finished servicing (Apache Fineract likewise
 * refuses a charge on a loan that is not active). `loanql_fee_date_rule` (0084's text, edited) now
 * refuses a new manual fee on a `closed` loan (`check_violation` on `loan_id`, `fees_loan_open`, as
 * 0084's `fees_loan_funded` on a lead): a GraphQL `check-violation` naming `loan_id`. An `overpaid`
 * loan still takes one (its credit pays it before the surplus is refunded), and a loan a reversal
 * reopened (`servicing`) too. Late and NSF fees are the ledger's (the trigger's WHEN is `manual`),
 * and fees stored before keep.
 *
 * **A loan holding a manual fee is not made a lead again.** 0053 refused `lead` for a loan that
 * took a payment, but one charged a manual fee and no payment went back: the fee stayed on a lead,
 * which no writer may create (0084), and the loan's figures read null (0084: a lead owes nothing),
 * so the fee owed vanished from every balance. `loanql_funded_loan_not_lead` (0053's text, edited)
 * now also refuses it, naming how many manual fees it holds (`loans_funded_not_lead` on `status`:
 * REST's 400 naming `Status`). Waived ones count: the fee was charged to a serviced loan, and its
 * waiver is history too. Late fees are the replay's, removed with the schedule's lateness: a loan set
 * to servicing by mistake with no payment and no manual fee still goes back.
 *
 * **An account is deleted with all its rows.** `distributions` and `distribution_batches` (0024)
 * referenced `accounts` without `ON DELETE CASCADE`, every other account table with it, so deleting
 * an account that had taken a payment (its lines) failed with a foreign-key error — the demo's
 * clean-up after a failed seed, the benches' and tests' clean-up of their accounts, a tenant
 * offboarded. Both foreign keys now cascade (a loan's own deletion is still refused while it holds
 * money history, 0086; a whole account takes everything of it).
 */
import { sql as fundedLoanNotLead } from './0053_funded_loan_not_lead.js';
import { sql as fundingDayOnEveryWrite } from './0084_funding_day_on_every_write.js';
import { between, edited } from './textEdits.js';

export const name = '0090_servicing_rules_every_path';

const feeDateRule = edited('0090', between('0090', fundingDayOnEveryWrite, 'CREATE OR REPLACE FUNCTION loanql_fee_date_rule()', '\nEND $$;'), [
  [
    `      USING ERRCODE = 'check_violation', CONSTRAINT = 'fees_loan_funded', TABLE = 'fees', COLUMN = 'loan_id';
  END IF;
`,
    `      USING ERRCODE = 'check_violation', CONSTRAINT = 'fees_loan_funded', TABLE = 'fees', COLUMN = 'loan_id';
  END IF;
  IF TG_OP = 'INSERT' AND loan_status = 'closed' THEN
    RAISE EXCEPTION 'the loan is closed: it is charged fees while in servicing or overpaid (a fee owed at payoff, a payoff statement''s, is charged before the payoff is posted)'
      USING ERRCODE = 'check_violation', CONSTRAINT = 'fees_loan_open', TABLE = 'fees', COLUMN = 'loan_id';
  END IF;
`,
  ],
]);

const notLead = edited('0090', between('0090', fundedLoanNotLead, 'CREATE FUNCTION loanql_funded_loan_not_lead()', '\nEND $$;'), [
  ['CREATE FUNCTION loanql_funded_loan_not_lead() RETURNS trigger LANGUAGE plpgsql AS $$\nBEGIN', 'CREATE OR REPLACE FUNCTION loanql_funded_loan_not_lead() RETURNS trigger LANGUAGE plpgsql AS $$\nDECLARE\n  manual_fees integer;\nBEGIN'],
  [
    `  RETURN NEW;`,
    `  SELECT count(*) INTO manual_fees FROM fees f WHERE f.account_id = NEW.account_id AND f.loan_id = NEW.id AND f.kind = 'manual';
  IF manual_fees > 0 THEN
    RAISE EXCEPTION 'the loan holds % manual fee%, so it has been serviced: it cannot be a lead again (a lead owes nothing, and its fees would be left on a loan not funded)',
      manual_fees, CASE WHEN manual_fees = 1 THEN '' ELSE 's' END
      USING ERRCODE = 'check_violation', CONSTRAINT = 'loans_funded_not_lead', TABLE = 'loans', COLUMN = 'status';
  END IF;
  RETURN NEW;`,
  ],
]);

export const sql = /* sql */ `
${feeDateRule}

${notLead}

ALTER TABLE distributions DROP CONSTRAINT distributions_account_id_fkey,
  ADD CONSTRAINT distributions_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts (id) ON DELETE CASCADE;
ALTER TABLE distribution_batches DROP CONSTRAINT distribution_batches_account_id_fkey,
  ADD CONSTRAINT distribution_batches_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts (id) ON DELETE CASCADE;
`;
