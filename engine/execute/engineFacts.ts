import { hash } from 'node:crypto';

/**
 * What the engine tells its caller about one request, when asked (`GraphEngine.respond`'s
 * `facts`): for metrics, the request log and traces. Nothing here is a value of the request:
 * the operation's type and name (a GraphQL Name from the document), a hash of the document and
 * of the statement, whether the plan cache had the operation, its estimated cost, and the time
 * spent waiting on the database.
 */
export interface EngineFacts {
  operationType: 'query' | 'mutation' | 'subscription' | null;
  operationName: string | null;
  /** The first 16 hex digits of the SHA-256 of the document's text. */
  documentHash: string | null;
  /** The first 16 hex digits of the SHA-256 of the statement's text (a query's; null for a mutation or a static answer); worked out only when traced (`phase`). */
  statementHash: string | null;
  /** The operation (parsed, validated, and planned when its plan does not depend on variables) was in the plan cache. */
  planCacheHit: boolean | null;
  /** The estimated cost (`plan/queryCost.ts`) of a query's plan. */
  cost: number | null;
  /** Milliseconds from handing the request to the database to its answer (a mutation: its whole transaction). */
  databaseMs: number;
  /**
   * Called with each phase's start and end (`performance.now()`), for traces; absent when nobody
   * traces. `parse`: the operation parsed and validated, or found in the plan cache; `prepare`:
   * the whole preparation (`parse` included, then variables, plan, compile, bind); `admission`:
   * the wait for admission by cost; `statement`: the database's answer.
   */
  phase?: (name: 'parse' | 'prepare' | 'admission' | 'statement', startedAt: number, endedAt: number) => void;
}

export function newEngineFacts(): EngineFacts {
  return { operationType: null, operationName: null, documentHash: null, statementHash: null, planCacheHit: null, cost: null, databaseMs: 0 };
}

/** 16 hex digits of a text's SHA-256: names a document or a statement without showing it. */
export function shortHash(text: string): string {
  return hash('sha256', text, 'hex').slice(0, 16);
}
