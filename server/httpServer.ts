import { createServer, ServerResponse, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { HttpTimeouts } from '../app/config.js';
import { isGraphPath, isWebSocketHandshake, refusingWebSockets } from './webSocketRefusal.js';
import { isConsoleGraphPath } from '../api/graphSocket.js';

/** Takes a WebSocket handshake on `/api/graph` or `/dashboard/graph` (`api/graphSocket.ts`). */
export interface WebSocketUpgrades {
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
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
export function createHttpServer(listener: RequestListener, limits: HttpTimeouts, webSockets?: WebSocketUpgrades): Server {
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
  if (webSockets) {
    const plain = refusingWebSockets(listener);
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      if (isWebSocketHandshake(req) && (isGraphPath(req.url) || isConsoleGraphPath(req.url))) {
        // A WebSocket lives past the HTTP idle limit; its own pings keep it honest (graphSocket.ts).
        (socket as Duplex & { setTimeout?: (ms: number) => void }).setTimeout?.(0);
        webSockets.handleUpgrade(req, socket, head);
        return;
      }
      // With an 'upgrade' listener Node hands every Upgrade request here: answer the others as before.
      if (head.length) socket.unshift(head);
      const res = new ServerResponse(req);
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
