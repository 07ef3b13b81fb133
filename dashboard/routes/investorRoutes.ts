import { Router, type Request, type Response } from 'express';
import type { Database } from '../../db/index.js';
import type { Logger } from '../../app/logger.js';
import { UserInputError } from '../../app/errors.js';
import { businessDate } from '../../app/ledgerReads.js';
import { countInvestors, investorStatement, investorStatementCsv, listInvestors, monthToDate, statementPeriod, type StatementPeriod } from '../../app/investorStatements.js';
import { listRemittances, markRemitted, remittanceCsv, remittanceRun } from '../../app/remittances.js';
import { statementPdf } from '../../app/statementPdf.js';
import { errorPage } from '../pages/errorPage.js';
import { investorListHref, investorListPage, investorPage, remittancePage, REMITTANCES_PATH } from '../pages/investorPages.js';
import { sessionOf } from '../session.js';
import { submitOnce } from '../formOnce.js';
import { notFoundPage } from './loanRoutes.js';

/** The period of `?from=&to=` (default: the business date's month so far), or the refusal's message with the default. */
async function periodOf(db: Database, accountId: string, given: object): Promise<{ period: StatementPeriod; error: string | null }> {
  const query = new Map(Object.entries(given));
  const from: unknown = query.get('from');
  const to: unknown = query.get('to');
  if (from === undefined && to === undefined) return { period: monthToDate(await businessDate(db, accountId)), error: null };
  try {
    return { period: statementPeriod(typeof from === 'string' ? from : undefined, typeof to === 'string' ? to : undefined), error: null };
  } catch (error) {
    if (!(error instanceof UserInputError)) throw error;
    return { period: monthToDate(await businessDate(db, accountId)), error: `Not shown: ${error.message}. This is the month so far.` };
  }
}

/** Investors a page of the list (it was every investor up to 500, the rest never shown). */
const INVESTORS_PAGE_SIZE = 50;
/** The remittances the run's page lists, newest first. */
const RECENT_REMITTANCES = 12;

/** The notices a mark can redirect with (`?done=`), from a fixed list. */
const NOTICES: ReadonlyMap<string, string> = new Map([['remitted', 'The period was marked remitted: its lines are stamped and will not be paid again.']]);

/**
 * Investors and the remittance run (issue 32): `GET /investors` (who funds loans), `GET
 * /investors/:id?from=&to=` (a person's statement and distribution lines; `statement.csv` and
 * `statement.pdf` download it), `GET /remittances?from=&to=` (what to pay each investor;
 * `remittances.csv`), `POST /remittances` (mark the period remitted by the session's admin: 303
 * back to the run with a notice; a refusal is the page again, 400 or 409, with the reason at the top).
 */
export function investorRoutes(db: Database, logger: Logger): Router {
  const router = Router();

  router.get('/investors', async (req, res) => {
    const session = sessionOf(res);
    const pageText = new Map(Object.entries(req.query)).get('page') ?? '1';
    const page = typeof pageText === 'string' && /^\d{1,7}$/.test(pageText) ? Number(pageText) : NaN;
    if (!(page >= 1)) {
      return res.status(400).type('html').send(errorPage('The list of investors could not be shown', 'The parameter “page” is wrong: expected a whole number from 1 to 9999999.', session.viewer));
    }
    const total = await countInvestors(db, session.admin.accountId);
    // A page past the last (the list shrank since the link was made): the last page instead.
    const last = Math.max(1, Math.ceil(total / INVESTORS_PAGE_SIZE));
    if (page > last) return res.redirect(303, investorListHref(last));
    const investors = await listInvestors(db, session.admin.accountId, INVESTORS_PAGE_SIZE, (page - 1) * INVESTORS_PAGE_SIZE);
    res.type('html').send(investorListPage(session.viewer, { investors, total, page, pageSize: INVESTORS_PAGE_SIZE }));
  });

  const statementOf = async (req: Request, res: Response) => {
    const accountId = sessionOf(res).admin.accountId;
    const { period, error } = await periodOf(db, accountId, req.query);
    const statement = await investorStatement(db, accountId, String(req.params.id), period);
    if (!statement) notFoundPage(res, 'person');
    return statement ? { statement, error } : null;
  };

  router.get('/investors/:id', async (req, res) => {
    const found = await statementOf(req, res);
    if (found) res.type('html').send(investorPage(sessionOf(res).viewer, found.statement, found.error));
  });

  const download = (format: 'csv' | 'pdf') => async (req: Request, res: Response) => {
    const found = await statementOf(req, res);
    if (!found) return;
    if (found.error) return void res.status(400).type('html').send(errorPage('The download could not be made', found.error, sessionOf(res).viewer));
    const { statement } = found;
    const name = `statement-${statement.person.id.slice(0, 8)}-${statement.period.from}-${statement.period.to}`;
    if (format === 'csv') {
      return void res.type('text/csv; charset=utf-8; header=present').set('Content-Disposition', `attachment; filename="${name}.csv"`).send(investorStatementCsv(statement));
    }
    const pdf = await statementPdf(statement, await businessDate(db, sessionOf(res).admin.accountId));
    res.type('application/pdf').set('Content-Disposition', `attachment; filename="${name}.pdf"`).send(pdf);
  };
  router.get('/investors/:id/statement.csv', download('csv'));
  router.get('/investors/:id/statement.pdf', download('pdf'));

  const showRun = async (res: Response, period: StatementPeriod, status: number, notice: string | null, error: string | null) => {
    const session = sessionOf(res);
    const accountId = session.admin.accountId;
    // One more than shown, to say when there are older ones (they were left off unsaid).
    const [run, recent] = [await remittanceRun(db, accountId, period), await listRemittances(db, accountId, RECENT_REMITTANCES + 1)];
    res.status(status).type('html').send(remittancePage(session.viewer, { run, recent: recent.slice(0, RECENT_REMITTANCES), olderRemittances: recent.length > RECENT_REMITTANCES, notice, error }));
  };

  router.get('/remittances', async (req, res) => {
    const { period, error } = await periodOf(db, sessionOf(res).admin.accountId, req.query);
    const done = new Map(Object.entries(req.query)).get('done');
    await showRun(res, period, 200, typeof done === 'string' ? (NOTICES.get(done) ?? null) : null, error);
  });

  router.get('/remittances.csv', async (req, res) => {
    const accountId = sessionOf(res).admin.accountId;
    const { period, error } = await periodOf(db, accountId, req.query);
    if (error) return void res.status(400).type('html').send(errorPage('The download could not be made', error, sessionOf(res).viewer));
    const run = await remittanceRun(db, accountId, period);
    res.type('text/csv; charset=utf-8; header=present').set('Content-Disposition', `attachment; filename="remittance-${period.from}-${period.to}.csv"`).send(remittanceCsv(run));
  });

  router.post('/remittances', async (req, res) => {
    const session = sessionOf(res);
    const form = new Map(Object.entries((req.body ?? {}) as Record<string, unknown>));
    // The run as the page showed it (total and line count): a run that changed since is refused (409).
    const body = { from: form.get('from'), to: form.get('to'), ...(form.has('total') || form.has('line_count') ? { total: form.get('total'), line_count: form.get('line_count') } : {}) };
    try {
      // Once per rendering of the form (formOnce.ts): a second POST of it is answered with the
      // first's notice, not with "was remitted already".
      const outcome = await submitOnce<never>(db, req, res, async (on) => {
        const remittance = await markRemitted(on, session.admin.accountId, body, { adminId: session.admin.adminId });
        logger.info({ remittanceId: remittance.id, admin: session.admin.adminEmail, from: remittance.period.from, to: remittance.period.to }, 'remittance marked');
        return { redirect: `${REMITTANCES_PATH}?from=${remittance.period.from}&to=${remittance.period.to}&done=remitted` };
      });
      if (outcome && 'redirect' in outcome) res.redirect(303, outcome.redirect);
    } catch (error) {
      if (!(error instanceof UserInputError)) throw error;
      const { period } = await periodOf(db, session.admin.accountId, body);
      await showRun(res, period, error.status === 409 ? 409 : 400, null, `Not marked: ${error.message}.`);
    }
  });
  return router;
}
