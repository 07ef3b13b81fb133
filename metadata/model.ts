import type { SourceLines } from './sourceLines.js';
/**
 * The metadata model: the pieces every stage shares (fields, relationships, permissions,
 * filters) and the stages' own types (`metadata/README.md`, "Stages"): `ResolvedMetadata`
 * (every name validated, every relationship pointing at a collection that exists, roles
 * resolved) and `Metadata`, the same checked against the database catalogue with the facts the
 * catalogue adds. The engine accepts only `Metadata`, so those facts are never missing.
 */
/**
 * A field's type, named as Hasura names its GraphQL scalar (metadata/README.md, "Types"): the
 * shipped schema's eight, and the types a lender's own tables bring — `bigint` (int8, identity
 * and bigserial keys), `smallint`, `float8` (double precision), `real`, `citext`, `timestamp`
 * (without time zone), `time` (without time zone).
 */
export type ScalarType = 'uuid' | 'text' | 'numeric' | 'integer' | 'boolean' | 'date' | 'timestamptz' | 'jsonb' | 'json' | 'bigint' | 'smallint' | 'float8' | 'real' | 'citext' | 'timestamp' | 'time';

export const SCALAR_TYPES: readonly ScalarType[] = ['uuid', 'text', 'numeric', 'integer', 'boolean', 'date', 'timestamptz', 'jsonb', 'json', 'bigint', 'smallint', 'float8', 'real', 'citext', 'timestamp', 'time'];

/** The element types an array field may have (Hasura's arrays of scalars; not of json/jsonb). */
export type ArrayElementType = Exclude<ScalarType, 'json' | 'jsonb'>;
export const ARRAY_ELEMENT_TYPES: readonly ArrayElementType[] = SCALAR_TYPES.filter((type): type is ArrayElementType => type !== 'json' && type !== 'jsonb');

/**
 * A column field's type: a scalar, or an array of one written `text[]` (PostgreSQL's own
 * spelling; metadata/README.md "Types"). Computed fields and arguments are scalars.
 */
export type FieldType = ScalarType | `${ArrayElementType}[]`;
export type ArrayFieldType = `${ArrayElementType}[]`;

export const isArrayType = (type: FieldType): type is ArrayFieldType => type.endsWith('[]');
/** The element type of an array type. */
export const elementTypeOf = (type: ArrayFieldType): ArrayElementType => type.slice(0, -2) as ArrayElementType;
export const FIELD_TYPES: readonly FieldType[] = [...SCALAR_TYPES, ...ARRAY_ELEMENT_TYPES.map((type): FieldType => `${type}[]`)];

/** Where a field's value comes from: a column, or a key of the record's custom-fields JSON. */
export type FieldSource =
  | { readonly kind: 'column'; readonly column: string }
  | { readonly kind: 'customField'; readonly column: string; readonly key: string };

export interface Field {
  readonly name: string;
  readonly type: FieldType;
  readonly source: FieldSource;
}

/**
 * A computed field (Hasura's): a SQL function of the row — called with the row's tenant value and
 * primary key, then its arguments by name (omitted ones take the function's defaults) — that
 * returns one value of `type`. Selected like a field with `args: {…}`; never written. Filtered
 * and ordered by only when it has a `storedForm`.
 */
export interface ComputedField {
  readonly name: string;
  readonly type: ScalarType;
  /** The SQL function, by name (checked against the catalogue). */
  readonly function: string;
  /** Argument name → type, in the order the metadata gives them. */
  readonly args: ReadonlyMap<string, ScalarType>;
  /** The arguments whose values the metadata bounds (`range:`), by name. */
  readonly argumentRanges: ReadonlyMap<string, ArgumentRange>;
  readonly description: string | null;
  /**
   * What the value is, called without arguments, in terms of the row's stored columns — and so
   * how a filter or an order on it reaches an index. `daysSince`: the whole days from the date
   * column `column` to `today(tenant)` when the date is before it, else 0 (a null date: 0); the
   * catalogue check requires an index on (tenant column, column). The database keeps the column
   * such that this equals the function (for loans: migration 0019, docs/ledger.md).
   */
  readonly storedForm: StoredForm | null;
}

/**
 * A computed field whose function returns `SETOF` a tracked table (Hasura's table computed
 * fields): called as a scalar one is — the row's tenant value and key, then `args` by name — its
 * rows are those of the collection `returns`, listed with `where`, `order_by`, paging and
 * `distinct_on`, the tenant predicate and the role's filter of that collection on each.
 */
export interface TableComputedField {
  readonly name: string;
  readonly function: string;
  readonly args: ReadonlyMap<string, ScalarType>;
  /** The arguments whose values the metadata bounds (`range:`), by name. */
  readonly argumentRanges: ReadonlyMap<string, ArgumentRange>;
  /** The collection whose table (or view) the function returns SETOF. */
  readonly returns: string;
  readonly description: string | null;
}

/**
 * The days a computed field's date argument takes (`args: {as_of: {type: date, range: {from, to,
 * meaning}}}`), both included, as `YYYY-MM-DD`; another day in a request is refused before the
 * database, in words naming the argument and, when given, what the days are (`meaning`).
 */
export interface ArgumentRange {
  readonly from: string;
  readonly to: string;
  readonly meaning: string | null;
}

export type StoredForm = { readonly kind: 'daysSince'; readonly column: string; readonly today: string };

export interface Relationship {
  readonly name: string;
  readonly kind: 'object' | 'array';
  readonly target: string;
  /** Pairs of (column of this collection, column of the target). */
  readonly mapping: readonly (readonly [string, string])[];
}

export type RootFieldKind = 'select' | 'select_by_pk' | 'select_aggregate';

/** A value the server sets on every written row (`set:`), whatever the request says. */
export interface PresetValue {
  readonly field: Field;
  readonly value: string | number | boolean | null;
  /** A role's preset may be a key variable (`key.person_id`): bound per request, never per plan. */
  readonly variable?: string;
}

/**
 * A value in a role's filter: a literal, a key variable (`key.person_id`, bound from the API key
 * when a request runs), or a list of those. Shaped like the engine's parameters so a filter is a
 * boolean expression the compiler already knows how to place.
 */
export type FilterValue =
  | { readonly kind: 'const'; readonly value: unknown }
  | { readonly kind: 'keyVariable'; readonly name: string }
  | { readonly kind: 'list'; readonly items: readonly FilterValue[] };

export type FilterOperator =
  | '_eq'
  | '_neq'
  | '_gt'
  | '_gte'
  | '_lt'
  | '_lte'
  | '_like'
  | '_nlike'
  | '_ilike'
  | '_nilike'
  | '_regex'
  | '_iregex'
  | '_nregex'
  | '_niregex'
  | '_similar'
  | '_nsimilar';

/** Operators on jsonb fields, as in the query language. */
export type FilterJsonbOperator = '_contains' | '_contained_in' | '_has_key' | '_has_keys_any' | '_has_keys_all';

/**
 * A boolean expression over a collection's rows, with values of type `V`: the one shape of the
 * query language's `where` (the engine's `BoolExp`, values are request parameters) and of a
 * role's row filter (`RowFilter`, values are literals and key variables).
 */
export type BoolExpOf<V> =
  | { readonly kind: 'and'; readonly items: readonly BoolExpOf<V>[] }
  | { readonly kind: 'or'; readonly items: readonly BoolExpOf<V>[] }
  | { readonly kind: 'not'; readonly item: BoolExpOf<V> }
  | { readonly kind: 'compare'; readonly field: Field; readonly operator: FilterOperator; readonly value: V }
  | { readonly kind: 'in'; readonly field: Field; readonly negated: boolean; readonly values: V }
  | { readonly kind: 'isNull'; readonly field: Field; readonly value: V }
  /** A jsonb operator; `_contains`/`_contained_in` take the JSON text of their value. */
  | { readonly kind: 'jsonb'; readonly field: Field; readonly operator: FilterJsonbOperator; readonly value: V }
  /** An array field's `_contains` (`@>`: every element of the value is in the field) or `_contained_in` (`<@`); the value is an array of the field's type. */
  | { readonly kind: 'arrayContainment'; readonly field: Field; readonly operator: '_contains' | '_contained_in'; readonly value: V }
  /** `_cast: {String: {…}}`: `where` compares `as`, the jsonb field seen as text (a field of type text, same name and source). */
  | { readonly kind: 'cast'; readonly field: Field; readonly as: Field; readonly where: BoolExpOf<V> }
  | { readonly kind: 'relationship'; readonly relationship: Relationship; readonly target: Collection; readonly where: BoolExpOf<V> }
  /**
   * A computed field of the row alone (no arguments, no stored form) compared as a field is:
   * `where` compares `as` (a field of the computed field's type standing for its value), read as
   * `function(tenant, key…)` of the row of `collection` (Hasura's computed fields in filters).
   */
  | { readonly kind: 'computedValue'; readonly collection: Collection; readonly field: ComputedField; readonly as: Field; readonly where: BoolExpOf<V> }
  /** A comparison of a computed field that has a stored form, called without arguments (`ComputedField.storedForm`). */
  | { readonly kind: 'computed'; readonly field: ComputedField; readonly operator: StoredFormOperator; readonly value: V }
  /**
   * An aggregate predicate over an array relationship's rows (Hasura's
   * `payments_aggregate: {count: {predicate: {_gt: 3}, filter: {…}, distinct: false, arguments: [...]}}`,
   * `bool_and` / `bool_or`): `predicate` compares `as`, a field standing for the aggregate's value
   * (type integer for count, boolean otherwise), computed over the related rows where `filter` holds.
   */
  | AggregatePredicateOf<V>
  /** `_exists: {_table: {name, schema}, _where: {…}}` (role filters): some row of `target` (this account's) makes `where` true. */
  | { readonly kind: 'exists'; readonly target: Collection; readonly where: BoolExpOf<V> }
  /** A column comparison (role filters: `_ceq _cne _cgt _clt _cgte _clte`): `field` against `other`, a field of the same row. */
  | { readonly kind: 'columns'; readonly field: Field; readonly operator: ColumnOperator; readonly other: Field };

/** The column comparisons of a role filter, by the comparison they make. */
export type ColumnOperator = '_eq' | '_neq' | '_gt' | '_lt' | '_gte' | '_lte';

/** The aggregates a predicate may be written over. */
export type PredicateAggregate = 'count' | 'bool_and' | 'bool_or';

export interface AggregatePredicateOf<V> {
  readonly kind: 'aggregate';
  readonly relationship: Relationship;
  readonly target: Collection;
  readonly fn: PredicateAggregate;
  /** The aggregated columns: count's (none: `count(*)`), or bool_and's / bool_or's one. */
  readonly arguments: readonly Field[];
  readonly distinct: boolean;
  readonly filter: BoolExpOf<V> | null;
  readonly as: Field;
  readonly predicate: BoolExpOf<V>;
}

/** The operators on a computed field's stored form. */
export type StoredFormOperator = '_eq' | '_neq' | '_gt' | '_gte' | '_lt' | '_lte' | '_is_null';

/**
 * A role's row filter (`filter`, `check`), resolved against the whole metadata: a relationship
 * inside it walks to the unrestricted collection (permissions are not applied to the filter's
 * own lookups, as in Hasura), so filters never recurse into each other.
 */
export type RowFilter = BoolExpOf<FilterValue>;

/**
 * What a collection's inserts may write. The collection-level declaration is what the admin
 * role (an API key) gets; a later per-role section narrows it with the same shape plus a
 * `check` filter, so the planner keeps receiving "the permission as this caller sees it".
 */
export interface InsertPermission {
  /** The fields a request may give, by name. */
  readonly columns: ReadonlyMap<string, Field>;
  /** Fixed values, by field name; a preset field is not an input. */
  readonly set: ReadonlyMap<string, PresetValue>;
  /** Unique constraints (by name) an `on_conflict` may name. */
  readonly conflictConstraints: readonly string[];
  /** A role's `check`: every written row must satisfy it, or nothing is written. */
  readonly check: RowFilter | null;
}

export interface UpdatePermission {
  readonly columns: ReadonlyMap<string, Field>;
  readonly set: ReadonlyMap<string, PresetValue>;
  /** A role's `filter`: the rows it may update. */
  readonly filter: RowFilter | null;
  /** A role's `check`: every updated row must satisfy it afterwards, or nothing is written. */
  readonly check: RowFilter | null;
}

export interface DeletePermission {
  readonly allowed: true;
  /** A role's `filter`: the rows it may delete. */
  readonly filter: RowFilter | null;
}

export interface Collection {
  readonly name: string;
  /** A table or a view (metadata/README.md, "Views, functions and schemas"). */
  readonly table: string;
  /** The table's PostgreSQL schema; null: the current schema (`public`), as the table's name is written unqualified. */
  readonly schema: string | null;
  /**
   * The primary key's fields, in key order (one, or several for a composite key); columns of any
   * type (uuid, integer/bigint identity or serial, text, …). `_by_pk` and `pk_columns` take one
   * argument per field; ties in every ordering are broken by them. Empty when the metadata
   * declares none (a view, say): no `_by_pk`, no writes, no computed fields, no tie-break.
   */
  readonly primaryKey: readonly Field[];
  /**
   * Whether the key is a single uuid, which the server makes for a new row the request gives no
   * key for: what lets a nested insert refer to its parent before either is written. Any other
   * key is the request's (when `insert.columns` allows it) or the column's default (identity,
   * serial), and its rows have no nested inserts.
   */
  readonly serverMadeKey: boolean;
  readonly fields: ReadonlyMap<string, Field>;
  /** Computed fields, by name (a role sees those its select columns name, or all with '*'). */
  readonly computedFields: ReadonlyMap<string, ComputedField>;
  /**
   * Table-returning computed fields, by name: a role sees those its select columns name (or all
   * with '*') and whose returned collection it may select.
   */
  readonly tableComputedFields: ReadonlyMap<string, TableComputedField>;
  readonly relationships: ReadonlyMap<string, Relationship>;
  /**
   * What a value too large to store (SQLSTATE 22003) that a write of this collection makes in the
   * database means — a figure a trigger computes from the written row (loanql's ledger replay):
   * the fields it is about and its sentence, said instead of PostgreSQL's words
   * (`engine/execute/writeErrors.ts`). Null: PostgreSQL's words, which give the column's range.
   */
  readonly overflow: { readonly fields: readonly string[]; readonly sentence: string } | null;
  readonly rootFields: ReadonlySet<RootFieldKind>;
  readonly insert: InsertPermission | null;
  readonly update: UpdatePermission | null;
  readonly delete: DeletePermission | null;
  /** The rows a role may read (null: every row of the account). Placed with the tenant predicate. */
  readonly selectFilter: RowFilter | null;
  /** A role's cap on the rows of one list of this collection (null: only MAX_ROWS). */
  readonly selectLimit: number | null;
  /** Whether `<collection>_aggregate` and `<relationship>_aggregate` are offered. */
  readonly allowAggregations: boolean;
  /**
   * The relationships (by name) through which every row reached from a row of this collection
   * the view lets through is one the view lets through too: the target's select filter needs no
   * check there (`visibleRows.ts`). Worked out by the permissions stage, once per metadata
   * version and view; every relationship of a view without filters.
   */
  readonly relationshipsOnlyToVisibleRows: ReadonlySet<string>;
}

/**
 * How the catalogue facts name a collection's table: `schema.table` when the metadata names a
 * schema, else the bare name (the current schema's).
 */
export function tableKey(collection: Pick<Collection, 'schema' | 'table'>): string {
  return collection.schema === null ? collection.table : `${collection.schema}.${collection.table}`;
}

/**
 * A SQL function tracked as root fields (`functions:`, Hasura's custom functions): it returns
 * SETOF the table (or view) of the collection `returns`, and is answered as that collection's
 * rows — `<name>(args: {…}, where, order_by, …)` and `<name>_aggregate` — with the tenant
 * predicate and the role's select filter on every row, like the collection's own rows.
 */
export interface TrackedFunction {
  /** The root field's name. */
  readonly name: string;
  readonly function: string;
  /** The function's schema; null: the current schema. */
  readonly schema: string | null;
  /** The collection whose rows it returns (a role has the function only when it may select that collection). */
  readonly returns: string;
  /** Arguments by name, in the metadata's order, each with whether the function has no default for it (the catalogue's). */
  readonly args: ReadonlyMap<string, { readonly type: ScalarType; readonly required: boolean }>;
  /**
   * The function's argument (a uuid) that receives the caller's account, so the function can read
   * only that account's rows (Hasura's `session_argument`); null: none. The tenant predicate is
   * applied to the rows it returns either way.
   */
  readonly tenantArgument: string | null;
  readonly description: string | null;
}

export type EventOperation = 'INSERT' | 'UPDATE' | 'DELETE';

/**
 * A named event type (`event_types:`): which writes of a collection emit it and what its payload
 * holds. Resolved to columns, so the trigger apply step needs nothing else.
 */
export interface EventType {
  readonly name: string;
  readonly collection: string;
  readonly table: string;
  readonly operation: EventOperation;
  /**
   * For updates: `changed` — one of these columns changes; `set` — each goes from null to a value;
   * `becomes` — each column takes this value (and did not have it). `null`: no such condition.
   */
  readonly condition: {
    readonly changed: readonly string[] | null;
    readonly set: readonly string[] | null;
    readonly becomes: ReadonlyMap<string, string | number | boolean> | null;
  };
  /** Payload key (field name) → column. */
  readonly payload: ReadonlyMap<string, string>;
  /**
   * Relationships the payload names (`payload: [id, amount, allocations, loan]`): their rows as
   * the write's transaction leaves them, read when it commits (after the ledger's replay has
   * written), so `payment.posted` carries the allocation. Empty: the payload is the row alone.
   */
  readonly related: readonly EventPayloadRelationship[];
  /**
   * The payload holds an amount — a `numeric` field of the row or of a related row at any depth
   * (`amount`, `principal_outstanding`, …): the event's `data` then carries the account's
   * `currency` beside `old` and `new`, so a receiver can tell 100.00 USD from 100.00 EUR.
   */
  readonly withCurrency: boolean;
  /**
   * The columns of the table's primary key: a delete event is captured when the transaction
   * commits, and only if no row with the deleted row's key exists then — a row deleted and
   * written again under its key in one transaction (a late fee the replay derives again) was
   * not removed.
   */
  readonly primaryKey: readonly string[];
}

/** A relationship in an event's payload, resolved to tables and columns (`EventType.related`). */
export interface EventPayloadRelationship {
  /** Payload key (the relationship's name). */
  readonly key: string;
  /** Object: one JSON object or null; array: a JSON array, possibly empty. */
  readonly kind: 'object' | 'array';
  readonly table: string;
  /** Pairs of (column of the parent's table, column of `table`); the tenant column is joined too. */
  readonly mapping: readonly (readonly [string, string])[];
  /** Payload key (field name) → column of `table`. */
  readonly payload: ReadonlyMap<string, string>;
  /** Relationships of the related rows, nested. */
  readonly related: readonly EventPayloadRelationship[];
  /** An array's order: these columns ascending, then the primary key. */
  readonly orderBy: readonly string[];
  /** The target's key columns (the order's tie-break). */
  readonly primaryKey: readonly string[];
}

/**
 * A role: the metadata as its keys see it (`metadata`, only its collections, fields,
 * relationships and writes) and the variables a key of the role must carry. `View` is the
 * stage of that view: `ResolvedMetadata`, then `Metadata` once checked.
 */
export interface RoleOf<View> {
  readonly name: string;
  readonly variables: ReadonlyMap<string, ScalarType>;
  /** The role's `rate_limit`, when it has one (else the environment's default applies to its keys). */
  readonly rateLimit: RateLimit | null;
  readonly metadata: View;
}

/** A token bucket: `perSecond` tokens a second on average, at most `burst` at once. */
export interface RateLimit {
  readonly perSecond: number;
  readonly burst: number;
}

export const ADMIN_ROLE = 'admin';

/** What a view holds at every stage after resolving. */
interface MetadataView {
  readonly tenantColumn: string;
  readonly collections: ReadonlyMap<string, Collection>;
  /** Event types by name (`loan.created`, …), for webhooks. */
  readonly eventTypes: ReadonlyMap<string, EventType>;
  /** Tracked SQL functions by root-field name (the same in every view: a role has those whose collection it has). */
  readonly functions: ReadonlyMap<string, TrackedFunction>;
}

/**
 * Stage 2, resolved (`resolveMetadata.ts`): collections, fields, relationships, generated names,
 * event types and roles, every name checked against the document itself; nothing yet read from
 * the database.
 */
export interface ResolvedMetadata extends MetadataView {
  /** Every role by name, `admin` (this metadata itself) included. Empty in a role's own view. */
  readonly roles: ReadonlyMap<string, ResolvedRole>;
  /** Read from a file: where each place of it is, for the problems found against the database to say their line (`sourceLines.ts`). */
  readonly sourceLines?: SourceLines;
}

export type ResolvedRole = RoleOf<ResolvedMetadata>;

/**
 * What the live catalogue adds to a view (`checkAgainstDatabase.ts`): facts the compiler writes
 * plainer or faster SQL from. A view built without a database states that it assumes none
 * (`assumeEmptyCatalogue`), never leaves them out.
 */
export interface CatalogueFacts {
  /**
   * Columns the catalogue declares NOT NULL, as `table.column`. The compiler writes such a
   * column's JSON without a null fallback.
   */
  readonly notNullColumns: ReadonlySet<string>;
  /**
   * Text constants of the catalogue's partial-index predicates (`WHERE status <> 'completed'`),
   * by column name. A document that compares a text column with one of these very strings gets
   * it as SQL text, so a prepared statement's generic plan can use the partial index
   * (engine/README.md, "Constants in the text").
   */
  readonly indexConstants: ReadonlyMap<string, ReadonlySet<string>>;
  /**
   * The values a CHECK constraint of the catalogue allows a text field's column
   * (`CHECK (status IN ('lead', 'servicing', 'closed'))`), by field of this view. A variable
   * compared with such a field can take only these values, so the plans of its statement can be
   * checked for each (db/planChoice.ts).
   */
  readonly fieldValues: ReadonlyMap<Field, readonly string[]>;
  /**
   * The object relationships backed by a validated, immediate foreign key from the collection's
   * table to the target's (its columns and the tenant column's, pair for pair): the target row
   * exists whenever the relationship's columns are not null. The compiler then skips the
   * target's table in a filter that only goes through it (`{loan: {funding_sources: …}}` on
   * schedules: engine/README.md, "Filters through a foreign key").
   */
  readonly foreignKeyRelationships: ReadonlySet<Relationship>;
  /**
   * The primary key and unique constraints of each table, by table, that include the tenant
   * column (not a unique index that backs no constraint, such as one on `lower(name)`: `ON
   * CONFLICT ON CONSTRAINT` cannot name it, and naming it failed every upsert) — an upsert on one of them can only ever meet the caller's own
   * row. `on_conflict` offers them wherever the role may update the collection (Hasura's rule),
   * besides the collection's declared `on_conflict_constraints`.
   */
  readonly uniqueConstraints: ReadonlyMap<string, readonly string[]>;
  /**
   * The tables (`tableKey`) whose written rows are final as a write's RETURNING gives them: no
   * trigger of the table runs after RETURNING and could change what a response reads (only BEFORE
   * triggers, loanql's own capture and change-notice triggers, which write other tables, and the
   * foreign-key checks of non-self-referencing keys), no rule, and the database has `loanql_assert`
   * (migration 0041). A mutation that writes one such table and reads back only the written rows'
   * own columns runs as one statement in autocommit (engine/README.md, "Writes in one statement").
   */
  readonly tablesFinalAtReturning: ReadonlySet<string>;
  /**
   * The database has `loanql_several_writes(account, tables)` (migration 0071): a mutation of
   * several write statements calls it with the tables they write before its first write, and the
   * database takes whatever locks keep such a transaction from crossing others (engine/README.md,
   * "Writing data").
   */
  readonly announcesSeveralWrites: boolean;
  /**
   * The tables (`tableKey`) whose change notices name the rows written by a key column, and that
   * column: the argument of the table's three change-notice triggers (`loanql_notice_insert`,
   * `_update`, `_delete`; migration 0031: `id` on `loans`, `loan_id` on the tables that have it, or
   * whatever a lender's own triggers name). A live query reading such a table through one value of
   * that column is refreshed only by notices naming that value (engine/README.md, "Subscriptions").
   * A table whose notices name no key, or that sends none, is absent.
   */
  readonly changeNoticeKeys: ReadonlyMap<string, string>;
  /**
   * The views of the collections (`tableKey`) and the plain tables each reads, at any depth (a
   * view over a view: the tables under it), by the name their change notices give them (the
   * table's own name, as a trigger's `TG_TABLE_NAME` has it), from the view rules' dependencies
   * (pg_rewrite, pg_depend). No trigger sends a notice naming a view: a live query reading one is
   * refreshed by the notices of these tables, in the subscriber's account, never narrowed to a
   * loan (engine/README.md, "Subscriptions"). A table a view reads only through a function it
   * calls is not here (the fallback refreshes it).
   */
  readonly tablesUnderViews: ReadonlyMap<string, readonly string[]>;
}

/**
 * Stage 3, checked (`checkAgainstDatabase.ts`): the resolved metadata whose every table, column
 * and function the catalogue has, with the catalogue's facts. The only stage the engine accepts.
 */
export interface Metadata extends MetadataView, CatalogueFacts {
  /** Every role by name, `admin` (this metadata itself) included. Empty in a role's own view. */
  readonly roles: ReadonlyMap<string, Role>;
}

export type Role = RoleOf<Metadata>;

/** A metadata problem, naming where it is: fatal at start-up, refused on reload. */
export class MetadataError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid metadata:\n  - ${problems.join('\n  - ')}`);
    this.name = 'MetadataError';
  }
}
