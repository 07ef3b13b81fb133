import { createServer, ServerResponse, STATUS_CODES, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { HttpTimeouts } from '../app/config.js';
import { isGraphPath, isWebSocketHandshake, refusingWebSockets } from './webSocketRefusal.js';
import { isConsoleGraphPath } from '../api/graphSocket.js';

/** Takes a WebSocket handshake on `/api/graph` or `/dashboard/graph` (`api/graphSocket.ts`). */
export interface WebSocketUpgrades {
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
}

/**
 * The server's responses: `requestId`, when set (`observeRequests.ts`), goes out as
 * `X-Request-Id` in the response's head. Added to the headers given to `writeHead` (the fast
 * path's only call) rather than by `setHeader` beforehand, which takes Node's `writeHead` off its
 * fast path (it then merges and validates every header twice). Express gives the responses it
 * handles its own prototype (so this `writeHead` is not theirs): `toExpress` sets the header on
 * them beforehand.
 */
export class ObservedResponse extends ServerResponse {
  requestId: string | undefined = undefined;
  /**
   * The status Node's parser answered this request with on the connection (`answeringClientErrors`:
   * a body it could not read — a bad chunk), its route never having answered; what its observer
   * counts and logs instead of 499.
   */
  answeredByConnection: number | undefined = undefined;

  override writeHead(statusCode: number, ...rest: unknown[]): this {
    const id = this.requestId;
    if (id !== undefined && !this.headersSent) {
      const last = rest[rest.length - 1];
      if (last !== null && typeof last === 'object' && !Array.isArray(last)) rest[rest.length - 1] = withRequestId(last as Record<string, unknown>, id);
      else this.setHeader('X-Request-Id', id);
    }
    return (super.writeHead as (statusCode: number, ...rest: unknown[]) => this)(statusCode, ...rest);
  }

  /** Before Express takes the response: the request id as a header set the usual way. */
  static toExpress(res: ServerResponse): void {
    if (res instanceof ObservedResponse && res.requestId !== undefined) res.setHeader('X-Request-Id', res.requestId);
  }
}

/**
 * `headers` and `X-Request-Id` as the flat `[name, value, …]` list `writeHead` takes: not
 * `{ ...headers, 'X-Request-Id': id }`, whose new property after a spread takes V8's slow path
 * (~0.75 µs a call alone, ~3 µs a request in a loaded server's profile; bench/README.md, session ops7).
 */
function withRequestId(headers: Record<string, unknown>, id: string): unknown[] {
  const list: unknown[] = [];
  for (const name in headers) if (Object.hasOwn(headers, name)) list.push(name, headers[name]);
  list.push('X-Request-Id', id);
  return list;
}

/**
 * The HTTP server with its timeouts and connection cap (README, Configuration), so slow or
 * silent clients cannot hold sockets forever: a connection that sends no complete headers within
 * `headersTimeoutMs` (a half-open one that sends nothing included) or no complete request within
 * `requestTimeoutMs` is answered 408 and closed; an idle keep-alive connection is closed after
 * `keepAliveTimeoutMs`; any socket silent for `idleSocketTimeoutMs` is destroyed; and beyond
 * `maxConnections` open sockets new ones are dropped at once. Node checks the header and request
 * deadlines every `connectionsCheckingInterval` (a quarter of the headers timeout, at most 5 s).
 * A WebSocket handshake on `/api/graph` goes to `webSockets` (GraphQL over WebSocket); any other
 * is refused before the routes (`webSocketRefusal.ts`), and other `Upgrade` requests reach the
 * routes as plain HTTP/1.1.
 */
/** What observes the requests the server answers before any route (`observeRequests.ts`): null parts are off. */
export interface ServerObservers {
  /** A request Node could not read: its status (408, 431, 400) and the bytes of its answer. */
  readonly clientError: ((status: number, responseBytes: number) => void) | null;
  /** A WebSocket handshake: switched (101) or refused (400, 405, …), the bytes of its answer, and how long it took. */
  readonly handshake: ((req: IncomingMessage, status: number, responseBytes: number, durationMs: number) => void) | null;
}

export function createHttpServer(listener: RequestListener, limits: HttpTimeouts, webSockets?: WebSocketUpgrades, observers?: ServerObservers | null): Server {
  const onClientError = observers?.clientError;
  const onHandshake = observers?.handshake;
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: Math.max(100, Math.min(5_000, Math.floor(limits.headersTimeoutMs / 4) || 5_000)),
      ServerResponse: ObservedResponse as typeof ServerResponse,
    },
    refusingWebSockets(listener),
  );
  if (limits.idleSocketTimeoutMs > 0) server.setTimeout(limits.idleSocketTimeoutMs, (socket) => socket.destroy());
  if (webSockets) {
    const plain = refusingWebSockets(listener);
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      // A WebSocket handshake is answered here, not by a route: observed here (before, a refused one was in no log or metric).
      if (onHandshake && isWebSocketHandshake(req)) watchHandshake(req, socket, onHandshake);
      if (isWebSocketHandshake(req) && (isGraphPath(req.url) || isConsoleGraphPath(req.url))) {
        // A WebSocket lives past the HTTP idle limit; its own pings keep it honest (graphSocket.ts).
        (socket as Duplex & { setTimeout?: (ms: number) => void }).setTimeout?.(0);
        webSockets.handleUpgrade(req, socket, head);
        return;
      }
      // With an 'upgrade' listener Node hands every Upgrade request here: answer the others as before.
      if (head.length) socket.unshift(head);
      const res = new ObservedResponse(req);
      res.shouldKeepAlive = false;
      res.assignSocket(socket as never);
      res.on('finish', () => {
        res.detachSocket(socket as never);
        socket.end();
      });
      plain(req, res);
    });
  }
  if (limits.maxConnections > 0) server.maxConnections = limits.maxConnections;
  if (onClientError) server.on('clientError', answeringClientErrors(onClientError));
  return server;
}

/**
 * Tells `observed` how a WebSocket handshake was answered, from the status line of the first
 * bytes written on its socket (`ws` writes its 101, or its refusal, there itself; the refusal of a
 * handshake elsewhere goes through a response on the same socket); a socket closed before any
 * answer is 499, as a request whose client left.
 */
function watchHandshake(req: IncomingMessage, socket: Duplex, observed: NonNullable<ServerObservers['handshake']>): void {
  const startedAt = performance.now();
  const { write, end } = socket;
  let done = false;
  const report = (status: number, responseBytes: number): void => {
    if (done) return;
    done = true;
    socket.write = write;
    socket.end = end;
    observed(req, status, responseBytes, performance.now() - startedAt);
  };
  /** The first bytes the socket is given: a status line, 101 or a refusal (`ws` refuses with `end(bytes)`). */
  const answered = (chunk: unknown): void => {
    if (typeof chunk !== 'string' && !Buffer.isBuffer(chunk)) return;
    const status = /^HTTP\/1\.[01] (\d{3})/.exec(typeof chunk === 'string' ? chunk.slice(0, 16) : chunk.toString('latin1', 0, 16))?.[1];
    report(status ? Number(status) : 0, Buffer.byteLength(chunk));
  };
  socket.write = function (this: Duplex, chunk: unknown, ...rest: unknown[]): boolean {
    answered(chunk);
    return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
  } as Duplex['write'];
  socket.end = function (this: Duplex, chunk?: unknown, ...rest: unknown[]): Duplex {
    answered(chunk);
    return (end as (...args: unknown[]) => Duplex).call(this, chunk, ...rest);
  } as Duplex['end'];
  socket.once('close', () => report(CLIENT_CLOSED_REQUEST, 0));
}

/** nginx's status for a request whose client closed the connection before it was answered. */
const CLIENT_CLOSED_REQUEST = 499;

/**
 * Node's own answer to a request it could not read — 408 (headers or request not complete within
 * their timeouts), 431 (headers too large), 400 (not HTTP) — as its default handler writes it
 * (`socketOnError` in Node's `_http_server.js`), told to `observed` (metrics and the request log:
 * README "Operations"), which never saw these requests before: a slow-headers flood was invisible.
 * A connection reset by the client, on which nothing can be written, is not counted.
 */
function answeringClientErrors(observed: (status: number, responseBytes: number) => void): (error: NodeJS.ErrnoException, socket: Duplex) => void {
  return (error, socket) => {
    // Node's own handler reads the same field: the response of the request being read, if any.
    const inFlight = (socket as Duplex & { _httpMessage?: unknown })._httpMessage;
    // `ServerResponse`, not `ObservedResponse`: Express gives the responses it takes its own prototype.
    if (inFlight instanceof ServerResponse && !inFlight.headersSent) {
      // A request whose head was read (a route has it, and its observer counts and logs it once,
      // when its response closes), not an unread one: before, a client that left mid-body was
      // counted and logged twice — its 499 and an `unread` 400. Gone (the connection ended
      // mid-request), it is answered nothing: 499; a body the parser refused gets the 400.
      if (error.code !== 'HPE_INVALID_EOF_STATE' && socket.writable) {
        (inFlight as ObservedResponse).answeredByConnection = 400;
        socket.write(`HTTP/1.1 400 ${STATUS_CODES[400]}\r\nConnection: close\r\n\r\n`);
      }
      socket.destroy(error);
      return;
    }
    const net = socket as Duplex & { bytesWritten?: number };
    if (socket.writable && (net.bytesWritten ?? 0) === 0) {
      const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW' ? 413 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
      const response = `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\n\r\n`;
      socket.write(response);
      observed(status, Buffer.byteLength(response));
    }
    socket.destroy(error);
  };
}

/** Listens on `port`/`host`; resolves once listening. */
export function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException): void => reject(new Error(listenFailure(error, port, host)));
    server.once('error', failed);
    server.listen(port, host, () => {
      // This listener only: a later error of the server is not a failure to listen.
      server.off('error', failed);
      resolve();
    });
  });
}

/**
 * Fails, in `listenFailure`'s words, when `port`/`host` cannot be listened on now; listens on it
 * for a moment and lets it go. The primary of `WORKERS=N` asks before it forks: a worker that
 * cannot listen dies and is replaced, again and again, until the primary gives up after 120 s.
 */
export async function checkCanListen(port: number, host: string): Promise<void> {
  const probe = createServer();
  await listen(probe, port, host);
  await new Promise<void>((resolve) => probe.close(() => resolve()));
}

/**
 * Why the service could not listen, in words that say what to do (Node's own is "listen
 * EADDRINUSE: address already in use 0.0.0.0:8080", which names neither PORT nor a way out).
 */
export function listenFailure(error: NodeJS.ErrnoException, port: number, host: string): string {
  const where = `port ${port} on ${host}`;
  switch (error.code) {
    case 'EADDRINUSE':
      return `${where} is already in use (another loanql, or another program): stop it, or start on a free port with PORT (PORT=${port === 65_535 ? 8081 : port + 1} npm start)`;
    case 'EACCES':
      return `${where} needs privileges this process does not have (ports below 1024 do): start on another port with PORT (PORT=8080 npm start)`;
    case 'EADDRNOTAVAIL':
      return `HOST ${host} is not an address of this machine: set HOST to one of its addresses, 127.0.0.1 (this machine only) or 0.0.0.0 (every address)`;
    default:
      return `cannot listen on ${where}: ${error.message}`;
  }
}
