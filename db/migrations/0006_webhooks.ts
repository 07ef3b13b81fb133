/**
 * Events and webhooks (issue 16): a transactional outbox filled by database triggers.
 *
 * - `webhook_endpoints`: per account, a URL, the event types it wants (`NULL`: all), a signing
 *   secret (`whsec_…`, kept as issued: signing needs it; only the delivery worker reads it) and
 *   whether it is active.
 * - `loanql_event_types`: the event types of the metadata (`event_types:`), written by the apply
 *   step (`app/webhooks/eventTriggers.ts`), not by hand. Not a tenant table: it is configuration.
 * - `loanql_capture_event()`: the one trigger function. The apply step attaches it (AFTER INSERT OR
 *   UPDATE OR DELETE, FOR EACH ROW) to every table an event type names. For each event type of
 *   the table and operation whose condition holds, it writes the event into `webhook_events` and
 *   one `webhook_deliveries` row per active endpoint of the row's account subscribed to it — in
 *   the write's own transaction, so a rolled-back write leaves nothing. An account without an
 *   active subscribed endpoint stores nothing (the seeder's new accounts among them). The session
 *   setting `loanql.capture_events = off` turns capture off for a transaction's writer.
 * - `webhook_deliveries`: one per (event, endpoint), the delivery state the worker claims with
 *   `FOR UPDATE SKIP LOCKED`; `webhook_attempts`: one row per HTTP attempt (status, duration).
 */
export const name = '0006_webhooks';

export const sql = /* sql */ `
CREATE TABLE webhook_endpoints (
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  url text NOT NULL,
  description text NOT NULL DEFAULT '',
  event_types text[],
  secret text NOT NULL CHECK (secret ~ '^whsec_[A-Za-z0-9+/]+={0,2}$'),
  active boolean NOT NULL DEFAULT true,
  disabled_reason text,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, id)
);
CREATE INDEX webhook_endpoints_active ON webhook_endpoints (account_id) WHERE active;

CREATE TABLE loanql_event_types (
  type text PRIMARY KEY,
  table_name text NOT NULL,
  operation text NOT NULL CHECK (operation IN ('INSERT', 'UPDATE', 'DELETE')),
  -- {"changed": [columns], "set": [columns], "becomes": {column: json value}}; null members: no condition
  condition jsonb NOT NULL DEFAULT '{}',
  -- {payload key: column}
  payload jsonb NOT NULL
);
CREATE TABLE loanql_event_state (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  definition_hash text NOT NULL,
  tables text[] NOT NULL
);

CREATE TABLE webhook_events (
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  type text NOT NULL,
  data jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, id)
);
CREATE UNIQUE INDEX webhook_events_id ON webhook_events (id);
CREATE INDEX webhook_events_created ON webhook_events (account_id, created_at);

CREATE TABLE webhook_deliveries (
  account_id uuid NOT NULL,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  event_id uuid NOT NULL,
  endpoint_id uuid NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  -- attempts made before the last redelivery: the attempt limit counts from here
  attempts_before_redelivery integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  last_status_code integer,
  last_error text,
  last_duration_ms integer,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, id),
  UNIQUE (account_id, event_id, endpoint_id),
  FOREIGN KEY (account_id, event_id) REFERENCES webhook_events (account_id, id) ON DELETE CASCADE,
  FOREIGN KEY (account_id, endpoint_id) REFERENCES webhook_endpoints (account_id, id) ON DELETE CASCADE
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (account_id, endpoint_id, created_at);

CREATE TABLE webhook_attempts (
  account_id uuid NOT NULL,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  delivery_id uuid NOT NULL,
  attempt integer NOT NULL,
  status_code integer,
  error text,
  duration_ms integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, id),
  FOREIGN KEY (account_id, delivery_id) REFERENCES webhook_deliveries (account_id, id) ON DELETE CASCADE
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (account_id, delivery_id, attempt);

CREATE OR REPLACE FUNCTION loanql_capture_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  new_row jsonb;
  old_row jsonb;
  row_account uuid;
  definition record;
  new_event uuid;
BEGIN
  IF current_setting('loanql.capture_events', true) = 'off' THEN RETURN NULL; END IF;
  IF TG_OP = 'DELETE' THEN row_account := OLD.account_id; ELSE row_account := NEW.account_id; END IF;
  -- The common case first, before any row is turned into JSON: an account without an active endpoint stores nothing.
  IF NOT EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.account_id = row_account AND e.active) THEN RETURN NULL; END IF;
  IF TG_OP <> 'DELETE' THEN new_row := to_jsonb(NEW); END IF;
  IF TG_OP <> 'INSERT' THEN old_row := to_jsonb(OLD); END IF;

  FOR definition IN SELECT * FROM loanql_event_types t WHERE t.table_name = TG_TABLE_NAME AND t.operation = TG_OP ORDER BY t.type LOOP
    IF definition.condition ? 'changed' AND NOT EXISTS (
      SELECT 1 FROM jsonb_array_elements_text(definition.condition -> 'changed') c(col)
      WHERE (old_row -> c.col) IS DISTINCT FROM (new_row -> c.col)) THEN CONTINUE; END IF;
    IF definition.condition ? 'set' AND EXISTS (
      SELECT 1 FROM jsonb_array_elements_text(definition.condition -> 'set') c(col)
      WHERE NOT (coalesce(jsonb_typeof(old_row -> c.col), 'null') = 'null' AND coalesce(jsonb_typeof(new_row -> c.col), 'null') <> 'null')) THEN CONTINUE; END IF;
    IF definition.condition ? 'becomes' AND EXISTS (
      SELECT 1 FROM jsonb_each(definition.condition -> 'becomes') b(col, value)
      WHERE (new_row -> b.col) IS DISTINCT FROM b.value OR (old_row -> b.col) IS NOT DISTINCT FROM b.value) THEN CONTINUE; END IF;
    IF NOT EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.account_id = row_account AND e.active
                   AND (e.event_types IS NULL OR definition.type = ANY (e.event_types))) THEN CONTINUE; END IF;

    INSERT INTO webhook_events (account_id, type, data)
    VALUES (row_account, definition.type, jsonb_build_object(
      'old', CASE WHEN old_row IS NULL THEN NULL ELSE (SELECT coalesce(jsonb_object_agg(p.key, old_row -> p.col), '{}') FROM jsonb_each_text(definition.payload) p(key, col)) END,
      'new', CASE WHEN new_row IS NULL THEN NULL ELSE (SELECT coalesce(jsonb_object_agg(p.key, new_row -> p.col), '{}') FROM jsonb_each_text(definition.payload) p(key, col)) END))
    RETURNING id INTO new_event;
    INSERT INTO webhook_deliveries (account_id, event_id, endpoint_id)
    SELECT row_account, new_event, e.id FROM webhook_endpoints e
    WHERE e.account_id = row_account AND e.active AND (e.event_types IS NULL OR definition.type = ANY (e.event_types));
  END LOOP;
  RETURN NULL;
END $$;
`;
