import type { Database, Queryable } from './database.js';

/**
 * A `Database` view of an open transaction, so code written against `Database` (which opens its
 * own transactions) can run inside a caller's: every statement goes to `tx`, and `transaction`
 * runs its work in that same transaction (no savepoint: a failure undoes the caller's whole
 * transaction, which is what the callers want). Used to keep an idempotency key and the write it
 * guards in one transaction (`app/idempotency.ts`).
 */
export function databaseInTransaction(db: Database, tx: Queryable): Database {
  // The work of a nested `transaction` must not end the caller's: it gets `tx` without `queryAndCommit`.
  const nested: Queryable = {
    query: (text, values, options) => tx.query(text, values, options),
    script: (sql) => tx.script(sql),
    ...(tx.queryInOrder ? { queryInOrder: (statements) => tx.queryInOrder!(statements) } : {}),
  };
  return {
    kind: db.kind,
    ...nested,
    async each(text, values, onRow, options) {
      const { rows } = await tx.query<Parameters<typeof onRow>[0]>(text, values, options);
      for (const row of rows) onRow(row);
      return rows.length;
    },
    transaction: (work) => work(nested),
    observe: (observer) => db.observe(observer),
    listen: (channel, onNotice, onGap) => db.listen(channel, onNotice, onGap),
    close: () => Promise.reject(new Error('a transaction view is closed by its owner')),
  };
}
