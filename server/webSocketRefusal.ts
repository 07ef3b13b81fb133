import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';

/** The one answer a WebSocket handshake gets until subscriptions exist (README, "GraphQL API"). */
export const WEB_SOCKETS_NOT_SUPPORTED = 'WebSocket subscriptions are not supported yet: send queries and mutations over HTTP (POST or GET /api/graph)';

/**
 * `listener`, except that a WebSocket handshake (`Upgrade: websocket`) is refused with a 400 that
 * says so, instead of reaching the routes (where `/api/graph` would call it a request without a
 * query). Only WebSocket: with no `upgrade` listener on the server, Node hands every other
 * `Upgrade` request (e.g. `h2c`) to the routes as a plain HTTP/1.1 request, as before.
 */
export function refusingWebSockets(listener: RequestListener): RequestListener {
  return (req, res) => {
    if (!isWebSocketHandshake(req)) return listener(req, res);
    refuse(req, res);
  };
}

/** `/api/graph`, `/api/graph/`, with or without a query string. */
export function isGraphPath(url: string | undefined): boolean {
  return /^\/api\/graph\/?(\?|$)/.test(url ?? '');
}

export function isWebSocketHandshake(req: IncomingMessage): boolean {
  const upgrade = req.headers.upgrade;
  return upgrade !== undefined && upgrade.split(',').some((protocol) => protocol.trim().toLowerCase().startsWith('websocket'));
}

function refuse(req: IncomingMessage, res: ServerResponse): void {
  // The connection asked to change protocol; it ends with this answer rather than stay HTTP/1.1.
  res.setHeader('Connection', 'close');
  res.setHeader('Cache-Control', 'no-store');
  if (isGraphPath(req.url)) {
    res.writeHead(400, { 'Content-Type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify({ errors: [{ message: WEB_SOCKETS_NOT_SUPPORTED, extensions: { code: 'invalid-request' } }] }));
    return;
  }
  res.writeHead(400, { 'Content-Type': 'text/plain; charset=utf-8' });
  res.end('WebSocket connections are not supported\n');
}
