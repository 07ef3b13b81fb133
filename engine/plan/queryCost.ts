import type { AggregateSelection, BoolExp, ListQuery, OperationPlan, Selection } from './ir.js';
import { assertNever } from './ir.js';
import type { Param } from './params.js';

/**
 * A static estimate of how much work one statement asks of PostgreSQL, from the plan alone
 * (no database round trip), checked against `MAX_QUERY_COST` before the statement runs.
 *
 * The unit is "one correlated subquery evaluated once". Every list, aggregate and object
 * relationship is a subquery run once per row of its parent, so its cost is multiplied by the
 * rows its ancestors are assumed to return:
 *
 * - a root list returns its literal `limit`, at most `ROOT_ROWS`; a `limit` given as a variable
 *   or no `limit` counts as `ROOT_ROWS`;
 * - a nested list (an array relationship) returns its literal `limit`, at most `FAN_OUT` rows;
 *   an object relationship and a by-pk root field one row;
 * - a `where` through a relationship is a subquery evaluated for each candidate row of the table
 *   it filters, which is why filters on aggregates and unlimited lists are the expensive ones:
 *   each hop costs `FILTER_HOP` × the rows its own parent is assumed to return, times
 *   `FAN_OUT` more for every array relationship walked.
 *
 * The constants are deliberately rough; what matters is that the cost grows with aliases ×
 * nesting × list sizes × relationship fan-out, so that a request multiplying them (dozens of
 * aliases of a self-joining filter, hundreds of nested aliases) is refused while the documented
 * patterns and the benchmark queries stay far below the limit (see `tests/engine/limits.test.ts`).
 */
export const ROOT_ROWS = 100;
export const FAN_OUT = 10;
export const FILTER_HOP = 10;

export function queryCost(plan: OperationPlan): number {
  let total = 0;
  for (const field of plan.rootFields) {
    // A shared scan's member costs what the aggregate it came from costs (the estimate is the same before and after the passes).
    const root = field.kind === 'sharedAggregate' ? plan.sharedScans[field.scan]!.members[field.member]! : field;
    switch (root.kind) {
      case 'typename':
        break;
      case 'selectByPk':
        total += 1 + selectionCost(root.selection, 1);
        break;
      case 'select': {
        const rows = rowsOf(root.query, ROOT_ROWS);
        total += 1 + whereCost(root.query.where, ROOT_ROWS) + orderCost(root.query, ROOT_ROWS) + selectionCost(root.selection, rows);
        break;
      }
      case 'selectAggregate':
        total += 1 + whereCost(root.query.where, ROOT_ROWS) + orderCost(root.query, ROOT_ROWS, root.aggregate) + aggregateCost(root.aggregate, rowsOf(root.query, ROOT_ROWS));
        break;
      default:
        assertNever(root);
    }
  }
  return total;
}

/** The cost of evaluating `selection` once for each of `parentRows` rows. */
function selectionCost(selection: Selection, parentRows: number): number {
  let total = 0;
  for (const item of selection) {
    switch (item.kind) {
      case 'column':
      case 'typename':
        break;
      case 'computed':
        // A function call per row: priced like a nested object read.
        total += parentRows;
        break;
      case 'object':
        total += parentRows * (1 + selectionCost(item.selection, 1));
        break;
      case 'array':
      case 'computedRows':
        // A table computed field: the function's rows, priced as an array relationship's.
        total += parentRows * (1 + whereCost(item.query.where, FAN_OUT) + orderCost(item.query, FAN_OUT) + selectionCost(item.selection, rowsOf(item.query, FAN_OUT)));
        break;
      case 'arrayAggregate':
        total += parentRows * (1 + whereCost(item.query.where, FAN_OUT) + orderCost(item.query, FAN_OUT, item.aggregate) + aggregateCost(item.aggregate, rowsOf(item.query, FAN_OUT)));
        break;
      default:
        assertNever(item);
    }
  }
  return total;
}

function aggregateCost(aggregate: AggregateSelection, rows: number): number {
  let total = 0;
  for (const item of aggregate) {
    if (item.kind === 'nodes') total += selectionCost(item.selection, rows);
    // A computed field aggregated (`sum { payoff }`): its function called for every row, priced as when listed.
    else if (item.kind === 'aggregate')
      for (const field of item.fields) if (field.kind === 'function') for (const value of field.items) if (value.kind === 'computed') total += rows;
  }
  return total;
}

/** The cost of a filter's relationship hops, evaluated for each of `candidateRows` rows. */
function whereCost(where: BoolExp | null, candidateRows: number): number {
  if (!where) return 0;
  switch (where.kind) {
    case 'and':
    case 'or':
      return where.items.reduce((sum, item) => sum + whereCost(item, candidateRows), 0);
    case 'not':
      return whereCost(where.item, candidateRows);
    case 'compare':
    case 'in':
    case 'isNull':
    case 'jsonb':
    case 'arrayContainment':
    case 'computed':
      return 0;
    case 'cast':
      return whereCost(where.where, candidateRows);
    case 'computedValue':
      // A function call per candidate row, like a filter's hop.
      return FILTER_HOP * candidateRows + whereCost(where.where, candidateRows);
    case 'columns':
      return 0;
    case 'exists':
      // An uncorrelated or correlated probe of another collection, like a filter's hop.
      return FILTER_HOP * candidateRows + whereCost(where.where, candidateRows);
    case 'aggregate':
      // A correlated aggregate over the related rows, its filter evaluated for each of them.
      return FILTER_HOP * candidateRows + whereCost(where.filter, candidateRows * FAN_OUT);
    case 'relationship': {
      const rows = where.relationship.kind === 'array' ? FAN_OUT : 1;
      return FILTER_HOP * candidateRows + whereCost(where.where, candidateRows * rows);
    }
    default:
      return assertNever(where);
  }
}

/**
 * Ordering by an array relationship's aggregate is a correlated subquery evaluated for each
 * candidate row (before any limit), like a filter's hop; an aggregate of a computed field
 * (`{loans_aggregate: {sum: {payoff: desc}}}`) also calls its function for each related row
 * (`FAN_OUT` of them a candidate), priced as when listed or aggregated: one a row. An
 * aggregate's rows are ordered only when it pages, has a distinct_on or lists its nodes
 * (otherwise the order is not compiled).
 */
function orderCost(query: ListQuery, candidateRows: number, aggregate: AggregateSelection | null = null): number {
  if (aggregate && !query.limit && !query.offset && !query.distinctOn.length && !aggregate.some((item) => item.kind === 'nodes')) return 0;
  const itemCost = (item: ListQuery['orderBy'][number]): number => {
    if (item.kind !== 'aggregate') return 0;
    const computedCalls = item.field && !('source' in item.field) ? candidateRows * FAN_OUT : 0;
    return FILTER_HOP * candidateRows + computedCalls;
  };
  return query.orderBy.reduce((sum, item) => sum + itemCost(item), 0);
}

/** The rows a list is assumed to return: its literal limit, at most `assumed`. */
function rowsOf(query: ListQuery, assumed: number): number {
  const limit = literal(query.limit);
  return limit === null ? assumed : Math.min(limit, assumed);
}

function literal(param: Param | null): number | null {
  return param?.kind === 'const' && typeof param.value === 'number' ? param.value : null;
}
