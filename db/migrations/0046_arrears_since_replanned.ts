/**
 * Issue 28: `loanql_arrears_since` (0019) in PL/pgSQL instead of SQL, so that its one statement is
 * planned like the ledger's others — through PostgreSQL's plan cache, which plans again when the
 * tables' statistics change — and not kept for a whole transaction from the first call.
 *
 * A SQL function that is not inlined (this one reads a table) keeps the plans it made at its first
 * call in the calling expression's state; the `loans_arrears_since` trigger calls it from a
 * PL/pgSQL assignment, whose state lives until the transaction ends. The seeder's transaction
 * inserts the loans (the trigger's first call, `schedules` still empty: planned as a sequential
 * scan of an empty table), then every schedule row, then replays each loan — and each loan's
 * replay ran that sequential scan over every schedule row written: 1,660 of the 6,800 ms of a
 * scale-0.05 seed's replay on PostgreSQL 15 (500 loans, 28,600 schedule rows; 4.3 ms a loan
 * instead of 0.04). In PL/pgSQL the statement goes through the plan cache: the seeder's ANALYZE
 * of `schedules` invalidates the old plan and the next call uses the `(account_id, loan_id, due)`
 * index. A service's write pays one planning a session instead of one a transaction.
 *
 * Same arguments, same result (the earliest due date whose unpaid principal and interest is above
 * the tolerance of the loan's product, or of the account's default product when it has none).
 * `CREATE OR REPLACE` on a running database: the triggers that call it are unchanged.
 */
export const name = '0046_arrears_since_replanned';

export const sql = /* sql */ `
CREATE OR REPLACE FUNCTION loanql_arrears_since(p_account uuid, p_loan uuid, p_product uuid) RETURNS date
LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN (
    SELECT min(s.due) FROM schedules s
     WHERE s.account_id = p_account AND s.loan_id = p_loan
       AND s.payment - s.interest_paid - s.principal_paid > coalesce(
             (SELECT pr.arrears_tolerance FROM products pr
               WHERE pr.account_id = p_account AND (pr.id = p_product OR (p_product IS NULL AND pr.is_default))
               ORDER BY pr.id = p_product DESC LIMIT 1), 0));
END $$;
`;
