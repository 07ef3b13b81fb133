import { hash } from 'node:crypto';
import { isLosslessNumber, parse as parseExactly } from 'lossless-json';
import { parseLsn, type Database, type QueryResult } from '../../../db/index.js';
import { classifyDatabaseError, isMetadataMismatch, MetadataMismatch, RequestError, type ResponseError } from '../errors.js';
import type { PreparedStream } from '../prepareRequest.js';
import { cohortRow, cohortStatement, parameterTypes } from './cohortStatement.js';

export type { LiveAdmission, LiveQueryOptions, LiveReads, LiveSink, LiveStatement, LiveSubscription } from './liveTypes.js';
import type { LiveQueryOptions, LiveSink, LiveStatement, LiveSubscription } from './liveTypes.js';

interface Subscriber {
  readonly id: number;
  readonly accountId: string;
  readonly values: unknown[];
  readonly stream: PreparedStream | null;
  readonly sink: LiveSink;
  readonly cost: number;
  readonly requester: string;
  lastHash: string | null;
  closed: boolean;
  /** Until the first refresh: settles the promise `subscribe` returned. */
  first: { resolve: () => void; reject: (error: unknown) => void } | null;
}

/** Subscribers whose statements are the same text: ONE statement per refresh answers them all. */
interface Cohort {
  /** Names it in admission's queue when its subscribers are of several requesters. */
  readonly id: number;
  readonly text: string;
  readonly tables: ReadonlySet<string>;
  readonly subscribers: Map<number, Subscriber>;
  readonly byAccount: Map<string, Set<Subscriber>>;
  readonly keys: ReadonlyMap<string, readonly number[]>;
  /** Parameter index (one of `keys`') → `<account> <loan>` → its subscribers (`<account> *`: a value that is not a loan id). */
  readonly byKey: Map<number, Map<string, Set<Subscriber>>>;
  /** Waiting for the next refresh of this cohort. */
  pending: Set<Subscriber>;
  running: boolean;
  statement: Promise<{ readonly text: string; readonly types: readonly string[] }> | null;
  /** Read replicas: the WAL position the last result was read at (at least), and what the last notices need. */
  sentPosition: bigint | null;
  requiredPosition: bigint | null;
  /** Subscribers whose refresh admission refused, run again when `retry` fires. */
  readonly refused: Set<Subscriber>;
  retry: NodeJS.Timeout | null;
}

const NOTHING_RESERVED = (): void => {};
const INTERNAL: ResponseError = { message: 'internal error', extensions: { code: 'internal' } };
const MISMATCH: ResponseError = { message: new MetadataMismatch('').message, extensions: { code: 'metadata-mismatch' } };
const later = (a: bigint | null, b: bigint | null): bigint | null => (a === null ? b : b === null || a > b ? a : b);

/**
 * The live queries of one process (engine/README.md, "Subscriptions"). Subscribers whose
 * statements have the same text form a cohort, refreshed by ONE statement that binds all their
 * parameter values together (`cohortStatement`); a cohort is refreshed when the database
 * announces a write to a table it reads in an account it serves (`noticeChange`), notices of one
 * window (50 ms) coalesced, a cohort never refreshed twice at once; and every `fallbackIntervalMs`
 * whatever the notices said. Nothing announced, no statement. A live query sends its first result
 * at once and then the whole result whenever its hash changes; a stream sends each non-empty
 * batch after its cursor and moves the cursor to the batch's last row.
 */
export class LiveQueries {
  readonly #db: Database;
  readonly #options: Required<Omit<LiveQueryOptions, 'reads' | 'admission'>> & Pick<LiveQueryOptions, 'reads' | 'admission'>;
  readonly #cohorts = new Map<string, Cohort>();
  readonly #byTable = new Map<string, Set<Cohort>>();
  /** Table → account (null: every account) → the loans written (null: every loan). */
  #changed = new Map<string, Map<string | null, Set<string> | null>>();
  #window: NodeJS.Timeout | null = null;
  readonly #fallback: NodeJS.Timeout | null;
  #nextId = 1;
  #nextCohortId = 1;
  #subscribers = 0;
  /** Cohort statements run so far (bench/subscriptions.ts, metrics). */
  statementsRun = 0;

  constructor(db: Database, options: LiveQueryOptions = {}) {
    this.#db = db;
    this.#options = { refreshWindowMs: 50, fallbackIntervalMs: 30_000, onFailure: () => undefined, ...options };
    const every = this.#options.fallbackIntervalMs;
    this.#fallback = every > 0 ? setInterval(() => this.refreshEverything(), every) : null;
    this.#fallback?.unref();
  }

  /** Open subscriptions and cohorts now. */
  get usage(): { readonly subscriptions: number; readonly cohorts: number } {
    return { subscriptions: this.#subscribers, cohorts: this.#cohorts.size };
  }

  /** Starts a subscription: resolves once its first refresh has run (a live query's first result sent), or rejects with `RequestError` when the database refused its values. */
  subscribe(statement: LiveStatement, sink: LiveSink): Promise<LiveSubscription> {
    let cohort = this.#cohorts.get(statement.text);
    if (!cohort) {
      const keys = new Map([...(statement.keys ?? [])].map(([table, indexes]) => [table, indexes.filter((index) => index !== statement.stream?.cursorIndex)] as const).filter(([, indexes]) => indexes.length > 0));
      const empty = { subscribers: new Map(), byAccount: new Map(), byKey: new Map(), pending: new Set<Subscriber>(), refused: new Set<Subscriber>() };
      cohort = { id: this.#nextCohortId++, text: statement.text, tables: statement.tables, keys, ...empty, running: false, statement: null, sentPosition: null, requiredPosition: null, retry: null };
      this.#cohorts.set(statement.text, cohort);
      for (const table of statement.tables) {
        let cohorts = this.#byTable.get(table);
        if (!cohorts) this.#byTable.set(table, (cohorts = new Set()));
        cohorts.add(cohort);
      }
    }
    const values = [...statement.values];
    if (statement.stream) values[statement.stream.cursorIndex] = statement.stream.initialValue;
    const { accountId, stream, cost = 0, requester = `account:${accountId}` } = statement;
    const subscriber: Subscriber = { id: this.#nextId++, accountId, values, stream, sink, cost, requester, lastHash: null, closed: false, first: null };
    const started = new Promise<void>((resolve, reject) => (subscriber.first = { resolve, reject }));
    cohort.subscribers.set(subscriber.id, subscriber);
    let inAccount = cohort.byAccount.get(subscriber.accountId);
    if (!inAccount) cohort.byAccount.set(subscriber.accountId, (inAccount = new Set()));
    inAccount.add(subscriber);
    for (const index of keyIndexes(cohort)) {
      let byValue = cohort.byKey.get(index);
      if (!byValue) cohort.byKey.set(index, (byValue = new Map()));
      const slot = keySlot(subscriber, index);
      let same = byValue.get(slot);
      if (!same) byValue.set(slot, (same = new Set()));
      same.add(subscriber);
    }
    this.#subscribers += 1;
    const owner = cohort;
    const begin = (position: bigint | null): void => {
      if (subscriber.closed) return;
      owner.requiredPosition = later(owner.requiredPosition, position);
      owner.pending.add(subscriber);
      this.#kick(owner);
    };
    // Read replicas: the first result reads at least what was committed before the subscription came
    // (its key's own last write included, whose notice came before it and refreshes nothing).
    if (this.#options.reads) void this.#options.reads.primaryPosition().catch(() => null).then(begin);
    else begin(null);
    return started.then(() => ({ stop: () => this.#remove(owner, subscriber) }));
  }

  /** The database said `table` was written in `accountId` (null: any account, or notices were lost), in rows of these `loans` (null: any loan, or rows without one). */
  noticeChange(table: string, accountId: string | null, loans: readonly string[] | null = null): void {
    if (!this.#byTable.has(table)) return;
    let accounts = this.#changed.get(table);
    if (!accounts) this.#changed.set(table, (accounts = new Map()));
    const known = accounts.get(accountId);
    const named = loans?.map(canonicalLoanId);
    if (accountId === null || !named || named.includes(null)) accounts.set(accountId, null);
    else if (known === undefined) accounts.set(accountId, new Set(named as string[]));
    else for (const loan of named as string[]) known?.add(loan);
    this.#window ??= setTimeout(() => void this.#flush(), this.#options.refreshWindowMs);
  }

  /** Refreshes every cohort for every subscriber (the fallback interval; after notices were lost). */
  refreshEverything(): void {
    for (const table of this.#byTable.keys()) this.noticeChange(table, null);
  }

  /** Ends every subscription without a word (the sockets are closing) and stops the timers. */
  close(): void {
    if (this.#fallback) clearInterval(this.#fallback);
    if (this.#window) clearTimeout(this.#window);
    for (const cohort of this.#cohorts.values()) if (cohort.retry) clearTimeout(cohort.retry);
    for (const cohort of [...this.#cohorts.values()]) for (const subscriber of [...cohort.subscribers.values()]) this.#remove(cohort, subscriber);
  }

  async #flush(): Promise<void> {
    this.#window = null;
    const changed = this.#changed;
    this.#changed = new Map();
    // Read replicas: the primary's position now is past every commit just announced.
    const position = this.#options.reads ? await this.#options.reads.primaryPosition().catch(() => null) : null;
    const touched = new Set<Cohort>();
    for (const [table, accounts] of changed) {
      for (const cohort of this.#byTable.get(table) ?? []) {
        for (const [account, loans] of accounts) {
          for (const subscriber of changedSubscribers(cohort, table, account, loans)) {
            cohort.pending.add(subscriber);
            touched.add(cohort);
          }
        }
      }
    }
    for (const cohort of touched) {
      cohort.requiredPosition = later(cohort.requiredPosition, position);
      this.#kick(cohort);
    }
  }

  #remove(cohort: Cohort, subscriber: Subscriber): void {
    if (subscriber.closed) return;
    subscriber.closed = true;
    this.#subscribers -= 1;
    cohort.subscribers.delete(subscriber.id);
    cohort.pending.delete(subscriber);
    cohort.refused.delete(subscriber);
    const inAccount = cohort.byAccount.get(subscriber.accountId);
    inAccount?.delete(subscriber);
    if (inAccount?.size === 0) cohort.byAccount.delete(subscriber.accountId);
    for (const index of keyIndexes(cohort)) {
      const byValue = cohort.byKey.get(index);
      const slot = keySlot(subscriber, index);
      const same = byValue?.get(slot);
      same?.delete(subscriber);
      if (same?.size === 0) byValue!.delete(slot);
    }
    if (cohort.subscribers.size === 0 && this.#cohorts.get(cohort.text) === cohort) {
      if (cohort.retry) clearTimeout(cohort.retry);
      cohort.retry = null;
      this.#cohorts.delete(cohort.text);
      for (const table of cohort.tables) {
        const cohorts = this.#byTable.get(table);
        cohorts?.delete(cohort);
        if (cohorts?.size === 0) this.#byTable.delete(table);
      }
    }
  }

  #end(cohort: Cohort, subscriber: Subscriber, errors: readonly ResponseError[]): void {
    const first = subscriber.first;
    subscriber.first = null;
    this.#remove(cohort, subscriber);
    if (first) first.reject(new RequestError(errors, 'execution'));
    else subscriber.sink.error(errors);
  }

  /** Runs the cohort's pending refreshes one after another: never two statements of a cohort at once. */
  #kick(cohort: Cohort): void {
    if (cohort.running || cohort.pending.size === 0) return;
    cohort.running = true;
    void (async () => {
      try {
        while (cohort.pending.size) {
          const batch = [...cohort.pending].filter((subscriber) => !subscriber.closed);
          cohort.pending = new Set();
          if (batch.length) await this.#refresh(cohort, batch);
          // A stream catching up asks again at once: its next batch waits for the process's other
          // work (HTTP requests, other sockets, the sends of this batch), else on the embedded
          // database, whose statements run on this thread, nothing else would run until it caught up.
          if (cohort.pending.size) await new Promise((resolve) => setImmediate(resolve));
        }
      } finally {
        cohort.running = false;
      }
    })();
  }

  async #refresh(cohort: Cohort, batch: readonly Subscriber[]): Promise<void> {
    let result: QueryResult<{ subscriber: number; response: string; position?: string }>;
    let release: () => void = NOTHING_RESERVED;
    try {
      release = await this.#admitted(cohort, batch);
    } catch (error) {
      const refusal = this.#options.admission?.refusal(error);
      if (!refusal) throw error;
      return this.#refused(cohort, batch, refusal);
    }
    // Its subscribers may have gone while it waited for its turn (the client completed, the service is stopping).
    if (batch.every((subscriber) => subscriber.closed)) return release();
    try {
      result = await this.#run(cohort, batch);
    } catch (error) {
      release();
      const clientError = classifyDatabaseError(error);
      if (clientError && batch.length > 1) {
        // One subscriber's values (a pattern PostgreSQL cannot compile, say): each alone, so only its own ends.
        for (const subscriber of batch) await this.#refresh(cohort, [subscriber]);
        return;
      }
      if (clientError) return this.#end(cohort, batch[0]!, [clientError]);
      this.#options.onFailure(error);
      // Started subscribers wait for the next notice or the fallback; a new one is told now (in
      // words when the database changed under the metadata, as on HTTP).
      const told = isMetadataMismatch(error) ? MISMATCH : INTERNAL;
      for (const subscriber of batch) if (subscriber.first) this.#end(cohort, subscriber, [told]);
      return;
    }
    release();
    const byId = new Map(batch.map((subscriber) => [subscriber.id, subscriber]));
    for (const row of result.rows) {
      if (row.position) cohort.sentPosition = later(cohort.sentPosition, parseLsn(row.position));
      const subscriber = byId.get(row.subscriber);
      if (subscriber && !subscriber.closed) this.#deliver(cohort, subscriber, row.response);
    }
  }

  /**
   * Admission by cost for a run of `batch`: the sum of their costs (the statement runs the plan
   * for each), in the turn of their requester — the cohort's own when they are several.
   */
  #admitted(cohort: Cohort, batch: readonly Subscriber[]): (() => void) | Promise<() => void> {
    const admission = this.#options.admission;
    if (!admission) return NOTHING_RESERVED;
    let cost = 0;
    let requester: string | null = batch[0]!.requester;
    for (const subscriber of batch) {
      cost += subscriber.cost;
      if (subscriber.requester !== requester) requester = null;
    }
    return admission.admit(requester ?? `cohort:${cohort.id}`, cost);
  }

  /**
   * Admission refused a run: a subscription waiting for its first result ends with the refusal (as HTTP
   * answers 503 `overloaded`); a started one is refreshed again after `retryAfterMs`, whatever notices come.
   */
  #refused(cohort: Cohort, batch: readonly Subscriber[], refusal: { readonly error: ResponseError; readonly retryAfterMs: number }): void {
    for (const subscriber of batch) {
      if (subscriber.closed) continue;
      if (subscriber.first) this.#end(cohort, subscriber, [refusal.error]);
      else cohort.refused.add(subscriber);
    }
    if (!cohort.refused.size || cohort.retry) return;
    cohort.retry = setTimeout(() => {
      cohort.retry = null;
      for (const subscriber of cohort.refused) if (!subscriber.closed) cohort.pending.add(subscriber);
      cohort.refused.clear();
      this.#kick(cohort);
    }, refusal.retryAfterMs);
    cohort.retry.unref();
  }

  #run(cohort: Cohort, batch: readonly Subscriber[]): Promise<QueryResult<{ subscriber: number; response: string; position?: string }>> {
    return (async () => {
      cohort.statement ??= parameterTypes(this.#db, cohort.text).then((types) => ({ types, text: cohortStatement(cohort.text, types, { withPosition: this.#options.reads !== undefined }) }));
      let statement;
      try {
        statement = await cohort.statement;
      } catch (error) {
        cohort.statement = null;
        throw error;
      }
      const rows = batch.map((subscriber) => cohortRow(subscriber.id, subscriber.values, statement.types));
      const reads = this.#options.reads;
      const target = reads ? reads.forRead(later(cohort.sentPosition, cohort.requiredPosition)) : this.#db;
      this.statementsRun += 1;
      return target.query<{ subscriber: number; response: string; position?: string }>(statement.text, [JSON.stringify(rows)], { reusable: true });
    })();
  }

  #deliver(cohort: Cohort, subscriber: Subscriber, response: string): void {
    const first = subscriber.first;
    subscriber.first = null;
    if (subscriber.stream) {
      const rows = streamRows(response, subscriber.stream.alias);
      if (rows.length) {
        if (first) first.resolve();
        subscriber.sink.next(response);
        const cursor = rows[rows.length - 1]![subscriber.stream.cursorAlias];
        subscriber.values[subscriber.stream.cursorIndex] = isLosslessNumber(cursor) ? cursor.toString() : cursor;
        // More rows may be waiting past this batch.
        cohort.pending.add(subscriber);
        return;
      }
    } else {
      const digest = hash('sha256', response, 'base64');
      if (digest !== subscriber.lastHash) {
        subscriber.lastHash = digest;
        if (first) first.resolve();
        subscriber.sink.next(response);
        return;
      }
    }
    first?.resolve();
  }
}

/** The subscribers of a cohort a write to `table` in `account` (null: all) of `loans` (null: all) may change. */
function* changedSubscribers(cohort: Cohort, table: string, account: string | null, loans: ReadonlySet<string> | null): Iterable<Subscriber> {
  if (account === null) return yield* cohort.subscribers.values();
  const indexes = cohort.keys.get(table);
  if (!loans || !indexes) return yield* cohort.byAccount.get(account) ?? [];
  for (const index of indexes) {
    const byValue = cohort.byKey.get(index);
    if (!byValue) continue;
    yield* byValue.get(`${account} *`) ?? [];
    for (const loan of loans) yield* byValue.get(`${account} ${loan}`) ?? [];
  }
}

const keyIndexes = (cohort: Cohort): ReadonlySet<number> => new Set([...cohort.keys.values()].flat());

/** Where a subscriber is filed under a key parameter: its account and loan (`*`: its value is not a loan id, so every write reaches it). */
const keySlot = (subscriber: Subscriber, index: number): string => `${subscriber.accountId} ${canonicalLoanId(subscriber.values[index]) ?? '*'}`;

/** A uuid as PostgreSQL writes it (lower case, 8-4-4-4-12), from any form its input accepts; null for anything else. */
function canonicalLoanId(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const hex = value.replace(/[{}-]/g, '').toLowerCase();
  if (!/^[0-9a-f]{32}$/.test(hex)) return null;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A stream's rows in a response (numbers kept exact: a cursor of numeric keeps its digits). */
function streamRows(response: string, alias: string): readonly Record<string, unknown>[] {
  const parsed = parseExactly(response) as { data?: Record<string, unknown> } | null;
  const rows = parsed?.data?.[alias];
  return Array.isArray(rows) ? (rows as Record<string, unknown>[]) : [];
}
