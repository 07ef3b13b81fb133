import { GraphQLBoolean, GraphQLError, GraphQLFloat, GraphQLInt, GraphQLList, GraphQLNonNull, GraphQLScalarType, GraphQLString, Kind, print, valueFromASTUntyped, type ValueNode } from 'graphql';
import { elementTypeOf, isArrayType, type FieldType, type ScalarType } from '../../metadata/index.js';
import { stringify as stringifyExact } from 'lossless-json';

/**
 * A value as an error shows it: JSON, but a number JSON cannot write (a JSON number past a
 * double, 1e400, parses to Infinity) as itself, not as JSON's `null`.
 */
const shown = (value: unknown): string => (typeof value === 'number' && !Number.isFinite(value) ? String(value) : JSON.stringify(value) ?? String(value));

/** What a number too large for a double is told: the digits survive only as a string. */
const TOO_LARGE_FOR_JSON = 'the JSON number is past what a double holds (send the digits as a string)';

/**
 * Custom scalars of the Hasura-compatible schema. Their parsers reject malformed input with a
 * clear message before it reaches PostgreSQL; values stay strings, so numeric keeps every digit.
 */
function stringScalar(name: string, description: string, check: (value: string) => string | null): GraphQLScalarType {
  /** `node`: the literal, so the error has `locations` (graphql-js reports a literal's GraphQLError as is). */
  const parse = (value: unknown, node?: ValueNode): string => {
    if (typeof value !== 'string') throw new GraphQLError(`${name} must be a string, not ${JSON.stringify(value)}`);
    const problem = check(value);
    if (problem) throw new GraphQLError(`invalid ${name} ${JSON.stringify(value)}: ${problem}`, node ? { nodes: node } : {});
    return value;
  };
  return new GraphQLScalarType({
    name,
    description,
    serialize: (value) => value,
    parseValue: parse,
    parseLiteral: (node: ValueNode) => {
      if (node.kind !== Kind.STRING) throw new GraphQLError(`${name} must be a string literal, not ${print(node)}`, { nodes: node });
      return located(node, () => parse(node.value, node));
    },
  });
}

/**
 * A literal's error carries the literal's location (graphql-js reports a GraphQLError thrown by
 * `parseLiteral` as it is, so one made without `nodes` would have no `locations`).
 */
function located<T>(node: ValueNode, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof GraphQLError && !error.nodes) throw new GraphQLError(error.message, { nodes: node, extensions: error.extensions });
    throw error;
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?)?(Z|[+-]\d{2}(:?\d{2})?)?$/i;
const NUMERIC = /^-?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

function validDate(value: string): boolean {
  const match = DATE.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  // Date.UTC reads years 0–99 as 1900–1999: before session 36 "0001-01-01" (a usual "from the
  // beginning" bound) was refused as not a real date.
  date.setUTCFullYear(year);
  return year >= 1 && date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

export const GraphQLUuid = stringScalar('uuid', 'A UUID.', (v) => (UUID.test(v) ? null : 'expected 8-4-4-4-12 hexadecimal digits'));
export const GraphQLDate = stringScalar('date', 'A calendar date, YYYY-MM-DD.', (v) => (validDate(v) ? null : 'expected a real date as YYYY-MM-DD'));
// The day is checked as a date's is: Date.parse takes "2026-02-30T00:00:00Z" (as March 2), and
// PostgreSQL's refusal then reached the client as its own words, `data-exception`, naming no variable.
export const GraphQLTimestamptz = stringScalar('timestamptz', 'A timestamp with time zone, ISO 8601.', (v) =>
  TIMESTAMP.test(v) && validDate(v.slice(0, 10)) && !Number.isNaN(Date.parse(v.replace(' ', 'T'))) ? null : 'expected an ISO 8601 timestamp of a real day',
);

/**
 * What PostgreSQL's numeric can take as input: at most 131072 digits before the point, 16383
 * after it, and an exponent (`1e…`) of at most ±1000 — a value past these is refused here, not
 * by the database. (A value within them but past a column's own precision, say 1e20 against a
 * numeric(14,2) column, is fine in a filter: comparisons use unconstrained numeric, so it simply
 * matches nothing or everything.)
 */
const NUMERIC_MAX_INTEGER_DIGITS = 131_072;
const NUMERIC_MAX_FRACTION_DIGITS = 16_383;
const NUMERIC_MAX_EXPONENT = 1000;
const NUMERIC_PARTS = /^-?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/** Why PostgreSQL's numeric cannot hold a numeric text (already matching NUMERIC), or null. */
export function numericRangeProblem(text: string): string | null {
  const [, integer = '', fraction = '', exponentText = '0'] = NUMERIC_PARTS.exec(text) ?? [];
  const exponent = Number(exponentText);
  if (!(Math.abs(exponent) <= NUMERIC_MAX_EXPONENT)) return `the exponent is past ±${NUMERIC_MAX_EXPONENT}`;
  const digits = (integer + fraction).replace(/^0+/, '');
  const significant = digits.replace(/0+$/, '');
  if (!significant) return null;
  // value = significant × 10^scale
  const scale = exponent - fraction.length + (digits.length - significant.length);
  const integerDigits = Math.max(0, significant.length + scale);
  const fractionDigits = Math.max(0, -scale);
  if (integerDigits > NUMERIC_MAX_INTEGER_DIGITS) return `more than ${NUMERIC_MAX_INTEGER_DIGITS} digits before the point`;
  if (fractionDigits > NUMERIC_MAX_FRACTION_DIGITS) return `more than ${NUMERIC_MAX_FRACTION_DIGITS} digits after the point`;
  return null;
}

function checkedNumeric(text: string): string {
  const problem = numericRangeProblem(text);
  if (problem) throw new GraphQLError(`numeric ${text.length > 40 ? `${text.slice(0, 37)}...` : text} is out of PostgreSQL's numeric range: ${problem}`);
  return text;
}

/** numeric: a JSON number or a numeric string in, PostgreSQL's exact digits out. */
export const GraphQLNumeric = new GraphQLScalarType({
  name: 'numeric',
  description: 'An exact decimal number.',
  serialize: (value) => value,
  parseValue: (value) => {
    if (typeof value === 'number' && Number.isFinite(value)) return checkedNumeric(String(value));
    if (typeof value === 'string' && NUMERIC.test(value)) return checkedNumeric(value);
    if (typeof value === 'number') throw new GraphQLError(`invalid numeric ${shown(value)}: ${TOO_LARGE_FOR_JSON}`);
    throw new GraphQLError(`invalid numeric ${shown(value)}: expected a number`);
  },
  parseLiteral: (node) => {
    if (node.kind === Kind.INT || node.kind === Kind.FLOAT) return located(node, () => checkedNumeric(node.value));
    if (node.kind === Kind.STRING && NUMERIC.test(node.value)) return located(node, () => checkedNumeric(node.value));
    throw new GraphQLError(`numeric must be a number, not ${print(node)}`, { nodes: node });
  },
});

/**
 * The JSON text of a json/jsonb value written in the document, its numbers with the digits as
 * written (GraphQL's number syntax is JSON's), as PostgreSQL then stores them: `{x: 12345678901234567890}`
 * and `{y: 1e-400}` became 12345678901234567000 and 0 through a double before session 36. A
 * number PostgreSQL's numeric cannot hold is refused (`validation-failed`, located); `variable`
 * gives a variable's value inside the literal (written as JSON: undefined leaves an object's key
 * out and is null in a list, as `JSON.stringify` does).
 */
export function jsonTextOfLiteral(node: ValueNode, variable: (name: string) => unknown): string | undefined {
  switch (node.kind) {
    case Kind.INT:
    case Kind.FLOAT: {
      const problem = numericRangeProblem(node.value);
      if (problem) throw new GraphQLError(`the JSON number ${node.value.length > 40 ? `${node.value.slice(0, 37)}...` : node.value} is out of PostgreSQL's numeric range: ${problem}`, { nodes: node });
      return node.value;
    }
    case Kind.VARIABLE:
      return JSON.stringify(variable(node.name.value));
    case Kind.LIST:
      return `[${node.values.map((item) => jsonTextOfLiteral(item, variable) ?? 'null').join(',')}]`;
    case Kind.OBJECT: {
      const members: string[] = [];
      for (const field of node.fields) {
        const text = jsonTextOfLiteral(field.value, variable);
        if (text !== undefined) members.push(`${JSON.stringify(field.name.value)}:${text}`);
      }
      return `{${members.join(',')}}`;
    }
    default:
      return JSON.stringify(valueFromASTUntyped(node));
  }
}

/**
 * The JSON text of a json/jsonb variable's value: a number a double cannot hold arrives as a
 * `LosslessNumber` (`http/exactJson.ts`, `execute/coerceVariables.ts`) and is written with its
 * digits (`{"x": 12345678901234567890}` was stored as the string "12345678901234567890").
 */
function jsonTextOfValue(value: unknown): string {
  return value !== null && typeof value === 'object' ? (stringifyExact(value) as string) : JSON.stringify(value);
}

/** jsonb: any JSON value, output as stored. Filtered with the jsonb operators (`jsonb_comparison_exp`), not ordered. */
export const GraphQLJsonb = new GraphQLScalarType({
  name: 'jsonb',
  description: 'A JSON value (PostgreSQL jsonb), returned as stored.',
  serialize: (value) => value,
  parseValue: jsonTextOfValue,
  parseLiteral: (node, variables) => jsonTextOfLiteral(node, (name) => variables?.[name]),
});

/**
 * json (PostgreSQL json, not jsonb): any JSON value, output as stored (its text as written, as
 * PostgreSQL keeps it). Compared with `_eq _neq _in _nin` as jsonb (`json_comparison_exp`):
 * PostgreSQL has no `=` for json.
 */
export const GraphQLJson = new GraphQLScalarType({
  name: 'json',
  description: 'A JSON value (PostgreSQL json), returned as stored.',
  serialize: (value) => value,
  parseValue: jsonTextOfValue,
  parseLiteral: (node, variables) => jsonTextOfLiteral(node, (name) => variables?.[name]),
});

/** The arguments of a jsonb field (Hasura's): `path`, the JSON select path of the value to answer (`"$.a.b[0]"`). */
export const JSONB_PATH_ARGS = { path: { type: GraphQLString, description: 'JSON select path' } } as const;

/**
 * A whole number of at most `bits` bits: a GraphQL Int or a string of digits in (so a bigint past
 * 2^53 keeps every digit), the digits out as text for the parameter. PostgreSQL writes it back
 * as a JSON number, as Hasura does (its stringify-numeric-types option aside).
 */
function wholeNumber(name: string, bits: 16 | 64, description: string): GraphQLScalarType {
  const max = bits === 16 ? 32_767n : 9_223_372_036_854_775_807n;
  const check = (text: string): string => {
    if (!/^-?\d{1,20}$/.test(text) || BigInt(text) > max || BigInt(text) < -max - 1n) throw new GraphQLError(`invalid ${name} ${JSON.stringify(text)}: expected a whole number from ${-max - 1n} to ${max}`);
    return text;
  };
  return new GraphQLScalarType({
    name,
    description,
    serialize: (value) => value,
    parseValue: (value) => {
      if (typeof value === 'number' && Number.isSafeInteger(value)) return check(String(value));
      if (typeof value === 'string') return check(value);
      throw new GraphQLError(`invalid ${name} ${JSON.stringify(value)}: expected a whole number`);
    },
    parseLiteral: (node) => {
      if (node.kind === Kind.INT || node.kind === Kind.STRING) return located(node, () => check(node.value));
      throw new GraphQLError(`${name} must be a whole number, not ${print(node)}`, { nodes: node });
    },
  });
}

/** A binary floating-point number (float8, real): a JSON number in and out. */
function floatNumber(name: string, description: string): GraphQLScalarType {
  const check = (value: number): number => {
    if (!Number.isFinite(value)) throw new GraphQLError(`invalid ${name} ${shown(value)}: expected a finite number (${TOO_LARGE_FOR_JSON})`);
    return value;
  };
  return new GraphQLScalarType({
    name,
    description,
    serialize: (value) => value,
    parseValue: (value) => {
      if (typeof value === 'number') return check(value);
      throw new GraphQLError(`invalid ${name} ${JSON.stringify(value)}: expected a number`);
    },
    parseLiteral: (node) => {
      if (node.kind === Kind.INT || node.kind === Kind.FLOAT) return check(Number(node.value));
      throw new GraphQLError(`${name} must be a number, not ${print(node)}`, { nodes: node });
    },
  });
}

const TIMESTAMP_WITHOUT_ZONE = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?)?$/;
const TIME = /^([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,6})?)?$|^24:00(:00(\.0{1,6})?)?$/;

export const GraphQLBigint = wholeNumber('bigint', 64, 'A whole number of 64 bits (PostgreSQL bigint): a number or a string of digits in, a JSON number out.');
export const GraphQLSmallint = wholeNumber('smallint', 16, 'A whole number of 16 bits (PostgreSQL smallint).');
export const GraphQLFloat8 = floatNumber('float8', 'A double-precision floating-point number (PostgreSQL double precision).');
export const GraphQLCitext = stringScalar('citext', 'Case-insensitive text (PostgreSQL citext): compared without regard to case.', () => null);
export const GraphQLTimestamp = stringScalar('timestamp', 'A timestamp without time zone, ISO 8601 (YYYY-MM-DDThh:mm:ss[.ffffff]).', (v) =>
  TIMESTAMP_WITHOUT_ZONE.test(v) && validDate(v.slice(0, 10)) && !Number.isNaN(Date.parse(`${v.replace(' ', 'T')}Z`)) ? null : 'expected an ISO 8601 timestamp without a zone',
);
export const GraphQLTime = stringScalar('time', 'A time of day without time zone, hh:mm[:ss[.ffffff]].', (v) => (TIME.test(v) ? null : 'expected a time of day as hh:mm[:ss]'));

export const SCALAR_FOR_TYPE: Readonly<Record<ScalarType, GraphQLScalarType>> = {
  uuid: GraphQLUuid,
  text: GraphQLString,
  numeric: GraphQLNumeric,
  integer: GraphQLInt,
  boolean: GraphQLBoolean,
  date: GraphQLDate,
  timestamptz: GraphQLTimestamptz,
  jsonb: GraphQLJsonb,
  json: GraphQLJson,
  bigint: GraphQLBigint,
  smallint: GraphQLSmallint,
  float8: GraphQLFloat8,
  // Hasura's scalar of PostgreSQL's real is GraphQL's own Float.
  real: GraphQLFloat,
  citext: GraphQLCitext,
  timestamp: GraphQLTimestamp,
  time: GraphQLTime,
};

/** The PostgreSQL type a parameter compared with a field of this type is cast to. */
export const PG_TYPE_FOR_TYPE: Readonly<Record<ScalarType, string>> = {
  uuid: 'uuid',
  text: 'text',
  numeric: 'numeric',
  integer: 'bigint',
  boolean: 'boolean',
  date: 'date',
  timestamptz: 'timestamptz',
  jsonb: 'jsonb',
  json: 'json',
  bigint: 'bigint',
  smallint: 'smallint',
  float8: 'float8',
  real: 'real',
  citext: 'citext',
  timestamp: 'timestamp',
  time: 'time',
};

/** The GraphQL type of a field's value: its scalar, or for an array a list of it (`[String!]`, Hasura's since 2.29). */
export function graphqlTypeOf(type: FieldType): GraphQLScalarType | GraphQLList<GraphQLNonNull<GraphQLScalarType>> {
  return isArrayType(type) ? new GraphQLList(new GraphQLNonNull(SCALAR_FOR_TYPE[elementTypeOf(type)])) : SCALAR_FOR_TYPE[type];
}
