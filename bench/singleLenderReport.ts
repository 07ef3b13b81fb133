/** RESULTS.md's section on the single-lender server (issue 36), rendered from results.json. */
import type { ThroughputRow } from './report.js';
import type { SingleLenderResults } from './singleLenderRun.js';
import { median } from './median.js';

const fixed = (value: number, digits = 0): string => (Number.isFinite(value) ? value.toFixed(digits) : '–');
const geomean = (values: readonly number[]): number => Math.exp(values.reduce((sum, v) => sum + Math.log(v), 0) / values.length);
const medianOf = (row: ThroughputRow): number => (row.roundRatios.length ? median(row.roundRatios) : row.ratio);

/** The section's lines; `baselineRows` are the same run's engine-against-baseline rows (for the column beside). */
export function renderSingleLenderSection(single: SingleLenderResults, baselineRows: readonly ThroughputRow[]): string[] {
  const out: string[] = [];
  const line = (text = ''): void => void out.push(text);
  line('## Throughput: engine against a server hand-written for one lender (issue 36)');
  line();
  line(
    "`bench/singleLenderServer.ts`: the baseline's server design (same request bytes, named prepared statements, the same key check) over the schema a person would design for ONE lender (`bench/singleLender.ts`: no `account_id`, `bigint` keys, uuids only where the API shows them, the index each query wants), holding a copy of the same account's rows made by `INSERT … SELECT`. Measured in its own alternating rounds against the engine, right after the query's rounds against the prepared baseline. m1 and the investor queries are not answered by it (bench/README.md, \"The single-lender server\"). Targets (issue 36): every median ≥ 0.9, geomean ≥ 1.0.",
  );
  line();
  line('| query | engine req/s | single-lender req/s | ratio per round: median (range) | against the prepared baseline (same run) | engine p50 / p99 ms | single p50 / p99 ms | errors (engine / single) | load avg |');
  line('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const row of single.throughput) {
    const besides = baselineRows.find((other) => other.id === row.id);
    const range = row.roundRatios.length ? ` (${fixed(Math.min(...row.roundRatios), 2)}–${fixed(Math.max(...row.roundRatios), 2)})` : '';
    line(
      `| ${row.id} | ${fixed(row.engine.requestsPerSecond)} | ${fixed(row.baseline.requestsPerSecond)} | **${fixed(medianOf(row), 2)}**${range} | ${besides ? fixed(medianOf(besides), 2) : '–'} | ${fixed(row.engine.latencyP50Ms)} / ${fixed(row.engine.latencyP99Ms)} | ${fixed(row.baseline.latencyP50Ms)} / ${fixed(row.baseline.latencyP99Ms)} | ${row.engine.errors} / ${row.baseline.errors} | ${fixed(row.loadAverage, 1)} |`,
    );
  }
  if (single.throughput.length) {
    const medians = single.throughput.map(medianOf);
    line();
    line(`Against the single-lender server: lowest median **${fixed(Math.min(...medians), 2)}** (target ≥ 0.9), geomean **${fixed(geomean(medians), 2)}** (target ≥ 1.0).`);
  }
  line();
  if (single.sqlOnly.length) {
    line('SQL only (`bench/singleLenderSqlOnly.ts`: one connection per side, alternating, named prepared statements). Wall-time ratio = single-lender median / engine median; **backend CPU** = the PostgreSQL backend\'s CPU time per execution (median, from /proc/<pid>/schedstat), its ratio single / engine — the figure to trust on a loaded machine, where wall times swing several-fold. Above 1 the engine\'s statement is cheaper. Buffers = shared buffers one execution touches:');
    line();
    line('| query | runs | engine / single median ms | wall ratio | backend CPU µs engine / single | **CPU ratio** | buffers engine / single |');
    line('|---|---:|---:|---:|---:|---:|---:|');
    for (const row of single.sqlOnly) {
      const cpu = row.engineCpuUs !== undefined && row.singleCpuUs !== undefined ? `${fixed(row.engineCpuUs)} / ${fixed(row.singleCpuUs)} | **${fixed(row.singleCpuUs / row.engineCpuUs, 2)}**` : '– | –';
      line(`| ${row.id} | ${row.runs} | ${fixed(row.engineMedianMs, 3)} / ${fixed(row.singleMedianMs, 3)} | ${fixed(1 / row.ratio, 2)} | ${cpu} | ${row.engineBuffers} / ${row.singleBuffers} |`);
    }
    line();
  }
  line('Heap pages of the tables both read (rows of the benchmark account; loanql\'s table holds every account of the database):');
  line();
  line('| table | rows (single) | pages single-lender | pages loanql |');
  line('|---|---:|---:|---:|');
  for (const [table, { rows, pages }] of Object.entries(single.tables.single)) line(`| ${table} | ${rows.toLocaleString('en-US')} | ${pages} | ${single.tables.loanql[table]?.pages ?? '–'} |`);
  line();
  return out;
}
