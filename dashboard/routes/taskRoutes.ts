import { Router, type Request, type Response } from 'express';
import type { Database } from '../../db/index.js';
import { RequestError } from '../../engine/index.js';
import { businessDate } from '../../app/ledgerReads.js';
import { errorPage } from '../pages/errorPage.js';
import { taskEditPage, tasksPage, tasksPageHref } from '../pages/tasksPage.js';
import { TASKS_PATH } from '../pages/servicingPaths.js';
import { row, rows, text, type Row } from '../pages/servicingFormat.js';
import { formText } from '../formFields.js';
import { submitOnce } from '../formOnce.js';
import { requestErrorMessage, UUID, type ServicingData } from '../servicingData.js';
import { sessionOf } from '../session.js';
import { assigneeChoices, OPEN_TASKS_WHERE, TASK_FILTER_EXPECTED, taskFilterOf, taskFormProblem, usersOf, type TaskAssignee, type TaskFilter } from '../taskForm.js';
import { PAGE_EXPECTED, pageNumberOf } from '../pageNumber.js';

const PAGE_SIZE = 50;
/** The account's users, whom a task may be assigned to (never their e-mail nor password hash). */
const USERS = 'admins(order_by: [{name: asc}, {id: asc}]) { id name }';
/** A page of the open tasks a filter keeps: the same three documents every time (`$me` the session's admin). */
const openTasksQuery = (filter: TaskFilter): string => {
  const open = OPEN_TASKS_WHERE.get(filter)!;
  return `query OpenTasks($limit: Int!, $offset: Int!${filter === 'mine' ? ', $me: uuid!' : ''}) {
  tasks(where: {${open}}, order_by: [{date_due: asc_nulls_last}, {created_at: asc}, {id: asc}], limit: $limit, offset: $offset) { id name status date_due loan { id name } assignee { id name } }
  open: tasks_aggregate(where: {${open}}) { aggregate { count } }
  account: tasks_aggregate(where: {${open}, loan_id: {_is_null: true}}) { aggregate { count } }
  users: ${USERS}
}`;
};
const ADD_ACCOUNT_TASK = `mutation AddAccountTask($name: String!, $due: date, $assignee: uuid) {
  insert_tasks_one(object: {name: $name, date_due: $due, assignee_id: $assignee}) { id }
}`;
const TASK = `query Task($id: uuid!) { task: tasks_by_pk(id: $id) { id name status date_due assignee_id loan { id name } } users: ${USERS} }`;
const ACCOUNT_USERS = `query AccountUsers { users: ${USERS} }`;
const COMPLETE_TASK = `mutation CompleteTask($task: uuid!) {
  update_tasks(where: {id: {_eq: $task}}, _set: {status: "completed"}) { affected_rows }
}`;
const EDIT_TASK = `mutation EditTask($task: uuid!, $name: String!, $due: date, $assignee: uuid) {
  update_tasks(where: {id: {_eq: $task}}, _set: {name: $name, date_due: $due, assignee_id: $assignee}) { affected_rows }
}`;
/** What the task forms send: name, due day, assignee (an admin's id; blank: unassigned). */
const TASK_FIELDS = ['name', 'date_due', 'assignee_id'];
/** What a redirect after a write says (`?done=`): a fixed set, never the client's text. */
const NOTICES: ReadonlyMap<string, string> = new Map([
  ['task-added', 'Task added.'],
  ['task-completed', 'Task completed.'],
  ['task-saved', 'Task saved.'],
]);
const LABELS: ReadonlyMap<string, string> = new Map([['name', 'Task'], ['date_due', 'Due'], ['assignee_id', 'Assignee']]);

/**
 * The Tasks page (session 40): the account's open tasks — its own, which belong to no loan and had
 * no page (README "Tasks without a loan"), and its loans' — with Complete and Edit, and a form
 * adding an account task. The writes go through the engine for the session's account (a task of
 * another account is not found), with a loan's task form's rules (`taskForm.ts`); every POST
 * passed the CSRF check before it gets here (`requireFormCsrfToken`).
 */
export function taskRoutes(db: Database, data: () => Promise<ServicingData>): Router {
  const router = Router();
  const run = async (res: Response, query: string, variables: Record<string, unknown>, on: Database = db) => (await data()).run(on, sessionOf(res).admin.accountId, query, variables);

  async function sendTasksPage(req: Request, res: Response, status: number, page: number, filter: TaskFilter, form?: { readonly error: string; readonly values: ReadonlyMap<string, string> }): Promise<void> {
    const session = sessionOf(res);
    const me = session.admin.adminId;
    const result = await run(res, openTasksQuery(filter), { limit: PAGE_SIZE, offset: (page - 1) * PAGE_SIZE, ...(filter === 'mine' ? { me } : {}) });
    const count = (aggregate: unknown): number => Number(text(row(row(aggregate)?.aggregate)?.count));
    const openCount = count(result.open);
    // A page past the last (tasks completed since the link was made): the last page instead.
    const last = Math.max(1, Math.ceil(openCount / PAGE_SIZE));
    if (page > last && !form) return res.redirect(303, tasksPageHref(last, filter));
    const done = new Map(Object.entries(req.query)).get('done');
    res
      .status(status)
      .type('html')
      .send(
        tasksPage(session.viewer, {
          tasks: rows(result.tasks),
          openCount,
          accountCount: count(result.account),
          page,
          pageSize: PAGE_SIZE,
          filter,
          me,
          users: assigneeChoices(usersOf(result.users), me),
          businessDate: await businessDate(db, session.admin.accountId),
          notice: typeof done === 'string' ? (NOTICES.get(done) ?? null) : null,
          ...(form ? { form } : {}),
        }),
      );
  }

  router.get('/tasks', async (req, res) => {
    const query = new Map(Object.entries(req.query));
    const pageText: unknown = query.get('page');
    const page = pageText === undefined || typeof pageText === 'string' ? pageNumberOf(pageText) : null;
    if (page === null) {
      return res.status(400).type('html').send(errorPage('The tasks could not be shown', `The parameter “page” is wrong: ${PAGE_EXPECTED}.`, sessionOf(res).viewer));
    }
    const filter = taskFilterOf(query.get('assignee'));
    if (filter === null) {
      return res.status(400).type('html').send(errorPage('The tasks could not be shown', `The parameter “assignee” is wrong: ${TASK_FILTER_EXPECTED}.`, sessionOf(res).viewer));
    }
    await sendTasksPage(req, res, 200, page, filter);
  });

  /** A task of the account, no loan: a loan's task form's rules; refused, the page again (400) with why and what was typed. */
  router.post('/tasks', async (req, res) => {
    const values = new Map(TASK_FIELDS.map((name) => [name, formText(req, name).trim()]));
    const filter = formFilter(req);
    const problem = taskFormProblem(values.get('name')!, values.get('date_due')!, values.get('assignee_id')!, await accountUsers(res));
    if (problem) return sendTasksPage(req, res, 400, 1, filter, { error: problem, values });
    try {
      const outcome = await submitOnce(db, req, res, async (on) => {
        await run(res, ADD_ACCOUNT_TASK, { name: values.get('name'), due: values.get('date_due') || null, assignee: values.get('assignee_id') || null }, on);
        return { redirect: tasksPageHref(1, filter, 'task-added') };
      });
      if (outcome !== null && 'redirect' in outcome) res.redirect(303, outcome.redirect);
    } catch (error) {
      if (!(error instanceof RequestError)) throw error;
      await sendTasksPage(req, res, 400, 1, filter, { error: requestErrorMessage(error, LABELS), values });
    }
  });

  /** Completes a task of the account, on a loan or not (completing one already completed changes nothing). */
  router.post('/tasks/:task/complete', async (req, res) => {
    const task = taskParam(req);
    const result = UUID.test(task) ? await run(res, COMPLETE_TASK, { task }) : null;
    if (Number(text(row(result?.update_tasks)?.affected_rows)) !== 1) return notFound(res);
    res.redirect(303, tasksPageHref(1, formFilter(req), 'task-completed'));
  });

  router.get('/tasks/:task/edit', async (req, res) => {
    const found = await taskOrNull(res, taskParam(req));
    if (!found) return notFound(res);
    res.type('html').send(taskEditPage(sessionOf(res).viewer, found.task, found.users, sessionOf(res).admin.adminId));
  });

  /** A task's name and due day (blank: none), with the add form's rules; refused, the form again (400), nothing saved. */
  router.post('/tasks/:task/edit', async (req, res) => {
    const found = await taskOrNull(res, taskParam(req));
    if (!found) return notFound(res);
    const { task, users } = found;
    const values = new Map(TASK_FIELDS.map((name) => [name, formText(req, name).trim()]));
    const again = (error: string) => res.status(400).type('html').send(taskEditPage(sessionOf(res).viewer, task, users, sessionOf(res).admin.adminId, { error, values }));
    const problem = taskFormProblem(values.get('name')!, values.get('date_due')!, values.get('assignee_id')!, users);
    if (problem) return again(problem);
    let result;
    try {
      result = await run(res, EDIT_TASK, { task: text(task.id), name: values.get('name'), due: values.get('date_due') || null, assignee: values.get('assignee_id') || null });
    } catch (error) {
      if (!(error instanceof RequestError)) throw error;
      return again(requestErrorMessage(error, LABELS));
    }
    if (Number(text(row(result.update_tasks)?.affected_rows)) !== 1) return notFound(res);
    res.redirect(303, `${TASKS_PATH}?done=task-saved`);
  });

  /** The task of the account with its id, and the account's users as its form's Assignee lists them; null when there is none. */
  async function taskOrNull(res: Response, id: string): Promise<{ readonly task: Row; readonly users: readonly TaskAssignee[] } | null> {
    if (!UUID.test(id)) return null;
    const result = await run(res, TASK, { id });
    const task = row(result.task);
    return task ? { task, users: assigneeChoices(usersOf(result.users), sessionOf(res).admin.adminId) } : null;
  }

  async function accountUsers(res: Response): Promise<readonly TaskAssignee[]> {
    return usersOf((await run(res, ACCOUNT_USERS, {})).users);
  }

  function notFound(res: Response): void {
    res.status(404).type('html').send(errorPage('No such task', 'This account has no such task.', sessionOf(res).viewer));
  }

  return router;
}

/** The filter a Tasks page form was sent from (its hidden `assignee`), so its answer lists the same tasks; anything else: everyone's. */
function formFilter(req: Request): TaskFilter {
  return taskFilterOf(formText(req, 'assignee')) ?? 'everyone';
}

function taskParam(req: Request): string {
  const value: unknown = new Map(Object.entries(req.params)).get('task');
  return typeof value === 'string' ? value : '';
}
