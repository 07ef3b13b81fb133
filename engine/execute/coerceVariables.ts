import { getVariableValues, isInputType, isNonNullType, isScalarType, typeFromAST, valueFromAST, type GraphQLScalarType, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import { variablesWithNul } from '../validation/nulCharacters.js';
import { RequestError, toResponseError } from './errors.js';
import type { CachedOperation } from './planCache.js';

/**
 * The variables of one cached operation, coerced without graphql-js's general machinery
 * (`getVariableValues`: ~5–7 µs a request in the profile of issue 20, most of it type checks
 * repeated for every request). Built once per cached operation, when every variable is of a
 * scalar type (`uuid!`, `date`, `Int`, …); null otherwise, and the engine uses graphql-js.
 *
 * It handles only what it can answer exactly as graphql-js does — a value given as a JSON string,
 * number or boolean that the scalar's `parseValue` accepts, null for a nullable variable, a default
 * value, an omitted nullable variable — and returns null for anything else (a missing required
 * variable, a refused value, a list or object value, a string with a NUL character), so that the
 * engine then runs graphql-js and the NUL check, which report the errors as before.
 */
export type VariableCoercer = (inputs: Readonly<Record<string, unknown>>) => Map<string, unknown> | null;

interface Slot {
  readonly name: string;
  readonly scalar: GraphQLScalarType;
  readonly nonNull: boolean;
  /** The coerced default value; undefined when the definition has none (a default is never undefined). */
  readonly defaultValue: unknown;
}

const hasOwn = Object.prototype.hasOwnProperty;

export function scalarVariableCoercer(schema: GraphQLSchema, operation: OperationDefinitionNode): VariableCoercer | null {
  const slots: Slot[] = [];
  for (const definition of operation.variableDefinitions ?? []) {
    const type = typeFromAST(schema, definition.type);
    if (!type || !isInputType(type)) return null;
    const nonNull = isNonNullType(type);
    const scalar = nonNull ? type.ofType : type;
    if (!isScalarType(scalar)) return null;
    let defaultValue: unknown;
    if (definition.defaultValue) {
      defaultValue = valueFromAST(definition.defaultValue, type);
      if (defaultValue === undefined) return null;
    }
    slots.push({ name: definition.variable.name.value, scalar, nonNull, defaultValue });
  }
  return (inputs) => {
    const coerced = new Map<string, unknown>();
    for (const slot of slots) {
      if (!hasOwn.call(inputs, slot.name)) {
        if (slot.defaultValue !== undefined) coerced.set(slot.name, slot.defaultValue);
        else if (slot.nonNull) return null;
        continue;
      }
      const value = inputs[slot.name];
      if (value === null) {
        if (slot.nonNull) return null;
        coerced.set(slot.name, null);
        continue;
      }
      const kind = typeof value;
      if (kind === 'string') {
        if ((value as string).includes('\u0000')) return null;
      } else if (kind !== 'number' && kind !== 'boolean') return null;
      let parsed: unknown;
      try {
        parsed = slot.scalar.parseValue(value);
      } catch {
        return null;
      }
      if (parsed === undefined) return null;
      coerced.set(slot.name, parsed);
    }
    return coerced;
  };
}

/**
 * A request's variable values, coerced to the operation's types: by the operation's fast
 * coercion when it has one and the values suit it, else by graphql-js followed by the NUL check
 * (every error a request's variables can have, `validation-failed`). Variable names are the
 * client's: looked up in a Map, so `$constructor` is just a name.
 */
export function coerceVariables(schema: GraphQLSchema, cached: CachedOperation, variables: Readonly<Record<string, unknown>> | undefined): ReadonlyMap<string, unknown> {
  if (cached.coerceVariables === undefined) cached.coerceVariables = scalarVariableCoercer(schema, cached.operation);
  const fast = cached.coerceVariables?.(variables ?? {});
  if (fast) return fast;
  const coerced = getVariableValues(schema, cached.operation.variableDefinitions ?? [], variables ?? {}, { maxErrors: 50 });
  if (coerced.errors) throw new RequestError(coerced.errors.map((error) => toResponseError(error, 'validation-failed')), 'document');
  if (cached.operation.variableDefinitions?.length) {
    const withNul = variablesWithNul(cached.operation, new Map(Object.entries(variables ?? {})));
    if (withNul.length) throw new RequestError(withNul.map((error) => toResponseError(error, 'validation-failed')), 'document');
  }
  return new Map(Object.entries(coerced.coerced));
}
