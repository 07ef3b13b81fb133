import type { Database } from '../../db/index.js';
import type { RateLimit } from '../../metadata/index.js';
import { wholeNumberSetting } from '../envSettings.js';

/**
 * Rate limits per API key (issue 35; README "Operations", "Rate limits"): a token bucket per key,
 * `perSecond` tokens a second up to `burst`, a request takes one (a batch of n GraphQL requests, n). The bucket lives in PostgreSQL
 * (`rate_limit_buckets`, migration 0028, unlogged) and is taken from by one statement per
 * request, so every process of `WORKERS=N` (and every replica of the service on one database)
 * shares it: N processes cannot multiply a key's limit. The database's clock refills it, so the
 * processes' clocks do not matter. A key with no limit (none for its role, none in the
 * environment) costs nothing: no statement, no headers.
 */

/** What one request got from its key's bucket. */
export interface RateDecision {
  readonly granted: boolean;
  readonly limit: RateLimit;
  /** Whole tokens left. */
  readonly remaining: number;
  /** Seconds until a refused request may succeed (at least 1); 0 when granted. */
  readonly retryAfterSeconds: number;
  /** Seconds until the bucket is full again (the draft's `t`). */
  readonly resetSeconds: number;
}

/**
 * The bucket's one statement: refill since the last request, take `$5` tokens (a request's one,
 * or the rest of a batch's) when there are that many whole ones; a new bucket starts full.
 */
const TAKE_TOKEN = /* sql */ `
INSERT INTO rate_limit_buckets AS b (account_id, id, tokens, refilled_at, granted)
VALUES ($1, $2, CASE WHEN $4::float8 >= $5::float8 THEN $4::float8 - $5::float8 ELSE $4::float8 END, statement_timestamp(), $4::float8 >= $5::float8)
ON CONFLICT (account_id, id) DO UPDATE SET
  tokens = CASE
    WHEN least($4::float8, b.tokens + greatest(0, extract(epoch FROM statement_timestamp() - b.refilled_at)::float8) * $3::float8) >= $5::float8
    THEN least($4::float8, b.tokens + greatest(0, extract(epoch FROM statement_timestamp() - b.refilled_at)::float8) * $3::float8) - $5::float8
    ELSE least($4::float8, b.tokens + greatest(0, extract(epoch FROM statement_timestamp() - b.refilled_at)::float8) * $3::float8)
  END,
  refilled_at = greatest(b.refilled_at, statement_timestamp()),
  granted = least($4::float8, b.tokens + greatest(0, extract(epoch FROM statement_timestamp() - b.refilled_at)::float8) * $3::float8) >= $5::float8
RETURNING granted, tokens`;

/** Puts `$4` tokens back into a bucket (never past its `$3` burst): a request refused after it took them. */
const GIVE_BACK = /* sql */ `
UPDATE rate_limit_buckets SET tokens = least($3::float8, tokens + $4::float8)
WHERE account_id = $1 AND id = $2
RETURNING tokens`;

export class RateLimiter {
  constructor(
    private readonly db: Database,
    /** `RATE_LIMIT_PER_SECOND` / `RATE_LIMIT_BURST`; null: keys without a role limit are not limited. */
    private readonly defaultLimit: RateLimit | null,
  ) {}

  /** The limit of a key of `roleLimit`'s role: the role's own, else the default; null: none. */
  limitOf(roleLimit: RateLimit | null | undefined): RateLimit | null {
    return roleLimit ?? this.defaultLimit;
  }

  /**
   * Takes `count` tokens from the key's bucket (one statement): all of them or, when fewer are
   * there, none. A request takes one; a batch of n GraphQL requests n in all.
   */
  async take(key: { readonly accountId: string; readonly keyId: string }, limit: RateLimit, count = 1): Promise<RateDecision> {
    const { rows } = await this.db.query<{ granted: boolean; tokens: number }>(TAKE_TOKEN, [key.accountId, key.keyId, limit.perSecond, limit.burst, count], { reusable: true });
    const { granted, tokens } = rows[0]!;
    const left = Number(tokens);
    return {
      granted,
      limit,
      remaining: Math.max(0, Math.floor(left)),
      retryAfterSeconds: granted ? 0 : Math.max(1, Math.ceil((Math.min(count, limit.burst) - left) / limit.perSecond)),
      resetSeconds: Math.max(0, Math.ceil((limit.burst - left) / limit.perSecond)),
    };
  }

  /**
   * Puts back `count` tokens a request took and did not use — the one a GraphQL batch's HTTP request
   * took at the door, when the batch is then refused (429): a refusal costs nothing (README
   * "Operations", "Rate limits"). Returns what the bucket holds after.
   */
  async giveBack(key: { readonly accountId: string; readonly keyId: string }, limit: RateLimit, count: number): Promise<Pick<RateDecision, 'remaining' | 'resetSeconds'>> {
    const { rows } = await this.db.query<{ tokens: number }>(GIVE_BACK, [key.accountId, key.keyId, limit.burst, count]);
    const left = rows.length ? Number(rows[0]!.tokens) : limit.burst;
    return { remaining: Math.max(0, Math.floor(left)), resetSeconds: Math.max(0, Math.ceil((limit.burst - left) / limit.perSecond)) };
  }
}

/**
 * The headers of draft-ietf-httpapi-ratelimit-headers-08 (October 2024) for a decision: the
 * policy as a quota of `burst` requests in the seconds an empty bucket takes to fill
 * (`RateLimit-Policy: "default";q=20;w=2`), and what is left now with the seconds until the
 * bucket is full again (`RateLimit: "default";r=7;t=1`); a refusal adds `Retry-After`.
 */
export function rateLimitHeaders(decision: RateDecision): Record<string, string> {
  const { limit } = decision;
  const headers: Record<string, string> = {
    'RateLimit-Policy': rateLimitPolicy(limit),
    RateLimit: `"default";r=${decision.remaining};t=${decision.resetSeconds}`,
  };
  if (!decision.granted) headers['Retry-After'] = String(decision.retryAfterSeconds);
  return headers;
}

/** The draft's `RateLimit-Policy` of a limit: `burst` requests in the seconds an empty bucket takes to fill. */
export function rateLimitPolicy(limit: RateLimit): string {
  return `"default";q=${limit.burst};w=${Math.max(1, Math.ceil(limit.burst / limit.perSecond))}`;
}

/**
 * The slowest rate a bucket may refill at (about one request a day), and the fastest; the metadata's
 * `rate_limit.per_second` has the same range (metadata.schema.json). A slower one made `Retry-After`
 * and the draft's `w`/`t` absurd (a rate of 1e-300 a second: `Retry-After: 1e+300`, which is no
 * HTTP delay-seconds); from this one, a refusal asks for at most 100,000 seconds.
 */
export const MIN_RATE_PER_SECOND = 0.00001;
export const MAX_RATE_PER_SECOND = 1_000_000;

/** `RATE_LIMIT_PER_SECOND` (unset: no default limit) and `RATE_LIMIT_BURST` (default: the rate rounded up). */
export function defaultRateLimitFromEnv(env: NodeJS.ProcessEnv): RateLimit | null {
  const rawRate = (env.RATE_LIMIT_PER_SECOND ?? '').trim();
  const rawBurst = (env.RATE_LIMIT_BURST ?? '').trim();
  if (rawRate === '') {
    if (rawBurst !== '') throw new Error('RATE_LIMIT_BURST needs RATE_LIMIT_PER_SECOND');
    return null;
  }
  const perSecond = Number(rawRate);
  if (!/^\d*\.?\d+$/.test(rawRate) || !(perSecond >= MIN_RATE_PER_SECOND && perSecond <= MAX_RATE_PER_SECOND)) {
    throw new Error(`RATE_LIMIT_PER_SECOND must be a number from ${MIN_RATE_PER_SECOND} (about one request a day) to ${MAX_RATE_PER_SECOND}, not "${rawRate}"`);
  }
  // Digits only, as every count (README "Configuration"): `Number` read `1e3`, `0x10`, `0b11` and `1.0` as whole numbers.
  const burst = wholeNumberSetting(env, 'RATE_LIMIT_BURST', Math.max(1, Math.ceil(perSecond)), { min: 1, max: 1_000_000 });
  return { perSecond, burst };
}
