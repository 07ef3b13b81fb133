import { Router, type Request, type Response } from 'express';
import { LosslessNumber, stringify } from 'lossless-json';
import type { Database } from '../../db/index.js';
import type { EngineHolder } from '../../app/engineHolder.js';
import { statementPeriod } from '../../app/investorStatements.js';
import { findRemittance, markRemitted, remittanceCsv, remittanceRun, type Remittance, type RemittanceInvestor, type RemittanceRun, type RemittanceSummary } from '../../app/remittances.js';
import { isAdminKey, readsEveryInvestor } from '../investorAccess.js';
import { downloadFormat, NotAcceptable } from '../downloadFormat.js';
import { queryParameters } from '../../http/queryParameters.js';
import { methodNotAllowed } from '../methodNotAllowed.js';
import type { ReadRouting } from '../readRouting.js';

const exact = (digits: string): LosslessNumber => new LosslessNumber(digits);

function investorJson(investor: RemittanceInvestor): Record<string, unknown> {
  return {
    person_id: investor.personId,
    name: investor.name,
    principal: exact(investor.principal),
    interest: exact(investor.interest),
    fees: exact(investor.fees),
    adjustments: exact(investor.adjustments),
    total: exact(investor.total),
    line_count: investor.lineCount,
    earliest_date: investor.earliestDate,
  };
}

function totalsJson(totals: RemittanceRun['totals']): Record<string, unknown> {
  return {
    principal: exact(totals.principal),
    interest: exact(totals.interest),
    fees: exact(totals.fees),
    adjustments: exact(totals.adjustments),
    total: exact(totals.total),
    line_count: totals.lineCount,
  };
}

function summaryJson(summary: RemittanceSummary): Record<string, unknown> {
  return {
    id: summary.id,
    period: summary.period,
    remitted_at: summary.remittedAt,
    remitted_by: summary.remittedBy,
    total: exact(summary.total),
    line_count: summary.lineCount,
  };
}

function remittanceJson(remittance: Remittance): string {
  return stringify({
    remittance: { ...summaryJson(remittance), currency: remittance.currency, investors: remittance.investors.map(investorJson), totals: totalsJson(remittance.totals) },
  })!;
}

/** JSON or CSV for a run or a remittance; 406 (answered) → null. */
function formatOf(req: Request, res: Response, query: ReadonlyMap<string, string>): 'json' | 'csv' | null {
  try {
    return downloadFormat(req, query, ['json', 'csv']) as 'json' | 'csv';
  } catch (error) {
    if (!(error instanceof NotAcceptable)) throw error;
    res.status(406).json({ error: error.message });
    return null;
  }
}

function sendCsv(res: Response, name: string, text: string): void {
  res.status(200).type('text/csv; charset=utf-8; header=present').set('Content-Disposition', `attachment; filename="${name}.csv"`).send(text);
}

/**
 * `/api/remittances` (issue 32, `app/remittances.ts`): `GET ?from=&to=` what the lender owes each
 * investor for the period (JSON or CSV; for keys whose role reads every investor's lines);
 * `POST {from, to}` marks the period remitted (admin keys only; 201 with the remittance, 409 for
 * a period overlapping or before one remitted); `GET /{id}` a recorded remittance. With read
 * replicas (`routing`), a mark is recorded as the key's last write and answered with
 * `LoanQL-Consistency`: the key's next GraphQL read of `remittances` or `distributions` sees it.
 */
export function remittanceRoutes(db: Database, engines: EngineHolder, routing?: ReadRouting): Router {
  const router = Router();

  router.get('/', async (req, res) => {
    if (!readsEveryInvestor(engines, res, 'GET /api/remittances')) return;
    const query = queryParameters(req.query, ['from', 'to', 'format']);
    const format = formatOf(req, res, query);
    if (!format) return;
    const period = statementPeriod(query.get('from'), query.get('to'));
    const run = await remittanceRun(db, res.locals.auth.accountId, period);
    res.set('Cache-Control', 'private, no-store');
    if (format === 'csv') return sendCsv(res, `remittance-${period.from}-${period.to}`, remittanceCsv(run));
    res
      .status(200)
      .type('application/json')
      .send(
        stringify({
          period: run.period,
          business_date: run.businessDate,
          currency: run.currency,
          investors: run.investors.map(investorJson),
          totals: totalsJson(run.totals),
          remitted: run.remitted.map(summaryJson),
        }),
      );
  });

  router.post('/', async (req, res) => {
    if (!isAdminKey(engines, res, 'marking a period remitted')) return;
    const remittance = await markRemitted(db, res.locals.auth.accountId, req.body === undefined ? {} : req.body, { keyId: res.locals.auth.keyId });
    if (routing) await routing.wrote(res.locals.auth, res).catch(() => undefined);
    res.status(201).location(`/api/remittances/${remittance.id}`).type('application/json').send(remittanceJson(remittance));
  });

  router.get('/:id', async (req, res) => {
    if (!readsEveryInvestor(engines, res, 'GET /api/remittances/{id}')) return;
    const format = formatOf(req, res, queryParameters(req.query, ['format']));
    if (!format) return;
    const remittance = await findRemittance(db, res.locals.auth.accountId, req.params.id!);
    if (!remittance) return void res.status(404).json({ error: 'no such remittance' });
    res.set('Cache-Control', 'private, no-store');
    if (format === 'csv') return sendCsv(res, `remittance-${remittance.period.from}-${remittance.period.to}`, remittanceCsv(remittance));
    res.status(200).type('application/json').send(remittanceJson(remittance));
  });

  router.all('/', methodNotAllowed('GET', 'POST'));
  router.all('/:id', methodNotAllowed('GET'));
  return router;
}
