import type { RequestHandler } from 'express';

/**
 * The answer to a method a REST path does not take (every `/api/*` route but `/api/graph`, which
 * has its own): 405 with `Allow` naming the methods it does take — `HEAD` with every `GET`, which
 * Express answers from the GET route — and the REST routes' JSON error. OPTIONS too: the API
 * answers no preflight (no CORS), and each path answers it the same way.
 */
export function methodNotAllowed(...methods: readonly string[]): RequestHandler {
  const allow = methods.flatMap((method) => (method === 'GET' ? ['GET', 'HEAD'] : [method])).join(', ');
  return (req, res) => {
    res.status(405).setHeader('Allow', allow);
    res.json({ error: `${req.method} is not supported here; this path takes ${allow}` });
  };
}
