import { html, type Html } from '../html.js';
import { onceField } from '../formOnce.js';
import { csrfField, outcome, renderPage, type Viewer } from './layout.js';
import { loanPath, TASKS_PATH, taskPath } from './servicingPaths.js';
import { dateInput, loanLabel, row, statusPill, text, type Row } from './servicingFormat.js';

/** What the Tasks page shows: a page of the open tasks, their counts, and a notice or a refused form. */
export interface TasksPageView {
  /** Open tasks (status not `completed`), soonest due first (no due date last): `{id name status date_due loan {id name}}`. */
  readonly tasks: readonly Row[];
  readonly openCount: number;
  /** How many of the open tasks belong to no loan. */
  readonly accountCount: number;
  readonly page: number;
  readonly pageSize: number;
  /** The account's business date: a task due before it is overdue. */
  readonly businessDate: string;
  readonly notice?: string | null;
  /** The add form refused: why, and what was typed. */
  readonly form?: { readonly error: string; readonly values: ReadonlyMap<string, string> };
}

/** `/dashboard/tasks?page=n`. */
export const tasksPageHref = (page: number): string => (page > 1 ? `${TASKS_PATH}?page=${page}` : TASKS_PATH);

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
  return renderPage(
    { title: 'Tasks', viewer, section: 'tasks' },
    html`<h1>Tasks</h1>
<p class="lead">Open tasks of the account and of its loans, soonest due first. Business date ${view.businessDate}.</p>
${view.form ? outcome('error', view.form.error) : outcome('ok', view.notice)}
<section class="card" aria-labelledby="add-task-heading">
  <h2 id="add-task-heading">Add an account task</h2>
  <p class="hint">A task of the account itself, on no loan (a licence to renew, an audit to prepare). A loan's tasks are added on the loan's page.</p>
  <form class="inline-form" method="post" action="${TASKS_PATH}" aria-label="Add an account task">
    ${csrfField(viewer.csrfToken)}${onceField()}
    <div class="field"><label for="task-name">Task</label><input id="task-name" name="name" type="text" required maxlength="500" value="${typed('name')}"></div>
    <div class="field"><label for="task-due">Due</label>${dateInput('task-due', 'date_due', typed('date_due'), false)}</div>
    <div><button type="submit">Add task</button></div>
  </form>
</section>
<section class="card" aria-labelledby="open-tasks-heading" id="open-tasks">
  <h2 id="open-tasks-heading">Open tasks <span class="count">${String(view.openCount)}</span></h2>
  ${
    view.tasks.length
      ? html`<p class="hint" id="tasks-status">Tasks ${String(first)}–${String(last)} of ${String(view.openCount)}; ${String(view.accountCount)} of all open tasks belong to no loan.</p>
  <table class="tasks-table">
    <thead><tr><th scope="col">Due</th><th scope="col">Task</th><th scope="col">Status</th><th scope="col">Loan</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
    <tbody>${view.tasks.map((task) => {
      const loan = row(task.loan);
      const overdue = text(task.date_due) !== '' && text(task.date_due) < view.businessDate;
      return html`<tr${overdue ? html` class="is-overdue"` : null}><td class="nowrap">${dueCell(task, view.businessDate)}</td><td>${text(task.name)}</td><td>${statusPill(task.status)}</td><td>${loan ? html`<a href="${loanPath(text(loan.id))}">${loanLabel(loan)}</a>` : html`<span class="hint">no loan (an account task)</span>`}</td><td class="task-actions"><form method="post" action="${taskPath(text(task.id))}/complete">${csrfField(viewer.csrfToken)}<button type="submit" class="button-secondary" aria-label="Complete “${text(task.name)}”">Complete</button></form> <a href="${taskPath(text(task.id))}/edit" aria-label="Edit “${text(task.name)}”">Edit</a></td></tr>`;
    })}</tbody>
  </table>
  ${pages > 1 ? html`<nav class="pager" aria-label="Pages of tasks">${view.page > 1 ? html`<a href="${tasksPageHref(view.page - 1)}" rel="prev">Previous</a>` : null} <span>Page ${String(view.page)} of ${String(pages)}</span> ${view.page < pages ? html`<a href="${tasksPageHref(view.page + 1)}" rel="next">Next</a>` : null}</nav>` : null}`
      : html`<p>No open tasks.</p>`
  }
</section>`,
  );
}

/** A task's edit page: its name and due day (blank: none), with the Tasks page's rules; a refusal is the form again with why. */
export function taskEditPage(viewer: Viewer, task: Row, form?: { readonly error: string; readonly values: ReadonlyMap<string, string> }): string {
  const value = (name: 'name' | 'date_due'): string => form?.values.get(name) ?? text(task[name]);
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
  <div><button type="submit">Save task</button> <a href="${TASKS_PATH}">Back to tasks</a></div>
</form>`,
  );
}
