/**
 * Who a task is for (session 42: "my tasks"). Servicing clerks share one account and its tasks had
 * no one's name on them, so a clerk could not see what was theirs. A task may now name an
 * assignee: a dashboard admin of the same account, or none (`null`, the default: "unassigned").
 *
 * - The foreign key is composite with `account_id`, as every tenant table's is, so the database
 *   itself refuses another account's admin (`foreign_key_violation`) whatever the writer — GraphQL,
 *   the dashboard, the CLI, a lender's SQL.
 * - No interface removes an admin, but a lender's SQL may (and deleting an account removes them
 *   all): the task stays, unassigned — `ON DELETE SET NULL (assignee_id)`, only that column, since
 *   `account_id` is part of the key and the task's own.
 * - "Open tasks of this user by due date" (the dashboard's Mine filter) reads
 *   `tasks_assignee_due_open`, the partial index of `tasks_due_open` with the assignee in front.
 */
export const name = '0087_task_assignee';

export const sql = /* sql */ `
ALTER TABLE tasks ADD COLUMN assignee_id uuid;
ALTER TABLE tasks ADD CONSTRAINT tasks_assignee_fkey
  FOREIGN KEY (account_id, assignee_id) REFERENCES admins (account_id, id) ON DELETE SET NULL (assignee_id);
CREATE INDEX tasks_assignee_due_open ON tasks (account_id, assignee_id, date_due) WHERE status <> 'completed';
`;
