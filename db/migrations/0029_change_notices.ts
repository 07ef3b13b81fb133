/**
 * Change notices for subscriptions (issue 34; engine/README.md, "Subscriptions"): every
 * statement that writes rows of an account's table sends, at commit, one `NOTIFY
 * loanql_changes, '<table> <account id>'` per account it touched (PostgreSQL folds identical
 * notices of one transaction into one, and sends none for a rolled-back one). A live query is
 * refreshed only when a table it reads was written in an account it serves; nothing written,
 * no statement.
 *
 * Statement-level triggers with a transition table (one per event: PostgreSQL allows a
 * transition table only on a single-event trigger), on every table of the schema with an
 * `account_id` column except the service's own bookkeeping (webhook queues, idempotency keys,
 * sessions, the fee job's days), which no collection reads and which churn. `api_keys` is
 * included: a key deactivated anywhere closes its WebSocket connections at once.
 */
export const name = '0029_change_notices';

export const sql = /* sql */ `
CREATE FUNCTION loanql_notice_changes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('loanql_changes', TG_TABLE_NAME || ' ' || changed.account_id::text)
     FROM (SELECT DISTINCT account_id FROM loanql_changed_rows WHERE account_id IS NOT NULL) AS changed;
  RETURN NULL;
END
$$;

DO $$
DECLARE
  target text;
BEGIN
  FOR target IN
    SELECT c.relname
      FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace
      JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'account_id' AND NOT a.attisdropped
     WHERE n.nspname = current_schema() AND c.relkind = 'r'
       AND c.relname NOT IN ('webhook_outbox', 'webhook_events', 'webhook_deliveries', 'webhook_attempts', 'idempotency_keys', 'admin_sessions', 'ledger_job_days', 'loanql_event_state')
     ORDER BY c.relname
  LOOP
    EXECUTE format('CREATE TRIGGER loanql_notice_insert AFTER INSERT ON %I REFERENCING NEW TABLE AS loanql_changed_rows FOR EACH STATEMENT EXECUTE FUNCTION loanql_notice_changes()', target);
    EXECUTE format('CREATE TRIGGER loanql_notice_update AFTER UPDATE ON %I REFERENCING NEW TABLE AS loanql_changed_rows FOR EACH STATEMENT EXECUTE FUNCTION loanql_notice_changes()', target);
    EXECUTE format('CREATE TRIGGER loanql_notice_delete AFTER DELETE ON %I REFERENCING OLD TABLE AS loanql_changed_rows FOR EACH STATEMENT EXECUTE FUNCTION loanql_notice_changes()', target);
  END LOOP;
END
$$;
`;
