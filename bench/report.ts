/** The shape of `bench/results.json` and its rendering as `bench/RESULTS.md`. */
import type { LoadResult } from './load.js';
import type { QueryMicro } from './micro.js';

export interface ThroughputRow {
  readonly id: string;
  readonly title: string;
  readonly engine: LoadResult;
  readonly baseline: LoadResult;
  /** Engine req/s over baseline req/s. */
  readonly ratio: number;
}

export interface GrowthRow {
  readonly query: string;
  readonly scale: number;
  readonly loans: number;
  readonly requests: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly errors: number;
}

export interface PlanExcerpt {
  readonly query: string;
  readonly scale: number;
  /** Scan, index-condition, limit and timing lines of `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF)`. */
  readonly lines: readonly string[];
  readonly full: readonly string[];
}

export interface BenchResults {
  readonly generatedAt: string;
  readonly machine: { cpuModel: string; cores: number; ramGiB: number; kernel: string; loadAverageAtEnd: number[] };
  readonly versions: Readonly<Record<string, string>>;
  readonly settings: {
    database: string;
    connections: number;
    durationSeconds: number;
    warmupSeconds: number;
    /** Measured rounds per query, alternating between engine and baseline. */
    rounds: number;
    poolSize: number;
    mainScale: number;
    mainLoans: number;
    growthSeconds: number;
    variableSets: number;
  };
  readonly throughput: readonly ThroughputRow[];
  readonly micro: readonly QueryMicro[];
  readonly plans: readonly PlanExcerpt[];
  readonly growth: readonly GrowthRow[];
  readonly growthPlans: readonly PlanExcerpt[];
}

const fixed = (value: number, digits = 0): string => (Number.isFinite(value) ? value.toFixed(digits) : '–');
const GROWTH_NAMES: Readonly<Record<string, string>> = { q1: 'by primary key (q1)', q2: 'list page (q2)', q3: 'aggregate (q3)' };

/** p50 at the largest scale over p50 at the smallest, per growth query. */
export function growthFactors(rows: readonly GrowthRow[]): { query: string; from: number; to: number; factor: number }[] {
  const queries = [...new Set(rows.map((row) => row.query))];
  return queries.map((query) => {
    const mine = rows.filter((row) => row.query === query).sort((a, b) => a.scale - b.scale);
    const first = mine[0]!;
    const last = mine[mine.length - 1]!;
    return { query, from: first.scale, to: last.scale, factor: last.p50Ms / first.p50Ms };
  });
}

export function renderResults(results: BenchResults): string {
  const { machine, versions, settings } = results;
  const out: string[] = [];
  const line = (text = ''): void => void out.push(text);

  line('# Benchmark results');
  line();
  line(`Written by \`npm run bench\` (bench/run.ts) on ${results.generatedAt}. Raw numbers: \`bench/results.json\`. How it works and how to read it: \`bench/README.md\`.`);
  line();
  line('## Machine, versions, settings');
  line();
  line(`- Machine: ${machine.cpuModel}, ${machine.cores} cores, ${fixed(machine.ramGiB, 1)} GiB RAM, Linux ${machine.kernel}; load average at the end ${machine.loadAverageAtEnd.map((v) => v.toFixed(2)).join(' / ')}.`);
  line(`- Versions: Node ${versions.node}, PostgreSQL ${versions.postgres}, loanql ${versions.loanql}, pg ${versions.pg}, express ${versions.express}, graphql ${versions.graphql}, autocannon ${versions.autocannon}.`);
  line(`- Database: ${settings.database}. Everything on one machine over loopback: PostgreSQL, the server under test, and autocannon (in the runner process).`);
  const { rounds } = settings;
  line(
    rounds > 1
      ? `- Load: autocannon, ${settings.connections} connections, per query: a ${settings.warmupSeconds} s warm-up of each server, then ${settings.durationSeconds} s measured per server in ${rounds} alternating rounds of ${fixed(settings.durationSeconds / rounds, 1)} s (engine, baseline, baseline, engine, … ; which side starts alternates between queries), so both see the same background load. Latency percentiles are over every measured response. Request bodies rotate through ${settings.variableSets} variable sets drawn from the data.`
      : `- Load: autocannon, ${settings.connections} connections, ${settings.warmupSeconds} s warm-up then ${settings.durationSeconds} s measured, per query and server; engine and baseline alternate which goes first. Request bodies rotate through ${settings.variableSets} variable sets drawn from the data.`,
  );
  line(`- Servers: the service as shipped (\`node dist/api/main.js\`, LOG_LEVEL=warn, PG_POOL_SIZE=${settings.poolSize}) and the baseline (\`bench/baselineServer.ts\`: \`node:http\` + a \`pg\` pool of ${settings.poolSize}, one hand-written statement per query, no authentication).`);
  line(`- Data: scale ${settings.mainScale} (${settings.mainLoans.toLocaleString('en-US')} loans) for the throughput and micro-benchmarks.`);
  line('- **Caveat**: a shared 2-core machine where other work (test suites) runs at the same time, so absolute numbers are noisy; the engine/baseline ratios, measured back to back under the same conditions, are what to compare.');
  line();

  line('## Throughput: engine against the raw-SQL baseline');
  line();
  line('Errors = non-2xx responses + socket errors + timeouts. CPU = server process CPU time / wall time (1.00 = one core). RSS = peak resident set sampled every 100 ms.');
  line();
  line('| query | engine req/s | baseline req/s | ratio | engine p50 / p99 ms | baseline p50 / p99 ms | errors (engine / baseline) | CPU engine / baseline | RSS MB engine / baseline |');
  line('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const row of results.throughput) {
    const e = row.engine;
    const b = row.baseline;
    line(
      `| ${row.id}: ${row.title} | ${fixed(e.requestsPerSecond)} | ${fixed(b.requestsPerSecond)} | **${fixed(row.ratio, 2)}** | ${fixed(e.latencyP50Ms)} / ${fixed(e.latencyP99Ms)} | ${fixed(b.latencyP50Ms)} / ${fixed(b.latencyP99Ms)} | ${e.errors} / ${b.errors} | ${fixed(e.server.cpu, 2)} / ${fixed(b.server.cpu, 2)} | ${fixed(e.server.rssPeakMb)} / ${fixed(b.server.rssPeakMb)} |`,
    );
  }
  if (results.throughput.length) {
    const lowest = Math.min(...results.throughput.map((row) => row.ratio));
    const rss = Math.max(...results.throughput.map((row) => row.engine.server.rssPeakMb));
    line();
    line(`Lowest ratio: **${fixed(lowest, 2)}** (target ≥ 0.85). Highest service RSS under load: **${fixed(rss)} MB** (target < 250 MB).`);
    line();
    line('### What limits the queries furthest from the baseline');
    line();
    line('Server CPU per request = server CPU time / requests. The machine has 2 cores shared by PostgreSQL, the server under test, autocannon and other work, so every microsecond the server spends is taken from PostgreSQL: throughput follows the sum of the CPU all three spend per request.');
    line();
    line('| query | ratio | engine server CPU µs/request | baseline server CPU µs/request | difference µs |');
    line('|---|---:|---:|---:|---:|');
    const perRequest = (result: LoadResult): number => (result.server.cpu / result.requestsPerSecond) * 1e6;
    for (const row of [...results.throughput].sort((a, b) => a.ratio - b.ratio)) {
      const engine = perRequest(row.engine);
      const baseline = perRequest(row.baseline);
      line(`| ${row.id} | ${fixed(row.ratio, 2)} | ${fixed(engine)} | ${fixed(baseline)} | ${fixed(engine - baseline)} |`);
    }
    line();
    const furthest = [...results.throughput].sort((a, b) => a.ratio - b.ratio).slice(0, 3).map((row) => row.id);
    line(
      `Furthest behind in this run: ${furthest.join(', ')}. These are cheap requests (well under a millisecond of PostgreSQL work each), where the fixed per-request cost is a large share of the whole. The engine server spends more CPU per request than the bare baseline (table above): the request carries the GraphQL document, parsed as JSON; the API key is hashed and looked up; graphql-js coerces the variables; every JSON key and value of the statement is a bound parameter. PostgreSQL parses the engine's statements once per connection (cached plans run as prepared statements; the baseline's are parsed every time), but still binds and executes a larger one (keys as parameters, the primary-key tie-break in every ORDER BY, the key-state check \`EXISTS (… api_keys …)\` folded into the statement). The queries where PostgreSQL's own work dominates (aggregates, q8) are closest to 1.`,
    );
    const largest = [...results.throughput].sort((a, b) => b.engine.bytesPerSecond / b.engine.requestsPerSecond - a.engine.bytesPerSecond / a.engine.requestsPerSecond)[0];
    if (largest) {
      const responseMb = largest.engine.bytesPerSecond / largest.engine.requestsPerSecond / 1024 ** 2;
      line();
      line(
        `Memory: the largest responses (${largest.id}, about ${fixed(responseMb, 1)} MB each, ${settings.connections} connections) leave PostgreSQL in ~32 KiB parts that the server writes as they arrive (engine/execute/inParts.ts), so none is held whole: peak RSS ${fixed(largest.engine.server.rssPeakMb)} MB, against ${fixed(largest.baseline.server.rssPeakMb)} MB for the baseline, which reads each response as one string.`,
      );
    }
    const heavy = results.throughput.find((row) => row.engine.server.rssPeakMb >= 250);
    if (heavy) {
      const responseMb = heavy.engine.bytesPerSecond / heavy.engine.requestsPerSecond / 1024 ** 2;
      line();
      line(
        `RSS over 250 MB on ${heavy.id}: its responses are about ${fixed(responseMb, 1)} MB each and ${settings.connections} are in flight at once; the service is over the target (the baseline peaks at ${fixed(heavy.baseline.server.rssPeakMb)} MB).`,
      );
    }
  }
  line();

  line('## Engine micro-benchmarks (in process, no database)');
  line();
  line('Cold compile = `prepare` of a document not in the plan cache: parse → validate → plan → SQL → bind (steady state: a new document text each time; "first" = the first call for that query in the process). Plan-cache hit = `prepare` of a cached document with new variables: envelope check, cache lookup, variable coercion, parameter binding — all the engine does per request before sending the statement.');
  line();
  line('| query | first compile µs | cold compile median / p99 µs | plan-cache hit median / p99 µs | SQL bytes | params |');
  line('|---|---:|---:|---:|---:|---:|');
  for (const m of results.micro) {
    line(`| ${m.id} | ${fixed(m.firstCompileUs)} | ${fixed(m.coldCompile.medianUs)} / ${fixed(m.coldCompile.p99Us)} | ${fixed(m.planCacheHit.medianUs, 1)} / ${fixed(m.planCacheHit.p99Us, 1)} | ${m.sqlBytes} | ${m.params} |`);
  }
  if (results.micro.length) {
    const worst = Math.max(...results.micro.map((m) => m.planCacheHit.medianUs));
    line();
    line(`Largest plan-cache-hit median: **${fixed(worst, 1)} µs** (target < 100 µs).`);
  }
  line();

  if (results.growth.length) {
    line('## Growth with data');
    line();
    line('One database, one account per scale (scale 1 = 10,000 loans), all served by the same service process; each query is tenant-scoped, so an account sees only its own rows while the indexes hold every account. Latency is unloaded: one keep-alive connection, one request at a time, timed per request with the monotonic clock, in 3 interleaved rounds over the scales (after a 1 s warm-up).');
    line();
    line('| query | scale | loans | requests | p50 ms | p99 ms | errors |');
    line('|---|---:|---:|---:|---:|---:|---:|');
    for (const row of results.growth) {
      line(`| ${GROWTH_NAMES[row.query] ?? row.query} | ${row.scale} | ${row.loans.toLocaleString('en-US')} | ${row.requests} | ${fixed(row.p50Ms, 2)} | ${fixed(row.p99Ms, 2)} | ${row.errors} |`);
    }
    line();
    line('p50 growth from the smallest to the largest scale (target < 1.5× for by-primary-key and list page):');
    line();
    for (const factor of growthFactors(results.growth)) line(`- ${GROWTH_NAMES[factor.query] ?? factor.query}: **${fixed(factor.factor, 2)}×** (scale ${factor.from} → ${factor.to})`);
    line();
    line('### Plans (EXPLAIN ANALYZE of the engine\'s statement; scan, index and timing lines)');
    line();
    for (const plan of results.growthPlans) {
      line(`${GROWTH_NAMES[plan.query] ?? plan.query}, scale ${plan.scale}:`);
      line();
      line('```');
      for (const planLine of plan.lines) line(planLine);
      line('```');
      line();
    }
  }

  if (results.plans.length) {
    line('## Plans of the eight queries at scale 1');
    line();
    line('<details><summary>scan, index and timing lines of EXPLAIN ANALYZE (engine statements)</summary>');
    line();
    for (const plan of results.plans) {
      line(`${plan.query}:`);
      line();
      line('```');
      for (const planLine of plan.lines) line(planLine);
      line('```');
      line();
    }
    line('</details>');
    line();
  }
  return `${out.join('\n')}\n`;
}
