/**
 * Rate limits per API key (issue 35; README "Operations", "Rate limits"): one token bucket per
 * limited key, shared by every process of the service, taken from by one `INSERT … ON CONFLICT
 * DO UPDATE … RETURNING` per request (`app/operations/rateLimiter.ts`). UNLOGGED: a bucket is
 * worth nothing after a crash (it refills within seconds), so its writes skip the WAL; an
 * unlogged table is emptied by crash recovery and not copied to replicas, which never take from it.
 */
export const name = '0028_rate_limit_buckets';

export const sql = /* sql */ `
CREATE UNLOGGED TABLE rate_limit_buckets (
  account_id uuid NOT NULL,
  -- The API key's id: one bucket per key.
  id uuid NOT NULL,
  -- Tokens left after the last request, refilled from refilled_at at the key's rate when next asked.
  tokens double precision NOT NULL,
  refilled_at timestamptz NOT NULL,
  -- Whether the last request got a token (what RETURNING tells the service).
  granted boolean NOT NULL,
  PRIMARY KEY (account_id, id),
  FOREIGN KEY (account_id, id) REFERENCES api_keys (account_id, id) ON DELETE CASCADE
);
`;
