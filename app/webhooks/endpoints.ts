import type { Queryable } from '../../db/index.js';
import { UserInputError } from '../errors.js';
import { checkWebhookUrl } from './destination.js';
import { newSigningSecret } from './signature.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An endpoint as listed: never its secret. */
export interface WebhookEndpoint {
  readonly id: string;
  readonly accountId: string;
  readonly accountSlug: string;
  readonly url: string;
  readonly description: string;
  /** null: every event type. */
  readonly eventTypes: readonly string[] | null;
  readonly active: boolean;
  readonly disabledReason: string | null;
  readonly createdAt: string;
}

export interface CreatedWebhookEndpoint extends WebhookEndpoint {
  /** The signing secret (`whsec_…`), returned only here. */
  readonly secret: string;
}

export interface NewEndpointInput {
  readonly url: string;
  readonly eventTypes?: readonly string[] | null;
  readonly description?: string;
}

const ENDPOINT_COLUMNS = `e.id, e.account_id, a.slug AS account_slug, e.url, e.description, e.event_types, e.active, e.disabled_reason, e.created_at`;
type EndpointRow = { id: string; account_id: string; account_slug: string; url: string; description: string; event_types: string[] | null; active: boolean; disabled_reason: string | null; created_at: string };

function toEndpoint(row: EndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    accountId: row.account_id,
    accountSlug: row.account_slug,
    url: row.url,
    description: row.description,
    eventTypes: row.event_types,
    active: row.active,
    disabledReason: row.disabled_reason,
    createdAt: row.created_at,
  };
}

/** What `createWebhookEndpoint` and `checkNewEndpoint` are told besides the input. */
export interface NewEndpointRules {
  /** The metadata's event types. */
  readonly knownEventTypes: ReadonlySet<string>;
  /** `WEBHOOK_ALLOW_PRIVATE`: a destination on this machine or a private network is allowed. */
  readonly allowPrivate: boolean;
}

/**
 * Checks a new endpoint without the database: the URL (http or https, no control characters nor
 * credentials, a public destination unless allowed — its host resolved), the event types against
 * `knownEventTypes`, the description. One `UserInputError` naming every field wrong. `loanql
 * webhook add` runs it before it opens the database; `createWebhookEndpoint` runs it again.
 */
export async function checkNewEndpoint(input: NewEndpointInput, rules: NewEndpointRules): Promise<{ url: string; eventTypes: string[] | null; description: string }> {
  const fields = new Map<string, string>();
  const urlProblem = typeof input.url === 'string' && input.url.trim() !== '' ? await checkWebhookUrl(input.url.trim(), rules.allowPrivate) : 'is required';
  if (urlProblem) fields.set('url', urlProblem);
  let eventTypes: string[] | null = null;
  if (input.eventTypes && input.eventTypes.length) {
    const unknown = input.eventTypes.filter((type) => !rules.knownEventTypes.has(type));
    if (unknown.length) fields.set('events', unknownEventTypesText([...new Set(unknown)], rules.knownEventTypes));
    eventTypes = [...new Set(input.eventTypes)];
  }
  const description = input.description ?? '';
  if (description.length > 500) fields.set('description', 'is longer than 500 characters');
  if (/\u0000/.test(description)) fields.set('description', 'must not contain NUL characters');
  if (fields.size) throw new UserInputError(`webhook endpoint refused: ${[...fields].map(([k, v]) => `${k} ${v}`).join('; ')}`, 400, Object.fromEntries(fields));
  return { url: input.url.trim(), eventTypes, description };
}

/**
 * The SPEC's event names (SPEC §12) that loanql carries in another event type: the name, and the
 * type whose payload holds it with what it holds. Not event types: a subscription to one is
 * refused saying where to look (it said only "unknown event type", to a user who had read the SPEC).
 */
const CARRIED_ELSEWHERE: ReadonlyMap<string, { readonly type: string; readonly what: string }> = new Map([['payment.allocated', { type: 'payment.posted', what: 'the allocation' }]]);

/**
 * Why `unknown` are refused: each SPEC name another known type carries says which one
 * ("payment.allocated: no such event type; the allocation is in payment.posted's payload"), the
 * rest are unknown event types; then the known ones.
 */
function unknownEventTypesText(unknown: readonly string[], known: ReadonlySet<string>): string {
  const carrierOf = (type: string) => {
    const carrier = CARRIED_ELSEWHERE.get(type);
    return carrier && known.has(carrier.type) ? carrier : undefined;
  };
  const plain = unknown.filter((type) => !carrierOf(type));
  const said = plain.length ? [`unknown event type ${plain.join(', ')}`] : [];
  for (const type of unknown) {
    const carrier = carrierOf(type);
    if (carrier) said.push(`${type}: no such event type; ${carrier.what} is in ${carrier.type}'s payload`);
  }
  return `${said.join('; ')} (known: ${[...known].sort().join(', ')})`;
}

/**
 * Adds an endpoint to an account, checked by `checkNewEndpoint`: an unknown event type, a URL
 * that is not http(s), or a private destination (unless allowed) is a `UserInputError` naming
 * the field. The secret is made here and returned once.
 */
export async function createWebhookEndpoint(db: Queryable, accountId: string, input: NewEndpointInput, rules: NewEndpointRules): Promise<CreatedWebhookEndpoint> {
  const { url, eventTypes, description } = await checkNewEndpoint(input, rules);
  const secret = newSigningSecret();
  const { rows } = await db.query<EndpointRow>(
    `WITH created AS (
       INSERT INTO webhook_endpoints (account_id, url, description, event_types, secret) VALUES ($1, $2, $3, $4::text[], $5)
       RETURNING *)
     SELECT ${ENDPOINT_COLUMNS} FROM created e JOIN accounts a ON a.id = e.account_id`,
    [accountId, url, description, eventTypes, secret],
  );
  return { ...toEndpoint(rows[0]!), secret };
}

/** Endpoints, newest first; of one account when `accountId` is given. */
export async function listWebhookEndpoints(db: Queryable, accountId?: string): Promise<WebhookEndpoint[]> {
  const { rows } = await db.query<EndpointRow>(
    `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints e JOIN accounts a ON a.id = e.account_id
      WHERE $1::uuid IS NULL OR e.account_id = $1::uuid ORDER BY e.created_at DESC, e.id`,
    [accountId ?? null],
  );
  return rows.map(toEndpoint);
}

/**
 * Event types active endpoints subscribe to and the metadata (`eventTypes`, the names it
 * declares) has not — removed or renamed in the file, or their collection removed: one warning
 * per event type, naming the endpoints by id and account (not by URL, which may hold a token). Such an edit is not refused (taking an
 * event type away is how an admin may stop it), but before, it loaded with no word and those
 * endpoints silently received nothing more of that type. With `accountId`, only that account's endpoints.
 */
export async function endpointsWithoutEventType(db: Queryable, eventTypes: Iterable<string>, accountId?: string): Promise<string[]> {
  const { rows } = await db.query<{ event_type: string; endpoints: string[] | string; n: number }>(
    `SELECT t.event_type, count(*)::int AS n, (array_agg(e.id::text || ' of ' || a.slug ORDER BY e.created_at, e.id))[1:5] AS endpoints
       FROM webhook_endpoints e JOIN accounts a ON a.id = e.account_id, unnest(e.event_types) AS t(event_type)
      WHERE e.active AND NOT (t.event_type = ANY ($1::text[])) AND ($2::uuid IS NULL OR e.account_id = $2::uuid)
      GROUP BY t.event_type ORDER BY t.event_type`,
    [[...eventTypes], accountId ?? null],
  );
  return rows.map(({ event_type: type, endpoints, n }) => {
    const shown = Array.isArray(endpoints) ? endpoints : endpoints.replace(/^\{|\}$/g, '').split(',').map((item) => item.replace(/^"|"$/g, ''));
    const one = n === 1;
    return `event type ${type}: ${n} active webhook endpoint${one ? '' : 's'} (${shown.join(', ')}${n > shown.length ? ', …' : ''}) ${one ? 'subscribes' : 'subscribe'} to it, and the metadata has no such event type: ${one ? 'it receives' : 'they receive'} none until the event type is back or ${one ? 'the endpoint is' : 'the endpoints are'} changed`;
  });
}

/** An endpoint's or an event's id as given (a CLI argument, a path): one not a uuid names none (`UserInputError`, 404). */
export function checkWebhookId(id: string, what: 'webhook endpoint' | 'event'): void {
  if (!UUID.test(id)) throw new UserInputError(`no ${what} ${id}`, 404);
}

/** Removes an endpoint with its deliveries (of one account when `accountId` is given). */
export async function removeWebhookEndpoint(db: Queryable, id: string, accountId?: string): Promise<void> {
  checkWebhookId(id, 'webhook endpoint');
  const { rowCount } = await db.query('DELETE FROM webhook_endpoints WHERE id = $1 AND ($2::uuid IS NULL OR account_id = $2::uuid)', [id, accountId ?? null]);
  if (!rowCount) throw new UserInputError(`no webhook endpoint ${id}`, 404);
}

/** Turns an endpoint off (nothing more is captured or sent for it) or on again. */
export async function setWebhookEndpointActive(db: Queryable, id: string, active: boolean, accountId?: string): Promise<void> {
  checkWebhookId(id, 'webhook endpoint');
  const { rowCount } = await db.query(
    `UPDATE webhook_endpoints SET active = $3, disabled_reason = CASE WHEN $3 THEN NULL ELSE 'disabled by an admin' END
      WHERE id = $1 AND ($2::uuid IS NULL OR account_id = $2::uuid)`,
    [id, accountId ?? null, active],
  );
  if (!rowCount) throw new UserInputError(`no webhook endpoint ${id}`, 404);
}

export interface WebhookDelivery {
  readonly id: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly endpointId: string;
  readonly status: 'pending' | 'succeeded' | 'failed';
  readonly attempts: number;
  readonly lastStatusCode: number | null;
  readonly lastError: string | null;
  readonly lastDurationMs: number | null;
  readonly nextAttemptAt: string;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** An endpoint's most recent deliveries (newest first), with the state of their last attempt. */
export async function listWebhookDeliveries(db: Queryable, endpointId: string, options: { accountId?: string; limit?: number } = {}): Promise<WebhookDelivery[]> {
  checkWebhookId(endpointId, 'webhook endpoint');
  const endpoint = await db.query('SELECT 1 FROM webhook_endpoints WHERE id = $1 AND ($2::uuid IS NULL OR account_id = $2::uuid)', [endpointId, options.accountId ?? null]);
  if (!endpoint.rows.length) throw new UserInputError(`no webhook endpoint ${endpointId}`, 404);
  const { rows } = await db.query<{
    id: string; event_id: string; type: string; endpoint_id: string; status: WebhookDelivery['status']; attempts: number;
    last_status_code: number | null; last_error: string | null; last_duration_ms: number | null; next_attempt_at: string; created_at: string; updated_at: string;
  }>(
    `SELECT d.id, d.event_id, ev.type, d.endpoint_id, d.status, d.attempts, d.last_status_code, d.last_error, d.last_duration_ms, d.next_attempt_at, d.created_at, d.updated_at
       FROM webhook_deliveries d JOIN webhook_events ev ON ev.account_id = d.account_id AND ev.id = d.event_id
      WHERE d.endpoint_id = $1 AND ($2::uuid IS NULL OR d.account_id = $2::uuid)
      ORDER BY d.created_at DESC, d.id LIMIT $3`,
    [endpointId, options.accountId ?? null, options.limit ?? 50],
  );
  return rows.map((row) => ({
    id: row.id,
    eventId: row.event_id,
    eventType: row.type,
    endpointId: row.endpoint_id,
    status: row.status,
    attempts: row.attempts,
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    lastDurationMs: row.last_duration_ms,
    nextAttemptAt: row.next_attempt_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }));
}

/**
 * Sends an event again to every active endpoint it was for (whatever its state: failed,
 * succeeded or still pending), or to `endpointId` alone when given (the dashboard's Redeliver on
 * an endpoint's page): the delivery is due now, with a fresh allowance of attempts, and keeps its
 * `webhook-id`. Returns how many deliveries were queued.
 */
export async function redeliverWebhookEvent(db: Queryable, eventId: string, accountId?: string, endpointId?: string): Promise<number> {
  checkWebhookId(eventId, 'event');
  if (endpointId !== undefined) checkWebhookId(endpointId, 'webhook endpoint');
  const event = await db.query('SELECT 1 FROM webhook_events WHERE id = $1 AND ($2::uuid IS NULL OR account_id = $2::uuid)', [eventId, accountId ?? null]);
  if (!event.rows.length) throw new UserInputError(`no event ${eventId}`, 404);
  const { rowCount } = await db.query(
    `UPDATE webhook_deliveries d SET status = 'pending', next_attempt_at = now(), attempts_before_redelivery = d.attempts, updated_at = now()
       FROM webhook_endpoints e
      WHERE d.event_id = $1 AND ($2::uuid IS NULL OR d.account_id = $2::uuid) AND ($3::uuid IS NULL OR d.endpoint_id = $3::uuid)
        AND e.account_id = d.account_id AND e.id = d.endpoint_id AND e.active`,
    [eventId, accountId ?? null, endpointId ?? null],
  );
  if (!rowCount) {
    throw new UserInputError(endpointId === undefined ? `event ${eventId} has no active endpoint to go to` : `event ${eventId} was not sent to this endpoint, or the endpoint is disabled`, 409);
  }
  return rowCount;
}
