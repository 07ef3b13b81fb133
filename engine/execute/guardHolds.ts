import type { Queryable } from '../../db/index.js';
import { guardCheck, type StatementGuard } from '../sql/statementGuard.js';

/**
 * Asks the database whether a statement guard holds now, in a small statement of its own: for
 * an answer that runs no statement of the request (an error, an introspection-only response).
 */
export async function guardHolds(db: Queryable, guard: StatementGuard): Promise<boolean> {
  const check = guardCheck(guard);
  const { rows } = await db.query<{ holds: boolean | null }>(check.text, check.values);
  return rows[0]?.holds === true;
}
