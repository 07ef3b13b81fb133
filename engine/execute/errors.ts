import type { GraphQLError } from 'graphql';
import { isErrorCode, type ErrorCode } from '../errorCode.js';

/** The GraphQL error object of a response (GraphQL spec §7.1.2). */
export interface ResponseError {
  readonly message: string;
  readonly locations?: readonly { line: number; column: number }[];
  readonly path?: readonly (string | number)[];
  readonly extensions: { readonly code: ErrorCode; readonly [key: string]: unknown };
}

/** A request the engine refuses, with the errors to send and the HTTP status they call for. */
export class RequestError extends Error {
  constructor(
    readonly errors: readonly ResponseError[],
    /** 'request' problems (not a GraphQL request at all) get 400; the rest ride in a 200. */
    readonly stage: 'request' | 'document' | 'execution',
    /** The database's error a write's error was made from (a deadlock's, for `isWriteConflict`). */
    cause?: unknown,
  ) {
    super(errors.map((error) => error.message).join('; '), cause === undefined ? undefined : { cause });
    this.name = 'RequestError';
  }
}

/**
 * The caller's statement guard (its API key is still active) did not hold when the request ran:
 * the request is refused and nothing of it is written (a mutation's transaction is rolled back).
 * The HTTP layer answers it like any other refused key.
 */
export class GuardFailed extends Error {
  constructor() {
    super('the statement guard did not hold');
    this.name = 'GuardFailed';
  }
}

/**
 * A graphql-js error as a response error: its message, locations and path, and its own code when
 * it carries one of ours, else `code`. Other extensions are not sent.
 */
export function toResponseError(error: GraphQLError, code: ErrorCode): ResponseError {
  const extensionsCode = isErrorCode(error.extensions?.code) ? error.extensions.code : code;
  return {
    message: error.message,
    ...(error.locations ? { locations: error.locations.map(({ line, column }) => ({ line, column })) } : {}),
    ...(error.path ? { path: error.path } : {}),
    extensions: { code: extensionsCode },
  };
}

/**
 * PostgreSQL errors that client input can cause (SQLSTATE class 22 data exceptions, e.g. a
 * numeric overflow; 54 program limits) are the client's; a statement timeout is reported as
 * such. Anything else is internal and is censored by the caller.
 */
export function classifyDatabaseError(error: unknown): ResponseError | null {
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string') return null;
  const message = (error as Error).message;
  // 2201B: a pattern of _regex/_iregex/_nregex/_niregex/_similar/_nsimilar PostgreSQL cannot
  // compile (patterns are bound values, so only the database can judge them: its regular
  // expressions are not JavaScript's). The client's mistake, for this request only.
  if (code === '2201B') return { message: `${message} (in the pattern of a _regex, _iregex, _nregex, _niregex, _similar or _nsimilar)`, extensions: { code: 'data-exception' satisfies ErrorCode } };
  if (code.startsWith('22')) return { message, extensions: { code: 'data-exception' satisfies ErrorCode } };
  if (code === '57014') return { message: 'the query ran past the statement timeout (STATEMENT_TIMEOUT_MS)', extensions: { code: 'timeout' satisfies ErrorCode } };
  if (code === '54000' || code === '54001') return { message, extensions: { code: 'query-too-complex' satisfies ErrorCode } };
  return null;
}

/**
 * The database answered that a table, column or function the statement names does not exist
 * (SQLSTATE 42P01, 42703, 42883): it was changed under the metadata in service (a column
 * dropped). Not the client's mistake, and not a fault of the code either: the HTTP layer answers
 * 500 `metadata-mismatch` in words and has the metadata checked again, for `/readyz` to name.
 */
export class MetadataMismatch extends Error {
  constructor(readonly databaseMessage: string) {
    super("the database no longer has a table, column or function this service's metadata names; an admin must correct the metadata file or the database (GET /readyz names what is missing)");
    this.name = 'MetadataMismatch';
  }
}

const SCHEMA_CHANGED = new Set(['42P01', '42703', '42883']);

/** Whether a statement failed because the database changed under the metadata (`MetadataMismatch`, or its SQLSTATE as the database raised it). */
export function isMetadataMismatch(error: unknown): boolean {
  if (error instanceof MetadataMismatch) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && SCHEMA_CHANGED.has(code);
}

/** Rethrows a database error the client's input caused as a `RequestError`, a schema changed under the metadata as `MetadataMismatch`; anything else as it is. */
export function rethrowClientError(error: unknown): never {
  const clientError = classifyDatabaseError(error);
  if (clientError) throw new RequestError([clientError], 'execution', error);
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && SCHEMA_CHANGED.has(code)) throw new MetadataMismatch((error as Error).message);
  throw error;
}
