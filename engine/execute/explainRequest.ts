import type { Database } from '../../db/index.js';
import type { Param } from '../sql/fragment.js';
import { explainStatement } from '../sql/explainStatement.js';
import { rethrowClientError } from './errors.js';
import type { PreparedRequest } from './prepareRequest.js';

/** What `explain` shows of a request: its statement(s), their parameters, and PostgreSQL's plan. */
export interface Explanation {
  readonly sql: string;
  readonly params: unknown[];
  readonly plan: unknown;
  /** A mutation's statements, in the order they would run. */
  readonly statements?: { sql: string; params: unknown[] }[];
}

/**
 * The statement of a prepared request, its parameters, and PostgreSQL's plan for it. With
 * `estimates: false` the plan has no costs, row counts or widths: those come from table-wide
 * statistics, every account's rows included, so an API caller must not see them (README "Security").
 */
export async function explainRequest(db: Database, prepared: PreparedRequest, { estimates }: { readonly estimates: boolean }): Promise<Explanation> {
  if (prepared.kind === 'static') return { sql: '', params: [], plan: null };
  if (prepared.kind === 'mutation') return explainMutation(prepared);
  const { rows } = await db
    .query<{ 'QUERY PLAN': unknown }>(explainStatement(prepared.text, estimates), prepared.values)
    .catch((error: unknown) => rethrowClientError(error));
  const plan = rows[0]?.['QUERY PLAN'];
  return { sql: prepared.text, params: [...prepared.values], plan: typeof plan === 'string' ? JSON.parse(plan) : plan };
}

/**
 * A mutation's statements as they would run, without running them: the values of a later
 * statement that come from an earlier one (its row ids) and the ids the server makes for new
 * rows are shown as placeholders. There is no plan: PostgreSQL cannot EXPLAIN a write without
 * doing it (ANALYZE) or with values it has not seen.
 */
function explainMutation(prepared: Extract<PreparedRequest, { kind: 'mutation' }>): Explanation {
  const shown = (param: Param): unknown => {
    if (param.kind === 'newId') return `<id of new row ${param.slot + 1}>`;
    if (param.kind === 'stepResult') return `<${param.output} of statement ${param.step + 1}>`;
    return prepared.bind(param);
  };
  const { single } = prepared.program;
  // A mutation with a one-statement form runs as that statement (shown without a key's guard).
  const { announce } = prepared.program;
  const run = single ? [{ text: single.text, params: single.params }] : [...(announce ? [announce] : []), ...prepared.program.steps.map((step) => step.statement), prepared.program.response];
  const statements = run.map((statement) => ({
    sql: statement.text,
    params: statement.params.map(shown),
  }));
  return { sql: statements.map((statement) => statement.sql).join(';\n'), params: statements.flatMap((statement) => statement.params), plan: null, statements };
}
