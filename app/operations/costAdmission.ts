/**
 * Admission by cost (issue 35; README "Operations", "Admission by cost"). The cost limit bounds
 * one request; this bounds their sum, so that a handful of requests each just under
 * `MAX_QUERY_COST` cannot hold every connection of the pool while cheap reads wait behind them.
 *
 * - A query whose estimated cost is under `cheapCost` (a by-pk read, a page of a list with its
 *   object relationships) is admitted at once and reserves nothing: the cheap lane.
 * - A costlier one reserves its cost from `budget` and one of `costlyConnections` (the pool less
 *   a share kept for the cheap lane). While either is spent it waits in a queue of at most
 *   `queueSize` requests, served round-robin between keys (each key's own requests in order).
 *   When the queue is full, the newcomer is refused — unless its key has fewer requests waiting
 *   than the key with the most, whose newest is refused in its place (a flooding key cannot
 *   crowd the others out of the queue). A request waiting longer than `queueWaitMs` is refused.
 *   A refusal is `AdmissionRefused`: the HTTP layer answers 503 with `Retry-After`.
 * - Every waiter waits the same `queueWaitMs` at most, so the oldest waiter's deadline is always the
 *   next one: one timer, armed for the oldest waiter still waiting, serves the whole queue instead
 *   of a timer set and cleared per waiter (issue 36: a queued q2 paid ~6 µs of CPU for its own).
 *
 * Per process: each process of `WORKERS=N` has its own pool, and so its own budget.
 */
import type { LiveAdmission, ResponseError } from '../../engine/index.js';
import { wholeNumberSetting } from '../envSettings.js';

/** How admission is sized (`admissionSettingsFromEnv`, `sizeAdmission`). */
export interface AdmissionSettings {
  /** A query costing less is admitted at once (`ADMISSION_CHEAP_COST`). */
  readonly cheapCost: number;
  /** The sum of costs admitted at once (`ADMISSION_COST_BUDGET`; null: sized from the pool, `sizeAdmission`). */
  readonly budget: number | null;
  /** Costly requests waiting at most (`ADMISSION_QUEUE_SIZE`). */
  readonly queueSize: number;
  /** Longest wait in the queue (`ADMISSION_QUEUE_WAIT_MS`). */
  readonly queueWaitMs: number;
}

/** The sizes `CostAdmission` works with. */
export interface AdmissionLimits {
  readonly cheapCost: number;
  readonly budget: number;
  /** Costly requests running at once at most. */
  readonly costlyConnections: number;
  readonly queueSize: number;
  readonly queueWaitMs: number;
}

/** Seconds a refused client is asked to wait before trying again. */
export const ADMISSION_RETRY_AFTER_SECONDS = 1;

/** A request admission turned away: answered 503 with `Retry-After`. */
export class AdmissionRefused extends Error {
  readonly retryAfterSeconds = ADMISSION_RETRY_AFTER_SECONDS;
  constructor(readonly reason: 'queue-full' | 'waited-too-long') {
    super(reason === 'queue-full' ? 'the service is busy with costly requests and its queue is full; retry shortly' : 'the service is busy with costly requests: this one waited too long; retry shortly');
  }
}

/**
 * The sizes for a pool of `poolSize` connections (PGlite: 1, it runs one statement at a time):
 * a quarter of the pool (at least one connection) is kept for the cheap lane, the rest may run
 * costly requests; the budget lets half of those run at `maxQueryCost` at once — so a burst at
 * the limit holds at most half the costly lane — unless `ADMISSION_COST_BUDGET` says otherwise.
 */
export function sizeAdmission(settings: AdmissionSettings, poolSize: number, maxQueryCost: number): AdmissionLimits {
  const costlyConnections = Math.max(1, poolSize - Math.max(1, Math.ceil(poolSize / 4)));
  const atTheLimit = maxQueryCost > 0 ? maxQueryCost : 50_000;
  const budget = settings.budget ?? Math.max(atTheLimit, Math.floor((costlyConnections * atTheLimit) / 2));
  return { cheapCost: settings.cheapCost, budget, costlyConnections, queueSize: settings.queueSize, queueWaitMs: settings.queueWaitMs };
}

interface Waiter {
  readonly key: string;
  readonly weight: number;
  readonly admit: (release: () => void) => void;
  readonly refuse: (error: AdmissionRefused) => void;
  /** `performance.now()` past which it is refused. */
  readonly deadline: number;
  /** Admitted or refused: no longer waiting (it stays in `#arrivals` until the head passes it). */
  settled: boolean;
}

/** What admission counts, for metrics. */
export interface AdmissionState {
  readonly running: number;
  readonly reserved: number;
  readonly waiting: number;
}

/** Admission by cost for one process (see the file's comment). */
export class CostAdmission {
  #running = 0;
  #reserved = 0;
  #waiting = 0;
  /** Each key's waiting requests in arrival order; the Map's order is the round-robin's. */
  readonly #queues = new Map<string, Waiter[]>();
  /** Every waiter in arrival order — so in deadline order — from `#head` on; settled ones are passed over. */
  #arrivals: Waiter[] = [];
  #head = 0;
  /** The one timer, armed for the deadline of the oldest waiter still waiting (null: none waits). */
  #timer: NodeJS.Timeout | null = null;

  constructor(
    readonly limits: AdmissionLimits,
    /** Told of each decision, for metrics: `admitted` at once, `queued` (then admitted or refused), `refused`. */
    private readonly onDecision: (decision: 'cheap' | 'admitted' | 'queued' | 'refused') => void = () => {},
  ) {}

  get state(): AdmissionState {
    return { running: this.#running, reserved: this.#reserved, waiting: this.#waiting };
  }

  /**
   * Admits a request of `key` costing `cost`: the function that gives its reservation back (call
   * it once, when its statement is done), at once or once the queue reaches it; throws (or
   * rejects with) `AdmissionRefused`.
   */
  admit(key: string, cost: number): (() => void) | Promise<() => void> {
    if (cost < this.limits.cheapCost) {
      this.onDecision('cheap');
      return NOTHING_RESERVED;
    }
    // A request dearer than the whole budget (MAX_QUERY_COST=0) runs alone rather than never.
    const weight = Math.min(cost, this.limits.budget);
    if (this.#waiting === 0 && this.#fits(weight)) {
      this.onDecision('admitted');
      return this.#take(weight);
    }
    if (this.limits.queueSize === 0) return this.#refuseNow();
    if (this.#waiting >= this.limits.queueSize) {
      const longest = this.#longestQueue();
      const mine = this.#queues.get(key)?.length ?? 0;
      if (!longest || longest.length <= mine + 1) return this.#refuseNow();
      // Longest queue drop: the flooding key's newest request gives its place up.
      this.#drop(longest.at(-1)!, new AdmissionRefused('queue-full'));
    }
    this.onDecision('queued');
    return new Promise<() => void>((resolve, reject) => {
      const waiter: Waiter = { key, weight, admit: resolve, refuse: reject, deadline: performance.now() + this.limits.queueWaitMs, settled: false };
      const queue = this.#queues.get(key);
      if (queue) queue.push(waiter);
      else this.#queues.set(key, [waiter]);
      this.#waiting += 1;
      this.#arrivals.push(waiter);
      if (!this.#timer) this.#armFor(waiter);
    });
  }

  #armFor(waiter: Waiter): void {
    this.#timer = setTimeout(() => this.#expire(), Math.max(0, waiter.deadline - performance.now()));
  }

  /** The timer: refuses every waiter past its deadline, oldest first, then arms for the next one still waiting. */
  #expire(): void {
    this.#timer = null;
    const now = performance.now();
    for (let oldest = this.#oldestWaiting(); oldest; oldest = this.#oldestWaiting()) {
      if (oldest.deadline > now) return this.#armFor(oldest);
      this.#drop(oldest, new AdmissionRefused('waited-too-long'));
    }
  }

  /** The oldest waiter not yet settled, passing over (and forgetting) the settled ones before it. */
  #oldestWaiting(): Waiter | null {
    while (this.#head < this.#arrivals.length && this.#arrivals[this.#head]!.settled) this.#head += 1;
    if (this.#head >= this.#arrivals.length) {
      this.#arrivals = [];
      this.#head = 0;
      return null;
    }
    if (this.#head > 1024 && this.#head * 2 > this.#arrivals.length) {
      this.#arrivals = this.#arrivals.slice(this.#head);
      this.#head = 0;
    }
    return this.#arrivals[this.#head]!;
  }

  /** Takes `waiter` out of the waiting count; the timer, when it was armed for it, moves on at its next firing. */
  #settle(waiter: Waiter): void {
    waiter.settled = true;
    this.#waiting -= 1;
    if (this.#waiting === 0 && this.#timer) {
      clearTimeout(this.#timer);
      this.#timer = null;
      this.#arrivals = [];
      this.#head = 0;
    }
  }

  #fits(weight: number): boolean {
    return this.#running < this.limits.costlyConnections && this.#reserved + weight <= this.limits.budget;
  }

  #take(weight: number): () => void {
    this.#running += 1;
    this.#reserved += weight;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#running -= 1;
      this.#reserved -= weight;
      this.#serve();
    };
  }

  /** Admits waiting requests, one key at a time in turn, while the head of the next key's queue fits (never skipping it, so a costly head is not starved). */
  #serve(): void {
    for (;;) {
      const next = this.#queues.entries().next();
      if (next.done) return;
      const [key, queue] = next.value;
      const head = queue[0]!;
      if (!this.#fits(head.weight)) return;
      queue.shift();
      this.#queues.delete(key);
      if (queue.length) this.#queues.set(key, queue);
      this.#settle(head);
      head.admit(this.#take(head.weight));
    }
  }

  #longestQueue(): Waiter[] | null {
    let longest: Waiter[] | null = null;
    for (const queue of this.#queues.values()) if (!longest || queue.length > longest.length) longest = queue;
    return longest;
  }

  #drop(waiter: Waiter, error: AdmissionRefused): void {
    const queue = this.#queues.get(waiter.key);
    const index = queue?.indexOf(waiter) ?? -1;
    if (!queue || index === -1) return;
    queue.splice(index, 1);
    if (!queue.length) this.#queues.delete(waiter.key);
    this.#settle(waiter);
    this.onDecision('refused');
    waiter.refuse(error);
    // The dropped request may have been the head that blocked the others.
    this.#serve();
  }

  #refuseNow(): never {
    this.onDecision('refused');
    throw new AdmissionRefused('queue-full');
  }
}

const NOTHING_RESERVED = (): void => {};

/**
 * What a WebSocket operation admission turned away is told (README "Subscriptions"): the
 * `overloaded` code HTTP answers 503 with, and `retryAfterSeconds` in place of `Retry-After`.
 */
export function overloadedError(refused: AdmissionRefused): ResponseError {
  return { message: refused.message, extensions: { code: 'overloaded', retryAfterSeconds: refused.retryAfterSeconds } };
}

/**
 * The process's admission as its live queries ask it (`LiveAdmission`): the very object the HTTP
 * routes ask — one budget, one queue, one set of metrics for both.
 */
export function liveAdmission(admission: CostAdmission): LiveAdmission {
  return {
    admit: (requester, cost) => admission.admit(requester, cost),
    refusal: (error) => (error instanceof AdmissionRefused ? { error: overloadedError(error), retryAfterMs: error.retryAfterSeconds * 1000 } : null),
  };
}

/** `ADMISSION_CHEAP_COST` (1000), `ADMISSION_COST_BUDGET` (sized from the pool; 0 turns admission off), `ADMISSION_QUEUE_SIZE` (100), `ADMISSION_QUEUE_WAIT_MS` (5000). Null: admission is off. */
export function admissionSettingsFromEnv(env: NodeJS.ProcessEnv): AdmissionSettings | null {
  const budget = wholeNumberSetting(env, 'ADMISSION_COST_BUDGET', null);
  if (budget === 0) return null;
  return {
    cheapCost: wholeNumberSetting(env, 'ADMISSION_CHEAP_COST', 1_000),
    budget,
    queueSize: wholeNumberSetting(env, 'ADMISSION_QUEUE_SIZE', 100),
    queueWaitMs: wholeNumberSetting(env, 'ADMISSION_QUEUE_WAIT_MS', 5_000),
  };
}
