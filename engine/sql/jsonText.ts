import { sql, type Fragment } from './fragment.js';

// The response is assembled as compact JSON text (`{"k":v,"k2":[1,2]}`), not with
// `json_build_object`/`json_agg`, which write `"k" : v` and `[a, b]` (engine/README.md, "Compact
// response text"). Every value fragment is a non-null `text` or `json` expression whose text is
// one JSON value.

/** JSON text `sql.literal` accepts (GraphQL names and JSON punctuation). */
const LITERAL_PIECE = /^[A-Za-z0-9_{}[\],:"]*$/;

/** PostgreSQL functions take at most 100 arguments. */
const MAX_ARGUMENTS = 100;

/**
 * The text of all pieces in order: one `concat(…)` (one function call parses and runs faster
 * than a chain of `||`), nested when there are more pieces than a call takes.
 */
export function concatenate(pieces: readonly Fragment[]): Fragment {
  if (pieces.length <= MAX_ARGUMENTS) return sql`concat(${sql.join(pieces)})`;
  const chunks: Fragment[] = [];
  const size = Math.ceil(pieces.length / MAX_ARGUMENTS);
  for (let at = 0; at < pieces.length; at += size) chunks.push(concatenate(pieces.slice(at, at + size)));
  return concatenate(chunks);
}

/**
 * JSON text written here (a key with its punctuation, a `__typename` string): a SQL literal,
 * since it is made of GraphQL names (`sql.literal`); bound as a parameter otherwise.
 */
export const jsonPiece = (text: string): Fragment => (LITERAL_PIECE.test(text) ? sql.literal(text) : sql`${sql.value(text)}::text`);

/** Any SQL value as JSON (`json`); SQL NULL is `null`. */
export const jsonOf = (value: Fragment): Fragment => sql`coalesce(to_json(${value}), 'null')`;

/** A scalar string as JSON text (`__typename`). */
export const jsonString = (text: string): Fragment => jsonPiece(JSON.stringify(text));

/** `{"k":v,…}` from JSON-text values, keys in the given order. */
export function jsonObject(pairs: readonly (readonly [string, Fragment])[]): Fragment {
  if (!pairs.length) return sql`'{}'::text`;
  const pieces: Fragment[] = [];
  pairs.forEach(([k, v], index) => {
    pieces.push(jsonPiece(`${index ? ',' : '{'}${JSON.stringify(k)}:`), v);
  });
  pieces.push(sql`'}'`);
  return concatenate(pieces);
}

/**
 * `[a,b,…]` of the JSON-text column `item`, aggregated in `order`; `[]` for no rows. `order`
 * null: rows that are at most one (PostgreSQL 15 starts a sort for an aggregate's ORDER BY
 * whatever the number of rows: ~10,000 instructions, bench/README.md, "q1's statement"). For an
 * aggregate that shares its scan with others (`_aggregate { nodes }`, a mutation's rows);
 * a list of its own is `jsonList`.
 */
export const jsonArray = (item: Fragment, order: Fragment | null): Fragment =>
  order ? sql`concat('[', string_agg(${item}, ',' ORDER BY ${order}), ']')` : sql`concat('[', string_agg(${item}, ','), ']')`;

/**
 * `[a,b,…]` of the JSON-text column `item` of `SELECT item FROM rows [ORDER BY order]`; `[]` for
 * no rows. An `ARRAY(…)` sublink instead of `(SELECT string_agg(…) FROM rows)`: PostgreSQL
 * initialises every subplan of a statement at each execution, and an aggregate's node (its
 * transition state, the sort its ORDER BY starts per group) costs more to start than the
 * sublink's, whose ORDER BY a subquery's or an index's order can satisfy with no sort at all —
 * q1's statement 630 → 578 thousand instructions (bench/README.md, "Lists as ARRAY sublinks").
 * `item` is never NULL (`array_to_string` would skip it).
 */
export const jsonList = (item: Fragment, rows: Fragment, order: Fragment | null): Fragment =>
  order
    ? sql`concat('[', array_to_string(ARRAY(SELECT ${item} FROM ${rows} ORDER BY ${order}), ','), ']')`
    : sql`concat('[', array_to_string(ARRAY(SELECT ${item} FROM ${rows}), ','), ']')`;
