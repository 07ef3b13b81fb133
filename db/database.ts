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
}

export interface Queryable {
  /** Runs one parameterised statement. */
  query<R = Record<string, unknown>>(text: string, values?: readonly unknown[], options?: QueryOptions): Promise<QueryResult<R>>;
  /** Runs fixed, trusted SQL of several statements (migrations); it takes no values at all. */
  script(sql: string): Promise<void>;
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
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Registers an observer of every statement; returns the function that removes it. */
  observe(observer: StatementObserver): () => void;
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
