import type { Database } from '../db/index.js';

/** The channel of the database's change notices (migration 0029). */
export const CHANGE_CHANNEL = 'loanql_changes';

/**
 * Listens for the database's change notices (migration 0029: `<table> <account id>` at the
 * commit of every write to an account's table; migration 0031: `<table> <account id> <loan
 * id>,…` when the rows written belong to few loans) and hands each on as `(table, accountId,
 * loans)`, `loans` null when the notice names none (any loan may have changed).
 * When notices may have been lost (the listening connection dropped and came back), `onGap`:
 * whoever relies on them must look again at everything. Resolves with the function that stops.
 */
export function listenForChanges(db: Database, onChange: (table: string, accountId: string, loans: readonly string[] | null) => void, onGap: () => void): Promise<() => Promise<void>> {
  return db.listen(
    CHANGE_CHANNEL,
    (payload) => {
      const [table, accountId, loans] = payload.split(' ');
      if (table && accountId) onChange(table, accountId, loans ? loans.split(',') : null);
    },
    onGap,
  );
}
