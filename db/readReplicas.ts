import type { Database, Queryable, QueryOptions, QueryResult, RowHandler, StatementObserver } from './database.js';
import { openPostgresDatabase } from './postgresDatabase.js';
import { isConnectionError } from './unavailable.js';

/**
 * PostgreSQL streaming replicas for reads (README "Scaling out"). The primary takes every write;
 * reads go round-robin to the replicas that are up, still in recovery (a standby, not a promoted
 * copy) and no further behind than `maxLagMs`, checked every `checkIntervalMs`. A replica that
 * fails a statement with a connection error is taken out at once and the statement runs on the
 * primary instead, so a client never sees an error because a replica died; the next check that
 * finds it healthy re-admits it. A read the standby's replay cancelled (a recovery conflict) runs
 * again on the primary too, and the replica stays in: it is healthy, only that statement lost. A read that must see a given WAL position (read-your-writes) is served by a
 * replica only if that replica has replayed past it (`pg_last_wal_replay_lsn()`), else by the
 * primary.
 */

/** A WAL position (`pg_lsn`) as a number, so positions compare. */
export type Lsn = bigint;

const LSN_PATTERN = /^([0-9A-F]{1,8})\/([0-9A-F]{1,8})$/i;

/** `'16/B374D848'` → its position; null for anything that is not a pg_lsn text. */
export function parseLsn(text: string): Lsn | null {
  const match = LSN_PATTERN.exec(text.trim());
  if (!match) return null;
  return (BigInt(`0x${match[1]}`) << 32n) + BigInt(`0x${match[2]}`);
}

/** A position as PostgreSQL writes it (`16/B374D848`). */
export function formatLsn(lsn: Lsn): string {
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`;
}

export interface ReadReplicaSettings {
  readonly urls: readonly string[];
  /** A replica further behind the primary than this is not read from. */
  readonly maxLagMs: number;
  /** How often the primary's position and each replica's replay position are checked. */
  readonly checkIntervalMs?: number;
  readonly statementTimeoutMs?: number;
  readonly maxConnections?: number;
  readonly onConnectionError?: (error: Error) => void;
  /** Told when a replica is taken out or re-admitted (for the logs). */
  readonly onChange?: (replica: ReplicaHealth) => void;
  /** Told of each read a replica's recovery cancelled, once it has been sent to the primary (for the logs). */
  readonly onConflict?: (replica: ReplicaHealth, error: Error) => void;
}

/** What `/healthz` says about one replica. */
export interface ReplicaHealth {
  /** `replica-1`, `replica-2`, … in the order of DATABASE_REPLICA_URLS. */
  readonly name: string;
  /** Host, port and database (never the user or password). */
  readonly address: string;
  /**
   * `serving`: reads go to it; `lagging`: behind by more than the limit; `down`: unreachable or
   * failing; `not-standby`: not in recovery (promoted?); `wrong-database`: not a copy of the
   * primary's database (another PostgreSQL cluster, or another database of the primary's — its
   * `error` says which); `unknown`: not checked yet.
   */
  readonly status: 'serving' | 'lagging' | 'down' | 'not-standby' | 'wrong-database' | 'unknown';
  readonly lagMs: number | null;
  readonly replayLsn: string | null;
  readonly checkedAt: string | null;
  readonly error: string | null;
  /** Statements this process has run on it. */
  readonly reads: number;
  /** Of those, the ones its recovery cancelled (40001, 40P01, 57P04), each run again on the primary. */
  readonly conflicts: number;
}

interface Replica {
  readonly name: string;
  readonly address: string;
  readonly database: Database;
  status: ReplicaHealth['status'];
  lagMs: number | null;
  replayLsn: Lsn | null;
  checkedAt: number | null;
  error: string | null;
  reads: number;
  conflicts: number;
  /** The first primary sample found not yet replayed at the last check (see `#lagOf`). */
  firstAhead: { readonly at: number; readonly lsn: Lsn } | null;
  /** What a read routed to it is given (`chooseTarget`): made once, not per read. */
  target: ReadTarget | null;
}

/**
 * Which database a server's connection is in, as physical replication copies it: the cluster's
 * system identifier (a standby's is its primary's; another cluster's differs) and the database's
 * oid (equal on a standby; another database of the same cluster differs).
 */
interface DatabaseIdentity {
  readonly system: string;
  readonly oid: string;
  readonly name: string;
}

const IDENTITY_COLUMNS =
  '(SELECT system_identifier FROM pg_control_system())::text AS system, (SELECT oid FROM pg_database WHERE datname = current_database())::text AS oid, current_database() AS name';

/** Why `replica` is not a copy of `primary`'s database, or null when it is. */
function notACopy(replica: DatabaseIdentity, primary: DatabaseIdentity): string | null {
  if (replica.system !== primary.system) {
    return `not a standby of the primary: its PostgreSQL system identifier is ${replica.system}, the primary's ${primary.system} (another cluster)`;
  }
  if (replica.oid !== primary.oid) {
    return `connected to database "${replica.name}" (oid ${replica.oid}), not the primary's "${primary.name}" (oid ${primary.oid}): fix the database name in DATABASE_REPLICA_URLS`;
  }
  return null;
}

/**
 * The SQLSTATEs of a statement a standby's recovery cancelled, or of its connection recovery
 * ended ("canceling statement due to conflict with recovery"): 40001 when replay needed rows its
 * snapshot sees, or a lock it holds; 40P01 a buffer pin deadlock with the startup process; 57P04
 * its database dropped. A read is safe to run again: on the primary, which has no replay.
 */
const RECOVERY_CONFLICT_STATES: ReadonlySet<string> = new Set(['40001', '40P01', '57P04']);

function isRecoveryConflict(error: unknown): boolean {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && RECOVERY_CONFLICT_STATES.has(code);
}

const CHECK_TIMEOUT_MS = 1_000;

/** `promise`, or a refusal when it has not settled within `ms` (a health check's limit; exported for its test). */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => {
      // The refusal waits for the I/O already received (setImmediate runs after the event loop's
      // poll): when the process itself was stalled past `ms` (a CPU-bound moment, a busy machine),
      // Node runs due timers before reading the sockets, and an answer sitting in the socket would
      // otherwise lose the race and take a healthy replica out.
      timer = setTimeout(() => setImmediate(() => reject(new Error(`no answer within ${ms} ms`))), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

function addressOf(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || 5432}${parsed.pathname}`;
  } catch {
    return '(unparseable URL)';
  }
}

/** The replicas of one primary, with their health checks; see the module comment. */
export class ReadReplicas {
  readonly #primary: Database;
  readonly #replicas: Replica[];
  readonly #maxLagMs: number;
  readonly #checkIntervalMs: number;
  readonly #onChange: (replica: ReplicaHealth) => void;
  readonly #onConflict: (replica: ReplicaHealth, error: Error) => void;
  /** The primary's WAL insert position over the last while: when each was seen, oldest first. */
  #samples: { at: number; lsn: Lsn }[] = [];
  #primaryLsn: Lsn | null = null;
  /**
   * The primary's position at this process's first answered check — after the migrations and the
   * demo set-up its start ran — which every read needs a replica to have replayed: a replica a
   * moment late would otherwise serve the first reads after an upgrade without the migration's
   * tables or columns (a 500), or a new database without its demo loans.
   */
  #floor: Lsn | null = null;
  /** The primary's database, as its last answered check named it (null before one answered). */
  #primaryIdentity: DatabaseIdentity | null = null;
  #primaryError: string | null = null;
  #primaryCheckedAt: number | null = null;
  #primaryReads = 0;
  #next = 0;
  #timer: NodeJS.Timeout | null = null;
  #checking: Promise<void> | null = null;

  constructor(primary: Database, settings: ReadReplicaSettings) {
    this.#primary = primary;
    this.#maxLagMs = settings.maxLagMs;
    this.#checkIntervalMs = settings.checkIntervalMs ?? 250;
    this.#onChange = settings.onChange ?? (() => undefined);
    this.#onConflict = settings.onConflict ?? (() => undefined);
    this.#replicas = settings.urls.map((url, index) => ({
      name: `replica-${index + 1}`,
      address: addressOf(url),
      database: openPostgresDatabase({
        connectionString: url,
        ...(settings.statementTimeoutMs ? { statementTimeoutMs: settings.statementTimeoutMs } : {}),
        ...(settings.maxConnections ? { maxConnections: settings.maxConnections } : {}),
        ...(settings.onConnectionError ? { onConnectionError: settings.onConnectionError } : {}),
        // A replica that does not answer must not hold a read for long: the read goes to the primary.
        connectTimeoutMs: 2_000,
        applicationName: 'loanql-read',
        // Recovery cancelling a read sends it to the primary at once (`isRecoveryConflict`), not again here.
        retryConflicts: false,
      }),
      status: 'unknown',
      lagMs: null,
      replayLsn: null,
      checkedAt: null,
      error: null,
      reads: 0,
      conflicts: 0,
      firstAhead: null,
      target: null,
    }));
  }

  get count(): number {
    return this.#replicas.length;
  }

  /** Checks once now (so the first requests already use the replicas), then every `checkIntervalMs`. */
  async start(): Promise<void> {
    await this.check();
    this.#timer = setInterval(() => void this.check(), this.#checkIntervalMs);
    this.#timer.unref();
  }

  /** One round of checks: the primary's position, then every replica's replay position and lag. */
  check(): Promise<void> {
    this.#checking ??= this.#checkAll().finally(() => (this.#checking = null));
    return this.#checking;
  }

  async #checkAll(): Promise<void> {
    const now = Date.now();
    try {
      const { rows } = await withTimeout(
        this.#primary.query<{ lsn: string } & DatabaseIdentity>(`SELECT pg_current_wal_insert_lsn()::text AS lsn, ${IDENTITY_COLUMNS}`),
        CHECK_TIMEOUT_MS,
      );
      const { lsn: lsnText, system, oid, name } = rows[0]!;
      const lsn = parseLsn(lsnText)!;
      this.#primaryLsn = lsn;
      this.#floor ??= lsn;
      this.#primaryIdentity = { system, oid, name };
      this.#primaryError = null;
      this.#samples.push({ at: now, lsn });
      // Samples older than the lag limit (and a margin) no longer decide anything.
      const keepFrom = now - Math.max(10_000, 4 * this.#maxLagMs);
      while (this.#samples.length > 1 && this.#samples[0]!.at < keepFrom) this.#samples.shift();
    } catch (error) {
      this.#primaryError = (error as Error).message;
    }
    this.#primaryCheckedAt = now;
    await Promise.all(this.#replicas.map((replica) => this.#checkReplica(replica)));
  }

  async #checkReplica(replica: Replica): Promise<void> {
    const before = replica.status;
    try {
      const { rows } = await withTimeout(
        replica.database.query<{ recovery: boolean; replay: string | null } & DatabaseIdentity>(
          `SELECT pg_is_in_recovery() AS recovery, pg_last_wal_replay_lsn()::text AS replay, ${IDENTITY_COLUMNS}`,
        ),
        CHECK_TIMEOUT_MS,
      );
      const row = rows[0]!;
      replica.checkedAt = Date.now();
      replica.error = null;
      // A standby of another cluster, or the right standby's other database (a wrong name in the
      // URL), replays WAL and answers as a healthy standby would — but has other rows, or none of
      // the tables: every read sent there would be wrong or fail. Until the primary has answered
      // once, nothing is known to compare with, and nothing is read from the replica.
      const mismatch = this.#primaryIdentity ? notACopy(row, this.#primaryIdentity) : 'the primary has not answered a check yet';
      if (mismatch) {
        replica.status = this.#primaryIdentity ? 'wrong-database' : 'unknown';
        replica.error = mismatch;
        replica.lagMs = null;
      } else if (!row.recovery || row.replay === null) {
        replica.status = 'not-standby';
        replica.lagMs = null;
      } else {
        const replay = parseLsn(row.replay)!;
        if (replica.replayLsn === null || replay > replica.replayLsn) replica.replayLsn = replay;
        replica.lagMs = this.#lagOf(replica, replay, replica.checkedAt);
        replica.status = replica.lagMs <= this.#maxLagMs ? 'serving' : 'lagging';
      }
    } catch (error) {
      replica.status = 'down';
      replica.error = (error as Error).message;
      replica.checkedAt = Date.now();
      replica.lagMs = this.#lagWhileDown(replica, replica.checkedAt);
    }
    if (replica.status !== before) this.#onChange(this.#healthOf(replica));
  }

  /**
   * The lag of a replica that does not answer: measured from the last position it was seen to
   * have replayed (none seen: from this process's first sample), so it keeps growing while the
   * primary writes, as a stopped standby falls behind. Before session 39 it kept the figure of the
   * last check that answered — 0 s, say — and an alert on the lag went quiet while the replica was
   * down; `loanql_replica_status` says it is down.
   */
  #lagWhileDown(replica: Replica, now: number): number {
    return this.#lagOf(replica, replica.replayLsn ?? 0n, now);
  }

  /**
   * How far behind a replica that has replayed up to `replay` is: the time since the primary
   * first had WAL past it (the oldest sample beyond `replay`), 0 when it has everything sampled.
   * Measured this way an idle primary never makes a replica look late, and a replica cut off
   * from the primary does (its own replay timestamp would say neither). The samples go back only
   * `max(10 s, 4 × REPLICA_MAX_LAG_MS)`, so the sample found at the replica's last check is kept
   * with it while the replica has still not replayed it: a replica stuck for minutes is minutes
   * late, not capped at the samples' span (it read 9.8 s for a standby paused for a minute).
   */
  #lagOf(replica: Replica, replay: Lsn, now: number): number {
    let firstAhead = this.#samples.find((sample) => sample.lsn > replay) ?? null;
    const earlier = replica.firstAhead;
    if (earlier && earlier.lsn > replay && (firstAhead === null || earlier.at < firstAhead.at)) firstAhead = earlier;
    replica.firstAhead = firstAhead;
    return firstAhead ? now - firstAhead.at : 0;
  }

  /** The next serving replica (round-robin) that has replayed up to `atLeast`, by what the checks know. */
  #pick(atLeast: Lsn | null): Replica | null {
    const count = this.#replicas.length;
    for (let step = 0; step < count; step++) {
      const replica = this.#replicas[(this.#next + step) % count]!;
      if (replica.status !== 'serving') continue;
      if (atLeast !== null && (replica.replayLsn === null || replica.replayLsn < atLeast)) continue;
      this.#next = (this.#next + step + 1) % count;
      return replica;
    }
    return null;
  }

  /**
   * Where a read that must see `atLeast` (null: anything recent) runs: a serving replica known
   * to have replayed that far; else one asked directly (one small statement) whether it has by
   * now; else the primary.
   */
  async #target(atLeast: Lsn | null): Promise<Replica | null> {
    const known = this.#pick(atLeast);
    if (known || atLeast === null) return known;
    const candidate = this.#pick(null);
    if (!candidate) return null;
    try {
      const { rows } = await withTimeout(candidate.database.query<{ replay: string | null }>('SELECT pg_last_wal_replay_lsn()::text AS replay'), CHECK_TIMEOUT_MS);
      const replay = rows[0]!.replay === null ? null : parseLsn(rows[0]!.replay);
      if (replay !== null && (candidate.replayLsn === null || replay > candidate.replayLsn)) candidate.replayLsn = replay;
      return replay !== null && replay >= atLeast ? candidate : null;
    } catch (error) {
      this.#takeOut(candidate, error);
      return null;
    }
  }

  #takeOut(replica: Replica, error: unknown): void {
    if (replica.status === 'down') return;
    replica.status = 'down';
    replica.error = error instanceof Error ? error.message : String(error);
    replica.lagMs = this.#lagWhileDown(replica, Date.now());
    this.#onChange(this.#healthOf(replica));
  }

  /** The primary's WAL insert position now (live queries: what a cohort's next read must have replayed). */
  async primaryPosition(): Promise<Lsn> {
    const { rows } = await this.#primary.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn');
    return parseLsn(rows[0]!.lsn)!;
  }

  /**
   * A `Database` for one request: its reads run on a replica that has replayed up to `atLeast`
   * (chosen on the first read, kept for the request), or on the primary; a read a failing
   * replica could not answer runs again on the primary. Transactions and scripts (writes) always
   * run on the primary. `source()` says where the reads went.
   */
  forRequest(atLeast: Lsn | null): RoutedDatabase {
    return new RoutedDatabase(this, this.#primary, atLeast);
  }

  /** @internal Used by `RoutedDatabase`. */
  chooseTarget(atLeast: Lsn | null): Promise<ReadTarget | null> {
    const floor = this.#floor;
    const needed = floor === null || (atLeast !== null && atLeast > floor) ? atLeast : floor;
    return this.#target(needed).then((replica) => {
      if (!replica) {
        this.#primaryReads += 1;
        return null;
      }
      replica.reads += 1;
      return (replica.target ??= {
        name: replica.name,
        database: replica.database,
        failed: (error: unknown) => this.#takeOut(replica, error),
        conflicted: (error: unknown) => {
          replica.conflicts += 1;
          this.#onConflict(this.#healthOf(replica), error instanceof Error ? error : new Error(String(error)));
        },
      });
    });
  }

  /** @internal A read that failed over to the primary. */
  countPrimaryRead(): void {
    this.#primaryReads += 1;
  }

  #healthOf(replica: Replica): ReplicaHealth {
    return {
      name: replica.name,
      address: replica.address,
      status: replica.status,
      lagMs: replica.lagMs,
      replayLsn: replica.replayLsn === null ? null : formatLsn(replica.replayLsn),
      checkedAt: replica.checkedAt === null ? null : new Date(replica.checkedAt).toISOString(),
      error: replica.error,
      reads: replica.reads,
      conflicts: replica.conflicts,
    };
  }

  /** The primary and every replica as the last checks saw them (`/healthz`). No database call. */
  health(): { primary: { status: 'ok' | 'down'; walLsn: string | null; checkedAt: string | null; error: string | null; reads: number }; replicas: ReplicaHealth[] } {
    return {
      primary: {
        status: this.#primaryError ? 'down' : 'ok',
        walLsn: this.#primaryLsn === null ? null : formatLsn(this.#primaryLsn),
        checkedAt: this.#primaryCheckedAt === null ? null : new Date(this.#primaryCheckedAt).toISOString(),
        error: this.#primaryError,
        reads: this.#primaryReads,
      },
      replicas: this.#replicas.map((replica) => this.#healthOf(replica)),
    };
  }

  async close(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    await this.#checking?.catch(() => undefined);
    await Promise.all(this.#replicas.map((replica) => replica.database.close().catch(() => undefined)));
  }
}

/** The replica a request's reads go to, and what to tell when one of them fails there. */
interface ReadTarget {
  readonly name: string;
  readonly database: Database;
  /** A connection error: the replica is taken out. */
  readonly failed: (error: unknown) => void;
  /** Recovery cancelled the read: counted and told, the replica kept. */
  readonly conflicted: (error: unknown) => void;
}

/**
 * Whether a read that failed on a replica runs again on the primary, telling `target` why: a
 * recovery conflict (before session 39 a 40P01 or 57P04 reached the client, and a 40001 took the
 * healthy replica out), or the replica gone. Anything else is the statement's own error.
 */
function movesToPrimary(target: ReadTarget, error: unknown): boolean {
  if (isRecoveryConflict(error)) {
    target.conflicted(error);
    return true;
  }
  if (isConnectionError(error)) {
    target.failed(error);
    return true;
  }
  return false;
}

/** See `ReadReplicas.forRequest`. */
export class RoutedDatabase implements Database {
  readonly kind;
  #target: Promise<ReadTarget | null> | null = null;
  #source: string | null = null;
  #wrote = false;

  constructor(
    private readonly replicas: ReadReplicas,
    private readonly primary: Database,
    private readonly atLeast: Lsn | null,
  ) {
    this.kind = primary.kind;
  }

  /** Where this request's reads ran: `primary`, a replica's name, or null when it read nothing. */
  get source(): string | null {
    return this.#source;
  }

  /** Whether this request opened a transaction (wrote) on the primary. */
  get wrote(): boolean {
    return this.#wrote;
  }

  #choose() {
    this.#target ??= this.replicas.chooseTarget(this.atLeast).then((target) => {
      this.#source = target?.name ?? 'primary';
      return target;
    });
    return this.#target;
  }

  #onPrimaryFromNowOn(): void {
    this.#target = Promise.resolve(null);
    this.#source = 'primary';
    this.replicas.countPrimaryRead();
  }

  async query<R = Record<string, unknown>>(text: string, values?: readonly unknown[], options?: QueryOptions): Promise<QueryResult<R>> {
    const target = await this.#choose();
    if (!target) return this.primary.query<R>(text, values, options);
    try {
      return await target.database.query<R>(text, values, options);
    } catch (error) {
      if (!movesToPrimary(target, error)) throw error;
      this.#onPrimaryFromNowOn();
      return this.primary.query<R>(text, values, options);
    }
  }

  async each<R = Record<string, unknown>>(text: string, values: readonly unknown[], onRow: RowHandler<R>, options?: QueryOptions): Promise<number> {
    const target = await this.#choose();
    if (!target) return this.primary.each<R>(text, values, onRow, options);
    let handed = 0;
    try {
      return await target.database.each<R>(text, values, (row) => {
        handed += 1;
        onRow(row);
      }, options);
    } catch (error) {
      // Rows already handed over cannot be taken back: only a read that gave none moves.
      if (handed > 0 || !movesToPrimary(target, error)) throw error;
      this.#onPrimaryFromNowOn();
      return this.primary.each<R>(text, values, onRow, options);
    }
  }

  script(sql: string): Promise<void> {
    this.#wrote = true;
    return this.primary.script(sql);
  }

  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    this.#wrote = true;
    return this.primary.transaction(work);
  }

  /** A write in one statement (the engine's one-statement mutations): on the primary, as a transaction is. */
  queryWrite<R = Record<string, unknown>>(text: string, values?: readonly unknown[], options?: QueryOptions): Promise<QueryResult<R>> {
    this.#wrote = true;
    return this.primary.query<R>(text, values, options);
  }

  observe(observer: StatementObserver): () => void {
    return this.primary.observe(observer);
  }

  /** Notifications come from the primary (a standby sends none). */
  listen(channel: string, onNotice: (payload: string) => void, onGap?: () => void): Promise<() => Promise<void>> {
    return this.primary.listen(channel, onNotice, onGap);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
