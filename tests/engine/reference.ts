/**
 * A plain-TypeScript evaluator of the query language (SPEC §5), used as the oracle of the
 * generated-query test: the same `where`, `order_by`, `limit`, `offset` and aggregates,
 * evaluated over rows held in memory. It shares no code with `engine/`.
 *
 * Semantics, written down once:
 * - SQL's three-valued logic. A comparison with a null field is unknown (`null` here); `_not`
 *   of unknown is unknown; `_and`/`_or` are Kleene's; a row is kept only when the filter is
 *   true. So `_neq`, `_nin`, `_nlike`, `_nilike` and any `_not` never match a row whose
 *   compared field is null (SPEC §5: "use `_is_null`").
 * - `_in: []` is false for every row (PostgreSQL: `x = ANY('{}')` is false even for null);
 *   `_nin` with a null field is unknown whatever the list (SPEC §5: it never matches a null).
 * - An object of several keys is their AND; `{}` and empty `_and` are true, empty `_or` false;
 *   `_and`/`_or` given a single object mean a list of one (GraphQL input coercion).
 * - `null` where a boolean expression is expected (`_not: null`, `_and: null`, `_or: null`, a
 *   field's comparison `null`) is no condition at all, as a null `where` is (the planner's
 *   rule, after Hasura): true, written inline or sent in a variable alike.
 * - A relationship filter is EXISTS: true when some related row makes the inner filter true,
 *   false otherwise (never unknown).
 * - `_regex`/`_iregex`/`_nregex`/`_niregex` are PostgreSQL's `~ ~* !~ !~*`: a search anywhere in
 *   the value; the test only draws patterns that mean the same to JavaScript's RegExp (escaped
 *   literal pieces, `^ $ . .* |` and ASCII case). `_similar`/`_nsimilar` are SIMILAR TO: the
 *   whole value, `%` any text, `_` one character, `|` and `( )`, backslash escaping.
 * - jsonb (`jsonFields`): `_contains` is PostgreSQL's `@>` (objects: every key present with a
 *   value containing the given one; arrays: every given element contained in some element;
 *   scalars: equal), `_contained_in` the same the other way, `_has_key` a top-level key (or a
 *   string element of an array), `_has_keys_any`/`_has_keys_all` any/all of them; `_cast:
 *   {String: …}` compares the field's jsonb text, read from the database with the rows.
 * - `distinct_on`: after filtering and ordering (the order starts with the distinct fields),
 *   the first row of each group of equal distinct values (nulls equal each other), then
 *   offset and limit.
 * - `order_by` an aggregate of an array relationship: `count` (0 for no rows), `sum`/`avg`/
 *   `min`/`max` of a field (null for no non-null value); through an object relationship that
 *   has no row, null.
 * - `order_by` a statistical aggregate (`stddev`, `stddev_samp`, `stddev_pop`, `variance`,
 *   `var_samp`, `var_pop`): PostgreSQL's definitions over the non-null values (the sample ones
 *   null below two values, the population ones below one), computed exactly as
 *   (n·Σx² − (Σx)²) / (n·(n−1)) or / n², one rounding, the square root at 60 digits.
 * - An aggregate predicate (`<rel>_aggregate: {count | bool_and | bool_or: {arguments, distinct,
 *   filter, predicate}}`): the aggregate over the related rows for which `filter` is true —
 *   `count` as `count(columns:, distinct:)` (all rows when no `arguments`), `bool_and`/`bool_or`
 *   over the column's non-null values (null when there are none) — then `predicate` compares it
 *   as an Int / Boolean field.
 * - A computed field with a stored form (`computedFields`, loans.days_past_due): its value is the
 *   whole days from the stored date to the business date when the date is before it, else 0
 *   (never null); ordering by it sorts the stored date the other way round — ascending is the
 *   date descending with nulls first (the engine's index order, engine/sql/renderStoredForm.ts),
 *   so its ties (the zeros) are in the date's order before the primary key.
 * - `asc` = nulls last, `desc` = nulls first; ties broken by primary key ascending.
 * - Numbers are exact (decimal.js); timestamps are microseconds since the epoch (bigint);
 *   dates `YYYY-MM-DD`; text is ordered by a comparator the caller supplies (the database's
 *   collation, measured once over every text value the test can produce).
 */
import { Decimal as DecimalJs } from 'decimal.js';

/** Exact decimals: 60 significant digits, far more than any sum of numeric(14, 2) needs. */
export const Decimal = DecimalJs.clone({ precision: 60 });
export type Decimal = DecimalJs;

export type ScalarKind = 'uuid' | 'text' | 'numeric' | 'integer' | 'boolean' | 'date' | 'timestamptz';

/** A field's value, normalized for comparison: text/uuid/date strings, Decimal numbers, bigint µs timestamps. */
export type Cell = string | Decimal | boolean | bigint | null;

export type Row = Readonly<Record<string, unknown>>;

export interface FieldModel {
  readonly type: ScalarKind;
  readonly value: (row: Row) => Cell;
}

export interface RelationshipModel {
  readonly kind: 'object' | 'array';
  readonly target: string;
  readonly related: (row: Row) => readonly Row[];
}

export interface CollectionModel {
  readonly name: string;
  /** jsonb fields: their value (parsed JSON) and their text as PostgreSQL writes it (`jsonb::text`). */
  readonly jsonFields?: ReadonlyMap<string, { readonly value: (row: Row) => unknown; readonly text: (row: Row) => string | null }>;
  readonly primaryKey: string;
  readonly fields: ReadonlyMap<string, FieldModel>;
  readonly relationships: ReadonlyMap<string, RelationshipModel>;
  /** Computed fields with a stored form: their value, and the stored field ordering by them sorts (the other way round). */
  readonly computedFields?: ReadonlyMap<string, { readonly value: FieldModel; readonly storedOrder: FieldModel }>;
  readonly rows: readonly Row[];
}

export interface Model {
  readonly collections: ReadonlyMap<string, CollectionModel>;
  /** The database collation's order of two text values. */
  readonly compareText: (a: string, b: string) => number;
}

/** A `<collection>_bool_exp` value as JSON (the GraphQL input, before any coercion). */
export type Where = { readonly [key: string]: unknown };

export type Direction = 'asc' | 'desc' | 'asc_nulls_first' | 'asc_nulls_last' | 'desc_nulls_first' | 'desc_nulls_last';
export const DIRECTIONS: readonly Direction[] = ['asc', 'desc', 'asc_nulls_first', 'asc_nulls_last', 'desc_nulls_first', 'desc_nulls_last'];

/**
 * One `order_by` key: object relationships walked (`path`), then a field — or, with
 * `aggregate`, an aggregate of an array relationship (`field` is the aggregated field; '' for count).
 */
export interface OrderKey {
  readonly path: readonly string[];
  readonly field: string;
  readonly direction: Direction;
  readonly aggregate?: { readonly relationship: string; readonly fn: 'count' | 'sum' | 'avg' | 'min' | 'max' | StatisticalFunction } | undefined;
}

export const STATISTICAL_FUNCTIONS = ['stddev', 'stddev_samp', 'stddev_pop', 'variance', 'var_samp', 'var_pop'] as const;
export type StatisticalFunction = (typeof STATISTICAL_FUNCTIONS)[number];

export interface ListArgs {
  readonly distinctOn?: readonly string[] | undefined;
  readonly where?: Where | undefined;
  readonly orderBy?: readonly OrderKey[] | undefined;
  readonly limit?: number | undefined;
  readonly offset?: number | undefined;
}

type Truth = boolean | null;

const and = (a: Truth, b: Truth): Truth => (a === false || b === false ? false : a === null || b === null ? null : true);
const or = (a: Truth, b: Truth): Truth => (a === true || b === true ? true : a === null || b === null ? null : false);
const not = (a: Truth): Truth => (a === null ? null : !a);

export function collection(model: Model, name: string): CollectionModel {
  const found = model.collections.get(name);
  if (!found) throw new Error(`reference: no collection ${name}`);
  return found;
}

// ---------------------------------------------------------------------------------------------
// Values

/** A GraphQL operand (as sent: string, number, boolean) as a cell of the field's type. */
export function operandCell(type: ScalarKind, operand: unknown): Cell {
  if (operand === null || operand === undefined) return null;
  switch (type) {
    case 'uuid':
      return String(operand).toLowerCase();
    case 'text':
    case 'date':
      return String(operand);
    case 'numeric':
    case 'integer':
      return new Decimal(String(operand));
    case 'boolean':
      return operand === true;
    case 'timestamptz':
      return parseTimestamp(String(operand));
  }
}

const TIMESTAMP = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/** An ISO 8601 / PostgreSQL timestamp with an offset as µs since the epoch (no offset = UTC). */
export function parseTimestamp(text: string): bigint {
  const match = TIMESTAMP.exec(text.trim());
  if (!match) throw new Error(`reference: cannot read timestamp ${JSON.stringify(text)}`);
  const [, day, hh, mm, ss = '00', fraction = '', zone = 'Z'] = match;
  const seconds = Date.parse(`${day}T${hh}:${mm}:${ss}Z`) / 1000;
  let offsetMinutes = 0;
  if (zone.toUpperCase() !== 'Z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    offsetMinutes = sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || '0'));
  }
  return (BigInt(seconds) - BigInt(offsetMinutes * 60)) * 1_000_000n + BigInt(fraction.padEnd(6, '0'));
}

/** µs since the epoch as ISO 8601 at a given offset in minutes (`Z` for 0 unless told). */
export function formatTimestamp(micros: bigint, offsetMinutes = 0, zulu = true): string {
  const shifted = micros + BigInt(offsetMinutes) * 60_000_000n;
  const seconds = shifted / 1_000_000n - (shifted % 1_000_000n < 0n ? 1n : 0n);
  const fraction = shifted - seconds * 1_000_000n;
  const base = new Date(Number(seconds) * 1000).toISOString().slice(0, 19);
  let zone = 'Z';
  if (offsetMinutes !== 0 || !zulu) {
    const sign = offsetMinutes < 0 ? '-' : '+';
    const abs = Math.abs(offsetMinutes);
    zone = `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
  }
  return `${base}.${String(fraction).padStart(6, '0')}${zone}`;
}

/** Total order of two non-null cells of one type (text by the database's collation). */
export function compareCells(model: Model, type: ScalarKind, a: Exclude<Cell, null>, b: Exclude<Cell, null>): number {
  switch (type) {
    case 'numeric':
    case 'integer':
      return (a as Decimal).comparedTo(b as Decimal);
    case 'timestamptz':
      return a === b ? 0 : (a as bigint) < (b as bigint) ? -1 : 1;
    case 'boolean':
      return a === b ? 0 : a === false ? -1 : 1;
    case 'text':
      return model.compareText(a as string, b as string);
    case 'uuid':
    case 'date':
      // uuid: PostgreSQL compares the 16 bytes, i.e. the lower-case hex text; dates are ISO.
      return a === b ? 0 : (a as string) < (b as string) ? -1 : 1;
  }
}

/** A key under which equal cells of one type are equal (numeric 1.50 = 1.5), for DISTINCT. */
export function cellKey(type: ScalarKind, cell: Exclude<Cell, null>): string {
  if (type === 'numeric' || type === 'integer') return (cell as Decimal).toString();
  return String(cell);
}

/** PostgreSQL's LIKE (escape character backslash) as a regular expression over the whole value. */
export function likeRegExp(pattern: string, caseInsensitive: boolean): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === '\\' && i + 1 < pattern.length) source += escapeRegExp(pattern[++i]!);
    else if (ch === '%') source += '[\\s\\S]*';
    else if (ch === '_') source += '[\\s\\S]';
    else source += escapeRegExp(ch);
  }
  return new RegExp(`^${source}$`, caseInsensitive ? 'i' : '');
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

// ---------------------------------------------------------------------------------------------
// Filters

const asList = (value: unknown): readonly unknown[] => (value === null || value === undefined ? [] : Array.isArray(value) ? value : [value]);

/** The truth of a `where` for one row: true, false, or unknown (null). */
export function evaluateWhere(model: Model, c: CollectionModel, row: Row, where: Where | null | undefined): Truth {
  if (where === null || where === undefined) return true;
  let result: Truth = true;
  for (const [key, value] of Object.entries(where)) {
    let item: Truth;
    if ((key === '_and' || key === '_or' || key === '_not') && value === null) item = true;
    else if (key === '_and') item = asList(value).reduce<Truth>((acc, inner) => and(acc, evaluateWhere(model, c, row, inner as Where)), true);
    else if (key === '_or') item = asList(value).reduce<Truth>((acc, inner) => or(acc, evaluateWhere(model, c, row, inner as Where)), false);
    else if (key === '_not') item = not(evaluateWhere(model, c, row, value as Where));
    else if (c.fields.has(key)) item = evaluateComparison(model, c.fields.get(key)!, row, value as Record<string, unknown> | null);
    else if (c.jsonFields?.has(key)) item = evaluateJsonComparison(model, c.jsonFields.get(key)!, row, value as Record<string, unknown> | null);
    else if (c.computedFields?.has(key)) item = evaluateComparison(model, c.computedFields.get(key)!.value, row, value as Record<string, unknown> | null);
    else if (key.endsWith('_aggregate') && c.relationships.get(key.slice(0, -'_aggregate'.length))?.kind === 'array') {
      item = evaluateAggregatePredicates(model, c.relationships.get(key.slice(0, -'_aggregate'.length))!, row, value as Record<string, AggregatePredicate | null>);
    }
    else if (c.relationships.has(key)) {
      const relationship = c.relationships.get(key)!;
      const target = collection(model, relationship.target);
      item = relationship.related(row).some((related) => evaluateWhere(model, target, related, value as Where | null) === true);
    } else throw new Error(`reference: ${c.name} has no field or relationship ${key}`);
    result = and(result, item);
  }
  return result;
}

interface AggregatePredicate {
  readonly arguments?: string | readonly string[];
  readonly distinct?: boolean | null;
  readonly filter?: Where | null;
  readonly predicate: Record<string, unknown>;
}

/** `<rel>_aggregate: {count: {…}, bool_and: {…}, bool_or: {…}}`: each aggregate's predicate, AND-ed. */
function evaluateAggregatePredicates(model: Model, relationship: RelationshipModel, row: Row, value: Record<string, AggregatePredicate | null>): Truth {
  const target = collection(model, relationship.target);
  let result: Truth = true;
  for (const [fn, spec] of Object.entries(value)) {
    if (spec === null) continue;
    const rows = relationship.related(row).filter((related) => evaluateWhere(model, target, related, spec.filter ?? null) === true);
    const fields = asList(spec.arguments).map((name) => target.fields.get(name as string)!);
    let aggregated: Cell;
    if (fn === 'count') aggregated = new Decimal(countOf(rows, fields, spec.distinct === true));
    else {
      const values = rows.map((related) => fields[0]!.value(related)).filter((cell): cell is boolean => cell !== null);
      aggregated = values.length ? (fn === 'bool_and' ? values.every(Boolean) : values.some(Boolean)) : null;
    }
    const as: FieldModel = { type: fn === 'count' ? 'integer' : 'boolean', value: () => aggregated };
    result = and(result, evaluateComparison(model, as, row, spec.predicate));
  }
  return result;
}

function evaluateComparison(model: Model, field: FieldModel, row: Row, comparison: Record<string, unknown> | null): Truth {
  if (comparison === null) return true;
  const cell = field.value(row);
  let result: Truth = true;
  for (const [operator, operand] of Object.entries(comparison)) result = and(result, evaluateOperator(model, field.type, cell, operator, operand));
  return result;
}

/** A jsonb field's comparison: the jsonb operators, `_cast: {String: …}`, `_is_null`. */
function evaluateJsonComparison(model: Model, field: { value: (row: Row) => unknown; text: (row: Row) => string | null }, row: Row, comparison: Record<string, unknown> | null): Truth {
  if (comparison === null) return true;
  const json = field.value(row);
  let result: Truth = true;
  for (const [operator, operand] of Object.entries(comparison)) {
    let item: Truth;
    if (operator === '_cast') {
      const text = (operand as { String?: Record<string, unknown> | null } | null)?.String;
      if (operand === null || text === null || text === undefined) item = true;
      else {
        const cell = field.text(row);
        item = Object.entries(text).reduce<Truth>((acc, [op, value]) => and(acc, evaluateOperator(model, 'text', cell, op, value)), true);
      }
    } else if (operator === '_is_null') item = operand === null ? null : (json === null || json === undefined) === operand;
    else if (json === null || json === undefined || operand === null || operand === undefined) item = null;
    else if (operator === '_contains') item = jsonContains(json, operand);
    else if (operator === '_contained_in') item = jsonContains(operand, json);
    else if (operator === '_has_key') item = jsonHasKey(json, operand as string);
    else if (operator === '_has_keys_any') item = (operand as string[]).some((key) => jsonHasKey(json, key));
    else if (operator === '_has_keys_all') item = (operand as string[]).every((key) => jsonHasKey(json, key));
    else throw new Error(`reference: unknown jsonb operator ${operator}`);
    result = and(result, item);
  }
  return result;
}

const isJsonObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** PostgreSQL's `a @> b` (jsonb containment). */
export function jsonContains(a: unknown, b: unknown): boolean {
  if (isJsonObject(b)) return isJsonObject(a) && Object.entries(b).every(([key, value]) => key in a && jsonContains(a[key], value));
  if (Array.isArray(b)) {
    // An array contains a scalar only at the top level; elements are compared recursively.
    if (!Array.isArray(a)) return false;
    return b.every((item) => a.some((candidate) => jsonContains(candidate, item)));
  }
  if (Array.isArray(a)) return false;
  if (typeof a === 'number' && typeof b === 'number') return new Decimal(a).equals(b);
  return a === b;
}

/** PostgreSQL's `a ? key`: a top-level key of an object, a string element of an array, or the string itself. */
function jsonHasKey(value: unknown, key: string): boolean {
  if (isJsonObject(value)) return Object.prototype.hasOwnProperty.call(value, key);
  if (Array.isArray(value)) return value.some((item) => item === key);
  return value === key;
}

/** PostgreSQL's SIMILAR TO (escape character backslash) as a regular expression over the whole value. */
export function similarRegExp(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === '\\' && i + 1 < pattern.length) source += escapeRegExp(pattern[++i]!);
    else if (ch === '%') source += '[\\s\\S]*';
    else if (ch === '_') source += '[\\s\\S]';
    else if (ch === '|' || ch === '(' || ch === ')') source += ch === '(' ? '(?:' : ch;
    else source += escapeRegExp(ch);
  }
  return new RegExp(`^(?:${source})$`);
}

/**
 * `operandCell` of the last operand asked for: a filter compares every row with the same operand,
 * and a numeric operand was parsed into a `Decimal` again for each row. Cells are immutable (a
 * `Decimal` too), so one serves every row.
 */
let lastOperand: { type: ScalarKind; operand: unknown; cell: Cell } | null = null;
function operandCellOnce(type: ScalarKind, operand: unknown): Cell {
  if (lastOperand?.type === type && Object.is(lastOperand.operand, operand)) return lastOperand.cell;
  const cell = operandCell(type, operand);
  lastOperand = { type, operand, cell };
  return cell;
}

function evaluateOperator(model: Model, type: ScalarKind, cell: Cell, operator: string, operand: unknown): Truth {
  if (operator === '_is_null') return operand === null ? null : (cell === null) === operand;
  if (operator === '_in' || operator === '_nin') {
    const values = asList(operand).map((item) => operandCell(type, item));
    if (operator === '_in' && values.length === 0) return false;
    if (cell === null) return null;
    const found = values.some((value) => value !== null && compareCells(model, type, cell, value) === 0);
    return operator === '_in' ? found : !found;
  }
  const value = operandCellOnce(type, operand);
  if (cell === null || value === null) return null;
  switch (operator) {
    case '_eq':
      return compareCells(model, type, cell, value) === 0;
    case '_neq':
      return compareCells(model, type, cell, value) !== 0;
    case '_gt':
      return compareCells(model, type, cell, value) > 0;
    case '_gte':
      return compareCells(model, type, cell, value) >= 0;
    case '_lt':
      return compareCells(model, type, cell, value) < 0;
    case '_lte':
      return compareCells(model, type, cell, value) <= 0;
    case '_like':
      return likeRegExp(value as string, false).test(cell as string);
    case '_nlike':
      return !likeRegExp(value as string, false).test(cell as string);
    case '_ilike':
      return likeRegExp(value as string, true).test(cell as string);
    case '_nilike':
      return !likeRegExp(value as string, true).test(cell as string);
    case '_regex':
      return new RegExp(value as string).test(cell as string);
    case '_iregex':
      return new RegExp(value as string, 'i').test(cell as string);
    case '_nregex':
      return !new RegExp(value as string).test(cell as string);
    case '_niregex':
      return !new RegExp(value as string, 'i').test(cell as string);
    case '_similar':
      return similarRegExp(value as string).test(cell as string);
    case '_nsimilar':
      return !similarRegExp(value as string).test(cell as string);
    default:
      throw new Error(`reference: unknown operator ${operator}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Lists

/** The field an order key names, after walking its object relationships (an aggregate: its type). */
/**
 * The aggregates an order key has asked of a row, by relationship, function and field: every
 * query that sorts by one sorts all the rows again, and adding up their related rows each time
 * was most of the reference's time. A model's rows and relationships do not change once loaded.
 */
const rowAggregates = new WeakMap<Row, Map<string, Cell>>();
function aggregatesOf(row: Row): Map<string, Cell> {
  let known = rowAggregates.get(row);
  if (!known) rowAggregates.set(row, (known = new Map()));
  return known;
}

function orderField(model: Model, c: CollectionModel, key: OrderKey): FieldModel {
  let current = c;
  for (const step of key.path) current = collection(model, objectRelationship(current, step).target);
  if (key.aggregate) {
    const relationship = current.relationships.get(key.aggregate.relationship)!;
    const target = collection(model, relationship.target);
    const fn = key.aggregate.fn;
    const aggregated = fn === 'count' ? null : target.fields.get(key.field)!;
    const type: ScalarKind = fn === 'min' || fn === 'max' ? aggregated!.type : 'numeric';
    const memo = `${key.aggregate.relationship}\u0000${fn}\u0000${key.field}`;
    return {
      type,
      value: (row) => {
        const known = aggregatesOf(row);
        if (known.has(memo)) return known.get(memo)!;
        const related = relationship.related(row);
        const cells = fn === 'count' ? [] : related.map((r) => aggregated!.value(r));
        const cell = fn === 'count' ? new Decimal(related.length) : fn === 'sum' ? sumOf(cells) : fn === 'avg' ? avgOf(cells) : fn === 'min' || fn === 'max' ? extremeOf(model, type, cells, fn) : statisticOf(cells, fn);
        known.set(memo, cell);
        return cell;
      },
    };
  }
  const computed = current.computedFields?.get(key.field);
  if (computed) return computed.storedOrder;
  const field = current.fields.get(key.field);
  if (!field) throw new Error(`reference: ${current.name} has no field ${key.field}`);
  return field;
}

function objectRelationship(c: CollectionModel, name: string): RelationshipModel {
  const relationship = c.relationships.get(name);
  if (!relationship || relationship.kind !== 'object') throw new Error(`reference: ${c.name}.${name} is not an object relationship`);
  return relationship;
}

/** The value an order key sorts by, through object relationships (no related row: null). */
export function orderCell(model: Model, c: CollectionModel, row: Row, key: OrderKey): Cell {
  let current = c;
  let currentRow: Row | undefined = row;
  for (const step of key.path) {
    const relationship = objectRelationship(current, step);
    currentRow = currentRow ? relationship.related(currentRow)[0] : undefined;
    current = collection(model, relationship.target);
  }
  return currentRow ? orderField(model, current, { ...key, path: [] }).value(currentRow) : null;
}

function isComputedKey(model: Model, c: CollectionModel, key: OrderKey): boolean {
  if (key.aggregate) return false;
  let current = c;
  for (const step of key.path) current = collection(model, objectRelationship(current, step).target);
  return current.computedFields?.has(key.field) ?? false;
}

function nullsFirst(direction: Direction): boolean {
  return direction === 'desc' || direction === 'asc_nulls_first' || direction === 'desc_nulls_first';
}

/** Rows sorted by the keys, then by primary key ascending (SPEC §5). */
export function sortRows(model: Model, c: CollectionModel, rows: readonly Row[], keys: readonly OrderKey[]): Row[] {
  const pk = c.fields.get(c.primaryKey)!;
  const decorated = rows.map((row) => ({ row, cells: keys.map((key) => orderCell(model, c, row, key)), pk: pk.value(row) }));
  const types = keys.map((key) => orderField(model, c, key).type);
  // A computed field sorts its stored field the other way round: asc is desc with nulls first.
  const directions = keys.map((key): Direction => (!isComputedKey(model, c, key) ? key.direction : key.direction.startsWith('asc') ? 'desc_nulls_first' : 'asc_nulls_last'));
  decorated.sort((a, b) => {
    for (let i = 0; i < keys.length; i++) {
      const direction = directions[i]!;
      const x = a.cells[i]!;
      const y = b.cells[i]!;
      if (x === null && y === null) continue;
      if (x === null || y === null) return (x === null) === nullsFirst(direction) ? -1 : 1;
      const order = compareCells(model, types[i]!, x, y);
      if (order !== 0) return direction.startsWith('desc') ? -order : order;
    }
    return compareCells(model, pk.type, a.pk!, b.pk!);
  });
  return decorated.map((entry) => entry.row);
}

/** The rows a list (or an aggregate's row set) selects: filtered, ordered, paged. */
export function selectRows(model: Model, c: CollectionModel, rows: readonly Row[], args: ListArgs): Row[] {
  const kept = rows.filter((row) => evaluateWhere(model, c, row, args.where) === true);
  const distinct = args.distinctOn ?? [];
  const orderBy = args.orderBy?.length ? args.orderBy : distinct.map((field): OrderKey => ({ path: [], field, direction: 'asc' }));
  let sorted = sortRows(model, c, kept, orderBy);
  if (distinct.length) {
    const seen = new Set<string>();
    sorted = sorted.filter((row) => {
      const key = JSON.stringify(distinct.map((name) => {
        const field = c.fields.get(name)!;
        const cell = field.value(row);
        return cell === null ? null : cellKey(field.type, cell);
      }));
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  }
  const offset = args.offset ?? 0;
  return sorted.slice(offset, args.limit === undefined ? undefined : offset + args.limit);
}

// ---------------------------------------------------------------------------------------------
// Aggregates

export function sumOf(cells: readonly Cell[]): Decimal | null {
  const present = cells.filter((cell): cell is Decimal => cell !== null);
  return present.length ? present.reduce((acc, cell) => acc.plus(cell), new Decimal(0)) : null;
}

export function avgOf(cells: readonly Cell[]): Decimal | null {
  const present = cells.filter((cell): cell is Decimal => cell !== null);
  return present.length ? sumOf(present)!.dividedBy(present.length) : null;
}

export function extremeOf(model: Model, type: ScalarKind, cells: readonly Cell[], which: 'min' | 'max'): Cell {
  let best: Cell = null;
  for (const cell of cells) {
    if (cell === null) continue;
    if (best === null) best = cell;
    else {
      const order = compareCells(model, type, cell, best);
      if (which === 'min' ? order < 0 : order > 0) best = cell;
    }
  }
  return best;
}

/** `count(columns: [...], distinct)`: rows whose every column is non-null, or their distinct tuples. */
export function countOf(rows: readonly Row[], fields: readonly FieldModel[], distinct: boolean): number {
  if (!fields.length) return rows.length;
  const tuples = rows.map((row) => fields.map((field) => field.value(row))).filter((cells) => cells.every((cell) => cell !== null));
  if (!distinct) return tuples.length;
  return new Set(tuples.map((cells) => JSON.stringify(cells.map((cell, i) => cellKey(fields[i]!.type, cell!))))).size;
}

/**
 * PostgreSQL's statistical aggregates over the non-null values, exactly: the variance is
 * (n·Σx² − (Σx)²) / (n·(n−1)) (sample) or / n² (population), one division; null below two
 * values (sample) or one (population); the standard deviation its square root.
 */
export function statisticOf(cells: readonly Cell[], fn: StatisticalFunction): Decimal | null {
  const xs = cells.filter((cell): cell is Decimal => cell !== null);
  const n = xs.length;
  const population = fn === 'stddev_pop' || fn === 'var_pop';
  if (n === 0 || (!population && n < 2)) return null;
  const sum = xs.reduce((acc, x) => acc.plus(x), new Decimal(0));
  const squares = xs.reduce((acc, x) => acc.plus(x.times(x)), new Decimal(0));
  const numerator = squares.times(n).minus(sum.times(sum));
  const variance = numerator.dividedBy(population ? n * n : n * (n - 1));
  return fn.startsWith('stddev') ? variance.sqrt() : variance;
}
