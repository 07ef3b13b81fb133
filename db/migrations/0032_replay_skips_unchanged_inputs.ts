/**
 * A replay whose inputs are exactly those of a replay that changed nothing is skipped (issue 29:
 * "replaying a 30-year monthly loan with 360 payments costs under 5 ms of server time"; docs/ledger.md,
 * "Migration 0032").
 *
 * - `loanql_ledger_inputs_version(account, loan)` names the exact stored state a replay reads and
 *   writes: the physical identity (`ctid`, `xmin`) of every row of the loan in `loans`, its
 *   product (or the account's default product), `schedules`, `payments`, `fees`, `fee_waivers` and
 *   `payment_allocations`, and the as-of day (`loanql_stored_as_of`: the business date, or the
 *   last payment's date). Any write of any of those rows — an UPDATE that sets the same values
 *   too, the replay's own writes, a change by hand — makes a new row version, so a new version
 *   name; VACUUM changes neither (a tuple slot is reused only once its version is dead to every
 *   transaction, so never by the transaction that made it). Deterministic: each table's rows in
 *   `ctid` order, through md5.
 * - `ledger_fingerprints` keeps, per loan, its version after a full replay that wrote no row
 *   (PostgreSQL's per-transaction counts of rows inserted, updated and deleted in those tables did
 *   not move; only with `track_counts` on, the default): that state is its own replay. A later
 *   replay that finds the loan's version equal to the stored one is skipped: the rows are still
 *   those rows. Any other replay runs in full and forgets the stored version. A write's replay thus
 *   computes no version (unless it follows a skip: then one, before); a replay that changes
 *   nothing computes one after it the first time, and only one (then skipped) from then on.
 *   UNLOGGED: a lost row costs one full replay (crash recovery empties the table, a replica never
 *   replays); it has no change notices (bookkeeping, like `ledger_job_days`).
 * - 0026's `loanql_replay_loans` is renamed `loanql_replay_loans_in_full`, unchanged (its 0024 (R10)
 *   and 0026 steps included); `loanql_replay_loans` becomes the check around it, so every caller
 *   (`loanql_refresh_next`, the fee job, the seeder) gets it; `ledger rebuild` deletes its loans'
 *   stored versions first, so it replays in full.
 *
 * A migration that changes what the replay computes from the same rows must `TRUNCATE
 * ledger_fingerprints` (a version names rows, not the rules applied to them).
 */
export const name = '0032_replay_skips_unchanged_inputs';

export const sql = /* sql */ `
CREATE UNLOGGED TABLE ledger_fingerprints (
  account_id uuid NOT NULL,
  -- the loan's id
  id uuid NOT NULL,
  version text NOT NULL,
  PRIMARY KEY (account_id, id),
  FOREIGN KEY (account_id, id) REFERENCES loans (account_id, id) ON DELETE CASCADE
);

-- The exact stored state of one loan's ledger: every row a replay reads or writes, by row version
-- (PL/pgSQL for its cached plan; each table's rows in ctid order, whatever the plan).
CREATE FUNCTION loanql_ledger_inputs_version(p_account uuid, p_loan uuid) RETURNS text
LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN (
    SELECT md5(concat_ws('|',
             l.ctid::text || l.xmin::text,
             loanql_stored_as_of(p_account, p_loan)::text,
             (SELECT string_agg(pr.ctid::text || pr.xmin::text, ',' ORDER BY pr.ctid) FROM products pr
               WHERE pr.account_id = p_account AND (pr.id = l.product_id OR (l.product_id IS NULL AND pr.is_default))),
             (SELECT string_agg(s.ctid::text || s.xmin::text, ',' ORDER BY s.ctid) FROM schedules s WHERE s.account_id = p_account AND s.loan_id = p_loan),
             (SELECT string_agg(py.ctid::text || py.xmin::text, ',' ORDER BY py.ctid) FROM payments py WHERE py.account_id = p_account AND py.loan_id = p_loan),
             (SELECT string_agg(f.ctid::text || f.xmin::text, ',' ORDER BY f.ctid) FROM fees f WHERE f.account_id = p_account AND f.loan_id = p_loan),
             (SELECT string_agg(w.ctid::text || w.xmin::text, ',' ORDER BY w.ctid) FROM fee_waivers w WHERE w.account_id = p_account AND w.loan_id = p_loan),
             (SELECT string_agg(a.ctid::text || a.xmin::text, ',' ORDER BY a.ctid) FROM payment_allocations a WHERE a.account_id = p_account AND a.loan_id = p_loan)))
      FROM loans l WHERE l.account_id = p_account AND l.id = p_loan);
END $$;

ALTER FUNCTION loanql_replay_loans(uuid[], uuid[]) RENAME TO loanql_replay_loans_in_full;

-- Rows inserted, updated or deleted so far in this transaction in the tables a loan's version
-- names (PostgreSQL's own per-transaction counts; subtransactions included).
CREATE FUNCTION loanql_ledger_tables_written() RETURNS bigint
LANGUAGE sql STABLE AS $$
  SELECT sum(pg_stat_get_xact_tuples_inserted(t.oid) + pg_stat_get_xact_tuples_updated(t.oid) + pg_stat_get_xact_tuples_deleted(t.oid))::bigint
    FROM unnest(ARRAY['loans', 'products', 'schedules', 'payments', 'fees', 'fee_waivers', 'payment_allocations']::regclass[]) AS t(oid)
$$;

-- The replay (the caller holds the loans' row locks). A loan whose stored version is its version
-- now is skipped: that version was stored after a replay that wrote nothing, and the loan's rows
-- are still those rows. The others are replayed in full (0026's replay), their stored versions
-- forgotten first; when the full replay wrote no row at all (PostgreSQL's per-transaction counts
-- did not move; counted only with track_counts on), the state is its own replay, and each loan's
-- version is stored. So a write computes no version (unless it follows a skip), and a replay
-- that changes nothing computes one: after it the first time, before it from then on.
CREATE FUNCTION loanql_replay_loans(p_account uuid[], p_loan uuid[]) RETURNS void
LANGUAGE plpgsql SET enable_seqscan = off SET jit = off SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  r_account uuid[]; r_loan uuid[]; had_version boolean; written bigint;
BEGIN
  SELECT coalesce(array_agg(l.account_id), '{}'), coalesce(array_agg(l.id), '{}'), coalesce(bool_or(f.id IS NOT NULL), false)
    INTO r_account, r_loan, had_version
    FROM (SELECT DISTINCT * FROM unnest(p_account, p_loan) AS u(account_id, loan_id)) u
    JOIN loans l ON l.account_id = u.account_id AND l.id = u.loan_id
    LEFT JOIN ledger_fingerprints f ON f.account_id = l.account_id AND f.id = l.id
   WHERE f.id IS NULL OR f.version <> loanql_ledger_inputs_version(l.account_id, l.id);
  IF cardinality(r_loan) = 0 THEN RETURN; END IF;
  IF had_version THEN
    DELETE FROM ledger_fingerprints f USING unnest(r_account, r_loan) AS x(account_id, loan_id)
     WHERE f.account_id = x.account_id AND f.id = x.loan_id;
  END IF;

  written := loanql_ledger_tables_written();
  PERFORM loanql_replay_loans_in_full(r_account, r_loan);

  IF current_setting('track_counts') = 'on' AND loanql_ledger_tables_written() = written THEN
    INSERT INTO ledger_fingerprints (account_id, id, version)
    SELECT x.account_id, x.loan_id, loanql_ledger_inputs_version(x.account_id, x.loan_id)
      FROM unnest(r_account, r_loan) AS x(account_id, loan_id);
  END IF;
END $$;
`;
