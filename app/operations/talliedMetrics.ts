import type { Registry } from 'prom-client';

/**
 * Request metrics counted in plain numbers and handed to prom-client only when scraped (issue 35,
 * "What observing costs"): a labelled child of prom-client's `Counter` or `Histogram` still checks
 * and hashes its labels and makes objects on every `inc` or `observe`, and that was most of what
 * the metrics cost a request. A `Tally` is one label set's figures; the owner keeps its tallies
 * (say, in a map by label values) and calls `count`.
 */
export class Tally {
  /** Observations per bucket (not cumulative): `counts[i]` are those ≤ `bounds[i]` and > `bounds[i - 1]`; the last is above every bound. */
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Readonly<Record<string, string>>,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Array<number>(bounds.length + 1).fill(0);
  }

  /** One observation (a histogram's value; a counter counts with 1). */
  add(value: number): void {
    this.sum += value;
    this.count++;
    const { bounds } = this;
    let bucket = 0;
    while (bucket < bounds.length && value > bounds[bucket]!) bucket++;
    this.counts[bucket]!++;
  }
}

/** One sample of a metric as prom-client's registries read it (`Registry.metrics`, `AggregatorRegistry`). */
interface Sample {
  readonly value: number;
  readonly labels: Record<string, string | number>;
  readonly metricName?: string;
}

/**
 * A Prometheus counter or histogram whose samples are `Tally`s, registered in a prom-client
 * `Registry` as one of its own metrics: it answers `get()` in the shape prom-client's `Counter`
 * and `Histogram` do (`_bucket` samples with a cumulative `le`, `_sum`, `_count`), so the text
 * format and a cluster's sums (`AggregatorRegistry`, `aggregator: 'sum'`) are as before.
 */
export class TalliedMetric {
  readonly aggregator = 'sum';
  readonly #tallies: Tally[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'counter' | 'histogram',
    private readonly buckets: readonly number[],
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  /** A new label set's tally (keep it: a second one with the same labels would be a second series). */
  tally(labels: Readonly<Record<string, string>>): Tally {
    const tally = new Tally(labels, this.type === 'counter' ? [] : this.buckets);
    this.#tallies.push(tally);
    return tally;
  }

  get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: Sample[] }> {
    const values: Sample[] = [];
    for (const tally of this.#tallies) {
      if (this.type === 'counter') {
        values.push({ value: tally.count, labels: { ...tally.labels } });
        continue;
      }
      let cumulative = 0;
      this.buckets.forEach((bound, i) => {
        cumulative += tally.counts[i]!;
        values.push({ value: cumulative, labels: { ...tally.labels, le: bound }, metricName: `${this.name}_bucket` });
      });
      values.push({ value: tally.count, labels: { ...tally.labels, le: '+Inf' }, metricName: `${this.name}_bucket` });
      values.push({ value: tally.sum, labels: { ...tally.labels }, metricName: `${this.name}_sum` });
      values.push({ value: tally.count, labels: { ...tally.labels }, metricName: `${this.name}_count` });
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values });
  }

  /** `Registry.resetMetrics`: every series back to 0. */
  reset(): void {
    for (const tally of this.#tallies) {
      tally.counts.fill(0);
      tally.sum = 0;
      tally.count = 0;
    }
  }
}
