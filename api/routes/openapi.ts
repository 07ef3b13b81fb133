import { Router } from 'express';
import type { Database } from '../../db/index.js';
import { loadDefaultProduct } from '../../app/products.js';
import { openApiDocument } from '../openapi.js';

/** `GET /api/openapi.json`: the REST routes' OpenAPI 3.1 document, with the caller account's product fields. */
export function openApiRoutes(db: Database): Router {
  const router = Router();
  router.get('/openapi.json', async (_req, res) => {
    const product = await loadDefaultProduct(db, res.locals.auth.accountId);
    res.json(openApiDocument(product, '/'));
  });
  return router;
}
