/**
 * A transaction of several write statements that replay ledgers takes the account's
 * ledger-writers lock EXCLUSIVE before its first write (lock order).
 *
 * A GraphQL mutation naming several loans (`p0: insert_payments_one(object: {loan_id: 7 …}) p1:
 * insert_payments_one(object: {loan_id: 3 …})`) runs its roots as statements of one transaction in
 * document order, and each statement's replay locks its loan (`loanql_refresh_next`, FOR NO KEY
 * UPDATE): the loans are locked in the order the document names them, across statements, where a
 * replay of one statement locks them in id order. 0067 made a settings change (EXCLUSIVE) and
 * payments (SHARE) take turns; but two such mutations naming shared loans in other orders both
 * held SHARE and deadlocked between themselves, and a mutation whose first root locks a loan
 * without taking the lock (a fee, a loan's terms, a schedule row) still crossed a settings change.
 * PostgreSQL broke each cycle after `deadlock_timeout` (1 s) by undoing one side, which the service
 * ran again (`db/conflictRetry.ts`): the client waited a second or more, or got a 409 `conflict`.
 *
 * No statement can know which loans a later statement of its transaction will lock, so the engine
 * tells the database, before the first write of a mutation of several write statements, which
 * tables they write: `SELECT loanql_several_writes(<account>, <tables>)` (engine/README.md,
 * "Writing data"; only when the catalogue has this function). Here the database decides: when one
 * of the tables is a ledger's (its writes replay a loan: payments, fees, fee_waivers, loans,
 * schedules, products, funding_sources), the transaction takes the account's ledger-writers lock
 * EXCLUSIVE (`LEDGER_WRITERS_LOCK`, 0067) — before it holds any loan. Such a transaction then runs
 * alone among the account's ledger writers: writes of one statement (SHARE, each locking its loans
 * in id order) commit first and later ones wait; another such transaction and a settings change
 * wait for it. A lock is taken in the same order by everyone or held alone: no cycle. The daily
 * fee job takes its loans with SKIP LOCKED and never waits for a loan, so it closes no cycle and
 * takes no turn. A write of one statement, and a mutation of several statements writing no
 * ledger table (tasks, comments), are unchanged.
 */
import { LEDGER_WRITERS_LOCK } from '../ledgerWritersLock.js';

export const name = '0071_several_writes_take_turns';

export const sql = /* sql */ `
CREATE FUNCTION loanql_several_writes(p_account uuid, p_tables text[]) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
  IF p_tables && ARRAY['payments', 'fees', 'fee_waivers', 'loans', 'schedules', 'products', 'funding_sources'] THEN
    PERFORM pg_advisory_xact_lock(${LEDGER_WRITERS_LOCK}, hashtext(p_account::text));
    RETURN true;
  END IF;
  RETURN false;
END $$;
COMMENT ON FUNCTION loanql_several_writes(uuid, text[]) IS
  'Called by the engine before the first write of a transaction of several write statements, with the tables they write: one of them a ledger''s, the account''s ledger-writers lock EXCLUSIVE (migration 0071).';
`;
