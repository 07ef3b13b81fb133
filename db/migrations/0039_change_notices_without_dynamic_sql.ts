/**
 * Change notices without dynamic SQL (issue 36: as fast as a server hand-written for one lender).
 *
 * 0031's notice functions built their statement with `EXECUTE format(…)` from the trigger's
 * argument (the loan key column), so every statement that wrote an account's table parsed and
 * planned that statement again: on `update_tasks_by_pk` (bench m2) about 170–200 µs of the
 * write transaction's ~400 µs of PostgreSQL backend CPU, as much as the UPDATE and its commit
 * together (bench/README.md, "The single-lender server"). The two argument values the triggers
 * are made with — `'loan_id'` (every table with that column) and `'id'` (`loans`) — now each have
 * their statement written out, which PL/pgSQL plans once per trigger and then reuses (it keeps a
 * compiled copy per trigger, so each table's transition tables get their own plan); any other
 * argument keeps the dynamic statement. Same notices, byte for byte, in the same order: the
 * statements are 0031's with the column named (tests/db/changeNoticeFunctions.test.ts).
 *
 * On a running database: `CREATE OR REPLACE FUNCTION` of the two functions the triggers already
 * call, with the same arguments — no trigger, table or row is touched, no table lock is taken,
 * and a session picks up the new body at its next trigger call.
 */
export const name = '0039_change_notices_without_dynamic_sql';

export const sql = /* sql */ `
CREATE OR REPLACE FUNCTION loanql_notice_changes() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  changed record;
BEGIN
  IF TG_NARGS = 0 THEN
    PERFORM pg_notify('loanql_changes', TG_TABLE_NAME || ' ' || accounts.account_id::text)
       FROM (SELECT DISTINCT account_id FROM loanql_changed_rows WHERE account_id IS NOT NULL) AS accounts;
  ELSIF TG_ARGV[0] = 'loan_id' THEN
    PERFORM pg_notify('loanql_changes', TG_TABLE_NAME || ' ' || notice.account_id::text || coalesce(' ' || notice.loans, ''))
       FROM (SELECT account_id, CASE WHEN bool_and(loan_id IS NOT NULL) AND count(DISTINCT loan_id) <= loanql_notice_loan_limit() THEN string_agg(DISTINCT loan_id::text, ',') END AS loans
               FROM loanql_changed_rows WHERE account_id IS NOT NULL GROUP BY account_id) AS notice;
  ELSIF TG_ARGV[0] = 'id' THEN
    PERFORM pg_notify('loanql_changes', TG_TABLE_NAME || ' ' || notice.account_id::text || coalesce(' ' || notice.loans, ''))
       FROM (SELECT account_id, CASE WHEN bool_and(id IS NOT NULL) AND count(DISTINCT id) <= loanql_notice_loan_limit() THEN string_agg(DISTINCT id::text, ',') END AS loans
               FROM loanql_changed_rows WHERE account_id IS NOT NULL GROUP BY account_id) AS notice;
  ELSE
    FOR changed IN EXECUTE format(
      'SELECT account_id, CASE WHEN bool_and(%1$I IS NOT NULL) AND count(DISTINCT %1$I) <= loanql_notice_loan_limit() THEN string_agg(DISTINCT %1$I::text, %2$L) END AS loans
         FROM loanql_changed_rows WHERE account_id IS NOT NULL GROUP BY account_id', TG_ARGV[0], ',')
    LOOP
      PERFORM pg_notify('loanql_changes', TG_TABLE_NAME || ' ' || changed.account_id::text || coalesce(' ' || changed.loans, ''));
    END LOOP;
  END IF;
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION loanql_notice_updates() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  changed record;
BEGIN
  IF TG_NARGS = 0 THEN
    PERFORM pg_notify('loanql_changes', TG_TABLE_NAME || ' ' || accounts.account_id::text)
       FROM (SELECT account_id FROM loanql_changed_rows WHERE account_id IS NOT NULL
             UNION SELECT account_id FROM loanql_old_rows WHERE account_id IS NOT NULL) AS accounts;
  ELSIF TG_ARGV[0] = 'loan_id' THEN
    PERFORM pg_notify('loanql_changes', TG_TABLE_NAME || ' ' || notice.account_id::text || coalesce(' ' || notice.loans, ''))
       FROM (SELECT account_id, CASE WHEN bool_and(loan IS NOT NULL) AND count(DISTINCT loan) <= loanql_notice_loan_limit() THEN string_agg(DISTINCT loan::text, ',') END AS loans
               FROM (SELECT account_id, loan_id AS loan FROM loanql_changed_rows UNION ALL SELECT account_id, loan_id FROM loanql_old_rows) AS written
              WHERE account_id IS NOT NULL GROUP BY account_id) AS notice;
  ELSIF TG_ARGV[0] = 'id' THEN
    PERFORM pg_notify('loanql_changes', TG_TABLE_NAME || ' ' || notice.account_id::text || coalesce(' ' || notice.loans, ''))
       FROM (SELECT account_id, CASE WHEN bool_and(loan IS NOT NULL) AND count(DISTINCT loan) <= loanql_notice_loan_limit() THEN string_agg(DISTINCT loan::text, ',') END AS loans
               FROM (SELECT account_id, id AS loan FROM loanql_changed_rows UNION ALL SELECT account_id, id FROM loanql_old_rows) AS written
              WHERE account_id IS NOT NULL GROUP BY account_id) AS notice;
  ELSE
    FOR changed IN EXECUTE format(
      'SELECT account_id, CASE WHEN bool_and(loan IS NOT NULL) AND count(DISTINCT loan) <= loanql_notice_loan_limit() THEN string_agg(DISTINCT loan::text, %2$L) END AS loans
         FROM (SELECT account_id, %1$I AS loan FROM loanql_changed_rows UNION ALL SELECT account_id, %1$I FROM loanql_old_rows) AS written
        WHERE account_id IS NOT NULL GROUP BY account_id', TG_ARGV[0], ',')
    LOOP
      PERFORM pg_notify('loanql_changes', TG_TABLE_NAME || ' ' || changed.account_id::text || coalesce(' ' || changed.loans, ''));
    END LOOP;
  END IF;
  RETURN NULL;
END
$$;
`;
