import type { Collection } from '../../metadata/index.js';
import { assertNever, type AggregateField, type AggregateSelection, type ListQuery } from '../plan/ir.js';
import type { CompileContext } from './compileContext.js';
import { sql, type Fragment } from './fragment.js';
import { jsonArray, jsonObject, jsonOf, jsonString } from './jsonText.js';
import type { OrderByRenderer } from './renderOrderBy.js';
import { rowCount, type Correlation, type SelectionRenderer } from './renderSelection.js';
import { aggregatedValueRenderer, type AggregatedValue } from './renderAggregatedValue.js';
import { AGGREGATE_FUNCTION } from './sqlTables.js';

export type AggregateRenderer = ReturnType<typeof aggregateRenderer>;

export type { AggregatedValue } from './renderAggregatedValue.js';

/** `c_aggregate` fields: `count`, `sum`/`avg`/`min`/`max { … }` and `nodes`, over one scan. */
export function aggregateRenderer(context: CompileContext, { orderKeys }: OrderByRenderer, { rowObject, source }: Pick<SelectionRenderer, 'rowObject' | 'source'>) {
  const { nextAlias } = context;
  /** The value of the row `table` an aggregate reads (`renderAggregatedValue.ts`). */
  const valueOf = aggregatedValueRenderer(context);

  /** One aggregate output (`count`, `sum { … }`, …) over the rows where `filter` holds (all rows when null). */
  function aggregateField(item: AggregateField, column: (value: AggregatedValue) => Fragment, filter: Fragment | null): readonly [string, Fragment] {
    const over = (call: Fragment, condition: Fragment | null = null): Fragment => {
      const conditions = [filter, condition].filter((c): c is Fragment => c !== null);
      return conditions.length ? sql`${call} FILTER (WHERE ${sql.join(conditions, sql` AND `)})` : call;
    };
    switch (item.kind) {
      case 'typename':
        return [item.alias, jsonString(item.value)];
      case 'count': {
        // A count is never null: no fallback needed.
        if (!item.columns.length) return [item.alias, sql`to_json(${over(sql`count(*)`)})`];
        const values = item.columns.map(column);
        if (values.length === 1) return [item.alias, sql`to_json(${over(item.distinct ? sql`count(DISTINCT ${values[0]!})` : sql`count(${values[0]!})`)})`];
        const allPresent = sql.join(values.map((v) => sql`${v} IS NOT NULL`), sql` AND `);
        return [item.alias, sql`to_json(${over(item.distinct ? sql`count(DISTINCT ROW(${sql.join(values)}))` : sql`count(*)`, allPresent)})`];
      }
      case 'function':
        return [
          item.alias,
          jsonObject(
            item.items.map((leaf): readonly [string, Fragment] =>
              leaf.kind === 'typename' ? [leaf.alias, jsonString(leaf.value)] : [leaf.alias, jsonOf(over(sql`${AGGREGATE_FUNCTION[item.fn]}(${column(leaf.field)})`))],
            ),
          ),
        ];
      default:
        return assertNever(item);
    }
  }

  /**
   * The aggregated columns of a scan: each value is selected once in the inner query (pushed
   * onto `inner` as `c0`, `c1`, …) and read from the outer one as `rows.cN`.
   */
  function columnsOf(collection: Collection, table: Fragment, rows: Fragment, inner: Fragment[]): (value: AggregatedValue) => Fragment {
    const aliases = new Map<AggregatedValue, Fragment>();
    return (value) => {
      let alias = aliases.get(value);
      if (!alias) {
        alias = sql.ident(`c${aliases.size}`);
        aliases.set(value, alias);
        inner.push(sql`${valueOf(collection, table, value)} AS ${alias}`);
      }
      return sql`${rows}.${alias}`;
    };
  }

  function aggregate(collection: Collection, query: ListQuery, selection: AggregateSelection, correlation: Correlation | null): Fragment {
    const table = nextAlias('t');
    const rows = nextAlias('r');
    const keys = orderKeys(collection, query, table);
    const inner: Fragment[] = [];
    const column = columnsOf(collection, table, rows, inner);
    const pairs = selection.map((item): readonly [string, Fragment] => {
      switch (item.kind) {
        case 'typename':
          return [item.alias, jsonString(item.value)];
        case 'aggregate':
          return [item.alias, jsonObject(item.fields.map((field) => aggregateField(field, column, null)))];
        case 'nodes': {
          const alias = sql.ident(`n${inner.length}`);
          const row = rowObject(collection, item.selection, table);
          // Capped (MAX_ROWS): only the first rows in the list's order get their JSON, the others
          // are NULL, which string_agg skips — the aggregates beside still read every row.
          const capped = item.limit
            ? sql`CASE WHEN row_number() OVER (${keys.length ? sql`ORDER BY ${sql.join(keys.map((k) => sql`${k.value} ${k.direction}`))}` : sql``}) <= ${rowCount(item.limit)} THEN ${row} END`
            : row;
          inner.push(sql`${capped} AS ${alias}`);
          const order = keys.length ? sql.join(keys.map((k, i) => sql`${rows}.${sql.ident(`k${i}`)} ${k.direction}`)) : null;
          return [item.alias, jsonArray(sql`${rows}.${alias}`, order)];
        }
        default:
          return assertNever(item);
      }
    });
    const needsKeys = selection.some((item) => item.kind === 'nodes');
    if (needsKeys) keys.forEach((k, i) => inner.push(sql`${k.value} AS ${sql.ident(`k${i}`)}`));
    if (!inner.length) inner.push(sql`1 AS ${sql.ident('one')}`);
    // GROUP BY (): exactly one row, even when only __typename is selected or no row matches.
    return sql`(SELECT ${jsonObject(pairs)} FROM (SELECT ${sql.join(inner)} ${source(collection, query, table, correlation, keys, inner)}) AS ${rows} GROUP BY ())`;
  }

  return { aggregate, aggregateField, columnsOf, valueOf };
}
