import type { Field } from '../../metadata/index.js';
import { assertNever, type SharedScan } from '../plan/ir.js';
import type { CompileContext } from './compileContext.js';
import { sql, type Fragment } from './fragment.js';
import { jsonObject, jsonString } from './jsonText.js';
import type { AggregateRenderer } from './renderAggregates.js';
import type { WhereRenderer } from './renderWhere.js';

/** A shared scan rendered: a FROM item of one row and, per member, the column holding its JSON. */
export interface RenderedSharedScan {
  readonly from: Fragment;
  readonly values: readonly Fragment[];
}

/**
 * Several root aggregates over one collection (`lead: loans_aggregate(where: …) servicing:
 * loans_aggregate(where: …) all: loans_aggregate`) in ONE scan, as `plan/passes/sharedScans.ts`
 * grouped them: each aggregate keeps its own `where` as a FILTER, the scan reads the rows any of
 * them needs. The role's filter is in the scan's WHERE (`rowPredicate`), once for all of them.
 *
 * `direct`: the aggregates read the table, each `where` written into its FILTER, as a person
 * writes it; `flags`: an inner query computes each `where` (as a flag `fN`) and each value
 * (`cN`) once per row, and the aggregates read those.
 */
export function renderSharedScan(
  context: CompileContext,
  { where, rowPredicate }: Pick<WhereRenderer, 'where' | 'rowPredicate'>,
  { aggregateField, columnsOf }: Pick<AggregateRenderer, 'aggregateField' | 'columnsOf'>,
  { collection, members, shape }: SharedScan,
): RenderedSharedScan {
  const { nextAlias, fieldValue } = context;
  const table = nextAlias('t');
  const rows = nextAlias('r');
  const shared = nextAlias('m');
  const direct = shape === 'direct';
  const inner: Fragment[] = [];
  const column = direct ? (field: Field): Fragment => fieldValue(table, field) : columnsOf(table, rows, inner);
  const scopes: Fragment[] = [];
  let everyRow = false;
  const outputs = members.map((member, index) => {
    let filter: Fragment | null = null;
    if (member.query.where) {
      const condition = where(member.query.where, table);
      scopes.push(condition);
      if (direct) {
        filter = condition;
      } else {
        const flag = sql.ident(`f${index}`);
        inner.push(sql`${condition} AS ${flag}`);
        filter = sql`${rows}.${flag}`;
      }
    } else {
      everyRow = true;
    }
    const pairs = member.aggregate.map((item): readonly [string, Fragment] => {
      switch (item.kind) {
        case 'typename':
          return [item.alias, jsonString(item.value)];
        case 'aggregate':
          return [item.alias, jsonObject(item.fields.map((field) => aggregateField(field, column, filter)))];
        case 'nodes':
          throw new Error('an aggregate with nodes never shares a scan');
        default:
          return assertNever(item);
      }
    });
    const alias = sql.ident(`a${index}`);
    return { select: sql`${jsonObject(pairs)} AS ${alias}`, value: sql`${shared}.${alias}` };
  });
  const conditions = [rowPredicate(collection, table)];
  if (!everyRow) conditions.push(sql`(${sql.join(scopes, sql` OR `)})`);
  const scan = sql`FROM ${sql.qualified(collection.schema, collection.table)} AS ${table} WHERE ${sql.join(conditions, sql` AND `)}`;
  const selects = sql.join(outputs.map((output) => output.select));
  // GROUP BY (): exactly one row, even when only __typename is selected.
  if (direct) return { from: sql`(SELECT ${selects} ${scan} GROUP BY ()) AS ${shared}`, values: outputs.map((output) => output.value) };
  if (!inner.length) inner.push(sql`1 AS ${sql.ident('one')}`);
  const from = sql`(SELECT ${selects} FROM (SELECT ${sql.join(inner)} ${scan}) AS ${rows} GROUP BY ()) AS ${shared}`;
  return { from, values: outputs.map((output) => output.value) };
}
