import type { BoolExpOf, Collection, ComputedField, Field, FilterJsonbOperator, FilterOperator, Relationship, TableComputedField, TrackedFunction } from '../../metadata/index.js';
import type { AggregateFunction, OrderDirection } from '../schema/buildSchema.js';
import type { Param } from './params.js';

/**
 * The query IR: what a GraphQL operation asks for, in terms of resolved metadata, with every
 * value as a `Param`. Readonly; made by `planOperation`, consumed by `compileOperation`.
 */
export interface OperationPlan {
  readonly rootFields: readonly RootField[];
  /**
   * Root aggregates read together in one scan of their collection (`passes/sharedScans.ts`);
   * their root fields are `sharedAggregate`s pointing here. Empty as `planOperation` makes it.
   */
  readonly sharedScans: readonly SharedScan[];
}

/**
 * A streaming subscription's cursor: the root field `alias` lists the rows after the cursor's
 * value of `field`, in `ordering`; `initialValue` is where the subscriber starts.
 */
export interface StreamCursor {
  readonly alias: string;
  readonly field: Field;
  /** The alias of `field` in the rows' selection (a stream must select its cursor field). */
  readonly cursorAlias: string;
  readonly ordering: 'ASC' | 'DESC';
  readonly initialValue: Param;
}

/** A root aggregate of a collection, as `planOperation` makes it. */
export type SelectAggregateField = Extract<RootField, { kind: 'selectAggregate' }>;

/**
 * Several root aggregates of one collection computed by ONE scan of it: the scan reads the rows
 * any member needs (the collection's row predicate once, then the OR of the members' `where`s
 * unless one reads every row), each member keeps its own `where` as a FILTER of its calls.
 * `direct`: the aggregates read the table itself (`count(*) FILTER (WHERE status = $1)`);
 * `flags`: an inner query computes each `where` and each computed value once per row, because
 * something would otherwise be computed twice (PostgreSQL does not share a repeated expression).
 */
export type SharedScan = {
  readonly collection: Collection;
  readonly members: readonly SelectAggregateField[];
} & (
  | { readonly shape: 'direct' | 'flags' }
  /**
   * Every member's `where` is none or `groupBy: {_eq: …}` and every call combines across groups
   * (`count`, `sum` of an exact type, `min`, `max`): an inner query groups the rows by `groupBy`
   * (one equality a row where FILTERs made one a member), and each member aggregates the groups
   * its `_eq` keeps (`plan/passes/sharedScans.ts`, `groupedBy`).
   */
  | { readonly shape: 'grouped'; readonly groupBy: Field }
);

/** One primary-key field of a `_by_pk` (or `pk_columns`) and its value. */
export interface KeyValue {
  readonly field: Field;
  readonly value: Param;
}

export type RootField =
  | { readonly kind: 'select'; readonly alias: string; readonly collection: Collection; readonly query: ListQuery; readonly selection: Selection }
  | { readonly kind: 'selectByPk'; readonly alias: string; readonly collection: Collection; readonly key: readonly KeyValue[]; readonly selection: Selection }
  | { readonly kind: 'selectAggregate'; readonly alias: string; readonly collection: Collection; readonly query: ListQuery; readonly aggregate: AggregateSelection }
  | { readonly kind: 'typename'; readonly alias: string; readonly value: string }
  /** The `member`-th aggregate of `OperationPlan.sharedScans[scan]`, answered under `alias`. */
  | { readonly kind: 'sharedAggregate'; readonly alias: string; readonly scan: number; readonly member: number };

export interface ListQuery {
  readonly where: BoolExp | null;
  /** `distinct_on`: one row per distinct value of these fields (the first in `orderBy`); empty for none. */
  readonly distinctOn: readonly Field[];
  readonly orderBy: readonly OrderItem[];
  readonly limit: Param | null;
  readonly offset: Param | null;
  /**
   * A stream's batch (`<c>_stream`): the rows that tie with the last one of `limit` on the
   * `orderBy` keys come too (`FETCH FIRST n ROWS WITH TIES`), so that a cursor moved to the last
   * value sent skips none of the rows that share it.
   */
  readonly withTies?: true;
  /** A tracked function's root field: the rows are its call's (`fn(arg => $n, …)`), not the collection's table. */
  readonly rowsFrom?: FunctionRows;
}

/** A call of a tracked function (`TrackedFunction`): its arguments by name (omitted ones take the function's defaults). */
export interface FunctionRows {
  readonly fn: TrackedFunction;
  readonly args: ReadonlyMap<string, Param>;
}

/** Object relationships walked from a collection to another. */
export type RelationshipPath = readonly { readonly relationship: Relationship; readonly target: Collection }[];

/**
 * One `order_by` key: a field (`kind: 'column'`), or an aggregate of an array relationship
 * (`{payments_aggregate: {count: desc}}`, `{payments_aggregate: {sum: {amount: asc}}}`, a computed
 * field's `{loans_aggregate: {sum: {payoff: desc}}}`: `kind: 'aggregate'`, `field` null for
 * `count`), reached through object relationships (`path`).
 */
export type OrderItem =
  | { readonly kind: 'column'; readonly path: RelationshipPath; readonly field: Field; readonly direction: OrderDirection }
  /**
   * A computed field without arguments: through its stored form (`ComputedField.storedForm`), or
   * else the function called on the row of `collection` (a function of the row alone).
   */
  | { readonly kind: 'computed'; readonly path: RelationshipPath; readonly collection: Collection; readonly field: ComputedField; readonly direction: OrderDirection }
  | {
      readonly kind: 'aggregate';
      readonly path: RelationshipPath;
      readonly relationship: Relationship;
      readonly target: Collection;
      readonly fn: 'count' | AggregateFunction;
      /** The value aggregated: a field, or a scalar computed field called with its arguments' defaults (as the aggregate field offers it); null for `count`. */
      readonly field: Field | ComputedField | null;
      readonly direction: OrderDirection;
    };

/** The query language's comparison operators: the same set as a role filter's. */
export type ComparisonOperator = FilterOperator;

/** Operators on jsonb fields (PostgreSQL `@>`, `<@`, `?`, `?|`, `?&`). */
export type JsonbOperator = FilterJsonbOperator;

/** A `where` of a request: the metadata's boolean expression with request parameters as values. */
export type BoolExp = BoolExpOf<Param>;

export type Selection = readonly SelectionItem[];

export type SelectionItem =
  /** A field; a jsonb one with `path` (a text[] parameter) answers the value at that path (`#>`). */
  | { readonly kind: 'column'; readonly alias: string; readonly field: Field; readonly path?: Param }
  /** A computed field: its SQL function called with the row's tenant value and key, and these arguments by name. */
  | { readonly kind: 'computed'; readonly alias: string; readonly field: ComputedField; readonly args: ReadonlyMap<string, Param> }
  | { readonly kind: 'typename'; readonly alias: string; readonly value: string }
  /** A table computed field: the rows of `target` from `function(tenant, key…, args by name)` of the row, listed as `query` says. */
  | { readonly kind: 'computedRows'; readonly alias: string; readonly field: TableComputedField; readonly target: Collection; readonly args: ReadonlyMap<string, Param>; readonly query: ListQuery; readonly selection: Selection }
  | { readonly kind: 'object'; readonly alias: string; readonly relationship: Relationship; readonly target: Collection; readonly selection: Selection }
  | { readonly kind: 'array'; readonly alias: string; readonly relationship: Relationship; readonly target: Collection; readonly query: ListQuery; readonly selection: Selection }
  | { readonly kind: 'arrayAggregate'; readonly alias: string; readonly relationship: Relationship; readonly target: Collection; readonly query: ListQuery; readonly aggregate: AggregateSelection };

export type AggregateSelection = readonly AggregateSelectionItem[];

export type AggregateSelectionItem =
  | { readonly kind: 'aggregate'; readonly alias: string; readonly fields: readonly AggregateField[] }
  /** `limit`: the most rows listed (MAX_ROWS; null: every row aggregated), the aggregate itself still over every row. */
  | { readonly kind: 'nodes'; readonly alias: string; readonly selection: Selection; readonly limit: Param | null }
  | { readonly kind: 'typename'; readonly alias: string; readonly value: string };

export type AggregateField =
  | { readonly kind: 'count'; readonly alias: string; readonly columns: readonly Field[]; readonly distinct: boolean }
  | { readonly kind: 'function'; readonly alias: string; readonly fn: AggregateFunction; readonly items: readonly AggregateFunctionItem[] }
  | { readonly kind: 'typename'; readonly alias: string; readonly value: string };

export type AggregateFunctionItem =
  | { readonly kind: 'column'; readonly alias: string; readonly field: Field }
  /** A scalar computed field, called with its arguments' defaults (Hasura's aggregates of computed fields). */
  | { readonly kind: 'computed'; readonly alias: string; readonly field: ComputedField }
  | { readonly kind: 'typename'; readonly alias: string; readonly value: string };

export function assertNever(value: never): never {
  throw new Error(`unexpected ${JSON.stringify(value)}`);
}
