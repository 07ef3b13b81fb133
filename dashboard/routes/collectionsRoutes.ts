import { Router, type Request, type Response } from 'express';
import type { Database } from '../../db/index.js';
import {
  agingSummary,
  bucketNames,
  collectionsQueue,
  COLLECTIONS_DOWNLOAD_CAP,
  COLLECTIONS_PAGE_SIZE,
  COLLECTIONS_SORTS,
  type CollectionsSort,
} from '../../app/collectionsQueue.js';
import { collectionsCsv } from '../collectionsCsv.js';
import { collectionsPage, defaultDirection, type CollectionsPageQuery } from '../pages/collectionsPage.js';
import { errorPage } from '../pages/errorPage.js';
import { sessionOf } from '../session.js';
import { PAGE_EXPECTED, pageNumberOf } from '../pageNumber.js';

const MAX_DAYS = 36_500;

/** A 400 page naming the query parameter that is wrong. */
class BadParameter extends Error {
  constructor(
    readonly parameter: string,
    readonly problem: string,
  ) {
    super(`${parameter}: ${problem}`);
  }
}

/** The page's parameters, each checked (a bucket against the account's buckets); a wrong one is a `BadParameter`. */
function queueQuery(req: Request, buckets: readonly string[]): CollectionsPageQuery {
  const query = new Map(Object.entries(req.query));
  const single = (name: string): string | undefined => {
    const value = query.get(name);
    if (value === undefined) return undefined;
    if (typeof value !== 'string') throw new BadParameter(name, 'give it once');
    if (value.includes('\u0000')) throw new BadParameter(name, 'contains a NUL character');
    return value;
  };
  const sortText = single('sort') || 'days';
  if (!(COLLECTIONS_SORTS as readonly string[]).includes(sortText)) throw new BadParameter('sort', `expected one of ${COLLECTIONS_SORTS.join(', ')}`);
  const sort = sortText as CollectionsSort;
  const dir = single('dir') || defaultDirection(sort);
  if (dir !== 'asc' && dir !== 'desc') throw new BadParameter('dir', 'expected asc or desc');
  const bucket = single('bucket') || null;
  if (bucket !== null && !buckets.includes(bucket)) throw new BadParameter('bucket', `expected one of ${buckets.join(', ')}`);
  const minDaysText = single('min_days') || null;
  const minDays = minDaysText === null ? null : /^\d{1,5}$/.test(minDaysText) ? Number(minDaysText) : NaN;
  if (minDays !== null && !(minDays >= 1 && minDays <= MAX_DAYS)) throw new BadParameter('min_days', `expected a whole number of days from 1 to ${MAX_DAYS}`);
  const search = (single('q') ?? '').trim();
  if (search.length > 200) throw new BadParameter('q', 'at most 200 characters');
  const page = pageNumberOf(single('page'));
  if (page === null) throw new BadParameter('page', PAGE_EXPECTED);
  return { sort, direction: dir, bucket, minDays, search, page };
}

/**
 * Collections (issue 31): `GET /collections`, the aging summary and the queue of late loans
 * (`app/collectionsQueue.ts`: one statement each), and `GET /collections.csv`, every late loan of
 * the same filter and sort (up to `COLLECTIONS_DOWNLOAD_CAP`) as a CSV attachment named after
 * the business date. A wrong parameter is a 400 page naming it, for both.
 */
export function collectionsRoutes(db: Database): Router {
  const router = Router();

  const refuse = (res: Response, error: unknown, what: string): void => {
    if (!(error instanceof BadParameter)) throw error;
    res.status(400).type('html').send(errorPage(`The ${what} could not be made`, `The parameter “${error.parameter}” is wrong: ${error.problem}.`, sessionOf(res).viewer));
  };

  router.get('/collections', async (req, res) => {
    const session = sessionOf(res);
    const accountId = session.admin.accountId;
    const summary = await agingSummary(db, accountId);
    let query: CollectionsPageQuery;
    try {
      query = queueQuery(req, summary.buckets.map((bucket) => bucket.name));
    } catch (error) {
      return refuse(res, error, 'collections queue');
    }
    const queue = await collectionsQueue(db, accountId, query, COLLECTIONS_PAGE_SIZE, (query.page - 1) * COLLECTIONS_PAGE_SIZE);
    res.type('html').send(collectionsPage(session.viewer, { summary, queue, query, pageSize: COLLECTIONS_PAGE_SIZE, downloadCap: COLLECTIONS_DOWNLOAD_CAP }));
  });

  router.get('/collections.csv', async (req, res) => {
    const session = sessionOf(res);
    const accountId = session.admin.accountId;
    let query: CollectionsPageQuery;
    try {
      query = queueQuery(req, await bucketNames(db, accountId));
    } catch (error) {
      return refuse(res, error, 'download');
    }
    const queue = await collectionsQueue(db, accountId, query, COLLECTIONS_DOWNLOAD_CAP, 0);
    res
      .type('text/csv; charset=utf-8; header=present')
      .set('Content-Disposition', `attachment; filename="collections-${queue.businessDate}.csv"`)
      .send(collectionsCsv(queue.rows, session.viewer.currency));
  });

  return router;
}
