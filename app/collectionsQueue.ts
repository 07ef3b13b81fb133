import type { Database } from '../db/index.js';
import { UserInputError } from './errors.js';

/**
 * The collections queue (issue 31): the account's late loans with what a collector needs, and
 * the aging summary per delinquency bucket (SPEC §12 R3). One parameterised statement each,
 * written for 100,000 loans:
 *
 * - A loan is late when it is in `servicing` and `arrears_since` (R3's date, migration 0019) is
 *   before the business date; its days past due are the difference. The late loans are a range
 *   of the index `loans_arrears_since (account_id, arrears_since)`, never a replay (the
 *   `amount_past_due` / `delinquency_bucket` computed fields replay each loan).
 * - The bucket is the product's `delinquency_buckets` (a loan without a product: the account's
 *   default product's), turned once into day ranges and joined, not a function call per loan.
 * - The amount past due is `loanql_stored_amount_past_due`'s figure (the unpaid principal and
 *   interest of the stored rows due before the day; tolerance not applied), summed inline.
 * - Only the page's rows get their amount, last payment, borrower and next task, unless the sort
 *   needs them for every late loan (amount past due, last payment, next task).
 * - The next task is the loan's open task (status not `completed`) due first — one without a due
 *   day after the dated ones — so the clerk sees which late loans have a follow-up planned, when,
 *   and which have none.
 *
 * The statements are fixed texts: a sort picks its ORDER BY from a closed table, every value
 * (account, day counts, bucket, search, limit, offset) is a parameter.
 */

/** Rows per page of the dashboard's queue. */
export const COLLECTIONS_PAGE_SIZE = 50;
/** At most this many rows in a download (the page says so when the queue is longer). */
export const COLLECTIONS_DOWNLOAD_CAP = 100_000;

export const COLLECTIONS_SORTS = ['days', 'amount_past_due', 'fees_due', 'name', 'last_payment', 'next_task'] as const;
export type CollectionsSort = (typeof COLLECTIONS_SORTS)[number];
export type SortDirection = 'asc' | 'desc';

/** What the queue is asked for: sort, filters. */
export interface CollectionsFilter {
  readonly sort: CollectionsSort;
  readonly direction: SortDirection;
  /** A bucket name of the product's buckets, or null for every late loan. */
  readonly bucket: string | null;
  /** Only loans at least this many days past due (1 and up; null: 1). */
  readonly minDays: number | null;
  /** Part of the loan's name (case-insensitive), or '' for any. */
  readonly search: string;
}

export const DEFAULT_COLLECTIONS_FILTER: CollectionsFilter = { sort: 'days', direction: 'desc', bucket: null, minDays: null, search: '' };

/** One late loan. Money and dates as PostgreSQL's exact text. */
export interface LateLoan {
  readonly id: string;
  readonly name: string;
  readonly daysPastDue: number;
  readonly bucket: string;
  readonly amountPastDue: string;
  readonly principalOutstanding: string | null;
  readonly feesDue: string | null;
  readonly lastPaymentDate: string | null;
  readonly lastPaymentAmount: string | null;
  readonly borrowerName: string | null;
  readonly borrowerEmail: string | null;
  readonly borrowerPhone: string | null;
  /** The loan's next open task (the one due first; undated after dated): its due day (null: none given) and name, or both null when it has no open task. */
  readonly nextTaskDue: string | null;
  readonly nextTaskName: string | null;
}

export interface CollectionsQueue {
  readonly businessDate: string;
  /** How many late loans match the filter, in all. */
  readonly total: number;
  readonly rows: readonly LateLoan[];
}

/** One bucket of the aging summary: loans in servicing whose days past due fall in it. */
export interface AgingBucket {
  readonly name: string;
  readonly count: number;
  readonly amountPastDue: string;
  readonly principalOutstanding: string;
}

export interface AgingSummary {
  readonly businessDate: string;
  readonly buckets: readonly AgingBucket[];
}

/** The end of a last bucket, in days: past any real loan (dates from 1900), and still a valid date before today. */
const NO_END = 1_000_000;
/** The ranges' key of loans without a product (an equality, so PostgreSQL can hash the join; IS NOT DISTINCT FROM cannot). */
const NO_PRODUCT = `'00000000-0000-0000-0000-000000000000'::uuid`;

/**
 * Each product's buckets as day ranges [lo, hi), and the account's default ones under product
 * NULL (loanql_loan_buckets: the default product's, else SPEC §12's). $1 is the account.
 */
const BUCKET_RANGES = `d AS (SELECT loanql_business_date($1) AS today),
  buckets_of AS (
    SELECT k.product_id, loanql_loan_buckets($1, k.product_id) AS buckets
      FROM (SELECT NULL::uuid AS product_id UNION ALL SELECT pr.id FROM products pr WHERE pr.account_id = $1) k),
  ranges AS (
    SELECT bo.product_id, coalesce(bo.product_id, ${NO_PRODUCT}) AS product_key, b.value->>'name' AS name, b.position,
           (b.value->>'from')::int AS lo,
           coalesce(lead((b.value->>'from')::int) OVER (PARTITION BY bo.product_id ORDER BY b.position), ${NO_END}) AS hi
      FROM buckets_of bo, jsonb_array_elements(bo.buckets) WITH ORDINALITY AS b(value, position))`;

/** The loan's bucket range (`ranges r`) for its days past due. */
const RANGE_OF = (loan: string, days: string) => `r.product_key = coalesce(${loan}.product_id, ${NO_PRODUCT}) AND ${days} >= r.lo AND ${days} < r.hi`;

/** The stored amount past due of loan `p` (loanql_stored_amount_past_due, inline). */
const AMOUNT_PAST_DUE = `LEFT JOIN LATERAL (
      SELECT coalesce(sum(s.payment - s.interest_paid - s.principal_paid), 0.00) AS amount
        FROM schedules s WHERE s.account_id = $1 AND s.loan_id = p.id AND s.due < p.today) apd ON true`;
/**
 * The borrower's last payment that is not reversed: a refund is credit paid back to them, not a
 * payment of theirs (it was shown as one, so a loan whose only standing payment was a refund read
 * as paid on that day instead of never).
 */
const LAST_PAYMENT = `LEFT JOIN LATERAL (
      SELECT pa.date, pa.amount FROM payments pa
       WHERE pa.account_id = $1 AND pa.loan_id = p.id AND pa.date_reversed IS NULL AND pa.type <> 'refund'
       ORDER BY pa.date DESC, pa.posted_at DESC, pa.id DESC LIMIT 1) lp ON true`;
/** The loan's first borrower (by when linked, then id). */
const BORROWER = `LEFT JOIN LATERAL (
      SELECT pe.name, pe.email, pe.phone FROM borrows bo JOIN people pe ON pe.account_id = bo.account_id AND pe.id = bo.person_id
       WHERE bo.account_id = $1 AND bo.loan_id = p.id ORDER BY bo.created_at, bo.id LIMIT 1) br ON true`;

/** The loan's next open task: due first, undated after dated (then by when made, id). */
const NEXT_TASK = `LEFT JOIN LATERAL (
      SELECT t.date_due, t.name FROM tasks t
       WHERE t.account_id = $1 AND t.loan_id = p.id AND t.status <> 'completed'
       ORDER BY t.date_due ASC NULLS LAST, t.created_at, t.id LIMIT 1) nt ON true`;

/** Each sort's ORDER BY, ties by id; whether it orders by a value the page would otherwise compute late. */
const SORT_ORDER: ReadonlyMap<string, { readonly order: string; readonly computed: boolean }> = new Map([
  ['days:desc', { order: 'p.days DESC, p.id', computed: false }],
  ['days:asc', { order: 'p.days ASC, p.id', computed: false }],
  ['fees_due:desc', { order: 'p.fees_due DESC NULLS LAST, p.id', computed: false }],
  ['fees_due:asc', { order: 'p.fees_due ASC NULLS LAST, p.id', computed: false }],
  ['name:asc', { order: 'p.name ASC, p.id', computed: false }],
  ['name:desc', { order: 'p.name DESC, p.id', computed: false }],
  ['amount_past_due:desc', { order: 'apd.amount DESC, p.id', computed: true }],
  ['amount_past_due:asc', { order: 'apd.amount ASC, p.id', computed: true }],
  // Never paid counts as the oldest payment.
  ['last_payment:desc', { order: 'lp.date DESC NULLS LAST, lp.amount DESC NULLS LAST, p.id', computed: true }],
  ['last_payment:asc', { order: 'lp.date ASC NULLS FIRST, lp.amount ASC NULLS FIRST, p.id', computed: true }],
  // Ascending: loans with no open task first (no follow-up planned), then by the next task's due
  // day, the oldest (most overdue) first, then open tasks without a due day. Descending: the reverse.
  ['next_task:asc', { order: '(nt.name IS NOT NULL) ASC, nt.date_due ASC NULLS LAST, p.id', computed: true }],
  ['next_task:desc', { order: '(nt.name IS NOT NULL) DESC, nt.date_due DESC NULLS FIRST, p.id', computed: true }],
]);

/**
 * The late loans of the filter: $2 minimum days (≥ 1), $3 bucket name or NULL, $4 ILIKE pattern
 * or NULL. A bucket also narrows the index range to the days its ranges cover.
 */
const LATE = `late AS (
    SELECT l.id, l.name, l.product_id, l.principal_outstanding, l.fees_due, d.today, d.today - l.arrears_since AS days
      FROM loans l, d
     WHERE l.account_id = $1 AND l.status = 'servicing'
       AND l.arrears_since <= d.today - greatest($2::int, 1, (SELECT min(r.lo) FROM ranges r WHERE r.name = $3::text))
       AND ($3::text IS NULL OR l.arrears_since > d.today - (SELECT max(r.hi) FROM ranges r WHERE r.name = $3::text))
       AND ($4::text IS NULL OR l.name ILIKE $4::text)),
  matching AS (
    SELECT late.*, r.name AS bucket FROM late JOIN ranges r ON ${RANGE_OF('late', 'late.days')}
     WHERE $3::text IS NULL OR r.name = $3::text)`;

/** The output columns, the amount past due and the last payment read from `from` (`apd`/`lp` laterals, or the page's own columns). */
const columns = (from: { amount: string; lastDate: string; lastAmount: string; taskDue: string; taskName: string }) => `p.id::text AS id, p.name, p.days, p.bucket, ${from.amount}::text AS amount_past_due,
         p.principal_outstanding::text AS principal_outstanding, p.fees_due::text AS fees_due,
         ${from.lastDate}::text AS last_payment_date, ${from.lastAmount}::text AS last_payment_amount,
         br.name AS borrower_name, br.email AS borrower_email, br.phone AS borrower_phone,
         ${from.taskDue}::text AS next_task_due, ${from.taskName} AS next_task_name, p.position`;

/** The statement for a sort: $5 limit, $6 offset. Built once per sort from the fixed parts above. */
function queueStatement(order: string, computed: boolean): string {
  const page = computed
    ? `page AS (
    SELECT p.*, apd.amount AS apd_amount, lp.date AS lp_date, lp.amount AS lp_amount, nt.date_due AS nt_due, nt.name AS nt_name,
           row_number() OVER (ORDER BY ${order}) AS position
      FROM matching p ${AMOUNT_PAST_DUE} ${LAST_PAYMENT} ${NEXT_TASK}
     ORDER BY ${order} LIMIT $5 OFFSET $6)`
    : `page AS (SELECT p.*, row_number() OVER (ORDER BY ${order}) AS position FROM matching p ORDER BY ${order} LIMIT $5 OFFSET $6)`;
  const rows = computed
    ? `SELECT ${columns({ amount: 'p.apd_amount', lastDate: 'p.lp_date', lastAmount: 'p.lp_amount', taskDue: 'p.nt_due', taskName: 'p.nt_name' })} FROM page p ${BORROWER}`
    : `SELECT ${columns({ amount: 'apd.amount', lastDate: 'lp.date', lastAmount: 'lp.amount', taskDue: 'nt.date_due', taskName: 'nt.name' })} FROM page p ${AMOUNT_PAST_DUE} ${LAST_PAYMENT} ${BORROWER} ${NEXT_TASK}`;
  return `WITH ${BUCKET_RANGES},
  ${LATE},
  ${page}
SELECT (SELECT today FROM d)::text AS business_date, (SELECT count(*) FROM matching)::int AS total, q.*
  FROM (SELECT 1) one LEFT JOIN (${rows}) q ON true
 ORDER BY q.position`;
}

const QUEUE_STATEMENTS: ReadonlyMap<string, string> = new Map([...SORT_ORDER].map(([key, sort]) => [key, queueStatement(sort.order, sort.computed)]));

/** `%text%` for ILIKE, the text's own `%`, `_` and `\` matched literally. */
function containsPattern(search: string): string {
  return `%${search.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}

interface QueueRow {
  business_date: string;
  total: number;
  id: string | null;
  name: string;
  days: number;
  bucket: string;
  amount_past_due: string;
  principal_outstanding: string | null;
  fees_due: string | null;
  last_payment_date: string | null;
  last_payment_amount: string | null;
  borrower_name: string | null;
  borrower_email: string | null;
  borrower_phone: string | null;
  next_task_due: string | null;
  next_task_name: string | null;
}

/**
 * The late loans matching `filter`, in its order, `limit` from `offset`, with how many match in
 * all. A bucket the account's products do not have matches nothing (check it first with
 * `bucketNames` to answer a 400).
 */
export async function collectionsQueue(db: Database, accountId: string, filter: CollectionsFilter, limit: number, offset: number): Promise<CollectionsQueue> {
  const statement = QUEUE_STATEMENTS.get(`${filter.sort}:${filter.direction}`);
  if (!statement) throw new UserInputError(`sort must be one of ${COLLECTIONS_SORTS.join(', ')}`, 400, new Map([['sort', 'unknown sort']]));
  const { rows } = await db.query<QueueRow>(statement, [
    accountId,
    filter.minDays ?? 1,
    filter.bucket,
    filter.search ? containsPattern(filter.search) : null,
    limit,
    offset,
  ]);
  const first = rows[0]!;
  return {
    businessDate: first.business_date,
    total: first.total,
    rows: rows
      .filter((row) => row.id !== null)
      .map((row) => ({
        id: row.id!,
        name: row.name,
        daysPastDue: Number(row.days),
        bucket: row.bucket,
        amountPastDue: row.amount_past_due,
        principalOutstanding: row.principal_outstanding,
        feesDue: row.fees_due,
        lastPaymentDate: row.last_payment_date,
        lastPaymentAmount: row.last_payment_amount,
        borrowerName: row.borrower_name,
        borrowerEmail: row.borrower_email,
        borrowerPhone: row.borrower_phone,
        nextTaskDue: row.next_task_due,
        nextTaskName: row.next_task_name,
      })),
  };
}

/**
 * Every bucket of the account's products (the default product's first, in its order), each
 * with the loans in servicing whose days past due fall in it — `current` (or whatever starts at
 * 0) counting those not late — their number, the sum of their amounts past due and of their
 * principal outstanding. A loan's amount past due is read only when its oldest unpaid row is
 * before the business date (otherwise it is 0).
 */
const AGING_SUMMARY = `WITH ${BUCKET_RANGES},
  servicing AS (
    SELECT l.id, l.product_id, l.principal_outstanding, d.today,
           CASE WHEN l.arrears_since < d.today THEN d.today - l.arrears_since ELSE 0 END AS days,
           l.oldest_unpaid_due < d.today AS owes
      FROM loans l, d WHERE l.account_id = $1 AND l.status = 'servicing'),
  amounts AS (
    SELECT x.id, x.product_id, x.days, coalesce(x.principal_outstanding, 0.00) AS principal_outstanding,
           CASE WHEN x.owes THEN (SELECT coalesce(sum(s.payment - s.interest_paid - s.principal_paid), 0.00)
                                    FROM schedules s WHERE s.account_id = $1 AND s.loan_id = x.id AND s.due < x.today)
                ELSE 0.00 END AS amount
      FROM servicing x)
SELECT (SELECT today FROM d)::text AS business_date, r.name, count(a.id)::int AS count,
       coalesce(sum(a.amount), 0.00)::text AS amount_past_due, coalesce(sum(a.principal_outstanding), 0.00)::text AS principal_outstanding
  FROM ranges r LEFT JOIN amounts a ON ${RANGE_OF('a', 'a.days')}
 GROUP BY r.name
 ORDER BY min((r.product_id IS NOT NULL)::int * 100 + r.position), r.name`;

export async function agingSummary(db: Database, accountId: string): Promise<AgingSummary> {
  const { rows } = await db.query<{ business_date: string; name: string; count: number; amount_past_due: string; principal_outstanding: string }>(AGING_SUMMARY, [accountId]);
  return {
    businessDate: rows[0]!.business_date,
    buckets: rows.map((row) => ({ name: row.name, count: Number(row.count), amountPastDue: row.amount_past_due, principalOutstanding: row.principal_outstanding })),
  };
}

const BUCKET_NAMES = `WITH ${BUCKET_RANGES}
SELECT r.name FROM ranges r GROUP BY r.name ORDER BY min((r.product_id IS NOT NULL)::int * 100 + r.position), r.name`;

/** The names of the account's buckets (the default product's first, in its order), for a filter. */
export async function bucketNames(db: Database, accountId: string): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>(BUCKET_NAMES, [accountId]);
  return rows.map((row) => row.name);
}
