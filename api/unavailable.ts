import type { ServerResponse } from 'node:http';
import { isConnectionError } from '../db/index.js';

/** Seconds a client is asked to wait (`Retry-After`) when the database cannot be reached. */
export const RETRY_AFTER_SECONDS = 2;
const MESSAGE = 'the database is unavailable; retry shortly';

/** True when `error` means the database cannot be reached now (classified once, in `db/unavailable.ts`). */
export const isDatabaseUnavailable = isConnectionError;

/** 503 with `Retry-After`, in GraphQL's shape (`extensions.code` `database-unavailable`). */
export function sendGraphUnavailable(res: ServerResponse, type = 'application/json; charset=utf-8'): void {
  send(res, type, JSON.stringify({ errors: [{ message: MESSAGE, extensions: { code: 'database-unavailable' } }] }));
}

/** 503 with `Retry-After`, in the REST routes' shape. */
export function sendRestUnavailable(res: ServerResponse): void {
  send(res, 'application/json; charset=utf-8', JSON.stringify({ error: MESSAGE, code: 'database-unavailable' }));
}

function send(res: ServerResponse, type: string, body: string): void {
  res.writeHead(503, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body), 'Retry-After': String(RETRY_AFTER_SECONDS) }).end(body);
}
