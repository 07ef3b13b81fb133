import { createHash } from 'node:crypto';
import type { Database } from '../../db/index.js';
import type { EventPayloadRelationship, EventType } from '../../metadata/index.js';
import { captureFunctionName, captureFunctionSql, capturePhaseOf, captureTriggerSql, quoteIdentifier, type CapturePhase } from './captureFunction.js';

/** The name of the capture trigger of each phase on every table an event type names. */
const TRIGGERS: ReadonlyMap<CapturePhase, string> = new Map([
  ['row', 'loanql_events'],
  ['commit', 'loanql_events_at_commit'],
]);
/** Serialises appliers (two services starting on one PostgreSQL, a reload beside a start). */
const APPLY_LOCK = 4242016;

/** Changes whenever the generated capture functions do, so that a new version re-applies them. */
const GENERATOR = "outbox-v4 (relationships in the payload, captured at commit; the account's currency beside amounts)";

/** A payload relationship as stored in `loanql_event_types.payload` (for reading). */
function relationshipDefinition(relationship: EventPayloadRelationship): Record<string, unknown> {
  return {
    relationship: relationship.kind,
    table: relationship.table,
    on: Object.fromEntries(relationship.mapping),
    ...(relationship.orderBy.length ? { order_by: relationship.orderBy } : {}),
    payload: { ...Object.fromEntries(relationship.payload), ...Object.fromEntries(relationship.related.map((nested) => [nested.key, relationshipDefinition(nested)])) },
  };
}

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
      payload: { ...Object.fromEntries(eventType.payload), ...Object.fromEntries(eventType.related.map((relationship) => [relationship.key, relationshipDefinition(relationship)])) },
    }));
}

/**
 * The migration-like step that makes the database capture the metadata's event types: under an
 * advisory lock, in one transaction, it replaces the rows of `loanql_event_types` (the
 * definitions, for reading), generates each table's capture functions (`captureFunction.ts`: one
 * per phase, `row` and `commit`) and attaches them (DROP TRIGGER IF EXISTS, CREATE TRIGGER) to
 * exactly the tables that have event types of that phase. It
 * does nothing when the stored definition hash is the current one, so a start or a reload that
 * changed no event type takes no table lock. Returns whether it changed anything.
 */
export async function applyEventTriggers(db: Database, eventTypes: ReadonlyMap<string, EventType>): Promise<boolean> {
  const rows = definitionRows(eventTypes);
  // Which types carry the currency follows the fields' types, not the stored rows: hashed too.
  const withCurrency = [...eventTypes.values()].filter((eventType) => eventType.withCurrency).map((eventType) => eventType.name).sort();
  const hash = createHash('sha256').update(GENERATOR).update(JSON.stringify(rows)).update(JSON.stringify(withCurrency)).digest('hex');
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
      for (const [phase, trigger] of TRIGGERS) {
        if (exists.rows.length) await tx.query(`DROP TRIGGER IF EXISTS ${trigger} ON ${quoteIdentifier(table)}`);
        await tx.query(`DROP FUNCTION IF EXISTS ${quoteIdentifier(captureFunctionName(table, phase))}()`);
      }
    }
    for (const table of tables) {
      for (const [phase, trigger] of TRIGGERS) {
        const ofTable = [...eventTypes.values()].filter((eventType) => eventType.table === table && capturePhaseOf(eventType) === phase);
        if (!ofTable.length) continue;
        await tx.query(await captureFunctionSql(tx, table, ofTable, phase));
        await tx.query(captureTriggerSql(trigger, table, phase));
      }
    }
    await tx.query(
      `INSERT INTO loanql_event_state (id, definition_hash, tables) VALUES (true, $1, $2::text[])
       ON CONFLICT (id) DO UPDATE SET definition_hash = EXCLUDED.definition_hash, tables = EXCLUDED.tables`,
      [hash, tables],
    );
    return true;
  });
}
