/** Public surface of `dashboard/`: the router `api/createApp.ts` mounts at `/dashboard`. */
export { dashboardRoutes, type DashboardDeps } from './dashboardRoutes.js';
