/**
 * The one small database interface every other layer uses. Two adapters implement it:
 * node-postgres (`DATABASE_URL`) and embedded PGlite (`DATA_DIR`).
 *
 * Values are always bound as parameters; `text` never carries a client value.
 */
export interface QueryResult<R> {
  readonly rows: R[];
  readonly rowCount: number;
}

/** Hints for one statement. */
export interface QueryOptions {
  /**
   * The text is a cached, fixed statement that will run again: an adapter may keep it prepared
   * on each connection (PostgreSQL then parses and analyses it once per connection, not per run).
   */
  readonly reusable?: boolean;
  /**
   * No parameter's value can choose another plan unseen (the caller knows: engine/sql/fragment.ts
   * `genericPlanSafety`), so a reusable statement may run on PostgreSQL's generic plan once the
   * adapter checked it is the plan made for the values (node-postgres: planChoice.ts). `oneOf`:
   * parameters (by index) that take one of a few values; the check tries each.
   */
  readonly genericPlanSafe?: { readonly oneOf: ReadonlyMap<number, readonly unknown[]> };
}

export interface Queryable {
  /** Runs one parameterised statement. */
  query<R = Record<string, unknown>>(text: string, values?: readonly unknown[], options?: QueryOptions): Promise<QueryResult<R>>;
  /** Runs fixed, trusted SQL of several statements (migrations); it takes no values at all. */
  script(sql: string): Promise<void>;
  /**
   * Optional (node-postgres): runs `statements` in order in one round trip, each seeing the
   * effects of those before. Rejects with `StatementFailed` for the first that fails; none after
   * it runs. Callers use `queryInOrder`, which runs them one after another where this is missing.
   */
  queryInOrder?(statements: readonly Statement[]): Promise<QueryResult<Record<string, unknown>>[]>;
  /**
   * Optional, on a transaction (node-postgres): runs the transaction's last statement and its
   * COMMIT in one round trip; when the statement fails, nothing is committed. Callers use
   * `queryThenCommit`; a view that must not end its owner's transaction leaves this out.
   */
  queryAndCommit?(statement: Statement): Promise<QueryResult<Record<string, unknown>>>;
}

/** A statement with its values, for `queryInOrder` and `queryThenCommit`. */
export interface Statement {
  readonly text: string;
  readonly values: readonly unknown[];
  readonly options?: QueryOptions;
}

/** A statement of several run in order failed: `index` is its place; none after it ran. */
export class StatementFailed extends Error {
  constructor(
    readonly index: number,
    cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = 'StatementFailed';
  }
}

/** Runs `statements` in order on `db`, in one round trip where the adapter can (`Queryable.queryInOrder`). */
export async function queryInOrder(db: Queryable, statements: readonly Statement[]): Promise<QueryResult<Record<string, unknown>>[]> {
  if (db.queryInOrder) return db.queryInOrder(statements);
  const results: QueryResult<Record<string, unknown>>[] = [];
  for (const [index, statement] of statements.entries()) {
    try {
      results.push(await db.query(statement.text, statement.values, statement.options));
    } catch (error) {
      throw new StatementFailed(index, error);
    }
  }
  return results;
}

/**
 * Runs the last statement of the transaction `tx`, committing with it in the same round trip
 * where the adapter can (`Queryable.queryAndCommit`); otherwise the transaction commits when its
 * work resolves, as always. Nothing may run on `tx` after it.
 */
export function queryThenCommit(tx: Queryable, statement: Statement): Promise<QueryResult<Record<string, unknown>>> {
  return tx.queryAndCommit ? tx.queryAndCommit(statement) : tx.query(statement.text, statement.values, statement.options);
}

/** Runs one statement that writes, in autocommit, where `db` sends writes (`Database.queryWrite`). */
export function queryWrite<R = Record<string, unknown>>(db: Database, text: string, values: readonly unknown[], options?: QueryOptions): Promise<QueryResult<R>> {
  return db.queryWrite ? db.queryWrite<R>(text, values, options) : db.query<R>(text, values, options);
}

/** A connection pool as metrics see it: its connections, the requests waiting for one, and the waits so far. */
export interface PoolStatus {
  /** Most connections (`PG_POOL_SIZE`). */
  readonly max: number;
  /** Connections open now. */
  readonly size: number;
  /** Connections checked out now. */
  readonly inUse: number;
  /** Requests waiting for a connection now. */
  readonly waiting: number;
  /** Connections handed out since the pool opened, and the seconds their callers waited in total. */
  readonly acquired: number;
  readonly waitSeconds: number;
}

export type DatabaseKind = 'postgres' | 'pglite' | 'pglite-shared';

/** Called once for every statement sent to the database (used by tests and logs). */
export type StatementObserver = (text: string, values: readonly unknown[]) => void;

/** Called with each row of a statement, in order (see `Database.each`). */
export type RowHandler<R> = (row: R) => void;

export interface Database extends Queryable {
  readonly kind: DatabaseKind;
  /**
   * Runs one parameterised statement and hands its rows to `onRow` in order; resolves with the
   * row count. node-postgres hands each row over as it arrives, so a result of many rows is never
   * held whole; PGlite hands them over once the statement is done. When `onRow` throws, the
   * remaining rows are skipped and the promise rejects with that error once the statement ends.
   */
  each<R = Record<string, unknown>>(text: string, values: readonly unknown[], onRow: RowHandler<R>, options?: QueryOptions): Promise<number>;
  /**
   * Runs `work` in one transaction: committed when it resolves, rolled back when it throws; run
   * again, whole, when PostgreSQL undoes it as a deadlock or serialization failure
   * (`conflictRetry.ts`), so `work` does nothing outside the database that cannot be done twice.
   * A transaction view (`databaseInTransaction`) runs `work` once, in its owner's transaction.
   */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * Optional: runs one statement that writes, in autocommit, where writes go — a database that
   * sends reads elsewhere (`RoutedDatabase`: replicas) sends it to the primary and counts the
   * request as a write. Callers use `queryWrite`; without it, `query` is where writes go.
   */
  queryWrite?<R = Record<string, unknown>>(text: string, values?: readonly unknown[], options?: QueryOptions): Promise<QueryResult<R>>;
  /** Registers an observer of every statement; returns the function that removes it. */
  observe(observer: StatementObserver): () => void;
  /** The connection pool's figures now (node-postgres only; PGlite has one connection and no pool). */
  poolStatus?(): PoolStatus;
  /**
   * `LISTEN channel`: `onNotice` gets each notification's payload (every process's commits, this
   * one's included). `onGap` is called when notifications may have been missed (the listening
   * connection was lost and is open again). Resolves, once listening, with the function that stops.
   */
  listen(channel: string, onNotice: (payload: string) => void, onGap?: () => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/**
 * Type parsing shared by both adapters so that rows look the same whichever database runs:
 * numeric and bigint as exact strings, dates as `YYYY-MM-DD`, timestamps as PostgreSQL's text,
 * json/jsonb parsed.
 */
export const TYPE_OIDS = {
  int8: 20,
  numeric: 1700,
  date: 1082,
  timestamp: 1114,
  timestamptz: 1184,
  json: 114,
  jsonb: 3802,
} as const;

export class ObserverSet {
  readonly #observers = new Set<StatementObserver>();
  add(observer: StatementObserver): () => void {
    this.#observers.add(observer);
    return () => this.#observers.delete(observer);
  }
  notify(text: string, values: readonly unknown[]): void {
    for (const observer of this.#observers) observer(text, values);
  }
}
