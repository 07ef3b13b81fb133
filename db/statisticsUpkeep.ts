import type { Database, Queryable } from './database.js';

/**
 * Fresh planner statistics on the embedded database, which has no autovacuum to gather them.
 *
 * A table's statistics are the ones its last ANALYZE left: after `migrate`, an empty table's.
 * The ledger's replay runs on generic plans (migration 0026), made once per session from those
 * statistics and kept until they change; made for an empty `payment_allocations`, they join every
 * allocation to every changed line, so each write of a long-running embedded service cost more
 * than the last (bench/embeddedGrowth.ts: 108, 200, then 301 ms a loan over each hundred of its
 * first 300; 60, 56 and 49 with this upkeep). PostgreSQL's autovacuum analyzes a table once a tenth of it changed;
 * here a table is analyzed once it has grown to twice its pages at its last ANALYZE, plus 8
 * pages (64 kB): a table analyzed is analyzed again only after it has doubled, so the work stays
 * a small share of the writes. An ANALYZE also makes PostgreSQL plan again every cached plan
 * that reads the table.
 *
 * Tables of `public` only (the service's own schema); the statement names no value and takes
 * every name from the catalogue.
 */
const ANALYZE_GROWN_TABLES = `DO $analyze_grown$
DECLARE
  grown regclass;
BEGIN
  FOR grown IN
    SELECT c.oid::regclass FROM pg_class c
     WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r'
       AND pg_relation_size(c.oid) >= (2 * greatest(c.relpages, 0) + 8)::bigint * current_setting('block_size')::bigint
     ORDER BY c.relname
  LOOP
    EXECUTE format('ANALYZE %s', grown);
  END LOOP;
END $analyze_grown$`;

/** Analyzes every table of `public` that has doubled (plus 8 pages) since its last ANALYZE. */
export async function analyzeGrownTables(db: Queryable): Promise<void> {
  await db.query(ANALYZE_GROWN_TABLES);
}

export interface StatisticsUpkeepOptions {
  /** How often to look (60 s by default): one catalogue query when nothing grew. */
  readonly intervalMs?: number;
  /** A failed look (the database closing, say); the next one tries again. */
  readonly onError: (error: unknown) => void;
}

/**
 * On the embedded database (PGlite), looks every `intervalMs` for grown tables and analyzes
 * them (`analyzeGrownTables`); returns a stop function. On PostgreSQL it does nothing (its
 * autovacuum keeps the statistics) and returns null.
 */
export function keepStatisticsFresh(db: Database, { intervalMs = 60_000, onError }: StatisticsUpkeepOptions): (() => void) | null {
  if (db.kind !== 'pglite') return null;
  let running = false;
  const tick = (): void => {
    if (running) return;
    running = true;
    analyzeGrownTables(db)
      .catch(onError)
      .finally(() => {
        running = false;
      });
  };
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
