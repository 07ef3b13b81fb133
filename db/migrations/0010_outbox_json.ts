/**
 * The outbox's payload as `json`, not `jsonb` (issue 16, Done-when 8: capture cost per write).
 *
 * A capture trigger builds each event's payload inside the write. Built as `json`
 * (`json_build_object`: the columns' text, concatenated) it costs the write less than as
 * `jsonb` (which also builds the binary structure), ~3 µs of the ~18 µs a captured payment
 * insert costs server-side (bench/README.md, "Webhooks"). The worker converts it to `jsonb` when
 * it moves the row into `webhook_events` (batched, off the write path). Both casts between
 * `json` and `jsonb` are assignment casts, so a capture function generated before this
 * migration keeps working until the next apply step re-generates it (its generator version
 * changed with this migration: `app/webhooks/eventTriggers.ts`).
 */
export const name = '0010_outbox_json';

export const sql = /* sql */ `
ALTER TABLE webhook_outbox ALTER COLUMN data TYPE json USING data::json;
UPDATE loanql_event_state SET definition_hash = '';
`;
