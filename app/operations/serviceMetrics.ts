import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { Database, PoolStatus, ReadReplicas, ReplicaHealth } from '../../db/index.js';
import type { DeliveryOutcome } from '../webhooks/index.js';
import type { AdmissionState, CostAdmission } from './costAdmission.js';
import { AccountTraffic } from './accountTraffic.js';
import { TalliedMetric, type Tally } from './talliedMetrics.js';

/** Where a request was answered, as metrics label it: a route template from a closed list (`routeOf`). */
export type RouteLabel = string;

/** What one finished request tells the metrics: nothing a client chose beyond closed lists. */
export interface ObservedRequest {
  readonly route: RouteLabel;
  /** `query`, `mutation`, `subscription`, or `none` (a REST route, or a request refused before its operation was known). */
  readonly operation: string;
  readonly status: number;
  readonly seconds: number;
  /** The engine's plan-cache lookup, when the request reached it. */
  readonly planCacheHit: boolean | null;
  /** Seconds the request's statement (a mutation: its transaction) took, when it ran one. */
  readonly databaseSeconds: number | null;
  /** `primary` or `replica` when reads are routed (`LoanQL-Read-From`), else null. */
  readonly readFrom: 'primary' | 'replica' | null;
  /** The account whose key or dashboard session sent it, once known: counted in `accounts`, never a label. */
  readonly accountId: string | null;
  /** When it ended (ms since the epoch, `Date.now()`), when the caller has read the clock already; now otherwise. */
  readonly endedAt?: number;
}

/** What the WebSocket API reports of itself (`GraphSockets.usage`). */
export interface SubscriptionUsage {
  readonly connections: number;
  readonly subscriptions: number;
  readonly cohorts: number;
  readonly statementsRun: number;
}

/** Latency buckets (seconds) of requests and statements: 1 ms to 10 s. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The metrics' sources other than requests: the pool, the webhook outbox, the replicas. */
export interface MetricSources {
  readonly db: Database;
  readonly replicas?: ReadReplicas | null;
}

/** One route template and operation type's requests: their latency, how many got each status, and (once one ran a statement) its operation type's statement time. */
interface RouteSeries {
  readonly duration: Tally;
  readonly byStatus: Map<number, Tally>;
  statement: Tally | null;
}

/** The series the last request was counted in, and its status's count. */
interface CountedIn {
  readonly route: string;
  readonly operation: string;
  readonly status: number;
  readonly series: RouteSeries;
  readonly requests: Tally;
}

/** Every `ReplicaHealth['status']`, in the order the help lists them. */
const REPLICA_STATUSES: readonly ReplicaHealth['status'][] = ['serving', 'lagging', 'down', 'not-standby', 'wrong-database', 'unknown'];

/**
 * The service's Prometheus metrics (README "Operations" lists each), in a registry of this
 * process's own. Requests are counted as they finish (`observeRequest`) in plain numbers kept by
 * label values (`talliedMetrics.ts`: prom-client's own children check and hash their labels on
 * every call), read when Prometheus scrapes; everything that is a state — the pool, the outbox
 * backlog, the replicas' lag — is read when scraped too, so it costs nothing between scrapes. No
 * label carries a key, a value, a query text or a variable: routes are templates, operation types
 * and outcomes closed lists.
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  /** Each account's own last hour, for the dashboard's operations page (never a Prometheus label). */
  readonly accounts = new AccountTraffic();
  readonly #requests: TalliedMetric;
  readonly #duration: TalliedMetric;
  readonly #planCache: TalliedMetric;
  readonly #statement: TalliedMetric;
  readonly #reads: TalliedMetric;
  readonly #deliveries: Counter<'outcome'>;
  readonly #admissions: TalliedMetric;
  readonly #socketOperations: TalliedMetric;
  readonly #socketTallies = new Map<string, Tally>();
  /** By route template, then operation type. */
  readonly #series = new Map<string, Map<string, RouteSeries>>();
  readonly #statementTallies = new Map<string, Tally>();
  #last: CountedIn | null = null;
  /** Made on first use, so that a series shows once it has happened (a service without replicas shows no routing series). */
  readonly #planCacheTallies: Partial<Record<'hit' | 'miss', Tally>> = {};
  readonly #readTallies: Partial<Record<'primary' | 'replica', Tally>> = {};
  readonly #admissionTallies: Partial<Record<'cheap' | 'admitted' | 'queued' | 'refused', Tally>> = {};

  constructor(sources: MetricSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.#requests = new TalliedMetric('loanql_http_requests_total', 'HTTP requests answered, by route template, GraphQL operation type and status code.', 'counter', [], this.registry);
    this.#duration = new TalliedMetric('loanql_http_request_duration_seconds', 'Time from a request arriving to its response ending, by route template and GraphQL operation type.', 'histogram', LATENCY_BUCKETS, this.registry);
    this.#planCache = new TalliedMetric('loanql_graphql_plan_cache_total', 'GraphQL plan-cache lookups: hit (parsed, validated and planned before) or miss.', 'counter', [], this.registry);
    this.#statement = new TalliedMetric('loanql_database_statement_duration_seconds', "Time a GraphQL request waited on the database: a query's statement, a mutation's transaction.", 'histogram', LATENCY_BUCKETS, this.registry);
    this.#reads = new TalliedMetric('loanql_read_routing_total', 'Requests that read, by where their reads ran (with DATABASE_REPLICA_URLS).', 'counter', [], this.registry);
    this.#deliveries = new Counter({ name: 'loanql_webhook_deliveries_total', help: 'Webhook delivery attempts sent by this process, by outcome: succeeded, retry (scheduled again) or failed (given up).', labelNames: ['outcome'], registers });
    this.#admissions = new TalliedMetric('loanql_admission_total', 'GraphQL queries by admission decision: cheap (under ADMISSION_CHEAP_COST), admitted at once, queued, refused (503).', 'counter', [], this.registry);
    this.#socketOperations = new TalliedMetric(
      'loanql_websocket_operations_total',
      'Operations started over GraphQL WebSocket connections, by type (none: refused before its document was read) and outcome: started, refused (a client mistake), rate-limited, subscription-limit, overloaded, forbidden, failed.',
      'counter',
      [],
      this.registry,
    );
    const { db, replicas } = sources;

    if (db.poolStatus) poolMetrics(db, registers);
    const backlog = backlogReader(db);

    new Gauge({
      name: 'loanql_webhook_backlog',
      help: 'Webhook work waiting: captured events not yet fanned out (outbox) and deliveries due or to be retried (pending).',
      labelNames: ['queue'],
      aggregator: 'max',
      registers,
      async collect() {
        const counts = await backlog();
        // The database is away, or slow to answer: the scrape still answers, without the backlog.
        if (!counts) return this.reset();
        this.set({ queue: 'outbox' }, counts.outbox);
        this.set({ queue: 'pending' }, counts.pending);
      },
    });
    if (replicas) {
      new Gauge({
        name: 'loanql_replica_lag_seconds',
        help: 'How far each read replica was behind the primary at its last check (one that does not answer: since the primary first had WAL past the last position it was seen to replay).',
        labelNames: ['replica'],
        aggregator: 'max',
        registers,
        collect() {
          this.reset();
          for (const replica of replicas.health().replicas) if (replica.lagMs !== null) this.set({ replica: replica.name }, replica.lagMs / 1000);
        },
      });
      new Gauge({
        name: 'loanql_replica_serving',
        help: 'Whether each read replica is read from now (1) or not (0: lagging, down, not a standby, not checked yet).',
        labelNames: ['replica'],
        aggregator: 'min',
        registers,
        collect() {
          for (const replica of replicas.health().replicas) this.set({ replica: replica.name }, replica.status === 'serving' ? 1 : 0);
        },
      });
      new Counter({
        name: 'loanql_replica_conflicts_total',
        help: "Reads a read replica's recovery cancelled (a conflict with replay: 40001, 40P01, 57P04), each run again on the primary.",
        labelNames: ['replica'],
        aggregator: 'sum',
        registers,
        collect() {
          this.reset();
          for (const replica of replicas.health().replicas) this.inc({ replica: replica.name }, replica.conflicts);
        },
      });
      // A state set: 1 for each replica's status at this process's last check, 0 for the others, so
      // an alert can tell a replica that is down from one that lags. With WORKERS=N the processes'
      // sets are added up: each status counts the processes whose last check saw it (per replica the
      // statuses add up to N). Before session 43 they were combined by their maximum, so a replica
      // two processes saw differently was 1 in both statuses, and no scrape said how many saw which.
      new Gauge({
        name: 'loanql_replica_status',
        help: "Each read replica's status at its last check (1; the other statuses 0): serving, lagging, down, not-standby, wrong-database, unknown. With WORKERS above 1, how many API processes' last check saw each status.",
        labelNames: ['replica', 'status'],
        aggregator: 'sum',
        registers,
        collect() {
          for (const replica of replicas.health().replicas) {
            for (const status of REPLICA_STATUSES) this.set({ replica: replica.name, status }, replica.status === status ? 1 : 0);
          }
        },
      });
    }
  }

  /** Counts a finished request. */
  observeRequest(request: ObservedRequest): void {
    const { route, operation, status } = request;
    // Most requests are counted in the same series as the one before (the same route, operation and status): no map lookups then.
    let last = this.#last;
    if (last === null || last.route !== route || last.operation !== operation || last.status !== status) last = this.#last = this.#countedIn(route, operation, status);
    const { series } = last;
    series.duration.add(request.seconds);
    last.requests.add(1);
    if (request.planCacheHit !== null) {
      const result = request.planCacheHit ? 'hit' : 'miss';
      (this.#planCacheTallies[result] ??= this.#planCache.tally({ result })).add(1);
    }
    if (request.databaseSeconds !== null) (series.statement ??= this.#statementTally(operation)).add(request.databaseSeconds);
    if (request.accountId !== null) this.accounts.observe(request.accountId, operation, status, request.seconds * 1000, request.endedAt);
    if (request.readFrom) (this.#readTallies[request.readFrom] ??= this.#reads.tally({ target: request.readFrom })).add(1);
  }

  /** The series of a route, operation and status, made on first use. */
  #countedIn(route: string, operation: string, status: number): CountedIn {
    let byOperation = this.#series.get(route);
    if (!byOperation) this.#series.set(route, (byOperation = new Map()));
    let series = byOperation.get(operation);
    if (!series) byOperation.set(operation, (series = { duration: this.#duration.tally({ route, operation }), byStatus: new Map(), statement: null }));
    let requests = series.byStatus.get(status);
    if (!requests) series.byStatus.set(status, (requests = this.#requests.tally({ route, operation, status: String(status) })));
    return { route, operation, status, series, requests };
  }

  /** The statement-time tally of an operation type (one per type, whatever the route). */
  #statementTally(operation: string): Tally {
    let statement = this.#statementTallies.get(operation);
    if (!statement) this.#statementTallies.set(operation, (statement = this.#statement.tally({ operation })));
    return statement;
  }

  /** Counts an admission decision (`CostAdmission`'s `onDecision`). */
  readonly observeAdmission = (decision: 'cheap' | 'admitted' | 'queued' | 'refused'): void => {
    (this.#admissionTallies[decision] ??= this.#admissions.tally({ decision })).add(1);
  };

  /** Counts an operation a WebSocket client started (`GraphSockets`' `onOperation`): both labels from closed lists. */
  readonly observeSocketOperation = (operation: string, outcome: string): void => {
    const name = `${operation} ${outcome}`;
    let tally = this.#socketTallies.get(name);
    if (!tally) this.#socketTallies.set(name, (tally = this.#socketOperations.tally({ operation, outcome })));
    tally.add(1);
  };

  /** Reports admission's state when scraped: costly queries running, their reserved cost, those waiting. */
  watchAdmission(admission: CostAdmission | null): void {
    if (!admission) return;
    const registers = [this.registry];
    const state = (pick: (state: AdmissionState) => number) =>
      function (this: Gauge) {
        this.set(pick(admission.state));
      };
    new Gauge({ name: 'loanql_admission_running', help: 'Costly GraphQL queries running now (admission by cost).', registers, collect: state((s) => s.running) });
    new Gauge({ name: 'loanql_admission_reserved_cost', help: 'The estimated cost those queries reserve now, of the budget.', registers, collect: state((s) => s.reserved) });
    new Gauge({ name: 'loanql_admission_waiting', help: "Costly GraphQL queries waiting in admission's queue now.", registers, collect: state((s) => s.waiting) });
  }

  /**
   * Reports the WebSocket API when scraped (`GraphSockets.usage`): connections, open
   * subscriptions, live-query cohorts, and the cohort statements run so far.
   */
  watchSubscriptions(usage: () => SubscriptionUsage): void {
    const registers = [this.registry];
    const now = (pick: (usage: SubscriptionUsage) => number) =>
      function (this: Gauge) {
        this.set(pick(usage()));
      };
    new Gauge({ name: 'loanql_websocket_connections', help: 'GraphQL WebSocket connections open now (/api/graph and the console).', registers, collect: now((u) => u.connections) });
    new Gauge({ name: 'loanql_subscriptions_open', help: 'GraphQL subscriptions open now (live queries and streams).', registers, collect: now((u) => u.subscriptions) });
    new Gauge({ name: 'loanql_subscription_cohorts', help: 'Live-query cohorts now: subscribers whose statements are the same text, refreshed by one statement.', registers, collect: now((u) => u.cohorts) });
    new Counter({
      name: 'loanql_subscription_statements_total',
      help: 'Cohort statements run: first results, refreshes and stream batches (one statement answers a whole cohort).',
      registers,
      collect() {
        this.reset();
        this.inc(usage().statementsRun);
      },
    });
  }

  /** Counts a webhook delivery attempt (`WebhookWorker`'s `onOutcome`). */
  readonly observeDelivery = (outcome: DeliveryOutcome): void => {
    this.#deliveries.labels(outcome).inc();
  };

  /** The text Prometheus scrapes, and its Content-Type. */
  async scrape(): Promise<{ readonly text: string; readonly contentType: string }> {
    return { text: await this.registry.metrics(), contentType: this.registry.contentType };
  }
}

/**
 * How long a scrape waits for the webhook backlog's counts. The database may be slow to answer
 * exactly when the metrics matter: every pool connection busy (the count waited up to the pool's
 * 10 s connect timeout), a lock on the outbox, a long transaction holding the embedded database's
 * one session (it waited as long as that). Prometheus's scrape timeout is 10 s by default, and a
 * scrape that times out loses every metric, the pool's too.
 */
export const BACKLOG_WAIT_MS = 1_000;

/**
 * The webhook backlog's counts, or null when the database failed or did not answer within
 * `BACKLOG_WAIT_MS`. One count at a time: a scrape while the last one still waits waits on it.
 */
function backlogReader(db: Database): () => Promise<{ readonly outbox: number; readonly pending: number } | null> {
  let reading: Promise<{ readonly outbox: number; readonly pending: number } | null> | null = null;
  return () => {
    reading ??= db
      .query<{ outbox: string; pending: string }>(`SELECT (SELECT count(*) FROM webhook_outbox) AS outbox, (SELECT count(*) FROM webhook_deliveries WHERE status = 'pending') AS pending`)
      .then(
        ({ rows }) => ({ outbox: Number(rows[0]!.outbox), pending: Number(rows[0]!.pending) }),
        () => null,
      )
      .finally(() => (reading = null));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), BACKLOG_WAIT_MS)));
    return Promise.race([reading, late]).finally(() => clearTimeout(timer));
  };
}

type PoolFigure = (status: PoolStatus) => number;

/** The pool's figures, read when scraped (node-postgres only: PGlite has no pool). */
function poolMetrics(db: Database, registers: Registry[]): void {
  const pool = (pick: PoolFigure) =>
    function (this: Gauge) {
      const status = db.poolStatus?.();
      if (status) this.set(pick(status));
    };
  new Gauge({ name: 'loanql_db_pool_max', help: 'Most connections of the pool (PG_POOL_SIZE).', registers, collect: pool((status) => status.max) });
  new Gauge({ name: 'loanql_db_pool_size', help: 'Connections of the pool open now.', registers, collect: pool((status) => status.size) });
  new Gauge({ name: 'loanql_db_pool_in_use', help: 'Connections of the pool checked out now.', registers, collect: pool((status) => status.inUse) });
  new Gauge({ name: 'loanql_db_pool_waiting', help: 'Requests waiting for a connection now.', registers, collect: pool((status) => status.waiting) });
  // Counters read from the pool's running totals: Prometheus's rate() of the two is the mean wait.
  const total = (pick: PoolFigure) =>
    function (this: Counter) {
      const status = db.poolStatus?.();
      if (!status) return;
      this.reset();
      this.inc(pick(status));
    };
  new Counter({ name: 'loanql_db_pool_acquired_total', help: 'Connections handed out by the pool.', registers, collect: total((status) => status.acquired) });
  new Counter({ name: 'loanql_db_pool_wait_seconds_total', help: 'Seconds requests waited for a connection, in total (rate over loanql_db_pool_acquired_total: the mean wait).', registers, collect: total((status) => status.waitSeconds) });
}
