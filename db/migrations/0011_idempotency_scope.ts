/**
 * Stored idempotent responses belong to the API key that made them (issue 26, finding 4): a
 * narrower role, or another key of the account, never replays another key's response (its
 * `returning` rows included), nor learns which idempotency keys it used. `scope` is the API
 * key's id (`dashboard` for the dashboard's console). Rows stored before this migration have
 * the empty scope, which no request has: they are never replayed and expire within 24 hours.
 */
export const name = '0011_idempotency_scope';

export const sql = /* sql */ `
ALTER TABLE idempotency_keys ADD COLUMN scope text NOT NULL DEFAULT '';
ALTER TABLE idempotency_keys ALTER COLUMN scope DROP DEFAULT;
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_account_id_key_key;
ALTER TABLE idempotency_keys ADD CONSTRAINT idempotency_keys_scope_key UNIQUE (account_id, scope, key);
`;
