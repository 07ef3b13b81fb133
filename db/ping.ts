import type { Queryable } from './database.js';

/** Resolves once the database answers a trivial statement; rejects as the database does (readiness checks). */
export async function ping(db: Queryable): Promise<void> {
  await db.query('SELECT 1');
}
