/**
 * The one place that decides whether a database failure means "the database cannot be reached
 * right now" (server stopped or restarting, connection cut, pool closed) rather than a fault of
 * the statement. The adapters turn such failures into `DatabaseUnavailableError`, which the API
 * answers with 503 and `Retry-After`; the next request simply tries again (the pool reconnects).
 */
export class DatabaseUnavailableError extends Error {
  constructor(override readonly cause: unknown) {
    super(`the database is unavailable: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'DatabaseUnavailableError';
  }
}

/** SQLSTATEs of a server that is going away or not accepting work (class 08, 57P01–57P03, 53300). */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);
/** Socket-level errors of node-postgres (Node's `code`). */
const UNAVAILABLE_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNABORTED']);
/** Messages node-postgres and pg-pool use for a lost or unobtainable connection. */
const UNAVAILABLE_MESSAGES = [
  /^Connection terminated/,
  /^Client has encountered a connection error and is not queryable/,
  /^timeout exceeded when trying to connect/,
  /^Cannot use a pool after calling end on the pool/,
  /^Client was closed and is not queryable/,
  /^PGlite is closed/,
];

/** True when `error` says the database cannot be reached now (see the module comment). */
export function isConnectionError(error: unknown): boolean {
  if (error instanceof DatabaseUnavailableError) return true;
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (UNAVAILABLE_SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code) || UNAVAILABLE_ERRNOS.has(code)) return true;
  }
  const message = (error as { message?: unknown }).message;
  return typeof message === 'string' && UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(message));
}

/** `error` as a `DatabaseUnavailableError` when it is a connection failure, else unchanged. */
export function asUnavailable(error: unknown): unknown {
  return isConnectionError(error) && !(error instanceof DatabaseUnavailableError) ? new DatabaseUnavailableError(error) : error;
}
