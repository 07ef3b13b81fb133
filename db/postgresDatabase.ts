import { createHash } from 'node:crypto';
import pg from 'pg';
import { ObserverSet, StatementFailed, TYPE_OIDS, type Database, type DatabaseKind, type Queryable, type QueryOptions, type QueryResult, type RowHandler, type Statement } from './database.js';
import { comparePlans, PlanChoices, type PlanComparison } from './planChoice.js';
import { batchable, StatementBatch, typeParserOf, type BatchStatement } from './statementBatch.js';
import { retryWriteConflicts } from './conflictRetry.js';
import { asUnavailable, isConnectionError } from './unavailable.js';

/**
 * The server-side name of a reusable statement: a digest of its text, so one text always has
 * one name on every connection (node-postgres prepares it on first use per connection).
 * The engine marks only statements of its plan cache as reusable, which bounds how many there are.
 */
const statementNames = new Map<string, string>();
let statementNameCharacters = 0;
/** The names map keeps at most this many characters of statement text (then starts again). */
const STATEMENT_NAMES_MAX_CHARACTERS = 4_000_000;
function statementName(text: string): string {
  let name = statementNames.get(text);
  if (!name) {
    name = `lq_${createHash('sha256').update(text).digest('base64url').slice(0, 32)}`;
    if (statementNames.size >= 2000 || statementNameCharacters + text.length > STATEMENT_NAMES_MAX_CHARACTERS) {
      statementNames.clear();
      statementNameCharacters = 0;
    }
    statementNames.set(text, name);
    statementNameCharacters += text.length;
  }
  return name;
}

/**
 * node-postgres remembers every statement it prepared on a connection, and so does the server
 * process, for the connection's whole life (`connection.parsedStatements`): a stream of distinct
 * statements would grow both without bound. A connection that has prepared more than this many
 * is closed when released (the pool opens a fresh one on demand).
 */
export const MAX_PREPARED_PER_CONNECTION = 200;
function preparedCount(client: pg.PoolClient): number {
  const parsed = (client as unknown as { connection?: { parsedStatements?: Record<string, string> } }).connection?.parsedStatements;
  return parsed ? Object.keys(parsed).length : 0;
}

const identity = (value: string): string => value;

/** Type parsers so node-postgres rows match PGlite's (see `TYPE_OIDS`). */
function typeParsers(): pg.CustomTypesConfig {
  const overrides = new Map<number, (value: string) => unknown>([
    [TYPE_OIDS.int8, identity],
    [TYPE_OIDS.numeric, identity],
    [TYPE_OIDS.date, identity],
    [TYPE_OIDS.timestamp, identity],
    [TYPE_OIDS.timestamptz, identity],
  ]);
  return {
    getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
      overrides.get(oid) ?? pg.types.getTypeParser(oid, format ?? 'text')) as pg.CustomTypesConfig['getTypeParser'],
  };
}

export interface PostgresOptions {
  readonly connectionString: string;
  readonly maxConnections?: number;
  readonly statementTimeoutMs?: number;
  readonly kind?: DatabaseKind;
  /**
   * Turns PostgreSQL's JIT compiler off on every connection (default: on for a real server).
   * JIT compilation of a large statement is not interrupted by `statement_timeout`
   * (a 10 s timeout fired after 30–181 s); the engine's statements gain nothing from it.
   */
  readonly jitOff?: boolean;
  /** Longest wait for a connection (a new one or a free one of the pool) before the request is answered 503. */
  readonly connectTimeoutMs?: number;
  /** Called with errors of connections (idle or checked out); they never crash the process. */
  readonly onConnectionError?: (error: Error) => void;
  /** `application_name` of the connections (what `pg_stat_activity` shows). */
  readonly applicationName?: string;
  /** Run a reusable statement on its generic plan once checked to be the plan made for the values (planChoice.ts; default on). */
  readonly choosePlans?: boolean;
  /**
   * Run a statement or transaction PostgreSQL undid as a deadlock or serialization failure again
   * (`conflictRetry.ts`; default on). Off for a read replica, whose 40001 (recovery cancelled the
   * read) `readReplicas.ts` answers at once by reading on the primary.
   */
  readonly retryConflicts?: boolean;
}

/** Around the generic-plan check's `EXPLAIN EXECUTE` (planChoice.ts); a failure rolls the SET back too. */
const FORCE_GENERIC_PLAN: BatchStatement = { name: undefined, text: 'SET plan_cache_mode = force_generic_plan', values: [] };
const RESET_PLAN_MODE: BatchStatement = { name: undefined, text: 'RESET plan_cache_mode', values: [] };
/**
 * Before a statement that runs on its generic plan (planChoice.ts), in the same batch: the
 * setting for the batch's implicit transaction only (`set_config(…, true)`), which ends at the
 * batch's Sync — committed or rolled back, the connection is left as it was, with no RESET to
 * send. Kept prepared on each connection: against an unnamed SET and RESET around the statement,
 * 8–10 µs of backend CPU less a q2 request (issue 36, bench/README.md).
 */
const GENERIC_PLAN_FOR_BATCH: BatchStatement & { name: string } = { name: 'lq_generic_plan_for_batch', text: "SELECT set_config('plan_cache_mode', 'force_generic_plan', true)", values: [] };

/** Rethrows the failure of the one statement of a `StatementFailed` as itself. */
const unwrapFailed = (error: unknown): never => {
  throw error instanceof StatementFailed ? error.cause : error;
};

/**
 * The settings every pool connection starts with (libpq's `options`), or '' for none. On a
 * PostgreSQL server, `DateStyle=ISO`: dates and timestamps are read as `YYYY-MM-DD` text (the
 * type parsers keep PostgreSQL's text, and SQL casts `::text`), whatever the server's, database's
 * or role's DateStyle — with `SQL, DMY` (a European default) the business date read `29/11/2026`:
 * the fee job refused it as no date, and a loan's PATCH refused its own stored Date_Funded
 * (`31/01/2026`). Input is unaffected: every date the service sends is ISO, which PostgreSQL reads
 * as year-month-day under any DateStyle. And `TimeZone=UTC`, as PGlite's: a timestamp without an
 * offset in a GraphQL filter is UTC, and timestamps are written `+00:00`, whatever the server's
 * zone (no business date depends on it: that is a day in the account's zone, SPEC §12).
 */
function startupSettings(kind: DatabaseKind, jitOff: boolean): string {
  return [...(jitOff ? ['-c jit=off'] : []), ...(kind === 'postgres' ? ['-c DateStyle=ISO', '-c TimeZone=UTC'] : [])].join(' ');
}

/** A `Database` over a node-postgres pool. */
export function openPostgresDatabase(options: PostgresOptions): Database {
  const kind = options.kind ?? 'postgres';
  const types = typeParsers();
  const settings = startupSettings(kind, options.jitOff ?? kind === 'postgres');
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.maxConnections ?? 10,
    types,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    ...(options.applicationName ? { application_name: options.applicationName } : {}),
    ...(options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {}),
    ...(settings ? { options: settings } : {}),
  });
  // A connection that is lost must never crash the process: the pool's 'error' event covers idle
  // clients only, so every client gets its own listener the moment it connects — it then stays
  // covered while checked out (transactions, `each`). The failing statement rejects on its own;
  // the broken client is removed from the pool when released, and the pool reconnects on demand.
  const onConnectionError = options.onConnectionError ?? (() => undefined);
  pool.on('error', onConnectionError);
  pool.on('connect', (client) => client.on('error', onConnectionError));
  const observers = new ObserverSet();
  // Through the embedded share every connection runs on PGlite's one session, where a named
  // statement outlives the connection that prepared it: the next CLI run's Parse of the same name
  // failed ("prepared statement … already exists") until the service restarted. There statements
  // stay unnamed (PGlite plans each anyway; the share is one session, not a pool).
  const named = kind !== 'pglite-shared';

  const config = (text: string, values: readonly unknown[], options?: QueryOptions): pg.QueryConfig =>
    named && options?.reusable ? { name: statementName(text), text, values: values as unknown[] } : { text, values: values as unknown[] };

  // What `poolStatus` reports of the waits for a connection (a sum and a count: two additions per connect).
  const waits = { acquired: 0, seconds: 0 };
  // The pool's callback form: one promise a statement rather than the pool's and a `then` of it.
  const connect = (): Promise<pg.PoolClient> =>
    new Promise((resolve, reject) => {
      const asked = performance.now();
      pool.connect((error, client) => {
        if (error || !client) return reject(asUnavailable(error));
        waits.acquired += 1;
        waits.seconds += (performance.now() - asked) / 1000;
        resolve(client);
      });
    });
  /** Returns a client to the pool; one that failed, or holds too many prepared statements, is closed instead. */
  const release = (client: pg.PoolClient, failure?: unknown): void => {
    if (failure !== undefined && isConnectionError(failure)) client.release(failure as Error);
    else client.release(preparedCount(client) > MAX_PREPARED_PER_CONNECTION ? true : undefined);
  };

  const parserOf = typeParserOf(types);
  /** Sends statements the connection has prepared as one `StatementBatch`: one round trip. */
  const send = (client: pg.PoolClient, batch: readonly BatchStatement[]): Promise<QueryResult<Record<string, unknown>>[]> => {
    const sent = new StatementBatch(batch, parserOf);
    client.query(sent as unknown as pg.QueryConfig);
    return sent.done;
  };

  const run = async <R>(client: pg.Pool | pg.PoolClient, text: string, values: readonly unknown[] = [], options?: QueryOptions): Promise<QueryResult<R>> => {
    observers.notify(text, values);
    try {
      // A statement prepared on this connection before skips node-postgres's query machinery.
      if (named && options?.reusable && !(client instanceof pg.Pool)) {
        const statement = [{ name: statementName(text), text, values }];
        if (batchable(client, statement)) return (await send(client, statement))[0] as QueryResult<R>;
      }
      const result = await client.query(config(text, values, options));
      return { rows: result.rows as R[], rowCount: result.rowCount ?? 0 };
    } catch (error) {
      throw asUnavailable(error instanceof StatementFailed ? error.cause : error);
    }
  };

  const planChoices = options.choosePlans === false ? null : new PlanChoices();
  /**
   * The plans PostgreSQL makes for `statement`'s values — and for each combination of the values
   * `oneOf` lists — against its generic plan (planChoice.ts), in one round trip; null when it
   * could not tell.
   */
  const comparedPlans = async (client: pg.PoolClient, statement: BatchStatement & { name: string }, oneOf: ReadonlyMap<number, readonly unknown[]>): Promise<PlanComparison | null> => {
    const explain = 'EXPLAIN (FORMAT JSON) ';
    let valueSets: (readonly unknown[])[] = [statement.values];
    for (const [index, listed] of oneOf) valueSets = valueSets.flatMap((values) => listed.map((value) => values.map((old, at) => (at === index ? value : old))));
    try {
      const results = await send(client, [
        ...valueSets.map((values) => ({ name: undefined, text: explain + statement.text, values })),
        FORCE_GENERIC_PLAN,
        { name: undefined, text: `${explain}EXECUTE "${statement.name}"(${statement.values.map(() => 'NULL').join(', ')})`, values: [] },
        RESET_PLAN_MODE,
      ]);
      const plan = (index: number): unknown => results[index]!.rows[0]!['QUERY PLAN'];
      return comparePlans(valueSets.map((_, index) => plan(index)), plan(valueSets.length + 1));
    } catch (error) {
      const cause = error instanceof StatementFailed ? error.cause : error;
      if (isConnectionError(cause)) throw asUnavailable(cause);
      return null;
    }
  };
  /**
   * A statement outside a transaction: one the caller marked `genericPlanSafe` and the
   * connection has prepared has its plans checked first (planChoice.ts), and runs on the generic
   * plan once they were the same; anything else as `run` does.
   */
  const runAlone = <R>(client: pg.PoolClient, text: string, values: readonly unknown[], options?: QueryOptions): Promise<QueryResult<R>> => {
    const safe = named && options?.reusable && values.length > 0 ? options.genericPlanSafe : undefined;
    // Not an async function: most statements go straight to `run`, with no promise of this layer's.
    if (!planChoices || !safe) return run<R>(client, text, values, options);
    return runChoosingPlan<R>(planChoices, client, text, values, options, safe);
  };
  const runChoosingPlan = async <R>(
    choices: PlanChoices,
    client: pg.PoolClient,
    text: string,
    values: readonly unknown[],
    options: QueryOptions | undefined,
    safe: NonNullable<QueryOptions['genericPlanSafe']>,
  ): Promise<QueryResult<R>> => {
    const statement = { name: statementName(text), text, values };
    if (!batchable(client, [statement])) return run<R>(client, text, values, options);
    const choice = choices.next(statement.name);
    if (choice === 'check') choices.record(statement.name, await comparedPlans(client, statement, safe.oneOf));
    // Prepared on this connection (`batchable` above): sent as `run` would send it, without asking again.
    observers.notify(text, values);
    try {
      if (choice === 'generic') {
        // Prepared once per connection: on its own it changes nothing (its transaction ends at once).
        if (!batchable(client, [GENERIC_PLAN_FOR_BATCH])) await client.query({ name: GENERIC_PLAN_FOR_BATCH.name, text: GENERIC_PLAN_FOR_BATCH.text });
        return (await send(client, [GENERIC_PLAN_FOR_BATCH, statement]))[1] as QueryResult<R>;
      }
      return (await send(client, [statement]))[0] as QueryResult<R>;
    } catch (error) {
      throw asUnavailable(error instanceof StatementFailed ? error.cause : error);
    }
  };

  /**
   * Runs `statements` in order on `client` — after a BEGIN and before a COMMIT when asked — in
   * one round trip (`StatementBatch`) when the connection has each reusable one prepared already;
   * else one after another, which prepares them for next time. Rejects with `StatementFailed`
   * for a failing statement of `statements` (whose index it gives).
   */
  const inOrder = async (client: pg.PoolClient, statements: readonly Statement[], begin: boolean, commit: boolean): Promise<QueryResult<Record<string, unknown>>[]> => {
    for (const statement of statements) observers.notify(statement.text, statement.values);
    const batch: BatchStatement[] = statements.map(({ text, values, options }) => ({ name: named && options?.reusable ? statementName(text) : undefined, text, values }));
    if (begin) batch.unshift({ name: undefined, text: 'BEGIN', values: [] });
    if (commit) batch.push({ name: undefined, text: 'COMMIT', values: [] });
    const first = begin ? 1 : 0;
    if (batchable(client, batch)) {
      try {
        return (await send(client, batch)).slice(first, first + statements.length);
      } catch (error) {
        if (!(error instanceof StatementFailed)) throw asUnavailable(error);
        const index = error.index - first;
        if (index < 0 || index >= statements.length) throw asUnavailable(error.cause);
        throw new StatementFailed(index, asUnavailable(error.cause));
      }
    }
    if (begin) await client.query('BEGIN').catch((error: unknown) => Promise.reject(asUnavailable(error)));
    const results: QueryResult<Record<string, unknown>>[] = [];
    for (const [index, { text, values, options }] of statements.entries()) {
      try {
        const result = await client.query(config(text, values, options));
        results.push({ rows: result.rows as Record<string, unknown>[], rowCount: result.rowCount ?? 0 });
      } catch (error) {
        throw new StatementFailed(index, asUnavailable(error));
      }
    }
    if (commit) await client.query('COMMIT').catch((error: unknown) => Promise.reject(asUnavailable(error)));
    return results;
  };

  /** A `pg.Query` with a 'row' listener: node-postgres then passes rows on without collecting them. */
  const each = async <R>(text: string, values: readonly unknown[], onRow: RowHandler<R>, options?: QueryOptions): Promise<number> => {
    observers.notify(text, values);
    const client = await connect();
    return new Promise<number>((resolve, reject) => {
      let count = 0;
      let failure: { error: unknown } | null = null;
      const query = new pg.Query(config(text, values, options));
      query.on('row', (row: R) => {
        if (failure) return;
        count += 1;
        try {
          onRow(row);
        } catch (error) {
          failure = { error };
        }
      });
      query.on('end', () => {
        release(client);
        if (failure) reject(failure.error);
        else resolve(count);
      });
      query.on('error', (error: Error) => {
        // As pool.query does: a connection that saw an error is not reused.
        client.release(error);
        reject(asUnavailable(error));
      });
      client.query(query);
    });
  };

  const script = async (client: pg.Pool | pg.PoolClient, sql: string): Promise<void> => {
    observers.notify(sql, []);
    await client.query(sql).catch((error: unknown) => {
      throw asUnavailable(error);
    });
  };

  const retrying = options.retryConflicts ?? true;
  /** One statement in autocommit, on a connection of the pool. */
  const queryOnce = async <R>(text: string, values: readonly unknown[] | undefined, options: QueryOptions | undefined): Promise<QueryResult<R>> => {
    const client = await connect();
    let failure: unknown;
    try {
      return await runAlone<R>(client, text, values ?? [], options);
    } catch (error) {
      failure = error;
      throw error;
    } finally {
      release(client, failure);
    }
  };

  /** One run of a transaction: committed when `work` resolves, rolled back when it throws. */
  const transactionOnce = async <T>(work: (tx: Queryable) => Promise<T>): Promise<T> => {
    const client = await connect();
    // A client whose connection failed (or whose ROLLBACK did) is destroyed, not reused.
    let broken: Error | undefined;
    // BEGIN goes out with the transaction's first statement, and COMMIT with its last when the
    // work says which that is (`queryAndCommit`): a mutation of one write takes two round trips.
    let begun = false;
    let committed = false;
    const inTransaction = async (statements: readonly Statement[], commit: boolean): Promise<QueryResult<Record<string, unknown>>[]> => {
      if (committed) throw new Error('the transaction has already been committed');
      const begin = !begun;
      begun = true;
      const results = await inOrder(client, statements, begin, commit);
      if (commit) committed = true;
      return results;
    };
    const tx: Queryable = {
      query: async <R>(text: string, values: readonly unknown[] = [], options?: QueryOptions) => {
        if (begun && !committed) return run<R>(client, text, values, options);
        const [result] = await inTransaction([{ text, values, options }], false).catch(unwrapFailed);
        return result as QueryResult<R>;
      },
      queryInOrder: (statements) => inTransaction(statements, false),
      queryAndCommit: async (statement) => (await inTransaction([statement], true).catch(unwrapFailed))[0]!,
      script: async (sql) => {
        if (!begun) await inTransaction([], false);
        await script(client, sql);
      },
    };
    try {
      const result = await work(tx);
      if (begun && !committed) await client.query('COMMIT');
      return result;
    } catch (error) {
      const cause = error instanceof StatementFailed ? error.cause : error;
      if (isConnectionError(cause)) broken = cause as Error;
      else if (begun) await client.query('ROLLBACK').catch((rollbackError: Error) => (broken = rollbackError));
      throw error instanceof StatementFailed ? error : asUnavailable(error);
    } finally {
      if (broken) client.release(broken);
      else release(client);
    }
  };

  return {
    kind,
    // A statement in autocommit, or a transaction, that PostgreSQL undoes as a deadlock or a
    // serialization failure runs again, whole (`conflictRetry.ts`): nothing of it was written,
    // and the work of a transaction is only what it does in the database.
    query: retrying ? (text, values, options) => retryWriteConflicts(() => queryOnce(text, values, options)) : queryOnce,
    each,
    script: (sql) => script(pool, sql),
    transaction: retrying ? (work) => retryWriteConflicts(() => transactionOnce(work)) : transactionOnce,
    observe: (observer) => observers.add(observer),
    poolStatus: () => ({ max: pool.options.max, size: pool.totalCount, inUse: pool.totalCount - pool.idleCount, waiting: pool.waitingCount, acquired: waits.acquired, waitSeconds: waits.seconds }),
    listen: (channel, onNotice, onGap) => listenOn(options, types, channel, onNotice, onGap ?? (() => undefined), onConnectionError),
    close: () => pool.end(),
  };
}

/** How long a lost listening connection waits before connecting again (then doubling, at most 5 s). */
const LISTEN_RETRY_MS = 100;

/**
 * `LISTEN` on a connection of its own (a pool's connections come and go; notifications go to
 * the session that listens): reconnects when it is lost, and then calls `onGap`, since
 * notifications sent meanwhile were lost with it.
 */
async function listenOn(
  options: PostgresOptions,
  types: pg.CustomTypesConfig,
  channel: string,
  onNotice: (payload: string) => void,
  onGap: () => void,
  onConnectionError: (error: Error) => void,
): Promise<() => Promise<void>> {
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new TypeError(`listen: "${channel}" is not a plain channel name`);
  let stopped = false;
  let client: pg.Client | null = null;
  let retryMs = LISTEN_RETRY_MS;
  const open = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: options.connectionString, types, application_name: options.applicationName ?? 'loanql-listen' });
    next.on('error', (error) => {
      onConnectionError(error);
      lost(next);
    });
    next.on('notification', (message) => {
      if (message.channel === channel) onNotice(message.payload ?? '');
    });
    await next.connect();
    await next.query(`LISTEN ${channel}`);
    client = next;
    retryMs = LISTEN_RETRY_MS;
  };
  const lost = (which: pg.Client): void => {
    if (client !== which || stopped) return;
    client = null;
    void which.end().catch(() => undefined);
    const reconnect = (): void => {
      if (stopped) return;
      open().then(onGap, () => {
        retryMs = Math.min(5_000, retryMs * 2);
        setTimeout(reconnect, retryMs).unref();
      });
    };
    setTimeout(reconnect, retryMs).unref();
  };
  await open();
  return async () => {
    stopped = true;
    const current = client;
    client = null;
    await current?.end().catch(() => undefined);
  };
}
