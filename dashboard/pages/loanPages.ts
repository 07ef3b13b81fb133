import { LOAN_STATUSES, type CustomFieldType } from '../../app/products.js';
import { html, type Html } from '../html.js';
import { csrfField, formatTimestamp, message, outcome, refusedField, renderPage, type Viewer } from './layout.js';
import { onceField } from '../formOnce.js';
import type { TaskAssignee } from '../taskForm.js';
import { allocationCell, balancesSection, feesSection, payoffSection } from './loanLedgerSections.js';
import { LOANS_PATH, loanPath, personPath } from './servicingPaths.js';
import { assigneeSelect, assigneeText, cash, customFieldValue, dateInput, enumLabel, loanLabel, orDash, percent, row, rows, statusPill, text, type Row } from './servicingFormat.js';

// The routes import the loan pages from here; the form and the ledger's sections live in files of their own.
export { FEE_STATUSES, feeUnpaid } from './loanLedgerSections.js';
export { LOANS_PATH, loanPath, personPath } from './servicingPaths.js';
export { loanFormPage, type LoanFormView } from './loanFormPage.js';

/** The sorts the list offers (a closed set: the route maps each to a fixed `order_by`). */
export const LOAN_SORTS: readonly { readonly key: string; readonly label: string }[] = [
  { key: 'newest', label: 'Newest first' },
  { key: 'name', label: 'Name (A–Z)' },
  { key: 'amount_desc', label: 'Amount (largest first)' },
  { key: 'amount_asc', label: 'Amount (smallest first)' },
  { key: 'maturity', label: 'Maturity (soonest first)' },
  { key: 'next_due', label: 'Next payment (soonest first)' },
];

export interface LoanListQuery {
  readonly status: string | null;
  readonly search: string;
  /** `week`: only loans whose next payment is due from the business date to six days after (the overview's "Due this week"). */
  readonly due: 'week' | null;
  readonly sort: string;
  readonly page: number;
}

/** The days of `due=week`: the business date and six days after. */
export interface DueWindow {
  readonly from: string;
  readonly to: string;
}

export interface LoanListView {
  readonly loans: readonly Row[];
  /** Loans matching the search, per status and in all ('all'), from `loans_aggregate`. */
  readonly counts: ReadonlyMap<string, number>;
  readonly query: LoanListQuery;
  readonly pageSize: number;
  /** The days of the `due` filter, when it is on. */
  readonly dueWindow?: DueWindow;
  readonly notice?: string;
}

/** The overview's "Due this week" in full: the loans in servicing whose next payment is due this week, soonest first. */
export const DUE_THIS_WEEK_HREF = listHrefOf({ status: 'servicing', search: '', due: 'week', sort: 'next_due', page: 1 });

export function listHref(query: LoanListQuery, changes: Partial<LoanListQuery>): string {
  return listHrefOf({ ...query, ...changes });
}

function listHrefOf(merged: LoanListQuery): string {
  const params = new URLSearchParams();
  if (merged.search) params.set('q', merged.search);
  if (merged.status) params.set('status', merged.status);
  if (merged.due) params.set('due', merged.due);
  if (merged.sort !== 'newest') params.set('sort', merged.sort);
  if (merged.page > 1) params.set('page', String(merged.page));
  const query_ = params.toString();
  return query_ ? `${LOANS_PATH}?${query_}` : LOANS_PATH;
}

/** Loans: search, status filter with counts, sort, paging. */
export function loanListPage(viewer: Viewer, view: LoanListView): string {
  const { query } = view;
  const total = view.counts.get(query.status ?? 'all') ?? 0;
  const statuses = ['all', ...LOAN_STATUSES];
  return renderPage(
    { title: 'Loans', viewer, section: 'loans' },
    html`<div class="page-head"><h1>Loans</h1><a class="button" href="${LOANS_PATH}/new">New loan</a></div>
${message('ok', view.notice)}
<form class="filters" method="get" action="${LOANS_PATH}" role="search" aria-label="Loans">
  <div class="field">
    <label for="loan-search">Search <span class="hint">(loan or borrower name)</span></label>
    <input id="loan-search" name="q" type="search" value="${query.search}" maxlength="200">
  </div>
  <div class="field">
    <label for="loan-status">Status</label>
    <select id="loan-status" name="status">
      ${statuses.map((status) => html`<option value="${status === 'all' ? '' : status}"${(query.status ?? 'all') === status ? html` selected` : null}>${status === 'all' ? 'All' : enumLabel(status)} (${view.counts.get(status) ?? 0})</option>`)}
    </select>
  </div>
  <div class="field">
    <label for="loan-due">Next payment</label>
    <select id="loan-due" name="due">
      <option value=""${query.due === null ? html` selected` : null}>Any day</option>
      <option value="week"${query.due === 'week' ? html` selected` : null}>Due this week</option>
    </select>
  </div>
  <div class="field">
    <label for="loan-sort">Sort</label>
    <select id="loan-sort" name="sort">
      ${LOAN_SORTS.map((sort) => html`<option value="${sort.key}"${query.sort === sort.key ? html` selected` : null}>${sort.label}</option>`)}
    </select>
  </div>
  <div><button type="submit">Show loans</button></div>
</form>
<nav class="status-tabs" aria-label="Loan status">
  <ul>${statuses.map(
    (status) => html`<li><a href="${listHref(query, { status: status === 'all' ? null : status, page: 1 })}"${(query.status ?? 'all') === status ? html` aria-current="page"` : null}>${status === 'all' ? 'All' : enumLabel(status)} <span class="count">${view.counts.get(status) ?? 0}</span></a></li>`,
  )}</ul>
</nav>
<p class="hint" role="status">${total === 0 ? 'No loans match.' : pageStatus({ one: 'loan', many: 'loans' }, query.page, total, view.pageSize, `${query.search ? ` matching “${query.search}”` : ''}${view.dueWindow ? ` with the next payment due from ${view.dueWindow.from} to ${view.dueWindow.to}` : ''}`)}</p>
${
  view.loans.length
    ? html`<div class="table-scroll" role="region" aria-labelledby="loans-caption" tabindex="0">
<table>
  <caption id="loans-caption" class="visually-hidden">Loans</caption>
  <thead><tr><th scope="col">Name</th><th scope="col">Borrowers</th><th scope="col">Status</th><th scope="col" class="num">Amount</th><th scope="col">Next payment</th><th scope="col">Maturity</th></tr></thead>
  <tbody>
    ${view.loans.map((loan) => {
      const next = rows(loan.schedules)[0];
      return html`<tr>
      <td><a href="${loanPath(text(loan.id))}">${loanLabel(loan)}</a></td>
      <td>${rows(loan.borrows).map((link, index) => html`${index ? ', ' : ''}${text(row(link.person)?.name)}`)}</td>
      <td>${statusPill(loan.status)}</td>
      <td class="num">${cash(loan.amount, viewer.currency)}</td>
      <td class="nowrap">${next ? html`${text(next.due)}<br><span class="hint">${cash(next.payment, viewer.currency)}</span>` : orDash(null)}</td>
      <td class="nowrap">${orDash(loan.date_maturity)}</td>
    </tr>`;
    })}
  </tbody>
</table>
</div>`
    : null
}
${pager(query, total, view.pageSize, (page) => listHref(query, { page }), 'Loan pages')}`,
  );
}

/**
 * Previous / next links and where we are. A page past the last (the list shrank since the link
 * was made: a bookmark, loans closed meanwhile) says so and links back to the last one; it said
 * "Page 3 of 1".
 */
export function pager(query: { page: number }, total: number, pageSize: number, href: (page: number) => string, label: string): Html | null {
  const pages = Math.max(1, Math.ceil(total / pageSize));
  if (pages <= 1 && query.page <= 1) return null;
  return html`<nav class="pager" aria-label="${label}">
  ${query.page > 1 ? html`<a href="${href(Math.min(query.page - 1, pages))}" rel="prev">${query.page > pages ? `Last page (${pages})` : 'Previous'}</a>` : html`<span class="hint">Previous</span>`}
  <span>${query.page > pages ? `No page ${query.page}: the last is page ${pages}` : `Page ${query.page} of ${pages}`}</span>
  ${query.page < pages ? html`<a href="${href(query.page + 1)}" rel="next">Next</a>` : html`<span class="hint">Next</span>`}
</nav>`;
}

/** What a paged list holds, for its status line: `loan`, `loans`. */
export interface ListNoun {
  readonly one: string;
  readonly many: string;
}

/**
 * A paged list's status line: `Loans 51–100 of 130 matching “x”.` (`matching` follows the count);
 * on a page past the last (the list shrank since the link was made) where its rows are instead:
 * `No loan on page 4: 130 loans matching “x” are on pages 1–3.` — it said "Loans 51–3 of 3".
 * `order` (`, by name`) is said on the first only. The caller says what an empty list is.
 */
export function pageStatus(noun: ListNoun, page: number, total: number, pageSize: number, matching = '', order = ''): string {
  const first = (page - 1) * pageSize + 1;
  const last = Math.min(total, page * pageSize);
  if (first <= last) return `${noun.many[0]!.toUpperCase()}${noun.many.slice(1)} ${first}–${last} of ${total}${matching}${order}.`;
  const pages = Math.ceil(total / pageSize);
  return `No ${noun.one} on page ${page}: ${total} ${total === 1 ? noun.one : noun.many}${matching} ${pages === 1 ? `${total === 1 ? 'is' : 'are'} on page 1` : `are on pages 1–${pages}`}.`;
}

/** What a form on the loan page was sent with, when it is shown again with an error. */
export interface LoanPageForm {
  readonly form: 'payment' | 'payoff' | 'task' | 'comment' | 'fee' | 'waiver';
  readonly error: string;
  readonly values: ReadonlyMap<string, string>;
  /** The record the form is about, when the page has one such form per record (a fee's waiver: the fee's id). */
  readonly target?: string;
}

/** Where a `?done=` notice is shown: beside the form whose write it reports (the redirect's fragment goes there too). */
type NoticePlace = 'top' | 'payoff' | 'payments' | 'fees' | 'tasks' | 'comments';

function noticePlace(key: string | undefined): NoticePlace {
  if (key?.startsWith('payoff-')) return 'payoff';
  if (key?.startsWith('payment-')) return 'payments';
  if (key?.startsWith('fee-')) return 'fees';
  if (key?.startsWith('task-')) return 'tasks';
  if (key?.startsWith('comment-')) return 'comments';
  return 'top';
}

/** The outcome shown at `place`: the refusal of its form, else a notice that belongs there. */
function outcomeAt(view: LoanPageView, place: NoticePlace, form?: LoanPageForm['form']): Html | null {
  if (form !== undefined && view.form?.form === form) return outcome('error', view.form.error);
  return !view.form && noticePlace(view.noticeKey) === place ? outcome('ok', view.notice) : null;
}

export interface LoanPageView {
  readonly loan: Row;
  /** Custom fields of the product, in order, by key and label. */
  readonly customFields: readonly { readonly key: string; readonly label: string; readonly type?: CustomFieldType }[];
  readonly notice?: string;
  /** The `?done=` key of the notice: says beside which form it is shown (`noticePlace`). */
  readonly noticeKey?: string;
  readonly form?: LoanPageForm;
  /** The account's business date (SPEC §12: today in its time zone): the payment form's default date. */
  readonly businessDate: string;
  /** The ledger as of the account's business date (`GET /api/loan/{id}/payoff`'s figures): its days past due. */
  readonly today?: Row | null;
  /** The payoff quote for the day asked (or the business date). */
  readonly quote?: Row | null;
  /** A `quote_date` that is not a day, or is before the loan was funded. */
  readonly quoteError?: string;
  /** That `quote_date` as typed: its field shows it again (the quote below is the business date's). */
  readonly quoteDayAsked?: string;
  /** The quote form was sent (a good `quote_date`): the quote takes the focus, as an outcome does. */
  readonly quoteAsked?: boolean;
  /** It holds no money history (migration 0086): a Delete button leads to the confirmation. */
  readonly removable?: boolean;
  /** The signed-in admin's id ("(you)" beside their name) and the account's users as the task form's Assignee lists them. */
  readonly me?: string;
  readonly users?: readonly TaskAssignee[];
}

/** The payment types of SPEC §12, as the form offers them. */
const PAYMENT_TYPE_LABELS: readonly (readonly [string, string])[] = [
  ['regular', 'regular'],
  ['payoff', 'payoff'],
  ['principal', 'principal (curtailment)'],
  ['refund', 'refund (of credit)'],
  ['fee', 'fee (pays fees first)'],
];
/** The reversal reasons of SPEC §12 (`nsf` adds the product's NSF fee). */
const REVERSAL_REASON_LABELS: readonly (readonly [string, string])[] = [
  ['nsf', 'NSF (insufficient funds)'],
  ['error', 'posted in error'],
  ['returned', 'returned'],
  ['other', 'other'],
];

/**
 * The loan's tasks in the order a servicer works them: open ones first, soonest due first (no
 * due date last), then the completed ones; ties keep the query's order (newest first). An open
 * task due before `today` (the account's business date) is overdue.
 */
function tasksInWorkingOrder(tasks: readonly Row[], today: string): readonly { readonly task: Row; readonly overdue: boolean }[] {
  const rank = (task: Row) => (text(task.status) === 'completed' ? 1 : 0);
  const due = (task: Row) => text(task.date_due) || '9999-12-31';
  return [...tasks]
    .sort((a, b) => rank(a) - rank(b) || (due(a) < due(b) ? -1 : due(a) > due(b) ? 1 : 0))
    .map((task) => ({ task, overdue: rank(task) === 0 && text(task.date_due) !== '' && text(task.date_due) < today }));
}

/**
 * A schedule of up to this many rows is shown whole; a longer one scrolls in a box of its own
 * (its header kept in view). A box that cut a short schedule by a few pixels hid its last row.
 */
const SCHEDULE_ROWS_UNSCROLLED = 24;

/** Cents of a money text (`1234.5` → 123450n); 0 for anything else. */
function cents(value: unknown): bigint {
  const match = /^(\d+)(?:\.(\d{1,2}))?$/.exec(text(value));
  return match ? BigInt(match[1]!) * 100n + BigInt((match[2] ?? '0').padEnd(2, '0')) : 0n;
}

/** The loan page: fields, contacts, schedule, payments, tasks, comments, documents, collateral. */
export function loanPage(viewer: Viewer, view: LoanPageView): string {
  const { loan } = view;
  const id = text(loan.id);
  const custom = row(loan.custom_fields) ?? {};
  const customValues = new Map(Object.entries(custom));
  // A row is covered when the ledger's allocations (SPEC §12 R1) of payments not reversed pay
  // its interest and principal in full — not when the money paid so far adds up to it: a
  // curtailment, a fee payment or a refund is money paid that pays no row.
  const paidToRow = new Map<string, bigint>();
  for (const payment of rows(loan.payments)) {
    if (payment.date_reversed) continue;
    for (const line of rows(payment.allocations)) {
      if (line.row_number === null || line.row_number === undefined || (line.component !== 'interest' && line.component !== 'principal')) continue;
      const number = text(line.row_number);
      paidToRow.set(number, (paidToRow.get(number) ?? 0n) + cents(line.amount));
    }
  }
  const schedule = rows(loan.schedules).map((entry) => {
    const owed = cents(entry.payment);
    return { entry, covered: owed > 0n && (paidToRow.get(text(entry.number)) ?? 0n) >= owed };
  });
  const next = schedule.find(({ entry }) => entry.is_next === true)?.entry;
  // A refund pays the borrower's credit back: money out, shown on its own line, not added to what
  // was paid (it was: a loan overpaid by 500.00 and refunded showed 500.00 more paid than received).
  const refunded = row(row(row(loan.refunded)?.aggregate)?.sum)?.amount;
  // The fee forms' fields share names with the payment form's (amount, date): theirs are shown in the Fees section.
  const fieldOf = (name: string) => (view.form && view.form.form !== 'fee' && view.form.form !== 'waiver' ? view.form.values.get(name) ?? '' : '');
  // A refused form's field that its message names (`refusedField`).
  const refused = (form: LoanPageForm['form'], label: string) => refusedField(view.form?.form === form ? view.form.error : null, label);
  return renderPage(
    { title: `Loan ${loanLabel(loan)}`, viewer, section: 'loans' },
    html`<p class="breadcrumb"><a href="${LOANS_PATH}">Loans</a></p>
<div class="page-head"><h1>${loanLabel(loan)} ${statusPill(loan.status)}</h1><div class="actions"><a class="button button-secondary" href="${loanPath(id)}/edit">Edit loan</a>${
      view.removable ? html`<a class="button button-danger" href="${loanPath(id)}/delete">Delete loan</a>` : null
    }</div></div>
${outcomeAt(view, 'top')}
${balancesSection(loan, view.today ?? null, viewer.currency)}
${payoffSection(viewer, loan, view, view.quoteError ? outcome('error', view.quoteError) : outcomeAt(view, 'payoff', 'payoff'))}
<section aria-labelledby="terms-heading" class="card">
  <h2 id="terms-heading">Terms</h2>
  <dl class="facts">
    <dt>Amount</dt><dd>${cash(loan.amount, viewer.currency)}</dd>
    <dt>Rate</dt><dd>${text(loan.rate) ? percent(loan.rate) : orDash(null)}</dd>
    <dt>Term</dt><dd>${orDash(loan.term)}</dd>
    <dt>Frequency</dt><dd>${orDash(enumLabel(loan.frequency))}</dd>
    <dt>Amortization</dt><dd>${orDash(enumLabel(loan.amortization))}</dd>
    <dt>Regular payment</dt><dd>${text(loan.regular_payment) ? cash(loan.regular_payment, viewer.currency) : orDash(null)}</dd>
    <dt>Date funded</dt><dd>${orDash(loan.date_funded)}</dd>
    <dt>First payment</dt><dd>${orDash(loan.first_payment_date)}</dd>
    <dt>Maturity</dt><dd>${orDash(loan.date_maturity)}</dd>
    <dt>Next payment</dt><dd>${next ? html`<strong>${text(next.due)}</strong>, ${cash(next.payment, viewer.currency)} (<a href="#next-row">row ${text(next.number)}</a>)` : orDash(null)}</dd>
    <dt>Paid (not reversed)</dt><dd data-term="paid">${cash(row(row(row(loan.paid)?.aggregate)?.sum)?.amount ?? '0.00', viewer.currency)}</dd>
    ${cents(refunded) > 0n ? html`<dt>Refunded (not reversed)</dt><dd data-term="refunded">${cash(refunded, viewer.currency)}</dd>` : null}
    ${view.customFields.map((field) => html`<dt>${field.label}</dt><dd>${customFieldValue(field.type, customValues.get(field.key), viewer.currency)}</dd>`)}
    <dt>Created</dt><dd>${formatTimestamp(text(loan.created_at))}</dd>
  </dl>
</section>

<section aria-labelledby="contacts-heading">
  <h2 id="contacts-heading">Borrowers and guarantors</h2>
  <div class="cards">
    ${contactCard('Borrowers', 'borrowers-heading', rows(loan.borrows))}
    ${contactCard('Guarantors', 'guarantors-heading', rows(loan.guarantees))}
    ${
      rows(loan.funding_sources).length
        ? html`<div class="card"><h3>Funded by</h3><ul class="plain">${rows(loan.funding_sources).map(
            (source) => html`<li><a href="${personPath(text(row(source.person)?.id))}">${text(row(source.person)?.name)}</a> <span class="hint">${cash(source.original_amount, viewer.currency)}${text(source.class) ? `, class ${text(source.class)}` : ''}</span></li>`,
          )}</ul></div>`
        : null
    }
  </div>
</section>

<section aria-labelledby="schedule-heading">
  <h2 id="schedule-heading">Schedule</h2>
  ${
    schedule.length
      ? html`<div class="table-scroll schedule${schedule.length > SCHEDULE_ROWS_UNSCROLLED ? ' schedule-long' : ''}" role="region" aria-labelledby="schedule-caption" tabindex="0">
<table id="schedule">
  <caption id="schedule-caption" class="visually-hidden">Schedule of ${loanLabel(loan)}</caption>
  <thead><tr><th scope="col">#</th><th scope="col">Due</th><th scope="col" class="num">Payment</th><th scope="col" class="num">Principal</th><th scope="col" class="num">Interest</th><th scope="col" class="num">Balance</th><th scope="col">State</th></tr></thead>
  <tbody>
    ${schedule.map(
      ({ entry, covered }) => html`<tr class="${entry.is_next === true ? 'is-next' : covered ? 'is-covered' : ''}"${entry.is_next === true ? html` id="next-row" aria-current="true"` : null} data-row="${text(entry.number)}">
      <td>${text(entry.number)}</td><td>${text(entry.due)}</td><td class="num">${cash(entry.payment, viewer.currency)}</td><td class="num">${cash(entry.principal, viewer.currency)}</td><td class="num">${cash(entry.interest, viewer.currency)}</td><td class="num">${cash(entry.balance, viewer.currency)}</td>
      <td>${entry.is_next === true ? html`<strong>Next</strong>` : covered ? html`Covered` : null}</td>
    </tr>`,
    )}
  </tbody>
</table></div>`
      : html`<p>No schedule: the loan lacks an amount, rate, term, frequency or date.</p>`
  }
</section>

<section aria-labelledby="payments-heading" id="payments">
  <h2 id="payments-heading">Payments</h2>
  ${outcomeAt(view, 'payments', 'payment')}
  ${
    loan.status === 'lead'
      ? html`<p class="hint" id="lead-payments">A lead takes no payments: it has not been funded. Set its status to Servicing, with its funding date, <a href="${loanPath(id)}/edit">in the loan's terms</a>.</p>`
      : html`${
          schedule.length
            ? null
            : html`<p class="hint" id="unscheduled-payments">Without a schedule this loan takes only refunds and fee payments: a payment would pay nothing. Give it its rate, term, frequency and a start date <a href="${loanPath(id)}/edit">in the loan's terms</a>.</p>`
        }<form class="inline-form" method="post" action="${loanPath(id)}/payments" aria-label="Post a payment">
    ${csrfField(viewer.csrfToken)}${onceField()}
    <div class="field"><label for="payment-date">Date</label>${dateInput('payment-date', 'date', fieldOf('date') || view.businessDate, true, refused('payment', 'Date'))}</div>
    <div class="field"><label for="payment-amount">Amount</label><input id="payment-amount" name="amount" type="text" inputmode="decimal" required${refused('payment', 'Amount')} value="${fieldOf('amount') || text(next?.payment)}"></div>
    <div class="field"><label for="payment-type">Type</label><select id="payment-type" name="type"${refused('payment', 'Type')}>${PAYMENT_TYPE_LABELS.map(
      ([type, label]) => html`<option value="${type}"${(fieldOf('type') || 'regular') === type ? html` selected` : null}>${label}</option>`,
    )}</select></div>
    <div class="field"><label for="payment-method">Method</label><select id="payment-method" name="method"${refused('payment', 'Method')}>${['ach', 'check', 'wire', 'cash'].map(
      (method) => html`<option value="${method}"${(fieldOf('method') || 'ach') === method ? html` selected` : null}>${enumLabel(method)}</option>`,
    )}</select></div>
    <div><button type="submit">Post payment</button></div>
  </form>`
  }
  ${
    rows(loan.payments).length
      ? html`<div class="table-scroll" role="region" aria-labelledby="payments-caption" tabindex="0"><table>
  <caption id="payments-caption" class="visually-hidden">Payments of ${loanLabel(loan)}</caption>
  <thead><tr><th scope="col">Date</th><th scope="col" class="num">Amount</th><th scope="col">Type</th><th scope="col">Method</th><th scope="col">Applied to</th><th scope="col">State</th></tr></thead>
  <tbody>${rows(loan.payments).map(
    (payment) => html`<tr${payment.date_reversed ? html` class="is-reversed"` : null} data-payment="${text(payment.id)}">
    <td class="nowrap">${text(payment.date)}</td><td class="num">${cash(payment.amount, viewer.currency)}</td><td>${enumLabel(payment.type)}</td><td>${orDash(enumLabel(payment.method))}</td>
    <td class="applied">${allocationCell(payment, viewer.currency)}</td>
    <td>${
      payment.date_reversed
        ? html`Reversed ${text(payment.date_reversed)}${text(payment.reversal_reason) ? html` <span class="reason">(${enumLabel(payment.reversal_reason)})</span>` : null}`
        : html`<a href="${loanPath(id)}/payments/${text(payment.id)}/reverse" aria-label="Reverse the payment of ${cash(payment.amount, viewer.currency)} on ${text(payment.date)}">Reverse</a>`
    }</td>
  </tr>`,
  )}</tbody></table></div>`
      : html`<p>No payments yet.</p>`
  }
</section>

${feesSection(viewer, loan, view, outcomeAt(view, 'fees', 'fee'))}

<section aria-labelledby="tasks-heading" id="tasks">
  <h2 id="tasks-heading">Tasks</h2>
  ${outcomeAt(view, 'tasks', 'task')}
  <form class="inline-form" method="post" action="${loanPath(id)}/tasks" aria-label="Add a task">
    ${csrfField(viewer.csrfToken)}${onceField()}
    <div class="field"><label for="task-name">Task</label><input id="task-name" name="name" type="text" required maxlength="500"${refused('task', 'Task')} value="${fieldOf('name')}"></div>
    <div class="field"><label for="task-due">Due</label>${dateInput('task-due', 'date_due', fieldOf('date_due'), false, refused('task', 'Due'))}</div>
    <div class="field"><label for="task-assignee">Assignee</label>${assigneeSelect('task-assignee', view.users ?? [], view.me ?? '', view.form?.form === 'task' ? fieldOf('assignee_id') : '', refused('task', 'Assignee'))}</div>
    <div><button type="submit">Add task</button></div>
  </form>
  ${
    rows(loan.tasks).length
      ? html`<ul class="items">${tasksInWorkingOrder(rows(loan.tasks), view.businessDate).map(
          ({ task, overdue }) => html`<li class="item${overdue ? ' is-overdue' : ''}">
    <span>${statusPill(task.status)} ${text(task.name)}${
      text(task.date_due) ? (overdue ? html` <span class="overdue">overdue: due ${text(task.date_due)}</span>` : html` <span class="hint">due ${text(task.date_due)}</span>`) : null
    }${row(task.assignee) ? html` <span class="hint">for ${assigneeText(task, view.me ?? '')}</span>` : html` ${assigneeText(task, view.me ?? '')}`}</span>
    ${
      text(task.status) === 'completed'
        ? null
        : html`<form method="post" action="${loanPath(id)}/tasks/${text(task.id)}/complete">${csrfField(viewer.csrfToken)}<button type="submit" class="button-secondary" aria-label="Complete “${text(task.name)}”">Complete</button></form>`
    }
  </li>`,
        )}</ul>`
      : html`<p>No tasks.</p>`
  }
</section>

<section aria-labelledby="comments-heading" id="comments">
  <h2 id="comments-heading">Comments</h2>
  ${outcomeAt(view, 'comments', 'comment')}
  <form class="stack" method="post" action="${loanPath(id)}/comments" aria-label="Add a comment">
    ${csrfField(viewer.csrfToken)}${onceField()}
    <div class="field"><label for="comment-text">Comment</label><textarea id="comment-text" name="text" rows="3" required maxlength="10000"${refused('comment', 'Comment')}>${fieldOf('text')}</textarea></div>
    <div><button type="submit">Add comment</button></div>
  </form>
  ${
    rows(loan.comments).length
      ? html`<ul class="items">${rows(loan.comments).map(
          (comment) => html`<li class="comment"><p>${text(comment.text)}</p><p class="hint">${row(comment.admin) ? text(row(comment.admin)?.name) || text(row(comment.admin)?.email) : 'API'} · ${formatTimestamp(text(comment.created_at))}</p></li>`,
        )}</ul>`
      : html`<p>No comments.</p>`
  }
</section>

<section aria-labelledby="documents-heading">
  <h2 id="documents-heading">Documents</h2>
  ${
    rows(loan.loan_documents).length
      ? html`<div class="table-scroll" role="region" aria-labelledby="documents-caption" tabindex="0"><table>
  <caption id="documents-caption" class="visually-hidden">Documents of ${loanLabel(loan)}</caption>
  <thead><tr><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Status</th><th scope="col">Uploaded</th></tr></thead>
  <tbody>${rows(loan.loan_documents).map((link) => {
    const document = row(link.document) ?? {};
    return html`<tr><td>${text(document.name)}</td><td>${orDash(enumLabel(document.type))}</td><td>${orDash(enumLabel(document.status))}</td><td>${orDash(document.uploaded_date)}</td></tr>`;
  })}</tbody></table></div>`
      : html`<p>No documents.</p>`
  }
</section>

<section aria-labelledby="collateral-heading">
  <h2 id="collateral-heading">Addresses</h2>
  ${
    rows(loan.address_details).length
      ? html`<div class="cards addresses">${rows(loan.address_details).map((link) => addressCard(row(link.address) ?? {}, viewer.currency))}</div>`
      : html`<p>No addresses.</p>`
  }
</section>`,
  );
}

function contactCard(title: string, headingId: string, links: readonly Row[]): Html {
  return html`<div class="card"><h3 id="${headingId}">${title}</h3>${
    links.length
      ? html`<ul class="plain">${links.map((link) => {
          const person = row(link.person) ?? {};
          return html`<li><a href="${personPath(text(person.id))}">${text(person.name)}</a>${text(person.email) ? html` <span class="hint">${text(person.email)}</span>` : null}</li>`;
        })}</ul>`
      : html`<p class="hint">None.</p>`
  }</div>`;
}

function addressCard(address: Row, currency: string): Html {
  const valuation = rows(address.valuations)[0];
  const insurances = rows(address.insurances);
  return html`<div class="card">
  <h3>${text(address.street1)}</h3>
  <p>${[text(address.city), text(address.state), text(address.zipcode)].filter(Boolean).join(', ')}</p>
  <dl class="facts">
    <dt>Newest valuation</dt><dd>${valuation ? html`${cash(valuation.value, currency)} (${enumLabel(valuation.valuation_type)}, <span class="nowrap">${text(valuation.report_date)}</span>)` : orDash(null)}</dd>
    ${insurances.map((insurance) => html`<dt>Insurance</dt><dd>${text(insurance.carrier)}, ${enumLabel(insurance.type)}: ${cash(insurance.coverage_amount, currency)}, until <span class="nowrap">${text(insurance.expiration)}</span></dd>`)}
  </dl>
</div>`;
}

/** The confirmation step of reversing a payment: a page of its own, so it works without JavaScript. */
export function reversePaymentPage(viewer: Viewer, loan: Row, payment: Row, businessDate: string, form?: { readonly error: string; readonly values: ReadonlyMap<string, string> }): string {
  const id = text(loan.id);
  const reason = form?.values.get('reason') ?? '';
  // The business date, or a post-dated payment's own day (a reversal is dated on or after the
  // payment, and not after the later of the two): the business date was offered for a payment
  // dated ahead, and refused when sent unchanged.
  const paidOn = text(payment.date);
  const date = form?.values.get('date') || (paidOn > businessDate ? paidOn : businessDate);
  return renderPage(
    // The loan's name in the title too: the tab, the window list and a screen reader's first words say which loan.
    { title: `Reverse the payment of ${paidOn} · ${loanLabel(loan)}`, viewer, section: 'loans' },
    html`<p class="breadcrumb"><a href="${LOANS_PATH}">Loans</a> › <a href="${loanPath(id)}">${loanLabel(loan)}</a></p>
<h1>Reverse this payment?</h1>
${outcome('error', form?.error)}
<dl class="facts">
  <dt>Loan</dt><dd>${loanLabel(loan)}</dd>
  <dt>Date</dt><dd>${text(payment.date)}</dd>
  <dt>Amount</dt><dd>${cash(payment.amount, viewer.currency)}</dd>
  <dt>Type</dt><dd>${enumLabel(payment.type)}</dd>
  <dt>Method</dt><dd>${orDash(enumLabel(payment.method))}</dd>
</dl>
<p>The payment stays on record, marked reversed on the date below; it leaves the ledger, and every later payment is applied again as if it had never been posted. A reason of NSF adds the product's NSF fee, dated the day of the reversal. A payment is reversed only once, and this cannot be undone.</p>
<form class="stack" method="post" action="${loanPath(id)}/payments/${text(payment.id)}/reverse">
  ${csrfField(viewer.csrfToken)}
  <div class="form-grid">
    <div class="field"><label for="reversal-reason">Reason (required)</label><select id="reversal-reason" name="reason" required aria-required="true"${refusedField(form?.error, 'Reason')}><option value="">Choose…</option>${REVERSAL_REASON_LABELS.map(
      ([value, label]) => html`<option value="${value}"${reason === value ? html` selected` : null}>${label}</option>`,
    )}</select></div>
    <div class="field"><label for="reversal-date">Date reversed</label>${dateInput('reversal-date', 'date', date, true, refusedField(form?.error, 'Date reversed'))}</div>
  </div>
  <div class="actions">
    <button type="submit" class="button-danger">Reverse payment</button>
    <a class="button button-secondary" href="${loanPath(id)}#payments">Cancel</a>
  </div>
</form>`,
  );
}

/**
 * The confirmation step of deleting a loan entered by mistake (one without money history): what
 * goes with it, and a page of its own, so it works without JavaScript.
 */
export function deleteLoanPage(viewer: Viewer, loan: Row): string {
  const id = text(loan.id);
  const countOf = (name: string) => Number(text(row(row(loan[`${name}_aggregate`])?.aggregate)?.count) || '0');
  const going = (
    [
      ['schedule row', 'schedule rows', countOf('schedules')],
      ['task', 'tasks', countOf('tasks')],
      ['comment', 'comments', countOf('comments')],
      ['borrower link', 'borrower links', countOf('borrows')],
      ['guarantor link', 'guarantor links', countOf('guarantees')],
      ['document link', 'document links', countOf('loan_documents')],
      ['address link', 'address links', countOf('address_details')],
    ] as const
  )
    .filter(([, , n]) => n > 0)
    .map(([one, many, n]) => `${n} ${n === 1 ? one : many}`);
  return renderPage(
    { title: `Delete the loan ${loanLabel(loan)}`, viewer, section: 'loans' },
    html`<p class="breadcrumb"><a href="${LOANS_PATH}">Loans</a> › <a href="${loanPath(id)}">${loanLabel(loan)}</a></p>
<h1>Delete this loan?</h1>
<dl class="facts">
  <dt>Loan</dt><dd>${loanLabel(loan)}</dd>
  <dt>Status</dt><dd>${statusPill(loan.status)}</dd>
  <dt>Amount</dt><dd>${cash(loan.amount, viewer.currency)}</dd>
</dl>
<p>The loan has no payment, fee, funding source or investor line, so it can be deleted: for a loan entered by mistake (a lead typed twice, a test loan). ${
      going.length ? `With it go its ${going.length > 1 ? `${going.slice(0, -1).join(', ')} and ${going[going.length - 1]}` : going[0]}.` : 'Nothing else goes with it.'
    } Its borrowers, guarantors, documents and addresses stay in the account. This cannot be undone.</p>
<form class="stack" method="post" action="${loanPath(id)}/delete">
  ${csrfField(viewer.csrfToken)}
  <div class="actions">
    <button type="submit" class="button-danger">Delete loan</button>
    <a class="button button-secondary" href="${loanPath(id)}">Cancel</a>
  </div>
</form>`,
  );
}
