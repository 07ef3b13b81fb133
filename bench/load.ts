/**
 * Drives one server with autocannon: a fixed number of connections on loopback for a fixed
 * time, the request body rotating through prepared bodies (one per variable set), while the
 * server process's CPU time and RSS are sampled.
 */
import autocannon from 'autocannon';
import { measureUsage, type ProcessUsage } from './processes.js';

export interface LoadSettings {
  readonly connections: number;
  readonly durationSeconds: number;
  readonly warmupSeconds: number;
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
  readonly latencyP50Ms: number;
  readonly latencyP99Ms: number;
  readonly latencyMeanMs: number;
  /** Non-2xx responses plus socket errors and timeouts. */
  readonly errors: number;
  readonly bytesPerSecond: number;
  readonly server: ProcessUsage;
}

function run(target: LoadTarget, connections: number, durationSeconds: number) {
  let next = 0;
  return autocannon({
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
}

/** A warm-up (not recorded), then the measured run. */
export async function measureLoad(target: LoadTarget, settings: LoadSettings): Promise<LoadResult> {
  if (settings.warmupSeconds > 0) await run(target, settings.connections, settings.warmupSeconds);
  const { result, usage } = await measureUsage(target.pid, () => run(target, settings.connections, settings.durationSeconds));
  const completed = result.requests.total;
  return {
    requests: completed,
    requestsPerSecond: completed / result.duration,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    latencyMeanMs: result.latency.mean,
    errors: result.non2xx + result.errors + result.timeouts,
    bytesPerSecond: result.throughput.mean,
    server: usage,
  };
}
