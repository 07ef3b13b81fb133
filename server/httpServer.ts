import { createServer, type RequestListener, type Server } from 'node:http';
import type { HttpTimeouts } from '../app/config.js';
import { refusingWebSockets } from './webSocketRefusal.js';

/**
 * The HTTP server with its timeouts and connection cap (README, Configuration), so slow or
 * silent clients cannot hold sockets forever: a connection that sends no complete headers within
 * `headersTimeoutMs` (a half-open one that sends nothing included) or no complete request within
 * `requestTimeoutMs` is answered 408 and closed; an idle keep-alive connection is closed after
 * `keepAliveTimeoutMs`; any socket silent for `idleSocketTimeoutMs` is destroyed; and beyond
 * `maxConnections` open sockets new ones are dropped at once. Node checks the header and request
 * deadlines every `connectionsCheckingInterval` (a quarter of the headers timeout, at most 5 s).
 * A WebSocket handshake is refused before the routes (`webSocketRefusal.ts`).
 */
export function createHttpServer(listener: RequestListener, limits: HttpTimeouts): Server {
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: Math.max(100, Math.min(5_000, Math.floor(limits.headersTimeoutMs / 4) || 5_000)),
    },
    refusingWebSockets(listener),
  );
  if (limits.idleSocketTimeoutMs > 0) server.setTimeout(limits.idleSocketTimeoutMs, (socket) => socket.destroy());
  if (limits.maxConnections > 0) server.maxConnections = limits.maxConnections;
  return server;
}

/** Listens on `port`/`host`; resolves once listening. */
export function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
