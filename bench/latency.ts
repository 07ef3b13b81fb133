/**
 * Unloaded latency: one keep-alive connection, one request at a time, each timed with the
 * monotonic clock (autocannon's histogram counts whole milliseconds, too coarse for requests
 * that take one or two). Used for the growth measurements.
 */
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';

export interface LatencySamples {
  readonly samplesMs: number[];
  readonly errors: number;
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function post(url: string, headers: Readonly<Record<string, string>>, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** POSTs `bodies` in turn for `seconds`, one at a time, and returns every request's latency. */
export async function sequentialLatency(url: string, headers: Readonly<Record<string, string>>, bodies: readonly string[], seconds: number, start = 0): Promise<LatencySamples> {
  const samplesMs: number[] = [];
  let errors = 0;
  const deadline = performance.now() + seconds * 1000;
  for (let i = start; performance.now() < deadline; i++) {
    const began = performance.now();
    const answer = await post(url, headers, bodies[i % bodies.length]!).catch(() => ({ status: 0, body: '' }));
    samplesMs.push(performance.now() - began);
    if (answer.status !== 200 || answer.body.startsWith('{"errors"')) errors++;
  }
  return { samplesMs, errors };
}

/** The same POST helper, for checking answers before timing. */
export const postJson = post;

export function percentile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

export function closeAgent(): void {
  agent.destroy();
}
