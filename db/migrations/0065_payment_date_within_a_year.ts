/**
 * A payment is dated at most a year after its account's business date, on every write path (a
 * dates audit, session 37).
 *
 * The dashboard's payment and payoff forms refused such a day (a slip of the year: 2062 for 2026),
 * but GraphQL (`insert_payments_one`, `insert_payments`, a nested insert, `update_payments` of
 * `date`) took it: the replay applies a post-dated payment, the stored ledger is as of the last
 * payment's day, and the loan then stood as of 2062 — every row late with its late fee, 13,149
 * days past due in the collections queue. A post-dated cheque is dated within a year of today.
 *
 * `CREATE OR REPLACE` of `loanql_payment_rules` (0061's text, edited: the trigger is unchanged,
 * BEFORE INSERT OR UPDATE OF date, date_reversed). The day is checked when it is written — an
 * insert, or an update that changes it — so a payment already stored beyond the window does not
 * fail this migration and can still be reversed. The limit is `loanql_business_date(account)`
 * plus one year (PostgreSQL's month arithmetic: a year after 2028-02-29 is 2029-02-28), so a
 * trusted load of history sets `loanql.business_date` for its transaction, as the seeder does.
 * Raised as `invalid_parameter_value` (22023) on column `date`: the engine answers it as
 * `validation-failed` naming `date` with this sentence (engine/execute/writeErrors.ts).
 */
import { sql as paymentNeedsSchedule } from './0061_payment_needs_schedule.js';
import { between, edited } from './textEdits.js';

export const name = '0065_payment_date_within_a_year';

export const sql = edited('0065', between('0065', paymentNeedsSchedule, 'CREATE OR REPLACE FUNCTION loanql_payment_rules()', '\nEND $$;'), [
  [
    `DECLARE
  loan_status text;`,
    `DECLARE
  loan_status text;
  today date;`,
  ],
  [
    `      USING ERRCODE = 'check_violation', CONSTRAINT = 'payments_date_in_range', TABLE = 'payments', COLUMN = 'date';
  END IF;`,
    `      USING ERRCODE = 'check_violation', CONSTRAINT = 'payments_date_in_range', TABLE = 'payments', COLUMN = 'date';
  END IF;
  IF TG_OP = 'INSERT' OR NEW.date IS DISTINCT FROM OLD.date THEN
    today := loanql_business_date(NEW.account_id);
    IF NEW.date > (today + interval '1 year')::date THEN
      RAISE EXCEPTION 'date: % is more than a year after the business date (%); a post-dated payment is dated within a year of it (on or before %)', NEW.date, today, (today + interval '1 year')::date
        USING ERRCODE = 'invalid_parameter_value', TABLE = 'payments', COLUMN = 'date';
    END IF;
  END IF;`,
  ],
]);
