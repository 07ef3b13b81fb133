import type { Database } from '../db/index.js';

/** The channel of the database's change notices (migration 0029). */
export const CHANGE_CHANNEL = 'loanql_changes';

/**
 * Listens for the database's change notices (migration 0029: `<table> <account id>` at the
 * commit of every write to an account's table; migration 0031: `<table> <account id> <loan
 * id>,…` when the rows written belong to few loans) and hands each on as `(table, accountId,
 * loans)`, `loans` null when the notice names none (any loan may have changed).
 * When notices may have been lost (the listening connection dropped and came back), `onGap`:
 * whoever relies on them must look again at everything. Resolves with the function that stops.
 */
export function listenForChanges(db: Database, onChange: (table: string, accountId: string, loans: readonly string[] | null) => void, onGap: () => void): Promise<() => Promise<void>> {
  return db.listen(
    CHANGE_CHANNEL,
    (payload) => {
      const [table, accountId, loans] = payload.split(' ');
      if (table && accountId) onChange(table, accountId, loans ? loans.split(',') : null);
    },
    onGap,
  );
}

/** Serialises the services that add change notices to the same tables (two processes starting at once). */
const NOTICE_TRIGGERS_LOCK = 4242031;

/** The tables (schema, name) of a metadata's collections, in the database's current schema when none is named. */
type NamedTables = readonly (readonly [schema: string | null, table: string])[];

/**
 * Of `tables` and the tables under those of them that are views (at any depth: what each view's
 * rule reads, pg_depend), the plain tables with an `account_id` column that have none of
 * loanql's change-notice triggers.
 */
const TABLES_WITHOUT_NOTICES = `
  WITH RECURSIVE reached(oid, relkind) AS (
      SELECT c.oid, c.relkind
        FROM unnest($1::text[], $2::text[]) AS wanted(table_schema, table_name)
        JOIN pg_namespace n ON n.nspname = coalesce(wanted.table_schema, current_schema())
        JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = wanted.table_name
      UNION
      SELECT c.oid, c.relkind
        FROM reached v JOIN pg_rewrite r ON r.ev_class = v.oid
        JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid AND d.refclassid = 'pg_class'::regclass AND d.refobjid <> v.oid
        JOIN pg_class c ON c.oid = d.refobjid
       WHERE v.relkind = 'v')
  SELECT n.nspname::text AS table_schema, t.relname::text AS table_name
    FROM (SELECT DISTINCT oid FROM reached WHERE relkind = 'r') AS under
    JOIN pg_class t ON t.oid = under.oid
    JOIN pg_namespace n ON n.oid = t.relnamespace
   WHERE EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = t.oid AND a.attname = 'account_id' AND NOT a.attisdropped)
     AND NOT EXISTS (SELECT 1 FROM pg_trigger g WHERE g.tgrelid = t.oid AND g.tgname IN ('loanql_notice_insert', 'loanql_notice_update', 'loanql_notice_delete'))
   ORDER BY 1, 2`;

/**
 * Makes every table the metadata's collections read send change notices (README, "Subscriptions"):
 * migration 0029 gave them to loanql's own tables, and a lender's own tables, made since, had
 * none — a live query over them was refreshed only by `SUBSCRIPTION_FALLBACK_MS`. Each plain
 * table of `tables` or under one of them that is a view (no trigger can tell of a write to a
 * view: its live queries are refreshed by its tables' notices, `Metadata.tablesUnderViews`)
 * with an `account_id` column and none of the three triggers gets them as 0029/0031 make
 * them, without a key argument: its notices name no rows (every subscriber of the account is
 * refreshed), until the lender gives its triggers a key column (engine/README.md,
 * "Subscriptions"). A table that has any of them is left as it is. Only with `tenantColumn`
 * `account_id` (the notice functions read that column). Returns the tables given notices
 * (`schema.table`); nothing to add, no transaction and no lock.
 */
export async function addChangeNotices(db: Database, tenantColumn: string, tables: NamedTables): Promise<readonly string[]> {
  if (tenantColumn !== 'account_id' || !tables.length) return [];
  const wanted = [tables.map(([schema]) => schema), tables.map(([, table]) => table)];
  if (!(await db.query(TABLES_WITHOUT_NOTICES, wanted)).rows.length) return [];
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [NOTICE_TRIGGERS_LOCK]);
    const { rows } = await tx.query<{ table_schema: string; table_name: string }>(TABLES_WITHOUT_NOTICES, wanted);
    for (const { table_schema: schema, table_name: table } of rows) {
      const { rows: statements } = await tx.query<{ text: string }>(
        `SELECT format(trigger_text, $1::text, $2::text) AS text FROM unnest(ARRAY[
           'CREATE TRIGGER loanql_notice_insert AFTER INSERT ON %I.%I REFERENCING NEW TABLE AS loanql_changed_rows FOR EACH STATEMENT EXECUTE FUNCTION loanql_notice_changes()',
           'CREATE TRIGGER loanql_notice_update AFTER UPDATE ON %I.%I REFERENCING OLD TABLE AS loanql_old_rows NEW TABLE AS loanql_changed_rows FOR EACH STATEMENT EXECUTE FUNCTION loanql_notice_updates()',
           'CREATE TRIGGER loanql_notice_delete AFTER DELETE ON %I.%I REFERENCING OLD TABLE AS loanql_changed_rows FOR EACH STATEMENT EXECUTE FUNCTION loanql_notice_changes()'
         ]) AS trigger_text`,
        [schema, table],
      );
      for (const { text } of statements) await tx.query(text);
    }
    return rows.map((row) => `${row.table_schema}.${row.table_name}`);
  });
}
