/** The shape of `bench/results.json` and its rendering as `bench/RESULTS.md`. */
import { SLOW_REQUESTS_PER_SECOND, type LoadResult } from './load.js';
import type { QueryMicro } from './micro.js';
import type { SqlOnlyRow } from './sqlOnly.js';
import { renderSingleLenderSection } from './singleLenderReport.js';
import type { SingleLenderResults } from './singleLenderRun.js';
import { median } from './median.js';

export interface ThroughputRow {
  readonly id: string;
  /** The role of the key both servers answered (`admin` or `investor`). */
  readonly role: string;
  readonly title: string;
  readonly engine: LoadResult;
  readonly baseline: LoadResult;
  /** Engine req/s over baseline req/s, over all rounds. */
  readonly ratio: number;
  /** The ratio of each pair of rounds (engine round i over baseline round i). */
  readonly roundRatios: readonly number[];
  /** The 1-minute load average right after the query's rounds. */
  readonly loadAverage: number;
}

/** Engine over baseline req/s, round by round. */
export function roundRatios(engine: LoadResult, baseline: LoadResult): number[] {
  return engine.roundRequestsPerSecond.map((rps, i) => rps / (baseline.roundRequestsPerSecond[i] ?? Number.NaN));
}

const geomean = (values: readonly number[]): number => Math.exp(values.reduce((sum, v) => sum + Math.log(v), 0) / values.length);

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
  readonly machine: { cpuModel: string; cores: number; ramGiB: number; kernel: string; loadAverageAtEnd: number[]; loadAverageDuringThroughput?: number[]; otherWorkShareDuringThroughput?: number };
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
  readonly sqlOnly?: readonly SqlOnlyRow[];
  /** Engine against the single-lender server (issue 36). */
  readonly singleLender?: SingleLenderResults;
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
      ? `- Load: autocannon, ${settings.connections} connections, per query: a ${settings.warmupSeconds} s warm-up of each server, then ${settings.durationSeconds} s measured per server in ${rounds} alternating rounds of ${fixed(settings.durationSeconds / rounds, 1)} s (engine, baseline, baseline, engine, … ; which side starts alternates between queries; a query under ${SLOW_REQUESTS_PER_SECOND} requests/s in its warm-up gets a quarter as many rounds, each four times as long), so both see the same background load. Latency percentiles are over every measured response. Request bodies rotate through ${settings.variableSets} variable sets drawn from the data.`
      : `- Load: autocannon, ${settings.connections} connections, ${settings.warmupSeconds} s warm-up then ${settings.durationSeconds} s measured, per query and server; engine and baseline alternate which goes first. Request bodies rotate through ${settings.variableSets} variable sets drawn from the data.`,
  );
  line(`- Servers: the service as shipped (\`node dist/server/main.js\`, LOG_LEVEL=warn, PG_POOL_SIZE=${settings.poolSize}) and the baseline (\`bench/baselineServer.ts\`: \`node:http\` + a \`pg\` pool of ${settings.poolSize}, one hand-written named prepared statement per query, the same API key check). Both get byte-identical requests (the GraphQL request body).`);
  line(`- Data: scale ${settings.mainScale} (${settings.mainLoans.toLocaleString('en-US')} loans) for the throughput and micro-benchmarks.`);
  line('- **Caveat**: a shared 2-core machine where other work (test suites) runs at the same time, so absolute numbers are noisy; the engine/baseline ratios, measured back to back under the same conditions, are what to compare.');
  line();

  const loads = machine.loadAverageDuringThroughput ?? [];
  const busiest = loads.length ? Math.max(...loads) : Number.NaN;
  if (loads.length) {
    line(`- Load average (1 min) during the throughput runs: ${fixed(Math.min(...loads), 1)}–${fixed(busiest, 1)} (median ${fixed(median(loads), 1)}) on ${machine.cores} cores — the benchmark's own processes (PostgreSQL's backends, both servers, autocannon) make most of it.`);
    const other = machine.otherWorkShareDuringThroughput;
    if (other !== undefined) line(`- CPU used by other work during the throughput runs: **${fixed(other * 100, 1)} %** of the machine (all busy CPU time from /proc/stat, less the runner with autocannon, both servers and every \`postgres\` process).`);
    line();
    if (other !== undefined ? other > 0.1 : busiest > machine.cores) {
      line(`> **Warning: the machine was busy** — ${other !== undefined ? `other work took ${fixed(other * 100, 1)} % of the CPU` : `the load average reached ${fixed(busiest, 1)} on ${machine.cores} cores`} while the servers were measured (other engineers' work shares this machine). Absolute req/s are depressed and ratios noisier than on an idle machine; the SQL-only table below (one connection, interleaved runs) is the steadier evidence.`);
      line();
    }
  }

  const admin = results.throughput.filter((row) => row.role === 'admin');
  const investor = results.throughput.filter((row) => row.role !== 'admin');
  const roundsOf = (row: ThroughputRow): string => (row.roundRatios.length ? `${fixed(median(row.roundRatios), 2)} (${fixed(Math.min(...row.roundRatios), 2)}–${fixed(Math.max(...row.roundRatios), 2)})` : '–');
  const throughputTable = (rows: readonly ThroughputRow[]): void => {
    line('| query | engine req/s | baseline req/s | ratio (all rounds) | ratio per round: median (range) | engine p50 / p99 ms | baseline p50 / p99 ms | errors (engine / baseline) | CPU engine / baseline | RSS MB engine / baseline | load avg |');
    line('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const row of rows) {
      const e = row.engine;
      const b = row.baseline;
      line(
        `| ${row.id}: ${row.title} | ${fixed(e.requestsPerSecond)} | ${fixed(b.requestsPerSecond)} | ${fixed(row.ratio, 2)} | **${roundsOf(row)}** | ${fixed(e.latencyP50Ms)} / ${fixed(e.latencyP99Ms)} | ${fixed(b.latencyP50Ms)} / ${fixed(b.latencyP99Ms)} | ${e.errors} / ${b.errors} | ${fixed(e.server.cpu, 2)} / ${fixed(b.server.cpu, 2)} | ${fixed(e.server.rssPeakMb)} / ${fixed(b.server.rssPeakMb)} | ${fixed(row.loadAverage, 1)} |`,
      );
    }
  };

  line('## Throughput: engine against the prepared hand-written baseline');
  line();
  line('The baseline (`bench/baselineServer.ts`) is the strongest honest hand-written server: the same request bytes as the service (it finds its statement by the text of the document), named prepared statements, the same pool size, the same API key check (verified once, then the key\'s state checked inside the one statement), one statement per request returning the finished JSON. Ratio = engine req/s / baseline req/s; "per round" is the ratio of each pair of alternating rounds, whose median is the figure to compare (targets: every query ≥ 0.9, geomean ≥ 1.0). Errors = non-2xx responses + socket errors + timeouts. CPU = server process CPU time / wall time (1.00 = one core). RSS = peak resident set sampled every 100 ms.');
  line();
  throughputTable(admin);
  if (admin.length) {
    const medians = admin.map((row) => (row.roundRatios.length ? median(row.roundRatios) : row.ratio));
    const lowest = Math.min(...medians);
    const rss = Math.max(...results.throughput.map((row) => row.engine.server.rssPeakMb));
    line();
    line(`Median ratios: lowest **${fixed(lowest, 2)}** (target ≥ 0.9), geomean **${fixed(geomean(medians), 2)}** (target ≥ 1.0). Highest service RSS under load: **${fixed(rss)} MB** (target < 250 MB).`);
  }
  line();
  if (results.singleLender) out.push(...renderSingleLenderSection(results.singleLender, admin));
  if (investor.length) {
    line('## Throughput with the `investor` role (issue 15)');
    line();
    line("The same servers, with a key of the shipped `investor` role for the person funding the most loans of the account. The engine injects the role's row filter into every reference to a collection; the baseline's statements apply the same rules by hand, once where the path implies them (bench/queries.ts). Target: median ratio ≥ 0.85.");
    line();
    throughputTable(investor);
    const medians = investor.map((row) => (row.roundRatios.length ? median(row.roundRatios) : row.ratio));
    line();
    line(`Median ratios: lowest **${fixed(Math.min(...medians), 2)}** (target ≥ 0.85), geomean **${fixed(geomean(medians), 2)}**.`);
    line();
  }

  const sqlOnly = results.sqlOnly ?? [];
  if (sqlOnly.length) {
    line('## SQL only: the engine\'s statement against the hand-written one');
    line();
    line("One connection, no HTTP, no server: each query's engine statement (compiled for its role, as the service runs it) and the baseline's statement, both named prepared statements, run alternately (engine, baseline, baseline, engine, …) with the same variable sets; time from the client's send to the last byte of the response row. Background load moves both sides alike, so this is the steadiest comparison. Ratio = engine median / baseline median (target ≤ 1.1). Response size in characters (the engine writes compact JSON; `json_build_object` writes `\"k\" : v`).");
    line();
    line('| query | role | runs | engine median / p90 ms | baseline median / p90 ms | ratio | response chars engine / baseline |');
    line('|---|---|---:|---:|---:|---:|---:|');
    for (const row of sqlOnly) {
      line(`| ${row.id} | ${row.role} | ${row.runs} | ${fixed(row.engineMedianMs, 3)} / ${fixed(row.engineP90Ms, 3)} | ${fixed(row.baselineMedianMs, 3)} / ${fixed(row.baselineP90Ms, 3)} | **${fixed(row.ratio, 2)}** | ${row.engineChars.toLocaleString('en-US')} / ${row.baselineChars.toLocaleString('en-US')} |`);
    }
    const over = sqlOnly.filter((row) => row.ratio > 1.1).map((row) => row.id);
    line();
    line(over.length ? `Over 1.1×: ${over.join(', ')} — see bench/README.md ("Every remaining difference between the two servers", with the plans) for the reasons, and whether the same statements stay over 1.1× when the machine is quieter.` : 'Every engine statement is within 1.1× of the hand-written one.');
    line();
  }

  if (results.throughput.length) {
    line('### Server CPU per request');
    line();
    line('Server CPU per request = server CPU time / requests. The machine has 2 cores shared by PostgreSQL, the server under test, autocannon and other work, so every microsecond the server spends is taken from PostgreSQL: throughput follows the sum of the CPU all three spend per request. Where it goes: bench/README.md ("Per-request Node cost").');
    line();
    line('| query | median ratio | engine server CPU µs/request | baseline server CPU µs/request | difference µs |');
    line('|---|---:|---:|---:|---:|');
    const perRequest = (result: LoadResult): number => (result.server.cpu / result.requestsPerSecond) * 1e6;
    const medianRatio = (row: ThroughputRow): number => (row.roundRatios.length ? median(row.roundRatios) : row.ratio);
    for (const row of [...results.throughput].sort((a, b) => medianRatio(a) - medianRatio(b))) {
      const engine = perRequest(row.engine);
      const baseline = perRequest(row.baseline);
      line(`| ${row.id} | ${fixed(medianRatio(row), 2)} | ${fixed(engine)} | ${fixed(baseline)} | ${fixed(engine - baseline)} |`);
    }
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
