import type { Database } from '../../db/index.js';
import { postWebhook, type AttemptResult } from './send.js';
import { retryDelayMs, type WebhookSettings } from './settings.js';
import { signWebhook } from './signature.js';

/** A claimed delivery with what sending it needs. */
interface ClaimedDelivery {
  account_id: string;
  id: string;
  event_id: string;
  endpoint_id: string;
  attempt: number;
  attempts_before_redelivery: number;
  type: string;
  /** The event's payload as PostgreSQL writes it (`jsonb` text): numbers keep their exact digits. */
  data: string;
  event_created_at: string;
  url: string;
  secret: string;
  endpoint_active: boolean;
  account_slug: string;
}

/** Extra time a claim holds a delivery beyond the attempt's own time limit. */
const LEASE_MARGIN_MS = 5_000;

/**
 * Claims due deliveries and leases them: the claim (`FOR UPDATE SKIP LOCKED`, so processes never
 * take the same rows) counts the attempt and moves `next_attempt_at` past the attempt's time
 * limit, and commits before anything is sent. A process killed mid-send leaves the delivery
 * pending; it is due again when the lease ends, and is sent again with the same `webhook-id`
 * (at least once). Per endpoint not `busy` (at this process's per-endpoint limit) it takes at
 * most `perEndpoint` of its earliest due deliveries (index `webhook_deliveries_endpoint_due`), so
 * a slow endpoint's backlog never hides another's, then the earliest `$1` of those. A claim costs
 * one index probe per endpoint, whatever the backlog: an earlier form read the 1,000 earliest
 * due rows of all endpoints skipping busy ones — every row of a busy endpoint's backlog, ~15 ms
 * a claim at 20,000 pending, which took the CPU the writes needed (bench/README.md, "Webhooks").
 */
const CLAIM = `
WITH due AS (
  SELECT picked.account_id, picked.id
    FROM webhook_endpoints e,
         LATERAL (SELECT d.account_id, d.id, d.next_attempt_at FROM webhook_deliveries d
                   WHERE d.account_id = e.account_id AND d.endpoint_id = e.id AND d.status = 'pending' AND d.next_attempt_at <= now()
                   ORDER BY d.next_attempt_at LIMIT $3
                   FOR UPDATE SKIP LOCKED) picked
   WHERE NOT (e.id = ANY ($2::uuid[]))
   ORDER BY picked.next_attempt_at
   LIMIT $1)
UPDATE webhook_deliveries d
   SET attempts = d.attempts + 1, next_attempt_at = now() + $4 * interval '1 millisecond', updated_at = now()
  FROM due, webhook_events ev, webhook_endpoints e, accounts a
 WHERE d.account_id = due.account_id AND d.id = due.id
   AND ev.account_id = d.account_id AND ev.id = d.event_id
   AND e.account_id = d.account_id AND e.id = d.endpoint_id
   AND a.id = d.account_id
RETURNING d.account_id, d.id, d.event_id, d.endpoint_id, d.attempts AS attempt, d.attempts_before_redelivery, ev.type, ev.data::text AS data,
          to_char(ev.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS event_created_at, e.url, e.secret, e.active AS endpoint_active, a.slug AS account_slug`;

/**
 * Moves captured events from the outbox into `webhook_events` and makes one delivery per active
 * endpoint of the event's account subscribed to its type — the fan-out the capture trigger no
 * longer does inside the write (migration 0008). One statement, so one transaction: a row is
 * either still in the outbox or fanned out, whatever happens to the process. `SKIP LOCKED` lets
 * several workers take disjoint batches. Rows of a deleted account are dropped. The endpoints are
 * those active at fan-out (normally milliseconds after the write): one disabled in between gets
 * no delivery; the event is stored all the same.
 */
const FAN_OUT = `
WITH taken AS (
  DELETE FROM webhook_outbox o
   WHERE o.seq = ANY (ARRAY(SELECT seq FROM webhook_outbox ORDER BY seq LIMIT $1 FOR UPDATE SKIP LOCKED))
  RETURNING o.seq, o.account_id, o.type, o.data, o.created_at),
events AS (
  INSERT INTO webhook_events (account_id, type, data, created_at)
  SELECT t.account_id, t.type, t.data::jsonb, t.created_at FROM taken t
   WHERE EXISTS (SELECT 1 FROM accounts a WHERE a.id = t.account_id)
   ORDER BY t.seq
  RETURNING account_id, id, type),
deliveries AS (
  INSERT INTO webhook_deliveries (account_id, event_id, endpoint_id)
  SELECT ev.account_id, ev.id, e.id FROM events ev
    JOIN webhook_endpoints e ON e.account_id = ev.account_id AND e.active AND (e.event_types IS NULL OR ev.type = ANY (e.event_types))
  RETURNING 1)
SELECT (SELECT count(*) FROM taken)::int AS taken, (SELECT count(*) FROM deliveries)::int AS deliveries`;

/**
 * What an idle worker asks, prepared, at every poll (four a second by default): whether the outbox
 * holds a row, and whether any endpoint exists. It runs `FAN_OUT` only when a row waits — the
 * fan-out is deliberately not prepared (see `#fanOut`), so each run parses and plans it: ~0.7 ms
 * of PostgreSQL 15's CPU (more on PGlite) every poll of an idle service, against ~0.03 ms for
 * this — and `CLAIM` only when an endpoint exists (a delivery is claimed only through its
 * endpoint's row): a database without endpoints (a new install, the demo, most tests) no longer
 * plans and runs the claim at every poll (3.6 ms a poll on PGlite). A row or endpoint written
 * just after the answer waits for the next poll, as one written just after a fan-out does.
 */
const WORK_WAITING = 'SELECT EXISTS (SELECT 1 FROM webhook_outbox) AS waiting, EXISTS (SELECT 1 FROM webhook_endpoints) AS endpoints';

/** Outbox rows fanned out per statement. */
const FAN_OUT_BATCH = 500;
/** A worker fans out at most this often (an idle one at every poll), again at once after a full batch ... */
const FAN_OUT_INTERVAL_MS = 20;
/**
 * ... unless it is saturated (its last claim filled every free slot, or an endpoint is at its
 * per-endpoint limit): then at most one batch this often. The outbox then holds the backlog (one
 * cheap row per event) instead of `webhook_events` and `webhook_deliveries` (two rows, seven index
 * entries, three foreign-key checks per event — the fan-out's cost), since deliveries made now
 * would only wait; other endpoints' events still move on at a batch a second or more.
 */
const FAN_OUT_SATURATED_INTERVAL_MS = 1000;

export interface WorkerLogger {
  warn(object: Record<string, unknown>, message: string): void;
  debug?(object: Record<string, unknown>, message: string): void;
}

/** How one delivery attempt ended: delivered, to be retried, or given up (the last attempt, 410 Gone, or a disabled endpoint). */
export type DeliveryOutcome = 'succeeded' | 'retry' | 'failed';

/**
 * The delivery worker: polls for due deliveries, sends each signed (Standard Webhooks), records
 * the attempt, and schedules a retry with backoff, `failed` after the last attempt, or disables
 * the endpoint on 410. Runs inside the service and as `loanql worker`; any number of processes
 * may run it against one database.
 */
export class WebhookWorker {
  /**
   * Attempts being sent, by delivery and attempt: a redelivery asked for while an attempt is in
   * flight makes the delivery due at once, so two attempts of one delivery can be in flight.
   */
  readonly #inFlight = new Map<string, Promise<void>>();
  readonly #perEndpoint = new Map<string, number>();
  #timer: NodeJS.Timeout | null = null;
  #running = false;
  #ticking: Promise<void> | null = null;
  #again = false;
  #lastFanOut = -Infinity;
  #outboxFull = false;
  #saturated = false;
  /** An endpoint existed at some look: from then on every poll claims (see `WORK_WAITING`). */
  #endpointsSeen = false;

  constructor(
    private readonly db: Database,
    private readonly settings: WebhookSettings,
    private readonly logger: WorkerLogger,
    /** Told of each attempt's outcome once it is recorded (the service's metrics). */
    private readonly onOutcome: (outcome: DeliveryOutcome) => void = () => {},
  ) {}

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#schedule(0);
  }

  /** Stops claiming; waits for the attempts in flight to finish (each is bounded by its timeout). */
  async stop(): Promise<void> {
    this.#running = false;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#ticking) await this.#ticking.catch(() => undefined);
    await Promise.allSettled([...this.#inFlight.values()]);
  }

  /** Deliveries being sent by this process now. */
  get inFlight(): number {
    return this.#inFlight.size;
  }

  #schedule(delayMs: number): void {
    if (!this.#running) return;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#tick();
    }, delayMs);
    this.#timer.unref();
  }

  #tick(): void {
    if (!this.#running) return;
    if (this.#ticking) {
      this.#again = true;
      return;
    }
    this.#ticking = this.#claimAndSend()
      .then((claimedFull) => {
        this.#ticking = null;
        const again = this.#again || claimedFull;
        this.#again = false;
        this.#schedule(again ? 0 : this.settings.pollMs);
      })
      .catch((error: unknown) => {
        this.#ticking = null;
        this.logger.warn({ err: error }, 'webhook worker: claiming deliveries failed; retrying');
        this.#schedule(Math.max(this.settings.pollMs, 1000));
      });
  }

  /**
   * Fans out the outbox when due and a row waits (asked with `WORK_WAITING`, which also tells
   * whether an endpoint exists, until one does); true when it took a full batch (more may be waiting).
   */
  async #fanOut(): Promise<boolean> {
    const elapsed = performance.now() - this.#lastFanOut;
    const due = !(this.#saturated ? elapsed < FAN_OUT_SATURATED_INTERVAL_MS : elapsed < FAN_OUT_INTERVAL_MS && !this.#outboxFull);
    if (!this.#outboxFull && (due || !this.#endpointsSeen)) {
      const { waiting, endpoints } = (await this.db.query<{ waiting: boolean; endpoints: boolean }>(WORK_WAITING, [], { reusable: true })).rows[0]!;
      if (endpoints) this.#endpointsSeen = true;
      if (!waiting) {
        if (due) this.#lastFanOut = performance.now();
        return false;
      }
    }
    if (!due) return false;
    this.#lastFanOut = performance.now();
    // Not prepared: the outbox swings between empty and thousands of rows, and a plan cached while
    // it was empty (sequential scans) would cost milliseconds per run when it is not.
    const { rows } = await this.db.query<{ taken: number; deliveries: number }>(FAN_OUT, [FAN_OUT_BATCH]);
    this.#outboxFull = rows[0]!.taken === FAN_OUT_BATCH;
    return this.#outboxFull && !this.#saturated;
  }

  /**
   * Fans out captured events, then claims as many deliveries as there are free slots; true when
   * there is more to do at once (every slot filled, or a full outbox batch).
   */
  async #claimAndSend(): Promise<boolean> {
    const moreOutbox = await this.#fanOut();
    // No endpoint has existed yet: nothing can be due (a delivery is claimed through its endpoint).
    if (!this.#endpointsSeen) return moreOutbox;
    const free = this.settings.concurrency - this.#inFlight.size;
    if (free <= 0) {
      this.#saturated = true;
      return moreOutbox;
    }
    const busy = [...this.#perEndpoint].filter(([, count]) => count >= this.settings.perEndpointConcurrency).map(([id]) => id);
    const { rows } = await this.db.query<ClaimedDelivery>(CLAIM, [free, busy, this.settings.perEndpointConcurrency, this.settings.timeoutMs + LEASE_MARGIN_MS], { reusable: true });
    for (const delivery of rows) {
      const attemptKey = `${delivery.id}#${delivery.attempt}`;
      this.#perEndpoint.set(delivery.endpoint_id, (this.#perEndpoint.get(delivery.endpoint_id) ?? 0) + 1);
      const work = this.#deliver(delivery)
        .catch((error: unknown) => this.logger.warn({ err: error, delivery: delivery.id }, 'webhook worker: recording a delivery failed; it is retried when its lease ends'))
        .finally(() => {
          this.#inFlight.delete(attemptKey);
          const left = (this.#perEndpoint.get(delivery.endpoint_id) ?? 1) - 1;
          if (left > 0) this.#perEndpoint.set(delivery.endpoint_id, left);
          else this.#perEndpoint.delete(delivery.endpoint_id);
          this.#tick();
        });
      this.#inFlight.set(attemptKey, work);
    }
    this.#saturated = rows.length === free || [...this.#perEndpoint.values()].some((count) => count >= this.settings.perEndpointConcurrency);
    return rows.length === free || moreOutbox;
  }

  async #deliver(delivery: ClaimedDelivery): Promise<void> {
    if (!delivery.endpoint_active) {
      await this.db.query(
        `UPDATE webhook_deliveries SET status = 'failed', last_error = 'the endpoint is disabled', attempts = attempts - 1, updated_at = now() WHERE account_id = $1 AND id = $2`,
        [delivery.account_id, delivery.id],
      );
      this.onOutcome('failed');
      return;
    }
    // `data` goes out as PostgreSQL wrote it, so money keeps its exact digits (`1250.00`, not
    // the `1250` a round trip through a JavaScript number would make of it).
    const envelope = JSON.stringify({ id: delivery.event_id, type: delivery.type, created_at: delivery.event_created_at, account: delivery.account_slug, data: null, attempt: delivery.attempt });
    // (A function replacement: a `$&` in a text value is not a pattern here.)
    const body = envelope.replace('"data":null', () => `"data":${delivery.data}`);
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = {
      'webhook-id': delivery.event_id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signWebhook(delivery.secret, delivery.event_id, timestamp, body),
    };
    const result = await postWebhook(delivery.url, headers, body, { timeoutMs: this.settings.timeoutMs, allowPrivate: this.settings.allowPrivate });
    await this.#record(delivery, result);
  }

  async #record(delivery: ClaimedDelivery, result: AttemptResult): Promise<void> {
    const succeeded = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
    const gone = result.statusCode === 410;
    const exhausted = delivery.attempt - delivery.attempts_before_redelivery >= this.settings.maxAttempts;
    const status = succeeded ? 'succeeded' : gone || exhausted ? 'failed' : 'pending';
    const error = result.error ?? (succeeded ? null : `HTTP ${result.statusCode}`);
    const retryMs = status === 'pending' ? retryDelayMs(this.settings, delivery.attempt - delivery.attempts_before_redelivery) : 0;
    // One statement (so one transaction and one round trip): the delivery's state, the attempt's
    // log row, and on 410 the endpoint switched off. A delivery removed while its attempt was in
    // flight (its endpoint removed) is not recorded: nothing is left to record it for.
    await this.db.query(
      `WITH delivery AS (
         UPDATE webhook_deliveries SET status = $3, last_status_code = $4, last_error = $5, last_duration_ms = $6,
                next_attempt_at = now() + $7 * interval '1 millisecond', updated_at = now()
          WHERE account_id = $1 AND id = $2 AND attempts = $8),
       attempt AS (
         INSERT INTO webhook_attempts (account_id, delivery_id, attempt, status_code, error, duration_ms)
         SELECT $1, $2, $8, $4, $5, $6 WHERE EXISTS (SELECT 1 FROM webhook_deliveries WHERE account_id = $1 AND id = $2)),
       gone AS (
         UPDATE webhook_endpoints SET active = false, disabled_reason = 'the endpoint answered 410 Gone' WHERE $9::boolean AND account_id = $1 AND id = $10)
       SELECT 1`,
      [delivery.account_id, delivery.id, status, result.statusCode, error, result.durationMs, retryMs, delivery.attempt, gone, delivery.endpoint_id],
      { reusable: true },
    );
    this.onOutcome(status === 'pending' ? 'retry' : status);
    if (!succeeded) this.logger.debug?.({ delivery: delivery.id, event: delivery.event_id, attempt: delivery.attempt, status: result.statusCode, error, next: status }, 'webhook attempt failed');
  }
}
