import type { Collection, Field } from '../../metadata/index.js';
import { assertNever, type AggregateField, type SelectAggregateField, type SharedScan } from '../plan/ir.js';
import type { CompileContext } from './compileContext.js';
import { sql, type Fragment } from './fragment.js';
import { jsonObject, jsonOf, jsonString } from './jsonText.js';
import type { AggregatedValue, AggregateRenderer } from './renderAggregates.js';
import type { WhereRenderer } from './renderWhere.js';
import { AGGREGATE_FUNCTION } from './sqlTables.js';

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
  { aggregateField, columnsOf, valueOf }: Pick<AggregateRenderer, 'aggregateField' | 'columnsOf' | 'valueOf'>,
  scanNode: SharedScan,
): RenderedSharedScan {
  if (scanNode.shape === 'grouped') return renderGroupedScan(context, { where, rowPredicate }, scanNode.collection, scanNode.members, scanNode.groupBy);
  const { collection, members, shape } = scanNode;
  const { nextAlias } = context;
  const table = nextAlias('t');
  const rows = nextAlias('r');
  const shared = nextAlias('m');
  const direct = shape === 'direct';
  const inner: Fragment[] = [];
  const column = direct ? (value: AggregatedValue): Fragment => valueOf(collection, table, value) : columnsOf(collection, table, rows, inner);
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
    return memberOutput(member, index, shared, (field) => aggregateField(field, column, filter));
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

/**
 * A `grouped` shared scan (`plan/ir.ts`): `(SELECT <members> FROM (SELECT col, count(*) AS n,
 * sum(a) AS s0, … FROM t WHERE <row predicate> [AND (<the members' wheres, OR'd>)] GROUP BY col)
 * AS g GROUP BY ()) AS m`, each member's calls over the groups its own `where` keeps — the same
 * `where`, rendered on the groups' column: a count is the sum of the groups' counts (0 for none),
 * a sum the sum of their sums, a min or max the min or max of theirs.
 */
function renderGroupedScan(
  { nextAlias, fieldValue }: CompileContext,
  { where, rowPredicate }: Pick<WhereRenderer, 'where' | 'rowPredicate'>,
  collection: Collection,
  members: readonly SelectAggregateField[],
  groupBy: Field,
): RenderedSharedScan {
  const table = nextAlias('t');
  const groups = nextAlias('g');
  const shared = nextAlias('m');
  const key = fieldValue(table, groupBy);
  const inner: Fragment[] = [key, sql`count(*) AS ${sql.ident('n')}`];
  const partials = new Map<string, Fragment>();
  /** The groups' column holding `fn(field)` of their rows (each computed once). */
  const partial = (fn: 'sum' | 'min' | 'max', field: Field): Fragment => {
    const name = `${fn} ${field.name}`;
    let column = partials.get(name);
    if (!column) {
      const alias = sql.ident(`s${partials.size}`);
      inner.push(sql`${AGGREGATE_FUNCTION[fn]}(${fieldValue(table, field)}) AS ${alias}`);
      column = sql`${groups}.${alias}`;
      partials.set(name, column);
    }
    return column;
  };
  const scopes: Fragment[] = [];
  let everyRow = false;
  const outputs = members.map((member, index) => {
    const filter = member.query.where ? where(member.query.where, groups) : null;
    if (member.query.where) scopes.push(where(member.query.where, table));
    else everyRow = true;
    const over = (call: Fragment): Fragment => (filter ? sql`${call} FILTER (WHERE ${filter})` : call);
    const field = (call: AggregateField): readonly [string, Fragment] => {
      switch (call.kind) {
        case 'typename':
          return [call.alias, jsonString(call.value)];
        case 'count':
          return [call.alias, sql`to_json(coalesce(${over(sql`sum(${groups}.${sql.ident('n')})`)}, 0))`];
        case 'function': {
          const fn = call.fn;
          if (fn !== 'sum' && fn !== 'min' && fn !== 'max') throw new Error(`${fn} does not combine across groups`);
          return [
            call.alias,
            jsonObject(
              call.items.map((leaf): readonly [string, Fragment] => {
                if (leaf.kind === 'typename') return [leaf.alias, jsonString(leaf.value)];
                if (leaf.kind === 'computed') throw new Error(`${leaf.field.name}: a computed field never groups (groupedBy)`);
                return [leaf.alias, jsonOf(over(sql`${AGGREGATE_FUNCTION[fn]}(${partial(fn, leaf.field)})`))];
              }),
            ),
          ];
        }
        default:
          return assertNever(call);
      }
    };
    return memberOutput(member, index, shared, field);
  });
  const conditions = [rowPredicate(collection, table)];
  if (!everyRow) conditions.push(sql`(${sql.join(scopes, sql` OR `)})`);
  const scan = sql`FROM ${sql.qualified(collection.schema, collection.table)} AS ${table} WHERE ${sql.join(conditions, sql` AND `)} GROUP BY ${key}`;
  // GROUP BY (): exactly one row, also when no row matches (no group).
  const from = sql`(SELECT ${sql.join(outputs.map((output) => output.select))} FROM (SELECT ${sql.join(inner)} ${scan}) AS ${groups} GROUP BY ()) AS ${shared}`;
  return { from, values: outputs.map((output) => output.value) };
}

/** A member's JSON object (`{"aggregate":{…}}`) as the column `a<index>` of the shared row, each call rendered by `call`. */
function memberOutput(
  member: SelectAggregateField,
  index: number,
  shared: Fragment,
  call: (field: AggregateField) => readonly [string, Fragment],
): { readonly select: Fragment; readonly value: Fragment } {
  const pairs = member.aggregate.map((item): readonly [string, Fragment] => {
    switch (item.kind) {
      case 'typename':
        return [item.alias, jsonString(item.value)];
      case 'aggregate':
        return [item.alias, jsonObject(item.fields.map(call))];
      case 'nodes':
        throw new Error('an aggregate with nodes never shares a scan');
      default:
        return assertNever(item);
    }
  });
  const alias = sql.ident(`a${index}`);
  return { select: sql`${jsonObject(pairs)} AS ${alias}`, value: sql`${shared}.${alias}` };
}
