import { Router, type Request, type Response } from 'express';
import { databaseInTransaction, type Database, type Queryable } from '../../db/index.js';
import { idempotencyKeyOf, requestHash, runIdempotently } from '../../app/idempotency.js';
import { LoanReader } from '../../app/loanReads.js';
import { dayParameter, ledgerJson, payoffQuoteJson } from '../../app/ledgerReads.js';
import { createLoan, updateLoan } from '../../app/loanWrites.js';
import { loanWriteGrant } from '../../app/loanWriteGrant.js';
import { removeLoan } from '../../app/loanRemoval.js';
import type { Product } from '../../app/products.js';
import { UserInputError } from '../../app/errors.js';
import { LOAN_STATUSES, type LoanStatus } from '../../app/products.js';
import type { EngineHolder } from '../../app/engineHolder.js';
import { ADMIN_ROLE, type Role, type RowFilter } from '../../metadata/index.js';
import type { Principal } from '../../engine/index.js';
import { guardHolds, notAuthorized } from '../authenticate.js';
import { roleWith } from '../keyRole.js';
import { activeKeyGuard } from '../../app/keyGuards.js';
import { ReadRouting } from '../readRouting.js';
import { loanListLimits, pageOf, type LoanListLimits } from '../loanListLimits.js';
import { queryParameters } from '../../http/queryParameters.js';
import { methodNotAllowed } from '../methodNotAllowed.js';
import { downloadFormat } from '../downloadFormat.js';
import { checkLetterDay, payoffLetter, payoffLetterFileName } from '../../app/payoffLetters.js';
import { payoffLetterPdf } from '../../app/payoffLetterPdf.js';

const LIST_PARAMETERS = ['status', 'limit', 'offset'];
/** The list's query string, read through a `Map` (names are the client's); `limits` from MAX_ROWS (`loanListLimits`). */
function listQuery(raw: Record<string, unknown>, limits: LoanListLimits): { status?: LoanStatus; limit: number; offset: number } {
  const query = queryParameters(raw, LIST_PARAMETERS);
  const status = query.get('status');
  if (status !== undefined && !(typeof status === 'string' && (LOAN_STATUSES as readonly string[]).includes(status))) {
    throw new UserInputError(`status must be one of ${LOAN_STATUSES.join(', ')}`, 400, { status: `expected one of ${LOAN_STATUSES.join(', ')}` });
  }
  return {
    ...(status ? { status: status as LoanStatus } : {}),
    ...pageOf(query, limits),
  };
}

function sendJson(res: Response, status: number, text: string): void {
  res.status(status).type('application/json').send(text);
}

/**
 * The request body; a request with no body at all is `{}`, like an empty one (README). The JSON
 * parser sets `req.body` only when the request has a body (a Content-Length or a
 * Transfer-Encoding), so `curl -X POST` without `-d` would otherwise reach the rules as undefined.
 */
function bodyOf(req: Request): unknown {
  return req.body === undefined ? {} : req.body;
}

function notFound(res: Response): void {
  res.status(404).json({ error: 'no such loan' });
}

/**
 * `/api/loan` (interface §4.1–4.3, SPEC §6). Thin: query and path checks here, every rule in
 * `app/loanInput.ts` and `app/loanWrites.ts`, every read through the engine (`app/loanReads.ts`).
 */
export function loanRoutes(db: Database, engines: EngineHolder, routing?: ReadRouting): Router {
  const router = Router();
  /**
   * With read replicas, GETs read from one that has replayed the key's last write
   * (`readRouting.ts`); the key itself was not read yet (`server/createApp.ts`), so this is its
   * check, made first: null (after answering 403) when the key is no longer active.
   */
  const readDb = async (res: Response): Promise<Database | null> => {
    if (!routing) return db;
    const routed = await routing.forRead(res.locals.auth, res.locals.readAtLeast ?? null);
    if (!routed) notAuthorized(res);
    return routed;
  };
  /** With read replicas, a write's answer carries the primary's position (`LoanQL-Consistency`). */
  const wrote = async (res: Response): Promise<void> => {
    if (routing) await routing.wrote(res.locals.auth, res).catch(() => undefined);
  };
  let reader: Promise<LoanReader> | null = null;
  const loans = (): Promise<LoanReader> => {
    // The engine's MAX_ROWS caps the loans' own lists too (borrowers, guarantors), as in GraphQL.
    reader ??= LoanReader.create(db, engines.engine.options.maxRows).catch((error: unknown) => {
      reader = null;
      throw error;
    });
    return reader;
  };
  /** The reader as the caller's role sees loans (and the people and links shown with them). */
  const loansAs = async (role: Role, filters?: ReadonlyMap<string, RowFilter | null>) =>
    (await loans()).forRole(role.metadata, role.name === ADMIN_ROLE, filters);

  router.get('/', async (req, res) => {
    const from = await readDb(res);
    if (!from) return;
    const caller = roleWith(engines, res, 'select', '/api/loan');
    if (!caller) return;
    const query = listQuery(req.query as Record<string, unknown>, loanListLimits(engines.engine.options.maxRows));
    const text = await (await loansAs(caller.role)).pageJson(from, caller.principal, query);
    ReadRouting.tell(res, from);
    sendJson(res, 200, text);
  });

  router.get('/:id', async (req, res) => {
    const from = await readDb(res);
    if (!from) return;
    const caller = roleWith(engines, res, 'select', '/api/loan');
    if (!caller) return;
    // It takes no query parameter: one given (`?date=`, `?format=`) is a 400, never ignored.
    queryParameters(req.query, []);
    const text = await (await loansAs(caller.role)).loanJson(from, caller.principal, req.params.id);
    ReadRouting.tell(res, from);
    if (text === null) return notFound(res);
    sendJson(res, 200, text);
  });

  /** The role's grant for a loan write (`app/loanWriteGrant.ts`): its columns, filter, check and presets. */
  const grantOf = (caller: { role: Role; principal: Principal }, kind: 'insert' | 'update', reader: LoanReader) => (product: Product) =>
    loanWriteGrant(caller.role, kind, caller.principal, product, reader, (tx) => databaseInTransaction(db, tx));

  /**
   * The ledger's reads (SPEC §12): `/payoff?date=` (R5's quote and its parts) and `/ledger`
   * (balances, payments with their allocations, fees). The loan must be one the key's role
   * reads; `date` defaults to the account's business date. `/payoff` with `?format=pdf` (or an
   * Accept preferring `application/pdf`) is the payoff letter instead (`app/payoffLetters.ts`):
   * the loan's name, borrowers and property as the role reads them, a day before funding a 400.
   */
  const ledgerRoute = (read: typeof payoffQuoteJson, parameters: readonly string[] = ['date']) => async (req: Request, res: Response) => {
    const from = await readDb(res);
    if (!from) return;
    const caller = roleWith(engines, res, 'select', '/api/loan');
    if (!caller) return;
    const day = dayParameter('date', queryParameters(req.query, parameters).get('date'));
    const id = String(req.params.id);
    if ((await (await loansAs(caller.role)).loanJson(from, caller.principal, id)) === null) return notFound(res);
    const text = await read(from, res.locals.auth.accountId, id, day);
    ReadRouting.tell(res, from);
    if (text === null) return notFound(res);
    sendJson(res, 200, text);
  };
  router.get('/:id/payoff', async (req, res) => {
    const query = queryParameters(req.query, ['date', 'format']);
    if (downloadFormat(req, query, ['json', 'pdf'], 'json') === 'json') return ledgerRoute(payoffQuoteJson, ['date', 'format'])(req, res);
    const from = await readDb(res);
    if (!from) return;
    const caller = roleWith(engines, res, 'select', '/api/loan');
    if (!caller) return;
    const day = dayParameter('date', query.get('date'));
    const parties = await (await loansAs(caller.role)).letterParties(from, caller.principal, String(req.params.id));
    if (parties === null) return notFound(res);
    checkLetterDay('date', day, parties);
    const letter = await payoffLetter(from, res.locals.auth.accountId, parties, day);
    ReadRouting.tell(res, from);
    if (letter === null) return notFound(res);
    res
      .status(200)
      .type('application/pdf')
      .set('Cache-Control', 'private, no-store')
      .set('Content-Disposition', `attachment; filename="${payoffLetterFileName(letter)}"`)
      .send(await payoffLetterPdf(letter));
  });
  router.get('/:id/ledger', ledgerRoute(ledgerJson));

  router.post('/', async (req, res) => {
    const caller = roleWith(engines, res, 'insert', '/api/loan');
    if (!caller) return;
    const accountId = res.locals.auth.accountId;
    const reader = await loans();
    const body = bodyOf(req);
    const create = async (database: Database): Promise<{ id: string; text: string }> => {
      const created = await createLoan(database, accountId, body, grantOf(caller, 'insert', reader));
      const text = await reader.loanJson(database, accountId, created.id, { contacts: created.contacts });
      if (text === null) throw new Error(`loan ${created.id} vanished after creation`);
      return { id: created.id, text };
    };
    const key = idempotencyKeyOf(req.get('idempotency-key'));
    if (!key) {
      const { id, text } = await create(db);
      await wrote(res);
      res.location(`${req.baseUrl}/${id}`);
      return sendJson(res, 201, text);
    }
    // With an Idempotency-Key the loan, its schedule and contacts, and the stored response are
    // one transaction; a retry gets the first response again (app/idempotency.ts).
    const auth = res.locals.auth;
    const owner = { accountId, scope: auth.keyId, stillAuthorized: (tx: Queryable) => guardHolds(tx, activeKeyGuard(auth)) };
    const outcome = await runIdempotently(db, owner, key, requestHash('POST /api/loan', body), async (tx) => {
      const { text } = await create(databaseInTransaction(db, tx));
      return { status: 201, body: text };
    });
    if (outcome.kind === 'declined') return notAuthorized(res);
    if (outcome.kind === 'mismatch') return void res.status(409).json({ error: 'this Idempotency-Key was used for another request body in the last 24 hours', code: 'idempotency-key-reused', fields: { 'Idempotency-Key': 'already used for another body' } });
    const id = (JSON.parse(outcome.body) as { loan: { id: string } }).loan.id;
    if (outcome.replayed) res.set('Idempotent-Replayed', 'true');
    await wrote(res);
    res.location(`${req.baseUrl}/${id}`);
    sendJson(res, outcome.status, outcome.body);
  });

  router.patch('/:id', async (req, res) => {
    const caller = roleWith(engines, res, 'update', '/api/loan');
    if (!caller) return;
    const accountId = res.locals.auth.accountId;
    // The role's update filter, columns, check and presets hold inside the write's transaction.
    if (!(await updateLoan(db, accountId, req.params.id, bodyOf(req), grantOf(caller, 'update', await loans())))) return notFound(res);
    await wrote(res);
    const text = await (await loansAs(caller.role)).loanJson(db, caller.principal, req.params.id);
    if (text === null) return notFound(res);
    sendJson(res, 200, text);
  });

  /**
   * A loan entered by mistake (`app/loanRemoval.ts`): 200 with the loan as it was; 404 as for GET
   * (and for a loan outside the role's delete filter); 409 naming the money history it holds.
   */
  router.delete('/:id', async (req, res) => {
    const caller = roleWith(engines, res, 'delete', '/api/loan');
    if (!caller) return;
    queryParameters(req.query, []);
    const filter = caller.role.name === ADMIN_ROLE ? null : (caller.role.metadata.collections.get('loans')?.delete?.filter ?? null);
    const reader = await loansAs(caller.role, filter ? new Map([['loans', filter]]) : undefined);
    const outcome = await removeLoan(db, res.locals.auth.accountId, req.params.id, (tx, id) => reader.loanJson(databaseInTransaction(db, tx), caller.principal, id));
    if (outcome.kind === 'not-found') return notFound(res);
    if (outcome.kind === 'holds-money') return void res.status(409).json({ error: outcome.message, code: 'loan-holds-money', holds: outcome.holds });
    await wrote(res);
    sendJson(res, 200, outcome.loan);
  });

  router.all(['/:id/payoff', '/:id/ledger'], methodNotAllowed('GET'));
  router.all('/', methodNotAllowed('GET', 'POST'));
  router.all('/:id', methodNotAllowed('GET', 'PATCH', 'DELETE'));

  return router;
}
