import type { BoundedArgument } from './argumentRange.js';
import type { PatternDialect } from './patternCost.js';

/**
 * A value of the IR: what becomes a bound parameter (`$n`) when the compiler renders the plan.
 * Values written in the document, request variables, the account, key variables, and the ids
 * and results a mutation makes as it runs.
 */
export type Param =
  | { readonly kind: 'const'; readonly value: unknown }
  /** A request variable used as a whole value (an operator value, a limit, a key). */
  | {
      readonly kind: 'var';
      readonly name: string;
      readonly cast: ParamCast;
      /** The field it is compared with (`_eq`) takes only these values (`Metadata.fieldValues`). */
      readonly oneOf?: readonly string[];
      /** A regular expression or SIMILAR TO pattern, checked when bound (engine/plan/patternCost.ts). */
      readonly pattern?: PatternDialect;
      /** A computed field's date argument whose metadata bounds its days (`range:`), checked when bound (argumentRange.ts). */
      readonly dayRange?: BoundedArgument;
    }
  /** A list whose items are parameters (a literal list holding variables). */
  | { readonly kind: 'list'; readonly items: readonly Param[] }
  /** The account of the request (the tenant predicate). */
  | { readonly kind: 'account' }
  /** A variable of the request's API key (`key.person_id` in a role's filter or preset). */
  | { readonly kind: 'keyVariable'; readonly name: string }
  /** The id of a row a mutation inserts, made by the server per request (slot: which row). */
  | { readonly kind: 'newId'; readonly slot: number }
  /** What an earlier statement of a mutation returned: its row ids, row count, or response JSON. */
  | { readonly kind: 'stepResult'; readonly step: number; readonly output: 'ids' | 'count' | 'json' };

/** How a variable's value is prepared for binding; `cappedLimit`: a list's limit, which MAX_ROWS replaces when the variable is null; `batchSize`: a stream's, at least 1. */
export type ParamCast = 'value' | 'limit' | 'cappedLimit' | 'offset' | 'batchSize';
