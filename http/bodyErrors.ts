import type { Request } from 'express';

/**
 * What went wrong reading a request, when it is the client's doing. One place decides
 * this for every body parser of the service (`/api/loan`, `/api/graph`, `/api/graph/explain`,
 * the dashboard's forms); each caller only words the answer in its own shape.
 *
 * - `too-large`: over the body limit. body-parser counts the *decompressed* bytes, so a small
 *   compressed body that inflates past the limit (a decompression bomb) is stopped here too,
 *   once the limit is reached, without holding more than the limit. The message names the limit
 *   — a JSON body's is `BODY_LIMIT_BYTES`, as GraphQL's 413 says, a dashboard form's 16 kB — on
 *   every surface alike (before session 41 REST's and the dashboard's said only "too large").
 * - `not-readable`: the body is not what its headers say — not JSON / form syntax, an
 *   unsupported charset or Content-Encoding (each named in the message), a body that is not validly compressed as its
 *   `Content-Encoding: gzip|deflate|br` says, a body cut short or longer than Content-Length.
 */
export interface BodyProblem {
  readonly status: number;
  readonly kind: 'too-large' | 'not-readable';
  readonly message: string;
  /** `too-large`: the limit in bytes the body went over (body-parser's `limit`). */
  readonly limitBytes?: number;
}

const NOT_READABLE_TYPES = new Set(['entity.parse.failed', 'request.aborted', 'request.size.invalid']);

/** A header value quoted in an answer: at most 40 characters. */
const quoted = (value: string | undefined): string => (value ?? '').slice(0, 40);

/**
 * The client's problem behind `error` — a body that cannot be read, or another 4xx that Express
 * or body-parser raised for the request (a path parameter that is not valid percent-encoding) —
 * or null when the error is not the client's (then it is ours: logged and censored).
 */
export function bodyProblem(error: unknown, req: Request, what: 'JSON' | 'form'): BodyProblem | null {
  if (typeof error !== 'object' || error === null) return null;
  const { type, status, expose, errno, limit } = error as { type?: unknown; status?: unknown; expose?: unknown; errno?: unknown; limit?: unknown };
  if (type === 'entity.too.large') {
    // JSON bodies are read up to BODY_LIMIT_BYTES; the dashboard's forms up to their own 16 kB.
    const bytes = typeof limit === 'number' ? `${limit} bytes` : 'the limit';
    if (what === 'form') return { status: 413, kind: 'too-large', message: `the form is over ${bytes}, the most a dashboard form takes`, ...(typeof limit === 'number' ? { limitBytes: limit } : {}) };
    return { status: 413, kind: 'too-large', message: `request body is over ${bytes} (BODY_LIMIT_BYTES)`, ...(typeof limit === 'number' ? { limitBytes: limit } : {}) };
  }
  // A Content-Encoding or charset body-parser does not read: say which, not "not valid JSON" (the body may well be).
  if (type === 'encoding.unsupported') {
    return { status: 400, kind: 'not-readable', message: `request body's Content-Encoding (${quoted(req.get('content-encoding'))}) is not one the service reads: send the body uncompressed, or compressed as gzip, deflate or br` };
  }
  if (type === 'charset.unsupported') {
    const charset = (error as { charset?: unknown }).charset;
    return { status: 400, kind: 'not-readable', message: `request body's charset (${quoted(typeof charset === 'string' ? charset : undefined)}) is not one the service reads: send UTF-8` };
  }
  if (typeof type === 'string' && NOT_READABLE_TYPES.has(type)) {
    return { status: 400, kind: 'not-readable', message: what === 'JSON' ? 'request body is not valid JSON' : 'the form could not be read' };
  }
  // A body that is not validly compressed as `Content-Encoding: gzip|deflate|br` says: body-parser
  // hands on zlib's (or brotli's) error, which carries an `errno`, as a 400 without a `type`.
  const encoding = req.get('content-encoding');
  if (status === 400 && typeof errno === 'number' && encoding) {
    return { status: 400, kind: 'not-readable', message: `request body could not be decompressed as its Content-Encoding (${quoted(encoding)}) says` };
  }
  // Express's router could not percent-decode a path parameter (`/api/loan/%ZZ`): it marks the
  // URIError with status 400 but not `expose`.
  if (error instanceof URIError && status === 400) return { status: 400, kind: 'not-readable', message: 'request path is not valid percent-encoded UTF-8' };
  // Any other error marked as the client's (http-errors: a 4xx status, `expose`) says so itself.
  if (typeof status === 'number' && status >= 400 && status < 500 && expose === true) {
    return { status, kind: 'not-readable', message: `request could not be read: ${String((error as Error).message).slice(0, 200)}` };
  }
  return null;
}
