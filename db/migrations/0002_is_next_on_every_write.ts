/**
 * `is_next` (SPEC §7) for the writes 0001's triggers left out: deleting schedule rows,
 * changing a row's amount, due date, number or loan, and moving a payment to another loan
 * (0001 refreshed only the loan a payment moved to, not the one it left).
 *
 * Row-level with a column list, because a statement-level trigger on `schedules` would also
 * fire for `loanql_refresh_next`'s own update of `is_next` (PostgreSQL allows no column list
 * on triggers with transition tables). `is_next` is not in the list, so there is no recursion.
 */
export const name = '0002_is_next_on_every_write';

export const sql = /* sql */ `
CREATE TRIGGER schedules_refresh_next_delete AFTER DELETE ON schedules
  REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION loanql_refresh_next_from_new();

CREATE FUNCTION loanql_refresh_next_for_old_and_new() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM loanql_refresh_next(ARRAY[OLD.account_id, NEW.account_id], ARRAY[OLD.loan_id, NEW.loan_id]);
  RETURN NULL;
END $$;

CREATE TRIGGER schedules_refresh_next_update AFTER UPDATE OF account_id, loan_id, number, due, payment ON schedules
  FOR EACH ROW
  WHEN (OLD.account_id IS DISTINCT FROM NEW.account_id OR OLD.loan_id IS DISTINCT FROM NEW.loan_id
        OR OLD.number IS DISTINCT FROM NEW.number OR OLD.due IS DISTINCT FROM NEW.due OR OLD.payment IS DISTINCT FROM NEW.payment)
  EXECUTE FUNCTION loanql_refresh_next_for_old_and_new();

CREATE TRIGGER payments_refresh_next_moved AFTER UPDATE OF account_id, loan_id ON payments
  FOR EACH ROW
  WHEN (OLD.account_id IS DISTINCT FROM NEW.account_id OR OLD.loan_id IS DISTINCT FROM NEW.loan_id)
  EXECUTE FUNCTION loanql_refresh_next_for_old_and_new();
`;
