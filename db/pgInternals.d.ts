// The one internal of node-postgres the statement batch uses (`statementBatch.ts`): how a query's
// values become protocol values, so a batch binds exactly what `client.query` would.
declare module 'pg/lib/utils.js' {
  export function prepareValue(value: unknown): unknown;
}
