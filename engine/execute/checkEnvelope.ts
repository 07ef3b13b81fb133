import { RequestError } from './errors.js';
import type { ErrorCode } from '../errorCode.js';

/** A GraphQL-over-HTTP request body, not yet checked. */
export interface GraphRequest {
  readonly query?: unknown;
  readonly variables?: unknown;
  readonly operationName?: unknown;
  /** GraphQL over HTTP's `extensions`: a map when given; nothing in it is used. */
  readonly extensions?: unknown;
}

/** A request body that is a GraphQL request: a document, and maybe an operation name and variables. */
export interface CheckedEnvelope {
  readonly query: string;
  readonly operationName: string | undefined;
  readonly variables: Readonly<Record<string, unknown>> | undefined;
}

/**
 * Checks the shape of a request body (GraphQL over HTTP): `query` a non-empty string,
 * `operationName` a string, `variables` and `extensions` objects (null counts as absent).
 * Anything else is `invalid-request`, answered 400: not a GraphQL request at all.
 */
export function checkEnvelope(request: GraphRequest): CheckedEnvelope {
  const problem = (message: string) => new RequestError([{ message, extensions: { code: 'invalid-request' satisfies ErrorCode } }], 'request');
  if (typeof request !== 'object' || request === null || Array.isArray(request)) throw problem('the request body must be a JSON object');
  const { query, operationName, variables, extensions } = request;
  // Apollo's persisted-query link sends only a hash first; a 400 makes it send the document.
  if (query === undefined && isPersistedQuery(extensions)) throw problem('persisted queries (extensions.persistedQuery) are not supported: send the document in "query"');
  if (typeof query !== 'string' || query.trim() === '') throw problem('"query" must be a non-empty string');
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') throw problem('"operationName" must be a string');
  if (variables !== undefined && variables !== null && (typeof variables !== 'object' || Array.isArray(variables))) throw problem('"variables" must be an object');
  if (extensions !== undefined && extensions !== null && (typeof extensions !== 'object' || Array.isArray(extensions))) throw problem('"extensions" must be an object');
  return { query, operationName: (operationName as string | null) ?? undefined, variables: (variables as Record<string, unknown> | null) ?? undefined };
}

const isPersistedQuery = (extensions: unknown): boolean => typeof extensions === 'object' && extensions !== null && Object.hasOwn(extensions, 'persistedQuery');
