import { Router } from 'express';
import type { Database } from '../../db/index.js';
import { loadDefaultProduct } from '../../app/products.js';
import type { EngineHolder } from '../../app/engineHolder.js';
import { ADMIN_ROLE } from '../../metadata/index.js';
import { openApiDocument } from '../openapi.js';
import { loanListLimits } from '../loanListLimits.js';
import { notAuthorized } from '../authenticate.js';
import { methodNotAllowed } from '../methodNotAllowed.js';
import { queryParameters } from '../../http/queryParameters.js';

/**
 * `GET /api/openapi.json`: the REST routes' OpenAPI 3.1 document, with the caller account's
 * product fields and only the operations the API key's role may use.
 */
export function openApiRoutes(db: Database, engines: EngineHolder): Router {
  const router = Router();
  router.get('/openapi.json', async (req, res) => {
    queryParameters(req.query, []);
    const auth = res.locals.auth;
    const role = engines.engine.metadata.roles.get(auth.role);
    if (!role) return notAuthorized(res);
    const loans = role.metadata.collections.get('loans');
    const distributions = role.metadata.collections.get('distributions');
    const admin = role.name === ADMIN_ROLE;
    const product = await loadDefaultProduct(db, auth.accountId);
    res.json(
      openApiDocument(product, '/', {
        role: role.name,
        select: admin || loans !== undefined,
        insert: admin || (loans?.insert ?? null) !== null,
        update: admin || (loans?.update ?? null) !== null,
        delete: admin || (loans?.delete ?? null) !== null,
        productUpdate: admin,
        accountUpdate: admin,
        // issue 32 (api/investorAccess.ts): a filtered read of distributions reaches its own person with person_id
        statements: admin || distributions?.selectFilter === null || (distributions !== undefined && auth.variables.has('person_id')),
        remittances: admin || distributions?.selectFilter === null,
        remittanceMark: admin,
        // A person shown with a loan can be null when the role filters (or cannot see) people or the links.
        filtered: !admin && ['loans', 'borrows', 'guarantees', 'people'].some((name) => {
          const seen = role.metadata.collections.get(name);
          return !seen || seen.selectFilter !== null;
        }),
      }, loanListLimits(engines.engine.options.maxRows)),
    );
  });
  router.all('/openapi.json', methodNotAllowed('GET'));
  return router;
}
