/**
 * What one account's requests to this process looked like over the last hour (issue 35, the
 * dashboard's operations page): by GraphQL operation type, how many, how many failed, and their
 * latency. Kept beside the Prometheus metrics (which are the service's, every account together,
 * and so not an account admin's to see) from the same finished requests, in one-minute slots
 * reused as the hour turns: memory is at most 60 slots per account that has sent this process a
 * request (an account's entry is kept once made; accounts are few and each slot is small).
 */

/** One operation type's figures for the window. */
export interface TrafficRow {
  /** `query`, `mutation`, `subscription`, or `none` (a REST route). */
  readonly operation: string;
  readonly requests: number;
  /** Answered with a status of 400 or more. */
  readonly errors: number;
  readonly meanMs: number;
  /** The upper bound of the latency bucket holding the 95th percentile (ms), as a histogram tells it. */
  readonly p95Ms: number;
  readonly maxMs: number;
}

/** Latency buckets (ms), the same bounds as the metrics' histograms. */
const BUCKETS_MS = [1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, Infinity];
const SLOT_MS = 60_000;
const SLOTS = 60;

interface Tally {
  requests: number;
  errors: number;
  totalMs: number;
  maxMs: number;
  readonly buckets: number[];
}

interface Slot {
  /** The minute (ms since the epoch / SLOT_MS) this slot counts. */
  minute: number;
  readonly byOperation: Map<string, Tally>;
}

export class AccountTraffic {
  readonly #accounts = new Map<string, Slot[]>();

  /** When counting began (this process's metrics were made): the figures cover no earlier time. */
  readonly #since: number;

  constructor(private readonly now: () => number = Date.now) {
    this.#since = now();
  }

  /**
   * The whole minutes counting has run for, when that is less than the hour `lastHour` covers
   * (the process started within it: a restart begins the figures again); null once a full hour.
   */
  partialWindowMinutes(): number | null {
    const minutes = Math.floor((this.now() - this.#since) / SLOT_MS);
    return minutes < SLOTS ? minutes : null;
  }

  /** Counts one finished request of `accountId`, ended at `endedAt` (ms since the epoch; now by default). */
  observe(accountId: string, operation: string, status: number, durationMs: number, endedAt: number = this.now()): void {
    const minute = Math.floor(endedAt / SLOT_MS);
    let slots = this.#accounts.get(accountId);
    if (!slots) this.#accounts.set(accountId, (slots = []));
    let slot = slots[minute % SLOTS];
    if (!slot || slot.minute !== minute) slots[minute % SLOTS] = slot = { minute, byOperation: new Map() };
    let tally = slot.byOperation.get(operation);
    if (!tally) slot.byOperation.set(operation, (tally = { requests: 0, errors: 0, totalMs: 0, maxMs: 0, buckets: new Array<number>(BUCKETS_MS.length).fill(0) }));
    tally.requests++;
    if (status >= 400) tally.errors++;
    tally.totalMs += durationMs;
    if (durationMs > tally.maxMs) tally.maxMs = durationMs;
    let bucket = 0;
    while (durationMs > BUCKETS_MS[bucket]!) bucket++;
    tally.buckets[bucket]!++;
  }

  /** The account's figures over the last hour, by operation type (most requests first). */
  lastHour(accountId: string): TrafficRow[] {
    const since = Math.floor(this.now() / SLOT_MS) - SLOTS + 1;
    const sums = new Map<string, Tally>();
    for (const slot of this.#accounts.get(accountId) ?? []) {
      if (!slot || slot.minute < since) continue;
      for (const [operation, tally] of slot.byOperation) {
        let sum = sums.get(operation);
        if (!sum) sums.set(operation, (sum = { requests: 0, errors: 0, totalMs: 0, maxMs: 0, buckets: new Array<number>(BUCKETS_MS.length).fill(0) }));
        sum.requests += tally.requests;
        sum.errors += tally.errors;
        sum.totalMs += tally.totalMs;
        sum.maxMs = Math.max(sum.maxMs, tally.maxMs);
        tally.buckets.forEach((count, i) => (sum!.buckets[i]! += count));
      }
    }
    return [...sums]
      .map(([operation, sum]) => ({ operation, requests: sum.requests, errors: sum.errors, meanMs: sum.totalMs / sum.requests, p95Ms: Math.min(percentileBound(sum, 0.95), sum.maxMs), maxMs: sum.maxMs }))
      .sort((a, b) => b.requests - a.requests || a.operation.localeCompare(b.operation));
  }
}

function percentileBound(tally: Tally, share: number): number {
  const rank = Math.ceil(tally.requests * share);
  let seen = 0;
  for (let i = 0; i < BUCKETS_MS.length; i++) {
    seen += tally.buckets[i]!;
    if (seen >= rank) return BUCKETS_MS[i]!;
  }
  return tally.maxMs;
}
