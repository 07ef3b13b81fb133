import express, { Router, type Request, type Response } from 'express';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { bodyProblem } from '../../http/bodyErrors.js';
import { exactJsonBody, parseJsonExact } from '../../http/exactJson.js';
import type { Logger } from '../../app/logger.js';
import { isWriteConflict, type Database, type Lsn, type Queryable } from '../../db/index.js';
import { DEFAULT_MAX_BATCH_SIZE, GuardFailed, guardHolds, MetadataMismatch, RequestError, type ErrorCode, type RespondOptions, type GraphEngine, type GraphRequest, type Principal, type StatementGuard } from '../../engine/index.js';
import type { EngineHolder } from '../../app/engineHolder.js';
import { ADMIN_ROLE } from '../../metadata/index.js';
import type { AuthenticatedKey, VerifiedKeyCache } from '../../app/apiKeys.js';
import { activeKeyGuard } from '../../app/keyGuards.js';
import { notAuthorized, refusedAsInactive } from '../authenticate.js';
import { idempotencyKeyOf, requestHash, runIdempotently } from '../../app/idempotency.js';
import { UserInputError } from '../../app/errors.js';
import { isDatabaseUnavailable, sendGraphUnavailable } from '../../http/unavailable.js';
import { ReadRouting, requestedPosition, type KeyRef } from '../readRouting.js';
import { factsOf, noteCaller } from '../../http/requestFacts.js';
import { GRAPHQL_RESPONSE_TYPE, graphResponseType, JSON_TYPE } from '../../http/graphResponseType.js';
import { AdmissionRefused, type CostAdmission } from '../../app/operations/costAdmission.js';
import type { RateLimitCheck } from '../rateLimit.js';

/** The answer to a body of another Content-Type (`application/graphql`, a form, text). */
const SEND_JSON = 'send the request as application/json (Content-Type: application/json)';

/**
 * Who a request runs as: by default the API key's account, role and variables (`requireApiKey`);
 * the dashboard's console passes its session's account (the admin role).
 */
export type AccountOfRequest = (res: Response) => string | AuthenticatedKey;
const accountOfApiKey: AccountOfRequest = (res) => res.locals.auth;

/**
 * The engine of the caller's role and what it binds (account, key variables); null when the
 * key's role is no longer in the metadata (the key is then refused like an inactive one).
 */
export function engineForCaller(engine: GraphEngine, caller: string | AuthenticatedKey): { engine: GraphEngine; principal: Principal } | null {
  if (typeof caller === 'string') return { engine, principal: caller };
  const roleEngine = engine.forRole(caller.role);
  return roleEngine ? { engine: roleEngine, principal: { accountId: caller.accountId, keyVariables: caller.variables } } : null;
}

/**
 * `POST /api/graph` (GraphQL over HTTP) and `POST /api/graph/explain`. The response body is
 * the JSON text PostgreSQL built, forwarded without parsing. The dashboard's query console
 * mounts the same routes with its session's account as `accountOf`.
 */
export function graphRoutes(services: GraphServices, bodyLimitBytes: number, accountOf: AccountOfRequest = accountOfApiKey): Router {
  const { db, engines, logger, routing } = services;
  const router = Router();
  const parseJson = exactJsonBody(bodyLimitBytes, 'as-lossless');

  /** The one handler, as Express answers (`res`'s own headers, ETag included). */
  const answer = (res: Response, call: GraphCall): Promise<void> => answerGraphRequest(services, call, res, expressReplies(res));

  router.post('/', parseJson, async (req, res) => {
    const responseType = graphResponseType(req.get('accept'));
    if (!isJsonRequest(req)) {
      if (await refusedAsInactive(db, res)) return;
      return sendErrors(res, 400, responseType, 'invalid-request', SEND_JSON);
    }
    try {
      if (req.get('idempotency-key') !== undefined && (await answeredIdempotently(req, res, responseType))) return;
    } catch (error) {
      return replyWithError(expressReplies(res), error, responseType, { logger, engines });
    }
    // The key's state, when not read yet, is checked inside the request's statement.
    // (graphFastPath below answers most of these requests before Express with the same handler.)
    await answer(res, { who: accountOf(res), request: req.body as GraphRequest, readsAs: routing ? res.locals.auth : undefined, guard: res.locals.keyStillActive, readAtLeast: res.locals.readAtLeast ?? null, responseType });
  });

  /**
   * A mutation sent with an `Idempotency-Key` runs at most once (`app/idempotency.ts`); the key's
   * state is checked in the same transaction. Returns false for a request that is not a
   * mutation: the key means nothing to a read, which then runs as usual.
   */
  async function answeredIdempotently(req: Request, res: Response, responseType: string): Promise<boolean> {
    let key: string | null;
    try {
      key = idempotencyKeyOf(req.get('idempotency-key'));
    } catch (error) {
      if (!(error instanceof UserInputError)) throw error;
      if (await refusedAsInactive(db, res)) return true;
      sendErrors(res, 400, responseType, 'invalid-request', error.message);
      return true;
    }
    const caller = engineForCaller(engines.engine, accountOf(res));
    if (!caller) {
      notAuthorized(res);
      return true;
    }
    const { engine, principal } = caller;
    const accountId = typeof principal === 'string' ? principal : principal.accountId;
    // Noted as any mutation is (metrics, the request log, the dashboard's operations page): before
    // 2026-11-29 one sent with an Idempotency-Key was `none`, without its type, name, hash or time.
    const facts = factsOf(res)?.engine;
    // Traced, its parse and plan phases are held until it is known to be a mutation: anything
    // else is prepared again on the usual path, which traces it (each phase once).
    const traced = facts?.phase;
    const phases: Parameters<NonNullable<typeof traced>>[] = [];
    if (facts && traced) facts.phase = (...phase) => void phases.push(phase);
    let prepared;
    try {
      prepared = engine.prepare(req.body as GraphRequest, principal, facts);
    } catch (error) {
      if (facts && traced) for (const phase of phases) traced(...phase);
      // A deactivated key gets 403 here too, before any word about its request.
      if (error instanceof RequestError && (await refusedAsInactive(db, res))) return true;
      throw error;
    } finally {
      if (facts && traced) facts.phase = traced;
    }
    if (!key || prepared.kind !== 'mutation') return false;
    if (traced) for (const phase of phases) traced(...phase);
    // Scoped to the API key, and answered only while the key is active (README "Security").
    const who = accountOf(res);
    const owner =
      typeof who === 'string'
        ? { accountId, scope: 'dashboard' }
        : { accountId, scope: who.keyId, stillAuthorized: (tx: Queryable) => guardHolds(tx, activeKeyGuard(who)) };
    const asking = facts ? performance.now() : 0;
    const outcome = await runIdempotently(db, owner, key, requestHash('POST /api/graph', req.body), async (tx) => ({
      status: 200,
      body: await engine.runMutation(tx, prepared),
    }));
    if (facts) {
      // Its transaction (the key's row and the mutation's statements) is the statement phase.
      const answered = performance.now();
      facts.databaseMs += answered - asking;
      facts.phase?.('statement', asking, answered);
    }
    if (outcome.kind === 'declined') notAuthorized(res);
    else if (outcome.kind === 'mismatch') sendErrors(res, 409, responseType, 'idempotency-key-reused', 'this Idempotency-Key was used for another request body in the last 24 hours');
    else {
      if (outcome.replayed) res.set('Idempotent-Replayed', 'true');
      if (routing) await routing.wrote(res.locals.auth, res).catch(() => undefined);
      res.status(outcome.status).type(responseType).send(outcome.body);
    }
    return true;
  }

  /**
   * `GET /api/graph?query=…&variables=…&operationName=…` (GraphQL over HTTP): query operations
   * only — a mutation is answered 405 with `Allow: POST` and not run. Responses carry
   * `Cache-Control: private, no-store`: they belong to one key's account and change with every
   * write, and an ETag would save no work (the statement runs to compute it) — see README.md.
   */
  router.get('/', async (req, res) => {
    res.set('Cache-Control', 'private, no-store');
    const responseType = graphResponseType(req.get('accept'));
    const request = getRequestOf(req.originalUrl);
    const who = accountOf(res);
    try {
      if (typeof request === 'string') {
        if (await refusedAsInactive(db, res)) return;
        return sendErrors(res, 400, responseType, 'invalid-request', request);
      }
      const caller = engineForCaller(engines.engine, who);
      if (!caller) return notAuthorized(res);
      let type;
      try {
        type = caller.engine.operationType(request);
      } catch (error) {
        // Refused before any statement ran: the key's state is read first (as respond does).
        if (error instanceof RequestError && (await refusedAsInactive(db, res))) return;
        throw error;
      }
      if (type !== 'query') {
        if (await refusedAsInactive(db, res)) return;
        res.set('Allow', 'POST');
        const instead = type === 'subscription' ? 'a subscription goes over WebSocket (graphql-transport-ws) on this path' : 'send a mutation with POST';
        return sendErrors(res, 405, responseType, 'method-not-allowed', `GET runs queries only: ${instead}`);
      }
    } catch (error) {
      return replyWithError(expressReplies(res), error, responseType, { logger, engines });
    }
    // respond checks the key's state in the statement, or on a refusal before answering it.
    await answer(res, { who, request, readsAs: routing ? res.locals.auth : undefined, guard: res.locals.keyStillActive, readAtLeast: res.locals.readAtLeast ?? null, responseType });
  });

  router.post('/explain', parseJson, async (req, res) => {
    if (!isJsonRequest(req)) return sendErrors(res, 400, JSON_TYPE, 'invalid-request', SEND_JSON);
    try {
      const account = accountOf(res);
      const caller = engineForCaller(engines.engine, account);
      if (!caller) return notAuthorized(res);
      // Only the account's admins see statements, and no one sees estimates drawn from every
      // account's statistics (issue 26, finding 2; README "Security").
      if (typeof account !== 'string' && account.role !== ADMIN_ROLE) {
        return sendErrors(res, 403, JSON_TYPE, 'permission-denied', `explain is for the account's admin keys; this key's role is ${account.role}`);
      }
      res.json(await caller.engine.explain(db, req.body as GraphRequest, caller.principal, { estimates: false }));
    } catch (error) {
      if (isDatabaseUnavailable(error)) return sendGraphUnavailable(res);
      if (!(error instanceof RequestError)) throw error;
      res.status(400).json({ errors: error.errors });
    }
  });
  // Any other method (OPTIONS included: no CORS preflight) is 405 with `Allow`, as on every path
  // (README "REST loan interface"), in GraphQL's shape; it was Express's 404 `not found`, and for
  // OPTIONS a 200 as if a preflight were answered.
  router.all('/', graphMethodNotAllowed('GET, HEAD, POST'));
  router.all('/explain', graphMethodNotAllowed('POST'));
  // Body problems on these routes are answered in GraphQL's shape: an `errors` array.
  router.use(async (error: unknown, req: Request, res: Response, _next: (error?: unknown) => void) => {
    // A body problem first: one the client stopped sending is body-parser's "request aborted",
    // code ECONNABORTED, which also names a lost database connection (it was a 503 `database-unavailable`).
    const problem = bodyProblem(error, req, 'JSON');
    // In the type the client asked for, as every other answer of these routes (the 503s and 500 too).
    const responseType = graphResponseType(req.get('accept'));
    if (!problem && isDatabaseUnavailable(error)) return sendGraphUnavailable(res, responseType);
    try {
      if (await refusedAsInactive(db, res)) return;
    } catch (guardError) {
      if (isDatabaseUnavailable(guardError)) return sendGraphUnavailable(res, responseType);
      throw guardError;
    }
    if (problem?.kind === 'too-large') return sendErrors(res, 413, responseType, 'request-too-large', `the request body is over ${bodyLimitBytes} bytes (BODY_LIMIT_BYTES)`);
    // A body that is not JSON because it was never meant to be (`application/graphql`, a form): say what to send.
    if (problem && !isJsonRequest(req)) return sendErrors(res, problem.status, responseType, 'invalid-request', SEND_JSON);
    if (problem) return sendErrors(res, problem.status, responseType, 'invalid-request', `the ${problem.message}`);
    // Anything else is ours: logged with an id, censored on the wire.
    const id = randomUUID();
    logger.error({ errorId: id, path: req.path, err: error }, 'internal error');
    res.status(500).type(responseType).send(JSON.stringify({ errors: [{ message: 'internal error', extensions: { code: 'internal', id } }] }));
  });
  return router;
}

/** GET's parameters that may each be given once. */
const GET_PARAMETERS = ['query', 'variables', 'operationName', 'extensions'] as const;

/**
 * The GraphQL request of a GET's query string (read through a Map of its parameters):
 * `variables` and `extensions` are JSON text. A string is the problem, naming the parameter.
 */
function getRequestOf(originalUrl: string): GraphRequest | string {
  let search: URLSearchParams;
  try {
    search = new URL(originalUrl, 'http://localhost').searchParams;
  } catch {
    return 'the query string is not valid';
  }
  const values = new Map<string, string[]>();
  for (const [name, value] of search) values.set(name, [...(values.get(name) ?? []), value]);
  for (const name of GET_PARAMETERS) if ((values.get(name)?.length ?? 0) > 1) return `give the "${name}" parameter once`;
  const json = (name: 'variables' | 'extensions'): unknown => {
    const text = values.get(name)?.[0];
    if (text === undefined || text === '') return undefined;
    return parseJsonExact(text, 'as-lossless');
  };
  let variables: unknown;
  try {
    variables = json('variables');
  } catch {
    return 'the "variables" parameter is not valid JSON';
  }
  let extensions: unknown;
  try {
    extensions = json('extensions');
  } catch {
    return 'the "extensions" parameter is not valid JSON';
  }
  const operationName = values.get('operationName')?.[0];
  return { query: values.get('query')?.[0], ...(variables !== undefined ? { variables } : {}), ...(operationName ? { operationName } : {}), ...(extensions !== undefined ? { extensions } : {}) };
}

function isJsonRequest(req: Request): boolean {
  const type = req.get('content-type');
  return !type || /^application\/(json|graphql-response\+json)\b/i.test(type) || /\+json\b/i.test(type);
}

/**
 * application/json answers every GraphQL-level error with 200 (GraphQL over HTTP §legacy); the
 * graphql-response+json type uses 400 for a request that could not be executed.
 */
function errorStatus(error: RequestError, responseType: string): number {
  return error.stage === 'request' || (responseType === GRAPHQL_RESPONSE_TYPE && error.stage === 'document') ? 400 : 200;
}

/** The JSON bodies `POST /api/graph` accepts on the fast path: exactly these Content-Types. */
const FAST_PATH_TYPES = new Set(['application/json', 'application/json; charset=utf-8', 'application/json;charset=utf-8']);

/**
 * The hot path of `POST /api/graph`, run before Express: Express's per-request set-up, router
 * and body parser cost more CPU than the whole engine on a plan-cache hit (bench/README.md). It
 * takes only the requests it can answer exactly like the route above, decided from the headers
 * alone — `POST /api/graph` with a JSON Content-Type, a Content-Length within the body limit, no
 * Content-Encoding, and an API key verified before (its state is checked in the statement) —
 * and returns false for everything else, which Express then handles as usual.
 */
export function graphFastPath(services: GraphServices, bodyLimitBytes: number, verifiedKeys: VerifiedKeyCache, rateLimit?: RateLimitCheck) {
  const { db, routing } = services;
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    if (req.method !== 'POST' || req.url !== '/api/graph') return false;
    const { headers } = req;
    if (!FAST_PATH_TYPES.has(headers['content-type']?.toLowerCase() ?? '')) return false;
    if (headers['content-encoding'] !== undefined || headers['transfer-encoding'] !== undefined) return false;
    if (headers['idempotency-key'] !== undefined) return false;
    const length = Number(headers['content-length']);
    if (!(length > 0 && length <= bodyLimitBytes)) return false;
    let readAtLeast = null;
    try {
      readAtLeast = routing ? requestedPosition(headers['loanql-consistency']) : null;
    } catch {
      return false; // Express's path answers the malformed header (api/createApp.ts).
    }
    const key = verifiedKeys.identify(db, headers.authorization);
    if (!key) return false;
    // Known before the rate limit and the body's parse: a 429 or a 400 is logged with its key's prefix.
    noteCaller(res, key);

    const guard = activeKeyGuard(key);
    const responseType = graphResponseType(headers.accept);
    const replies = bareReplies(res);
    // Not async functions: a request with no rate limit pays no promise of its own before the engine's.
    const answerText = (text: string): Promise<void> => {
      let request: GraphRequest;
      try {
        request = parseJsonExact(text, 'as-lossless') as GraphRequest;
      } catch {
        return answerUnparsable(db, guard, replies, responseType);
      }
      return answerGraphRequest(services, { who: key, request, readsAs: key, guard, readAtLeast, responseType }, res, replies);
    };
    const answer = (text: string): Promise<void> => {
      const passed = rateLimit ? rateLimit(key, res, 'graph', responseType) : true;
      return passed === true ? answerText(text) : passed.then((pass) => (pass ? answerText(text) : undefined));
    };
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      let answered: Promise<void>;
      try {
        answered = answer((chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString('utf8'));
      } catch (error) {
        answered = Promise.reject(error);
      }
      answered.catch((error: unknown) => {
        if (!res.headersSent && isDatabaseUnavailable(error)) sendGraphUnavailable(res, responseType);
        else res.destroy();
      });
    });
    req.on('error', () => res.destroy());
    return true;
  };
}

/** A body that is not JSON: 400, once the key is known to be still active (403 if not). */
async function answerUnparsable(db: Database, guard: StatementGuard, replies: Replies, responseType: string): Promise<void> {
  if (!(await guardHolds(db, guard))) return replies.refuse();
  replies.send(400, responseType, JSON.stringify({ errors: [{ message: 'the request body is not valid JSON', extensions: { code: 'invalid-request' } }] }));
}

/**
 * `respond` with read replicas (`ReadRouting`): reads run on a replica that has replayed what the
 * key last wrote — through any process or host — or the request's `LoanQL-Consistency` asks for,
 * writes on the primary. The key's state is checked on the primary first, in the same statement
 * that reads its last write position — a replica may not have replayed a revocation (or a new
 * key) yet — so revocation takes effect on the next request whatever serves the read. After a
 * write the position is recorded and set as the `LoanQL-Consistency` header; a write whose
 * position cannot be recorded (the primary just went away) is answered without it. Throws
 * `GuardFailed` when the key is no longer active.
 */
async function respondRouted(
  routing: ReadRouting,
  caller: { engine: GraphEngine; principal: Principal },
  request: GraphRequest,
  key: KeyRef,
  readAtLeast: Lsn | null,
  res: ServerResponse,
  write: (piece: string) => void,
  options: RespondOptions,
): Promise<void> {
  const routed = await routing.forRead(key, readAtLeast);
  if (!routed) throw new GuardFailed();
  await caller.engine.respond(routed, request, caller.principal, undefined, write, options);
  if (routed.wrote) await routing.wrote(key, res).catch(() => undefined);
  ReadRouting.tell(res, routed);
}

/** What answering a GraphQL request needs of the server. */
export interface GraphServices {
  readonly db: Database;
  readonly engines: EngineHolder;
  readonly logger: Logger;
  readonly routing: ReadRouting | undefined;
  /** Admission by cost (`app/operations/costAdmission.ts`); null: every query runs at once. */
  readonly admission: CostAdmission | null;
  /** The API keys' rate limit, for the tokens of a batch past its first (`answerBatch`); none: not limited. */
  readonly rateLimit?: RateLimitCheck;
}

/** One GraphQL request, as the Express routes and the fast path each read it from HTTP. */
interface GraphCall {
  /** Who it runs as: the API key, or the dashboard session's account. */
  readonly who: string | AuthenticatedKey;
  readonly request: GraphRequest;
  /** With read routing: the key whose writes the reads must see (it is also checked before them). */
  readonly readsAs: KeyRef | undefined;
  /** The key's state, when it was not read yet: checked by the database with the request. */
  readonly guard: StatementGuard | undefined;
  readonly readAtLeast: Lsn | null;
  readonly responseType: string;
}

/**
 * How an answer goes out: through Express's `res` (its own headers, ETag included) or the bare
 * `ServerResponse` of the fast path, so both answer as they always have.
 */
interface Replies {
  readonly send: (status: number, type: string, body: string) => void;
  /** 403 `Not authorized`, the one answer to every kind of auth failure. */
  readonly refuse: () => void;
  readonly res: ServerResponse;
}

const expressReplies = (res: Response): Replies => ({ send: (status, type, body) => void res.status(status).type(type).send(body), refuse: () => notAuthorized(res), res });

function bareReplies(res: ServerResponse): Replies {
  const send = (status: number, type: string, body: string): void => void res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) }).end(body);
  return { send, refuse: () => send(403, 'text/plain', 'Not authorized'), res };
}

/**
 * The one handler of a GraphQL request (`POST` and `GET /api/graph`, the dashboard's console,
 * the fast path): the caller's engine runs it (on a replica when reads are routed) and the
 * response text goes out as PostgreSQL made it; any failure is answered by `replyWithError`.
 */
async function answerGraphRequest(services: GraphServices, call: GraphCall, res: ServerResponse, replies: Replies): Promise<void> {
  if (Array.isArray(call.request)) return answerBatch(services, { ...call, requests: call.request as readonly GraphRequest[] }, res, replies);
  const body = new PiecewiseBody(res, call.responseType);
  // Metrics, the request log and traces, when they observe requests (http/requestFacts.ts).
  const facts = factsOf(res);
  if (facts) noteCaller(res, typeof call.who === 'string' ? { role: ADMIN_ROLE, accountId: call.who } : call.who);
  try {
    const caller = engineForCaller(services.engines.engine, call.who);
    if (!caller) return replies.refuse();
    const options = respondOptions(services, call.who, facts);
    if (services.routing && call.readsAs) await respondRouted(services.routing, caller, call.request, call.readsAs, call.readAtLeast, res, body.write, options);
    else await caller.engine.respond(services.db, call.request, caller.principal, call.guard, body.write, options);
    body.end();
  } catch (error) {
    replyWithError(replies, error, call.responseType, services, body);
  }
}

/** What `respond` is told of a request: where its facts go, and how it is admitted by cost. */
function respondOptions(services: GraphServices, who: string | AuthenticatedKey, facts: ReturnType<typeof factsOf>): RespondOptions {
  const { admission } = services;
  if (!admission && !facts) return NOTHING_TO_NOTE;
  return { facts: facts?.engine, admit: admission ? (cost) => admission.admit(admissionKeyOf(who), cost) : undefined };
}

/** Options of a request with no facts to note and no admission: one object for all of them. */
const NOTHING_TO_NOTE: RespondOptions = Object.freeze({ facts: undefined, admit: undefined });

/** Whose turn a request takes in admission's queue: its API key, or the dashboard session's account. */
export const admissionKeyOf = (who: string | AuthenticatedKey): string => (typeof who === 'string' ? `account:${who}` : who.keyId);

/** 503 with `Retry-After` for a request admission by cost turned away (`extensions.code` `overloaded`). */
function sendGraphOverloaded(res: ServerResponse, refused: AdmissionRefused, type: string): void {
  const body = JSON.stringify({ errors: [{ message: refused.message, extensions: { code: 'overloaded' satisfies ErrorCode } }] });
  res.writeHead(503, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body), 'Retry-After': String(refused.retryAfterSeconds) }).end(body);
}

/**
 * A batch: a JSON array of GraphQL requests (Apollo's BatchHttpLink), answered 200 with a JSON
 * array of their responses in the same order. Each request runs as if sent alone — its own
 * statement (a mutation: its own transaction), its own errors (`{"errors": […]}` in its place),
 * one after the other so a later request sees an earlier one's writes. 1 to `MAX_BATCH_SIZE`
 * requests, else 400 `invalid-request` and nothing runs; a rate-limited key takes one token per
 * request (429 and nothing runs when its bucket lacks them, the HTTP request's token given back). A key found inactive refuses the whole
 * batch (403), as does anything that is not a client's mistake (500). The answers are held until
 * the last is done (`MAX_BATCH_SIZE` bounds them), so the status is known before the body.
 */
async function answerBatch(services: GraphServices, call: GraphCall & { readonly requests: readonly GraphRequest[] }, res: ServerResponse, replies: Replies): Promise<void> {
  try {
    const caller = engineForCaller(services.engines.engine, call.who);
    if (!caller) return replies.refuse();
    const limit = caller.engine.options.maxBatchSize ?? DEFAULT_MAX_BATCH_SIZE;
    if (!call.requests.length || (limit > 0 && call.requests.length > limit)) {
      if (call.guard && !(await guardHolds(services.db, call.guard))) throw new GuardFailed();
      const message = `a batch holds 1 to ${limit} requests (MAX_BATCH_SIZE), not ${call.requests.length}`;
      throw new RequestError([{ message, extensions: { code: 'invalid-request' satisfies ErrorCode } }], 'request');
    }
    // The HTTP request took one token; each further request of the batch takes one more, as each
    // operation over WebSocket does (a batch of 20 for one token was 20 times the key's limit).
    if (services.rateLimit && typeof call.who !== 'string' && call.requests.length > 1) {
      if (!(await services.rateLimit(call.who, replies.res, 'graph', call.responseType, call.requests.length - 1, call.requests.length))) return;
    }
    const answers: string[] = [];
    for (const request of call.requests) {
      const pieces: string[] = [];
      const write = (piece: string): void => void pieces.push(piece);
      try {
        const options = respondOptions(services, call.who, undefined);
        if (services.routing && call.readsAs) await respondRouted(services.routing, caller, request, call.readsAs, call.readAtLeast, res, write, options);
        else await caller.engine.respond(services.db, request, caller.principal, call.guard, write, options);
        answers.push(pieces.join(''));
      } catch (error) {
        if (!(error instanceof RequestError)) throw error;
        answers.push(JSON.stringify({ errors: error.errors }));
      }
    }
    replies.send(200, call.responseType, `[${answers.join(',')}]`);
  } catch (error) {
    replyWithError(replies, error, call.responseType, services);
  }
}

/**
 * Every failure of a GraphQL request as HTTP, in one place: a response already under way is cut
 * short; a key found inactive (`GuardFailed`) is 403; an unreachable database 503; the client's
 * mistake (`RequestError`) its errors, 200 or 400 (`errorStatus`); a write undone as a conflict on
 * every run, `conflict` in a 200; anything else is ours — logged
 * with an id and censored as 500 `internal`.
 */
function replyWithError(replies: Replies, error: unknown, responseType: string, { logger, engines }: Pick<GraphServices, 'logger' | 'engines'>, body?: PiecewiseBody): void {
  if (body?.started) return cutShort(replies.res, error, logger);
  if (error instanceof GuardFailed) return replies.refuse();
  if (isDatabaseUnavailable(error)) return sendGraphUnavailable(replies.res, responseType);
  if (error instanceof AdmissionRefused) return sendGraphOverloaded(replies.res, error, responseType);
  if (error instanceof RequestError) return replies.send(errorStatus(error, responseType), responseType, JSON.stringify({ errors: error.errors }));
  // Undone as a deadlock or serialization failure on each of its runs (db/conflictRetry.ts) where
  // no write statement could name it — at the COMMIT, a deferred trigger's: `conflict`, as a write's.
  if (isWriteConflict(error)) return replies.send(200, responseType, JSON.stringify({ errors: [{ message: 'the mutation collided with concurrent writes and was undone each time it ran; nothing was written: send it again', extensions: { code: 'conflict' satisfies ErrorCode } }] }));
  const id = randomUUID();
  if (error instanceof MetadataMismatch) {
    // The database changed under the metadata in service: said in words, logged with the
    // database's own, and the metadata checked again for /readyz to name what is missing.
    logger.error({ errorId: id, path: '/api/graph', databaseMessage: error.databaseMessage }, 'metadata mismatch');
    engines.noteMismatch();
    return replies.send(500, responseType, JSON.stringify({ errors: [{ message: error.message, extensions: { code: 'metadata-mismatch' satisfies ErrorCode, id } }] }));
  }
  logger.error({ errorId: id, path: '/api/graph', err: error }, 'internal error');
  replies.send(500, responseType, JSON.stringify({ errors: [{ message: 'internal error', extensions: { code: 'internal' satisfies ErrorCode, id } }] }));
}

/**
 * The 200 answer of `/api/graph`, whose body the engine hands over in pieces
 * (`GraphEngine.respond`). A body of one piece goes out with a Content-Length like any other;
 * from a second piece on, pieces are written as they arrive (chunked transfer encoding), so a
 * large response is never held whole.
 */
class PiecewiseBody {
  #first: string | null = null;
  #streaming = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly type: string,
  ) {}

  /** Part of the body has gone out: from now on an error can only cut the response short. */
  get started(): boolean {
    return this.#streaming;
  }

  readonly write = (piece: string): void => {
    if (!this.#streaming) {
      if (this.#first === null) {
        this.#first = piece;
        return;
      }
      this.res.writeHead(200, { 'Content-Type': this.type });
      this.res.write(this.#first);
      this.#first = null;
      this.#streaming = true;
    }
    this.res.write(piece);
  };

  end(): void {
    if (this.#streaming) {
      this.res.end();
      return;
    }
    const body = this.#first ?? '';
    this.res.writeHead(200, { 'Content-Type': this.type, 'Content-Length': Buffer.byteLength(body) }).end(body);
  }
}

/** A failure after part of a body was sent: logged, and the connection closed so the client sees an incomplete response. */
function cutShort(res: ServerResponse, error: unknown, logger: Logger): void {
  logger.error({ errorId: randomUUID(), path: '/api/graph', err: error }, 'response cut short');
  res.destroy();
}

/** 405 for a method a GraphQL path does not take, with `Allow` and an `errors` array naming the ones it does. */
function graphMethodNotAllowed(allow: string): (req: Request, res: Response) => void {
  return (req, res) => {
    res.set('Allow', allow);
    sendErrors(res, 405, graphResponseType(req.get('accept')), 'method-not-allowed', `${req.method} is not supported here; this path takes ${allow}`);
  };
}

function sendErrors(res: Response, status: number, type: string, code: ErrorCode, message: string): void {
  res.status(status).type(type).send(JSON.stringify({ errors: [{ message, extensions: { code } }] }));
}
