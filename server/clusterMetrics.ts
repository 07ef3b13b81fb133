import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';
import type { ScrapeMetrics } from '../api/routes/metrics.js';

/**
 * `WORKERS=N`: every API process keeps its own registry, and `GET /metrics` answers the whole
 * service, whichever process Prometheus reaches (they share one port, so it cannot pick one):
 * that process asks the primary, which gathers every process's registry and adds them up with
 * prom-client's `AggregatorRegistry.aggregate` (counters and histograms summed, gauges by their
 * own aggregator). Decision in README "Operations".
 *
 * The primary gathers them itself rather than with prom-client's `clusterMetrics`, which waited
 * for every process: while a process killed or crashed was being replaced, its successor (forked,
 * connected, still opening its database) answered nothing, so every scrape waited 5 s and was a
 * 503 — every metric lost exactly while something was wrong. And the processes' counters were
 * only summed, so the one that died took its counts with it: the service's counters fell (21 to
 * 10 in a measured run), which Prometheus's `rate()` and `increase()` read as a reset, counting
 * the whole new total again as new requests. Now:
 *  - a process is asked once it says it is ready (`READY`, sent when its registry is handed over);
 *  - a scrape waits for the ready processes at most `GATHER_WAIT_MS`, then answers with the
 *    processes' last answers for those late;
 *  - a process that exits leaves its counters and histograms, as last gathered, to the service's
 *    (its gauges go: they were its state), so no counter of the service ever goes down — counts
 *    a process made after its last scrape are lost with it, never counted twice.
 */
const ASK = 'loanql:metrics-request';
const ANSWER = 'loanql:metrics-answer';
const READY = 'loanql:metrics-ready';
const GATHER = 'loanql:metrics-gather';
const GATHERED = 'loanql:metrics-gathered';

/** How long a scrape waits for each process's figures (its webhook backlog count may take `BACKLOG_WAIT_MS`, 1 s). */
export const GATHER_WAIT_MS = 3_000;

interface Ask {
  readonly type: typeof ASK;
  readonly id: number;
}
interface Answer {
  readonly type: typeof ANSWER;
  readonly id: number;
  readonly text?: string;
  readonly error?: string;
}
interface Gather {
  readonly type: typeof GATHER;
  readonly id: number;
}
interface Gathered {
  readonly type: typeof GATHERED;
  readonly id: number;
  readonly metrics?: readonly GatheredMetric[];
}

/** One metric as `Registry.getMetricsAsJSON` gives it (the fields the primary reads). */
interface GatheredMetric {
  readonly name: string;
  readonly type: string;
  readonly aggregator?: string;
  readonly values: readonly unknown[];
}

/** What a process leaves to the service's totals when it exits: what only grows (counters, histograms) and is summed. */
function lastingPart(metrics: readonly GatheredMetric[]): GatheredMetric[] {
  return metrics.filter((metric) => (metric.type === 'counter' || metric.type === 'histogram') && (metric.aggregator ?? 'sum') === 'sum');
}

/** The primary's view of its processes' figures: each ready one's last answer, and what exited ones left. */
export class ClusterFigures {
  readonly #ready = new Set<number>();
  readonly #last = new Map<number, readonly GatheredMetric[]>();
  /** Counters and histograms of processes that exited, added up. */
  #retired: GatheredMetric[] = [];
  #retiring: Promise<void> = Promise.resolve();
  #next = 0;
  readonly #waiting = new Map<number, { readonly pending: Set<number>; readonly done: () => void }>();

  /** A process said it is ready to be asked. */
  ready(workerId: number): void {
    this.#ready.add(workerId);
  }

  /** A process answered a gathering: with its figures, or null when it could not collect them. */
  answered(workerId: number, gatherId: number, metrics: readonly GatheredMetric[] | null): void {
    if (metrics && this.#ready.has(workerId)) this.#last.set(workerId, metrics);
    this.#settle(gatherId, workerId);
  }

  /**
   * A process exited: its counters and histograms stay in the service's totals, its gauges go.
   * Its last answer is dropped only once the totals hold it (one exit at a time), so no scrape
   * meanwhile misses it.
   */
  exited(workerId: number): Promise<void> {
    this.#ready.delete(workerId);
    for (const id of [...this.#waiting.keys()]) this.#settle(id, workerId);
    this.#retiring = this.#retiring.then(async () => {
      const last = this.#last.get(workerId);
      if (last) this.#retired = lastingPart((await AggregatorRegistry.aggregate([this.#retired, lastingPart(last)]).getMetricsAsJSON()) as unknown as GatheredMetric[]);
      this.#last.delete(workerId);
    });
    return this.#retiring;
  }

  /**
   * The service's metrics text: asks every ready process (`send`) and waits for their answers at
   * most `waitMs`, then adds up each process's newest answer and what exited processes left.
   */
  async gather(send: (workerId: number, message: Gather) => boolean, waitMs = GATHER_WAIT_MS): Promise<string> {
    const id = this.#next++;
    const pending = new Set<number>();
    for (const workerId of this.#ready) if (send(workerId, { type: GATHER, id })) pending.add(workerId);
    if (pending.size) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => done(), waitMs);
        const done = (): void => {
          clearTimeout(timer);
          this.#waiting.delete(id);
          resolve();
        };
        this.#waiting.set(id, { pending, done });
      });
    }
    const parts = [this.#retired, ...this.#last.values()].filter((part) => part.length > 0);
    return AggregatorRegistry.aggregate(parts).metrics();
  }

  #settle(gatherId: number, workerId: number): void {
    const waiting = this.#waiting.get(gatherId);
    if (!waiting) return;
    waiting.pending.delete(workerId);
    if (waiting.pending.size === 0) waiting.done();
  }
}

/** In the primary: gathers the API processes' figures and answers their requests for the cluster's metrics. */
export function answerClusterMetrics(): ClusterFigures {
  const figures = new ClusterFigures();
  const send = (workerId: number, message: Gather): boolean => {
    const worker = cluster.workers?.[workerId];
    if (!worker?.isConnected()) return false;
    worker.send(message);
    return true;
  };
  cluster.on('message', (worker: Worker, message: Partial<Ask | Gathered | { type: typeof READY }>) => {
    if (message?.type === READY) return figures.ready(worker.id);
    if (message?.type === GATHERED && typeof message.id === 'number') return figures.answered(worker.id, message.id, Array.isArray(message.metrics) ? message.metrics : null);
    if (message?.type !== ASK || typeof message.id !== 'number') return;
    const id = message.id;
    figures.gather(send).then(
      (text) => worker.isConnected() && worker.send({ type: ANSWER, id, text } satisfies Answer),
      (error: Error) => worker.isConnected() && worker.send({ type: ANSWER, id, error: error.message } satisfies Answer),
    );
  });
  cluster.on('exit', (worker) => void figures.exited(worker.id));
  return figures;
}

/** In an API process of a cluster: hands `registry` to the primary's gatherings and scrapes through the primary. */
export function clusterScrape(registry: Registry): ScrapeMetrics {
  let next = 0;
  const waiting = new Map<number, { resolve: (text: string) => void; reject: (error: Error) => void }>();
  process.on('message', (message: Partial<Answer | Gather>) => {
    if (message?.type === GATHER && typeof message.id === 'number') {
      const id = message.id;
      void registry.getMetricsAsJSON().then(
        (metrics) => process.send?.({ type: GATHERED, id, metrics: metrics as unknown as GatheredMetric[] } satisfies Gathered),
        () => process.send?.({ type: GATHERED, id } satisfies Gathered),
      );
      return;
    }
    if (message?.type !== ANSWER || typeof message.id !== 'number') return;
    const asked = waiting.get(message.id);
    if (!asked) return;
    waiting.delete(message.id);
    if (typeof message.text === 'string') asked.resolve(message.text);
    else asked.reject(new Error(message.error ?? 'no answer'));
  });
  process.send?.({ type: READY });
  return () =>
    new Promise((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new Error('the primary did not gather the metrics within 10 s'));
      }, 10_000);
      waiting.set(id, {
        resolve: (text) => {
          clearTimeout(timer);
          resolve({ text, contentType: registry.contentType });
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      process.send?.({ type: ASK, id } satisfies Ask);
    });
}
