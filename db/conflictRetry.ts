import { hasSqlState } from './statementTimeout.js';

/**
 * SQLSTATEs of a transaction PostgreSQL undid because it collided with a concurrent one:
 * `serialization_failure` (40001) and `deadlock_detected` (40P01). Nothing of it was committed,
 * and the same work run again usually succeeds: the other transaction has gone on meanwhile.
 */
const CONFLICT_STATES: ReadonlySet<string> = new Set(['40001', '40P01']);

/** How many times a transaction runs at most when each run is undone as a conflict. */
export const CONFLICT_ATTEMPTS = 5;

/**
 * Whether `error` is, or was caused by (its `cause`, as `StatementFailed` and the engine's
 * `RequestError` keep it), a deadlock or serialization failure.
 */
export function isWriteConflict(error: unknown): boolean {
  return hasSqlState(error, CONFLICT_STATES);
}

/**
 * Runs `work` — a whole transaction, or one statement in autocommit — and runs it again while
 * PostgreSQL undoes it as a deadlock or serialization failure, up to `CONFLICT_ATTEMPTS` runs in
 * all, after a pause (`conflictPauseMs`); the last run's error is thrown. Only for work that its caller owns from BEGIN to COMMIT: nothing of a
 * failed run remains, so `work` must do nothing outside the database that cannot be done twice.
 */
export async function retryWriteConflicts<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= CONFLICT_ATTEMPTS || !isWriteConflict(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, conflictPauseMs(attempt)));
    }
  }
}

/**
 * The pause before run `attempt + 1`: 50–100 ms, then twice as long each time. Long enough for the
 * transaction that won to finish: run again at once, a mutation paying loans in the order opposite
 * to the winner's takes the loans the winner has still to lock and deadlocks with it again (on
 * PostgreSQL 15, 5 ms–25 ms pauses deadlocked three runs in four); random, so two losers do not
 * meet again in step.
 */
function conflictPauseMs(attempt: number): number {
  return 50 * 2 ** (attempt - 1) * (1 + Math.random());
}
