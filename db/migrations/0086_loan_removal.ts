/**
 * A loan entered by mistake can be removed; a loan with money history never is (session 41).
 *
 * Every table that hangs off a loan was `ON DELETE CASCADE` since 0001, so a `DELETE FROM loans`
 * — a lender's own SQL, or a metadata edit giving `loans` a `delete` — took the loan's payments,
 * fees, waivers, funding sources and investor distributions with it, against SPEC §12 ("money is
 * never deleted": a payment is reversed, a fee waived). No interface deleted a loan, so a lead
 * typed twice or a test loan stayed in the book for ever.
 *
 * Now the database holds the rule for every writer: a loan that holds a payment (reversed or
 * not), a manual or NSF fee, a fee waiver, a funding source or a distribution line is refused
 * (`check_violation`, naming what it holds); any other loan is deleted with its non-money rows —
 * schedule rows, tasks, comments, borrower/guarantor/document/address links, its ledger caches —
 * by the cascades already there. `loanql_loan_money_held` is the one list of those tables: the
 * trigger and REST's 409 (`app/loanRemoval.ts`) both read it. Deleting a whole account (its
 * cascade reaches loans after the account's row is gone) is not refused.
 */
export const name = '0086_loan_removal';

export const sql = /* sql */ `
-- What money history a loan holds: {"payments": 2, "fees": 1}, only the kinds it has ({} for none).
-- A late fee is the replay's, derived from the schedule and removed by it when the schedule
-- changes: alone (unpaid, unwaived — paid needs a payment, waived a waiver) it is no money that
-- changed hands, so a test loan typed with a past funding day stays removable. An NSF fee comes
-- with a reversed payment; a manual fee was charged by someone: both count.
CREATE FUNCTION loanql_loan_money_held(p_account uuid, p_loan uuid) RETURNS jsonb
LANGUAGE sql STABLE AS $$
  SELECT coalesce(jsonb_object_agg(kind, n), '{}'::jsonb) FROM (
    SELECT 'payments' AS kind, (SELECT count(*) FROM payments WHERE account_id = p_account AND loan_id = p_loan) AS n
    UNION ALL SELECT 'fees', (SELECT count(*) FROM fees WHERE account_id = p_account AND loan_id = p_loan AND kind <> 'late')
    UNION ALL SELECT 'fee_waivers', (SELECT count(*) FROM fee_waivers WHERE account_id = p_account AND loan_id = p_loan)
    UNION ALL SELECT 'funding_sources', (SELECT count(*) FROM funding_sources WHERE account_id = p_account AND loan_id = p_loan)
    UNION ALL SELECT 'distributions', (SELECT count(*) FROM distributions WHERE account_id = p_account AND loan_id = p_loan)
  ) held WHERE n > 0
$$;

-- Why the loan may not be deleted (null: it may): the sentence the trigger raises and REST's 409 says.
CREATE FUNCTION loanql_loan_removal_refusal(p_account uuid, p_loan uuid) RETURNS text
LANGUAGE sql STABLE AS $$
  SELECT 'the loan ' || coalesce(nullif(l.name, ''), l.id::text) || ' holds money history (' || held.list ||
         '), which is never deleted: reverse its payments and waive its fees instead'
    FROM loans l,
         LATERAL (SELECT string_agg(h.value || ' ' || CASE h.key
                    WHEN 'payments' THEN 'payment' WHEN 'fees' THEN 'fee' WHEN 'fee_waivers' THEN 'fee waiver'
                    WHEN 'funding_sources' THEN 'funding source' ELSE 'distribution line' END
                    || CASE WHEN h.value = '1' THEN '' ELSE 's' END, ', '
                    ORDER BY array_position(ARRAY['payments', 'fees', 'fee_waivers', 'funding_sources', 'distributions'], h.key)) AS list
                    FROM jsonb_each_text(loanql_loan_money_held(p_account, p_loan)) h) held
   WHERE l.account_id = p_account AND l.id = p_loan AND held.list IS NOT NULL
$$;

CREATE FUNCTION loanql_loan_removable() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  refusal text;
BEGIN
  -- The account itself is being deleted: everything of it goes.
  IF NOT EXISTS (SELECT 1 FROM accounts WHERE id = OLD.account_id) THEN
    RETURN OLD;
  END IF;
  refusal := loanql_loan_removal_refusal(OLD.account_id, OLD.id);
  IF refusal IS NOT NULL THEN
    RAISE EXCEPTION '%', refusal USING ERRCODE = 'check_violation';
  END IF;
  RETURN OLD;
END
$$;

CREATE TRIGGER loans_keep_money_history BEFORE DELETE ON loans
  FOR EACH ROW EXECUTE FUNCTION loanql_loan_removable();
`;
