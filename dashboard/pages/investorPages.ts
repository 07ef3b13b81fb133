import type { InvestorListing, InvestorStatement, StatementPeriod } from '../../app/investorStatements.js';
import { STATEMENT_COLUMNS } from '../../app/investorStatements.js';
import type { RemittanceRun, RemittanceSummary } from '../../app/remittances.js';
import { html, type Html } from '../html.js';
import { csrfField, formatTimestamp, outcome, renderPage, type Viewer } from './layout.js';
import { onceField } from '../formOnce.js';
import { loanPath, personPath } from './servicingPaths.js';
import { cash, dateInput, enumLabel } from './servicingFormat.js';
import { pager, pageStatus } from './loanPages.js';

export const INVESTORS_PATH = '/dashboard/investors';
export const REMITTANCES_PATH = '/dashboard/remittances';

const investorPath = (id: string) => `${INVESTORS_PATH}/${encodeURIComponent(id)}`;
const periodQuery = (period: StatementPeriod) => `from=${period.from}&to=${period.to}`;

/** The GET form choosing a period (ISO date inputs), with `action` as its target. */
function periodForm(action: string, period: StatementPeriod, label: string, error: string | null): Html {
  return html`<form class="filters" method="get" action="${action}" aria-label="${label}">
  <div class="field"><label for="period-from">From</label>${dateInput('period-from', 'from', period.from, true)}</div>
  <div class="field"><label for="period-to">To</label>${dateInput('period-to', 'to', period.to, true)}</div>
  <div><button type="submit">Show</button></div>
</form>
${outcome('error', error)}`;
}

/** The investors list's address for a page (the first has no `?page=`). */
export function investorListHref(page: number): string {
  return page > 1 ? `${INVESTORS_PATH}?page=${page}` : INVESTORS_PATH;
}

/** A page of the investors list: who they are, their total, which page. */
export interface InvestorListView {
  readonly investors: readonly InvestorListing[];
  readonly total: number;
  readonly page: number;
  readonly pageSize: number;
}

/** Investors: the people who fund loans, by name, each linked to their page, paged; and a link to the remittance run. */
export function investorListPage(viewer: Viewer, view: InvestorListView): string {
  const { investors } = view;
  return renderPage(
    { title: 'Investors', viewer, section: 'investors' },
    html`<h1>Investors</h1>
<p>Each investor's page has their loans, distributions and statements. What to pay them for a period is on the <a href="${REMITTANCES_PATH}">remittance run</a>.</p>
${view.total > 0 ? html`<p class="hint" role="status">${pageStatus({ one: 'investor', many: 'investors' }, view.page, view.total, view.pageSize, '', ', by name')}</p>` : null}
${
  investors.length
    ? html`<div class="table-scroll" role="region" aria-labelledby="investors-caption" tabindex="0"><table>
  <caption id="investors-caption" class="visually-hidden">Investors</caption>
  <thead><tr><th scope="col">Investor</th><th scope="col" class="num">Loans funded</th><th scope="col" class="num">Funded</th></tr></thead>
  <tbody>${investors.map(
    (investor) => html`<tr><td><a href="${investorPath(investor.personId)}">${investor.name}</a></td><td class="num">${String(investor.loans)}</td><td class="num">${cash(investor.funded, viewer.currency)}</td></tr>`,
  )}</tbody></table></div>`
    : view.total > 0
      ? null
      : html`<p class="hint">No one funds a loan of this account yet.</p>`
}
${pager({ page: view.page }, view.total, view.pageSize, investorListHref, 'Investors pages')}`,
  );
}

/** An investor's page: the period's statement per loan, its distribution lines, and the statement's downloads. */
export function investorPage(viewer: Viewer, statement: InvestorStatement, error: string | null): string {
  const currency = statement.currency;
  const download = `${investorPath(statement.person.id)}/statement`;
  const names = new Map(statement.loans.map((loan) => [loan.loanId, loan.loanName]));
  return renderPage(
    { title: `${statement.person.name} · investor`, viewer, section: 'investors' },
    html`<p class="breadcrumb"><a href="${INVESTORS_PATH}">Investors</a></p>
<h1>${statement.person.name}</h1>
<p><a href="${personPath(statement.person.id)}">Contact details</a></p>
${periodForm(investorPath(statement.person.id), statement.period, 'Statement period', error)}
<section aria-labelledby="statement-heading">
  <h2 id="statement-heading">Statement ${statement.period.from} to ${statement.period.to}</h2>
  <p><a href="${download}.csv?${periodQuery(statement.period)}" download>Download CSV</a> · <a href="${download}.pdf?${periodQuery(statement.period)}" download>Download PDF</a></p>
  ${
    statement.loans.length
      ? html`<div class="table-scroll" role="region" aria-labelledby="statement-caption" tabindex="0"><table>
    <caption id="statement-caption" class="visually-hidden">Statement of ${statement.person.name} per loan, ${statement.period.from} to ${statement.period.to}</caption>
    <thead><tr><th scope="col">Loan</th>${STATEMENT_COLUMNS.map(([, label]) => html`<th scope="col" class="num">${label}</th>`)}</tr></thead>
    <tbody>${statement.loans.map(
      (loan) => html`<tr><td><a href="${loanPath(loan.loanId)}">${loan.loanName}</a></td>${STATEMENT_COLUMNS.map(([key]) => html`<td class="num">${cash(loan[key], currency)}</td>`)}</tr>`,
    )}</tbody>
    <tfoot><tr><th scope="row">Total</th>${STATEMENT_COLUMNS.map(([key]) => html`<td class="num"><strong>${cash(statement.totals[key], currency)}</strong></td>`)}</tr></tfoot>
  </table></div>`
      : html`<p class="hint">This person funds no loan in this period.</p>`
  }
</section>
<section aria-labelledby="lines-heading">
  <h2 id="lines-heading">Distributions <span class="count">${statement.lines.length}</span></h2>
  ${
    statement.lines.length
      ? html`<div class="table-scroll" role="region" aria-labelledby="lines-caption" tabindex="0"><table>
    <caption id="lines-caption" class="visually-hidden">Distribution lines of ${statement.person.name}, ${statement.period.from} to ${statement.period.to}</caption>
    <thead><tr><th scope="col">Date</th><th scope="col">Loan</th><th scope="col">Component</th><th scope="col" class="num">Amount</th><th scope="col">Kind</th><th scope="col">Remitted</th></tr></thead>
    <tbody>${statement.lines.map(
      (line) => html`<tr><td>${line.date}</td><td>${names.get(line.loanId) ?? line.loanId}</td><td>${enumLabel(line.component)}</td><td class="num">${cash(line.amount, currency)}</td><td>${line.adjustment ? 'adjustment' : 'payment'}</td><td>${line.remittanceId ? 'yes' : 'not yet'}</td></tr>`,
    )}</tbody></table></div>`
      : html`<p class="hint">No distribution in this period.</p>`
  }
</section>`,
  );
}

export interface RemittancePageView {
  readonly run: RemittanceRun;
  readonly recent: readonly RemittanceSummary[];
  /** Whether older remittances than `recent` exist. */
  readonly olderRemittances?: boolean;
  readonly notice: string | null;
  readonly error: string | null;
}

/** The remittance run of a period: what to pay each investor, the mark-remitted form, and the recent remittances. */
export function remittancePage(viewer: Viewer, view: RemittancePageView): string {
  const { run } = view;
  const currency = run.currency;
  const amounts = [
    ['principal', 'Principal'],
    ['interest', 'Interest'],
    ['fees', 'Fees'],
    ['adjustments', 'Adjustments'],
    ['total', 'Total to pay'],
  ] as const;
  return renderPage(
    { title: 'Remittance', viewer, section: 'remittances' },
    html`<h1>Remittance run</h1>
<p>What the lender pays each investor: every distribution line not yet remitted, dated up to the period's last day — an adjustment to a period already remitted is paid here. The business date is ${run.businessDate}.</p>
${periodForm(REMITTANCES_PATH, run.period, 'Remittance period', view.error)}
${outcome('ok', view.notice)}
${run.remitted.map((r) => html`<p class="message message-info" role="status">The period ${r.period.from} to ${r.period.to} was remitted on ${formatTimestamp(r.remittedAt)} by ${r.remittedBy} (${cash(r.total, currency)}).</p>`)}
<section aria-labelledby="run-heading">
  <h2 id="run-heading">To pay for ${run.period.from} to ${run.period.to}</h2>
  <p><a href="${REMITTANCES_PATH}.csv?${periodQuery(run.period)}" download>Download CSV</a></p>
  ${
    run.investors.length
      ? html`<div class="table-scroll" role="region" aria-labelledby="run-caption" tabindex="0"><table>
    <caption id="run-caption" class="visually-hidden">What to pay each investor for ${run.period.from} to ${run.period.to}</caption>
    <thead><tr><th scope="col">Investor</th>${amounts.map(([, label]) => html`<th scope="col" class="num">${label}</th>`)}<th scope="col" class="num">Lines</th><th scope="col">Earliest line</th></tr></thead>
    <tbody>${run.investors.map(
      (investor) =>
        html`<tr><td><a href="${investorPath(investor.personId)}?${periodQuery(run.period)}">${investor.name}</a></td>${amounts.map(([key]) => html`<td class="num">${cash(investor[key], currency)}</td>`)}<td class="num">${String(investor.lineCount)}</td><td>${investor.earliestDate}</td></tr>`,
    )}</tbody>
    <tfoot><tr><th scope="row">Total</th>${amounts.map(([key]) => html`<td class="num"><strong>${cash(run.totals[key], currency)}</strong></td>`)}<td class="num">${String(run.totals.lineCount)}</td><td></td></tr></tfoot>
  </table></div>
  <form method="post" action="${REMITTANCES_PATH}" class="inline-form" aria-label="Mark remitted">
    ${csrfField(viewer.csrfToken)}${onceField()}
    <input type="hidden" name="from" value="${run.period.from}">
    <input type="hidden" name="to" value="${run.period.to}">
    <input type="hidden" name="total" value="${run.totals.total}">
    <input type="hidden" name="line_count" value="${String(run.totals.lineCount)}">
    <button type="submit">Mark ${run.period.from} to ${run.period.to} remitted (${cash(run.totals.total, currency)})</button>
  </form>`
      : html`<p class="hint">Nothing to pay for this period.</p>`
  }
</section>
<section aria-labelledby="recent-heading">
  <h2 id="recent-heading">Remitted</h2>
  ${view.olderRemittances ? html`<p class="hint">The ${String(view.recent.length)} most recent periods, newest first. Every remittance: <code>loanql remittance list</code>, or the GraphQL collection <code>remittances</code>.</p>` : null}
  ${
    view.recent.length
      ? html`<div class="table-scroll" role="region" aria-labelledby="recent-caption" tabindex="0"><table>
    <caption id="recent-caption" class="visually-hidden">Periods remitted, newest first</caption>
    <thead><tr><th scope="col">Period</th><th scope="col">Marked</th><th scope="col">By</th><th scope="col" class="num">Lines</th><th scope="col" class="num">Total</th></tr></thead>
    <tbody>${view.recent.map(
      (r) => html`<tr><td>${r.period.from} to ${r.period.to}</td><td>${formatTimestamp(r.remittedAt)}</td><td>${r.remittedBy}</td><td class="num">${String(r.lineCount)}</td><td class="num">${cash(r.total, currency)}</td></tr>`,
    )}</tbody></table></div>`
      : html`<p class="hint">No period was remitted yet.</p>`
  }
</section>`,
  );
}
