import type { ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { LRUCache } from 'lru-cache';
import { formatLsn, parseLsn, type Database, type Lsn, type ReadReplicas, type RoutedDatabase } from '../db/index.js';

declare module 'express-serve-static-core' {
  interface Locals {
    /** The WAL position the request's `LoanQL-Consistency` header asks reads to see (with read replicas). */
    readAtLeast?: Lsn | null;
  }
}

/** The response header that carries the primary's WAL position after a write, and that a client sends back. */
export const CONSISTENCY_HEADER = 'LoanQL-Consistency';
/** Where a request's reads ran: `primary` or `replica-N` (informational). */
export const READ_FROM_HEADER = 'LoanQL-Read-From';

/** A `LoanQL-Consistency` header that is not a WAL position (`16/B374D848`): a client mistake. */
export class BadConsistencyHeader extends Error {
  constructor(readonly value: string) {
    super(`the ${CONSISTENCY_HEADER} header must be a WAL position such as 0/16B3748 (as a write's response gave it)`);
  }
}

/** The position a `LoanQL-Consistency` header asks for; null when absent; throws `BadConsistencyHeader` when malformed. */
export function requestedPosition(header: string | string[] | undefined): Lsn | null {
  if (header === undefined) return null;
  const text = Array.isArray(header) ? header.join(',') : header;
  if (text.trim() === '') return null;
  const lsn = text.length <= 17 ? parseLsn(text) : null;
  if (lsn === null) throw new BadConsistencyHeader(text);
  return lsn;
}

/**
 * Read-your-writes over read replicas (README "Scaling out"). After a write the primary's WAL
 * position is sent back in `LoanQL-Consistency` and kept for the API key for `windowMs`; a later
 * read by that key — or any read carrying the header — is served by a replica only if it has
 * replayed past the larger of the two, else by the primary. The window is per process: across
 * processes (WORKERS > 1, several hosts) a client carries the position itself by echoing the header.
 */
export class ReadRouting {
  /** The position each key last wrote at, for `windowMs`. */
  readonly #lastWrites: LRUCache<string, { lsn: Lsn }>;

  constructor(
    readonly replicas: ReadReplicas,
    windowMs: number,
  ) {
    this.#lastWrites = new LRUCache({ max: 100_000, ttl: Math.max(1, windowMs) });
  }

  /** The database a request's reads use: replicas that have replayed what the key (or the header) requires. */
  forRead(keyId: string | undefined, requested: Lsn | null): RoutedDatabase {
    const own = keyId === undefined ? undefined : this.#lastWrites.get(keyId)?.lsn;
    const atLeast = own === undefined ? requested : requested === null || own > requested ? own : requested;
    return this.replicas.forRequest(atLeast);
  }

  /**
   * After a write of `keyId` has committed: the primary's position now (past that commit) is
   * kept for the key and set as the `LoanQL-Consistency` header of `res` (not sent yet).
   */
  async wrote(keyId: string | undefined, res: ServerResponse): Promise<void> {
    const lsn = await this.replicas.primaryPosition();
    if (keyId !== undefined) {
      const previous = this.#lastWrites.get(keyId)?.lsn;
      if (previous === undefined || lsn > previous) this.#lastWrites.set(keyId, { lsn });
    }
    if (!res.headersSent) res.setHeader(CONSISTENCY_HEADER, formatLsn(lsn));
  }

  /** Says where a request's reads ran, when it read (`LoanQL-Read-From`). */
  static tell(res: ServerResponse, db: Database): void {
    const source = (db as Partial<RoutedDatabase>).source;
    if (source && !res.headersSent) res.setHeader(READ_FROM_HEADER, source);
  }
}

/**
 * Reads `LoanQL-Consistency` into `res.locals.readAtLeast`; a malformed one is a 400 naming the
 * header (GraphQL's `errors` shape on `/api/graph`, the REST shape elsewhere), nothing run.
 */
export function consistencyHeader() {
  return (req: Request, res: Response, next: NextFunction): void => {
    try {
      res.locals.readAtLeast = requestedPosition(req.headers['loanql-consistency']);
      next();
    } catch (error) {
      if (!(error instanceof BadConsistencyHeader)) throw error;
      if (/^\/graph(\/|$|\?)/.test(req.path)) {
        res.status(400).type('application/json').send(JSON.stringify({ errors: [{ message: error.message, extensions: { code: 'invalid-request', header: CONSISTENCY_HEADER } }] }));
      } else res.status(400).json({ error: error.message, fields: { [CONSISTENCY_HEADER]: 'expected a WAL position such as 0/16B3748' } });
    }
  };
}
