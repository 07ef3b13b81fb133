import type { Database } from '../db/index.js';

/** The channel of the database's change notices (migration 0029). */
export const CHANGE_CHANNEL = 'loanql_changes';

/**
 * Listens for the database's change notices (migration 0029: `<table> <account id>` at the
 * commit of every write to an account's table) and hands each on as `(table, accountId)`.
 * When notices may have been lost (the listening connection dropped and came back), `onGap`:
 * whoever relies on them must look again at everything. Resolves with the function that stops.
 */
export function listenForChanges(db: Database, onChange: (table: string, accountId: string) => void, onGap: () => void): Promise<() => Promise<void>> {
  return db.listen(
    CHANGE_CHANNEL,
    (payload) => {
      const space = payload.indexOf(' ');
      if (space > 0) onChange(payload.slice(0, space), payload.slice(space + 1));
    },
    onGap,
  );
}
