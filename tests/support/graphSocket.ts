/**
 * A `graphql-ws` client (`createClient` over `ws`) for the service's `/api/graph`, and a
 * subscription read message by message: what the subscription tests speak.
 */
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';

/** The WebSocket URL of a service's GraphQL API. */
export const socketUrl = (httpUrl: string): string => `${httpUrl.replace(/^http/, 'ws')}/api/graph`;

/** A client with the API key in `connection_init` (`{"Authorization": "Token …"}`); closes and errors are recorded. */
export interface TestClient {
  readonly client: Client;
  /** Close events seen (code and reason), in order. */
  readonly closes: { code: number; reason: string; at: number }[];
  dispose(): Promise<void>;
}

/**
 * `retry`: reconnect after a close (graphql-ws's default retries close events only);
 * `retryEveryFailure`: a refused connection too (`shouldRetry: () => true`), riding out a restart.
 */
export function connect(httpUrl: string, key: string | null, options: { retry?: boolean; retryEveryFailure?: boolean; viaHeader?: boolean } = {}): TestClient {
  const closes: TestClient['closes'] = [];
  const headers = options.viaHeader && key ? { authorization: `Token ${key}` } : undefined;
  class KeyedWebSocket extends WebSocket {
    constructor(address: string, protocols?: string | string[]) {
      super(address, protocols, headers ? { headers } : {});
    }
  }
  const client = createClient({
    url: socketUrl(httpUrl),
    webSocketImpl: KeyedWebSocket,
    lazy: true,
    retryAttempts: options.retry ? 5 : 0,
    ...(options.retryEveryFailure ? { shouldRetry: () => true } : {}),
    connectionParams: key && !options.viaHeader ? { Authorization: `Token ${key}` } : {},
    on: { closed: (event) => void closes.push({ code: (event as { code: number }).code, reason: String((event as { reason: unknown }).reason), at: Date.now() }) },
  });
  return { client, closes, dispose: () => Promise.resolve(client.dispose()) };
}

/** One subscription's messages, read in order with `next()`; `errors` when it ended with them. */
export interface Subscription<T = any> {
  /** The next result (waits up to `timeoutMs`; rejects after it). */
  next(timeoutMs?: number): Promise<T>;
  /** Results received and not read yet. */
  readonly waiting: number;
  /** Resolves when the subscription ends: null when completed, the error otherwise. */
  readonly ended: Promise<unknown>;
  /** The raw JSON payloads as received (a subscriber may compare digits). */
  readonly raw: T[];
  stop(): void;
}

export function subscribe<T = any>(client: Client, query: string, variables?: Record<string, unknown>): Subscription<T> {
  const queue: T[] = [];
  const raw: T[] = [];
  let waiter: ((value: T) => void) | null = null;
  let endedWith: ((value: unknown) => void) | null = null;
  const ended = new Promise<unknown>((resolve) => (endedWith = resolve));
  const stop = client.subscribe<T>(
    { query, ...(variables ? { variables } : {}) },
    {
      next: (value) => {
        raw.push(value as T);
        if (waiter) {
          const w = waiter;
          waiter = null;
          w(value as T);
        } else queue.push(value as T);
      },
      error: (error) => endedWith!(error),
      complete: () => endedWith!(null),
    },
  );
  return {
    raw,
    ended,
    get waiting() {
      return queue.length;
    },
    next(timeoutMs = 10_000) {
      const value = queue.shift();
      if (value !== undefined) return Promise.resolve(value);
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiter = null;
          reject(new Error(`no message within ${timeoutMs} ms`));
        }, timeoutMs);
        waiter = (result) => {
          clearTimeout(timer);
          resolve(result);
        };
        void ended.then((error) => {
          if (waiter) {
            clearTimeout(timer);
            waiter = null;
            reject(error instanceof Error ? error : new Error(`the subscription ended: ${JSON.stringify(error)}`));
          }
        });
      });
    },
    stop,
  };
}
