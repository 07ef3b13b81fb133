import type { AgingBucket, AgingSummary, CollectionsFilter, CollectionsQueue, CollectionsSort, LateLoan, SortDirection } from '../../app/collectionsQueue.js';
import { html, type Html } from '../html.js';
import { renderPage, type Viewer } from './layout.js';
import { pager, pageStatus } from './loanPages.js';
import { cash, centsOf, fromCents, loanLabel, orDash } from './servicingFormat.js';
import { COLLECTIONS_CSV_PATH, COLLECTIONS_PATH, loanPath } from './servicingPaths.js';

/** The page's query: the queue's filter and the page number. */
export interface CollectionsPageQuery extends CollectionsFilter {
  readonly page: number;
}

export interface CollectionsView {
  readonly summary: AgingSummary;
  readonly queue: CollectionsQueue;
  readonly query: CollectionsPageQuery;
  readonly pageSize: number;
  /** The most rows a download holds. */
  readonly downloadCap: number;
}

/** Each sortable column: its sort, its heading, the direction a first click sorts by. */
export const SORTABLE_COLUMNS: readonly { readonly sort: CollectionsSort; readonly label: string; readonly first: SortDirection }[] = [
  { sort: 'name', label: 'Loan', first: 'asc' },
  { sort: 'days', label: 'Days past due', first: 'desc' },
  { sort: 'amount_past_due', label: 'Amount past due', first: 'desc' },
  { sort: 'fees_due', label: 'Fees due', first: 'desc' },
  { sort: 'last_payment', label: 'Last payment', first: 'asc' },
  { sort: 'next_task', label: 'Next task', first: 'asc' },
];

/** The direction a sort takes when none is given: its column's first click. */
export function defaultDirection(sort: CollectionsSort): SortDirection {
  return SORTABLE_COLUMNS.find((column) => column.sort === sort)?.first ?? 'desc';
}

/**
 * The query string of the queue's address for `query` with `changes`: only what differs from
 * the defaults, in a fixed order, so the page's links, its form and its download agree.
 */
export function collectionsSearch(query: CollectionsPageQuery, changes: Partial<CollectionsPageQuery> = {}, withPage = true): string {
  const next = { ...query, ...changes };
  const params = new URLSearchParams();
  if (next.bucket !== null) params.set('bucket', next.bucket);
  if (next.minDays !== null) params.set('min_days', String(next.minDays));
  if (next.search) params.set('q', next.search);
  if (next.sort !== 'days') params.set('sort', next.sort);
  if (next.direction !== defaultDirection(next.sort)) params.set('dir', next.direction);
  if (withPage && next.page > 1) params.set('page', String(next.page));
  const text = params.toString();
  return text ? `?${text}` : '';
}

/**
 * Collections (issue 31): the aging summary per delinquency bucket with a bar chart drawn here
 * (SVG, no script), and the queue of late loans — sortable by its column headers, filtered by a
 * GET form, 50 a page, each row a link to its loan — with a CSV download of the same rows.
 */
export function collectionsPage(viewer: Viewer, view: CollectionsView): string {
  const { query, queue, summary } = view;
  const late = summary.buckets.reduce((sum, bucket) => sum + bucket.count, 0);
  const csvHref = `${COLLECTIONS_CSV_PATH}${collectionsSearch(query, {}, false)}`;
  return renderPage(
    { title: 'Collections', viewer, section: 'collections', bodyClass: 'page-wide' },
    html`<div class="page-head"><h1>Collections</h1><a class="button button-secondary" href="${csvHref}" download>Download CSV</a></div>
<p class="lead">Business date ${summary.businessDate}. Days past due by the ledger (SPEC §12 R3: from the oldest row unpaid beyond the product's arrears tolerance); amounts past due are the unpaid principal and interest of rows due before today.</p>
<section class="card aging" aria-labelledby="aging-heading" id="aging">
  <h2 id="aging-heading">Aging by bucket</h2>
  <div class="aging-parts">
    ${agingTable(summary.buckets, query, viewer.currency, late)}
    ${agingChart(summary.buckets)}
  </div>
</section>
<section aria-labelledby="queue-heading" id="queue">
  <h2 id="queue-heading">Late loans</h2>
  ${filters(query, summary.buckets)}
  <p class="hint" role="status" id="queue-status">${queue.total === 0 ? noLateLoan(query, summary.buckets) : queueStatus(query, queue.total, view.pageSize)}${queue.total > view.downloadCap ? ` The download holds the first ${view.downloadCap.toLocaleString('en')}.` : ''}</p>
  ${queue.rows.length ? queueTable(queue.rows, query, viewer.currency, summary.businessDate) : null}
  ${pager(query, queue.total, view.pageSize, (page) => `${COLLECTIONS_PATH}${collectionsSearch(query, { page })}`, 'Late loan pages')}
</section>`,
  );
}

/**
 * What the queue's rows are: `Late loans 51–100 of 130 in bucket 30-59.` On a page past the last
 * (the queue shrank since the link was made: loans cured while the clerk worked page 3, then
 * reloaded it) it says so and where the loans are; it said "Late loans 101–1 of 1" (`pageStatus`,
 * which every paged list of the dashboard uses).
 */
function queueStatus(query: CollectionsPageQuery, total: number, pageSize: number): string {
  const matching = `${query.bucket !== null ? ` in bucket ${query.bucket}` : ''}${query.minDays !== null ? `, at least ${query.minDays} days past due` : ''}${query.search ? `, named like “${query.search}”` : ''}`;
  return pageStatus({ one: 'late loan', many: 'late loans' }, query.page, total, pageSize, matching);
}

function agingTable(buckets: readonly AgingBucket[], query: CollectionsPageQuery, currency: string, loans: number): Html {
  return html`<div class="table-scroll" role="region" aria-labelledby="aging-caption" tabindex="0">
<table class="aging-table">
  <caption id="aging-caption" class="visually-hidden">Loans in servicing per delinquency bucket</caption>
  <thead><tr><th scope="col">Bucket</th><th scope="col" class="num">Loans</th><th scope="col" class="num">Amount past due</th><th scope="col" class="num">Principal outstanding</th></tr></thead>
  <tbody>
    ${buckets.map(
      (bucket) => html`<tr${query.bucket === bucket.name ? html` class="is-selected"` : null}>
      <th scope="row"><a href="${COLLECTIONS_PATH}${collectionsSearch(query, { bucket: bucket.name, page: 1 })}"${query.bucket === bucket.name ? html` aria-current="true"` : null}>${bucket.name}</a></th>
      <td class="num">${String(bucket.count)}</td>
      <td class="num">${cash(bucket.amountPastDue, currency)}</td>
      <td class="num">${cash(bucket.principalOutstanding, currency)}</td>
    </tr>`,
    )}
  </tbody>
  <tfoot><tr><th scope="row">All in servicing</th><td class="num">${String(loans)}</td><td class="num">${cash(total(buckets, 'amountPastDue'), currency)}</td><td class="num">${cash(total(buckets, 'principalOutstanding'), currency)}</td></tr></tfoot>
</table>
</div>`;
}

/** The exact sum of one amount over the buckets (cents, never a float). */
function total(buckets: readonly AgingBucket[], amount: 'amountPastDue' | 'principalOutstanding'): string {
  return fromCents(buckets.reduce((sum, bucket) => sum + (centsOf(bucket[amount]) ?? 0n), 0n));
}

/** Geometry of the chart, in the SVG's own units (it scales to its box). */
const CHART = { width: 440, labelWidth: 96, countWidth: 56, bar: 22, gap: 10, top: 8 } as const;

/**
 * A horizontal bar per bucket, its length the bucket's number of loans, with the bucket's name
 * and count written beside it (no colour or hover needed to read it). `role="img"` with a title
 * and a description that says every figure, for screen readers.
 */
export function agingChart(buckets: readonly AgingBucket[]): Html {
  const max = Math.max(1, ...buckets.map((bucket) => bucket.count));
  const span = CHART.width - CHART.labelWidth - CHART.countWidth;
  const height = CHART.top * 2 + buckets.length * (CHART.bar + CHART.gap) - CHART.gap;
  const described = buckets.map((bucket) => `${bucket.name}: ${bucket.count} loan${bucket.count === 1 ? '' : 's'}`).join('; ');
  return html`<figure class="aging-chart">
  <svg role="img" aria-labelledby="aging-chart-title aging-chart-desc" viewBox="0 0 ${CHART.width} ${height}" width="100%" preserveAspectRatio="xMinYMin meet" xmlns="http://www.w3.org/2000/svg">
    <title id="aging-chart-title">Loans in servicing per delinquency bucket</title>
    <desc id="aging-chart-desc">${described}.</desc>
    ${buckets.map((bucket, index) => {
      const y = CHART.top + index * (CHART.bar + CHART.gap);
      const width = bucket.count === 0 ? 0 : Math.max(2, Math.round((bucket.count / max) * span));
      return html`<g class="bar${index === 0 ? ' bar-current' : ''}">
      <text x="${CHART.labelWidth - 8}" y="${y + CHART.bar / 2}" text-anchor="end" dominant-baseline="central">${bucket.name}</text>
      <rect x="${CHART.labelWidth}" y="${y}" width="${width}" height="${CHART.bar}" rx="3"></rect>
      <text x="${CHART.labelWidth + width + 6}" y="${y + CHART.bar / 2}" dominant-baseline="central" class="bar-count">${String(bucket.count)}</text>
    </g>`;
    })}
  </svg>
  <figcaption class="hint">Loans per bucket (the first bucket: not late).</figcaption>
</figure>`;
}

/**
 * The queue's line when no late loan matches. The queue lists loans 1 day or more past due; a
 * bucket that starts at 0 days (SPEC §12's "current") counts loans that are not late too, so its
 * count in the aging table can be loans the queue never shows: the line says so.
 */
function noLateLoan(query: CollectionsPageQuery, buckets: readonly AgingBucket[]): string {
  const bucket = query.bucket === null ? undefined : buckets.find((candidate) => candidate.name === query.bucket);
  if (!bucket || bucket.count === 0 || query.minDays !== null || query.search) return 'No late loan matches.';
  return `No late loan in bucket ${bucket.name}: its ${bucket.count} loan${bucket.count === 1 ? ' is' : 's are'} not past due (this list holds loans 1 day or more past due).`;
}

function filters(query: CollectionsPageQuery, buckets: readonly AgingBucket[]): Html {
  return html`<form class="filters" method="get" action="${COLLECTIONS_PATH}" role="search" aria-label="Late loans">
  <div class="field">
    <label for="queue-bucket">Bucket</label>
    <select id="queue-bucket" name="bucket">
      <option value=""${query.bucket === null ? html` selected` : null}>All late loans</option>
      ${buckets.map((bucket) => html`<option value="${bucket.name}"${query.bucket === bucket.name ? html` selected` : null}>${bucket.name}</option>`)}
    </select>
  </div>
  <div class="field">
    <label for="queue-min-days">At least <span class="hint">(days past due)</span></label>
    <input id="queue-min-days" name="min_days" type="number" min="1" max="36500" step="1" inputmode="numeric" value="${query.minDays === null ? '' : String(query.minDays)}">
  </div>
  <div class="field">
    <label for="queue-search">Loan name</label>
    <input id="queue-search" name="q" type="search" value="${query.search}" maxlength="200">
  </div>
  ${query.sort !== 'days' ? html`<input type="hidden" name="sort" value="${query.sort}">` : null}
  ${query.direction !== defaultDirection(query.sort) ? html`<input type="hidden" name="dir" value="${query.direction}">` : null}
  <div><button type="submit">Show late loans</button></div>
</form>`;
}

/** A sortable column's header: a link sorting by it (the other way when it is the sort), `aria-sort` on the sorted one. */
function sortHeader(query: CollectionsPageQuery, sort: CollectionsSort, numeric: boolean): Html {
  const column = SORTABLE_COLUMNS.find((entry) => entry.sort === sort)!;
  const sorted = query.sort === sort;
  const next: SortDirection = sorted ? (query.direction === 'asc' ? 'desc' : 'asc') : column.first;
  const href = `${COLLECTIONS_PATH}${collectionsSearch(query, { sort, direction: next, page: 1 })}`;
  return html`<th scope="col"${numeric ? html` class="num"` : null}${sorted ? html` aria-sort="${query.direction === 'asc' ? 'ascending' : 'descending'}"` : null}><a href="${href}" class="sort-link">${column.label}${
    sorted ? html`<span aria-hidden="true" class="sort-mark">${query.direction === 'asc' ? ' ▲' : ' ▼'}</span>` : null
  }<span class="visually-hidden">, sort ${next === 'asc' ? 'ascending' : 'descending'}</span></a></th>`;
}

/** The loan's next open task: its due day (marked overdue before the business date) and name; "none planned" when it has no open task. */
function nextTask(loan: LateLoan, today: string): Html {
  if (loan.nextTaskName === null) return html`<span class="hint">none planned</span>`;
  const due = loan.nextTaskDue;
  const when = due === null ? html`<span class="hint">no due date</span>` : due < today ? html`<span class="overdue">overdue: due ${due}</span>` : html`due ${due}`;
  return html`${when}<br><span class="hint">${loan.nextTaskName}</span>`;
}

function queueTable(loans: readonly LateLoan[], query: CollectionsPageQuery, currency: string, today: string): Html {
  return html`<div class="table-scroll" role="region" aria-labelledby="queue-caption" tabindex="0">
<table class="queue-table">
  <caption id="queue-caption" class="visually-hidden">Queue of late loans</caption>
  <thead><tr>
    ${sortHeader(query, 'name', false)}
    <th scope="col">Borrower</th>
    ${sortHeader(query, 'days', true)}
    <th scope="col">Bucket</th>
    ${sortHeader(query, 'amount_past_due', true)}
    <th scope="col" class="num">Principal outstanding</th>
    ${sortHeader(query, 'fees_due', true)}
    ${sortHeader(query, 'last_payment', false)}
    ${sortHeader(query, 'next_task', false)}
  </tr></thead>
  <tbody>
    ${loans.map(
      (loan) => html`<tr>
      <td><a href="${loanPath(loan.id)}">${loanLabel({ id: loan.id, name: loan.name })}</a></td>
      <td class="contact">${loan.borrowerName === null ? orDash(null) : html`${loan.borrowerName}${loan.borrowerEmail ? html`<br><a href="mailto:${loan.borrowerEmail}">${loan.borrowerEmail}</a>` : null}${loan.borrowerPhone ? html`<br><a href="tel:${loan.borrowerPhone.replace(/[^+\d]/g, '')}">${loan.borrowerPhone}</a>` : null}`}</td>
      <td class="num">${String(loan.daysPastDue)}</td>
      <td class="nowrap">${loan.bucket}</td>
      <td class="num">${cash(loan.amountPastDue, currency)}</td>
      <td class="num">${cash(loan.principalOutstanding, currency)}</td>
      <td class="num">${cash(loan.feesDue, currency)}</td>
      <td class="nowrap">${loan.lastPaymentDate === null ? html`<span class="hint">never</span>` : html`${loan.lastPaymentDate}<br><span class="hint">${cash(loan.lastPaymentAmount, currency)}</span>`}</td>
      <td class="task-cell">${nextTask(loan, today)}</td>
    </tr>`,
    )}
  </tbody>
</table>
</div>`;
}
