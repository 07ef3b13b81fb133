/**
 * Read-your-writes across processes and hosts (issue 33, docs/scaling.md): after a write by an
 * API key commits, the primary's WAL position is upserted here, and every read routed to a replica
 * reads the key's row in the same statement that checks the key is active — so whichever process
 * or host serves the read, it knows how far a replica must have replayed. UNLOGGED: the rows are
 * read only on the primary (a standby cannot read an unlogged table and has no use for them),
 * writing one makes no WAL, and what a crash of the primary empties is documented there. One row
 * per key that ever wrote (`id` is the key's), gone with the key's account.
 */
export const name = '0027_key_write_positions';

export const sql = /* sql */ `
CREATE UNLOGGED TABLE key_write_positions (
  account_id uuid NOT NULL,
  id uuid NOT NULL,
  lsn pg_lsn NOT NULL,
  at timestamptz NOT NULL,
  PRIMARY KEY (account_id, id),
  FOREIGN KEY (account_id, id) REFERENCES api_keys (account_id, id) ON DELETE CASCADE
);
`;
