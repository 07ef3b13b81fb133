import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { GraphQLError, parse, type ExecutionArgs, type ExecutionResult } from 'graphql';
import { CloseCode, handleProtocols, makeServer, type Context, type SubscribePayload } from 'graphql-ws';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Database } from '../db/index.js';
import { MetadataMismatch, RequestError, type GraphEngine, type LiveQueries, type LiveSubscription, type Principal, type ResponseError } from '../engine/index.js';
import type { EngineHolder } from '../app/engineHolder.js';
import type { Logger } from '../app/logger.js';
import { activeKeyIds, authenticateApiKey, type AuthenticatedKey, type VerifiedKeyCache } from '../app/apiKeys.js';
import { findAdminSession, isSessionCsrfToken } from '../app/adminSessions.js';
import { admissionKeyOf, engineForCaller } from './routes/graph.js';
import { isDatabaseUnavailable } from '../http/unavailable.js';
import { hasLongNumber, parseJsonExact, withExactNumbers } from '../http/exactJson.js';
import type { ReadRouting } from './readRouting.js';
import type { RateLimiter } from '../app/operations/rateLimiter.js';
import { overRateLimit } from './rateLimit.js';
import { AdmissionRefused, overloadedError, type CostAdmission } from '../app/operations/costAdmission.js';

/** Limits of the WebSocket API (README, Configuration: `SUBSCRIPTIONS_*`). */
export interface GraphSocketLimits {
  /** Open subscriptions of one API key in this process. */
  readonly perKey: number;
  /** Open subscriptions of this process. */
  readonly perProcess: number;
  /** A connection whose unsent messages exceed this many bytes (a client that does not read) is dropped. */
  readonly maxBufferedBytes: number;
  /** Largest message a client may send (the body limit of HTTP). */
  readonly maxMessageBytes: number;
}

export interface GraphSocketDeps {
  readonly db: Database;
  readonly engines: EngineHolder;
  readonly logger: Logger;
  readonly live: LiveQueries;
  readonly limits: GraphSocketLimits;
  readonly verifiedKeys?: VerifiedKeyCache;
  readonly routing?: ReadRouting;
  /** Rate limits per API key (README "Operations"): each operation a key starts takes a token, as each HTTP request does. */
  readonly rateLimiter?: RateLimiter;
  /** Told of each operation a client starts, with how it went (metrics: `loanql_websocket_operations_total`). */
  readonly onOperation?: ((operation: SocketOperationType, outcome: SocketOutcome, facts: SocketOperationFacts) => void) | undefined;
  /**
   * Admission by cost, the HTTP routes' own object (README "Operations"): a query sent over the
   * socket asks it as `POST /api/graph` does (a subscription's runs ask it through `live`).
   */
  readonly admission?: CostAdmission | null;
}

/** What graphql-ws keeps of one connection. */
interface Connection {
  readonly socket: WebSocket;
  readonly request: IncomingMessage;
  auth: AuthenticatedKey | null;
  /** The dashboard console's socket (`/dashboard/graph`): its session's token once accepted, checked again every `SESSION_CHECK_MS`. */
  readonly console: boolean;
  sessionToken: string | null;
  /** Its live subscriptions, each with what it was planned as (`noticeMetadataReload` plans it again). */
  readonly subscriptions: Map<LiveSubscription, PlannedSubscription>;
  /** Their results not yet handed to the socket (graphql-ws sends one message at a time, each once the last is written). */
  readonly queues: Set<ResultQueue>;
  /**
   * The variables of a `subscribe` message that held a number a double cannot hold, read with
   * `LosslessNumber`s (as on HTTP) by the message's id, taken by `#subscribe` in place of
   * graphql-ws's copy (whose numbers are strings: `withExactNumbers`).
   */
  readonly exactVariables: Map<string, unknown>;
}

/** A subscription's request and the statement it was planned as under the metadata it started with. */
interface PlannedSubscription {
  readonly payload: SubscribePayload;
  readonly plannedAs: string;
}

const KEEP_ALIVE_MS = 12_000;

/** How long a connection the server closes has to answer the close before it is cut (a client that does not read would never answer). */
const CLOSE_HANDSHAKE_MS = 1_000;

/** The console's sockets: how often their sessions are read again (a logout or an expiry closes them with 4403 within this). */
const SESSION_CHECK_MS = 1_000;

/** The dashboard's session cookie (dashboard/session.ts; its Path is /dashboard, so only `/dashboard/graph` receives it). */
const SESSION_COOKIE = 'loanql_session';

/** `/dashboard/graph`, with or without a query string: the console's socket, authenticated by the dashboard session. */
export const isConsoleGraphPath = (url: string | undefined): boolean => /^\/dashboard\/graph\/?(\?|$)/.test(url ?? '');

/** The close code a slow consumer gets: 1013 "try again later" (its messages were not read). */
export const SLOW_CONSUMER_CLOSE = 1013;

/** The close code of a connection whose subscriptions the reloaded metadata plans otherwise: 1012 "service restart" (graphql-ws clients reconnect and subscribe again). */
export const METADATA_CHANGED_CLOSE = 1012;

/** A result whose body is PostgreSQL's response text, sent as it is (the payload of a `next`). */
const RAW_RESPONSE = Symbol('raw response');
type RawResult = { readonly [RAW_RESPONSE]: string };

/** One document per operation type: graphql-ws only reads which type a subscription is (the engine has its own). */
const DOCUMENTS = { query: parse('query { __typename }'), mutation: parse('mutation { __typename }'), subscription: parse('subscription { __typename }') } as const;

/**
 * GraphQL over WebSocket (`graphql-transport-ws`, the `graphql-ws` library's server) on
 * `/api/graph` (README, "Subscriptions"). The API key comes in `connection_init`'s payload
 * (`{"Authorization": "Token …"}`) or the upgrade request's `Authorization` header; a missing or
 * bad one closes the connection with 4403, and so does a key deactivated while connected (the
 * database's change notice on `api_keys`, `noticeKeyChange`). Every operation runs through the
 * engine of the key's role: a subscription joins the process's `LiveQueries`, a query or mutation
 * answers once. Results go out as PostgreSQL's text (numbers keep their digits); a connection
 * that does not read its messages is dropped once `maxBufferedBytes` are waiting.
 */
export class GraphSockets {
  readonly #deps: GraphSocketDeps;
  readonly #wss: WebSocketServer;
  readonly #connections = new Set<Connection>();
  readonly #perKey = new Map<string, number>();
  /** Payloads waiting to be spliced into the message text being sent (`RAW_RESPONSE`). */
  readonly #raw = new Map<string, string>();
  readonly #token = randomBytes(12).toString('hex');
  #rawCount = 0;

  constructor(deps: GraphSocketDeps) {
    this.#deps = deps;
    this.#wss = new WebSocketServer({ noServer: true, maxPayload: deps.limits.maxMessageBytes, handleProtocols });
    const server = makeServer<Record<string, unknown>, Connection>({
      onConnect: (ctx) => this.#connect(ctx),
      onSubscribe: (ctx, id, payload) => this.#subscribe(ctx, id, payload),
      // The results are PostgreSQL's text in a wrapper graphql-ws passes through as the payload (`RAW_RESPONSE`).
      execute: (args) => args.contextValue as AsyncIterable<ExecutionResult>,
      subscribe: (args) => args.contextValue as AsyncIterable<ExecutionResult>,
      jsonMessageReplacer: (key, value) => (key === 'payload' && value && typeof value === 'object' && RAW_RESPONSE in value ? this.#placeholder((value as RawResult)[RAW_RESPONSE]) : value),
    });
    this.#wss.on('connection', (socket: WebSocket, request: IncomingMessage) => {
      const connection: Connection = { socket, request, auth: null, console: isConsoleGraphPath(request.url), sessionToken: null, subscriptions: new Map(), queues: new Set(), exactVariables: new Map() };
      this.#connections.add(connection);
      const closed = server.opened(
        {
          protocol: socket.protocol,
          send: (data) => this.#send(connection, data),
          close: (code, reason) => socket.close(code, reason),
          onMessage: (handle) =>
            socket.on('message', (message: Buffer) => {
              // Variables keep every digit, as on HTTP (http/exactJson.ts): graphql-ws parses the
              // text itself, so its numbers a double cannot hold are written as strings, and a
              // subscribe message's variables are kept read exactly for `#subscribe`.
              const text = message.toString('utf8');
              if (hasLongNumber(text)) keepExactVariables(connection, text);
              handle(withExactNumbers(text)).catch((error: unknown) => this.#internal(connection, error));
            }),
        },
        connection,
      );
      socket.on('error', () => socket.terminate());
      // Keep-alive: a ping every 12 s; a connection that answered none since the last is gone.
      let alive = true;
      socket.on('pong', () => (alive = true));
      const pings = setInterval(() => {
        if (!alive) return socket.terminate();
        alive = false;
        socket.ping();
      }, KEEP_ALIVE_MS);
      pings.unref();
      socket.once('close', (code: number, reason: Buffer) => {
        clearInterval(pings);
        this.#drop(connection);
        void closed(code, reason.toString('utf8'));
      });
    });
  }

  /** Takes a WebSocket handshake on `/api/graph` (the HTTP server's `upgrade`). */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.#wss.handleUpgrade(req, socket, head, (ws) => this.#wss.emit('connection', ws, req));
  }

  /** This process's open connections and subscriptions, its live-query cohorts, and the cohort statements run so far (the metrics hook; `/healthz` with an admin key). */
  get usage(): { readonly connections: number; readonly subscriptions: number; readonly cohorts: number; readonly statementsRun: number } {
    const live = this.#deps.live;
    return { connections: this.#connections.size, ...live.usage, statementsRun: live.statementsRun };
  }

  /**
   * An `api_keys` row of `accountId` changed (a change notice): the account's keys with open
   * connections are read again, and the connections of a key no longer active close with 4403.
   */
  async noticeKeyChange(accountId: string | null): Promise<void> {
    const keys = new Set<string>();
    for (const connection of this.#connections) if (connection.auth && !connection.console && (accountId === null || connection.auth.accountId === accountId)) keys.add(connection.auth.keyId);
    if (!keys.size) return;
    const active = await activeKeyIds(this.#deps.db, [...keys]);
    for (const connection of this.#connections) if (connection.auth && keys.has(connection.auth.keyId) && !active.has(connection.auth.keyId)) connection.socket.close(CloseCode.Forbidden, 'Forbidden');
  }

  /**
   * The metadata was reloaded (README "Subscriptions"): each open subscription is planned again
   * as its caller's role now sees it. A connection holding one that now plans otherwise or not at
   * all (a field, a collection or a filter of the role changed) is closed with 1012, so that its
   * client subscribes again under the new metadata — and gets the new data or the new errors —
   * instead of reading, under the old plan, what its role may no longer see; a connection whose
   * role is gone closes with 4403. Subscriptions planned the same keep running untouched.
   */
  noticeMetadataReload(): void {
    const engine = this.#deps.engines.engine;
    for (const connection of this.#connections) {
      if (!connection.auth) continue;
      const caller = engineForCaller(engine, connection.auth);
      // Whether or not it has a subscription open: an idle connection kept open would refuse its next operation.
      if (!caller) {
        connection.socket.close(CloseCode.Forbidden, 'Forbidden');
        continue;
      }
      for (const { payload, plannedAs } of connection.subscriptions.values()) {
        if (planOf(caller, payload) === plannedAs) continue;
        connection.socket.close(METADATA_CHANGED_CLOSE, 'the metadata changed: subscribe again');
        break;
      }
    }
  }

  /**
   * Closes every connection (1001, going away) and the WebSocket server. A client that does not
   * answer the close within `CLOSE_HANDSHAKE_MS` (one that stopped reading) is cut then: it held
   * the stop until its keep-alive ran out, 24 s, past `SHUTDOWN_GRACE_MS` and its last-resort exit.
   */
  async close(): Promise<void> {
    if (this.#sessionChecks) clearInterval(this.#sessionChecks);
    for (const connection of this.#connections) connection.socket.close(1001, 'Going away');
    const cut = setTimeout(() => {
      for (const connection of this.#connections) connection.socket.terminate();
    }, CLOSE_HANDSHAKE_MS);
    await new Promise<void>((resolve) => this.#wss.close(() => resolve()));
    clearTimeout(cut);
  }

  async #connect(ctx: Context<Record<string, unknown>, Connection>): Promise<boolean> {
    if (ctx.extra.console) return this.#connectConsole(ctx);
    const fromPayload = authorizationOf(ctx.connectionParams);
    const header = fromPayload ?? ctx.extra.request.headers.authorization;
    const auth = await authenticateApiKey(this.#deps.db, header, this.#deps.verifiedKeys);
    if (!auth || !engineForCaller(this.#deps.engines.engine, auth)) return false;
    ctx.extra.auth = auth;
    return true;
  }

  /**
   * The dashboard console's socket (README "Subscriptions", dashboard/README.md): the session
   * cookie of the upgrade request, a page of this service's own origin (`Origin` is the `Host`:
   * no other site's page may open it with the admin's cookie), and the session's CSRF token in
   * `connection_init` (`{"csrfToken": …}`, which only a page of the session can read). The
   * caller is the account's admin, as on `POST /dashboard/graph`; the session is read again every
   * second and its sockets close with 4403 once it has ended.
   */
  async #connectConsole(ctx: Context<Record<string, unknown>, Connection>): Promise<boolean> {
    const request = ctx.extra.request;
    const origin = request.headers.origin;
    if (!origin || !request.headers.host || !sameHost(origin, request.headers.host)) return false;
    const token = cookieOf(request.headers.cookie, SESSION_COOKIE);
    if (!token || !isSessionCsrfToken(token, ctx.connectionParams?.csrfToken)) return false;
    const session = await findAdminSession(this.#deps.db, token);
    if (!session) return false;
    ctx.extra.sessionToken = token;
    ctx.extra.auth = { accountId: session.accountId, keyId: `session ${session.sessionId}`, prefix: 'dashboard session', role: 'admin', variables: new Map() };
    this.#sessionChecks ??= setInterval(() => void this.#checkSessions().catch((error: unknown) => this.#deps.logger.warn({ err: error }, 'checking the sessions of console sockets failed')), SESSION_CHECK_MS);
    this.#sessionChecks.unref();
    return true;
  }

  #sessionChecks: NodeJS.Timeout | null = null;

  async #checkSessions(): Promise<void> {
    const consoles = [...this.#connections].filter((connection) => connection.sessionToken !== null);
    if (!consoles.length) {
      if (this.#sessionChecks) clearInterval(this.#sessionChecks);
      this.#sessionChecks = null;
      return;
    }
    for (const connection of consoles) {
      if (!(await findAdminSession(this.#deps.db, connection.sessionToken!))) connection.socket.close(CloseCode.Forbidden, 'Forbidden');
    }
  }

  /** `#start`, counted by `onOperation` (metrics) with its operation type and outcome. */
  async #subscribe(ctx: Context<Record<string, unknown>, Connection>, id: string, payload: SubscribePayload): Promise<ExecutionArgs | readonly GraphQLError[]> {
    const exact = ctx.extra.exactVariables;
    if (exact.has(id)) {
      payload = { ...payload, variables: exact.get(id) as SubscribePayload['variables'] };
      exact.delete(id);
    }
    const seen: { type: SocketOperationType } = { type: 'none' };
    const result = await this.#start(ctx, id, payload, seen);
    const onOperation = this.#deps.onOperation;
    if (onOperation) {
      const auth = ctx.extra.auth;
      const code = Array.isArray(result) ? ((result as readonly GraphQLError[])[0]?.extensions?.code ?? null) : null;
      onOperation(seen.type, outcomeOf(result), {
        keyPrefix: auth?.prefix ?? null,
        role: auth?.role ?? null,
        operationName: typeof payload.operationName === 'string' ? payload.operationName.slice(0, 100) : null,
        code: typeof code === 'string' ? code : null,
      });
    }
    return result;
  }

  async #start(ctx: Context<Record<string, unknown>, Connection>, _id: string, payload: SubscribePayload, seen: { type: SocketOperationType }): Promise<ExecutionArgs | readonly GraphQLError[]> {
    const connection = ctx.extra;
    const auth = connection.auth!;
    const caller = engineForCaller(this.#deps.engines.engine, auth);
    if (!caller) {
      // The key's role is gone (a metadata reload as this arrived): graphql-ws needs an error to
      // return (an empty list was thrown back as a fault of the service, logged as one); the socket
      // is closing, so it is not sent.
      connection.socket.close(CloseCode.Forbidden, 'Forbidden');
      return [new GraphQLError(`this API key's role ${auth.role} is not in the metadata`, { extensions: { code: 'forbidden' } })];
    }
    const results = new ResultQueue();
    let type;
    try {
      const limited = connection.console ? null : await this.#rateLimited(auth);
      if (limited) return [limited];
      type = caller.engine.operationType(payload);
      seen.type = type;
      if (type === 'subscription') {
        const refused = this.#overLimit(auth.keyId);
        if (refused) return [refused];
        await this.#startLive(connection, caller, auth, payload, results);
      } else results.push(await this.#answerOnce(caller, connection, payload, type === 'mutation')), results.end();
    } catch (error) {
      if (error instanceof RequestError) return error.errors.map(asGraphQLError);
      if (error instanceof AdmissionRefused) return [asGraphQLError(overloadedError(error))];
      if (isDatabaseUnavailable(error)) return [new GraphQLError('the database cannot be reached; try again shortly', { extensions: { code: 'database-unavailable' } })];
      const id = randomUUID();
      if (error instanceof MetadataMismatch) {
        // As on HTTP (api/routes/graph.ts): in words, and the metadata checked again for /readyz.
        this.#deps.logger.error({ errorId: id, databaseMessage: error.databaseMessage }, 'metadata mismatch');
        this.#deps.engines.noteMismatch();
        return [new GraphQLError(error.message, { extensions: { code: 'metadata-mismatch', id } })];
      }
      this.#deps.logger.error({ errorId: id, err: error }, 'internal error');
      return [new GraphQLError('internal error', { extensions: { code: 'internal', id } })];
    }
    return { schema: caller.engine.schema, document: DOCUMENTS[type], contextValue: results };
  }

  async #startLive(connection: Connection, caller: { engine: GraphEngine; principal: Principal }, auth: AuthenticatedKey, payload: SubscribePayload, results: ResultQueue): Promise<void> {
    const prepared = caller.engine.prepareSubscription(payload, caller.principal);
    if (prepared.kind === 'mutation') throw new Error('unreachable: a subscription prepared as a mutation');
    if (prepared.kind === 'static') {
      results.push(prepared.body);
      return;
    }
    if (prepared.introspection) {
      throw new RequestError([{ message: 'a subscription cannot mix __schema or __type with data fields', extensions: { code: 'validation-failed' } }], 'document');
    }
    this.#count(auth.keyId, 1);
    let subscription: LiveSubscription;
    try {
      subscription = await this.#deps.live.subscribe(
        {
          text: prepared.text,
          values: prepared.values,
          stream: prepared.stream,
          tables: caller.engine.tablesRead(prepared.text),
          accountId: auth.accountId,
          keys: prepared.refreshKeys,
          cost: prepared.cost,
          requester: requesterOf(connection),
        },
        {
          next: (text) => {
            results.push(text);
            if (prepared.stream) this.#checkBacklog(connection);
          },
          error: (errors) => {
            results.push(JSON.stringify({ errors }));
            results.end();
          },
        },
      );
    } catch (error) {
      this.#count(auth.keyId, -1);
      throw error;
    }
    connection.subscriptions.set(subscription, { payload, plannedAs: statementKey(prepared) });
    // A live query's result is the whole answer: one waiting is replaced by a newer one. A stream's batches all wait.
    results.latestOnly = prepared.stream === null;
    connection.queues.add(results);
    results.onEnd(() => {
      connection.queues.delete(results);
      if (!connection.subscriptions.delete(subscription)) return;
      subscription.stop();
      this.#count(auth.keyId, -1);
    });
  }

  /**
   * A query or mutation sent over the socket: answered once, like `POST /api/graph` — a query
   * admitted by cost as there, and with read replicas read-your-writes as there (README "Scaling
   * out"): a key's query reads a replica that has replayed the key's last write, and a key's
   * mutation is recorded as its last write (a query right after one, over HTTP or this socket, read
   * any replica, however far behind).
   */
  async #answerOnce(caller: { engine: GraphEngine; principal: Principal }, connection: Connection, payload: SubscribePayload, isMutation: boolean): Promise<string> {
    const routing = this.#deps.routing;
    const key = routing && !connection.console ? connection.auth! : null;
    const routed = routing && key ? await routing.forRead(key, null) : null;
    if (key && !routed) {
      // Deactivated, its notice not heard yet: the connection closes as the notice would close it.
      connection.socket.close(CloseCode.Forbidden, 'Forbidden');
      throw new RequestError([{ message: 'this API key is not active', extensions: { code: 'permission-error' } }], 'document');
    }
    const db = routed ?? (!isMutation && routing ? routing.replicas.forRequest(null) : this.#deps.db);
    const admission = this.#deps.admission;
    const requester = requesterOf(connection);
    const pieces: string[] = [];
    if (!admission) pieces.push(await caller.engine.execute(db, payload, caller.principal));
    else await caller.engine.respond(db, payload, caller.principal, undefined, (piece) => void pieces.push(piece), { admit: (cost) => admission.admit(requester, cost) });
    if (routing && key && routed?.wrote) await routing.recordWrite(key).catch(() => undefined);
    return pieces.join('');
  }

  /**
   * A token from the key's bucket for an operation it starts (a query, a mutation or a
   * subscription; a subscription's refreshes take none): the HTTP routes' rate limit, which the
   * socket would otherwise bypass. Over it: the operation's `error`, code `rate-limited`.
   */
  async #rateLimited(auth: AuthenticatedKey): Promise<GraphQLError | null> {
    const limiter = this.#deps.rateLimiter;
    const limit = limiter?.limitOf(this.#deps.engines.engine.metadata.roles.get(auth.role)?.rateLimit);
    if (!limiter || !limit) return null;
    const decision = await limiter.take(auth, limit);
    return decision.granted ? null : new GraphQLError(overRateLimit(decision), { extensions: { code: 'rate-limited', retryAfterSeconds: decision.retryAfterSeconds } });
  }

  #overLimit(keyId: string): GraphQLError | null {
    const { perKey, perProcess } = this.#deps.limits;
    if (this.#deps.live.usage.subscriptions >= perProcess) return new GraphQLError(`this process has ${perProcess} open subscriptions, its most (SUBSCRIPTIONS_PER_PROCESS): try again later`, { extensions: { code: 'subscription-limit' } });
    if ((this.#perKey.get(keyId) ?? 0) >= perKey) return new GraphQLError(`this API key has ${perKey} open subscriptions, its most (SUBSCRIPTIONS_PER_KEY): complete one first`, { extensions: { code: 'subscription-limit' } });
    return null;
  }

  #count(keyId: string, change: 1 | -1): void {
    const count = (this.#perKey.get(keyId) ?? 0) + change;
    if (count > 0) this.#perKey.set(keyId, count);
    else this.#perKey.delete(keyId);
  }

  #drop(connection: Connection): void {
    if (!this.#connections.delete(connection)) return;
    for (const subscription of connection.subscriptions.keys()) {
      subscription.stop();
      if (connection.auth) this.#count(connection.auth.keyId, -1);
    }
    connection.subscriptions.clear();
  }

  /**
   * After a stream's batch is queued: drops a client that does not read (1013) once more than
   * `maxBufferedBytes` of its results wait — in the socket's buffer (the message being written)
   * and in its streams' queues behind it. A live query's queue is not counted, nor checked: it
   * keeps only its newest result, one at most whatever the client does (a client that reads
   * nothing at all is still ended by the keep-alive pings it does not answer).
   */
  #checkBacklog(connection: Connection): void {
    let waiting = connection.socket.bufferedAmount;
    for (const queue of connection.queues) if (!queue.latestOnly) waiting += queue.queuedBytes;
    if (waiting > this.#deps.limits.maxBufferedBytes) this.#dropSlowConsumer(connection, waiting);
  }

  #dropSlowConsumer(connection: Connection, waiting: number): void {
    const { socket } = connection;
    if (socket.readyState !== socket.OPEN) return;
    this.#deps.logger.warn({ keyPrefix: connection.auth?.prefix, waiting }, 'a WebSocket client does not read its messages; dropping it');
    socket.close(SLOW_CONSUMER_CLOSE, 'the client does not read its messages');
    setTimeout(() => socket.terminate(), CLOSE_HANDSHAKE_MS).unref();
  }

  #placeholder(text: string): string {
    const placeholder = `\u0000${this.#token}:${(this.#rawCount += 1)}`;
    this.#raw.set(placeholder, text);
    return placeholder;
  }

  /** Sends a message, splicing a raw response in place of its placeholder; drops a client that does not read. */
  #send(connection: Connection, data: string): Promise<void> {
    const match = /"(\\u0000[0-9a-f]+:\d+)"\}$/.exec(data);
    if (match) {
      const placeholder = JSON.parse(`"${match[1]}"`) as string;
      const raw = this.#raw.get(placeholder);
      if (raw !== undefined) {
        this.#raw.delete(placeholder);
        data = `${data.slice(0, match.index)}${raw}}`;
      }
    }
    const { socket } = connection;
    if (socket.readyState !== socket.OPEN) return Promise.resolve();
    // What the client has not read yet, before this message: one result larger than the limit
    // still goes to a client that reads (HTTP would answer it too); a backlog past it is a client that does not.
    if (socket.bufferedAmount > this.#deps.limits.maxBufferedBytes) {
      this.#dropSlowConsumer(connection, socket.bufferedAmount);
      return Promise.resolve();
    }
    return new Promise((resolve) => socket.send(data, () => resolve()));
  }

  #internal(connection: Connection, error: unknown): void {
    const id = randomUUID();
    this.#deps.logger.error({ errorId: id, err: error }, 'internal error on a WebSocket connection');
    connection.socket.close(CloseCode.InternalServerError, 'Internal server error');
  }
}

/** What the request log says of an operation started over the socket: nothing the client sent but its operation's name. */
export interface SocketOperationFacts {
  /** The key's visible prefix (`dashboard session` for the console). */
  readonly keyPrefix: string | null;
  readonly role: string | null;
  readonly operationName: string | null;
  /** The error code it was refused with, if it was. */
  readonly code: string | null;
}

/** An operation's type as the socket's metrics label it (`none`: refused before its document was read). */
export type SocketOperationType = 'query' | 'mutation' | 'subscription' | 'none';

/** How an operation started over the socket went, from a closed list (README "Operations", "Metrics"). */
export type SocketOutcome = 'started' | 'refused' | 'rate-limited' | 'subscription-limit' | 'overloaded' | 'forbidden' | 'failed';

const OUTCOME_OF_CODE: ReadonlyMap<unknown, SocketOutcome> = new Map<unknown, SocketOutcome>([
  ['rate-limited', 'rate-limited'],
  ['subscription-limit', 'subscription-limit'],
  ['overloaded', 'overloaded'],
  ['database-unavailable', 'failed'],
  ['metadata-mismatch', 'failed'],
  ['internal', 'failed'],
  ['forbidden', 'forbidden'],
]);

/** `started`, or the first error's code mapped to the list (`forbidden`: the connection closed, its key's role is gone; any other code: the client's mistake, `refused`). */
function outcomeOf(result: ExecutionArgs | readonly GraphQLError[]): SocketOutcome {
  if (!Array.isArray(result)) return 'started';
  const errors = result as readonly GraphQLError[];
  return OUTCOME_OF_CODE.get(errors[0]?.extensions?.code) ?? 'refused';
}

/** Whose turn a connection's operations take in admission's queue: its key's, or (the console) its account's, as on HTTP. */
const requesterOf = (connection: Connection): string => admissionKeyOf(connection.console ? connection.auth!.accountId : connection.auth!);

/** What a subscription plans as for this caller: its statement and values (null: it no longer plans). */
function planOf(caller: { engine: GraphEngine; principal: Principal }, payload: SubscribePayload): string | null {
  try {
    const prepared = caller.engine.prepareSubscription(payload, caller.principal);
    return prepared.kind === 'statement' ? statementKey(prepared) : null;
  } catch {
    return null;
  }
}

const statementKey = (prepared: { readonly text: string; readonly values: readonly unknown[] }): string =>
  `${prepared.text}\u0000${JSON.stringify(prepared.values, (_key, value: unknown) => (typeof value === 'bigint' ? `${value}n` : value))}`;

function asGraphQLError(error: ResponseError): GraphQLError {
  const { message, locations, extensions } = error;
  const graphQLError = new GraphQLError(message, { extensions, ...(error.path ? { path: error.path } : {}) });
  // graphql-js computes locations from nodes; the engine's are known already.
  if (locations) Object.defineProperty(graphQLError, 'locations', { value: locations, enumerable: true });
  return graphQLError;
}

/**
 * The results of one operation as graphql-ws reads them (an async iterator): pushed as they
 * come; `return()` (the client completed, or the connection closed) ends it at once, even while
 * a `next()` waits, and calls what `onEnd` registered.
 */
class ResultQueue implements AsyncIterableIterator<RawResult> {
  readonly #items: string[] = [];
  /** A live query's: a result waiting is replaced by a newer one (the client wants the latest state, not each one). */
  latestOnly = false;
  #queuedBytes = 0;
  #waiting: ((result: IteratorResult<RawResult>) => void) | null = null;
  #ended = false;
  #finished = false;
  readonly #onEnd: (() => void)[] = [];

  push(text: string): void {
    if (this.#finished) return;
    if (this.#waiting) {
      const waiting = this.#waiting;
      this.#waiting = null;
      waiting({ done: false, value: { [RAW_RESPONSE]: text } });
      return;
    }
    if (this.latestOnly && this.#items.length) {
      this.#items.length = 0;
      this.#queuedBytes = 0;
    }
    this.#items.push(text);
    this.#queuedBytes += text.length;
  }

  /** The length of the results waiting to be taken (UTF-16 units, about their bytes). */
  get queuedBytes(): number {
    return this.#queuedBytes;
  }

  /** No more results after those pushed. */
  end(): void {
    this.#ended = true;
    if (this.#waiting && !this.#items.length) this.#finish();
  }

  onEnd(callback: () => void): void {
    if (this.#finished) callback();
    else this.#onEnd.push(callback);
  }

  next(): Promise<IteratorResult<RawResult>> {
    const text = this.#items.shift();
    if (text !== undefined) {
      this.#queuedBytes -= text.length;
      return Promise.resolve({ done: false, value: { [RAW_RESPONSE]: text } });
    }
    if (this.#ended || this.#finished) {
      this.#finish();
      return Promise.resolve({ done: true, value: undefined });
    }
    return new Promise((resolve) => (this.#waiting = resolve));
  }

  return(): Promise<IteratorResult<RawResult>> {
    this.#finish();
    return Promise.resolve({ done: true, value: undefined });
  }

  throw(): Promise<IteratorResult<RawResult>> {
    return this.return();
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<RawResult> {
    return this;
  }

  #finish(): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#items.length = 0;
    this.#queuedBytes = 0;
    const waiting = this.#waiting;
    this.#waiting = null;
    waiting?.({ done: true, value: undefined });
    for (const callback of this.#onEnd.splice(0)) callback();
  }
}

/**
 * The `Authorization` a `connection_init` payload carries, its key's case ignored (a header's
 * name): at the payload's top level (`{"Authorization": "Token …"}`), or — Hasura's form, which
 * Apollo's and Hasura's own clients send — under `headers` (`{"headers": {"Authorization": …}}`).
 * Undefined when it has neither: the upgrade request's header is used then.
 */
function authorizationOf(payload: Readonly<Record<string, unknown>> | undefined): string | undefined {
  const named = (object: unknown): unknown => {
    if (!object || typeof object !== 'object' || Array.isArray(object)) return undefined;
    for (const [name, value] of Object.entries(object)) if (name.toLowerCase() === 'authorization') return value;
    return undefined;
  };
  const value = named(payload) ?? named(payload?.headers);
  return typeof value === 'string' ? value : undefined;
}

/** Whether a page's `Origin` (`http://host:port`) names the host the request was sent to. */
function sameHost(origin: string, host: string): boolean {
  try {
    return new URL(origin).host === host.toLowerCase();
  } catch {
    return false;
  }
}

/** A cookie's value from a `Cookie` header. */
function cookieOf(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return undefined;
}

/** Keeps a `subscribe` message's variables read with `LosslessNumber`s, by its id (a message graphql-ws then refuses closes the socket). */
function keepExactVariables(connection: Connection, text: string): void {
  let message: unknown;
  try {
    message = parseJsonExact(text, 'as-lossless');
  } catch {
    return;
  }
  if (!message || typeof message !== 'object') return;
  const { type, id, payload } = message as { type?: unknown; id?: unknown; payload?: { variables?: unknown } };
  if (type !== 'subscribe' || typeof id !== 'string' || !payload || typeof payload !== 'object' || payload.variables === undefined) return;
  // Bounded: each is taken when its subscribe starts; a connection cannot pile them up.
  if (connection.exactVariables.size >= 100) connection.exactVariables.clear();
  connection.exactVariables.set(id, payload.variables);
}
