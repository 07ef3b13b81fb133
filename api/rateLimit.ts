import type { ServerResponse } from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { AuthenticatedKey } from '../app/apiKeys.js';
import type { EngineHolder } from '../app/engineHolder.js';
import type { RateLimit } from '../metadata/index.js';
import { rateLimitHeaders, rateLimitPolicy, type RateDecision, type RateLimiter } from '../app/operations/rateLimiter.js';
import { isDatabaseUnavailable, sendGraphUnavailable, sendRestUnavailable } from '../http/unavailable.js';
import { graphResponseType } from '../http/graphResponseType.js';

/**
 * Takes a token for a key's request (README "Operations", "Rate limits"): the key's role's
 * `rate_limit`, else the environment's default; a key with neither passes at no cost. Sets the
 * `RateLimit` and `RateLimit-Policy` headers on every limited answer; over the limit, answers 429
 * with `Retry-After` (GraphQL's `errors` shape on `/api/graph`, the REST routes' otherwise) and
 * resolves false. `tokens` (1 unless given) is how many the request takes: the rest of a batch's
 * (`routes/graph.ts`), all or none; `batchSize`, a batch's whole size: one larger than the key's
 * burst is refused at once, with no `Retry-After` (no wait would let it run). A 429 costs nothing:
 * a batch refused gives back the token its HTTP request took at the door (`batchSize - tokens`),
 * as a request the door refuses takes none. A database that cannot be reached is answered 503. A key with no limit passes
 * at once (`true`, not a promise: no microtask for the requests of a service without limits).
 */
export type RateLimitCheck = (key: AuthenticatedKey, res: ServerResponse, shape: 'graph' | 'rest', graphType?: string, tokens?: number, batchSize?: number) => true | Promise<boolean>;

export function rateLimitCheck(limiter: RateLimiter, engines: EngineHolder): RateLimitCheck {
  const limited = async (key: AuthenticatedKey, limit: RateLimit, res: ServerResponse, shape: 'graph' | 'rest', graphType: string, tokens: number, batchSize: number): Promise<boolean> => {
    // What this request's HTTP request took at the door (a batch's first token): given back on a refusal.
    const takenAtDoor = batchSize - tokens;
    // A database gone in between leaves it taken (the bucket refills it): the refusal is answered all the same.
    const giveBack = async (): Promise<void> => {
      if (takenAtDoor <= 0) return;
      try {
        const after = await limiter.giveBack(key, limit, takenAtDoor);
        res.setHeader('RateLimit', rateLimitHeaders({ granted: true, limit, retryAfterSeconds: 0, ...after }).RateLimit!);
      } catch (error) {
        if (!isDatabaseUnavailable(error)) throw error;
      }
    };
    if (batchSize > limit.burst) {
      // More at once than the bucket ever holds: no wait lets it run, so no `Retry-After` (it said
      // "retry in N s", and the batch was refused again after every wait), and nothing is taken.
      await giveBack();
      const message = `a batch of ${batchSize} requests is more than this API key's rate limit lets through at once (burst ${limit.burst}): it can never run; send at most ${limit.burst} requests a batch`;
      const body = shape === 'graph' ? JSON.stringify({ errors: [{ message, extensions: { code: 'rate-limited' } }] }) : JSON.stringify({ error: message, code: 'rate-limited' });
      res.writeHead(429, { 'Content-Type': shape === 'graph' ? graphType : 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body), 'RateLimit-Policy': rateLimitPolicy(limit) }).end(body);
      return false;
    }
    let decision;
    try {
      decision = await limiter.take(key, limit, tokens);
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      if (shape === 'graph') sendGraphUnavailable(res, graphType);
      else sendRestUnavailable(res);
      return false;
    }
    for (const [name, value] of Object.entries(rateLimitHeaders(decision))) res.setHeader(name, value);
    if (decision.granted) return true;
    await giveBack();
    const message = overRateLimit(decision);
    const body = shape === 'graph' ? JSON.stringify({ errors: [{ message, extensions: { code: 'rate-limited' } }] }) : JSON.stringify({ error: message, code: 'rate-limited' });
    res.writeHead(429, { 'Content-Type': shape === 'graph' ? graphType : 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) }).end(body);
    return false;
  };
  return (key, res, shape, graphType = 'application/json; charset=utf-8', tokens = 1, batchSize = 1) => {
    const limit = limiter.limitOf(engines.engine.metadata.roles.get(key.role)?.rateLimit);
    return limit ? limited(key, limit, res, shape, graphType, tokens, batchSize) : true;
  };
}

/** What a key over its limit is told (HTTP's 429 and the WebSocket API's `rate-limited` error alike). */
export const overRateLimit = ({ limit, retryAfterSeconds }: RateDecision): string =>
  `this API key is over its rate limit of ${limit.perSecond} requests a second (burst ${limit.burst}); retry in ${retryAfterSeconds} s`;

/** The check as Express middleware, after `requireApiKey` on `/api`. */
export function rateLimitMiddleware(check: RateLimitCheck): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const key = res.locals.auth as AuthenticatedKey | undefined;
    if (!key) return next();
    const shape = req.path === '/graph' || req.path.startsWith('/graph/') ? 'graph' : 'rest';
    // GraphQL's 429 in the type the request's Accept ranks first, as the fast path's.
    const passed = shape === 'graph' ? check(key, res, shape, graphResponseType(req.get('accept'))) : check(key, res, shape);
    if (passed === true) return next();
    passed.then((pass) => (pass ? next() : undefined), next);
  };
}
