import { Router } from 'express';
import type { Database } from '../../db/index.js';
import { listLoans } from '../../app/loans.js';
import { UserInputError } from '../../app/errors.js';

function intParam(value: unknown, name: string, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  const parsed = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(parsed) || parsed > max) throw new UserInputError(`${name} must be a whole number from 0 to ${max}`, 400, { field: name });
  return parsed;
}

/** `/api/loan` (interface §4.1–4.3, SPEC §6). */
export function loanRoutes(db: Database): Router {
  const router = Router();
  router.get('/', async (req, res) => {
    const status = typeof req.query.status === 'string' ? req.query.status : undefined;
    const limit = intParam(req.query.limit, 'limit', 50, 1000);
    const offset = intParam(req.query.offset, 'offset', 0, Number.MAX_SAFE_INTEGER);
    res.json(await listLoans(db, res.locals.auth.accountId, { ...(status ? { status } : {}), limit, offset }));
  });
  return router;
}
