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
 *   name; VACUUM keeps both (a tuple slot is reused only once its version is dead to every
 *   transaction, so never by the transaction that made it). Deterministic: each table's rows in
 *   `ctid` order, through md5.
 * - `ledger_fingerprints` keeps, per loan, the version its last replay started from. A later
 *   replay that finds the same version is skipped: had that last replay written any row of the
 *   loan, the loan's rows would now be other versions (and were it rolled back, the stored version
 *   would be rolled back with it), so the version can match only when it wrote nothing — the
 *   replay of exactly that state is that state. No second version after the replay is needed.
 *   UNLOGGED: a lost row costs one full replay (crash recovery empties the table, a replica never
 *   replays); it has no change notices (bookkeeping, like `ledger_job_days`).
 * - 0026's `loanql_replay_loans` is renamed `loanql_replay_loans_in_full`, unchanged (its 0024 (R10)
 *   and 0026 steps included); `loanql_replay_loans` becomes the check around it, so every caller
 *   (`loanql_refresh_next`, the fee job, the seeder, `ledger rebuild`) gets it.
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
-- (PL/pgSQL for its cached plan; each table read by its loan's index range — a bitmap scan visits
-- the rows in ctid order, an index scan in key then ctid order: the same order for the same rows
-- and plan, and any other order only makes a replay run that could have been skipped).
CREATE FUNCTION loanql_ledger_inputs_version(p_account uuid, p_loan uuid) RETURNS text
LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN (
    SELECT md5(concat_ws('|',
             l.ctid::text || l.xmin::text,
             loanql_stored_as_of(p_account, p_loan)::text,
             (SELECT string_agg(pr.ctid::text || pr.xmin::text, ',') FROM products pr
               WHERE pr.account_id = p_account AND (pr.id = l.product_id OR (l.product_id IS NULL AND pr.is_default))),
             (SELECT string_agg(s.ctid::text || s.xmin::text, ',') FROM schedules s WHERE s.account_id = p_account AND s.loan_id = p_loan),
             (SELECT string_agg(py.ctid::text || py.xmin::text, ',') FROM payments py WHERE py.account_id = p_account AND py.loan_id = p_loan),
             (SELECT string_agg(f.ctid::text || f.xmin::text, ',') FROM fees f WHERE f.account_id = p_account AND f.loan_id = p_loan),
             (SELECT string_agg(w.ctid::text || w.xmin::text, ',') FROM fee_waivers w WHERE w.account_id = p_account AND w.loan_id = p_loan),
             (SELECT string_agg(a.ctid::text || a.xmin::text, ',') FROM payment_allocations a WHERE a.account_id = p_account AND a.loan_id = p_loan)))
      FROM loans l WHERE l.account_id = p_account AND l.id = p_loan);
END $$;

ALTER FUNCTION loanql_replay_loans(uuid[], uuid[]) RENAME TO loanql_replay_loans_in_full;

-- The replay (the caller holds the loans' row locks): the loans whose stored version is not one
-- a replay left unchanged are replayed in full (0026's replay), and each one's version from
-- before is stored. A replay that wrote a row of the loan made that version unreachable (the
-- loan's state now has new row versions, and a rollback takes the stored version with it), so it
-- is matched only when the replay wrote nothing: the replay of that state is that state.
CREATE FUNCTION loanql_replay_loans(p_account uuid[], p_loan uuid[]) RETURNS void
LANGUAGE plpgsql SET enable_seqscan = off SET jit = off SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  r_account uuid[]; r_loan uuid[]; r_version text[];
BEGIN
  SELECT coalesce(array_agg(l.account_id), '{}'), coalesce(array_agg(l.id), '{}'), coalesce(array_agg(v.version), '{}')
    INTO r_account, r_loan, r_version
    FROM (SELECT DISTINCT * FROM unnest(p_account, p_loan) AS u(account_id, loan_id)) u
    JOIN loans l ON l.account_id = u.account_id AND l.id = u.loan_id
    CROSS JOIN LATERAL (SELECT loanql_ledger_inputs_version(l.account_id, l.id) AS version OFFSET 0) v
    LEFT JOIN ledger_fingerprints f ON f.account_id = l.account_id AND f.id = l.id
   WHERE f.version IS DISTINCT FROM v.version;
  IF cardinality(r_loan) = 0 THEN RETURN; END IF;

  PERFORM loanql_replay_loans_in_full(r_account, r_loan);

  INSERT INTO ledger_fingerprints AS f (account_id, id, version)
  SELECT * FROM unnest(r_account, r_loan, r_version)
  ON CONFLICT (account_id, id) DO UPDATE SET version = excluded.version;
END $$;
`;
