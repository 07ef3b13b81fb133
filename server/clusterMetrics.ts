import cluster from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';
import type { ScrapeMetrics } from '../api/routes/metrics.js';

/**
 * `WORKERS=N`: every API process keeps its own registry, and `GET /metrics` answers the whole
 * service, whichever process Prometheus reaches (they share one port, so it cannot pick one):
 * that process asks the primary, which gathers every process's registry with prom-client's
 * `AggregatorRegistry` (counters and histograms summed, gauges by their own aggregator) and
 * answers. Decision in README "Operations".
 */
const ASK = 'loanql:metrics-request';
const ANSWER = 'loanql:metrics-answer';

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

/** In the primary: answers the API processes' requests for the cluster's metrics. */
export function answerClusterMetrics(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: Partial<Ask>) => {
    if (message?.type !== ASK || typeof message.id !== 'number') return;
    const id = message.id;
    aggregator.clusterMetrics().then(
      (text) => worker.isConnected() && worker.send({ type: ANSWER, id, text } satisfies Answer),
      (error: Error) => worker.isConnected() && worker.send({ type: ANSWER, id, error: error.message } satisfies Answer),
    );
  });
}

/** In an API process of a cluster: hands `registry` to the primary's gatherings and scrapes through the primary. */
export function clusterScrape(registry: Registry): ScrapeMetrics {
  // Constructing one registers prom-client's listener for the primary's requests in this process.
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([registry]);
  let next = 0;
  const waiting = new Map<number, { resolve: (text: string) => void; reject: (error: Error) => void }>();
  process.on('message', (message: Partial<Answer>) => {
    if (message?.type !== ANSWER || typeof message.id !== 'number') return;
    const asked = waiting.get(message.id);
    if (!asked) return;
    waiting.delete(message.id);
    if (typeof message.text === 'string') asked.resolve(message.text);
    else asked.reject(new Error(message.error ?? 'no answer'));
  });
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
