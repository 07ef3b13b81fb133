import {
  GraphQLError,
  isListType,
  isScalarType,
  getNamedType,
  Kind,
  typeFromAST,
  valueFromAST,
  valueFromASTUntyped,
  type FieldNode,
  type GraphQLInputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type ValueNode,
} from 'graphql';
import type { Collection } from '../../metadata/index.js';
import { jsonTextOfLiteral, SCALAR_FOR_TYPE } from '../schema/scalars.js';
import type { Param } from './params.js';
import type { ErrorCode } from '../errorCode.js';

export interface PlanOptions {
  /** Applied as the limit of every list without one; a larger limit is an error. */
  readonly maxRows: number | null;
  /** The resolved collections the schema was built from, by name. */
  readonly collections: ReadonlyMap<string, Collection>;
}

/** A request variable used as a plain value: it stays a parameter, so the plan is reusable. */
class VariableRef {
  constructor(readonly name: string) {}
}
/** A literal from the document, coerced once its input type is known. */
class Literal {
  constructor(readonly node: ValueNode) {}
}
/** An argument value: literals and variable references inside plain objects and arrays. */
type ArgValue = VariableRef | Literal | ArgValue[] | { [key: string]: ArgValue } | string | number | boolean | null;

export { VariableRef, Literal, type ArgValue };

export type ArgumentValues = ReturnType<typeof argumentValues>;

/**
 * An operation's argument values as the planner reads them: literals and variables kept apart
 * (a variable used as a plain value stays a parameter), values read now where they shape the
 * SQL (which makes the plan per request: `isReusable`), limits and offsets checked.
 */
export function argumentValues(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  /** The request's coerced variable values, by name (a `Map`: the names are the client's). */
  variables: ReadonlyMap<string, unknown>,
  options: PlanOptions,
) {
  let reusable = true;
  const scalarVariables = new Set<string>();
  for (const definition of operation.variableDefinitions ?? []) {
    const type = typeFromAST(schema, definition.type);
    if (type && isScalarType(getNamedType(type))) scalarVariables.add(definition.variable.name.value);
  }

  const variableValue = (name: string): unknown => {
    reusable = false;
    return variables.get(name);
  };

  function toArgValue(node: ValueNode): ArgValue {
    switch (node.kind) {
      case Kind.VARIABLE:
        if (scalarVariables.has(node.name.value)) return new VariableRef(node.name.value);
        return fromJs(variableValue(node.name.value));
      case Kind.OBJECT:
        return Object.fromEntries(node.fields.map((field) => [field.name.value, toArgValue(field.value)]));
      case Kind.LIST:
        return node.values.map(toArgValue);
      case Kind.NULL:
        return null;
      default:
        return new Literal(node);
    }
  }

  function fromJs(value: unknown): ArgValue {
    if (value === undefined || value === null) return null;
    if (Array.isArray(value)) return value.map(fromJs);
    if (typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fromJs(v)]));
    return value as string | number | boolean;
  }

  function toParam(value: ArgValue, type: GraphQLInputType): Param {
    if (value instanceof VariableRef) return { kind: 'var', name: value.name, cast: 'value' };
    if (value instanceof Literal) return { kind: 'const', value: valueFromAST(value.node, type) ?? null };
    if (Array.isArray(value)) {
      const itemType = isListType(type) ? (type.ofType as GraphQLInputType) : type;
      const items = value.map((item) => toParam(item, itemType));
      if (items.every((item) => item.kind === 'const')) return { kind: 'const', value: items.map((item) => (item as { value: unknown }).value) };
      return { kind: 'list', items };
    }
    // A single value where a list is expected is a list of one (GraphQL input coercion).
    if (isListType(type) && value !== null) return { kind: 'const', value: [value] };
    return { kind: 'const', value };
  }

  /**
   * A jsonb value as a parameter (JSON text). A value written inline is an object or list the
   * planner has taken apart (its leaves are literals and variables): it is put back together
   * as JSON text, read now, so the plan depends on those variables' values.
   */
  function jsonbParam(value: ArgValue): Param {
    if (value instanceof VariableRef) return toParam(value, SCALAR_FOR_TYPE.jsonb);
    // A plain string here comes from a variable holding the whole filter or object, which
    // graphql-js has coerced already: the jsonb scalar made it JSON text.
    if (typeof value === 'string') return { kind: 'const', value };
    return { kind: 'const', value: value === null ? null : jsonText(value) };
  }

  /** The JSON text of a taken-apart value, a literal's numbers with their digits as written (`jsonTextOfLiteral`). */
  function jsonText(value: ArgValue): string | undefined {
    if (value instanceof VariableRef) return JSON.stringify(variableValue(value.name));
    if (value instanceof Literal) return jsonTextOfLiteral(value.node, variableValue);
    if (Array.isArray(value)) return `[${value.map((item) => jsonText(item) ?? 'null').join(',')}]`;
    if (value !== null && typeof value === 'object') {
      const members = Object.entries(value).flatMap(([key, inner]) => {
        const text = jsonText(inner);
        return text === undefined ? [] : [`${JSON.stringify(key)}:${text}`];
      });
      return `{${members.join(',')}}`;
    }
    return JSON.stringify(value);
  }

  function toJs(value: ArgValue): unknown {
    if (value instanceof VariableRef) return variableValue(value.name);
    if (value instanceof Literal) return valueFromASTUntyped(value.node);
    if (Array.isArray(value)) return value.map(toJs);
    if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, toJs(inner)]));
    return value;
  }

  /** An enum value (an order_by direction, a column name), read now: it shapes the SQL. */
  function enumValue(value: ArgValue | undefined): string | null {
    if (value === undefined || value === null) return null;
    if (value instanceof VariableRef) return (variableValue(value.name) as string | null) ?? null;
    if (value instanceof Literal) return value.node.kind === Kind.ENUM ? value.node.value : null;
    return typeof value === 'string' ? value : null;
  }

  /** A literal or already-coerced value, read now (structural positions: directions, booleans). */
  function readNow(value: ArgValue | undefined, type: GraphQLInputType): unknown {
    if (value === undefined) return undefined;
    if (value instanceof VariableRef) return variableValue(value.name);
    // A Literal is a leaf (scalar, enum or null): it holds no variable.
    if (value instanceof Literal) return valueFromAST(value.node, type);
    return value;
  }

  function asList(value: ArgValue | undefined): ArgValue[] {
    if (value === undefined || value === null) return [];
    return Array.isArray(value) ? value : [value];
  }

  /** `capped`: a list (not an aggregate) without a limit gets MAX_ROWS as its limit. */
  function countLimit(value: ArgValue | undefined, name: CountName, capped = false): Param | null {
    const cap: Param | null = capped && name === 'limit' && options.maxRows !== null ? { kind: 'const', value: options.maxRows } : null;
    if (value === undefined || value === null || (value instanceof Literal && value.node.kind === Kind.NULL)) return cap;
    if (value instanceof VariableRef) return { kind: 'var', name: value.name, cast: name === 'batch_size' ? 'batchSize' : name === 'limit' && capped ? 'cappedLimit' : name };
    const number = value instanceof Literal ? (valueFromAST(value.node, SCALAR_FOR_TYPE.integer) as number) : (value as number);
    if (number === null || number === undefined) return cap;
    checkCount(number, name, options.maxRows);
    return { kind: 'const', value: number };
  }

  /**
   * Runs the planning of one argument; a GraphQL error it throws without a place gets the
   * argument's (so `locations` point an editor at `limit: -1`, or at the variable's use).
   */
  function atArgument<T>(node: FieldNode, name: string, plan: () => T): T {
    try {
      return plan();
    } catch (error) {
      if (!(error instanceof GraphQLError) || error.nodes?.length) throw error;
      const argument = node.arguments?.find((a) => a.name.value === name);
      throw new GraphQLError(error.message, { nodes: argument ?? node, extensions: error.extensions, originalError: error });
    }
  }

  const schemaCollection = (name: string): Collection => options.collections.get(name)!;

  function argsOf(node: FieldNode): Record<string, ArgValue> {
    return Object.fromEntries((node.arguments ?? []).map((argument) => [argument.name.value, toArgValue(argument.value)]));
  }

  return { variableValue, toArgValue, fromJs, toParam, jsonbParam, toJs, enumValue, readNow, asList, countLimit, atArgument, schemaCollection, argsOf, isReusable: (): boolean => reusable };
}

/** The counts of a list: its `limit` and `offset`, and a stream's `batch_size` (at least 1: a batch of none would never move the stream). */
export type CountName = 'limit' | 'offset' | 'batch_size';

/**
 * The most rows a stream's batch holds when `MAX_ROWS` is unset (with it set, `MAX_ROWS`). Hasura
 * requires `batch_size` and leaves its size to the client: a batch of 100,000 payments took 7.9 s
 * and 245 MB of the server's memory (bench/README.md), for one message. A stream catching up
 * sends batch after batch, so a smaller batch costs only more messages.
 */
export const STREAM_BATCH_MAX = 1000;

/** Limits and offsets are whole numbers ≥ 0; a limit is at most MAX_ROWS when that is set; a batch at most MAX_ROWS, else STREAM_BATCH_MAX. */

export function checkCount(value: unknown, name: CountName, maxRows: number | null): number {
  // GraphQL's Int already stops values past 2^31 - 1; the bound is restated so no other way in
  // (a const plan, a future caller) can hand PostgreSQL a count past its integer.
  const least = name === 'batch_size' ? 1 : 0;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < least || value > 2_147_483_647) {
    // The range named is the one the count is held to (a batch_size of 0 was told "from 1 to 2147483647", then 1001 refused).
    const most = name === 'offset' ? 2_147_483_647 : (maxRows ?? (name === 'batch_size' ? STREAM_BATCH_MAX : 2_147_483_647));
    throw new GraphQLError(`${name} must be a whole number from ${least} to ${most}, not ${JSON.stringify(value)}`, { extensions: { code: 'validation-failed' satisfies ErrorCode } });
  }
  if (name !== 'offset' && maxRows !== null && value > maxRows) {
    throw new GraphQLError(`${name} ${value} is over the maximum of ${maxRows} rows per list (MAX_ROWS)`, { extensions: { code: 'validation-failed' satisfies ErrorCode } });
  }
  if (name === 'batch_size' && maxRows === null && value > STREAM_BATCH_MAX) {
    throw new GraphQLError(`batch_size ${value} is over the maximum of ${STREAM_BATCH_MAX} rows per stream batch (MAX_ROWS, when set, is the maximum instead)`, { extensions: { code: 'validation-failed' satisfies ErrorCode } });
  }
  return value;
}
