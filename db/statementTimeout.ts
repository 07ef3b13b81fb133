/**
 * Whether a database failure is PostgreSQL stopping a statement at `statement_timeout`
 * (SQLSTATE 57014, `query_canceled`; also a cancel request, which the service never sends
 * but an operator's `pg_cancel_backend` does): the request asked for more than the service
 * lets one statement take, not a fault of ours — the routes answer it as such (503 naming
 * `STATEMENT_TIMEOUT_MS`), where it used to be a 500 "internal error". The engine's GraphQL
 * answers it with the code `timeout` (`engine/execute/errors.ts`). A failure wrapped by
 * `StatementFailed` or by the engine's `RequestError` (a REST list or a dashboard page read through
 * the engine) is looked through: any `cause` chain.
 */
export function isStatementTimeout(error: unknown): boolean {
  return hasSqlState(error, TIMEOUT_STATES);
}

const TIMEOUT_STATES: ReadonlySet<string> = new Set(['57014']);

/** Whether `error`, or an error in its `cause` chain (a few levels), carries one of `states` as its SQLSTATE `code`. */
export function hasSqlState(error: unknown, states: ReadonlySet<string>): boolean {
  for (let at: unknown = error, depth = 0; typeof at === 'object' && at !== null && depth < 8; at = (at as { cause?: unknown }).cause, depth += 1) {
    const code = (at as { code?: unknown }).code;
    if (typeof code === 'string' && states.has(code)) return true;
  }
  return false;
}
