/**
 * A refused refund's message gives the credit in cents ("… more than the loan's credit balance
 * of 0.00 on 2026-03-21"), as every other amount the service shows; it printed the ledger's
 * figure as it came, "of 0" for a loan without credit. The engine now passes a trigger's own
 * sentence to the client (engine/execute/writeErrors.ts), so this is what an API client and the
 * dashboard read. Same rule, same constraint name and column; `CREATE OR REPLACE` on a running
 * database (the trigger that calls it is unchanged); made from 0012's text (`textEdits.ts`).
 */
import { sql as servicingLedger } from './0012_servicing_ledger.js';
import { between, edited } from './textEdits.js';

export const name = '0047_refund_refusal_in_cents';

export const sql = edited('0047', between('0047', servicingLedger, 'CREATE FUNCTION loanql_refund_within_credit()', '\nEND $$;'), [
  ['CREATE FUNCTION loanql_refund_within_credit()', 'CREATE OR REPLACE FUNCTION loanql_refund_within_credit()'],
  ['NEW.amount, coalesce(credit, 0), NEW.date', 'NEW.amount, coalesce(credit, 0)::numeric(14, 2), NEW.date'],
]);
