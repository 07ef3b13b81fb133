import { GraphQLError, type OperationDefinitionNode } from 'graphql';
import { patternProblem } from '../plan/patternCost.js';
import { argumentRangeProblem } from '../plan/argumentRange.js';
import { checkCount } from '../plan/planOperation.js';
import type { Param } from '../sql/fragment.js';
import { RequestError, toResponseError } from './errors.js';
import type { ErrorCode } from '../errorCode.js';

/**
 * Who a request runs for: an account id (the admin role's keys, the REST and CLI callers), or
 * an account with the variables of its API key (`key.person_id`), bound where a role's filter
 * or preset names them. Pass it to the engine of the key's role (`forRole`).
 */
export type Principal = string | { readonly accountId: string; readonly keyVariables: ReadonlyMap<string, unknown> };

/** A principal in one shape. */
export interface Caller {
  readonly accountId: string;
  readonly keyVariables: ReadonlyMap<string, unknown>;
}

const NO_KEY_VARIABLES: ReadonlyMap<string, unknown> = new Map();

export const callerOf = (principal: Principal): Caller => (typeof principal === 'string' ? { accountId: principal, keyVariables: NO_KEY_VARIABLES } : principal);

/** What one request binds: its coerced variables, its caller, and the operation (for error locations). */
export interface Binding {
  readonly variables: ReadonlyMap<string, unknown>;
  readonly caller: Caller;
  readonly maxRows: number | null;
  /** Where a refused variable is defined, for the error's `locations`. */
  readonly operation: OperationDefinitionNode;
}

/**
 * The value of one parameter of a compiled statement for one request. A variable's value is
 * checked as it is bound — a limit or offset in 0…2147483647 (a null limit is `MAX_ROWS`), a
 * pattern's cost (`patternCost.ts`), a computed field's date argument its metadata bounds (`argumentRange.ts`) — and refused as `validation-failed`, located at its definition.
 */
export function bindParam(param: Param, binding: Binding): unknown {
  switch (param.kind) {
    case 'newId':
    case 'stepResult':
      throw new Error(`a ${param.kind} parameter is bound only while a mutation runs`);
    case 'account':
      return binding.caller.accountId;
    case 'keyVariable':
      // A key without the variable matches nothing (x = NULL), never everything.
      return binding.caller.keyVariables.get(param.name) ?? null;
    case 'const':
      return param.value;
    case 'list':
      return param.items.map((item) => bindParam(item, binding));
    case 'var': {
      const value = binding.variables.get(param.name) ?? null;
      const refused = (message: string, extensions: Readonly<Record<string, unknown>> | undefined): RequestError => {
        const definition = binding.operation.variableDefinitions?.find((d) => d.variable.name.value === param.name);
        const located = new GraphQLError(`Variable "$${param.name}": ${message}`, { ...(definition ? { nodes: definition } : {}), extensions });
        return new RequestError([toResponseError(located, 'validation-failed')], 'document');
      };
      if (param.cast === 'value') {
        // A regular expression or SIMILAR TO pattern in a variable: its cost is bounded here,
        // before the statement runs, as one written in the document is when it is planned.
        const problem = param.pattern && typeof value === 'string' ? patternProblem(value, param.pattern) : param.dayRange ? argumentRangeProblem(param.dayRange, value) : null;
        if (problem) throw refused(problem, { code: 'validation-failed' satisfies ErrorCode });
        return value;
      }
      if (value === null) return param.cast === 'cappedLimit' ? binding.maxRows : null;
      try {
        return checkCount(value, param.cast === 'offset' ? 'offset' : param.cast === 'batchSize' ? 'batch_size' : 'limit', binding.maxRows);
      } catch (error) {
        throw refused((error as GraphQLError).message, (error as GraphQLError).extensions);
      }
    }
  }
}
