import { elementTypeOf, isArrayType, type FieldType, type ScalarType } from '../../metadata/index.js';
import type { ComparisonOperator, JsonbOperator } from '../plan/ir.js';
import type { OrderDirection } from '../schema/buildSchema.js';
import { sql, type Fragment } from './fragment.js';

// The SQL words the compiler writes for a name of the IR: closed tables, never built from input.

/** Casts of bound parameters. */
export const CAST: Readonly<Record<ScalarType, Fragment>> = {
  uuid: sql`uuid`,
  text: sql`text`,
  numeric: sql`numeric`,
  integer: sql`bigint`,
  boolean: sql`boolean`,
  date: sql`date`,
  timestamptz: sql`timestamptz`,
  jsonb: sql`jsonb`,
  json: sql`json`,
  bigint: sql`bigint`,
  smallint: sql`smallint`,
  float8: sql`float8`,
  real: sql`real`,
  citext: sql`citext`,
  timestamp: sql`timestamp`,
  time: sql`time`,
};
export const ARRAY_CAST: Readonly<Record<ScalarType, Fragment>> = {
  uuid: sql`uuid[]`,
  text: sql`text[]`,
  numeric: sql`numeric[]`,
  integer: sql`bigint[]`,
  boolean: sql`boolean[]`,
  date: sql`date[]`,
  timestamptz: sql`timestamptz[]`,
  jsonb: sql`jsonb[]`,
  json: sql`json[]`,
  bigint: sql`bigint[]`,
  smallint: sql`smallint[]`,
  float8: sql`float8[]`,
  real: sql`real[]`,
  // Through text[]: a client library cannot write an array of an extension's type it has no OID for.
  citext: sql`text[]::citext[]`,
  timestamp: sql`timestamp[]`,
  time: sql`time[]`,
};
/** The cast of a value of a field's type: its scalar's, or its array type's (`text[]`). */
export const castOf = (type: FieldType): Fragment => (isArrayType(type) ? (elementTypeOf(type) === 'integer' ? INTEGER_ARRAY : ARRAY_CAST[elementTypeOf(type)]) : CAST[type]);
/**
 * An integer value is bound as bigint (PostgreSQL compares integer with bigint), but an array
 * field's value must be of the column's own array type: `integer[] = bigint[]` does not exist
 * (the catalogue check holds the element type exact, metadata/checkRelations.ts).
 */
const INTEGER_ARRAY = sql`integer[]`;
/** Array operators (Hasura's `_contains`/`_contained_in` on array fields). */
export const ARRAY_OPERATOR = { _contains: sql`@>`, _contained_in: sql`<@` } as const;
/**
 * The cast of a value passed to a SQL function's argument of this type: `integer` is the
 * function's own integer (a bigint value would find no function: PostgreSQL does not narrow
 * bigint to integer when it resolves a call); every other type as a comparison casts it.
 */
export const argumentCast = (type: ScalarType): Fragment => (type === 'integer' ? INTEGER : CAST[type]);
const INTEGER = sql`integer`;
export const OPERATOR: Readonly<Record<ComparisonOperator, Fragment>> = {
  _eq: sql`=`,
  _neq: sql`<>`,
  _gt: sql`>`,
  _gte: sql`>=`,
  _lt: sql`<`,
  _lte: sql`<=`,
  _like: sql`LIKE`,
  _nlike: sql`NOT LIKE`,
  _ilike: sql`ILIKE`,
  _nilike: sql`NOT ILIKE`,
  _regex: sql`~`,
  _iregex: sql`~*`,
  _nregex: sql`!~`,
  _niregex: sql`!~*`,
  _similar: sql`SIMILAR TO`,
  _nsimilar: sql`NOT SIMILAR TO`,
};
/** jsonb operators and the type their operand is bound as (`?`, `?|`, `?&` take keys). */
export const JSONB_OPERATOR: Readonly<Record<JsonbOperator, { readonly operator: Fragment; readonly operand: Fragment }>> = {
  _contains: { operator: sql`@>`, operand: sql`jsonb` },
  _contained_in: { operator: sql`<@`, operand: sql`jsonb` },
  _has_key: { operator: sql`?`, operand: sql`text` },
  _has_keys_any: { operator: sql`?|`, operand: sql`text[]` },
  _has_keys_all: { operator: sql`?&`, operand: sql`text[]` },
};
export const DIRECTION: Readonly<Record<OrderDirection, Fragment>> = {
  asc: sql`ASC NULLS LAST`,
  asc_nulls_first: sql`ASC NULLS FIRST`,
  asc_nulls_last: sql`ASC NULLS LAST`,
  desc: sql`DESC NULLS FIRST`,
  desc_nulls_first: sql`DESC NULLS FIRST`,
  desc_nulls_last: sql`DESC NULLS LAST`,
};
export const AGGREGATE_FUNCTION = {
  sum: sql`sum`,
  avg: sql`avg`,
  min: sql`min`,
  max: sql`max`,
  stddev: sql`stddev`,
  stddev_pop: sql`stddev_pop`,
  stddev_samp: sql`stddev_samp`,
  var_pop: sql`var_pop`,
  var_samp: sql`var_samp`,
  variance: sql`variance`,
} as const;
/** The aggregates of an aggregate predicate besides count. */
export const AGGREGATE_PREDICATE_FUNCTION = { bool_and: sql`bool_and`, bool_or: sql`bool_or` } as const;
