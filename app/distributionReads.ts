import { LosslessNumber, parse, stringify } from 'lossless-json';
import type { Database } from '../db/index.js';
import type { GraphEngine, Principal } from '../engine/index.js';
import { UserInputError } from './errors.js';
import { dayParameter } from './ledgerReads.js';

/**
 * `GET /api/distributions?from=&to=&loan_id=&limit=&offset=` (SPEC §12 R10, issue 32):
 * distribution lines by date (an adjustment's date is its reversal's `date_reversed`, else the day it was recorded), oldest first,
 * with their count and sum, a page at a time (`limit`, `offset`, `next`).
 * Read through the engine of the key's role, so the role's filter on `distributions` applies
 * exactly as in GraphQL: an investor key gets its own lines only (`person_id = key.person_id`),
 * an admin, read-only or servicer key every line of the account.
 */
const LINES = `query Distributions($where: distributions_bool_exp!, $limit: Int!, $offset: Int!) {
  distributions(where: $where, order_by: [{date: asc}, {created_at: asc}, {payment_id: asc}, {component: asc}, {funding_source_id: asc_nulls_last}, {id: asc}], limit: $limit, offset: $offset) {
    id loan_id payment_id funding_source_id person_id component amount adjustment cause_payment_id date created_at
  }
  total: distributions_aggregate(where: $where) { aggregate { count sum { amount } } }
}`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface DistributionQuery {
  readonly from: string | null;
  readonly to: string | null;
  readonly loanId: string | null;
  /** The page: at most `limit` lines after the first `offset` (the route's `limit`, `offset`). */
  readonly limit: number;
  readonly offset: number;
}

/** The query string of the route with its page, or a 400 naming the parameter. */
export function distributionQuery(params: ReadonlyMap<string, unknown>, page: { readonly limit: number; readonly offset: number }): DistributionQuery {
  const from = dayParameter('from', params.get('from'));
  const to = dayParameter('to', params.get('to'));
  const loanId = params.get('loan_id');
  if (loanId !== undefined && (typeof loanId !== 'string' || !UUID.test(loanId))) {
    throw new UserInputError('loan_id must be a loan id (a uuid)', 400, new Map([['loan_id', 'expected a uuid']]));
  }
  if (from !== null && to !== null && from > to) throw new UserInputError('from must not be after to', 400, new Map([['from', 'after to']]));
  return { from, to, loanId: (loanId as string | undefined) ?? null, limit: page.limit, offset: page.offset };
}

/** The route's address of the page after `query`'s, or null when `query`'s page ends the lines. */
function nextPage(query: DistributionQuery, count: number, returned: number): string | null {
  if (returned === 0 || query.offset + returned >= count) return null;
  const params = new URLSearchParams();
  if (query.from !== null) params.set('from', query.from);
  if (query.to !== null) params.set('to', query.to);
  if (query.loanId !== null) params.set('loan_id', query.loanId);
  params.set('limit', String(query.limit));
  params.set('offset', String(query.offset + returned));
  return `/api/distributions?${params.toString()}`;
}

/** The lines as JSON text: `{distributions: [...], count, total}`, amounts with their exact digits. */
export async function distributionsJson(db: Database, engine: GraphEngine, principal: Principal, query: DistributionQuery): Promise<string> {
  const where: Record<string, unknown>[] = [];
  if (query.from !== null) where.push({ date: { _gte: query.from } });
  if (query.to !== null) where.push({ date: { _lte: query.to } });
  if (query.loanId !== null) where.push({ loan_id: { _eq: query.loanId } });
  const variables = { where: { _and: where }, limit: query.limit, offset: query.offset };
  const response = parse(await engine.execute(db, { query: LINES, variables }, principal)) as {
    data: { distributions: unknown[]; total: { aggregate: { count: unknown; sum: { amount: unknown } } } };
  };
  const { count, sum } = response.data.total.aggregate;
  // `count` and `total` are of every line the filters select; `distributions` is the page, and
  // `next` the address of the following one (null on the last): never a silent part of the lines.
  const lines = response.data.distributions;
  return stringify({
    from: query.from,
    to: query.to,
    loan_id: query.loanId,
    count,
    total: sum.amount ?? new LosslessNumber('0.00'),
    limit: query.limit,
    offset: query.offset,
    next: nextPage(query, Number(count), lines.length),
    distributions: lines,
  })!;
}
