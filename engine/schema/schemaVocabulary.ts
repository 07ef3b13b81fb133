import type { Collection, ComputedField, Field, Relationship, TableComputedField, TrackedFunction } from '../../metadata/index.js';
import type { MutationKind } from './buildMutationFields.js';

// The schema's vocabulary shared with the planner and the SQL: field roles, aggregate functions,
// order directions (re-exported by buildSchema.ts).

/**
 * What a schema field stands for, attached as `extensions.loanql` so the planner never
 * guesses from names. Aggregate helper types carry `aggregate*` kinds.
 */
export type FieldRole =
  | { readonly kind: 'root'; readonly root: 'select' | 'select_by_pk' | 'select_aggregate' | 'select_stream'; readonly collection: Collection }
  /** A tracked function's root field (`<fn>` or `<fn>_aggregate`): the collection's rows from the function's call. */
  | { readonly kind: 'functionRoot'; readonly root: 'select' | 'select_aggregate'; readonly fn: TrackedFunction; readonly collection: Collection }
  | { readonly kind: 'column'; readonly field: Field }
  | { readonly kind: 'computed'; readonly field: ComputedField }
  /** A table computed field: the rows of `target` its function returns for the row. */
  | { readonly kind: 'tableComputed'; readonly field: TableComputedField; readonly target: Collection }
  | { readonly kind: 'objectRelationship'; readonly relationship: Relationship; readonly target: Collection }
  | { readonly kind: 'arrayRelationship'; readonly relationship: Relationship; readonly target: Collection }
  | { readonly kind: 'arrayAggregate'; readonly relationship: Relationship; readonly target: Collection }
  | { readonly kind: 'aggregate' }
  | { readonly kind: 'nodes' }
  | { readonly kind: 'count' }
  | { readonly kind: 'aggregateFunction'; readonly fn: AggregateFunction }
  | { readonly kind: 'mutationRoot'; readonly mutation: MutationKind; readonly collection: Collection }
  | { readonly kind: 'affectedRows' }
  | { readonly kind: 'returning' };

/** Hasura's statistical aggregates (PostgreSQL's functions of the same names). */
export const STATISTICAL_FUNCTIONS = ['stddev', 'stddev_pop', 'stddev_samp', 'var_pop', 'var_samp', 'variance'] as const;
export type StatisticalFunction = (typeof STATISTICAL_FUNCTIONS)[number];
export type AggregateFunction = 'sum' | 'avg' | 'min' | 'max' | StatisticalFunction;

export const ORDER_BY_DIRECTIONS = ['asc', 'asc_nulls_first', 'asc_nulls_last', 'desc', 'desc_nulls_first', 'desc_nulls_last'] as const;
export type OrderDirection = (typeof ORDER_BY_DIRECTIONS)[number];

export const TEXT_OPERATORS = ['_like', '_nlike', '_ilike', '_nilike', '_regex', '_iregex', '_nregex', '_niregex', '_similar', '_nsimilar'] as const;
/** What each text operator does, for introspection (Hasura's descriptions, PostgreSQL's operators). */
export const TEXT_OPERATOR_DESCRIPTIONS: Readonly<Record<(typeof TEXT_OPERATORS)[number], string>> = {
  _like: 'does the column match the given pattern (LIKE)',
  _nlike: 'does the column NOT match the given pattern (NOT LIKE)',
  _ilike: 'does the column match the given case-insensitive pattern (ILIKE)',
  _nilike: 'does the column NOT match the given case-insensitive pattern (NOT ILIKE)',
  _regex: 'does the column match the given POSIX regular expression, case sensitive (~)',
  _iregex: 'does the column match the given POSIX regular expression, case insensitive (~*)',
  _nregex: 'does the column NOT match the given POSIX regular expression, case sensitive (!~)',
  _niregex: 'does the column NOT match the given POSIX regular expression, case insensitive (!~*)',
  _similar: 'does the column match the given SQL regular expression (SIMILAR TO)',
  _nsimilar: 'does the column NOT match the given SQL regular expression (NOT SIMILAR TO)',
};

/** The role of a schema field (every field the schema generates has one). */
export function fieldRole(extensions: Readonly<Record<string, unknown>> | null | undefined): FieldRole | undefined {
  return extensions?.loanql as FieldRole | undefined;
}

