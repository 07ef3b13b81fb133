/**
 * SQL-only measurement (issue 20): for each benchmark query, the engine's statement (as the
 * engine compiles it for that role, from the metadata checked against the live database, as the
 * service runs it) and the baseline's hand-written statement, on ONE connection, both as named
 * prepared statements, interleaved (engine, baseline, baseline, engine, …) with the same
 * variable sets, many runs. Reports the median and p90 of each side's time (client-side, from
 * sending Bind/Execute to the last byte of the row: the round trip on loopback is common to both)
 * and the ratio of the medians. No HTTP and no Node server in between, so background load moves
 * both sides alike: the steadiest evidence of the statements' own cost.
 *
 * Neither side's statement carries the API key-state check here: both servers wrap their
 * statement in the same `CASE WHEN EXISTS (… api_keys …)`, which costs both the same.
 *
 * Standalone: `DATABASE_URL=… node --import tsx bench/sqlOnly.ts --account SLUG [--only q1,q3i] [--seconds S]`
 * (the account must be seeded); `npm run bench` runs it as part of the whole benchmark.
 */
import { performance } from 'node:perf_hooks';
import { join } from 'node:path';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { GraphEngine } from '../engine/index.js';
import { checkMetadataAgainstDatabase, loadMetadataFile, type Metadata } from '../metadata/index.js';
import { ALL_QUERIES, isMutation, accountIdOf, sampleData, type BenchQuery, type DataSample } from './queries.js';
import { ROOT } from './processes.js';

export interface SqlOnlyRow {
  readonly id: string;
  readonly role: string;
  readonly runs: number;
  readonly engineMedianMs: number;
  readonly engineP90Ms: number;
  readonly baselineMedianMs: number;
  readonly baselineP90Ms: number;
  /** Engine median over baseline median: above 1, the engine's statement is slower. */
  readonly ratio: number;
  /** Response text length of the first variable set, in characters. */
  readonly engineChars: number;
  readonly baselineChars: number;
}

export interface SqlOnlyOptions {
  /** Most runs per side and query. */
  readonly maxRuns: number;
  /** Most measured seconds per query (both sides together). */
  readonly seconds: number;
  readonly warmupRuns: number;
}

const quantile = (samples: readonly number[], q: number): number => {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
};

/** The metadata the service serves: the file checked against the live database (NOT NULL columns known). */
export async function servedMetadata(pool: pg.Pool | pg.Client): Promise<Metadata> {
  const file = loadMetadataFile(join(ROOT, 'metadata', 'loanql.default.yaml'));
  const { metadata } = await checkMetadataAgainstDatabase(file, { query: (text: string, values?: readonly unknown[]) => pool.query(text, values as unknown[]) } as never);
  return metadata;
}

/** The engine's statement and values for one variable set of a query, as the service would run it for that role. */
export function engineStatement(engine: GraphEngine, query: BenchQuery, sample: DataSample, accountId: string, i: number): { text: string; values: unknown[] } {
  const role = engine.forRole(query.role ?? 'admin');
  if (!role) throw new Error(`the metadata has no role ${query.role}`);
  const principal = query.role === 'investor' ? { accountId, keyVariables: new Map([['person_id', sample.investorPersonId]]) } : accountId;
  const prepared = role.prepare({ query: query.graphql, operationName: query.operationName, variables: query.variables(sample, i) }, principal);
  if (prepared.kind !== 'statement') throw new Error(`${query.id} does not compile to one statement`);
  return { text: prepared.text, values: [...prepared.values] };
}

/** The baseline's statement values for one variable set (without the key check). */
export function baselineValues(query: BenchQuery, sample: DataSample, accountId: string, i: number): unknown[] {
  const leading = query.role === 'investor' ? [accountId, sample.investorPersonId] : [accountId];
  return [...leading, ...query.baselineParams(query.variables(sample, i))];
}

export async function measureSqlOnly(databaseUrl: string, accountId: string, sample: DataSample, queries: readonly BenchQuery[], options: SqlOnlyOptions, log: (line: string) => void = () => undefined): Promise<SqlOnlyRow[]> {
  const client = new pg.Client({ connectionString: databaseUrl, options: '-c jit=off' });
  await client.connect();
  try {
    const metadata = await servedMetadata(client);
    const engine = new GraphEngine(metadata, { maxDepth: 12, maxRows: null, planCacheSize: 100 });
    const rows: SqlOnlyRow[] = [];
    for (const query of queries) {
      if (isMutation(query)) continue;
      const engineText = engineStatement(engine, query, sample, accountId, 0).text;
      const variableSets = 50;
      const engineValues = Array.from({ length: variableSets }, (_, i) => engineStatement(engine, query, sample, accountId, i).values);
      const baseValues = Array.from({ length: variableSets }, (_, i) => baselineValues(query, sample, accountId, i));
      const run = async (side: 'e' | 'b', i: number): Promise<{ ms: number; chars: number; text: string }> => {
        const config = side === 'e' ? { name: `e_${query.id}`, text: engineText, values: engineValues[i % variableSets] } : { name: `b_${query.id}`, text: query.baselineSql, values: baseValues[i % variableSets] };
        const start = performance.now();
        const result = await client.query<{ response: string }>(config);
        const ms = performance.now() - start;
        return { ms, chars: result.rows[0]?.response?.length ?? 0, text: result.rows[0]?.response ?? '' };
      };
      // Same answers, or the comparison means nothing.
      for (let i = 0; i < 5; i++) {
        const [e, b] = [await run('e', i), await run('b', i)];
        if (!isDeepStrictEqual(JSON.parse(e.text), JSON.parse(b.text))) throw new Error(`${query.id} #${i}: the engine's and the baseline's statements answer differently:\n${e.text.slice(0, 400)}\n${b.text.slice(0, 400)}`);
      }
      for (let i = 0; i < options.warmupRuns; i++) {
        await run('e', i);
        await run('b', i);
      }
      const engineChars = (await run('e', 0)).chars;
      const baselineChars = (await run('b', 0)).chars;
      const engineMs: number[] = [];
      const baselineMs: number[] = [];
      const deadline = performance.now() + options.seconds * 1000;
      for (let i = 0; i < options.maxRuns && performance.now() < deadline; i++) {
        const order: ('e' | 'b')[] = i % 2 === 0 ? ['e', 'b'] : ['b', 'e'];
        for (const side of order) (side === 'e' ? engineMs : baselineMs).push((await run(side, i)).ms);
      }
      const row: SqlOnlyRow = {
        id: query.id,
        role: query.role ?? 'admin',
        runs: engineMs.length,
        engineMedianMs: quantile(engineMs, 0.5),
        engineP90Ms: quantile(engineMs, 0.9),
        baselineMedianMs: quantile(baselineMs, 0.5),
        baselineP90Ms: quantile(baselineMs, 0.9),
        ratio: quantile(engineMs, 0.5) / quantile(baselineMs, 0.5),
        engineChars,
        baselineChars,
      };
      log(`sql-only ${row.id}: engine ${row.engineMedianMs.toFixed(3)} ms (p90 ${row.engineP90Ms.toFixed(3)}), baseline ${row.baselineMedianMs.toFixed(3)} ms (p90 ${row.baselineP90Ms.toFixed(3)}), ratio ${row.ratio.toFixed(2)}, ${row.runs} runs`);
      rows.push(row);
    }
    return rows;
  } finally {
    await client.end();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values: args } = parseArgs({ options: { account: { type: 'string' }, only: { type: 'string' }, seconds: { type: 'string', default: '3' }, runs: { type: 'string', default: '400' } } });
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl || !args.account) throw new Error('DATABASE_URL and --account SLUG are required');
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  const accountId = await accountIdOf(pool, args.account);
  const sample = await sampleData(pool, accountId);
  await pool.end();
  const selected = ALL_QUERIES.filter((query) => !args.only || args.only.split(',').includes(query.id));
  await measureSqlOnly(databaseUrl, accountId, sample, selected, { maxRuns: Number(args.runs), seconds: Number(args.seconds), warmupRuns: 10 }, (line) => process.stderr.write(`${line}\n`));
}
