import type { Param } from '../plan/params.js';

export type { Param, ParamCast } from '../plan/params.js';

/** Combinations of listed values a plan check may try at most (`genericPlanSafety`). */
const MAX_VALUE_COMBINATIONS = 12;

/**
 * Whether a statement may run on PostgreSQL's generic plan once its plans were checked to be the
 * same (db/planChoice.ts), and for which values: null when a parameter's value could choose
 * another plan from one execution to the next unseen — a request variable compared with a
 * column, a key variable. Every other parameter is a value written in the document (the same for
 * every execution of a cached plan), the account, a limit or an offset, or a variable compared
 * with a field that takes only a few values (`oneOf`: the check tries each, at most
 * `MAX_VALUE_COMBINATIONS` combinations).
 */
export function genericPlanSafety(params: readonly Param[]): { readonly oneOf: ReadonlyMap<number, readonly unknown[]> } | null {
  const oneOf = new Map<number, readonly string[]>();
  let combinations = 1;
  for (const [index, param] of params.entries()) {
    if (param.kind === 'const' || param.kind === 'account' || (param.kind === 'var' && param.cast !== 'value')) continue;
    if (param.kind !== 'var' || !param.oneOf) return null;
    combinations *= param.oneOf.length;
    if (combinations > MAX_VALUE_COMBINATIONS) return null;
    oneOf.set(index, param.oneOf);
  }
  return { oneOf };
}

/**
 * SQL is built only from fragments. A fragment is an opaque, frozen list of parts: trusted
 * text written in this codebase, identifiers (quoted; from resolved metadata only) and
 * parameters (`Param`, the IR's values: `plan/params.ts`). Rendering turns each parameter into
 * `$n`; no value is ever spliced into text.
 */
type Part = { readonly text: string } | { readonly identifier: string } | { readonly param: Param };

const FRAGMENT = Symbol('sql fragment');

export interface Fragment {
  readonly [FRAGMENT]: true;
  readonly parts: readonly Part[];
}

function isFragment(value: unknown): value is Fragment {
  return typeof value === 'object' && value !== null && (value as Fragment)[FRAGMENT] === true;
}

function make(parts: readonly Part[]): Fragment {
  return Object.freeze({ [FRAGMENT]: true as const, parts: Object.freeze(parts) });
}

/**
 * `sql\`SELECT ${fragment}\`` — the template text is trusted; every interpolation must be a
 * fragment (use `sql.param`, `sql.ident`, `sql.join`). Anything else is a programming error.
 */
export function sql(strings: TemplateStringsArray, ...values: readonly Fragment[]): Fragment {
  const parts: Part[] = [];
  strings.forEach((text, index) => {
    if (text) parts.push({ text });
    if (index < values.length) {
      const value = values[index];
      if (!isFragment(value)) {
        throw new TypeError(`sql: interpolated ${typeof value} is not a fragment; wrap a value in sql.param(...) or a name in sql.ident(...)`);
      }
      for (const part of value.parts) parts.push(part);
    }
  });
  return make(parts);
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A quoted identifier. Names come from resolved metadata or the compiler's own aliases. */
sql.ident = (name: string): Fragment => {
  if (!IDENTIFIER.test(name)) throw new TypeError(`sql.ident: "${name}" is not a valid identifier`);
  return make([{ identifier: name }]);
};

/** A relation or function name, schema-qualified when a schema is given (`"lender"."branches"`); null: the current schema's. */
sql.qualified = (schema: string | null, name: string): Fragment => (schema === null ? sql.ident(name) : sql`${sql.ident(schema)}.${sql.ident(name)}`);

const LITERAL_TEXT = /^[A-Za-z0-9_{}[\],:"]*$/;

/**
 * Text the compiler writes into the response JSON itself — a key with its punctuation
 * (`,"amount":`), a `__typename` string — as a SQL string literal. Accepted only when made of
 * JSON punctuation and GraphQL name characters (`[A-Za-z0-9_{}[],:"]`): GraphQL names (aliases,
 * field and type names) are validated by the parser as `[_A-Za-z][_0-9A-Za-z]*`, so no quote or
 * backslash can occur, and anything else throws. Not a value: the same text for every request of
 * a plan, which the plan cache keys by document (engine/README.md, "Constants in the text").
 */
sql.literal = (text: string): Fragment => {
  if (!LITERAL_TEXT.test(text)) throw new TypeError(`sql.literal: ${JSON.stringify(text)} is not JSON punctuation and GraphQL name characters`);
  return make([{ text: `'${text}'` }]);
};
/**
 * A constant integer of the plan (a `limit` written in the document, a role's limit) as SQL
 * text, so the planner sees it in a prepared statement's generic plan. Only a safe integer is
 * accepted; anything else throws.
 */
sql.integer = (value: number): Fragment => {
  if (!Number.isSafeInteger(value)) throw new TypeError(`sql.integer: ${String(value)} is not a safe integer`);
  return make([{ text: String(value) }]);
};

/** A constant boolean of the plan (`is_next: {_eq: true}` written in the document) as SQL text. */
sql.boolean = (value: boolean): Fragment => {
  if (typeof value !== 'boolean') throw new TypeError('sql.boolean: not a boolean');
  return make([{ text: value ? 'true' : 'false' }]);
};

const CATALOGUE_CONSTANT = /^[A-Za-z0-9_.:-]{1,100}$/;

/**
 * A text constant of the live catalogue — of a partial index's predicate (`'completed'` of
 * `WHERE status <> 'completed'`, `Metadata.indexConstants`) or of a CHECK constraint's list of
 * values (`Metadata.fieldValues`): written as SQL text only when a document compares the column
 * with exactly that string, so the generic plan of a prepared statement can use the index and
 * reads a constant. Plain words only; anything else throws.
 */
sql.catalogueConstant = (value: string): Fragment => {
  if (!CATALOGUE_CONSTANT.test(value)) throw new TypeError(`sql.catalogueConstant: ${JSON.stringify(value)} is not a plain word`);
  return make([{ text: `'${value}'::text` }]);
};

/** A bound parameter. */
sql.param = (param: Param): Fragment => make([{ param }]);

/** A constant bound as a parameter. */
sql.value = (value: unknown): Fragment => make([{ param: { kind: 'const', value } }]);

sql.join = (fragments: readonly Fragment[], separator: Fragment = sql`, `): Fragment => {
  const parts: Part[] = [];
  // Loops, not spreads: a document may have thousands of fields, past the call-stack limit.
  fragments.forEach((fragment, index) => {
    if (index > 0) for (const part of separator.parts) parts.push(part);
    for (const part of fragment.parts) parts.push(part);
  });
  return make(parts);
};

export interface RenderedSql {
  readonly text: string;
  readonly params: readonly Param[];
}

/**
 * Renders a fragment into text with `$n` placeholders and the list of parameters. The account
 * parameter, each key variable and equal constants are bound once. Pure and deterministic.
 * `firstParameter` numbers them from there (a fragment wrapped around a statement rendered alone).
 */
export function render(fragment: Fragment, { firstParameter = 1 }: { readonly firstParameter?: number } = {}): RenderedSql {
  const params: Param[] = [];
  const constIndex = new Map<unknown, number>();
  let accountIndex = 0;
  let text = '';
  for (const part of fragment.parts) {
    if ('text' in part) text += part.text;
    else if ('identifier' in part) text += `"${part.identifier}"`;
    else {
      const param = part.param;
      let index: number;
      if (param.kind === 'account') {
        if (!accountIndex) accountIndex = params.push(param);
        index = accountIndex;
      } else if (param.kind === 'keyVariable') {
        // A key variable is one value per request wherever a role's filters name it.
        const key = `key:${param.name}`;
        index = constIndex.get(key) ?? params.push(param);
        constIndex.set(key, index);
      } else if (param.kind === 'const' && (typeof param.value === 'string' || typeof param.value === 'number')) {
        const key = `${typeof param.value}:${param.value}`;
        index = constIndex.get(key) ?? params.push(param);
        constIndex.set(key, index);
      } else {
        index = params.push(param);
      }
      text += `$${index + firstParameter - 1}`;
    }
  }
  return { text, params };
}
