import type { Request } from 'express';

/**
 * What went wrong reading a request body, when it is the client's doing. One place decides
 * this for every body parser of the service (`/api/loan`, `/api/graph`, `/api/graph/explain`,
 * the dashboard's forms); each caller only words the answer in its own shape.
 *
 * - `too-large`: over the body limit. body-parser counts the *decompressed* bytes, so a small
 *   compressed body that inflates past the limit (a decompression bomb) is stopped here too,
 *   once the limit is reached, without holding more than the limit.
 * - `not-readable`: the body is not what its headers say — not JSON / form syntax, an
 *   unsupported charset or Content-Encoding, a body that is not validly compressed as its
 *   `Content-Encoding: gzip|deflate|br` says, a body cut short or longer than Content-Length.
 */
export interface BodyProblem {
  readonly status: 400 | 413;
  readonly kind: 'too-large' | 'not-readable';
  readonly message: string;
}

const NOT_READABLE_TYPES = new Set(['entity.parse.failed', 'encoding.unsupported', 'charset.unsupported', 'request.aborted', 'request.size.invalid']);

/** The client's body problem behind `error`, or null when the error is not one (then it is ours). */
export function bodyProblem(error: unknown, req: Request, what: 'JSON' | 'form'): BodyProblem | null {
  if (typeof error !== 'object' || error === null) return null;
  const { type, status, expose } = error as { type?: unknown; status?: unknown; expose?: unknown };
  if (type === 'entity.too.large') return { status: 413, kind: 'too-large', message: 'request body is too large' };
  const encoding = req.get('content-encoding');
  // body-parser hands on a decompression failure (zlib's Z_DATA_ERROR, brotli's errors) as a
  // 400 http-error without a `type`; anything else it marks as the client's (status 4xx and
  // `expose`) is unreadable input as well.
  const clientsFault = typeof type === 'string' ? NOT_READABLE_TYPES.has(type) : status === 400 && expose === true;
  if (!clientsFault) return null;
  if (encoding && !/^identity$/i.test(encoding.trim()) && type !== 'entity.parse.failed' && type !== 'charset.unsupported') {
    return { status: 400, kind: 'not-readable', message: `request body could not be decompressed as its Content-Encoding (${encoding.slice(0, 40)}) says` };
  }
  return { status: 400, kind: 'not-readable', message: what === 'JSON' ? 'request body is not valid JSON' : 'the form could not be read' };
}
