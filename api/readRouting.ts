import type { ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { formatLsn, parseLsn, type Database, type Lsn, type ReadReplicas, type RoutedDatabase } from '../db/index.js';
import type { AuthenticatedKey } from '../app/apiKeys.js';
import { checkKeyForRead, recordKeyWrite } from '../app/keyWritePositions.js';

/** The key a request runs as: whose writes a read must see. */
export type KeyRef = Pick<AuthenticatedKey, 'accountId' | 'keyId'>;

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
 * Read-your-writes over read replicas (docs/scaling.md, "Read-your-writes: the guarantee"). After
 * a write by an API key, the primary's WAL position is recorded for the key in the primary
 * (`app/keyWritePositions.ts`) and sent back in `LoanQL-Consistency`. Before a read, one statement
 * on the primary checks the key and reads its last write position within `windowMs`; the read is
 * served by a replica only if it has replayed past the larger of that and the request's
 * `LoanQL-Consistency`, else by the primary. The position lives in the primary, not in a process,
 * so the read may come to any process of any host serving that primary.
 */
export class ReadRouting {
  constructor(
    readonly replicas: ReadReplicas,
    private readonly primary: Database,
    private readonly windowMs: number,
  ) {}

  /**
   * The key check before a read, and the database the read uses: a replica that has replayed
   * what the key last wrote (and what the header asks for), or the primary. Null when the key is
   * no longer active (the caller answers 403).
   */
  async forRead(key: KeyRef, requested: Lsn | null): Promise<RoutedDatabase | null> {
    const checked = await checkKeyForRead(this.primary, key, this.windowMs);
    if (!checked.active) return null;
    const own = checked.lastWrite;
    const atLeast = own === null ? requested : requested === null || own > requested ? own : requested;
    return this.replicas.forRequest(atLeast);
  }

  /**
   * After a write of `key` has committed: records the primary's position now (past that commit)
   * as the key's last write, and sets it as the `LoanQL-Consistency` header of `res` (not sent
   * yet). Rejects when the primary cannot record it; the caller then answers without the header.
   */
  async wrote(key: KeyRef, res: ServerResponse): Promise<void> {
    const lsn = await this.recordWrite(key);
    if (!res.headersSent) res.setHeader(CONSISTENCY_HEADER, formatLsn(lsn));
  }

  /** After a write of `key` has committed: records the primary's position now as the key's last write (a write over the WebSocket, which has no header to set). */
  recordWrite(key: KeyRef): Promise<Lsn> {
    return recordKeyWrite(this.primary, key);
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
