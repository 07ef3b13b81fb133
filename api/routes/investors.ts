import { Router, type Response } from 'express';
import { LosslessNumber, stringify } from 'lossless-json';
import type { Database } from '../../db/index.js';
import type { EngineHolder } from '../../app/engineHolder.js';
import { businessDate } from '../../app/ledgerReads.js';
import { investorStatement, investorStatementCsv, statementPeriod, type InvestorStatement } from '../../app/investorStatements.js';
import { statementPdf } from '../../app/statementPdf.js';
import { investorReach } from '../investorAccess.js';
import { downloadFormat, NotAcceptable } from '../downloadFormat.js';
import { queryParameters } from '../../http/queryParameters.js';
import { methodNotAllowed } from '../methodNotAllowed.js';

/** A decimal text as a JSON number with exactly its digits. */
const exact = (digits: string | null): LosslessNumber | null => (digits === null ? null : new LosslessNumber(digits));

/** The statement as `GET …/statement` answers it in JSON (OpenAPI `InvestorStatement`). */
export function statementJson(statement: InvestorStatement): string {
  const amounts = (a: InvestorStatement['totals']) => ({
    opening_principal: exact(a.openingPrincipal),
    funded: exact(a.funded),
    principal: exact(a.principal),
    interest: exact(a.interest),
    fees: exact(a.fees),
    adjustments: exact(a.adjustments),
    total: exact(a.total),
    closing_principal: exact(a.closingPrincipal),
  });
  return stringify({
    account_name: statement.accountName,
    currency: statement.currency,
    person: statement.person,
    period: statement.period,
    loans: statement.loans.map((loan) => ({ loan_id: loan.loanId, loan_name: loan.loanName, rate: exact(loan.rate), date_funded: loan.dateFunded, ...amounts(loan) })),
    totals: amounts(statement.totals),
    lines: statement.lines.map((line) => ({
      id: line.id,
      date: line.date,
      loan_id: line.loanId,
      payment_id: line.paymentId,
      component: line.component,
      amount: exact(line.amount),
      adjustment: line.adjustment,
      cause_payment_id: line.causePaymentId,
      remittance_id: line.remittanceId,
    })),
  })!;
}

/** Sends a statement in `format`; the file name says whose and which period. */
export async function sendStatement(res: Response, statement: InvestorStatement, format: 'json' | 'csv' | 'pdf', generatedOn: string): Promise<void> {
  const name = `statement-${statement.person.id.slice(0, 8)}-${statement.period.from}-${statement.period.to}`;
  res.set('Cache-Control', 'private, no-store');
  if (format === 'json') return void res.status(200).type('application/json').send(statementJson(statement));
  if (format === 'csv') {
    return void res.status(200).type('text/csv; charset=utf-8; header=present').set('Content-Disposition', `attachment; filename="${name}.csv"`).send(investorStatementCsv(statement));
  }
  const pdf = await statementPdf(statement, generatedOn);
  res.status(200).type('application/pdf').set('Content-Disposition', `attachment; filename="${name}.pdf"`).send(pdf);
}

/**
 * `GET /api/investors/{person_id}/statement?from=&to=&format=` (issue 32): the person's statement
 * for the period (`app/investorStatements.ts`) as JSON, CSV or PDF. A key reads whom its role
 * reaches (`investorAccess.ts`): an investor key only its own person; any other id — of another
 * person, another account, or none — is the same 404.
 */
export function investorRoutes(db: Database, engines: EngineHolder): Router {
  const router = Router();
  router.get('/:personId/statement', async (req, res) => {
    const reach = investorReach(engines, res, 'GET /api/investors/{person_id}/statement');
    if (!reach) return;
    const accountId = res.locals.auth.accountId;
    const query = queryParameters(req.query, ['from', 'to', 'format']);
    let format;
    try {
      format = downloadFormat(req, query, ['json', 'csv', 'pdf']);
    } catch (error) {
      if (!(error instanceof NotAcceptable)) throw error;
      return void res.status(406).json({ error: error.message });
    }
    const period = statementPeriod(query.get('from'), query.get('to'));
    const personId = req.params.personId!;
    const statement = reach.kind === 'own' && reach.personId.toLowerCase() !== personId.toLowerCase() ? null : await investorStatement(db, accountId, personId, period);
    if (!statement) return void res.status(404).json({ error: 'no such person' });
    await sendStatement(res, statement, format, await businessDate(db, accountId));
  });
  router.all('/:personId/statement', methodNotAllowed('GET'));
  return router;
}
