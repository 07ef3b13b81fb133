/**
 * SQL only against the single-lender schema (issue 36): per admin query, the engine's statement
 * (compiled as the service runs it) on one connection and the single-lender statement
 * (bench/singleLenderQueries.ts) on another whose `search_path` is `single_lender`, both named
 * prepared statements, run alternately (engine, single, single, engine, …) with the same
 * variable sets; median of each and the ratio of the medians (engine / single: above 1 the
 * engine's statement is slower). With `--explain`, also the buffers each touches
 * (`EXPLAIN (ANALYZE, BUFFERS)` of the first variable set): where the time goes.
 *
 * Standalone: `DATABASE_URL=… node --import tsx bench/singleLenderSqlOnly.ts --account SLUG
 * [--load] [--only q1,q3] [--seconds S] [--explain]` (`--load` (re)creates the single-lender copy
 * of the account first). `npm run bench` runs the measurement after its throughput rounds.
 */
import { existsSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { GraphEngine } from '../engine/index.js';
import { QUERIES, isMutation, accountIdOf, sampleData, type BenchQuery, type DataSample } from './queries.js';
import { loadSingleLender, SINGLE_LENDER_SCHEMA } from './singleLender.js';
import { SINGLE_LENDER_STATEMENTS } from './singleLenderQueries.js';
import { engineStatement, servedMetadata, type SqlOnlyOptions } from './sqlOnly.js';

export interface SingleSqlOnlyRow {
  readonly id: string;
  readonly runs: number;
  readonly engineMedianMs: number;
  readonly singleMedianMs: number;
  /** Engine median over single-lender median. */
  readonly ratio: number;
  /**
   * The backend's CPU time per execution (µs, median; from /proc/<backend pid>/schedstat, when
   * PostgreSQL runs on this machine): what the statement costs the server whatever the load, which
   * on a shared machine moves wall times several-fold.
   */
  readonly engineCpuUs?: number;
  readonly singleCpuUs?: number;
  /** Shared buffers (hit + read) of one execution, from EXPLAIN (ANALYZE, BUFFERS). */
  readonly engineBuffers: number;
  readonly singleBuffers: number;
}

const quantile = (samples: readonly number[], q: number): number => {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
};

/** The admin queries the single-lender server answers (no mutation: one statement each). */
export const singleLenderReadQueries = (queries: readonly BenchQuery[]): BenchQuery[] => queries.filter((query) => !query.role && !isMutation(query) && SINGLE_LENDER_STATEMENTS[query.id]);

/** CPU time a local process has run, in ns (the first field of /proc/<pid>/schedstat); 0 when not local. */
function backendCpuNs(pid: number): number {
  if (!Number.isFinite(pid)) return 0;
  return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
}

async function buffersOf(client: pg.Client, text: string, values: readonly unknown[]): Promise<{ buffers: number; plan: string[] }> {
  const { rows } = await client.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`, values as unknown[]);
  const root = (rows[0]!['QUERY PLAN'] as { Plan: Record<string, unknown> }[])[0]!.Plan;
  const { rows: textRows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${text}`, values as unknown[]);
  return { buffers: Number(root['Shared Hit Blocks'] ?? 0) + Number(root['Shared Read Blocks'] ?? 0), plan: textRows.map((row) => row['QUERY PLAN']) };
}

export async function measureSingleLenderSqlOnly(databaseUrl: string, accountId: string, sample: DataSample, queries: readonly BenchQuery[], options: SqlOnlyOptions & { explain?: boolean }, log: (line: string) => void = () => undefined): Promise<SingleSqlOnlyRow[]> {
  const engineClient = new pg.Client({ connectionString: databaseUrl, options: '-c jit=off' });
  const singleClient = new pg.Client({ connectionString: databaseUrl, options: `-c jit=off -c search_path=${SINGLE_LENDER_SCHEMA}` });
  await engineClient.connect();
  await singleClient.connect();
  try {
    const engine = new GraphEngine(await servedMetadata(engineClient), { maxDepth: 12, maxRows: null, planCacheSize: 100 });
    const backendPid = async (client: pg.Client): Promise<number> => {
      const pid = Number((await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid);
      return existsSync(`/proc/${pid}/schedstat`) ? pid : Number.NaN;
    };
    const enginePid = await backendPid(engineClient);
    const singlePid = await backendPid(singleClient);
    const rows: SingleSqlOnlyRow[] = [];
    for (const query of singleLenderReadQueries(queries)) {
      const statement = SINGLE_LENDER_STATEMENTS[query.id]!;
      const variableSets = 50;
      const engineText = engineStatement(engine, query, sample, accountId, 0).text;
      const engineValues = Array.from({ length: variableSets }, (_, i) => engineStatement(engine, query, sample, accountId, i).values);
      const singleValues = Array.from({ length: variableSets }, (_, i) => [...statement.params(query.variables(sample, i))]);
      const run = async (side: 'e' | 's', i: number): Promise<{ ms: number; cpuNs: number; text: string }> => {
        const [client, config, pid] =
          side === 'e'
            ? [engineClient, { name: `e_${query.id}`, text: engineText, values: engineValues[i % variableSets] }, enginePid]
            : [singleClient, { name: `s_${query.id}`, text: statement.sql, values: singleValues[i % variableSets] }, singlePid];
        const cpuBefore = backendCpuNs(pid);
        const start = performance.now();
        const result = await client.query<{ response: string }>(config);
        const ms = performance.now() - start;
        return { ms, cpuNs: backendCpuNs(pid) - cpuBefore, text: result.rows[0]?.response ?? '' };
      };
      for (let i = 0; i < 5; i++) {
        const [e, s] = [await run('e', i), await run('s', i)];
        if (!isDeepStrictEqual(JSON.parse(e.text), JSON.parse(s.text))) throw new Error(`${query.id} #${i}: the engine's and the single-lender statements answer differently:\n${e.text.slice(0, 400)}\n${s.text.slice(0, 400)}`);
      }
      for (let i = 0; i < options.warmupRuns; i++) {
        await run('e', i);
        await run('s', i);
      }
      const engineMs: number[] = [];
      const singleMs: number[] = [];
      const engineCpu: number[] = [];
      const singleCpu: number[] = [];
      const deadline = performance.now() + options.seconds * 1000;
      for (let i = 0; i < options.maxRuns && performance.now() < deadline; i++) {
        const order: ('e' | 's')[] = i % 2 === 0 ? ['e', 's'] : ['s', 'e'];
        for (const side of order) {
          const { ms, cpuNs } = await run(side, i);
          (side === 'e' ? engineMs : singleMs).push(ms);
          (side === 'e' ? engineCpu : singleCpu).push(cpuNs / 1000);
        }
      }
      const cpu = Number.isFinite(enginePid) ? { engineCpuUs: quantile(engineCpu, 0.5), singleCpuUs: quantile(singleCpu, 0.5) } : {};
      const engineExplain = await buffersOf(engineClient, engineText, engineValues[0]!);
      const singleExplain = await buffersOf(singleClient, statement.sql, singleValues[0]!);
      const row: SingleSqlOnlyRow = {
        id: query.id,
        runs: engineMs.length,
        engineMedianMs: quantile(engineMs, 0.5),
        singleMedianMs: quantile(singleMs, 0.5),
        ratio: quantile(engineMs, 0.5) / quantile(singleMs, 0.5),
        engineBuffers: engineExplain.buffers,
        singleBuffers: singleExplain.buffers,
        ...cpu,
      };
      log(
        `single sql-only ${row.id}: engine ${row.engineMedianMs.toFixed(3)} ms, single ${row.singleMedianMs.toFixed(3)} ms, ratio (single/engine time) ${(1 / row.ratio).toFixed(2)}, ` +
          `backend CPU µs ${row.engineCpuUs?.toFixed(0) ?? '–'} / ${row.singleCpuUs?.toFixed(0) ?? '–'} (single/engine ${row.engineCpuUs ? (row.singleCpuUs! / row.engineCpuUs).toFixed(2) : '–'}), buffers ${row.engineBuffers} / ${row.singleBuffers}, ${row.runs} runs`,
      );
      if (options.explain) log(`engine ${query.id}:\n${engineExplain.plan.join('\n')}\nsingle ${query.id}:\n${singleExplain.plan.join('\n')}`);
      rows.push(row);
    }
    return rows;
  } finally {
    await engineClient.end();
    await singleClient.end();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values: args } = parseArgs({
    options: { account: { type: 'string' }, only: { type: 'string' }, seconds: { type: 'string', default: '3' }, runs: { type: 'string', default: '400' }, load: { type: 'boolean', default: false }, explain: { type: 'boolean', default: false } },
  });
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl || !args.account) throw new Error('DATABASE_URL and --account SLUG are required');
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  const accountId = await accountIdOf(pool, args.account);
  if (args.load) process.stderr.write(`${JSON.stringify(await loadSingleLender(pool, accountId))}\n`);
  const sample = await sampleData(pool, accountId);
  await pool.end();
  const selected = QUERIES.filter((query) => !args.only || args.only.split(',').includes(query.id));
  await measureSingleLenderSqlOnly(databaseUrl, accountId, sample, selected, { maxRuns: Number(args.runs), seconds: Number(args.seconds), warmupRuns: 10, explain: args.explain }, (line) => process.stderr.write(`${line}\n`));
}
