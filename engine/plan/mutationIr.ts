import type { Collection, Field } from '../../metadata/index.js';
import type { Param } from './params.js';
import type { BoolExp, Selection } from './ir.js';

/**
 * The mutation IR: what a GraphQL mutation asks to write, in terms of resolved metadata, with
 * every value a `Param`. It reuses the query IR for `where` (`BoolExp`) and for `returning`
 * (`Selection`). Made by `planMutation`, compiled by `compileMutation`: one statement per write
 * (`MutationStep`), then one SELECT that builds the response over the written ids.
 */
export interface MutationPlan {
  readonly fields: readonly MutationField[];
}

export type MutationField =
  | { readonly kind: 'insert'; readonly alias: string; readonly collection: Collection; readonly insert: InsertWrite; readonly output: MutationOutput }
  | { readonly kind: 'update'; readonly alias: string; readonly collection: Collection; readonly updates: readonly UpdateWrite[]; readonly output: MutationOutput; readonly many: boolean }
  | { readonly kind: 'delete'; readonly alias: string; readonly collection: Collection; readonly where: BoolExp; readonly output: MutationOutput }
  | { readonly kind: 'typename'; readonly alias: string; readonly value: string };

/** `one`: the row itself or null (`_one`, `_by_pk`); `response`: `{affected_rows, returning}`. */
export type MutationOutput =
  | { readonly kind: 'one'; readonly selection: Selection }
  | { readonly kind: 'response'; readonly items: readonly MutationResponseItem[] };

export type MutationResponseItem =
  | { readonly kind: 'affectedRows'; readonly alias: string }
  | { readonly kind: 'returning'; readonly alias: string; readonly selection: Selection }
  | { readonly kind: 'typename'; readonly alias: string; readonly value: string };

/**
 * The rows of one insert field, nested inserts included, grouped by collection in the order
 * they are written (`groups[0]` is the field's own collection). Every new row's primary key is
 * a `newId` parameter made by the server, so a nested row refers to its parent by that id.
 */
export interface InsertWrite {
  readonly groups: readonly InsertGroup[];
  readonly onConflict: OnConflict | null;
}

export interface InsertGroup {
  readonly collection: Collection;
  readonly rows: readonly InsertRow[];
}

export interface InsertRow {
  /** Values by column; a column not given takes its default. */
  readonly values: ReadonlyMap<string, InsertValue>;
}

/** A value given by the request (or a preset) for a field, or the new id of a row of the request. */
export type InsertValue = { readonly kind: 'param'; readonly param: Param; readonly field: Field } | { readonly kind: 'newId'; readonly slot: number };

export interface OnConflict {
  readonly constraint: string;
  /** Empty: DO NOTHING. */
  readonly updateFields: readonly Field[];
  readonly where: BoolExp | null;
}

export interface UpdateWrite {
  readonly where: BoolExp;
  readonly set: ReadonlyMap<Field, readonly UpdateValue[]>;
}

/**
 * How one field changes: `set` a value, `inc` by an amount; jsonb (Hasura's operators): `append`
 * (`value || $n`: an object's keys merged in, an array's items added last), `prepend` (`$n ||
 * value`), `deleteKey` (`value - $n::text`: a key, or string items), `deleteElem` (`value -
 * $n::int`: the item at that index, negative from the end), `deleteAtPath` (`value #- $n::text[]`).
 * Applied in that order. An update whose operators name no field at all (`_set: {}`) has an
 * empty `set` and writes nothing (affected_rows 0, as Hasura answers).
 */
export interface UpdateValue {
  readonly kind: 'set' | 'inc' | 'append' | 'prepend' | 'deleteKey' | 'deleteElem' | 'deleteAtPath';
  readonly param: Param;
}
