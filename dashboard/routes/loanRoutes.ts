import { Router, type Request, type Response } from 'express';
import type { Database } from '../../db/index.js';
import type { Logger } from '../../app/logger.js';
import { RequestError } from '../../engine/index.js';
import { UserInputError } from '../../app/errors.js';
import { createLoan, updateLoan } from '../../app/loanWrites.js';
import { loanRemovalRefusal, removeLoan } from '../../app/loanRemoval.js';
import { businessDate, dayParameter } from '../../app/ledgerReads.js';
import { LOAN_STATUSES, loadDefaultProduct } from '../../app/products.js';
import { errorPage } from '../pages/errorPage.js';
import { createBody, loanFormFields, updateBody, type LoanFormField } from '../loanForm.js';
import { deleteLoanPage, FEE_STATUSES, feeUnpaid, LOAN_SORTS, listHref, LOANS_PATH, loanFormPage, loanListPage, loanPage, loanPath, reversePaymentPage, type DueWindow, type LoanListQuery, type LoanPageForm } from '../pages/loanPages.js';
import { cash, centsOf, enumLabel, fromCents, money, row, rows, text, type Row } from '../pages/servicingFormat.js';
import { formFields, formText } from '../formFields.js';
import { AMOUNT_EXAMPLE, plainAmount } from '../moneyInput.js';
import { addDays, payoffQuote, requestErrorMessage, UUID, type ServicingData } from '../servicingData.js';
import { sessionOf } from '../session.js';
import { submitOnce } from '../formOnce.js';
import { assigneeChoices, taskFormProblem, usersOf, type TaskAssignee } from '../taskForm.js';
import { checkLetterDay, LETTER_PARTIES_FIELDS, letterPartiesOf, payoffLetter, payoffLetterFileName } from '../../app/payoffLetters.js';
import { payoffLetterPdf } from '../../app/payoffLetterPdf.js';
import { PAGE_EXPECTED, pageNumberOf } from '../pageNumber.js';

const PAGE_SIZE = 25;

/** Each sort of the list as a fixed `order_by` (a closed table: nothing typed reaches the document). */
const SORT_ORDER: ReadonlyMap<string, string> = new Map([
  ['newest', '{created_at: desc}, {id: asc}'],
  ['name', '{name: asc}, {id: asc}'],
  ['amount_desc', '{amount: desc_nulls_last}, {id: asc}'],
  ['amount_asc', '{amount: asc_nulls_last}, {id: asc}'],
  ['maturity', '{date_maturity: asc_nulls_last}, {id: asc}'],
  // For a loan in servicing the ledger's oldest_unpaid_due is its next row's due date (docs/ledger.md,
  // R1 and R2: both are the earliest row with unpaid principal or interest); other loans have none.
  ['next_due', '{oldest_unpaid_due: asc_nulls_last}, {id: asc}'],
]);

/**
 * A search matches the loan's name or a borrower's name. The borrowers' loans are found first
 * (`BORROWER_LOANS`: the borrow links of people so named — the trigram index on people's names),
 * and the list then asks for `id IN` those. The same filter inside the list's document made
 * PostgreSQL build one hashed subplan over people for the page and one per status count: at
 * scale 1 on PostgreSQL 15 (a heavily loaded machine), searching "st" took 430 ms that way, now
 * 32 ms for the links (two letters: no trigram) plus 70 ms for the list; "Perez" 109 ms, now
 * 3 + 34 ms. (Asking for `people { borrows { loan_id } }` instead took 243 ms for "st".)
 */
const SEARCH = '{_or: [{name: {_ilike: $q}}, {id: {_in: $borrowed}}]}';
const BORROWER_LOANS = 'query BorrowerLoans($q: String!) { borrows(where: {person: {name: {_ilike: $q}}}) { loan_id } }';
/** `due=week`: the next row (`is_next`) due in the window — the overview's "Due this week", the same condition. */
const DUE = '{schedules: {is_next: {_eq: true}, due: {_gte: $dueFrom, _lte: $dueTo}}}';
/** The list's document for a sort, with or without a search and the due filter: 24 fixed texts, so every plan stays cached. */
export function loanListDocument(order: string, search: boolean, due = false): string {
  const filters = [...(search ? [SEARCH] : []), ...(due ? [DUE] : [])];
  const where = (status: string) => (filters.length ? `{_and: [${[status, ...filters].join(', ')}]}` : status);
  return `query LoanList($statuses: [String!]!, $limit: Int!, $offset: Int!${search ? ', $q: String!, $borrowed: [uuid!]!' : ''}${due ? ', $dueFrom: date!, $dueTo: date!' : ''}) {
  loans(where: ${where('{status: {_in: $statuses}}')}, order_by: [${order}], limit: $limit, offset: $offset) {
    id name status amount date_maturity
    borrows(order_by: [{created_at: asc}], limit: 3) { person { id name } }
    schedules(where: {is_next: {_eq: true}}, limit: 1) { due payment }
  }
  ${LOAN_STATUSES.map((status) => `${status}: loans_aggregate(where: ${where(`{status: {_eq: "${status}"}}`)}) { aggregate { count } }`).join('\n  ')}
}`;
}

const LOAN_PAGE = `query LoanPage($id: uuid!) {
  loan: loans_by_pk(id: $id) {
    id name status amount rate term frequency amortization regular_payment date_funded first_payment_date date_maturity custom_fields created_at updated_at
    principal_outstanding interest_due fees_due credit_balance oldest_unpaid_due date_closed
    borrows(order_by: [{created_at: asc}]) { person { id name email } }
    guarantees(order_by: [{created_at: asc}]) { person { id name email } }
    funding_sources(order_by: [{id: asc}]) { class original_amount person { id name } }
    schedules(order_by: [{number: asc}]) { number due payment principal interest balance is_next }
    paid: payments_aggregate(where: {date_reversed: {_is_null: true}, type: {_neq: "refund"}}) { aggregate { sum { amount } } }
    refunded: payments_aggregate(where: {date_reversed: {_is_null: true}, type: {_eq: "refund"}}) { aggregate { sum { amount } } }
    payments(order_by: [{date: desc}, {posted_at: desc}, {id: desc}]) { id date amount type method date_reversed reversal_reason allocations(order_by: [{position: asc}]) { row_number component amount fee { kind } } }
    fees(order_by: [{date: asc}, {created_at: asc}, {id: asc}]) { id kind date amount paid waived waived_on waived_by waived_reason description }
    tasks(order_by: [{created_at: desc}, {id: asc}]) { id name status date_due assignee { id name } }
    comments(order_by: [{created_at: desc}, {id: asc}]) { id text created_at admin { name email } }
    loan_documents { document { id name status type uploaded_date } }
    address_details { address { id street1 city state zipcode valuations(order_by: [{report_date: desc}, {id: asc}], limit: 1) { value valuation_type report_date } insurances(order_by: [{expiration: desc}]) { carrier type coverage_amount expiration } } }
  }
}`;
const LETTER_PARTIES = `query LoanLetterParties($id: uuid!) { loan: loans_by_pk(id: $id) { ${LETTER_PARTIES_FIELDS} } }`;
const LOAN_FIELDS = `query LoanFields($id: uuid!) {
  loan: loans_by_pk(id: $id) { id name status amount rate term frequency amortization regular_payment date_funded first_payment_date date_maturity custom_fields }
}`;
const PAYMENT = `query Payment($id: uuid!, $payment: uuid!) {
  loan: loans_by_pk(id: $id) { id name status payments(where: {id: {_eq: $payment}}) { id date amount type method date_reversed reversal_reason } }
}`;
const POST_PAYMENT = `mutation PostPayment($loan: uuid!, $date: date!, $amount: numeric!, $type: String!, $method: String!) {
  insert_payments_one(object: {loan_id: $loan, date: $date, amount: $amount, type: $type, method: $method}) { id }
}`;
const REVERSE_PAYMENT = `mutation ReversePayment($loan: uuid!, $payment: uuid!, $date: date!, $reason: String!) {
  update_payments(where: {id: {_eq: $payment}, loan_id: {_eq: $loan}, date_reversed: {_is_null: true}}, _set: {date_reversed: $date, reversal_reason: $reason}) { affected_rows }
}`;
/** The loan's status after a payment or a reversal (a later statement: the ledger's replay has run). */
const LOAN_STATUS = 'query LoanStatus($id: uuid!) { loan: loans_by_pk(id: $id) { id status date_closed } }';
/** The account's users, whom a task may be assigned to (id and name only). */
const ACCOUNT_USERS = 'query AccountUsers { users: admins(order_by: [{name: asc}, {id: asc}]) { id name } }';
const ADD_TASK = `mutation AddTask($loan: uuid!, $name: String!, $due: date, $assignee: uuid) {
  insert_tasks_one(object: {loan_id: $loan, name: $name, date_due: $due, assignee_id: $assignee}) { id }
}`;
const COMPLETE_TASK = `mutation CompleteTask($loan: uuid!, $task: uuid!) {
  update_tasks(where: {id: {_eq: $task}, loan_id: {_eq: $loan}}, _set: {status: "completed"}) { affected_rows }
}`;
const ADD_FEE = `mutation AddFee($loan: uuid!, $date: date!, $amount: numeric!, $description: String) {
  insert_fees_one(object: {loan_id: $loan, date: $date, amount: $amount, description: $description}) { id }
}`;
/** A fee of the loan (a fee of another loan, or of another account, is not found). */
const FEE = `query Fee($id: uuid!, $fee: uuid!) {
  loan: loans_by_pk(id: $id) { id fees(where: {id: {_eq: $fee}}) { id date amount paid waived waived_on } }
}`;
const WAIVE_FEE = `mutation WaiveFee($fee: uuid!, $by: String!, $reason: String!) {
  insert_fee_waivers_one(object: {fee_id: $fee, waived_by: $by, reason: $reason}) { id }
}`;
const ADD_COMMENT = `mutation AddComment($loan: uuid!, $admin: uuid!, $text: String!) {
  insert_comments_one(object: {loan_id: $loan, admin_id: $admin, text: $text}) { id }
}`;

/** What a redirect after a write says on the next page (`?done=`): a fixed set, never the client's text. */
const NOTICES: ReadonlyMap<string, string> = new Map([
  ['created', 'Loan created.'],
  ['updated', 'Loan saved.'],
  ['payment-posted', 'Payment posted.'],
  ['payment-posted-closed', 'Payment posted: the loan is paid off and closed.'],
  ['payment-posted-overpaid', 'Payment posted: the loan is paid off with money left over, and is now overpaid (credit shown in Balances).'],
  ['payoff-posted', 'Payoff posted, but the loan still owes money: see Balances.'],
  ['payoff-posted-closed', 'Payoff posted: the loan is paid off and closed.'],
  ['payoff-posted-overpaid', 'Payoff posted: the loan is paid off with money left over, and is now overpaid (credit shown in Balances).'],
  ['payment-reversed', 'Payment reversed.'],
  ['payment-reversed-reopened', 'Payment reversed: the loan owes money again and is back in servicing.'],
  ['payment-already-reversed', 'That payment was already reversed.'],
  ['task-added', 'Task added.'],
  ['task-completed', 'Task completed.'],
  ['comment-added', 'Comment added.'],
  ['fee-added', 'Fee added: see Balances and the payoff quote.'],
  ['fee-waived', 'Fee waived: see Balances and the payoff quote.'],
]);
/** What the loans list says after a write that leaves no loan page to return to (`?done=`). */
const LIST_NOTICES: ReadonlyMap<string, string> = new Map([['loan-deleted', 'Loan deleted, with its schedule, tasks, comments and links.']]);
/** What the Delete confirmation lists as removed with the loan. */
const LOAN_DEPENDENTS = `query LoanDependents($id: uuid!) {
  loan: loans_by_pk(id: $id) {
    id name status amount
    schedules_aggregate { aggregate { count } }
    tasks_aggregate { aggregate { count } }
    comments_aggregate { aggregate { count } }
    borrows_aggregate { aggregate { count } }
    guarantees_aggregate { aggregate { count } }
    loan_documents_aggregate { aggregate { count } }
    address_details_aggregate { aggregate { count } }
  }
}`;
/** SPEC §12's payment types and reversal reasons (the database's checks: `payments_type`, `payments_reversal_reason`). */
export const PAYMENT_TYPES: readonly string[] = ['regular', 'payoff', 'principal', 'refund', 'fee'];
export const REVERSAL_REASONS: readonly string[] = ['nsf', 'error', 'returned', 'other'];
export const PAYMENT_METHODS: readonly string[] = ['ach', 'check', 'wire', 'cash'];
/**
 * Each form's columns by the labels of its inputs, for a database rule's message that names the
 * column (`amount: a refund of 50.00 is more than …` → `Amount: …`), as the forms' own checks do.
 */
const FIELD_LABELS: Readonly<Record<LoanPageForm['form'], ReadonlyMap<string, string>>> = {
  payment: new Map([['date', 'Date'], ['amount', 'Amount'], ['type', 'Type'], ['method', 'Method']]),
  payoff: new Map([['date', 'Payoff date'], ['amount', 'Payoff'], ['method', 'Method']]),
  task: new Map([['name', 'Task'], ['date_due', 'Due'], ['assignee_id', 'Assignee']]),
  comment: new Map([['text', 'Comment']]),
  fee: new Map([['date', 'Fee date'], ['amount', 'Fee'], ['description', 'Note']]),
  waiver: new Map([['fee_id', 'Fee'], ['amount', 'To waive'], ['waived_on', 'Waived on'], ['waived_by', 'Waived by'], ['reason', 'Reason']]),
};
const REVERSAL_LABELS: ReadonlyMap<string, string> = new Map([['date_reversed', 'Date reversed'], ['reversal_reason', 'Reason']]);
const DATE = /^\d{4}-\d\d-\d\d$/;
/** A real calendar date from year 1 on (PostgreSQL has no year 0). */
const isRealDate = (value: string) => DATE.test(value) && !value.startsWith('0000') && !Number.isNaN(Date.parse(`${value}T00:00:00Z`)) && new Date(`${value}T00:00:00Z`).toISOString().startsWith(value);
const AMOUNT = /^\d{1,12}(\.\d{1,2})?$/;
/** The form's amount as the mutation takes it (`1,250.00` → `1250.00`: `plainAmount`), or null when it is not an amount of at most 2 decimals. */
function amountOf(values: ReadonlyMap<string, string>): string | null {
  const amount = plainAmount(values.get('amount') ?? '');
  return amount !== null && AMOUNT.test(amount) ? amount : null;
}

/** A 400 page naming the query parameter that is wrong. */
class BadParameter extends Error {
  constructor(readonly parameter: string, readonly problem: string) {
    super(`${parameter}: ${problem}`);
  }
}

function listQuery(req: Request): LoanListQuery {
  const query = new Map(Object.entries(req.query));
  const single = (name: string): string | undefined => {
    const value = query.get(name);
    if (value === undefined) return undefined;
    if (typeof value !== 'string') throw new BadParameter(name, 'give it once');
    return value;
  };
  const status = single('status') || null;
  if (status !== null && !(LOAN_STATUSES as readonly string[]).includes(status)) throw new BadParameter('status', `expected one of ${LOAN_STATUSES.join(', ')}`);
  const sort = single('sort') || 'newest';
  if (!SORT_ORDER.has(sort)) throw new BadParameter('sort', `expected one of ${LOAN_SORTS.map((entry) => entry.key).join(', ')}`);
  const page = pageNumberOf(single('page'));
  if (page === null) throw new BadParameter('page', PAGE_EXPECTED);
  const search = (single('q') ?? '').trim();
  if (search.length > 200) throw new BadParameter('q', 'at most 200 characters');
  if (search.includes('\u0000')) throw new BadParameter('q', 'contains a NUL character');
  const due = single('due') || null;
  if (due !== null && due !== 'week') throw new BadParameter('due', 'expected week, or nothing');
  return { status, sort, page, search, due };
}

function capitalised(sentence: string): string {
  return sentence.charAt(0).toUpperCase() + sentence.slice(1);
}

/** `%text%` for `_ilike`, the text's own `%`, `_` and `\` matched literally. */
export function containsPattern(search: string): string {
  return `%${search.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}

export function notFoundPage(res: Response, what: 'loan' | 'person' | 'payment' | 'task' | 'fee'): void {
  const words = {
    loan: ['No such loan', 'This account has no loan at this address.'],
    person: ['No such person', 'This account has no person at this address.'],
    payment: ['No such payment', 'This loan has no such payment.'],
    task: ['No such task', 'This loan has no such task.'],
    fee: ['No such fee', 'This loan has no such fee.'],
  }[what];
  res.status(404).type('html').send(errorPage(words[0]!, words[1]!, res.locals.dashboard?.viewer));
}

/**
 * Loans (issue 17): the list, the loan page with its servicing forms, and creating and editing a
 * loan. Reads and the servicing writes go through the engine (`ServicingData`) for the session's
 * account; creating and editing a loan go through the same use cases as `POST`/`PATCH /api/loan`.
 * Every POST passed the CSRF check before it gets here (`requireFormCsrfToken`).
 */
export function loanRoutes(db: Database, data: () => Promise<ServicingData>, logger: Logger): Router {
  const router = Router();
  /** A GraphQL document for the session's account, on `on` (a form's transaction, `submitOnce`) or the database. */
  const run = async (res: Response, query: string, variables: Record<string, unknown>, on: Database = db) => (await data()).run(on, sessionOf(res).admin.accountId, query, variables);

  router.get('/', async (req, res) => {
    const session = sessionOf(res);
    let query: LoanListQuery;
    try {
      query = listQuery(req);
    } catch (error) {
      if (!(error instanceof BadParameter)) throw error;
      return res.status(400).type('html').send(errorPage('The loan list could not be shown', `The parameter “${error.parameter}” is wrong: ${error.problem}.`, session.viewer));
    }
    const document = loanListDocument(SORT_ORDER.get(query.sort)!, query.search !== '', query.due !== null);
    let dueWindow: DueWindow | undefined;
    if (query.due === 'week') {
      const today = await businessDate(db, session.admin.accountId);
      dueWindow = { from: today, to: addDays(today, 6) };
    }
    let search = {};
    if (query.search) {
      const q = containsPattern(query.search);
      const links = rows((await run(res, BORROWER_LOANS, { q })).borrows);
      search = { q, borrowed: [...new Set(links.map((link) => text(link.loan_id)))] };
    }
    const result = await run(res, document, {
      statuses: query.status ? [query.status] : [...LOAN_STATUSES],
      limit: PAGE_SIZE,
      offset: (query.page - 1) * PAGE_SIZE,
      ...search,
      ...(dueWindow ? { dueFrom: dueWindow.from, dueTo: dueWindow.to } : {}),
    });
    const counts = new Map<string, number>();
    for (const status of LOAN_STATUSES) counts.set(status, Number(text(row(row(result[status])?.aggregate)?.count)));
    counts.set('all', LOAN_STATUSES.reduce((sum, status) => sum + counts.get(status)!, 0));
    // A page past the last (a filter or a deletion shrank the list): the last page instead.
    const last = Math.max(1, Math.ceil(counts.get(query.status ?? 'all')! / PAGE_SIZE));
    if (query.page > last) return res.redirect(303, listHref(query, { page: last }));
    const notice = typeof req.query.done === 'string' ? LIST_NOTICES.get(req.query.done) : undefined;
    res.type('html').send(loanListPage(session.viewer, { loans: rows(result.loans), counts, query, pageSize: PAGE_SIZE, ...(dueWindow ? { dueWindow } : {}), ...(notice ? { notice } : {}) }));
  });

  router.get('/new', async (_req, res) => {
    const session = sessionOf(res);
    const product = await loadDefaultProduct(db, session.admin.accountId);
    res.type('html').send(loanFormPage(session.viewer, { mode: 'create', fields: loanFormFields(product, 'create'), values: new Map(), problems: new Map() }));
  });

  router.post('/', async (req, res) => {
    const session = sessionOf(res);
    const product = await loadDefaultProduct(db, session.admin.accountId);
    const fields = loanFormFields(product, 'create');
    const typed = typedValues(req, fields);
    try {
      // Once per rendering of the form (formOnce.ts): a second POST of it answers the first's outcome.
      const outcome = await submitOnce<never>(db, req, res, async (on) => {
        const created = await createLoan(on, session.admin.accountId, createBody(fields, typed));
        logger.info({ event: 'dashboard.loan.created', loanId: created.id, adminId: session.admin.adminId, accountId: session.admin.accountId }, 'loan created');
        return { redirect: `${loanPath(created.id)}?done=created` };
      });
      if (outcome && 'redirect' in outcome) res.redirect(303, outcome.redirect);
    } catch (error) {
      if (!(error instanceof UserInputError)) throw error;
      res.status(400).type('html').send(loanFormPage(session.viewer, { mode: 'create', fields, values: typed, problems: new Map(Object.entries(error.fields ?? {})), error: error.message }));
    }
  });

  /** The loan, or a 404 page (a malformed id, another account's loan). */
  /** The account's users, whom its tasks may be for. */
  async function accountUsers(res: Response): Promise<readonly TaskAssignee[]> {
    return usersOf((await run(res, ACCOUNT_USERS, {})).users);
  }

  async function loanOr404(req: Request, res: Response, document = LOAN_PAGE): Promise<Row | null> {
    const id = param(req, 'id');
    const loan = UUID.test(id) ? row((await run(res, document, { id })).loan) : null;
    if (!loan) notFoundPage(res, 'loan');
    return loan;
  }

  async function sendLoanPage(req: Request, res: Response, status: number, form?: LoanPageForm): Promise<void> {
    const session = sessionOf(res);
    const loan = await loanOr404(req, res);
    if (!loan) return;
    const product = await loadDefaultProduct(db, session.admin.accountId);
    const known = new Set(product.customFields.map((field) => field.key));
    const stored = Object.keys(row(loan.custom_fields) ?? {}).filter((key) => !known.has(key));
    const customFields = [...product.customFields.map((field) => ({ key: field.key, label: field.name, type: field.type })), ...stored.map((key) => ({ key, label: key }))];
    const done = typeof req.query.done === 'string' ? NOTICES.get(req.query.done) : undefined;
    // The payoff quote: for the day asked (`?quote_date=`, or the payoff form's day when it is
    // shown again), else the business date; and as of the business date for the days past due.
    const loanId = text(loan.id);
    const today = await payoffQuote(db, session.admin.accountId, loanId, null);
    let quoteDay: string | null = form?.form === 'payoff' && isRealDate(form.values.get('date')?.trim() ?? '') ? form.values.get('date')!.trim() : null;
    let quoteError: string | undefined;
    // The payoff date as typed, shown again in its field when it is refused.
    const askedDay = typeof req.query.quote_date === 'string' ? req.query.quote_date : '';
    if (!form) {
      try {
        quoteDay = dayParameter('quote_date', new Map(Object.entries(req.query)).get('quote_date') || undefined);
      } catch (error) {
        if (!(error instanceof UserInputError)) throw error;
        quoteError = "Payoff date: expected a calendar day as YYYY-MM-DD (1900–2999). The quote below is for today's business date.";
        status = 400;
      }
      const funded = text(loan.date_funded);
      if (quoteDay !== null && funded !== '' && quoteDay < funded) {
        quoteError = `Payoff date: ${quoteDay} is before the loan was funded (${funded}). The quote below is for today's business date.`;
        quoteDay = null;
        status = 400;
      }
    }
    const quote = quoteDay === null || quoteDay === text(today?.as_of) ? today : await payoffQuote(db, session.admin.accountId, loanId, quoteDay);
    const day = text(today?.as_of) || (await businessDate(db, session.admin.accountId));
    const removable = (await loanRemovalRefusal(db, session.admin.accountId, loanId)) === null;
    const me = session.admin.adminId;
    const users = assigneeChoices(await accountUsers(res), me);
    res.status(status).type('html').send(loanPage(session.viewer, { loan, customFields, businessDate: day, removable, today, quote, me, users, ...(quoteError ? { quoteError, quoteDayAsked: askedDay } : quoteDay !== null && !form ? { quoteAsked: true } : {}), ...(done ? { notice: done, noticeKey: String(req.query.done) } : {}), ...(form ? { form } : {}) }));
  }

  router.get('/:id', (req, res) => sendLoanPage(req, res, 200));

  /**
   * The payoff letter of the quote's day (`?date=`, default the business date): the same use case
   * and PDF as `GET /api/loan/{id}/payoff?format=pdf`, the loan's parties read through the
   * servicing view. A bad day, or one before funding, is a 400 page naming it.
   */
  router.get('/:id/payoff-letter.pdf', async (req, res) => {
    const session = sessionOf(res);
    const id = param(req, 'id');
    const loan = UUID.test(id) ? row((await run(res, LETTER_PARTIES, { id })).loan) : null;
    if (!loan) return notFoundPage(res, 'loan');
    const parties = letterPartiesOf(loan);
    let letter;
    try {
      const day = dayParameter('date', new Map(Object.entries(req.query)).get('date') || undefined);
      checkLetterDay('Payoff date', day, parties);
      letter = await payoffLetter(db, session.admin.accountId, parties, day);
    } catch (error) {
      if (!(error instanceof UserInputError)) throw error;
      return void res.status(400).type('html').send(errorPage('The payoff letter could not be made', `${error.message}.`, session.viewer));
    }
    if (!letter) return void res.status(404).type('html').send(errorPage('No payoff letter', 'This loan has no schedule, so there is no payoff to quote.', session.viewer));
    res.type('application/pdf').set('Content-Disposition', `attachment; filename="${payoffLetterFileName(letter)}"`).send(await payoffLetterPdf(letter));
  });

  router.get('/:id/edit', async (req, res) => {
    const session = sessionOf(res);
    const loan = await loanOr404(req, res, LOAN_FIELDS);
    if (!loan) return;
    const fields = loanFormFields(await loadDefaultProduct(db, session.admin.accountId), 'update');
    res.type('html').send(loanFormPage(session.viewer, { mode: 'update', fields, values: currentValues(fields, loan), problems: new Map(), loan }));
  });

  router.post('/:id/edit', async (req, res) => {
    const session = sessionOf(res);
    const loan = await loanOr404(req, res, LOAN_FIELDS);
    if (!loan) return;
    const fields = loanFormFields(await loadDefaultProduct(db, session.admin.accountId), 'update');
    const typed = typedValues(req, fields);
    try {
      if (!(await updateLoan(db, session.admin.accountId, text(loan.id), updateBody(fields, typed, currentValues(fields, loan))))) return notFoundPage(res, 'loan');
      logger.info({ event: 'dashboard.loan.updated', loanId: text(loan.id), adminId: session.admin.adminId, accountId: session.admin.accountId }, 'loan updated');
      res.redirect(303, `${loanPath(text(loan.id))}?done=updated`);
    } catch (error) {
      if (!(error instanceof UserInputError)) throw error;
      res.status(400).type('html').send(loanFormPage(session.viewer, { mode: 'update', fields, values: typed, problems: new Map(Object.entries(error.fields ?? {})), error: error.message, loan }));
    }
  });

  /**
   * A servicing write of the loan page: the form's values are checked (`check` returns the
   * problem, naming the field), the loan must be the account's (else 404), then the mutation
   * runs — once per rendering of a form that carries a one-time token (`submitOnce`: a second
   * POST of it writes nothing and is answered with the first's notice); a refusal re-shows the
   * loan page with the message next to the form (400). `write` writes through `on` only and
   * answers the notice's key, or a `declined` answer (having written nothing) sent afterwards.
   */
  function servicingWrite(
    form: LoanPageForm['form'],
    names: readonly string[],
    check: (values: ReadonlyMap<string, string>, loan: Row, res: Response) => string | null | Promise<string | null>,
    write: (req: Request, res: Response, loanId: string, values: ReadonlyMap<string, string>, on: Database) => Promise<{ readonly done: string } | { readonly declined: () => Promise<void> | void }>,
    /** The path parameter naming the record the form is about (a fee's waiver): a refusal is shown beside that record's form. */
    targetParam?: string,
  ) {
    return async (req: Request, res: Response): Promise<void> => {
      const values = new Map(names.map((name) => [name, formText(req, name)]));
      const id = param(req, 'id');
      const loan = UUID.test(id) ? row((await run(res, 'query LoanExists($id: uuid!) { loan: loans_by_pk(id: $id) { id status date_funded } }', { id })).loan) : null;
      if (!loan) return notFoundPage(res, 'loan');
      const target = targetParam === undefined ? {} : { target: param(req, targetParam) };
      const problem =
        (await check(values, loan, res)) ?? beforeFunding(form, values.get('date')?.trim(), text(loan.date_funded)) ?? (await farAhead(form, values.get('date')?.trim(), sessionOf(res).admin.accountId));
      if (problem) return sendLoanPage(req, res, 400, { form, error: problem, values, ...target });
      try {
        const outcome = await submitOnce(db, req, res, async (on) => {
          const result = await write(req, res, id, values, on);
          // No #fragment: the page focuses the notice beside this form (pages/layout.ts, outcome),
          // which a fragment would stop, and the focus scrolls it into view.
          return 'done' in result ? { redirect: `${loanPath(id)}?done=${result.done}` } : result;
        });
        if (outcome === null) return;
        if ('redirect' in outcome) res.redirect(303, outcome.redirect);
        else await outcome.declined();
      } catch (error) {
        if (!(error instanceof RequestError)) throw error;
        await sendLoanPage(req, res, 400, { form, error: requestErrorMessage(error, FIELD_LABELS[form]), values, ...target });
      }
    };
  }

  /**
   * A payment or payoff dated before the loan was funded: almost always a slip of the year (the
   * ledger would apply it, and a payoff then closes the loan on that day and turns every real
   * payment since into credit), so the form refuses it; the API takes what it is sent (SPEC §12).
   */
  function beforeFunding(form: LoanPageForm['form'], date: string | undefined, funded: string): string | null {
    if ((form !== 'payment' && form !== 'payoff' && form !== 'fee') || !date || !funded || date >= funded) return null;
    return `${form === 'payoff' ? 'Payoff date' : form === 'fee' ? 'Fee date' : 'Date'}: ${date} is before the loan was funded (${funded}); a ${form} is dated on or after its funding date.`;
  }

  /**
   * A payment or payoff dated more than a year after the business date: a slip of the year too
   * (2062 for 2026). The API takes it (a post-dated payment is applied: docs/ledger.md, "Stored
   * balances"), and the loan's stored figures then stand as of that day — every row until then
   * late, its late fees assessed, decades past due in the collections queue — so the form refuses
   * it. A day past 2999 is left to the database's rule (the years 1900–2999).
   */
  async function farAhead(form: LoanPageForm['form'], date: string | undefined, accountId: string): Promise<string | null> {
    if ((form !== 'payment' && form !== 'payoff') || !date || !isRealDate(date) || date > '2999-12-31') return null;
    const today = await businessDate(db, accountId);
    const yearAfter = `${String(Number(today.slice(0, 4)) + 1).padStart(4, '0')}${today.slice(4)}`;
    if (date <= yearAfter) return null;
    return `${form === 'payoff' ? 'Payoff date' : 'Date'}: ${date} is more than a year after the business date (${today}); a post-dated ${form} is dated within a year of it.`;
  }

  router.post(
    '/:id/payments',
    servicingWrite(
      'payment',
      ['date', 'amount', 'type', 'method'],
      (values) => {
        if (!isRealDate(values.get('date')!.trim())) return 'Date: expected a real date as YYYY-MM-DD.';
        const amount = amountOf(values);
        if (amount === null || !/[1-9]/.test(amount)) return `Amount: expected an amount above 0 with at most 2 decimals, ${AMOUNT_EXAMPLE} (commas only between thousands).`;
        if (!PAYMENT_TYPES.includes(values.get('type')!)) return `Type: expected one of ${PAYMENT_TYPES.join(', ')}.`;
        if (!PAYMENT_METHODS.includes(values.get('method')!)) return `Method: expected one of ${PAYMENT_METHODS.join(', ')}.`;
        return null;
      },
      async (_req, res, loan, values, on) => {
        await run(res, POST_PAYMENT, { loan, date: values.get('date')!.trim(), amount: amountOf(values), type: values.get('type'), method: values.get('method') }, on);
        return { done: `payment-posted${await paidOff(res, loan, on)}` };
      },
    ),
  );

  /** '-closed' or '-overpaid' when the loan is now paid off (SPEC §12 R9), else ''. */
  async function paidOff(res: Response, loan: string, on: Database = db): Promise<string> {
    const status = text(row((await run(res, LOAN_STATUS, { id: loan }, on)).loan)?.status);
    return status === 'closed' || status === 'overpaid' ? `-${status}` : '';
  }

  /**
   * "Post this payoff" of the quote: a payment of type `payoff` for the quoted amount on the
   * quoted day, through the same mutation as the payment form. The quote is taken again first:
   * when it changed since the page was shown (another payment, a reversal, a fee), nothing is
   * posted and the page shows the new quote with a message, so a stale figure is never paid.
   */
  router.post(
    '/:id/payoff',
    servicingWrite(
      'payoff',
      ['date', 'amount', 'method'],
      (values) => {
        if (!isRealDate(values.get('date')!.trim())) return 'Payoff date: expected a real date as YYYY-MM-DD.';
        if (amountOf(values) === null) return 'Payoff: expected the quoted amount, e.g. 84600.20.';
        if (!PAYMENT_METHODS.includes(values.get('method')!)) return `Method: expected one of ${PAYMENT_METHODS.join(', ')}.`;
        return null;
      },
      async (req, res, loan, values, on) => {
        const date = values.get('date')!.trim();
        const amount = amountOf(values)!;
        const quote = await payoffQuote(on, sessionOf(res).admin.accountId, loan, date);
        const quoted = centsOf(quote?.payoff);
        if (quoted === null || quoted <= 0n) {
          return { declined: () => sendLoanPage(req, res, 400, { form: 'payoff', error: `Nothing to pay off on ${date}: the payoff is ${text(quote?.payoff) || 'not available'}.`, values }) };
        }
        if (quoted !== centsOf(amount)) {
          const currency = sessionOf(res).viewer.currency;
          return { declined: () => sendLoanPage(req, res, 400, { form: 'payoff', error: `Not posted: the payoff on ${date} is now ${cash(fromCents(quoted), currency)}, not ${cash(amount, currency)} (the loan changed since the quote). The quote below is current; post it again if it is right.`, values }) };
        }
        await run(res, POST_PAYMENT, { loan, date, amount, type: 'payoff', method: values.get('method') }, on);
        return { done: `payoff-posted${await paidOff(res, loan, on)}` };
      },
    ),
  );

  /**
   * A loan entered by mistake (session 41; `app/loanRemoval.ts`, as `DELETE /api/loan/{id}`): a
   * confirmation page naming what goes with it, then the removal, 303 to the list. A loan with
   * money history is never deleted: a 409 page says what it holds and what to do instead.
   */
  router.get('/:id/delete', async (req, res) => {
    const loan = await loanOr404(req, res, LOAN_DEPENDENTS);
    if (!loan) return;
    const refusal = await loanRemovalRefusal(db, sessionOf(res).admin.accountId, text(loan.id));
    if (refusal) return void res.status(409).type('html').send(errorPage('This loan cannot be deleted', `${capitalised(refusal.message)}.`, sessionOf(res).viewer));
    res.type('html').send(deleteLoanPage(sessionOf(res).viewer, loan));
  });

  router.post('/:id/delete', async (req, res) => {
    const session = sessionOf(res);
    const outcome = await removeLoan(db, session.admin.accountId, param(req, 'id'), async () => true);
    if (outcome.kind === 'not-found') return notFoundPage(res, 'loan');
    if (outcome.kind === 'holds-money') return void res.status(409).type('html').send(errorPage('This loan cannot be deleted', `${capitalised(outcome.message)}.`, session.viewer));
    res.redirect(303, `${LOANS_PATH}?done=loan-deleted`);
  });

  router.get('/:id/payments/:payment/reverse', async (req, res) => {
    const payment = await paymentOr404(req, res);
    if (!payment) return;
    if (payment.payment.date_reversed) return res.redirect(303, `${loanPath(text(payment.loan.id))}?done=payment-already-reversed`);
    res.type('html').send(reversePaymentPage(sessionOf(res).viewer, payment.loan, payment.payment, await businessDate(db, sessionOf(res).admin.accountId)));
  });

  /**
   * The reversal itself: a reason (SPEC §12 R8: `nsf` adds the product's NSF fee) and a date
   * (default the account's business date) are required; a refused one re-shows the confirmation page with the
   * message (400), as does a date the database refuses (before the payment's date, say).
   */
  router.post('/:id/payments/:payment/reverse', async (req, res) => {
    const payment = await paymentOr404(req, res);
    if (!payment) return;
    const loan = text(payment.loan.id);
    if (payment.payment.date_reversed) return res.redirect(303, `${loanPath(loan)}?done=payment-already-reversed`);
    const values = new Map(['reason', 'date'].map((name) => [name, formText(req, name).trim()]));
    const again = async (error: string) => res.status(400).type('html').send(reversePaymentPage(sessionOf(res).viewer, payment.loan, payment.payment, await businessDate(db, sessionOf(res).admin.accountId), { error, values }));
    if (!REVERSAL_REASONS.includes(values.get('reason')!)) return again(`Reason: choose one of ${REVERSAL_REASONS.join(', ')}.`);
    if (!isRealDate(values.get('date')!)) return again('Date reversed: expected a real date as YYYY-MM-DD.');
    let result;
    try {
      result = await run(res, REVERSE_PAYMENT, { loan, payment: text(payment.payment.id), date: values.get('date'), reason: values.get('reason') });
    } catch (error) {
      if (!(error instanceof RequestError)) throw error;
      return again(requestErrorMessage(error, REVERSAL_LABELS));
    }
    const reversed = Number(text(row(result.update_payments)?.affected_rows)) === 1;
    const wasPaidOff = ['closed', 'overpaid'].includes(text(payment.loan.status));
    const reopened = reversed && wasPaidOff && (await paidOff(res, loan)) === '';
    res.redirect(303, `${loanPath(loan)}?done=${reversed ? (reopened ? 'payment-reversed-reopened' : 'payment-reversed') : 'payment-already-reversed'}`);
  });

  async function paymentOr404(req: Request, res: Response): Promise<{ loan: Row; payment: Row } | null> {
    const id = param(req, 'id');
    const paymentId = param(req, 'payment');
    const loan = UUID.test(id) ? row((await run(res, PAYMENT, { id, payment: UUID.test(paymentId) ? paymentId : '00000000-0000-0000-0000-000000000000' })).loan) : null;
    if (!loan) {
      notFoundPage(res, 'loan');
      return null;
    }
    const payment = rows(loan.payments)[0];
    if (!payment) {
      notFoundPage(res, 'payment');
      return null;
    }
    return { loan, payment };
  }

  router.post(
    '/:id/tasks',
    servicingWrite(
      'task',
      ['name', 'date_due', 'assignee_id'],
      async (values, _loan, res) => taskFormProblem(values.get('name')!.trim(), values.get('date_due')!.trim(), values.get('assignee_id')!.trim(), await accountUsers(res)),
      async (_req, res, loan, values, on) => {
        await run(res, ADD_TASK, { loan, name: values.get('name')!.trim(), due: values.get('date_due')!.trim() || null, assignee: values.get('assignee_id')!.trim() || null }, on);
        return { done: 'task-added' };
      },
    ),
  );

  router.post(
    '/:id/tasks/:task/complete',
    servicingWrite(
      'task',
      [],
      () => null,
      async (req, res, loan, _values, on) => {
        const task = param(req, 'task');
        const result = UUID.test(task) ? await run(res, COMPLETE_TASK, { loan, task }, on) : null;
        if (Number(text(row(result?.update_tasks)?.affected_rows)) !== 1) return { declined: () => notFoundPage(res, 'task') };
        return { done: 'task-completed' };
      },
    ),
  );

  /**
   * A manual fee (docs/ledger.md, "Fees, waivers and the daily job"): `insert_fees_one`, kind
   * `manual`, to a loan in servicing or overpaid (the API's servicer role's rule); the fee's
   * trigger replays the loan, so Balances and the payoff quote include it on the next page.
   */
  router.post(
    '/:id/fees',
    servicingWrite(
      'fee',
      ['amount', 'date', 'description'],
      (values, loan) => {
        if (!FEE_STATUSES.includes(text(loan.status))) return `A fee is added only to a loan in servicing or overpaid; this loan is ${enumLabel(loan.status)}.`;
        const amount = amountOf(values);
        if (amount === null || !/[1-9]/.test(amount)) return `Fee: expected an amount above 0 with at most 2 decimals, ${AMOUNT_EXAMPLE} (commas only between thousands).`;
        const date = values.get('date')!.trim();
        if (!(isRealDate(date) && date >= '1900-01-01' && date <= '2999-12-31')) return 'Fee date: expected a day as YYYY-MM-DD from 1900 to 2999.';
        if (values.get('description')!.trim().length > 500) return 'Note: at most 500 characters.';
        return null;
      },
      async (_req, res, loan, values, on) => {
        await run(res, ADD_FEE, { loan, date: values.get('date')!.trim(), amount: amountOf(values), description: values.get('description')!.trim() || null }, on);
        return { done: 'fee-added' };
      },
    ),
  );

  /**
   * A fee's waiver: `insert_fee_waivers_one`, by the session's admin, dated the business date. A
   * waiver waives what is unpaid of the fee (the collection has no amount: a part of a fee is not
   * waived), so the form sends the amount it showed, and a waiver of more than what is unpaid now
   * (a payment paid part of the fee since the page was shown, a figure typed by hand) is refused
   * with the current figure, nothing written; the database refuses a fee with nothing unpaid.
   */
  router.post(
    '/:id/fees/:fee/waive',
    servicingWrite(
      'waiver',
      ['amount', 'reason'],
      (values) => {
        if (amountOf(values) === null) return `To waive: expected the amount to waive, ${AMOUNT_EXAMPLE}.`;
        const reason = values.get('reason')!.trim();
        if (!reason) return 'Reason: say why the fee is waived.';
        if (reason.length > 500) return 'Reason: at most 500 characters.';
        return null;
      },
      async (req, res, loan, values, on) => {
        const feeId = param(req, 'fee');
        const fee = UUID.test(feeId) ? rows(row((await run(res, FEE, { id: loan, fee: feeId }, on)).loan)?.fees)[0] : undefined;
        if (!fee) return { declined: () => notFoundPage(res, 'fee') };
        const again = (error: string) => ({ declined: () => sendLoanPage(req, res, 400, { form: 'waiver', error, values, target: feeId }) });
        const currency = sessionOf(res).viewer.currency;
        if (text(fee.waived_on)) return again(`This fee was already waived on ${text(fee.waived_on)}: a fee is waived once.`);
        const unpaid = feeUnpaid(fee);
        const asked = centsOf(amountOf(values))!;
        if (asked > unpaid) return again(`To waive: ${cash(fromCents(asked), currency)} is more than what is unpaid of this fee, ${cash(fromCents(unpaid), currency)}; a waiver waives at most what is unpaid.`);
        if (asked < unpaid) return again(`To waive: a waiver waives all that is unpaid of the fee, ${cash(fromCents(unpaid), currency)}, not a part of it (${cash(fromCents(asked), currency)}).`);
        const { adminName, adminEmail } = sessionOf(res).admin;
        await run(res, WAIVE_FEE, { fee: feeId, by: adminName.trim() || adminEmail, reason: values.get('reason')!.trim() }, on);
        return { done: 'fee-waived' };
      },
      'fee',
    ),
  );

  router.post(
    '/:id/comments',
    servicingWrite(
      'comment',
      ['text'],
      (values) => {
        const comment = values.get('text')!.trim();
        if (!comment) return 'Comment: write something first.';
        if (comment.length > 10_000) return 'Comment: at most 10,000 characters.';
        return null;
      },
      async (_req, res, loan, values, on) => {
        await run(res, ADD_COMMENT, { loan, admin: sessionOf(res).admin.adminId, text: values.get('text')!.trim() }, on);
        return { done: 'comment-added' };
      },
    ),
  );

  return router;
}

/** A path parameter as one string ('' when absent). */
function param(req: Request, name: string): string {
  const value: unknown = new Map(Object.entries(req.params)).get(name);
  return typeof value === 'string' ? value : '';
}

/** The inputs of the loan form by body name (only the form's own fields; read through a Map). */
function typedValues(req: Request, fields: readonly LoanFormField[]): ReadonlyMap<string, string> {
  const sent = formFields(req);
  const typed = new Map<string, string>();
  for (const field of fields) {
    const value = sent.get(field.name);
    if (typeof value === 'string') typed.set(field.name, value);
  }
  return typed;
}

/** The loan's values as the edit form shows them, by body name. */
function currentValues(fields: readonly LoanFormField[], loan: Row): ReadonlyMap<string, string> {
  const custom = new Map(Object.entries(row(loan.custom_fields) ?? {}));
  const values = new Map<string, string>();
  for (const field of fields) {
    if (field.source.kind === 'column') values.set(field.name, text(loan[field.source.column]));
    else if (field.source.kind === 'custom') values.set(field.name, text(custom.get(field.source.key)));
  }
  return values;
}

