import type { Database } from '../../db/index.js';
import type { StatementGuard } from '../sql/statementGuard.js';
import type { EngineFacts } from './engineFacts.js';
import type { CachedOperation } from './planCache.js';
import type { PreparedRequest } from './prepareRequest.js';
import { runQuery } from './runQuery.js';

/**
 * Admission by cost (README "Operations"): asked before a query's statement runs, with its plan's
 * estimated cost (`plan/queryCost.ts`); gives the function that hands the reservation back when
 * the statement is done, or throws to refuse the request. Mutations and static answers are not asked.
 */
export type Admit = (cost: number) => (() => void) | Promise<() => void>;

/** What a caller may add to `respond`: facts to fill (metrics, the request log, traces) and admission by cost. */
export interface RespondOptions {
  readonly facts?: EngineFacts | undefined;
  readonly admit?: Admit | undefined;
}

/**
 * Runs a query once admitted (when `admit` is given and it has a statement), timing the wait
 * (`admission`) and the statement into `facts` when given. With neither, it is `runQuery` itself
 * (no async layer of its own: a promise and a microtask less a request).
 */
export function runAdmitted(
  admit: Admit | undefined,
  facts: EngineFacts | undefined,
  db: Database,
  prepared: Exclude<PreparedRequest, { kind: 'mutation' }>,
  operation: CachedOperation,
  guard: StatementGuard | undefined,
  write: (piece: string) => void,
): Promise<void> {
  if (!facts && !admit) return runQuery(db, prepared, operation, guard, write);
  return runAdmittedAndTimed(admit, facts, db, prepared, operation, guard, write);
}

async function runAdmittedAndTimed(
  admit: Admit | undefined,
  facts: EngineFacts | undefined,
  db: Database,
  prepared: Exclude<PreparedRequest, { kind: 'mutation' }>,
  operation: CachedOperation,
  guard: StatementGuard | undefined,
  write: (piece: string) => void,
): Promise<void> {
  let release: (() => void) | null = null;
  if (admit && prepared.kind === 'statement') {
    const waiting = facts ? performance.now() : 0;
    const admitted = admit(prepared.cost);
    release = typeof admitted === 'function' ? admitted : await admitted;
    if (facts) facts.phase?.('admission', waiting, performance.now());
  }
  const asking = facts ? performance.now() : 0;
  try {
    await runQuery(db, prepared, operation, guard, write);
  } finally {
    release?.();
    if (facts) {
      const answered = performance.now();
      facts.databaseMs += answered - asking;
      facts.phase?.('statement', asking, answered);
    }
  }
}

