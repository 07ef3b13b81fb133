import type { Queryable } from '../../../db/index.js';
import type { ResponseError } from '../errors.js';
import type { PreparedStream } from '../prepareRequest.js';

/**
 * What `LiveQueries` (liveQueries.ts) is given and gives: a subscription's statement and where its
 * results go, read replicas and admission by cost for its runs, and its options.
 */

/** Where a subscription's results go. */
export interface LiveSink {
  /** A result: the response text as PostgreSQL built it (`{"data":…}`), to send untouched. */
  next(text: string): void;
  /** The subscription ended with these errors (the protocol's `error` message). */
  error(errors: readonly ResponseError[]): void;
}

/** One subscription's statement, as `GraphEngine.prepareLive` makes it. */
export interface LiveStatement {
  readonly text: string;
  readonly values: readonly unknown[];
  readonly stream: PreparedStream | null;
  /** The tables the statement reads (`tablesRead`): a write to one of them in `accountId` refreshes it. */
  readonly tables: ReadonlySet<string>;
  readonly accountId: string;
  /**
   * Table → the indexes in `values` of the parameters holding the loan every row the statement
   * reads of it belongs to (`refreshKeys`): a notice naming loans of that table refreshes only
   * the subscribers of those loans. A table absent: every subscriber of the account.
   */
  readonly keys?: ReadonlyMap<string, readonly number[]> | null;
  /** The plan's estimated cost (`prepared.cost`): what a run for this subscriber reserves of admission by cost. */
  readonly cost?: number;
  /** Whose turn its runs take in admission's queue (the API key, as its HTTP requests'). */
  readonly requester?: string;
}

/**
 * Admission by cost (README "Operations"), the process's one, as the HTTP routes ask it: every
 * run of a cohort's statement — a subscription's first result, a refresh, a stream's next batch —
 * is admitted first, reserving the sum of its subscribers' costs (the statement runs the plan once
 * for each of them).
 */
export interface LiveAdmission {
  /** The release of a run of `cost` for `requester` (call it once the statement is done), at once or once admitted; throws or rejects to refuse it. */
  admit(requester: string, cost: number): (() => void) | Promise<() => void>;
  /** For an error `admit` refused with: what a new subscriber is told, and after how long a refused refresh runs again. Null for any other error. */
  refusal(error: unknown): { readonly error: ResponseError; readonly retryAfterMs: number } | null;
}

/** Read replicas, for cohorts' reads: a replica that has replayed `atLeast`, or the primary. */
export interface LiveReads {
  forRead(atLeast: bigint | null): { query: Queryable['query'] };
  primaryPosition(): Promise<bigint>;
}

export interface LiveQueryOptions {
  /** Notices arriving within this window refresh each cohort once (default 50 ms). */
  readonly refreshWindowMs?: number;
  /** Every cohort is refreshed this often whatever the notices say (default 30 s; 0 = never). */
  readonly fallbackIntervalMs?: number;
  readonly reads?: LiveReads;
  /** Admission by cost of every run (absent: runs are not asked). */
  readonly admission?: LiveAdmission | null;
  /** Told of failures that are not a client's (the database unreachable, a bug); the subscriptions wait for the next notice. */
  readonly onFailure?: (error: unknown) => void;
}

/** A running subscription: `stop` ends it (the client completed, or the socket closed). */
export interface LiveSubscription {
  stop(): void;
}
