import type { Metadata } from '../../metadata/index.js';
import type { SharedScan } from '../plan/ir.js';
import { compileContext } from './compileContext.js';
import { jsonArray, jsonObject, jsonString } from './jsonText.js';
import { aggregateRenderer } from './renderAggregates.js';
import { orderByRenderer } from './renderOrderBy.js';
import { selectionRenderer } from './renderSelection.js';
import { renderSharedScan, type RenderedSharedScan } from './renderSharedScan.js';
import { whereRenderer } from './renderWhere.js';

/**
 * The select compiler's pieces, shared by the query compiler (`compileOperation`) and the
 * mutation compiler (`compileMutation.ts`, for `where` and `returning`). One instance per
 * statement: its compile context's alias counter makes the aliases of that statement.
 */
export type SelectCompiler = ReturnType<typeof selectCompiler>;

export function selectCompiler(metadata: Metadata) {
  const context = compileContext(metadata);
  const filters = whereRenderer(context);
  const order = orderByRenderer(context, filters);
  // Rows nest aggregates and aggregates nest rows (`nodes`): the selection renderer reaches the
  // aggregate renderer, made just below, through this function.
  const selection = selectionRenderer(context, filters, order, (...args) => aggregates.aggregate(...args));
  const aggregates = aggregateRenderer(context, order, selection);
  const { nextAlias, key, fieldOutput, fieldValue, tenantPredicate, param } = context;
  const { where, roleFilter, rowPredicate } = filters;
  const { rowObject, list } = selection;
  const { aggregate } = aggregates;
  const sharedScan = (scan: SharedScan): RenderedSharedScan => renderSharedScan(context, filters, aggregates, scan);
  return { nextAlias, key, jsonObject, jsonArray, jsonString, fieldOutput, fieldValue, tenantPredicate, rowPredicate, param, where, roleFilter, rowObject, list, aggregate, sharedScan };
}
