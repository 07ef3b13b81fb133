import express, { Router, type Request, type Response } from 'express';
import { randomUUID } from 'node:crypto';
import type { Logger } from '../logger.js';
import type { Database } from '../../db/index.js';
import { RequestError, type GraphRequest } from '../../engine/index.js';
import type { EngineHolder } from '../../app/engineHolder.js';

const JSON_TYPE = 'application/json; charset=utf-8';
const GRAPHQL_RESPONSE_TYPE = 'application/graphql-response+json; charset=utf-8';

/** The account a request runs against: by default the API key's (`requireApiKey`). */
export type AccountOfRequest = (res: Response) => string;
const accountOfApiKey: AccountOfRequest = (res) => res.locals.auth.accountId;

/**
 * `POST /api/graph` (GraphQL over HTTP) and `POST /api/graph/explain`. The response body is
 * the JSON text PostgreSQL built, forwarded without parsing. The dashboard's query console
 * mounts the same routes with its session's account as `accountOf`.
 */
export function graphRoutes(db: Database, engines: EngineHolder, bodyLimitBytes: number, logger: Logger, accountOf: AccountOfRequest = accountOfApiKey): Router {
  const router = Router();
  const parseJson = express.json({ limit: bodyLimitBytes, type: () => true, strict: false });

  router.post('/', parseJson, async (req, res) => {
    const responseType = prefersGraphQLResponse(req) ? GRAPHQL_RESPONSE_TYPE : JSON_TYPE;
    if (!isJsonRequest(req)) return sendErrors(res, 415, responseType, 'invalid-request', 'send the request as application/json');
    try {
      const body = await engines.engine.execute(db, req.body as GraphRequest, accountOf(res));
      res.status(200).type(responseType).send(body);
    } catch (error) {
      if (!(error instanceof RequestError)) throw error;
      // application/json answers every GraphQL-level error with 200 (GraphQL over HTTP §legacy);
      // the graphql-response+json type uses 400 for a request that could not be executed.
      const status = error.stage === 'request' || (responseType === GRAPHQL_RESPONSE_TYPE && error.stage === 'document') ? 400 : 200;
      res.status(status).type(responseType).send(JSON.stringify({ errors: error.errors }));
    }
  });

  router.get('/', (_req, res) => {
    res.status(405).set('Allow', 'POST').type(JSON_TYPE).send(JSON.stringify({ errors: [{ message: 'use POST for /api/graph', extensions: { code: 'method-not-allowed' } }] }));
  });

  router.post('/explain', parseJson, async (req, res) => {
    if (!isJsonRequest(req)) return sendErrors(res, 415, JSON_TYPE, 'invalid-request', 'send the request as application/json');
    try {
      res.json(await engines.engine.explain(db, req.body as GraphRequest, accountOf(res)));
    } catch (error) {
      if (!(error instanceof RequestError)) throw error;
      res.status(400).json({ errors: error.errors });
    }
  });
  // Body problems on these routes are answered in GraphQL's shape: an `errors` array.
  router.use((error: unknown, req: Request, res: Response, _next: (error?: unknown) => void) => {
    const type = (error as { type?: string }).type;
    if (type === 'entity.too.large') return sendErrors(res, 413, JSON_TYPE, 'request-too-large', `the request body is over ${bodyLimitBytes} bytes (BODY_LIMIT_BYTES)`);
    if (type === 'entity.parse.failed' || type === 'encoding.unsupported' || type === 'charset.unsupported')
      return sendErrors(res, 400, JSON_TYPE, 'invalid-request', 'the request body is not valid JSON');
    // Anything else is ours: logged with an id, censored on the wire.
    const id = randomUUID();
    logger.error({ errorId: id, path: req.path, err: error }, 'internal error');
    res.status(500).type(JSON_TYPE).send(JSON.stringify({ errors: [{ message: 'internal error', extensions: { code: 'internal', id } }] }));
  });
  return router;
}

function isJsonRequest(req: Request): boolean {
  const type = req.get('content-type');
  return !type || /^application\/(json|graphql-response\+json)\b/i.test(type) || /\+json\b/i.test(type);
}

function prefersGraphQLResponse(req: Request): boolean {
  const accept = req.get('accept') ?? '';
  return accept.includes('application/graphql-response+json') && !/application\/json/.test(accept.split('application/graphql-response+json')[0] ?? '');
}

function sendErrors(res: Response, status: number, type: string, code: string, message: string): void {
  res.status(status).type(type).send(JSON.stringify({ errors: [{ message, extensions: { code } }] }));
}
