/**
 * The collections queue's statements at scale (issue 31, Done-when 3). Not part of `npm run bench`:
 *
 *   npm run build && node --import tsx bench/collections.ts [--account SLUG] [--scale 10] [--runs 20]
 *
 * With `DATABASE_URL` and `--account`, measures that (seeded) account; otherwise starts a
 * throwaway PostgreSQL 15 (.ci/postgres.sh), creates an account and seeds it with
 * `loanql seed --scale N` (scale 10 = 100,000 loans: 10 minutes or more on 2 cores). `--note`
 * says in the report how an --account's data was made.
 *
 * For each case — the queue's first page in the default order (most days past due first), the
 * aging summary, the first page by amount past due (every late loan's amount computed), the first
 * page of one bucket, and the CSV download's statement (every late loan) — the exact statement
 * `app/collectionsQueue.ts` runs (captured with `Database.observe`) is run `--runs` times after 3
 * warm-up runs, each timed in this process around `db.query` (loopback round trip included: what
 * the page waits for), then once under `EXPLAIN (ANALYZE, BUFFERS)`. Writes
 * bench/results-collections.json and its section of bench/RESULTS.md (between the markers
 * `<!-- collections -->`; `npm run bench` keeps it, see `keepCollectionsSection`).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openPostgresDatabase, type Database } from '../db/index.js';
import {
  agingSummary,
  COLLECTIONS_DOWNLOAD_CAP,
  COLLECTIONS_PAGE_SIZE,
  collectionsQueue,
  DEFAULT_COLLECTIONS_FILTER,
} from '../app/collectionsQueue.js';
import { keepCollectionsSection, renderCollectionsSection, type CollectionsBench } from './collectionsReport.js';
import { ROOT, runCli, startThrowawayPostgres, stopAll } from './processes.js';
import { median } from './median.js';

const args = parseArgs({
  options: {
    account: { type: 'string' },
    scale: { type: 'string', default: '10' },
    runs: { type: 'string', default: '20' },
    /** How the --account's data was made, for the report. */
    note: { type: 'string' },
  },
}).values;
const RUNS = Number(args.runs);

const log = (line: string): void => void process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
const percentile = (values: readonly number[], p: number): number => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.ceil((p / 100) * values.length) - 1)]!;

/** The one statement `read` runs, as text and values. */
async function captured(db: Database, read: () => Promise<unknown>): Promise<{ text: string; values: readonly unknown[] }> {
  const seen: { text: string; values: readonly unknown[] }[] = [];
  const stop = db.observe((text, values) => void seen.push({ text, values }));
  try {
    await read();
  } finally {
    stop();
  }
  if (seen.length !== 1) throw new Error(`expected one statement, saw ${seen.length}`);
  return seen[0]!;
}

async function measure(db: Database, name: string, read: () => Promise<{ rows: number }>): Promise<CollectionsBench['cases'][number]> {
  const statement = await captured(db, read);
  for (let i = 0; i < 3; i++) await db.query(statement.text, statement.values);
  const times: number[] = [];
  let rows = 0;
  for (let i = 0; i < RUNS; i++) {
    const start = process.hrtime.bigint();
    const result = await db.query(statement.text, statement.values);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
    rows = result.rows.length;
  }
  const plan = await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${statement.text}`, statement.values);
  const lines = plan.rows.map((row) => row['QUERY PLAN']);
  const result = {
    name,
    rowsReturned: rows,
    matching: (await read()).rows,
    medianMs: Number(median(times).toFixed(1)),
    p90Ms: Number(percentile(times, 90).toFixed(1)),
    minMs: Number(Math.min(...times).toFixed(1)),
    maxMs: Number(Math.max(...times).toFixed(1)),
    load1: Number(loadavg()[0]!.toFixed(1)),
    plan: lines,
  };
  log(`${name}: median ${result.medianMs} ms, p90 ${result.p90Ms} ms (${RUNS} runs, ${rows} rows), load ${result.load1}`);
  return result;
}

async function main(): Promise<void> {
  let databaseUrl = process.env.DATABASE_URL;
  let slug = args.account;
  if (!databaseUrl || !slug) {
    databaseUrl = (await startThrowawayPostgres()).url;
    slug = `collections-${Date.now().toString(36)}`;
    runCli(databaseUrl, ['account', 'create', slug]);
    log(`seeding ${slug} at scale ${args.scale} (scale 10: 10+ minutes)…`);
    runCli(databaseUrl, ['seed', '--account', slug, '--scale', String(args.scale)]);
  }
  const db = openPostgresDatabase({ connectionString: databaseUrl, maxConnections: 2 });
  try {
    const account = (await db.query<{ id: string }>(`SELECT id FROM accounts WHERE slug = $1`, [slug])).rows[0];
    if (!account) throw new Error(`no account ${slug}`);
    await db.query('VACUUM ANALYZE');
    const facts = (
      await db.query<{ version: string; loans: string; servicing: string; late: string; schedules: string; payments: string; business_date: string }>(
        `SELECT current_setting('server_version') AS version,
                (SELECT count(*) FROM loans WHERE account_id = $1) AS loans,
                (SELECT count(*) FROM loans WHERE account_id = $1 AND status = 'servicing') AS servicing,
                (SELECT count(*) FROM loans WHERE account_id = $1 AND status = 'servicing' AND arrears_since < loanql_business_date($1)) AS late,
                (SELECT count(*) FROM schedules WHERE account_id = $1) AS schedules,
                (SELECT count(*) FROM payments WHERE account_id = $1) AS payments,
                loanql_business_date($1)::text AS business_date`,
        [account.id],
      )
    ).rows[0]!;
    log(`account ${slug}: ${facts.loans} loans, ${facts.servicing} in servicing, ${facts.late} late, business date ${facts.business_date}`);
    const id = account.id;
    const page = (filter = DEFAULT_COLLECTIONS_FILTER, limit = COLLECTIONS_PAGE_SIZE) => async () => ({ rows: (await collectionsQueue(db, id, filter, limit, 0)).total });
    const cases = [
      await measure(db, 'queue, first page, most days first (the default)', page()),
      await measure(db, 'aging summary (every bucket: count, amount past due, principal)', async () => ({ rows: (await agingSummary(db, id)).buckets.length })),
      await measure(db, 'queue, first page, largest amount past due first', page({ ...DEFAULT_COLLECTIONS_FILTER, sort: 'amount_past_due' })),
      await measure(db, 'queue, first page of bucket 30-59', page({ ...DEFAULT_COLLECTIONS_FILTER, bucket: '30-59' })),
      await measure(db, `CSV download: every late loan (cap ${COLLECTIONS_DOWNLOAD_CAP})`, page(DEFAULT_COLLECTIONS_FILTER, COLLECTIONS_DOWNLOAD_CAP)),
    ];
    const results: CollectionsBench = {
      at: new Date().toISOString(),
      postgresVersion: facts.version,
      scale: args.account ? null : Number(args.scale),
      note: args.note ?? null,
      runs: RUNS,
      loans: Number(facts.loans),
      servicing: Number(facts.servicing),
      late: Number(facts.late),
      schedules: Number(facts.schedules),
      payments: Number(facts.payments),
      businessDate: facts.business_date,
      cases,
    };
    writeFileSync(join(ROOT, 'bench', 'results-collections.json'), `${JSON.stringify(results, null, 2)}\n`);
    const resultsPath = join(ROOT, 'bench', 'RESULTS.md');
    writeFileSync(resultsPath, keepCollectionsSection(readFileSync(resultsPath, 'utf8'), renderCollectionsSection(results)));
    log('wrote bench/results-collections.json and its section of bench/RESULTS.md');
  } finally {
    await db.close();
  }
}

main()
  .catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  })
  .finally(() => stopAll());
