/**
 * The servicing ledger's costs (issue 29, Done-when 5). Not part of `npm run bench`:
 *
 *   npm run build && node --import tsx bench/ledger.ts [--seconds 20] [--rounds 20] [--no-m1] [--no-pglite]
 *
 * 1. m1 — post a payment, returning the loan's next row and its new balances — through the
 *    service's GraphQL mutation against the baseline server (bench/baselineServer.ts: BEGIN, the
 *    hand-written INSERT, one hand-written read of the same JSON, COMMIT on a pooled node-postgres
 *    connection). Both go through the same database triggers, so both pay the same replay; the
 *    ratio is what the service adds around it. Same request bodies to both, autocannon in this
 *    process, alternating rounds (bench/load.ts). Before measuring, each side's answer is checked
 *    against what the database stored after that write (balances and the next row).
 * 2. Replaying a 30-year monthly loan (360 rows, built by domain/schedule.ts through createLoan)
 *    with 360 payments: server time, median of 20, measured inside the database (clock_timestamp
 *    around each statement, in a temporary function), on PostgreSQL 15 and on PGlite: a replay
 *    that changes nothing (`loanql_refresh_next` for the loan; since migration 0032 the unmeasured
 *    first call stores the loan's version, so the 20 measured are the skip: the version computed and found equal), a payment posted after the last one
 *    (0.50 on the last due date: the usual write, its lines added at the end; since migration 0034 it resumes from
 *    the state stored after the last payment), a full replay from scratch of the same rows that finds nothing
 *    to write (`loanql_replay_loans_in_full`, and `loanql_ledger` alone), the first payment reversed (every
 *    allocation line rewritten and 359 late fees appear: each row is now paid a month late) and
 *    the first payment a cent larger (every line rewritten, no fee) — the time of the UPDATE,
 *    its triggers and the replay together, each in its own transaction that is rolled back, so
 *    every run starts from the same ledger.
 *
 * PostgreSQL: `DATABASE_URL`, else a throwaway PostgreSQL 15 (.ci/postgres.sh). Writes
 * bench/results-ledger.json.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createAccount } from '../app/accounts.js';
import { createApiKey } from '../app/apiKeys.js';
import { createDefaultProduct } from '../app/products.js';
import { createLoan } from '../app/loanWrites.js';
import { migrate, openPgliteDatabase, openPostgresDatabase, type Database, type Queryable } from '../db/index.js';
import { measurePair } from './load.js';
import { freePort, ROOT, SHIPPED_NODE_FLAGS, startServer, startThrowawayPostgres, stopAll } from './processes.js';
import { QUERIES } from './queries.js';
import { median } from './median.js';

const args = parseArgs({
  options: {
    seconds: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '20' },
    loans: { type: 'string', default: '256' },
    'no-m1': { type: 'boolean', default: false },
    'no-pglite': { type: 'boolean', default: false },
  },
}).values;

const log = (line: string): void => void process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
const METADATA_PATH = join(ROOT, 'metadata', 'loanql.default.yaml');

/**
 * CPU time (ns) the database has used so far: on PostgreSQL the backend serving this connection
 * (`/proc/PID/schedstat`, nanoseconds on a CPU, so the machine's other load does not count; null
 * when the server is not on this machine), on PGlite this process (it runs in it).
 */
type CpuClock = () => number | null;
async function cpuClock(db: Queryable, embedded: boolean): Promise<CpuClock> {
  if (embedded) return () => Number(process.cpuUsage().user + process.cpuUsage().system) * 1000;
  const { rows } = await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  const path = `/proc/${rows[0]!.pid}/schedstat`;
  return () => {
    try {
      return Number(readFileSync(path, 'utf8').split(' ')[0]);
    } catch {
      return null;
    }
  };
}

interface Timed {
  /** Wall-clock server time of each run (ms), measured inside the database. */
  readonly ms: number[];
  /** CPU time of the database over all the runs (ms), or null. */
  readonly cpuMs: number | null;
}

/** Server time (ms) of each of `runs` calls of `statement` (its `$1`, `$2` = account, loan), measured in the database. */
async function serverTimes(db: Queryable, embedded: boolean, statement: string, accountId: string, loanId: string, runs: number): Promise<Timed> {
  const fn = `pg_temp.bench_${Math.random().toString(36).slice(2, 8)}`;
  await db.query(`CREATE FUNCTION ${fn}(a uuid, l uuid, n int) RETURNS SETOF double precision LANGUAGE plpgsql AS $f$
    DECLARE t0 timestamptz;
    BEGIN
      FOR i IN 1..n LOOP
        t0 := clock_timestamp();
        EXECUTE ${pgQuote(statement)} USING a, l, i;
        RETURN NEXT extract(epoch FROM clock_timestamp() - t0) * 1000;
      END LOOP;
    END $f$`);
  const clock = await cpuClock(db, embedded);
  const before = clock();
  const { rows } = await db.query<{ ms: number }>(`SELECT t::float8 AS ms FROM ${fn}($1, $2, $3) AS t`, [accountId, loanId, runs]);
  const after = clock();
  return { ms: rows.map((row) => Number(row.ms)), cpuMs: before === null || after === null ? null : (after - before) / 1e6 };
}
const pgQuote = (text: string): string => `'${text.replaceAll("'", "''")}'`;

/** Thrown to roll a measured write back. */
class RolledBack extends Error {}

/**
 * Server time (ms) of `statement` run once in each of `runs` transactions that are rolled back, so
 * every run starts from the same ledger (and none sees another's dead rows).
 */
async function rolledBackTimes(db: Database, embedded: boolean, statement: string, accountId: string, loanId: string, runs: number): Promise<Timed> {
  const ms: number[] = [];
  let cpuMs: number | null = 0;
  for (let run = 0; run < runs; run += 1) {
    await db
      .transaction(async (tx) => {
        const timed = await serverTimes(tx, embedded, statement, accountId, loanId, 1);
        ms.push(...timed.ms);
        cpuMs = cpuMs === null || timed.cpuMs === null ? null : cpuMs + timed.cpuMs;
        throw new RolledBack();
      })
      .catch((error: unknown) => {
        if (!(error instanceof RolledBack)) throw error;
      });
  }
  return { ms, cpuMs };
}

const FIRST_PAYMENT = `(SELECT id FROM payments WHERE account_id = $1 AND loan_id = $2 ORDER BY date, posted_at, id LIMIT 1)`;

/**
 * A 30-year monthly loan with 360 payments; the replay's server time: nothing changed, the first
 * payment reversed (every line rewritten, every row late: 359 late fees), the first payment a cent
 * larger (every line rewritten, no fee). Each write in its own transaction, rolled back.
 */
async function replay360(db: Database, kind: string): Promise<Record<string, unknown>> {
  const account = await createAccount(db, `replay-${Date.now().toString(36)}`);
  await createDefaultProduct(db, account.id, []);
  const loan = await createLoan(db, account.id, { Name: 'bench mortgage', Amount: 400000, Rate: 6.5, Term: 360, Frequency: 'monthly', Date_Funded: '2000-01-15', Status: 'servicing' });
  const rows = await db.query<{ due: string; payment: string }>(`SELECT due::text, payment::text FROM schedules WHERE account_id = $1 AND loan_id = $2 ORDER BY number`, [account.id, loan.id]);
  if (rows.rows.length !== 360) throw new Error(`expected 360 rows, got ${rows.rows.length}`);
  // One INSERT of the 360 payments (one replay), each on its due date, the last 100 cents short of the schedule (a loan still open).
  await db.query(
    `INSERT INTO payments (account_id, loan_id, date, amount) SELECT $1, $2, d, a FROM unnest($3::date[], $4::numeric[]) AS u(d, a)`,
    [account.id, loan.id, rows.rows.map((r) => r.due), rows.rows.map((r, i) => (i === 359 ? (Number(r.payment) - 1).toFixed(2) : r.payment))],
  );
  const lines = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM payment_allocations WHERE account_id = $1 AND loan_id = $2`, [account.id, loan.id]);
  await db.query('ANALYZE');
  // 20 in one statement, after one unmeasured: the session's plans are generic after the fifth.
  const embedded = kind === 'PGlite';
  await serverTimes(db, embedded, 'SELECT loanql_refresh_next(ARRAY[$1], ARRAY[$2])', account.id, loan.id, 1);
  const unchanged = await serverTimes(db, embedded, 'SELECT loanql_refresh_next(ARRAY[$1], ARRAY[$2])', account.id, loan.id, 20);
  // A full replay from scratch of the same rows (0034: neither the version check nor the resume; every
  // payment's step computed, compared with what is stored, nothing to write), and its computation alone.
  const fromScratch = await serverTimes(db, embedded, 'SELECT loanql_replay_loans_in_full(ARRAY[$1], ARRAY[$2])', account.id, loan.id, 20);
  const computed = await serverTimes(db, embedded, 'SELECT loanql_ledger($1, $2, loanql_stored_as_of($1, $2))', account.id, loan.id, 20);
  const reverse = `UPDATE payments SET date_reversed = date, reversal_reason = 'error' WHERE account_id = $1 AND id = ${FIRST_PAYMENT}`;
  const shift = `UPDATE payments SET amount = amount + 0.01 WHERE account_id = $1 AND id = ${FIRST_PAYMENT}`;
  // A payment after the last one (0.50 of the last row's 1.00 still owed, on its due date): the usual write, lines added at the end.
  const post = `INSERT INTO payments (account_id, loan_id, date, amount) SELECT $1, $2, max(s.due), 0.50 FROM schedules s WHERE s.account_id = $1 AND s.loan_id = $2`;
  await rolledBackTimes(db, embedded, post, account.id, loan.id, 1);
  const posted = await rolledBackTimes(db, embedded, post, account.id, loan.id, 20);
  await rolledBackTimes(db, embedded, reverse, account.id, loan.id, 1);
  const reversed = await rolledBackTimes(db, embedded, reverse, account.id, loan.id, 20);
  const shifted = await rolledBackTimes(db, embedded, shift, account.id, loan.id, 20);
  // What the two writes leave, to report (and to check that they rewrite what they claim to).
  const effect = async (statement: string): Promise<{ lines: number; fees: number }> =>
    db
      .transaction(async (tx) => {
        await tx.query(statement, [account.id, loan.id]);
        const counted = await tx.query<{ lines: number; fees: number }>(
          `SELECT (SELECT count(*)::int FROM payment_allocations WHERE account_id = $1 AND loan_id = $2 AND xmin = pg_current_xact_id()::xid) AS lines,
                  (SELECT count(*)::int FROM fees WHERE account_id = $1 AND loan_id = $2 AND xmin = pg_current_xact_id()::xid) AS fees`,
          [account.id, loan.id],
        );
        throw new RolledBack(JSON.stringify(counted.rows[0]));
      })
      .catch((error: unknown) => {
        if (!(error instanceof RolledBack)) throw error;
        return JSON.parse(error.message) as { lines: number; fees: number };
      });
  const postedWrites = await effect(post);
  const reversedWrites = await effect(reverse);
  const shiftedWrites = await effect(shift);
  const cpuPerRun = (timed: Timed): number | null => (timed.cpuMs === null ? null : timed.cpuMs / timed.ms.length);
  const result = {
    database: kind,
    payments: 360,
    allocationLines: lines.rows[0]!.n,
    replayUnchangedMsMedian: median(unchanged.ms),
    replayUnchangedCpuMsMean: cpuPerRun(unchanged),
    replayUnchangedMs: unchanged.ms,
    replayFromScratchMsMedian: median(fromScratch.ms),
    replayFromScratchCpuMsMean: cpuPerRun(fromScratch),
    replayFromScratchMs: fromScratch.ms,
    ledgerComputeMsMedian: median(computed.ms),
    ledgerComputeCpuMsMean: cpuPerRun(computed),
    replayLastPostedMsMedian: median(posted.ms),
    replayLastPostedCpuMsMean: cpuPerRun(posted),
    replayLastPostedMs: posted.ms,
    replayLastPostedWrites: postedWrites,
    replayFirstReversedMsMedian: median(reversed.ms),
    replayFirstReversedCpuMsMean: cpuPerRun(reversed),
    replayFirstReversedMs: reversed.ms,
    replayFirstReversedWrites: reversedWrites,
    replayFirstShiftedMsMedian: median(shifted.ms),
    replayFirstShiftedCpuMsMean: cpuPerRun(shifted),
    replayFirstShiftedMs: shifted.ms,
    replayFirstShiftedWrites: shiftedWrites,
    loadAverage: loadavg()[0],
  };
  const show = (ms: number, cpu: number | null): string => `${ms.toFixed(2)} ms${cpu === null ? '' : ` (CPU ${cpu.toFixed(2)} ms)`}`;
  log(
    `${kind}: replay of 360 payments (${result.allocationLines} lines), median of 20: nothing changed ${show(result.replayUnchangedMsMedian, result.replayUnchangedCpuMsMean)}; ` +
      `full replay from scratch, nothing to write ${show(result.replayFromScratchMsMedian, result.replayFromScratchCpuMsMean)} (its loanql_ledger alone ${show(result.ledgerComputeMsMedian, result.ledgerComputeCpuMsMean)}); ` +
      `last payment posted ${show(result.replayLastPostedMsMedian, result.replayLastPostedCpuMsMean)} (${postedWrites.lines} lines, ${postedWrites.fees} fees written); ` +
      `first payment reversed ${show(result.replayFirstReversedMsMedian, result.replayFirstReversedCpuMsMean)} (${reversedWrites.lines} lines, ${reversedWrites.fees} fees written); ` +
      `first payment +0.01 ${show(result.replayFirstShiftedMsMedian, result.replayFirstShiftedCpuMsMean)} (${shiftedWrites.lines} lines, ${shiftedWrites.fees} fees written); load ${loadavg()[0]!.toFixed(1)}`,
  );
  return result;
}

async function m1(databaseUrl: string, db: Database): Promise<Record<string, unknown>> {
  const query = QUERIES.find((q) => q.id === 'm1')!;
  const account = await createAccount(db, `ledger-m1-${Date.now().toString(36)}`);
  await createDefaultProduct(db, account.id, []);
  const key = (await createApiKey(db, account.id, 'bench ledger')).key;
  const count = Number(args.loans);
  const loanIds: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const loan = await createLoan(db, account.id, { Name: `bench loan ${i}`, Amount: 100000 + i * 1000, Rate: 8 + (i % 5), Term: 120 + (i % 4) * 60, Frequency: 'monthly', Date_Funded: '2025-06-15', Status: 'servicing' });
    loanIds.push(loan.id);
  }
  // Each loan paid up to the business date (a few months of history to replay).
  await db.query(
    `INSERT INTO payments (account_id, loan_id, date, amount)
     SELECT s.account_id, s.loan_id, s.due, s.payment FROM schedules s WHERE s.account_id = $1 AND s.due <= date '2026-10-31'`,
    [account.id],
  );
  await db.query('VACUUM ANALYZE');
  const pool = 10;
  const servicePort = await freePort();
  const service = await startServer(
    'service',
    [...SHIPPED_NODE_FLAGS, join(ROOT, 'dist', 'server', 'main.js')],
    { DATABASE_URL: databaseUrl, METADATA_PATH, HOST: '127.0.0.1', PORT: String(servicePort), LOG_LEVEL: 'warn', PG_POOL_SIZE: String(pool), WEBHOOK_WORKER: '0' },
    servicePort,
    async (url) => (await fetch(`${url}/healthz`)).ok,
  );
  const baselinePort = await freePort();
  const baseline = await startServer(
    'baseline',
    [...SHIPPED_NODE_FLAGS, '--import', 'tsx', join(ROOT, 'bench', 'baselineServer.ts')],
    { DATABASE_URL: databaseUrl, HOST: '127.0.0.1', PORT: String(baselinePort), PG_POOL_SIZE: String(pool) },
    baselinePort,
    async (url) => (await fetch(`${url}/none`, { method: 'POST' })).status === 404,
  );
  const headers = { authorization: `Token ${key}` };
  const bodies = loanIds.map((loan) => JSON.stringify({ query: query.graphql, operationName: query.operationName, variables: { loan, date: '2026-11-20', amount: '0.01' } }));

  // Each side's answer is what the database stored after its write.
  for (const [name, url] of [['engine', `${service.url}/api/graph`], ['baseline', `${baseline.url}/graphql`]] as const) {
    for (const [i, body] of bodies.slice(0, 10).entries()) {
      const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
      const text = await response.text();
      const answer = JSON.parse(text) as { data?: { insert_payments_one?: { loan: Record<string, unknown> } } };
      const stored = await db.query(
        `SELECT l.principal_outstanding, l.interest_due, l.fees_due, l.credit_balance, l.status,
                (SELECT coalesce(json_agg(json_build_object('number', s.number, 'due', s.due)), '[]') FROM schedules s WHERE s.account_id = l.account_id AND s.loan_id = l.id AND s.is_next) AS schedules
           FROM loans l WHERE l.account_id = $1 AND l.id = $2`,
        [account.id, loanIds[i]],
      );
      const want = JSON.parse(JSON.stringify(stored.rows[0]), (_, v: unknown) => (typeof v === 'string' && /^-?\d+\.\d+$/.test(v) ? Number(v) : v)) as Record<string, unknown>;
      const got = answer.data?.insert_payments_one?.loan;
      if (!got || JSON.stringify(Object.keys(got).sort()) !== JSON.stringify(Object.keys(want).sort()) || Object.keys(want).some((k) => JSON.stringify(got[k]) !== JSON.stringify(want[k]))) {
        throw new Error(`${name}: the answer ${text} is not the stored ledger ${JSON.stringify(want)}`);
      }
    }
  }
  log('engine and baseline answers match the stored ledger (10 loans each)');

  const seconds = Number(args.seconds);
  const rounds = Number(args.rounds);
  const [engine, base] = await measurePair(
    { pid: service.pid, url: service.url, path: '/api/graph', headers, bodies },
    { pid: baseline.pid, url: baseline.url, path: '/graphql', headers, bodies },
    { connections: 16, durationSeconds: seconds, warmupSeconds: 2, rounds },
    true,
  );
  const pairs = engine.roundRequestsPerSecond.map((rps, i) => rps / base.roundRequestsPerSecond[i]!);
  const result = {
    loans: count,
    engine: { requestsPerSecond: engine.requestsPerSecond, p50: engine.latencyP50Ms, p99: engine.latencyP99Ms, errors: engine.errors, server: engine.server },
    baseline: { requestsPerSecond: base.requestsPerSecond, p50: base.latencyP50Ms, p99: base.latencyP99Ms, errors: base.errors, server: base.server },
    ratio: engine.requestsPerSecond / base.requestsPerSecond,
    medianRoundRatio: median(pairs),
    roundRatios: pairs,
    loadAverage: loadavg()[0],
  };
  log(
    `m1: engine ${engine.requestsPerSecond.toFixed(0)} req/s (p50 ${engine.latencyP50Ms} ms, errors ${engine.errors}), baseline ${base.requestsPerSecond.toFixed(0)} req/s (p50 ${base.latencyP50Ms} ms, errors ${base.errors}), ` +
      `ratio ${result.ratio.toFixed(2)}, median of ${pairs.length} round ratios ${result.medianRoundRatio.toFixed(2)} (${Math.min(...pairs).toFixed(2)}–${Math.max(...pairs).toFixed(2)}), load ${loadavg()[0]!.toFixed(1)}`,
  );
  await service.stop();
  await baseline.stop();
  return result;
}

async function main(): Promise<void> {
  const results: Record<string, unknown> = { at: new Date().toISOString() };
  const databaseUrl = process.env.DATABASE_URL ?? (await startThrowawayPostgres()).url;
  const db = openPostgresDatabase({ connectionString: databaseUrl, maxConnections: 2 });
  try {
    await migrate(db);
    const version = await db.query<{ v: string }>(`SELECT current_setting('server_version') AS v`);
    results.postgresVersion = version.rows[0]!.v;
    results.replayPostgres = await replay360(db, `PostgreSQL ${version.rows[0]!.v}`);
    if (!args['no-m1']) results.m1 = await m1(databaseUrl, db);
  } finally {
    await db.close();
  }
  if (!args['no-pglite']) {
    const embedded = await openPgliteDatabase(undefined);
    try {
      await migrate(embedded);
      results.replayPglite = await replay360(embedded, 'PGlite');
    } finally {
      await embedded.close();
    }
  }
  writeFileSync(join(ROOT, 'bench', 'results-ledger.json'), `${JSON.stringify(results, null, 2)}\n`);
  log('wrote bench/results-ledger.json');
}

main()
  .catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  })
  .finally(() => stopAll());

