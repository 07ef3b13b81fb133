import express, { Router, type ErrorRequestHandler, type RequestHandler, type Response } from 'express';
import { randomUUID } from 'node:crypto';
import { isConnectionError, isStatementTimeout, isWriteConflict, type Database } from '../db/index.js';
import { bodyProblem } from '../http/bodyErrors.js';
import { graphResponseType } from '../http/graphResponseType.js';
import { sendGraphTimeout, sendGraphUnavailable } from '../http/unavailable.js';
import type { Logger } from '../app/logger.js';
import { metadataWarnings, type EngineHolder } from '../app/engineHolder.js';
import { LoginThrottle } from '../app/loginThrottle.js';
import { listApiKeys } from '../app/apiKeys.js';
import { assetRoutes, findAssetsDirectory } from './assets.js';
import { consolePage } from './pages/consolePage.js';
import { errorPage } from './pages/errorPage.js';
import { metadataPage } from './pages/metadataPage.js';
import { overviewPage } from './pages/overviewPage.js';
import { webhookRoutes } from './routes/webhookRoutes.js';
import { servicingSettingsRoutes } from './routes/servicingSettingsRoutes.js';
import { accountProfileRoutes } from './routes/accountProfileRoutes.js';
import { apiKeyRoutes } from './routes/apiKeyRoutes.js';
import { loginRoutes } from './routes/loginRoutes.js';
import { loanRoutes } from './routes/loanRoutes.js';
import { peopleRoutes } from './routes/peopleRoutes.js';
import { collectionsRoutes } from './routes/collectionsRoutes.js';
import { taskRoutes } from './routes/taskRoutes.js';
import { investorRoutes } from './routes/investorRoutes.js';
import { operationsRoutes, type OperationsSources } from './routes/operationsRoutes.js';
import { ServicingData } from './servicingData.js';
import { TASK_FILTER_EXPECTED, taskFilterOf } from './taskForm.js';
import { refuseNulInForm } from './formFields.js';
import { refuseRepeatedQueryParameters } from './queryCheck.js';
import { securityHeaders } from './securityHeaders.js';
import { requireCsrfHeader, requireFormCsrfToken, requireJsonSession, requirePageSession, sessionOf } from './session.js';

/**
 * The console's GraphQL endpoint for the account `accountOfSession` names: the API's own
 * `/api/graph` handling, which `server/` passes in so that `dashboard/` never imports `api/`.
 */
export type ConsoleGraphRoutes = (accountOfSession: (res: Response) => string) => RequestHandler;

export interface DashboardDeps {
  readonly db: Database;
  readonly engines: EngineHolder;
  readonly logger: Logger;
  /** The console's GraphQL route (see `ConsoleGraphRoutes`). */
  readonly consoleGraphRoutes: ConsoleGraphRoutes;
  /** Allow webhook endpoints on private addresses (`WEBHOOK_ALLOW_PRIVATE=1`). */
  readonly allowPrivateWebhooks?: boolean;
  /** Login throttling state; one per service by default. */
  readonly loginThrottle?: LoginThrottle;
  /** What the operations page shows (metrics, admission, rate limits); without it, the page says they are off. */
  readonly operations?: OperationsSources;
}

const NO_OPERATIONS: OperationsSources = { metrics: null, admission: null, defaultRateLimit: null, metricsTokenSet: false, workers: 1, port: 8080 };

/**
 * The dashboard, mounted at `/dashboard`: login, Settings > API keys and the query console.
 * Every page after login is scoped to the session's account, as the API is to its key's.
 */
export function dashboardRoutes(deps: DashboardDeps): Router {
  const { db, logger } = deps;
  const router = Router();
  const assets = findAssetsDirectory();
  if (!assets) logger.warn('dashboard assets are not built (run `npm run build`); the query console will not load');

  router.use(securityHeaders);
  router.use('/assets', assetRoutes(assets));
  // A parameter given twice is a 400 page naming it (queryCheck.ts): the login page's here, every
  // other page's once the session is known (so its page has the navigation).
  router.use('/login', refuseRepeatedQueryParameters);
  router.use(loginRoutes({ db, logger, throttle: deps.loginThrottle ?? new LoginThrottle() }));

  // The console's GraphQL: the API's own routes, with the session's account instead of a key's.
  router.use('/graph', requireJsonSession(db), requireCsrfHeader, deps.consoleGraphRoutes((res) => sessionOf(res).admin.accountId));
  // What fails before the console's routes (its session's read) is answered as they answer, not as a page.
  router.use('/graph', consoleErrors(logger));

  router.use(requirePageSession(db));
  router.use(refuseRepeatedQueryParameters);
  router.use(express.urlencoded({ extended: false, limit: '16kb' }));
  router.use(requireFormCsrfToken);
  router.use(refuseNulInForm);

  router.get('/', async (req, res) => {
    const session = sessionOf(res);
    // Whose open tasks the overview lists: the Tasks page's `?assignee=`, refused alike.
    const filter = taskFilterOf(new Map(Object.entries(req.query)).get('assignee'));
    if (filter === null) {
      return res.status(400).type('html').send(errorPage('The overview could not be shown', `The parameter “assignee” is wrong: ${TASK_FILTER_EXPECTED}.`, session.viewer));
    }
    const keys = await listApiKeys(db, session.admin.accountId);
    const start = await (await servicing()).startPage(db, session.admin.accountId, { filter, me: session.admin.adminId });
    res.type('html').send(overviewPage(session.viewer, { activeKeys: keys.filter((key) => key.active).length }, start, session.admin.adminId));
  });
  router.get('/console', (_req, res) => {
    res.type('html').send(consolePage(sessionOf(res).viewer));
  });
  router.get('/metadata', async (_req, res) => {
    const session = sessionOf(res);
    const { engine } = deps.engines;
    // This account's keys and endpoints the metadata leaves without what they use (never another account's).
    const warnings = await metadataWarnings(engine, db, session.admin.accountId);
    res.type('html').send(metadataPage(session.viewer, engine.metadata, deps.engines.status, warnings));
  });
  router.use(operationsRoutes(db, deps.engines, deps.operations ?? NO_OPERATIONS));
  router.use('/settings', apiKeyRoutes(db, logger, deps.engines));
  const servicing = lazyServicingData(db);
  router.use('/loans', loanRoutes(db, servicing, logger));
  router.use('/people', peopleRoutes(db, servicing));
  router.use(taskRoutes(db, servicing));
  router.use(collectionsRoutes(db));
  router.use(investorRoutes(db, logger));
  router.use('/settings', webhookRoutes(db, deps.engines, logger, deps.allowPrivateWebhooks ?? false));
  router.use('/settings', servicingSettingsRoutes(db, logger));
  router.use('/settings', accountProfileRoutes(db, logger));

  router.use((_req, res) => {
    res.status(404).type('html').send(errorPage('Page not found', 'There is no dashboard page at this address.', res.locals.dashboard?.viewer));
  });
  router.use(dashboardErrors(logger));
  return router;
}

/** The servicing pages' engine, built on first use (and again after a failed attempt). */
function lazyServicingData(db: Database): () => Promise<ServicingData> {
  let data: Promise<ServicingData> | null = null;
  return () =>
    (data ??= ServicingData.create(db).catch((error: unknown) => {
      data = null;
      throw error;
    }));
}

/**
 * The console's endpoints (`/dashboard/graph…`, fetched by its script): a failure before their
 * own handler — the session's read with the database out of reach — in GraphQL's `errors` shape
 * and the type `Accept` ranks first, as `/api/graph` answers it. It was the dashboard's HTML page.
 */
function consoleErrors(logger: Logger): ErrorRequestHandler {
  return (error, req, res, _next) => {
    if (res.headersSent) return res.end();
    const type = graphResponseType(req.get('accept'));
    if (isConnectionError(error)) return sendGraphUnavailable(res, type);
    if (isStatementTimeout(error)) return sendGraphTimeout(res, type);
    const id = randomUUID();
    logger.error({ errorId: id, method: req.method, path: req.baseUrl + req.path, err: error }, 'internal error');
    res.status(500).type(type).send(JSON.stringify({ errors: [{ message: 'internal error', extensions: { code: 'internal', id } }] }));
  };
}

/** Body problems are the client's (4xx); anything else is logged with an id and shown as just that id. */
function dashboardErrors(logger: Logger): ErrorRequestHandler {
  return (error, req, res, _next) => {
    if (res.headersSent) return res.end();
    const problem = bodyProblem(error, req, 'form');
    if (problem?.kind === 'too-large') {
      const limit = problem.limitBytes === undefined ? 'the most a form takes' : `${problem.limitBytes.toLocaleString('en-US')} bytes, the most a form takes`;
      return res.status(413).type('html').send(errorPage('The form is too large', `It is over ${limit}. Shorten what you entered and try again.`));
    }
    if (problem) return res.status(problem.status).type('html').send(errorPage('The form could not be read', 'Go back, reload the page and try again.'));
    if (isWriteConflict(error)) return res.status(409).type('html').send(errorPage('Someone changed this at the same moment', 'Nothing was saved. Go back and send the form again.'));
    if (isConnectionError(error)) {
      return res.status(503).set('Retry-After', '2').type('html').send(errorPage('The database is unavailable', 'Please try again in a few seconds.'));
    }
    if (isStatementTimeout(error)) {
      // A page over more rows than one statement may take (STATEMENT_TIMEOUT_MS): it was a 500 "Something went wrong".
      logger.warn({ event: 'statement.timeout', method: req.method, path: req.baseUrl + req.path }, 'a dashboard page ran past the statement timeout');
      const problem = 'The database stopped this page after the statement timeout (STATEMENT_TIMEOUT_MS). Ask for less — a shorter period, a narrower search or filter — or try again later.';
      return res.status(503).type('html').send(errorPage('The page took too long', problem, res.locals.dashboard?.viewer));
    }
    const id = randomUUID();
    logger.error({ errorId: id, method: req.method, path: req.path, err: error }, 'internal error');
    res.status(500).type('html').send(errorPage('Something went wrong', `The error was recorded with the id ${id}. Please try again.`));
  };
}
