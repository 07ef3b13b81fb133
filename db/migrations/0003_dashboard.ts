/**
 * Dashboard sessions (SPEC §4). A session belongs to one admin of one account, so like every
 * tenant table its primary key is `(account_id, id)` and its foreign key includes `account_id`.
 * Only the SHA-256 of the session token (the cookie's value) is stored: a copy of the table
 * cannot be used to log in. Login attempts are throttled in memory (see app/loginThrottle.ts).
 */
export const name = '0003_dashboard';

export const sql = /* sql */ `
CREATE TABLE admin_sessions (
  account_id uuid NOT NULL,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  admin_id uuid NOT NULL,
  token_hash bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (account_id, id),
  FOREIGN KEY (account_id, admin_id) REFERENCES admins (account_id, id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX admin_sessions_token_hash_key ON admin_sessions (token_hash);
CREATE INDEX admin_sessions_expires_at_idx ON admin_sessions (expires_at);
`;
