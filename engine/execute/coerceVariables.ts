import {
  getNullableType,
  getVariableValues,
  isInputObjectType,
  isInputType,
  isListType,
  isNonNullType,
  isScalarType,
  typeFromAST,
  valueFromAST,
  type GraphQLInputType,
  type GraphQLScalarType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import { isLosslessNumber } from 'lossless-json';
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
  const coerced = getVariableValues(schema, cached.operation.variableDefinitions ?? [], withExactDigits(schema, cached.operation, variables ?? {}), { maxErrors: 50 });
  if (coerced.errors) throw new RequestError(coerced.errors.map((error) => toResponseError(error, 'validation-failed')), 'document');
  if (cached.operation.variableDefinitions?.length) {
    const withNul = variablesWithNul(cached.operation, new Map(Object.entries(variables ?? {})));
    if (withNul.length) throw new RequestError(withNul.map((error) => toResponseError(error, 'validation-failed')), 'document');
  }
  return new Map(Object.entries(coerced.coerced));
}

/**
 * The variables with each `LosslessNumber` (a number a double cannot hold, as the HTTP layer reads
 * a GraphQL request: `http/exactJson.ts`) settled by where it stands: inside a json/jsonb value it
 * stays, and that scalar writes its digits as a number; anywhere else it becomes the string of its
 * digits, which `numeric` and `bigint` take and `Int`/`Float` refuse, as before. The same objects
 * when there is none (a walk, no copy); the fast coercion never gets here with one (an object).
 */
function withExactDigits(schema: GraphQLSchema, operation: OperationDefinitionNode, variables: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>> {
  let settled: Record<string, unknown> | null = null;
  for (const definition of operation.variableDefinitions ?? []) {
    const name = definition.variable.name.value;
    if (!hasOwn.call(variables, name)) continue;
    const type = typeFromAST(schema, definition.type);
    const value = variables[name];
    const next = settle(value, type && isInputType(type) ? type : undefined);
    if (next !== value) (settled ??= { ...variables })[name] = next;
  }
  return settled ?? variables;
}

function settle(value: unknown, type: GraphQLInputType | undefined): unknown {
  if (value === null || typeof value !== 'object') return value;
  const nullable = type && getNullableType(type);
  if (isLosslessNumber(value)) return nullable && isJsonScalar(nullable) ? value : value.toString();
  if (nullable && isJsonScalar(nullable)) return value;
  if (Array.isArray(value)) {
    const item = nullable && isListType(nullable) ? (nullable.ofType as GraphQLInputType) : undefined;
    let copy: unknown[] | null = null;
    value.forEach((entry, index) => {
      const next = settle(entry, item);
      if (next !== entry) (copy ??= [...value])[index] = next;
    });
    return copy ?? value;
  }
  const fields = nullable && isInputObjectType(nullable) ? nullable.getFields() : null;
  let copy: Record<string, unknown> | null = null;
  for (const [key, entry] of Object.entries(value)) {
    const next = settle(entry, fields && hasOwn.call(fields, key) ? fields[key]!.type : undefined);
    if (next !== entry) (copy ??= { ...(value as Record<string, unknown>) })[key] = next;
  }
  return copy ?? value;
}

function isJsonScalar(type: GraphQLInputType): boolean {
  return isScalarType(type) && (type.name === 'jsonb' || type.name === 'json');
}
