import { render, sql, type Fragment } from './fragment.js';

/**
 * A condition the caller needs to hold when a request runs (its API key is still active),
 * checked by PostgreSQL in the request's own statement. A fragment whose every value is a bound
 * parameter, so its text is the same for every caller and the statements made from it are
 * prepared once. Made with `statementGuard` only.
 */
export interface StatementGuard {
  readonly condition: Fragment;
}

/**
 * `statementGuard\`EXISTS (SELECT 1 FROM api_keys WHERE id = ${keyId} AND active)\`` — the
 * template text is trusted SQL; every interpolated value is bound as a parameter.
 */
export function statementGuard(strings: TemplateStringsArray, ...values: readonly unknown[]): StatementGuard {
  return { condition: sql(strings, ...values.map((value) => sql.value(value))) };
}

/** SQL text with its parameters' values, ready to run. */
export interface GuardedText {
  readonly text: string;
  /** The values of the parameters the guard adds (after the statement's own, if any). */
  readonly values: readonly unknown[];
}

/**
 * The guard's condition as text whose parameters are numbered from `firstParameter`: the
 * statement it wraps was rendered (and cached) on its own, `$1…$n`, and the guard's parameters
 * come after them. Rendered once per guard and `firstParameter` (`renderedOf`).
 */
function renderCondition(guard: StatementGuard, firstParameter: number): GuardedText {
  const rendered = renderedOf(guard);
  let condition = rendered.conditions.get(firstParameter);
  if (!condition) rendered.conditions.set(firstParameter, (condition = renderOnce(guard, firstParameter)));
  return condition;
}

function renderOnce(guard: StatementGuard, firstParameter: number): GuardedText {
  const { text, params } = render(guard.condition, { firstParameter });
  const values = params.map((param) => {
    if (param.kind !== 'const') throw new TypeError(`a statement guard binds constants only, not a ${param.kind} parameter`);
    return param.value;
  });
  return Object.freeze({ text, values: Object.freeze(values) });
}

/**
 * What a guard renders to, kept with it: a guard is made once per API key (`activeKeyGuard`) and
 * checked on every request of it, so its texts are rendered once rather than per request (issue
 * 36: rendering cost ~2–3 µs of CPU a request) — and the same string each time, whose hash a Map
 * lookup by it (the derived statements, `runQuery.ts`) then computes once.
 */
interface RenderedGuard {
  readonly conditions: Map<number, GuardedText>;
  check: GuardedText | undefined;
}

const RENDERED = new WeakMap<StatementGuard, RenderedGuard>();

function renderedOf(guard: StatementGuard): RenderedGuard {
  let rendered = RENDERED.get(guard);
  if (!rendered) RENDERED.set(guard, (rendered = { conditions: new Map(), check: undefined }));
  return rendered;
}

/**
 * A statement of `parameterCount` parameters that answers one column `response`, wrapped so
 * that it answers its response when the guard holds, else NULL (the statement is then not run).
 * Its parameters are the statement's, then the guard's (the values of `guardCheck`).
 */
export function guardedStatement(statement: string, parameterCount: number, guard: StatementGuard): string {
  return `SELECT CASE WHEN ${renderCondition(guard, parameterCount + 1).text} THEN (${statement}) END AS "response"`;
}

/**
 * The statement that answers whether the guard holds (one row, column `holds`), its parameters
 * from $1. Its text is the same for every caller, so it also names the statements made with the guard.
 */
export function guardCheck(guard: StatementGuard): GuardedText {
  const rendered = renderedOf(guard);
  if (rendered.check) return rendered.check;
  const condition = renderCondition(guard, 1);
  return (rendered.check = Object.freeze({ text: `SELECT (${condition.text}) AS "holds"`, values: condition.values }));
}

/**
 * The text and guard values of a one-statement mutation (`OneStatement` of compileMutation.ts,
 * `parameterCount` parameters) with the guard in its place: `loanql_assert` fails the statement,
 * nothing written, when the guard does not hold (SQLSTATE LQ001, message `guard`).
 */
export function oneStatementText(statement: { readonly head: string; readonly tail: string }, parameterCount: number, guard: StatementGuard): GuardedText {
  const condition = renderCondition(guard, parameterCount + 1);
  return { text: `${statement.head}loanql_assert(${condition.text}, 'guard') AND ${statement.tail}`, values: condition.values };
}
