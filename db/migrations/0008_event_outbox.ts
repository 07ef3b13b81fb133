/**
 * Cheaper event capture (issue 16, Done-when 8): one outbox row per event in the write's
 * transaction, fanned out to endpoint deliveries by the worker.
 *
 * 0006 wrote, inside every captured write, an event row (three indexes, a foreign key) and one
 * delivery row per subscribed endpoint (four indexes, two foreign keys), from one generic
 * PL/pgSQL function that looked up the event types and turned the whole row into JSON: a
 * captured payment insert cost about twice a bare one (bench/README.md, "Webhooks").
 *
 * - `webhook_outbox`: what a capture trigger writes, one row per event — account, type, payload,
 *   time — with one index (the increasing `seq`) and no foreign key. The worker moves rows from
 *   here into `webhook_events` and `webhook_deliveries` in one transaction (so a row is either
 *   still here or fanned out, also across kill -9). A queue, not a tenant table: its key is `seq`,
 *   and rows of a deleted account are dropped by the worker.
 * - `webhook_deliveries_endpoint_due` replaces `webhook_deliveries_due`: the worker now claims each
 *   endpoint's earliest due deliveries, one index probe per endpoint, whatever the backlog.
 * - The generic `loanql_capture_event()` is dropped with its triggers; the apply step
 *   (`app/webhooks/eventTriggers.ts`) now generates one function per table from the metadata's
 *   event types (conditions as column comparisons, payloads built from the named columns) and
 *   attaches it. Clearing the stored definition hash makes the next start re-apply them.
 */
export const name = '0008_event_outbox';

export const sql = /* sql */ `
CREATE TABLE webhook_outbox (
  seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id uuid NOT NULL,
  type text NOT NULL,
  data jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
-- The worker claims per endpoint (app/webhooks/worker.ts, CLAIM): each endpoint's earliest due deliveries.
CREATE INDEX webhook_deliveries_endpoint_due ON webhook_deliveries (account_id, endpoint_id, next_attempt_at) WHERE status = 'pending';
DROP INDEX webhook_deliveries_due;
DROP FUNCTION IF EXISTS loanql_capture_event() CASCADE;
UPDATE loanql_event_state SET definition_hash = '';
`;
