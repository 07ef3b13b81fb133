import { html, type Html } from '../html.js';
import { message, renderPage, type Viewer } from './layout.js';
import { pager, pageStatus } from './loanPages.js';
import { loanPath, personPath } from './servicingPaths.js';
import { cash, enumLabel, loanLabel, orDash, row, rows, statusPill, text, type Row } from './servicingFormat.js';

export const PEOPLE_PATH = '/dashboard/people';

export interface PeopleListView {
  readonly people: readonly Row[];
  readonly total: number;
  readonly search: string;
  readonly page: number;
  readonly pageSize: number;
}

/** The people list's address for a search and a page (the first has no `?page=`). */
export function peopleListHref(search: string, page: number): string {
  const params = new URLSearchParams();
  if (search) params.set('q', search);
  if (page > 1) params.set('page', String(page));
  const query = params.toString();
  return query ? `${PEOPLE_PATH}?${query}` : PEOPLE_PATH;
}

/** People: search by name or e-mail, paged. */
export function peopleListPage(viewer: Viewer, view: PeopleListView): string {
  const href = (page: number) => peopleListHref(view.search, page);
  return renderPage(
    { title: 'People', viewer, section: 'people' },
    html`<h1>People</h1>
<form class="filters" method="get" action="${PEOPLE_PATH}" role="search" aria-label="People">
  <div class="field">
    <label for="people-search">Search <span class="hint">(name or e-mail)</span></label>
    <input id="people-search" name="q" type="search" value="${view.search}" maxlength="200">
  </div>
  <div><button type="submit">Search</button></div>
</form>
<p class="hint" role="status">${view.total === 0 ? 'No people match.' : pageStatus({ one: 'person', many: 'people' }, view.page, view.total, view.pageSize, view.search ? ` matching “${view.search}”` : '')}</p>
${
  view.people.length
    ? html`<div class="table-scroll" role="region" aria-labelledby="people-caption" tabindex="0"><table>
  <caption id="people-caption" class="visually-hidden">People</caption>
  <thead><tr><th scope="col">Name</th><th scope="col">E-mail</th><th scope="col">Kind</th><th scope="col">Roles</th><th scope="col">Status</th></tr></thead>
  <tbody>${view.people.map(
    (person) => html`<tr><td><a href="${personPath(text(person.id))}">${text(person.name)}</a></td><td>${orDash(person.email)}</td><td>${enumLabel(person.entity_type)}</td><td>${roles(person)}</td><td>${statusPill(person.status)}</td></tr>`,
  )}</tbody></table></div>`
    : null
}
${pager({ page: view.page }, view.total, view.pageSize, href, 'People pages')}`,
  );
}

function roles(person: Row): string {
  return [person.is_borrower === true ? 'borrower' : '', person.is_investor === true ? 'investor' : ''].filter(Boolean).join(', ') || '—';
}

/** A person: details and the loans they borrow, guarantee and fund. */
export function personPage(viewer: Viewer, person: Row, notice?: string): string {
  return renderPage(
    { title: text(person.name), viewer, section: 'people' },
    html`<p class="breadcrumb"><a href="${PEOPLE_PATH}">People</a></p>
<h1>${text(person.name)} ${statusPill(person.status)}</h1>
${message('ok', notice)}
<section class="card" aria-labelledby="person-heading">
  <h2 id="person-heading">Details</h2>
  <dl class="facts">
    <dt>E-mail</dt><dd>${orDash(person.email)}</dd>
    <dt>Phone</dt><dd>${orDash(person.phone)}</dd>
    <dt>Kind</dt><dd>${enumLabel(person.entity_type)}</dd>
    <dt>Roles</dt><dd>${roles(person)}</dd>
  </dl>
</section>
${loanTable('Borrows', 'borrows-heading', `Loans ${text(person.name)} borrows`, viewer.currency, rows(person.borrows).map((link) => ({ loan: row(link.loan) ?? {}, extra: null })))}
${loanTable('Guarantees', 'guarantees-heading', `Loans ${text(person.name)} guarantees`, viewer.currency, rows(person.guarantees).map((link) => ({ loan: row(link.loan) ?? {}, extra: null })))}
${loanTable(
  'Funds',
  'funds-heading',
  `Loans ${text(person.name)} funds`,
  viewer.currency,
  rows(person.funding_sources).map((source) => ({ loan: row(source.loan) ?? {}, extra: html`${cash(source.original_amount, viewer.currency)}${text(source.class) ? ` (class ${text(source.class)})` : ''}` })),
  'Funded',
)}`,
  );
}

function loanTable(title: string, headingId: string, caption: string, currency: string, entries: readonly { loan: Row; extra: Html | null }[], extraLabel?: string): Html {
  return html`<section aria-labelledby="${headingId}">
  <h2 id="${headingId}">${title} <span class="count">${entries.length}</span></h2>
  ${
    entries.length
      ? html`<div class="table-scroll" role="region" aria-labelledby="${headingId}-caption" tabindex="0"><table>
    <caption id="${headingId}-caption" class="visually-hidden">${caption}</caption>
    <thead><tr><th scope="col">Loan</th><th scope="col">Status</th><th scope="col" class="num">Amount</th><th scope="col">Maturity</th>${extraLabel ? html`<th scope="col">${extraLabel}</th>` : null}</tr></thead>
    <tbody>${entries.map(
      ({ loan, extra }) => html`<tr><td><a href="${loanPath(text(loan.id))}">${loanLabel(loan)}</a></td><td>${statusPill(loan.status)}</td><td class="num">${cash(loan.amount, currency)}</td><td>${orDash(loan.date_maturity)}</td>${extraLabel ? html`<td>${extra}</td>` : null}</tr>`,
    )}</tbody></table></div>`
      : html`<p class="hint">None.</p>`
  }
</section>`;
}
