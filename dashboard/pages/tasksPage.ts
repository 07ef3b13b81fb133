import { html, type Html } from '../html.js';
import { onceField } from '../formOnce.js';
import { csrfField, outcome, renderPage, type Viewer } from './layout.js';
import { loanPath, TASKS_PATH, taskPath } from './servicingPaths.js';
import { assigneeSelect, assigneeText, dateInput, loanLabel, row, statusPill, text, type Row } from './servicingFormat.js';
import type { TaskAssignee, TaskFilter } from '../taskForm.js';

/** What the Tasks page shows: a page of the open tasks, their counts, and a notice or a refused form. */
export interface TasksPageView {
  /** Open tasks (status not `completed`) the filter keeps, soonest due first (no due date last): `{id name status date_due loan {id name} assignee {id name}}`. */
  readonly tasks: readonly Row[];
  /** How many open tasks the filter keeps. */
  readonly openCount: number;
  /** How many of those belong to no loan. */
  readonly accountCount: number;
  /** Whose tasks are listed (`?assignee=`). */
  readonly filter: TaskFilter;
  /** The signed-in admin's id: "Mine", and "(you)" beside their name. */
  readonly me: string;
  /** The account's users as the Assignee choice lists them (`assigneeChoices`). */
  readonly users: readonly TaskAssignee[];
  readonly page: number;
  readonly pageSize: number;
  /** The account's business date: a task due before it is overdue. */
  readonly businessDate: string;
  readonly notice?: string | null;
  /** The add form refused: why, and what was typed. */
  readonly form?: { readonly error: string; readonly values: ReadonlyMap<string, string> };
}

/** `/dashboard/tasks?assignee=mine&page=n`: the filter kept across pages (everyone's, the default, unsaid). */
export function tasksPageHref(page: number, filter: TaskFilter = 'everyone', done?: string): string {
  const query = new URLSearchParams();
  if (filter !== 'everyone') query.set('assignee', filter);
  if (page > 1) query.set('page', String(page));
  if (done) query.set('done', done);
  const search = query.toString();
  return search ? `${TASKS_PATH}?${search}` : TASKS_PATH;
}

/** The filter's links, each with what it lists. */
const FILTER_LABELS: ReadonlyMap<TaskFilter, string> = new Map([
  ['mine', 'Mine'],
  ['everyone', 'Everyone'],
  ['unassigned', 'Unassigned'],
]);

/** What the page says the filter keeps, after "Tasks 1–3 of 3" or "No open tasks" (nothing for everyone's). */
export const FILTER_PHRASES: ReadonlyMap<TaskFilter, string> = new Map([
  ['mine', ' assigned to you'],
  ['everyone', ''],
  ['unassigned', ' assigned to no one'],
]);

/** A form's hidden field carrying the page's filter, so that its answer lists the same tasks. */
const filterField = (filter: TaskFilter): Html | null => (filter === 'everyone' ? null : html`<input type="hidden" name="assignee" value="${filter}">`);

/** The filter's links in the order shown. */
const TASK_FILTER_ORDER: readonly TaskFilter[] = ['mine', 'everyone', 'unassigned'];

/** Mine / Everyone / Unassigned, the one in use marked: the Tasks page's and the overview's (`hrefOf` each page's address for a filter). */
export function whoseTasksNav(current: TaskFilter, hrefOf: (filter: TaskFilter) => string): Html {
  return html`<nav class="status-tabs" aria-label="Whose tasks"><ul>${TASK_FILTER_ORDER.map(
    (filter) => html`<li><a href="${hrefOf(filter)}"${filter === current ? html` aria-current="page"` : null}>${FILTER_LABELS.get(filter) ?? filter}</a></li>`,
  )}</ul></nav>`;
}

function dueCell(task: Row, today: string): Html {
  const due = text(task.date_due);
  if (!due) return html`<span class="hint">no due date</span>`;
  return due < today ? html`<span class="overdue">overdue: due ${due}</span>` : html`due ${due}`;
}

/**
 * The Tasks page (session 40): every open task of the account — its own (no loan: README "Tasks
 * without a loan") and its loans' — soonest due first, each with Complete and Edit, and a form
 * adding a task of the account. A loan's tasks are added on its page, as before.
 */
export function tasksPage(viewer: Viewer, view: TasksPageView): string {
  const first = (view.page - 1) * view.pageSize + 1;
  const last = first + view.tasks.length - 1;
  const pages = Math.max(1, Math.ceil(view.openCount / view.pageSize));
  const typed = (name: string): string => view.form?.values.get(name) ?? '';
  const phrase = FILTER_PHRASES.get(view.filter) ?? '';
  const noLoan =
    view.filter === 'everyone'
      ? `${String(view.accountCount)} of all open tasks belong to no loan`
      : `${String(view.accountCount)} of them ${view.accountCount === 1 ? 'belongs' : 'belong'} to no loan`;
  return renderPage(
    { title: 'Tasks', viewer, section: 'tasks' },
    html`<h1>Tasks</h1>
<p class="lead">Open tasks of the account and of its loans, soonest due first. Business date ${view.businessDate}.</p>
${view.form ? outcome('error', view.form.error) : outcome('ok', view.notice)}
<section class="card" aria-labelledby="add-task-heading">
  <h2 id="add-task-heading">Add an account task</h2>
  <p class="hint">A task of the account itself, on no loan (a licence to renew, an audit to prepare). A loan's tasks are added on the loan's page.</p>
  <form class="inline-form" method="post" action="${TASKS_PATH}" aria-label="Add an account task">
    ${csrfField(viewer.csrfToken)}${onceField()}${filterField(view.filter)}
    <div class="field"><label for="task-name">Task</label><input id="task-name" name="name" type="text" required maxlength="500" value="${typed('name')}"></div>
    <div class="field"><label for="task-due">Due</label>${dateInput('task-due', 'date_due', typed('date_due'), false)}</div>
    <div class="field"><label for="task-assignee">Assignee</label>${assigneeSelect('task-assignee', view.users, view.me, typed('assignee_id'))}</div>
    <div><button type="submit">Add task</button></div>
  </form>
</section>
<section class="card" aria-labelledby="open-tasks-heading" id="open-tasks">
  <h2 id="open-tasks-heading">Open tasks <span class="count">${String(view.openCount)}</span></h2>
  ${whoseTasksNav(view.filter, (filter) => tasksPageHref(1, filter))}
  ${
    view.tasks.length
      ? html`<p class="hint" id="tasks-status">Tasks ${String(first)}–${String(last)} of ${String(view.openCount)}${phrase}; ${noLoan}.</p>
  <div class="table-scroll" role="region" aria-labelledby="tasks-caption" tabindex="0">
  <table class="tasks-table">
    <caption id="tasks-caption" class="visually-hidden">Open tasks${phrase || ' of everyone'}</caption>
    <thead><tr><th scope="col">Due</th><th scope="col">Task</th><th scope="col">Status</th><th scope="col">Loan</th><th scope="col">Assignee</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
    <tbody>${view.tasks.map((task) => {
      const loan = row(task.loan);
      const overdue = text(task.date_due) !== '' && text(task.date_due) < view.businessDate;
      return html`<tr${overdue ? html` class="is-overdue"` : null}><td class="nowrap">${dueCell(task, view.businessDate)}</td><td>${text(task.name)}</td><td>${statusPill(task.status)}</td><td>${loan ? html`<a href="${loanPath(text(loan.id))}">${loanLabel(loan)}</a>` : html`<span class="hint">no loan (an account task)</span>`}</td><td>${assigneeText(task, view.me)}</td><td class="task-actions"><form method="post" action="${taskPath(text(task.id))}/complete">${csrfField(viewer.csrfToken)}${filterField(view.filter)}<button type="submit" class="button-secondary" aria-label="Complete “${text(task.name)}”">Complete</button></form> <a href="${taskPath(text(task.id))}/edit" aria-label="Edit “${text(task.name)}”">Edit</a></td></tr>`;
    })}</tbody>
  </table>
  </div>
  ${pages > 1 ? html`<nav class="pager" aria-label="Pages of tasks">${view.page > 1 ? html`<a href="${tasksPageHref(view.page - 1, view.filter)}" rel="prev">Previous</a>` : null} <span>Page ${String(view.page)} of ${String(pages)}</span> ${view.page < pages ? html`<a href="${tasksPageHref(view.page + 1, view.filter)}" rel="next">Next</a>` : null}</nav>` : null}`
      : html`<p>No open tasks${phrase}.</p>`
  }
</section>`,
  );
}

/** A task's edit page: its name, due day (blank: none) and assignee, with the Tasks page's rules; a refusal is the form again with why. */
export function taskEditPage(viewer: Viewer, task: Row, users: readonly TaskAssignee[], me: string, form?: { readonly error: string; readonly values: ReadonlyMap<string, string> }): string {
  const value = (name: 'name' | 'date_due' | 'assignee_id'): string => form?.values.get(name) ?? text(task[name]);
  const loan = row(task.loan);
  return renderPage(
    { title: 'Edit task', viewer, section: 'tasks' },
    html`<h1>Edit task</h1>
<p class="lead">${loan ? html`A task of the loan <a href="${loanPath(text(loan.id))}">${loanLabel(loan)}</a>` : 'A task of the account (no loan)'}; ${statusPill(task.status)}.</p>
${form ? outcome('error', form.error) : null}
<form method="post" action="${taskPath(text(task.id))}/edit" aria-label="Edit the task">
  ${csrfField(viewer.csrfToken)}
  <div class="field"><label for="task-name">Task</label><input id="task-name" name="name" type="text" required maxlength="500" value="${value('name')}"></div>
  <div class="field"><label for="task-due">Due</label>${dateInput('task-due', 'date_due', value('date_due'), false)}<span class="hint">Blank: no due date.</span></div>
  <div class="field"><label for="task-assignee">Assignee</label>${assigneeSelect('task-assignee', users, me, value('assignee_id'))}</div>
  <div><button type="submit">Save task</button> <a href="${TASKS_PATH}">Back to tasks</a></div>
</form>`,
  );
}
