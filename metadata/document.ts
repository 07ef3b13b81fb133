import type { FieldType, PresetValue, RootFieldKind, ScalarType } from './model.js';

/**
 * Stage 1, parsed: the metadata as written — the YAML file after JSON Schema validation
 * (`parseMetadataDocument.ts`), or a fixed view the server declares as data (`app/fixedView.ts`).
 * Names are not yet checked against each other; `resolveMetadata` does that.
 */
export interface MetadataDocument {
  readonly version: 1;
  readonly tenant_column: string;
  readonly collections: Readonly<Record<string, CollectionDocument>>;
  readonly event_types?: Readonly<Record<string, EventTypeDocument>>;
  /** SQL functions returning SETOF a collection's table or view, as root fields (Hasura's custom functions). */
  readonly functions?: Readonly<Record<string, FunctionDocument>>;
  readonly roles?: Readonly<Record<string, RoleDocument>>;
}

/** A field as written: a type (the column of the same name), or a type with its column or custom-field key. */
export type FieldDocument = FieldType | { readonly type: FieldType; readonly column?: string; readonly custom_field?: string };

/** A relationship as written: `object` or `array` names the target collection, `on` pairs this collection's columns with the target's. */
export type RelationshipDocument =
  | { readonly object: string; readonly array?: undefined; readonly on: Readonly<Record<string, string>> }
  | { readonly array: string; readonly object?: undefined; readonly on: Readonly<Record<string, string>> };

export interface CollectionDocument {
  /** A table or a view. */
  readonly table: string;
  /** Its PostgreSQL schema (default: the current schema). */
  readonly schema?: string;
  /** One column, or the columns of a composite key; none (a view, say): no `_by_pk`, no writes. */
  readonly primary_key?: string | readonly string[];
  readonly root_fields?: readonly RootFieldKind[];
  readonly fields: Readonly<Record<string, FieldDocument>>;
  /** What a value too large to store that a write of this collection makes in the database means (`Collection.overflow`). */
  readonly overflow?: { readonly fields: readonly string[]; readonly sentence: string };
  readonly relationships?: Readonly<Record<string, RelationshipDocument>>;
  readonly insert?: { readonly columns: readonly string[]; readonly set?: Presets; readonly on_conflict_constraints?: readonly string[] };
  readonly update?: { readonly columns: readonly string[]; readonly set?: Presets };
  readonly delete?: Readonly<Record<string, never>>;
  readonly computed_fields?: Readonly<
    Record<
      string,
      {
        readonly function: string;
        /** A scalar computed field's type; a table computed field gives `returns` instead. */
        readonly type?: ScalarType;
        /** The collection whose table the function returns SETOF (a table computed field). */
        readonly returns?: string;
        /** Argument name → its type, or its type with the values it takes (`{type: date, range: {…}}`). */
        readonly args?: Readonly<Record<string, ScalarType | ComputedArgumentDocument>>;
        readonly description?: string;
        readonly stored_form?: { readonly days_since: string; readonly today: string };
      }
    >
  >;
}

/** A computed field's argument in its long form: its type, and the range of values a request may give it. */
export interface ComputedArgumentDocument {
  readonly type: ScalarType;
  /** A date argument's first and last day taken (`YYYY-MM-DD`, both included), and what those days are, for the refusal. */
  readonly range?: { readonly from: string; readonly to: string; readonly meaning?: string };
}

/** A function of `functions:` as written: the SQL function, the collection whose rows it returns, its arguments by name. */
export interface FunctionDocument {
  readonly function: string;
  readonly schema?: string;
  readonly returns: string;
  readonly args?: Readonly<Record<string, ScalarType>>;
  /** The function's uuid argument that receives the caller's account (Hasura's session_argument). */
  readonly tenant_argument?: string;
  readonly description?: string;
}

/** Fixed values by field name (`set:`); in a role, a value may be `key.<variable>`. */
export type Presets = Readonly<Record<string, PresetValue['value']>>;

/** `event_types:` as written. */
export interface EventTypeDocument {
  readonly collection: string;
  readonly on: 'insert' | 'update' | 'delete';
  readonly when?: { readonly changed?: readonly string[]; readonly set?: readonly string[]; readonly becomes?: Readonly<Record<string, string | number | boolean>> };
  readonly payload?: readonly EventPayloadEntryDocument[];
}

/**
 * One entry of an event type's `payload` as written: a field name, a relationship name (the
 * related rows' column fields), or `{relationship: [entries]}` / `{relationship: {fields:
 * [entries], order_by: [fields]}}` to choose the related fields (and, for an array, their order).
 */
export type EventPayloadEntryDocument =
  | string
  | Readonly<Record<string, readonly EventPayloadEntryDocument[] | { readonly fields?: readonly EventPayloadEntryDocument[]; readonly order_by?: readonly string[] }>>;

/** A role of the `roles:` section as written. */
export interface RoleDocument {
  /** The token bucket of each key of the role (`rate_limit: {per_second, burst}`). */
  readonly rate_limit?: { readonly per_second: number; readonly burst?: number };
  readonly variables?: Readonly<Record<string, ScalarType>>;
  readonly collections: Readonly<Record<string, RolePermissionsDocument>>;
}

/** A list of field names, or `'*'` for all of them. */
export type ColumnsDocument = '*' | readonly string[];

/** A role's permissions on one collection; filters are the query language's boolean expressions, resolved by `resolveRoles`. */
export interface RolePermissionsDocument {
  readonly select?: { readonly columns: ColumnsDocument; readonly filter?: unknown; readonly limit?: number; readonly allow_aggregations?: boolean };
  readonly insert?: { readonly columns: ColumnsDocument; readonly check?: unknown; readonly set?: Presets };
  readonly update?: { readonly columns: ColumnsDocument; readonly filter?: unknown; readonly check?: unknown; readonly set?: Presets };
  readonly delete?: { readonly filter?: unknown };
}
