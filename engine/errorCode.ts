/**
 * Every `extensions.code` a GraphQL error of loanql can carry, with what it means: one closed
 * list, the type and the runtime check made from it, so a client (and the README's table of codes)
 * can rely on nothing else appearing. The engine makes the first group; the HTTP layers (`api/`,
 * `dashboard/`) the rest, in the same `errors` shape.
 */
const MEANINGS = {
  'invalid-request': 'not a GraphQL request (no query, variables not an object, …)',
  'parse-failed': 'the document is not GraphQL',
  'validation-failed': 'the document or a variable does not fit the schema, a limit, a value rule',
  'query-too-expensive': 'over MAX_QUERY_COST, MAX_ROOT_FIELDS or MAX_QUERY_FIELDS, before any statement',
  'query-too-complex': 'PostgreSQL refused the statement as over its program limits (SQLSTATE 54000, 54001)',
  'data-exception': 'PostgreSQL refused a value (SQLSTATE class 22, an invalid pattern included)',
  'timeout': 'past STATEMENT_TIMEOUT_MS',
  'permission-error': "a written row falls outside the role's check: nothing written",
  'constraint-violation': 'a write breaks a unique or exclusion constraint',
  'check-violation': 'a write breaks a CHECK constraint (the payment rules included)',
  'not-found': "a write refers to a record that is not there (or is another account's)",
  'foreign-key-violation': 'a delete of a record others still refer to',
  'conflict': 'a write collided with a concurrent one (deadlock, serialization) and was undone',
  'execution-error': "a fixed view's query answered errors (dashboard/servicingData.ts)",
  'metadata-mismatch': 'the database no longer has a table, column or function the metadata in service names: 500 until an admin corrects one or the other (GET /readyz names it)',
  // The HTTP layers.
  'permission-denied': "the key's role may not use this route (explain is for admin keys)",
  'method-not-allowed': 'GET /api/graph with a mutation or subscription, or a method a GraphQL path does not take (405 with Allow)',
  'idempotency-key-reused': 'an Idempotency-Key sent again with another body',
  'request-too-large': 'over BODY_LIMIT_BYTES',
  'database-unavailable': 'the database cannot be reached: 503',
  'overloaded': 'admission by cost turned a costly query or subscription run away (its queue full, or waited too long): 503 with Retry-After; over WebSocket an error with retryAfterSeconds',
  'rate-limited': "over the API key's rate limit: 429 with Retry-After",
  'subscription-limit': "over SUBSCRIPTIONS_PER_KEY or SUBSCRIPTIONS_PER_PROCESS open subscriptions",
  'csrf-token-missing': 'a dashboard form without its token',
  'session-ended': 'a dashboard session that is over',
  'internal': 'anything else: logged with an id, censored on the wire',
} as const;

export type ErrorCode = keyof typeof MEANINGS;

/** Whether a code found on an error (a GraphQLError's `extensions.code`) is one of ours. */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(MEANINGS, code);
}
