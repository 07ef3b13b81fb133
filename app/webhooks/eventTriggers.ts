import { createHash } from 'node:crypto';
import type { Database } from '../../db/index.js';
import type { EventType } from '../../metadata/index.js';
import { captureFunctionName, captureFunctionSql, captureTriggerSql, quoteIdentifier } from './captureFunction.js';

/** The name of the capture trigger on every table an event type names. */
const TRIGGER = 'loanql_events';
/** Serialises appliers (two services starting on one PostgreSQL, a reload beside a start). */
const APPLY_LOCK = 4242016;

/** Changes whenever the generated capture functions do, so that a new version re-applies them. */
const GENERATOR = 'outbox-v2 (0010: one statement per event, json payload, capture switch in WHEN)';

/** The rows of `loanql_event_types` for these event types, in a stable order. */
function definitionRows(eventTypes: ReadonlyMap<string, EventType>) {
  return [...eventTypes.values()]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((eventType) => ({
      type: eventType.name,
      table_name: eventType.table,
      operation: eventType.operation,
      condition: {
        ...(eventType.condition.changed ? { changed: eventType.condition.changed } : {}),
        ...(eventType.condition.set ? { set: eventType.condition.set } : {}),
        ...(eventType.condition.becomes ? { becomes: Object.fromEntries(eventType.condition.becomes) } : {}),
      },
      payload: Object.fromEntries(eventType.payload),
    }));
}

/**
 * The migration-like step that makes the database capture the metadata's event types: under an
 * advisory lock, in one transaction, it replaces the rows of `loanql_event_types` (the
 * definitions, for reading), generates each table's capture function (`captureFunction.ts`) and
 * attaches it (DROP TRIGGER IF EXISTS, CREATE TRIGGER) to exactly the tables that have event types. It
 * does nothing when the stored definition hash is the current one, so a start or a reload that
 * changed no event type takes no table lock. Returns whether it changed anything.
 */
export async function applyEventTriggers(db: Database, eventTypes: ReadonlyMap<string, EventType>): Promise<boolean> {
  const rows = definitionRows(eventTypes);
  const hash = createHash('sha256').update(GENERATOR).update(JSON.stringify(rows)).digest('hex');
  const tables = [...new Set(rows.map((row) => row.table_name))].sort();
  const current = await db.query<{ definition_hash: string }>('SELECT definition_hash FROM loanql_event_state');
  if (current.rows[0]?.definition_hash === hash) return false;
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [APPLY_LOCK]);
    const state = await tx.query<{ definition_hash: string; tables: string[] }>('SELECT definition_hash, tables FROM loanql_event_state');
    if (state.rows[0]?.definition_hash === hash) return false;
    await tx.query('DELETE FROM loanql_event_types');
    await tx.query(
      `INSERT INTO loanql_event_types (type, table_name, operation, condition, payload)
       SELECT type, table_name, operation, condition, payload FROM jsonb_to_recordset($1::jsonb)
         AS r(type text, table_name text, operation text, condition jsonb, payload jsonb)`,
      [JSON.stringify(rows)],
    );
    for (const table of new Set([...(state.rows[0]?.tables ?? []), ...tables])) {
      const exists = await tx.query('SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = $1', [table]);
      if (exists.rows.length) await tx.query(`DROP TRIGGER IF EXISTS ${TRIGGER} ON ${quoteIdentifier(table)}`);
      await tx.query(`DROP FUNCTION IF EXISTS ${quoteIdentifier(captureFunctionName(table))}()`);
    }
    for (const table of tables) {
      const ofTable = [...eventTypes.values()].filter((eventType) => eventType.table === table);
      await tx.query(await captureFunctionSql(tx, table, ofTable));
      await tx.query(captureTriggerSql(TRIGGER, table));
    }
    await tx.query(
      `INSERT INTO loanql_event_state (id, definition_hash, tables) VALUES (true, $1, $2::text[])
       ON CONFLICT (id) DO UPDATE SET definition_hash = EXCLUDED.definition_hash, tables = EXCLUDED.tables`,
      [hash, tables],
    );
    return true;
  });
}
