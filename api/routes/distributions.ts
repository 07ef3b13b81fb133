import { Router } from 'express';
import type { Database } from '../../db/index.js';
import type { EngineHolder } from '../../app/engineHolder.js';
import { distributionQuery, distributionsJson } from '../../app/distributionReads.js';
import { roleWith } from '../keyRole.js';
import { queryParameters } from '../../http/queryParameters.js';
import { methodNotAllowed } from '../methodNotAllowed.js';
import { distributionListLimits, pageOf } from '../loanListLimits.js';

/**
 * `GET /api/distributions?from=&to=&loan_id=&limit=&offset=` (SPEC §12 R10): the distribution
 * lines the key's role may read — an investor key its own, other roles the account's
 * (`app/distributionReads.ts`) — a page at a time (`limit` 0–1000, default 1000; `next`).
 */
export function distributionRoutes(db: Database, engines: EngineHolder): Router {
  const router = Router();
  router.get('/', async (req, res) => {
    const caller = roleWith(engines, res, 'select', '/api/distributions');
    if (!caller) return;
    const engine = engines.engine.forRole(caller.role.name);
    if (!engine || !caller.role.metadata.collections.has('distributions')) {
      return void res.status(403).json({
        error: `this API key's role ${caller.role.name} cannot read distributions`,
        role: caller.role.name,
        permission: 'distributions.select',
      });
    }
    const params = queryParameters(req.query, ['from', 'to', 'loan_id', 'limit', 'offset']);
    const query = distributionQuery(params, pageOf(params, distributionListLimits(engines.engine.options.maxRows)));
    res.status(200).type('application/json').send(await distributionsJson(db, engine, caller.principal, query));
  });
  router.all('/', methodNotAllowed('GET'));
  return router;
}
