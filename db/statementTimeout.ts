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
  for (let at: unknown = error, depth = 0; typeof at === 'object' && at !== null && depth < 5; at = (at as { cause?: unknown }).cause, depth += 1) {
    if ((at as { code?: unknown }).code === '57014') return true;
  }
  return false;
}
