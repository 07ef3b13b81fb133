/**
 * A product's settings change and the account's payment writes take turns instead of deadlocking
 * (session 37).
 *
 * A settings change (`PATCH /api/product`, the dashboard's Settings > Servicing, `loanql product
 * set`) replays every loan of the product in one transaction, locking them in id order; a GraphQL
 * mutation paying several loans (`p0: insert_payments_one … p7: …`) locks each in the order it
 * names them. Named in the other order, the two deadlock: PostgreSQL undoes one (40P01), and the
 * service runs it again (`db/conflictRetry.ts`) — but with two such batches beside it, the settings
 * change lost five runs in a row in two of nine writes of a whole PostgreSQL run
 * (`tests/api/concurrentServicing.test.ts`), a 409 `conflict` the admin had done nothing to cause.
 *
 * Now every payment write takes the account's ledger-writers lock in SHARE mode before it locks a
 * loan (the first statement of `loanql_payment_rules`, the BEFORE INSERT OR UPDATE OF date,
 * date_reversed trigger, which fires before the foreign key's check takes its share of the loan),
 * and a settings change takes it EXCLUSIVE as its transaction's first statement
 * (`app/productSettings.ts`): the change waits for the payments under way to commit and the
 * payments that come after wait for it, holding no loan meanwhile — no cycle. Payments do not wait
 * for one another (SHARE does not conflict with SHARE; two batches in opposite orders can still
 * deadlock between themselves and are run again). The lock is `pg_advisory_xact_lock(4242003,
 * hashtext(account_id::text))`: per account, released at commit. On PGlite (one session) it is
 * always granted at once.
 *
 * `CREATE OR REPLACE` of `loanql_payment_rules` (0065's text with one line added).
 */
import { sql as withinAYear } from './0065_payment_date_within_a_year.js';
import { between, edited } from './textEdits.js';
import { LEDGER_WRITERS_LOCK } from '../ledgerWritersLock.js';

export const name = '0067_settings_change_waits_for_payments';


export const sql = edited('0067', between('0067', withinAYear, 'CREATE OR REPLACE FUNCTION loanql_payment_rules()', '\nEND $$;'), [
  [
    `  latest date;
BEGIN
`,
    `  latest date;
BEGIN
  -- Before any loan is locked: a settings change of the account (EXCLUSIVE) and this write take turns.
  PERFORM pg_advisory_xact_lock_shared(${LEDGER_WRITERS_LOCK}, hashtext(NEW.account_id::text));
`,
  ],
]);
