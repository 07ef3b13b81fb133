/**
 * `loanql_assert(holds, reason)`: the engine's one-statement writes (issue 36, bench m2) check
 * the API key's guard and the role's `check` inside the write's own statement, run in autocommit
 * (engine/README.md, "Writes in one statement"). When a condition does not hold the statement must
 * fail — so autocommit keeps nothing it wrote — with an error the engine recognises: SQLSTATE
 * `LQ001` (a class of its own, used by nothing else) and `reason` as the message (`guard`, or
 * `check <rows>`). Returns true when `holds` is true; raises when it is false or null.
 *
 * VOLATILE (the default) so PostgreSQL never evaluates it ahead of the write or folds it away.
 * On a running database: a new function, nothing else touched; an engine that finds it missing
 * (a database not yet migrated) keeps the two-statement form.
 */
export const name = '0041_one_statement_writes';

export const sql = /* sql */ `
CREATE OR REPLACE FUNCTION loanql_assert(holds boolean, reason text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  IF holds IS NOT TRUE THEN
    RAISE EXCEPTION USING ERRCODE = 'LQ001', MESSAGE = reason;
  END IF;
  RETURN true;
END $$;
`;
