/**
 * `@graphiql/toolkit` as GraphiQL sees it in the console's bundle (`client/build.mjs` resolves
 * GraphiQL's imports of the package here): the package itself, with the console's own
 * `formatResult`, which shows responses with their numbers exactly as sent (`exactResult.ts`).
 */
export * from '@graphiql/toolkit';
export { formatResult } from './exactResult.js';
