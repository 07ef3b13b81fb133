/**
 * The operations benchmark's (`run.ts --operations`, issue 35) results and its section of
 * RESULTS.md, between `<!-- operations -->` markers that `npm run bench` and `render.ts` carry over
 * when they re-render the rest of the file.
 */
import type { LoadResult } from './load.js';
import { median } from './median.js';

export interface OperationsRow {
  readonly id: string;
  readonly title: string;
  /** Metrics (`METRICS_TOKEN`, scraped every `scrapeSeconds`) and the request log (every request) on. */
  readonly on: LoadResult;
  /** Both off (no `METRICS_TOKEN`, `REQUEST_LOG_LEVEL=silent`). */
  readonly off: LoadResult;
  /** on req/s over off req/s, over all rounds, and per pair of rounds. */
  readonly ratio: number;
  readonly roundRatios: readonly number[];
  readonly loadAverage: number;
}

export interface OperationsBench {
  readonly at: string;
  readonly postgresVersion: string;
  readonly loans: number;
  readonly connections: number;
  readonly durationSeconds: number;
  readonly rounds: number;
  /** Processes of each configuration (`--pairs`; one before session 33). */
  readonly pairs?: number;
  readonly warmupSeconds?: number;
  readonly scrapeSeconds: number;
  readonly scrapes: number;
  readonly logLines: number;
  readonly logBytes: number;
  readonly otherWorkShare: number;
  readonly rows: readonly OperationsRow[];
}

const START = '<!-- operations -->';
const END = '<!-- /operations -->';

/** `markdown` with its operations section replaced by `section` (or `section` appended). */
export function keepOperationsSection(markdown: string, section: string | null): string {
  if (section === null) return markdown;
  const start = markdown.indexOf(START);
  const end = markdown.indexOf(END);
  if (start >= 0 && end > start) return `${markdown.slice(0, start)}${section}${markdown.slice(end + END.length)}`;
  return `${markdown.trimEnd()}\n\n${section}\n`;
}

/** The operations section of `markdown` (markers included), or null. */
export function operationsSectionOf(markdown: string): string | null {
  const start = markdown.indexOf(START);
  const end = markdown.indexOf(END);
  return start >= 0 && end > start ? markdown.slice(start, end + END.length) : null;
}

const fixed = (value: number, digits = 0): string => value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
/** Server CPU time per request answered (µs). */
const cpuPerRequestUs = (result: LoadResult): number => (result.server.cpu * 1e6) / result.requestsPerSecond;

/** Where the whole machine's CPU went a request, on and off (`LoadResult.cpuSplit`), when the run measured it. */
function splitLines(rows: readonly OperationsRow[]): string[] {
  const measured = rows.filter((row) => row.on.cpuSplit && row.off.cpuSplit);
  if (!measured.length) return [];
  const cell = (on: number, off: number): string => `${fixed(on)} / ${fixed(off)} (${on >= off ? '+' : '−'}${fixed(Math.abs(on - off))})`;
  return [
    '',
    'Where the machine\'s CPU went, µs a request on / off (on − off), medians of the rounds: the server process, PostgreSQL (its postmaster and children), the runner (autocannon), the whole machine busy (/proc/stat) and of it the kernel, and the rest (busy time of none of the three: other work, ~0 on a quiet machine).',
    '',
    '| query | server | PostgreSQL | runner | machine busy | kernel | rest |',
    '|---|---|---|---|---|---|---|',
    ...measured.map((row) => {
      const on = row.on.cpuSplit!;
      const off = row.off.cpuSplit!;
      return `| ${row.id} | ${cell(on.server, off.server)} | ${cell(on.postgres, off.postgres)} | ${cell(on.runner, off.runner)} | ${cell(on.machine, off.machine)} | ${cell(on.kernel, off.kernel)} | ${cell(on.rest, off.rest)} |`;
    }),
  ];
}

/** The section, markers included. */
export function renderOperationsSection(bench: OperationsBench): string {
  const lines = [
    START,
    '## Metrics and the request log on against off (`npm run build && node --import tsx bench/run.ts --operations`, issue 35)',
    '',
    `${bench.at.slice(0, 10)}, PostgreSQL ${bench.postgresVersion}, ${fixed(bench.loans)} loans. ${processesText(bench.pairs ?? 1)} of the same build on the same database, each with a pool of 10: **on** — \`METRICS_TOKEN\` set and \`/metrics\` scraped every ${bench.scrapeSeconds} s (${bench.scrapes} scrapes), \`REQUEST_LOG_LEVEL=info\`, \`REQUEST_LOG_SAMPLE=1\` (a line per request, written to a file: ${fixed(bench.logLines)} lines, ${fixed(bench.logBytes / 1024 / 1024, 1)} MiB); **off** — neither (the server then attaches nothing to a request). autocannon, ${bench.connections} connections, ${bench.durationSeconds} s per process in ${bench.rounds} alternating rounds (on, off, off, on, …${(bench.pairs ?? 1) > 1 ? '; each round measures every pair in turn, the pairs in opposite orders' : ''}), after a warm-up of each${bench.warmupSeconds !== undefined ? ` (${bench.warmupSeconds} s)` : ''}. The machine is 2 cores shared with other engineers and noisy (other work took ${fixed(bench.otherWorkShare * 100, 1)} % of its CPU during the rounds): absolute req/s move from run to run, so the figure to compare is the median of the per-round ratios, measured back to back under the same load. Target (issue 35, done-when 5): throughput falls by under 5 %, i.e. ratio ≥ 0.95.`,
    '',
    '| query | on req/s | off req/s | ratio (all rounds) | ratio per round: median (range) | on p50 / p99 ms | off p50 / p99 ms | errors (on / off) | CPU on / off | CPU µs a request on / off | load avg |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...bench.rows.map(
      (row) =>
        `| ${row.id}: ${row.title} | ${fixed(row.on.requestsPerSecond)} | ${fixed(row.off.requestsPerSecond)} | ${fixed(row.ratio, 3)} | **${fixed(median(row.roundRatios), 3)}** (${fixed(Math.min(...row.roundRatios), 2)}–${fixed(Math.max(...row.roundRatios), 2)}) | ${fixed(row.on.latencyP50Ms, 1)} / ${fixed(row.on.latencyP99Ms, 1)} | ${fixed(row.off.latencyP50Ms, 1)} / ${fixed(row.off.latencyP99Ms, 1)} | ${row.on.errors} / ${row.off.errors} | ${fixed(row.on.server.cpu, 2)} / ${fixed(row.off.server.cpu, 2)} | ${fixed(cpuPerRequestUs(row.on))} / ${fixed(cpuPerRequestUs(row.off))} | ${fixed(row.loadAverage, 1)} |`,
    ),
    '',
    'CPU = server process CPU time / wall time (1.00 = one core); CPU µs a request = that CPU over the requests answered: the difference is what metrics and the log cost a request, a figure the share of the cores the process got moves less than req/s.',
    ...splitLines(bench.rows),
    END,
  ];
  return lines.join('\n');
}

/** "Two processes", or "4 processes (2 pairs: started on, off, off, on)". */
function processesText(pairs: number): string {
  return pairs === 1 ? 'Two processes' : `${pairs * 2} processes (${pairs} pairs of on and off, started on, off, off, on, …: two processes of one configuration can differ by a few per cent for a whole run)`;
}
