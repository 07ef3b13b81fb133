import type { Database } from '../db/index.js';
import type { GraphEngine, GraphRequest } from '../engine/index.js';

/** One statement as `loanql sql` prints it: its text and its parameters in `$n` order. */
export interface ShownStatement {
  readonly sql: string;
  readonly params: readonly unknown[];
}

/**
 * What one GraphQL request sends to PostgreSQL: nothing (introspection only), a mutation's
 * statements in order (shown, never run), or a query's one statement with PostgreSQL's plan.
 */
export type RequestStatements =
  | { readonly kind: 'static' }
  | { readonly kind: 'mutation'; readonly statements: readonly ShownStatement[] }
  | { readonly kind: 'query'; readonly statement: ShownStatement; readonly plan: readonly string[] };

/**
 * The statements of `request` for `accountId` (behind `loanql sql`). A query is planned with
 * `EXPLAIN` (text format, estimates included: the CLI's user has the database's own access) but
 * not run; a mutation is not even planned, as its later statements take values from earlier ones.
 * Throws the engine's `RequestError` for a request it refuses.
 */
export async function requestStatements(db: Database, engine: GraphEngine, request: GraphRequest, accountId: string): Promise<RequestStatements> {
  const prepared = engine.prepare(request, accountId);
  if (prepared.kind === 'static') return { kind: 'static' };
  if (prepared.kind === 'mutation') {
    const { statements } = await engine.explain(db, request, accountId);
    return { kind: 'mutation', statements: statements ?? [] };
  }
  // The statement is the engine's own, parameterised; EXPLAIN only prefixes it.
  const explained = await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${prepared.text}`, prepared.values);
  return { kind: 'query', statement: { sql: prepared.text, params: prepared.values }, plan: explained.rows.map((row) => row['QUERY PLAN']) };
}
