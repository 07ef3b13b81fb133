import type { ServerResponse } from 'node:http';
import { isConnectionError } from '../db/index.js';

/** Seconds a client is asked to wait (`Retry-After`) when the database cannot be reached. */
export const RETRY_AFTER_SECONDS = 2;
const MESSAGE = 'the database is unavailable; retry shortly';

/** True when `error` means the database cannot be reached now (classified once, in `db/unavailable.ts`). */
export const isDatabaseUnavailable = isConnectionError;

/** 503 with `Retry-After`, in GraphQL's shape (`extensions.code` `database-unavailable`), as `type` (the request's `graphResponseType`). */
export function sendGraphUnavailable(res: ServerResponse, type = 'application/json; charset=utf-8'): void {
  send(res, type, JSON.stringify({ errors: [{ message: MESSAGE, extensions: { code: 'database-unavailable' } }] }));
}

/** 503 with `Retry-After`, in the REST routes' shape. */
export function sendRestUnavailable(res: ServerResponse): void {
  send(res, 'application/json; charset=utf-8', JSON.stringify({ error: MESSAGE, code: 'database-unavailable' }));
}

const TIMEOUT_MESSAGE = 'the request ran past the statement timeout (STATEMENT_TIMEOUT_MS): ask for less (a shorter period, a smaller page) or try again later';

/**
 * 503 of a request the database stopped at `statement_timeout`, in the REST routes' shape (`code`
 * `timeout`, the code GraphQL's errors carry for it). No `Retry-After`: the same request at once
 * would most likely run as long again. It was a 500 "internal error" before (a remittance run over
 * years of a large lender's history, a long investor statement).
 */
export function sendRestTimeout(res: ServerResponse): void {
  send(res, 'application/json; charset=utf-8', JSON.stringify({ error: TIMEOUT_MESSAGE, code: 'timeout' }), false);
}

/** The same in GraphQL's shape (the engine answers its own statements' timeouts; this is for the route's others). */
export function sendGraphTimeout(res: ServerResponse, type = 'application/json; charset=utf-8'): void {
  send(res, type, JSON.stringify({ errors: [{ message: TIMEOUT_MESSAGE, extensions: { code: 'timeout' } }] }), false);
}

function send(res: ServerResponse, type: string, body: string, retry = true): void {
  res.writeHead(503, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body), ...(retry ? { 'Retry-After': String(RETRY_AFTER_SECONDS) } : {}) }).end(body);
}
