/**
 * A task form's rules, the same on a loan's page and on the Tasks page (README "Tasks"): a name
 * not blank and at most 500 characters, a due day (optional) in the years 1900–2999 — the
 * database's rules for every writer (migration 0074), checked first so the form answers in its
 * own words beside what was typed — and an assignee (optional) among the account's users
 * (migration 0087's foreign key refuses any other).
 */
const DAY = /^\d{4}-\d\d-\d\d$/;

/** A user a task may be for: a dashboard admin of the account (`admins`: id and name only). */
export interface TaskAssignee {
  readonly id: string;
  readonly name: string;
}

/** A real calendar day YYYY-MM-DD in the years every ledger day takes (0026 for 2026 left a task overdue for ever). */
function isTaskDay(value: string): boolean {
  if (!DAY.test(value) || value < '1900-01-01' || value > '2999-12-31') return false;
  const time = Date.parse(`${value}T00:00:00Z`);
  return !Number.isNaN(time) && new Date(time).toISOString().startsWith(value);
}

/**
 * The form's problem in words (the field's label first), or null. `name`, `due` and `assignee` (an
 * admin's id, blank: unassigned) as sent, trimmed; `users` the account's, whom `assignee` must be.
 */
export function taskFormProblem(name: string, due: string, assignee = '', users: readonly TaskAssignee[] = []): string | null {
  if (!name) return 'Task: give the task a name.';
  if (name.length > 500) return 'Task: at most 500 characters.';
  if (due && !isTaskDay(due)) return 'Due: expected a day as YYYY-MM-DD from 1900 to 2999.';
  if (assignee && !users.some((user) => user.id === assignee)) return "Assignee: choose one of the account's users, or Unassigned.";
  return null;
}

/** The account's users as the Assignee choice lists them: the signed-in one (`me`) first, then by name. */
export function assigneeChoices(users: readonly TaskAssignee[], me: string): readonly TaskAssignee[] {
  const others = users.filter((user) => user.id !== me).sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
  const self = users.find((user) => user.id === me);
  return self ? [self, ...others] : others;
}

/** The account's users as the engine read them (`admins { id name }`). */
export function usersOf(value: unknown): readonly TaskAssignee[] {
  const list: readonly unknown[] = Array.isArray(value) ? value : [];
  return list.map((user) => {
    const { id, name } = (user ?? {}) as { id?: unknown; name?: unknown };
    return { id: String(id ?? ''), name: String(name ?? '') };
  });
}

/** Whose open tasks the Tasks page lists (`?assignee=`): everyone's (the default), the signed-in user's, or no one's. */
export type TaskFilter = 'everyone' | 'mine' | 'unassigned';

export const TASK_FILTERS: readonly TaskFilter[] = ['everyone', 'mine', 'unassigned'];

/** What a wrong `?assignee=` is told (the Tasks page and the overview). */
export const TASK_FILTER_EXPECTED = 'expected mine, everyone or unassigned';

/**
 * The open tasks each filter keeps, as a GraphQL `where`'s fields (`$me: uuid!` the session's
 * admin, for `mine`): the Tasks page's and the overview's, so both list the same tasks.
 */
export const OPEN_TASKS_WHERE: ReadonlyMap<TaskFilter, string> = new Map([
  ['everyone', 'status: {_neq: "completed"}'],
  ['mine', 'status: {_neq: "completed"}, assignee_id: {_eq: $me}'],
  ['unassigned', 'status: {_neq: "completed"}, assignee_id: {_is_null: true}'],
]);

/** `?assignee=` as a filter (absent: everyone), or null when it is anything else. */
export function taskFilterOf(value: unknown): TaskFilter | null {
  if (value === undefined || value === '') return 'everyone';
  return TASK_FILTERS.find((filter) => filter === value) ?? null;
}
