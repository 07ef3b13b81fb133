/**
 * Prints, as JSON on stdout, the statement (text and values) the engine of THIS checkout compiles
 * for each benchmark query and its first variable sets, from the metadata checked against the
 * database at `DATABASE_URL` — what the service would run. `compareBuilds.ts` runs it in two
 * checkouts and requires the texts to be identical.
 *
 * `--baseline` prints the baseline's hand-written statements instead (its `baselineSql` and values,
 * `sqlOnly.ts`'s `baselineValues`), for `statementCallgrind.sh` to weigh the engine's against.
 *
 * `DATABASE_URL=… node --import tsx bench/printStatements.ts --account ID [--sets N] [--baseline]`
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import { GraphEngine } from '../engine/index.js';
import { ALL_QUERIES, isMutation, sampleData } from './queries.js';
import { baselineValues, engineStatement, servedMetadata } from './sqlOnly.js';

const { values: args } = parseArgs({ options: { account: { type: 'string' }, sets: { type: 'string', default: '5' }, baseline: { type: 'boolean', default: false } } });

async function main(): Promise<void> {
  const accountId = args.account;
  if (!accountId || !process.env.DATABASE_URL) throw new Error('usage: DATABASE_URL=… printStatements.ts --account ID');
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 1 });
  try {
    const sample = await sampleData(pool, accountId);
    const engine = new GraphEngine(await servedMetadata(pool), { maxDepth: 12, maxRows: null, planCacheSize: 100 });
    const statements: Record<string, { text: string; values: unknown[] }[]> = {};
    for (const query of ALL_QUERIES.filter((query) => !isMutation(query))) {
      statements[query.id] = Array.from({ length: Number(args.sets) }, (_, i) =>
        args.baseline ? { text: query.baselineSql, values: baselineValues(query, sample, accountId, i) } : engineStatement(engine, query, sample, accountId, i),
      );
    }
    process.stdout.write(JSON.stringify(statements));
  } finally {
    await pool.end();
  }
}

await main();
