import { createHash } from 'node:crypto';
import pg from 'pg';
import { ObserverSet, TYPE_OIDS, type Database, type DatabaseKind, type Queryable, type QueryOptions, type QueryResult, type RowHandler } from './database.js';

/**
 * The server-side name of a reusable statement: a digest of its text, so one text always has
 * one name on every connection (node-postgres prepares it on first use per connection).
 * The engine marks only statements of its plan cache as reusable, which bounds how many there are.
 */
const statementNames = new Map<string, string>();
function statementName(text: string): string {
  let name = statementNames.get(text);
  if (!name) {
    name = `lq_${createHash('sha256').update(text).digest('base64url').slice(0, 32)}`;
    if (statementNames.size >= 5000) statementNames.clear();
    statementNames.set(text, name);
  }
  return name;
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
}

/** A `Database` over a node-postgres pool. */
export function openPostgresDatabase(options: PostgresOptions): Database {
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.maxConnections ?? 10,
    types: typeParsers(),
    ...(options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {}),
  });
  // An idle client that loses its connection must not crash the process.
  pool.on('error', () => undefined);
  const observers = new ObserverSet();

  const config = (text: string, values: readonly unknown[], options?: QueryOptions): pg.QueryConfig =>
    options?.reusable ? { name: statementName(text), text, values: values as unknown[] } : { text, values: values as unknown[] };

  const run = async <R>(client: pg.Pool | pg.PoolClient, text: string, values: readonly unknown[] = [], options?: QueryOptions): Promise<QueryResult<R>> => {
    observers.notify(text, values);
    const result = await client.query(config(text, values, options));
    return { rows: result.rows as R[], rowCount: result.rowCount ?? 0 };
  };

  /** A `pg.Query` with a 'row' listener: node-postgres then passes rows on without collecting them. */
  const each = async <R>(text: string, values: readonly unknown[], onRow: RowHandler<R>, options?: QueryOptions): Promise<number> => {
    observers.notify(text, values);
    const client = await pool.connect();
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
        client.release();
        if (failure) reject(failure.error);
        else resolve(count);
      });
      query.on('error', (error: Error) => {
        // As pool.query does: a connection that saw an error is not reused.
        client.release(error);
        reject(error);
      });
      client.query(query);
    });
  };

  const script = async (client: pg.Pool | pg.PoolClient, sql: string): Promise<void> => {
    observers.notify(sql, []);
    await client.query(sql);
  };

  return {
    kind: options.kind ?? 'postgres',
    query: (text, values, options) => run(pool, text, values, options),
    each,
    script: (sql) => script(pool, sql),
    async transaction(work) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const tx: Queryable = { query: (text, values, options) => run(client, text, values, options), script: (sql) => script(client, sql) };
        const result = await work(tx);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    observe: (observer) => observers.add(observer),
    close: () => pool.end(),
  };
}
