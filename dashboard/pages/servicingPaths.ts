/** Where the servicing pages are: the loans' and the people's addresses, built in one place. */
export const LOANS_PATH = '/dashboard/loans';
export const loanPath = (id: string): string => `${LOANS_PATH}/${encodeURIComponent(id)}`;
export const personPath = (id: string): string => `/dashboard/people/${encodeURIComponent(id)}`;
export const COLLECTIONS_PATH = '/dashboard/collections';
export const COLLECTIONS_CSV_PATH = '/dashboard/collections.csv';
export const TASKS_PATH = '/dashboard/tasks';
export const taskPath = (id: string): string => `${TASKS_PATH}/${encodeURIComponent(id)}`;
