/** Public surface of `dashboard/`: the router `server/createApp.ts` mounts at `/dashboard`. */
export { dashboardRoutes, type ConsoleGraphRoutes, type DashboardDeps } from './dashboardRoutes.js';
