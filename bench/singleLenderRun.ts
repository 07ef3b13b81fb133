/**
 * `npm run bench`'s part of issue 36: copies the benchmark account into the single-lender schema
 * (bench/singleLender.ts), starts bench/singleLenderServer.ts on it, and names what it answers;
 * run.ts measures it against the engine in alternating rounds like the baseline.
 */
import { join } from 'node:path';
import type pg from 'pg';
import type { BenchQuery } from './queries.js';
import { freePort, ROOT, SHIPPED_NODE_FLAGS, startServer, type ServerProcess } from './processes.js';
import type { ThroughputRow } from './report.js';
import { loadSingleLender } from './singleLender.js';
import { SINGLE_LENDER_STATEMENTS } from './singleLenderQueries.js';
import type { SingleSqlOnlyRow } from './singleLenderSqlOnly.js';

export interface SingleLenderResults {
  /** Rows and heap pages per table: the single-lender copy's, and loanql's for the account's database. */
  readonly tables: { readonly single: Readonly<Record<string, { rows: number; pages: number }>>; readonly loanql: Readonly<Record<string, { rows: number; pages: number }>> };
  /** Engine against the single-lender server (`baseline` holds the single-lender server's figures). */
  readonly throughput: readonly ThroughputRow[];
  readonly sqlOnly: readonly SingleSqlOnlyRow[];
}

/** The admin queries the single-lender server answers (every admin query but m1: bench/singleLenderQueries.ts). */
export const singleLenderQueries = (queries: readonly BenchQuery[]): BenchQuery[] => queries.filter((query) => !query.role && SINGLE_LENDER_STATEMENTS[query.id]);

export async function startSingleLender(pool: pg.Pool, databaseUrl: string, accountId: string, poolSize: number): Promise<{ server: ServerProcess; tables: SingleLenderResults['tables'] }> {
  const single = await loadSingleLender(pool, accountId);
  const { rows } = await pool.query<{ table: string; rows: string; pages: string }>(
    `SELECT c.relname AS table, c.reltuples::bigint AS rows, c.relpages AS pages FROM pg_class c
      WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r' AND c.relname = ANY($1::text[]) ORDER BY 1`,
    [Object.keys(single)],
  );
  const loanql = Object.fromEntries(rows.map((row) => [row.table, { rows: Number(row.rows), pages: Number(row.pages) }]));
  const port = await freePort();
  const server = await startServer(
    'single-lender',
    [...SHIPPED_NODE_FLAGS, '--import', 'tsx', join(ROOT, 'bench', 'singleLenderServer.ts')],
    { DATABASE_URL: databaseUrl, HOST: '127.0.0.1', PORT: String(port), PG_POOL_SIZE: String(poolSize) },
    port,
    async (url) => (await fetch(`${url}/none`, { method: 'POST' })).status === 404,
  );
  return { server, tables: { single, loanql } };
}
