/**
 * Drives two servers (the engine and the baseline) with the same autocannon load on loopback,
 * in alternating rounds, while each server process's CPU time and RSS are sampled. Alternating
 * short rounds (A B B A A …) rather than one long run each puts both servers under the same
 * background load: on a shared machine, load drifts over tens of seconds, and one long run
 * per side let that drift decide a ratio (the same query measured 0.77 and 1.10 in two runs).
 * Even alone on the machine, one server against itself swings ±10–15 % from round to round
 * whatever the round's length (0.5 s to 4 s), so many short rounds pin the median down better
 * than a few long ones: 20 rounds of 1 s by default (bench/README.md, "Reading the results").
 */
import autocannon from 'autocannon';
import type { EventEmitter } from 'node:events';
import { cpuSeconds, machineCpuSeconds, measureUsage, processTreeCpuSeconds, type ProcessUsage } from './processes.js';
import { median } from './median.js';

export interface LoadSettings {
  readonly connections: number;
  /** Measured seconds per server and query, split evenly over the rounds. */
  readonly durationSeconds: number;
  readonly warmupSeconds: number;
  readonly rounds: number;
  /** When set, each round also records where the machine's CPU went (`CpuSplit`); PostgreSQL is this postmaster and its children. */
  readonly cpuSplit?: { readonly postmasterPid: number };
}

/**
 * Where the whole machine's CPU went during a side's rounds, µs a request answered (the median of
 * its rounds): the server process, PostgreSQL (the postmaster and its children), this runner
 * (autocannon runs in it), the machine's busy time (every core, /proc/stat) and of it the
 * kernel's (system, irq, softirq: also counted inside the three processes), and `rest`, busy time
 * of no process of the three (other work on the machine; ~0 when it is quiet).
 */
export interface CpuSplit {
  readonly server: number;
  readonly postgres: number;
  readonly runner: number;
  readonly machine: number;
  readonly kernel: number;
  readonly rest: number;
}

interface CpuSplitSnapshot {
  readonly server: number;
  readonly postgres: number;
  readonly runner: number;
  readonly machine: number;
  readonly kernel: number;
}

/** The runner's own clock is read after scanning /proc at a round's start and before it at its end, so the scan is not counted. */
function cpuSplitSnapshot(serverPid: number, postmasterPid: number, at: 'start' | 'end'): CpuSplitSnapshot {
  const runnerAtEnd = at === 'end' ? process.cpuUsage() : null;
  const machine = machineCpuSeconds();
  const server = cpuSeconds(serverPid);
  const postgres = processTreeCpuSeconds(postmasterPid);
  const runner = runnerAtEnd ?? process.cpuUsage();
  return { server, postgres, runner: (runner.user + runner.system) / 1e6, machine: machine.busy, kernel: machine.kernel };
}

export interface LoadTarget {
  readonly pid: number;
  readonly url: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Request bodies; request n sends bodies[n % length]. */
  readonly bodies: readonly string[];
}

export interface LoadResult {
  readonly requests: number;
  readonly requestsPerSecond: number;
  /** Percentiles over every measured response of every round (autocannon's per-response times). */
  readonly latencyP50Ms: number;
  readonly latencyP99Ms: number;
  readonly latencyMeanMs: number;
  /** Non-2xx responses plus socket errors and timeouts. */
  readonly errors: number;
  readonly bytesPerSecond: number;
  readonly server: ProcessUsage;
  /** Requests per second of each measured round, in order. */
  readonly roundRequestsPerSecond: readonly number[];
  /** With `settings.cpuSplit`: where the machine's CPU went, µs a request (median of the rounds). */
  readonly cpuSplit?: CpuSplit;
}

function run(target: LoadTarget, connections: number, durationSeconds: number, latencies?: number[]) {
  let next = 0;
  const instance = autocannon({
    url: target.url,
    connections,
    duration: durationSeconds,
    timeout: 30,
    requests: [
      {
        method: 'POST',
        path: target.path,
        headers: { 'content-type': 'application/json', ...target.headers },
        setupRequest: (request) => ({ ...request, body: target.bodies[next++ % target.bodies.length]! }),
      },
    ],
  });
  // Without a callback autocannon returns its tracker (an EventEmitter that is also thenable); its
  // types show only the promise.
  if (latencies) (instance as unknown as EventEmitter).on('response', (_client: unknown, _status: number, _bytes: number, responseTimeMs: number) => void latencies.push(responseTimeMs));
  return instance;
}

/** What one side collects over its rounds. */
class Tally {
  requests = 0;
  seconds = 0;
  errors = 0;
  bytes = 0;
  cpuSeconds = 0;
  rssPeakMb = 0;
  rssMeanSum = 0;
  readonly latencies: number[] = [];
  readonly rounds: number[] = [];
  readonly splits: CpuSplit[] = [];

  async round(target: LoadTarget, connections: number, seconds: number, split?: LoadSettings['cpuSplit']): Promise<void> {
    const before = split ? cpuSplitSnapshot(target.pid, split.postmasterPid, 'start') : null;
    const { result, usage } = await measureUsage(target.pid, () => run(target, connections, seconds, this.latencies));
    if (before && split && result.requests.total > 0) {
      const after = cpuSplitSnapshot(target.pid, split.postmasterPid, 'end');
      const perRequest = (key: keyof CpuSplitSnapshot): number => ((after[key] - before[key]) * 1e6) / result.requests.total;
      const [server, postgres, runner, machine] = [perRequest('server'), perRequest('postgres'), perRequest('runner'), perRequest('machine')];
      this.splits.push({ server, postgres, runner, machine, kernel: perRequest('kernel'), rest: machine - server - postgres - runner });
    }
    this.requests += result.requests.total;
    this.rounds.push(result.requests.total / result.duration);
    this.seconds += result.duration;
    this.errors += result.non2xx + result.errors + result.timeouts;
    this.bytes += result.throughput.total;
    this.cpuSeconds += usage.cpu * result.duration;
    this.rssPeakMb = Math.max(this.rssPeakMb, usage.rssPeakMb);
    this.rssMeanSum += usage.rssMeanMb * result.duration;
  }

  result(): LoadResult {
    const sorted = Float64Array.from(this.latencies).sort();
    const percentile = (p: number): number => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! : 0);
    return {
      requests: this.requests,
      requestsPerSecond: this.requests / this.seconds,
      latencyP50Ms: percentile(50),
      latencyP99Ms: percentile(99),
      latencyMeanMs: sorted.length ? sorted.reduce((a, b) => a + b, 0) / sorted.length : 0,
      errors: this.errors,
      bytesPerSecond: this.bytes / this.seconds,
      server: { cpu: this.cpuSeconds / this.seconds, rssPeakMb: this.rssPeakMb, rssMeanMb: this.rssMeanSum / this.seconds },
      roundRequestsPerSecond: [...this.rounds],
      ...(this.splits.length ? { cpuSplit: medianSplit(this.splits) } : {}),
    };
  }
}

function medianSplit(splits: readonly CpuSplit[]): CpuSplit {
  const of = (key: keyof CpuSplit): number => median(splits.map((split) => split[key]));
  return { server: of('server'), postgres: of('postgres'), runner: of('runner'), machine: of('machine'), kernel: of('kernel'), rest: of('rest') };
}

/** Below this warm-up throughput a round of `durationSeconds / rounds` holds too few responses to count. */
export const SLOW_REQUESTS_PER_SECOND = 100;

/**
 * Rounds for a query: `settings.rounds`, or for a slow query (the slower server's warm-up under
 * `SLOW_REQUESTS_PER_SECOND`: q8, ~35 responses a second with 16 in flight, whose one-second
 * round would count two or three responses per connection) a quarter as many (at least 5), each
 * four times as long. The measured time per server stays `durationSeconds`.
 */
function roundsFor(settings: LoadSettings, warmupRequestsPerSecond: number): number {
  return warmupRequestsPerSecond < SLOW_REQUESTS_PER_SECOND ? Math.max(5, Math.round(settings.rounds / 4)) : settings.rounds;
}

/**
 * A warm-up of each server (not recorded), then `rounds` measured rounds of
 * `durationSeconds / rounds` each per server, the order alternating: A B, B A, A B, …
 * (`firstIsA` picks who starts, so that across queries neither side always goes first).
 */
export async function measurePair(a: LoadTarget, b: LoadTarget, settings: LoadSettings, firstIsA: boolean): Promise<[LoadResult, LoadResult]> {
  return measureGroups([a], [b], settings, firstIsA);
}

/**
 * `measurePair` over several processes a side (`a[p]` against `b[p]`, as many of each): each
 * round measures every pair in turn, each pair's order alternating by round and by pair (A B, B A
 * for pair 0; B A, A B for pair 1; …). A side's result counts all its processes' rounds, kept in
 * pair order within a round, so `roundRatios` pairs `a[p]`'s round with `b[p]`'s. Two processes of
 * one configuration can differ by several per cent for as long as they run (bench/README.md,
 * session 33: two identical "off" servers 0.93 apart for a whole run) — more pairs average that out.
 * Each side is measured `durationSeconds` per pair.
 */
export async function measureGroups(a: readonly LoadTarget[], b: readonly LoadTarget[], settings: LoadSettings, firstIsA: boolean): Promise<[LoadResult, LoadResult]> {
  if (a.length !== b.length || a.length === 0) throw new Error('measureGroups: as many processes on each side, at least one');
  const pairs = a.map((target, index) => [target, b[index]!] as const);
  const ordered = (pair: number, round: number): readonly LoadTarget[] => {
    const [x, y] = pairs[pair]!;
    return ((round + pair) % 2 === 0) === firstIsA ? [x, y] : [y, x];
  };
  let slowest = Infinity;
  if (settings.warmupSeconds > 0) {
    for (let pair = 0; pair < pairs.length; pair++) {
      for (const target of ordered(pair, 0)) {
        const warmup = await run(target, settings.connections, settings.warmupSeconds);
        slowest = Math.min(slowest, warmup.requests.total / warmup.duration);
      }
    }
  }
  const tallyA = new Tally();
  const tallyB = new Tally();
  const sideA = new Set(a);
  const rounds = roundsFor(settings, slowest);
  // Rounds keep their length: with more pairs a side is measured `pairs` times `durationSeconds`.
  const seconds = settings.durationSeconds / rounds;
  for (let round = 0; round < rounds; round++) {
    for (let pair = 0; pair < pairs.length; pair++) {
      for (const target of ordered(pair, round)) await (sideA.has(target) ? tallyA : tallyB).round(target, settings.connections, seconds, settings.cpuSplit);
    }
  }
  return [tallyA.result(), tallyB.result()];
}
