import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ServiceMetrics } from '../app/operations/serviceMetrics.js';
import type { RequestLog } from '../app/operations/requestLog.js';
import type { RequestTraces } from '../app/operations/requestTraces.js';
import { attachFacts } from '../http/requestFacts.js';
import { newRequestId } from './requestIds.js';
import { ObservedResponse } from './httpServer.js';

/** What observes each request: the metrics, the request log, traces; any may be off. */
export interface RequestObservers {
  readonly metrics: ServiceMetrics | null;
  readonly requestLog: RequestLog | null;
  readonly traces?: RequestTraces | null;
}

/** A client's `X-Request-Id` is kept when it is a plain token of at most 64 characters. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** The client's `X-Request-Id` when it is a plain token, else a new one. */
function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : newRequestId();
}

/**
 * Observes every request the server answers (the fast path of `/api/graph` included): attaches
 * `RequestFacts` for the routes to fill, sets `X-Request-Id`, starts its trace (traces on), and
 * when the response ends (or the client goes away: status 499) counts it in the metrics, writes
 * its log line and ends its trace. Null when nothing observes requests: the server then does
 * none of this.
 */
export function observeRequests({ metrics, requestLog, traces = null }: RequestObservers): ((req: IncomingMessage, res: ServerResponse) => void) | null {
  const logging = requestLog?.enabled ? requestLog : null;
  if (!metrics && !logging && !traces) return null;
  return (req, res) => {
    const startedAt = performance.now();
    const id = requestIdOf(req);
    // Set in the response's head by `ObservedResponse` (the server's responses): cheaper than `setHeader` now.
    if (res instanceof ObservedResponse) res.requestId = id;
    else res.setHeader('X-Request-Id', id);
    const facts = attachFacts(res, id);
    // Express rewrites req.url inside routers: the path as it arrived is kept here.
    const { method, url } = req;
    const socket = req.socket;
    const bytesBefore = socket.bytesWritten;
    const traced = traces ? traces.begin(req.headers, method ?? 'OTHER', startedAt, facts.engine) : null;
    let done = false;
    const ended = (): void => {
      if (done) return;
      done = true;
      const durationMs = performance.now() - startedAt;
      // The wall clock read once, for the log line's time and the account's minute.
      const endedAt = Date.now();
      const status = res.writableFinished ? res.statusCode : ((res as ObservedResponse).answeredByConnection ?? CLIENT_CLOSED_REQUEST);
      const route = routeOf(method, url);
      const engine = facts.engine;
      const ranStatement = engine.operationType !== null && engine.databaseMs > 0;
      metrics?.observeRequest({
        route,
        operation: engine.operationType ?? 'none',
        status,
        seconds: durationMs / 1000,
        planCacheHit: engine.planCacheHit,
        databaseSeconds: ranStatement ? engine.databaseMs / 1000 : null,
        readFrom: readFromOf(res),
        accountId: facts.accountId,
        endedAt,
      });
      logging?.write({
        requestId: id,
        method: method ?? '',
        route,
        status,
        durationMs,
        databaseMs: ranStatement ? engine.databaseMs : null,
        responseBytes: socket.bytesWritten - bytesBefore,
        keyPrefix: facts.keyPrefix,
        role: facts.role,
        operationType: engine.operationType,
        operationName: engine.operationName,
        documentHash: engine.documentHash,
        time: endedAt,
      });
      traced?.end({ route, status, engine });
    };
    // 'finish' as the response is handed to the connection; 'close' alone when the client left first.
    // `on`, not `once`: `done` lets only the first count, and `once`'s wrapper and removal cost
    // ~1–2 µs a request under load (perf, bench/README.md); the response is dropped after anyway.
    res.on('finish', ended);
    res.on('close', ended);
  };
}

/**
 * Counts and logs a request the server could not read (`createHttpServer`'s `onClientError`: 408,
 * 431, 400), which no route saw: under the route `unread`, operation `none`, with a new request
 * id and nothing else known. Null when neither metrics nor the request log are on.
 */
export function observeClientErrors({ metrics, requestLog }: RequestObservers): ((status: number, responseBytes: number) => void) | null {
  const logging = requestLog?.enabled ? requestLog : null;
  if (!metrics && !logging) return null;
  return (status, responseBytes) => {
    const time = Date.now();
    metrics?.observeRequest({ route: UNREAD_ROUTE, operation: 'none', status, seconds: 0, planCacheHit: null, databaseSeconds: null, readFrom: null, accountId: null, endedAt: time });
    logging?.write({ requestId: newRequestId(), method: '', route: UNREAD_ROUTE, status, durationMs: 0, databaseMs: null, responseBytes, keyPrefix: null, role: null, operationType: null, operationName: null, documentHash: null, time });
  };
}

/**
 * Counts and logs a WebSocket handshake (`createHttpServer`'s upgrades), which no route sees: its
 * route template, operation `none`, the status it was answered with (101, or a refusal such as
 * 400), its `X-Request-Id` as a request's (the key is checked later, in `connection_init`). Each
 * operation on the connection has its own line (`websocket operation`). Null when neither metrics
 * nor the request log are on.
 */
export function observeHandshakes({ metrics, requestLog }: RequestObservers): ((req: IncomingMessage, status: number, responseBytes: number, durationMs: number) => void) | null {
  const logging = requestLog?.enabled ? requestLog : null;
  if (!metrics && !logging) return null;
  return (req, status, responseBytes, durationMs) => {
    const time = Date.now();
    const route = routeOf(req.method, req.url);
    metrics?.observeRequest({ route, operation: 'none', status, seconds: durationMs / 1000, planCacheHit: null, databaseSeconds: null, readFrom: null, accountId: null, endedAt: time });
    logging?.write({ requestId: requestIdOf(req), method: req.method ?? '', route, status, durationMs, databaseMs: null, responseBytes, keyPrefix: null, role: null, operationType: null, operationName: null, documentHash: null, time });
  };
}

/** The route label of a request whose method and path were never read. */
export const UNREAD_ROUTE = 'unread';

/** nginx's status for a request whose client closed the connection before the response ended. */
const CLIENT_CLOSED_REQUEST = 499;

function readFromOf(res: ServerResponse): 'primary' | 'replica' | null {
  const from = res.getHeader('loanql-read-from');
  if (typeof from !== 'string') return null;
  return from === 'primary' ? 'primary' : 'replica';
}

/** HTTP methods counted by name; any other is `OTHER`. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * The route template of a request, from a closed list — what metrics and the log name a route
 * by, never the path itself (ids, or whatever a client makes up, would each be a new series):
 * `POST /api/graph`, `GET /api/loan/:id/payoff`, `GET /dashboard/*`, `GET other`.
 */
export function routeOf(method: string | undefined, url: string | undefined): string {
  // The route most requests take, as one constant string (a Map lookup by it hashes nothing new).
  if (method === 'POST' && url === '/api/graph') return GRAPH_ROUTE;
  const verb = method && METHODS.has(method) ? method : 'OTHER';
  return `${verb} ${pathTemplateOf(url ?? '')}`;
}

const GRAPH_ROUTE = 'POST /api/graph';

const PATH_TEMPLATES: readonly (readonly [RegExp, string])[] = [
  [/^\/api\/graph\/?$/, '/api/graph'],
  [/^\/api\/graph\/explain\/?$/, '/api/graph/explain'],
  [/^\/api\/loan\/?$/, '/api/loan'],
  [/^\/api\/loan\/[^/]+\/?$/, '/api/loan/:id'],
  [/^\/api\/loan\/[^/]+\/payoff\/?$/, '/api/loan/:id/payoff'],
  [/^\/api\/loan\/[^/]+\/ledger\/?$/, '/api/loan/:id/ledger'],
  [/^\/api\/product\/?$/, '/api/product'],
  [/^\/api\/openapi\.json$/, '/api/openapi.json'],
  [/^\/api(\/|$)/, '/api/*'],
  [/^\/dashboard(\/|$)/, '/dashboard/*'],
  [/^\/healthz$/, '/healthz'],
  [/^\/readyz$/, '/readyz'],
  [/^\/metrics$/, '/metrics'],
  [/^\/$/, '/'],
];

function pathTemplateOf(url: string): string {
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  if (path === '/api/graph') return '/api/graph';
  for (const [pattern, template] of PATH_TEMPLATES) if (pattern.test(path)) return template;
  return 'other';
}
