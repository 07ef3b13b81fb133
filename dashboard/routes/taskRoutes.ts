import { Router, type Request, type Response } from 'express';
import type { Database } from '../../db/index.js';
import { RequestError } from '../../engine/index.js';
import { businessDate } from '../../app/ledgerReads.js';
import { errorPage } from '../pages/errorPage.js';
import { taskEditPage, tasksPage, tasksPageHref } from '../pages/tasksPage.js';
import { TASKS_PATH } from '../pages/servicingPaths.js';
import { row, rows, text } from '../pages/servicingFormat.js';
import { formText } from '../formFields.js';
import { submitOnce } from '../formOnce.js';
import { requestErrorMessage, UUID, type ServicingData } from '../servicingData.js';
import { sessionOf } from '../session.js';
import { taskFormProblem } from '../taskForm.js';
import { PAGE_EXPECTED, pageNumberOf } from '../pageNumber.js';

const PAGE_SIZE = 50;
const OPEN = '{status: {_neq: "completed"}}';
const OPEN_TASKS = `query OpenTasks($limit: Int!, $offset: Int!) {
  tasks(where: ${OPEN}, order_by: [{date_due: asc_nulls_last}, {created_at: asc}, {id: asc}], limit: $limit, offset: $offset) { id name status date_due loan { id name } }
  open: tasks_aggregate(where: ${OPEN}) { aggregate { count } }
  account: tasks_aggregate(where: {status: {_neq: "completed"}, loan_id: {_is_null: true}}) { aggregate { count } }
}`;
const ADD_ACCOUNT_TASK = `mutation AddAccountTask($name: String!, $due: date) {
  insert_tasks_one(object: {name: $name, date_due: $due}) { id }
}`;
const TASK = 'query Task($id: uuid!) { task: tasks_by_pk(id: $id) { id name status date_due loan { id name } } }';
const COMPLETE_TASK = `mutation CompleteTask($task: uuid!) {
  update_tasks(where: {id: {_eq: $task}}, _set: {status: "completed"}) { affected_rows }
}`;
const EDIT_TASK = `mutation EditTask($task: uuid!, $name: String!, $due: date) {
  update_tasks(where: {id: {_eq: $task}}, _set: {name: $name, date_due: $due}) { affected_rows }
}`;
/** What a redirect after a write says (`?done=`): a fixed set, never the client's text. */
const NOTICES: ReadonlyMap<string, string> = new Map([
  ['task-added', 'Task added.'],
  ['task-completed', 'Task completed.'],
  ['task-saved', 'Task saved.'],
]);
const LABELS: ReadonlyMap<string, string> = new Map([['name', 'Task'], ['date_due', 'Due']]);

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

  async function sendTasksPage(req: Request, res: Response, status: number, page: number, form?: { readonly error: string; readonly values: ReadonlyMap<string, string> }): Promise<void> {
    const session = sessionOf(res);
    const result = await run(res, OPEN_TASKS, { limit: PAGE_SIZE, offset: (page - 1) * PAGE_SIZE });
    const count = (aggregate: unknown): number => Number(text(row(row(aggregate)?.aggregate)?.count));
    const openCount = count(result.open);
    // A page past the last (tasks completed since the link was made): the last page instead.
    const last = Math.max(1, Math.ceil(openCount / PAGE_SIZE));
    if (page > last && !form) return res.redirect(303, tasksPageHref(last));
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
          businessDate: await businessDate(db, session.admin.accountId),
          notice: typeof done === 'string' ? (NOTICES.get(done) ?? null) : null,
          ...(form ? { form } : {}),
        }),
      );
  }

  router.get('/tasks', async (req, res) => {
    const pageText: unknown = new Map(Object.entries(req.query)).get('page');
    const page = pageText === undefined || typeof pageText === 'string' ? pageNumberOf(pageText) : null;
    if (page === null) {
      return res.status(400).type('html').send(errorPage('The tasks could not be shown', `The parameter “page” is wrong: ${PAGE_EXPECTED}.`, sessionOf(res).viewer));
    }
    await sendTasksPage(req, res, 200, page);
  });

  /** A task of the account, no loan: a loan's task form's rules; refused, the page again (400) with why and what was typed. */
  router.post('/tasks', async (req, res) => {
    const values = new Map(['name', 'date_due'].map((name) => [name, formText(req, name).trim()]));
    const problem = taskFormProblem(values.get('name')!, values.get('date_due')!);
    if (problem) return sendTasksPage(req, res, 400, 1, { error: problem, values });
    try {
      const outcome = await submitOnce(db, req, res, async (on) => {
        await run(res, ADD_ACCOUNT_TASK, { name: values.get('name'), due: values.get('date_due') || null }, on);
        return { redirect: `${TASKS_PATH}?done=task-added` };
      });
      if (outcome !== null && 'redirect' in outcome) res.redirect(303, outcome.redirect);
    } catch (error) {
      if (!(error instanceof RequestError)) throw error;
      await sendTasksPage(req, res, 400, 1, { error: requestErrorMessage(error, LABELS), values });
    }
  });

  /** Completes a task of the account, on a loan or not (completing one already completed changes nothing). */
  router.post('/tasks/:task/complete', async (req, res) => {
    const task = taskParam(req);
    const result = UUID.test(task) ? await run(res, COMPLETE_TASK, { task }) : null;
    if (Number(text(row(result?.update_tasks)?.affected_rows)) !== 1) return notFound(res);
    res.redirect(303, `${TASKS_PATH}?done=task-completed`);
  });

  router.get('/tasks/:task/edit', async (req, res) => {
    const task = await taskOrNull(res, taskParam(req));
    if (!task) return notFound(res);
    res.type('html').send(taskEditPage(sessionOf(res).viewer, task));
  });

  /** A task's name and due day (blank: none), with the add form's rules; refused, the form again (400), nothing saved. */
  router.post('/tasks/:task/edit', async (req, res) => {
    const task = await taskOrNull(res, taskParam(req));
    if (!task) return notFound(res);
    const values = new Map(['name', 'date_due'].map((name) => [name, formText(req, name).trim()]));
    const again = (error: string) => res.status(400).type('html').send(taskEditPage(sessionOf(res).viewer, task, { error, values }));
    const problem = taskFormProblem(values.get('name')!, values.get('date_due')!);
    if (problem) return again(problem);
    let result;
    try {
      result = await run(res, EDIT_TASK, { task: text(task.id), name: values.get('name'), due: values.get('date_due') || null });
    } catch (error) {
      if (!(error instanceof RequestError)) throw error;
      return again(requestErrorMessage(error, LABELS));
    }
    if (Number(text(row(result.update_tasks)?.affected_rows)) !== 1) return notFound(res);
    res.redirect(303, `${TASKS_PATH}?done=task-saved`);
  });

  async function taskOrNull(res: Response, id: string) {
    return UUID.test(id) ? row((await run(res, TASK, { id })).task) : null;
  }

  function notFound(res: Response): void {
    res.status(404).type('html').send(errorPage('No such task', 'This account has no such task.', sessionOf(res).viewer));
  }

  return router;
}

function taskParam(req: Request): string {
  const value: unknown = new Map(Object.entries(req.params)).get('task');
  return typeof value === 'string' ? value : '';
}
