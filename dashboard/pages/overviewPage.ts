import { html, type Html } from '../html.js';
import type { StartPageData } from '../servicingData.js';
import { renderPage, type Viewer } from './layout.js';
import { DUE_THIS_WEEK_HREF } from './loanPages.js';
import { COLLECTIONS_PATH, loanPath } from './servicingPaths.js';
import { assigneeText, cash, loanLabel, row, statusPill, text, type Row } from './servicingFormat.js';
import { FILTER_PHRASES, tasksPageHref, whoseTasksNav } from './tasksPage.js';
import type { TaskFilter } from '../taskForm.js';

/**
 * The overview: the servicer's start page (issue 28) — what is due this week, which loans are
 * late by the ledger's days past due, and the open tasks by due date, each a link to its loan, with
 * its assignee and the Tasks page's Mine / Everyone / Unassigned (`?assignee=`) — then the console
 * and the keys. `me` is the signed-in admin: "(you)" beside their tasks' assignee.
 */
export function overviewPage(viewer: Viewer, counts: { readonly activeKeys: number }, start: StartPageData, me: string): string {
  return renderPage(
    { title: 'Overview', viewer, section: 'overview' },
    html`<h1>${viewer.accountName}</h1>
<p class="lead">Logged in as ${viewer.adminEmail}. Business date ${start.businessDate}.</p>
<div class="start-page">
${dueThisWeek(start, viewer.currency)}
${lateLoans(start)}
${openTasks(start, me)}
</div>
<div class="cards">
  <section class="card" aria-labelledby="console-card">
    <h2 id="console-card">Query console</h2>
    <p>Run GraphQL against this account's data and see the one SQL statement each query becomes, with its plan.</p>
    <a class="button" href="/dashboard/console">Open the console</a>
  </section>
  <section class="card" aria-labelledby="keys-card">
    <h2 id="keys-card">API keys</h2>
    <p>${counts.activeKeys === 1 ? '1 active key' : `${counts.activeKeys} active keys`} can reach this account's data through <code>/api</code>.</p>
    <a class="button button-secondary" href="/dashboard/settings/api-keys">Manage API keys</a>
  </section>
</div>`,
  );
}

/** A link to a loan by its label. */
function loanLink(loan: Row | null): Html | string {
  return loan ? html`<a href="${loanPath(text(loan.id))}">${loanLabel(loan)}</a>` : '';
}

/**
 * This week's payments, soonest first: the first `dueShown` (as the late loans and the open tasks,
 * the card stays a card however many are due), how many there are in all, and a link to every
 * one of them in the loans list, filtered and sorted the same way.
 */
function dueThisWeek(start: StartPageData, currency: string): Html {
  const shown = start.dueThisWeek.length;
  return html`<section class="card" aria-labelledby="due-heading" id="due-this-week">
  <h2 id="due-heading">Due this week <span class="count">${String(start.dueCount)}</span></h2>
  ${
    shown
      ? html`<table>
    <caption class="visually-hidden">Payments due from ${start.businessDate} to ${start.weekEnd}, soonest first</caption>
    <thead><tr><th scope="col">Due</th><th scope="col">Loan</th><th scope="col" class="num">Payment</th></tr></thead>
    <tbody>${start.dueThisWeek.map((due) => html`<tr><td class="nowrap">${text(due.due)}</td><td>${loanLink(row(due.loan))}</td><td class="num">${cash(due.payment, currency)}</td></tr>`)}</tbody>
  </table>
  ${start.dueCount > shown ? html`<p class="hint">The first ${String(shown)} of ${String(start.dueCount)} payments due from ${start.businessDate} to ${start.weekEnd}, soonest first.</p>` : null}
  <p><a href="${DUE_THIS_WEEK_HREF}">Loans due this week</a>: ${start.dueCount === 1 ? 'the one' : `all ${String(start.dueCount)}`} in the loans list, soonest first, with their borrowers.</p>`
      : html`<p>No payment is due from ${start.businessDate} to the end of the week.</p>`
  }
</section>`;
}

function lateLoans(start: StartPageData): Html {
  return html`<section class="card" aria-labelledby="late-heading" id="late-loans">
  <h2 id="late-heading">Late loans</h2>
  ${
    start.late.length
      ? html`<table>
    <caption class="visually-hidden">Late loans, most overdue first</caption>
    <thead><tr><th scope="col">Loan</th><th scope="col" class="num">Days past due</th><th scope="col">Oldest unpaid due</th></tr></thead>
    <tbody>${start.late.map(({ loan, daysPastDue }) => html`<tr><td>${loanLink(loan)}</td><td class="num">${String(daysPastDue)}</td><td class="nowrap">${text(loan.oldest_unpaid_due)}</td></tr>`)}</tbody>
  </table>`
      : html`<p>No loan is past due.</p>`
  }
  ${
    start.lateCount > start.late.length
      ? html`<p class="hint">The ${String(start.late.length)} most overdue of ${String(start.lateCount)} late loans.</p>`
      : null
  }
  <p><a href="${COLLECTIONS_PATH}">Collections queue</a>: every late loan by bucket, with amounts past due, contacts and a CSV download.</p>
</section>`;
}

/** The overview with the open tasks of a filter, at its Open tasks card (everyone's, the default, unsaid). */
export function overviewHref(filter: TaskFilter): string {
  return filter === 'everyone' ? '/dashboard#open-tasks' : `/dashboard?assignee=${filter}#open-tasks`;
}

function openTasks(start: StartPageData, me: string): Html {
  const filter = start.taskFilter;
  const phrase = FILTER_PHRASES.get(filter) ?? '';
  const more = start.openTaskCount - start.openTasks.length;
  // Tasks without a loan have no loan page: those past the list are counted apart; the Tasks page lists them all.
  const accountTasksNotShown = start.openAccountTaskCount - start.openTasks.filter((task) => !row(task.loan)).length;
  return html`<section class="card" aria-labelledby="open-tasks-heading" id="open-tasks">
  <h2 id="open-tasks-heading">Open tasks <span class="count">${String(start.openTaskCount)}</span></h2>
  ${whoseTasksNav(filter, overviewHref)}
  ${
    start.openTasks.length
      ? html`<table>
    <caption class="visually-hidden">Open tasks${phrase} by due date</caption>
    <thead><tr><th scope="col">Due</th><th scope="col">Task</th><th scope="col">Status</th><th scope="col">Loan</th><th scope="col">Assignee</th></tr></thead>
    <tbody>${start.openTasks.map((task) => {
      const due = text(task.date_due);
      const overdue = due !== '' && due < start.businessDate;
      return html`<tr${overdue ? html` class="is-overdue"` : null}><td class="nowrap">${due ? (overdue ? html`<span class="overdue">overdue: due ${due}</span>` : html`due ${due}`) : html`<span class="hint">no due date</span>`}</td><td>${text(task.name)}</td><td>${statusPill(task.status)}</td><td>${row(task.loan) ? loanLink(row(task.loan)) : html`<a href="${tasksPageHref(1, filter)}" class="hint">no loan (an account task)</a>`}</td><td>${assigneeText(task, me)}</td></tr>`;
    })}</tbody>
  </table>
  ${more > 0 ? html`<p class="hint">${String(more)} more open task${more === 1 ? '' : 's'}${phrase}, due later or with no due date${accountTasksNotShown > 0 ? html` (${String(accountTasksNotShown)} of them on no loan)` : null}: the <a href="${tasksPageHref(1, filter)}">Tasks</a> page lists them all.</p>` : null}`
      : html`<p>No open tasks${phrase}.</p>`
  }
</section>`;
}
