/**
 * Change notices name the loans written (issue 34; engine/README.md, "Subscriptions"): a notice
 * of a table with a loan key — `loans` (its `id`) or any table with a `loan_id` — becomes
 * `'<table> <account id> <loan id>,<loan id>,…'`, the distinct loan keys of the rows the
 * statement wrote in that account (an UPDATE: the rows before and after, so a row moved off a
 * loan is announced for both). Past `loanql_notice_loan_limit` (16) ids, or when a written row
 * has no loan, the notice names none: `'<table> <account id>'`, every loan, as 0029 sent. A live
 * query keyed by a loan is refreshed only for the subscribers of the loans named.
 *
 * Same tables as 0029 (those carrying its `loanql_notice_insert` trigger); the triggers are
 * re-created with the key column as their argument, read by the functions through `EXECUTE`
 * (PL/pgSQL registers the transition tables for dynamic SQL too).
 */
export const name = '0031_change_notices_by_loan';

export const sql = /* sql */ `
CREATE FUNCTION loanql_notice_loan_limit() RETURNS integer LANGUAGE sql IMMUTABLE AS 'SELECT 16';

-- Insert and delete: one transition table. TG_ARGV[0]: the loan key column, or none.
CREATE OR REPLACE FUNCTION loanql_notice_changes() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  changed record;
BEGIN
  IF TG_NARGS = 0 THEN
    PERFORM pg_notify('loanql_changes', TG_TABLE_NAME || ' ' || accounts.account_id::text)
       FROM (SELECT DISTINCT account_id FROM loanql_changed_rows WHERE account_id IS NOT NULL) AS accounts;
    RETURN NULL;
  END IF;
  FOR changed IN EXECUTE format(
    'SELECT account_id, CASE WHEN bool_and(%1$I IS NOT NULL) AND count(DISTINCT %1$I) <= loanql_notice_loan_limit() THEN string_agg(DISTINCT %1$I::text, %2$L) END AS loans
       FROM loanql_changed_rows WHERE account_id IS NOT NULL GROUP BY account_id', TG_ARGV[0], ',')
  LOOP
    PERFORM pg_notify('loanql_changes', TG_TABLE_NAME || ' ' || changed.account_id::text || coalesce(' ' || changed.loans, ''));
  END LOOP;
  RETURN NULL;
END
$$;

-- Update: the rows before and after (a row's loan or account may change).
CREATE FUNCTION loanql_notice_updates() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  changed record;
BEGIN
  IF TG_NARGS = 0 THEN
    PERFORM pg_notify('loanql_changes', TG_TABLE_NAME || ' ' || accounts.account_id::text)
       FROM (SELECT account_id FROM loanql_changed_rows WHERE account_id IS NOT NULL
             UNION SELECT account_id FROM loanql_old_rows WHERE account_id IS NOT NULL) AS accounts;
    RETURN NULL;
  END IF;
  FOR changed IN EXECUTE format(
    'SELECT account_id, CASE WHEN bool_and(loan IS NOT NULL) AND count(DISTINCT loan) <= loanql_notice_loan_limit() THEN string_agg(DISTINCT loan::text, %2$L) END AS loans
       FROM (SELECT account_id, %1$I AS loan FROM loanql_changed_rows UNION ALL SELECT account_id, %1$I FROM loanql_old_rows) AS written
      WHERE account_id IS NOT NULL GROUP BY account_id', TG_ARGV[0], ',')
  LOOP
    PERFORM pg_notify('loanql_changes', TG_TABLE_NAME || ' ' || changed.account_id::text || coalesce(' ' || changed.loans, ''));
  END LOOP;
  RETURN NULL;
END
$$;

DO $$
DECLARE
  target text;
  has_loan_id boolean;
  arguments text;
BEGIN
  FOR target, has_loan_id IN
    SELECT c.relname, EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'loan_id' AND NOT a.attisdropped)
      FROM pg_trigger t
      JOIN pg_class c ON c.oid = t.tgrelid
      JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE t.tgname = 'loanql_notice_insert' AND n.nspname = current_schema()
     ORDER BY c.relname
  LOOP
    arguments := CASE WHEN target = 'loans' THEN quote_literal('id') WHEN has_loan_id THEN quote_literal('loan_id') ELSE '' END;
    EXECUTE format('DROP TRIGGER loanql_notice_insert ON %I', target);
    EXECUTE format('DROP TRIGGER loanql_notice_update ON %I', target);
    EXECUTE format('DROP TRIGGER loanql_notice_delete ON %I', target);
    EXECUTE format('CREATE TRIGGER loanql_notice_insert AFTER INSERT ON %I REFERENCING NEW TABLE AS loanql_changed_rows FOR EACH STATEMENT EXECUTE FUNCTION loanql_notice_changes(%s)', target, arguments);
    EXECUTE format('CREATE TRIGGER loanql_notice_update AFTER UPDATE ON %I REFERENCING OLD TABLE AS loanql_old_rows NEW TABLE AS loanql_changed_rows FOR EACH STATEMENT EXECUTE FUNCTION loanql_notice_updates(%s)', target, arguments);
    EXECUTE format('CREATE TRIGGER loanql_notice_delete AFTER DELETE ON %I REFERENCING OLD TABLE AS loanql_changed_rows FOR EACH STATEMENT EXECUTE FUNCTION loanql_notice_changes(%s)', target, arguments);
  END LOOP;
END
$$;
`;
