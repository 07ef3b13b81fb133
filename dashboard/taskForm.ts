/**
 * A task form's rules, the same on a loan's page and on the Tasks page (README "Tasks"): a name
 * not blank and at most 500 characters, a due day (optional) in the years 1900–2999 — the
 * database's rules for every writer (migration 0074), checked first so the form answers in its
 * own words beside what was typed.
 */
const DAY = /^\d{4}-\d\d-\d\d$/;

/** A real calendar day YYYY-MM-DD in the years every ledger day takes (0026 for 2026 left a task overdue for ever). */
function isTaskDay(value: string): boolean {
  if (!DAY.test(value) || value < '1900-01-01' || value > '2999-12-31') return false;
  const time = Date.parse(`${value}T00:00:00Z`);
  return !Number.isNaN(time) && new Date(time).toISOString().startsWith(value);
}

/** The form's problem in words (the field's label first), or null. `name` and `due` as typed, trimmed. */
export function taskFormProblem(name: string, due: string): string | null {
  if (!name) return 'Task: give the task a name.';
  if (name.length > 500) return 'Task: at most 500 characters.';
  if (due && !isTaskDay(due)) return 'Due: expected a day as YYYY-MM-DD from 1900 to 2999.';
  return null;
}
