import type { Database, Queryable } from '../db/index.js';
import { csvDocument, numberCell, textCell } from './csv.js';
import { UserInputError } from './errors.js';
import { isUuid, statementPeriod, type ReceivedAmounts, type StatementPeriod } from './investorStatements.js';

/**
 * The remittance run (issue 32): what the lender pays each investor for a period, and marking a
 * period remitted (migration 0025). What a run owes is every investor line (a distribution with
 * a funding source) not yet stamped with a remittance and dated on or before the period's last
 * day — lines before its first day too, so an adjustment recorded for a period already remitted,
 * or a line of a day no run covered, is paid by the next run. Marking records the remittance and
 * stamps those lines in one transaction, `STAMP_BATCH` lines a statement (each statement adds what
 * it stamped to the recorded total), under a lock of the account's row, so two marks never stamp
 * the same line and a mark is all or nothing. Periods are remitted in order: a period that overlaps
 * one already remitted, or ends before one, is a 409; so is a mark while another one runs.
 */

/** One investor's part of a run or of a recorded remittance. */
export interface RemittanceInvestor extends ReceivedAmounts {
  readonly personId: string;
  readonly name: string;
  readonly lineCount: number;
  /** The earliest line's date: before the period's first day when it pays late adjustments. */
  readonly earliestDate: string;
}

export interface RemittanceSummary {
  readonly id: string;
  readonly period: StatementPeriod;
  readonly remittedAt: string;
  readonly remittedBy: string;
  readonly total: string;
  readonly lineCount: number;
}

export interface RemittanceRun {
  readonly period: StatementPeriod;
  readonly businessDate: string;
  readonly currency: string;
  readonly investors: readonly RemittanceInvestor[];
  readonly totals: ReceivedAmounts & { readonly lineCount: number };
  /** Remittances already recorded that overlap the period. */
  readonly remitted: readonly RemittanceSummary[];
}

export interface Remittance extends RemittanceSummary {
  readonly currency: string;
  readonly investors: readonly RemittanceInvestor[];
  readonly totals: ReceivedAmounts & { readonly lineCount: number };
}

/** Who marks a run: an API key, a dashboard admin, or a command line (`cli <user>`); never a secret is stored. */
export type Remitter = { readonly keyId: string } | { readonly adminId: string } | { readonly commandLine: string };

/**
 * Per investor and in all, over the lines `lines` (a CTE the caller defines; $1 is the account):
 * each with `person_id`, `component`, `adjustment`, `amount`, `date` (the day it counts on) and
 * `n`, 1 for a line and −1 for a line taken back out of the rows before (the run's lines dated
 * before their source's funding day, `RUN`). A day counts for the earliest date while it has lines.
 */
const AMOUNTS_BY_INVESTOR = `
  line_days AS (
    SELECT l.person_id, min(l.date) AS earliest_date
      FROM (SELECT l.person_id, l.date FROM lines l GROUP BY l.person_id, l.date HAVING sum(l.n) > 0) l
     GROUP BY l.person_id),
  by_investor AS (
    SELECT l.person_id, pe.name,
           coalesce(sum(l.amount) FILTER (WHERE l.component = 'principal' AND NOT l.adjustment), 0.00) AS principal,
           coalesce(sum(l.amount) FILTER (WHERE l.component = 'interest' AND NOT l.adjustment), 0.00) AS interest,
           coalesce(sum(l.amount) FILTER (WHERE l.component = 'fees' AND NOT l.adjustment), 0.00) AS fees,
           coalesce(sum(l.amount) FILTER (WHERE l.adjustment), 0.00) AS adjustments,
           coalesce(sum(l.amount), 0.00) AS total, sum(l.n)::int AS line_count, min(ld.earliest_date) AS earliest_date
      FROM lines l JOIN people pe ON pe.account_id = $1 AND pe.id = l.person_id
      LEFT JOIN line_days ld ON ld.person_id = l.person_id
     GROUP BY l.person_id, pe.name
    HAVING sum(l.n) > 0)`;

const AMOUNTS_JSON = `
  'investors', coalesce((SELECT json_agg(json_build_object(
      'person_id', b.person_id, 'name', b.name, 'principal', b.principal::text, 'interest', b.interest::text, 'fees', b.fees::text,
      'adjustments', b.adjustments::text, 'total', b.total::text, 'line_count', b.line_count, 'earliest_date', b.earliest_date)
      ORDER BY b.name, b.person_id) FROM by_investor b), '[]'::json),
  'totals', (SELECT json_build_object(
      'principal', coalesce(sum(b.principal), 0.00)::text, 'interest', coalesce(sum(b.interest), 0.00)::text,
      'fees', coalesce(sum(b.fees), 0.00)::text, 'adjustments', coalesce(sum(b.adjustments), 0.00)::text,
      'total', coalesce(sum(b.total), 0.00)::text, 'line_count', coalesce(sum(b.line_count), 0)::int) FROM by_investor b)`;

const SUMMARY_JSON = (r: string) =>
  `json_build_object('id', ${r}.id, 'period_from', ${r}.period_from, 'period_to', ${r}.period_to, 'remitted_at', ${r}.remitted_at,
     'remitted_by', ${r}.remitted_by, 'total', ${r}.total::text, 'line_count', ${r}.line_count)`;

/**
 * The lines a run of the period ending $2 pays: unstamped investor lines counting on or before it.
 * A line counts on its own date, or on its source's funding day when that is later (the
 * statement's rule, `app/investorStatements.ts`: a payment's line of a source whose `date_funded`
 * was moved past it, an adjustment of a reversal dated before the funding): so a run pays, period
 * by period, what the investor's statements show. Such lines are rare, and the run reads the
 * others from `distributions_unremitted_by_person` alone (migration 0066: no `funding_source_id`
 * in it): they are read again by their sources (`early`), taken back at their own date (n = −1)
 * and counted on the funding day when that is within the run (n = 1).
 */
const UNREMITTED = `
  early AS (
    SELECT d.person_id, d.component, d.adjustment, d.amount, d.date, f.date_funded
      FROM funding_sources f
      JOIN distributions d ON d.account_id = $1 AND d.loan_id = f.loan_id AND d.date < f.date_funded
                          AND d.funding_source_id = f.id AND d.remittance_id IS NULL
     WHERE f.account_id = $1 AND f.date_funded IS NOT NULL),
  lines AS (
    SELECT d.person_id, d.component, d.adjustment, d.amount, d.date, 1 AS n FROM distributions d
     WHERE d.account_id = $1 AND d.remittance_id IS NULL AND d.funding_source_id IS NOT NULL AND d.date <= $2::date
    UNION ALL
    SELECT e.person_id, e.component, e.adjustment, -e.amount, e.date, -1 FROM early e WHERE e.date <= $2::date
    UNION ALL
    SELECT e.person_id, e.component, e.adjustment, e.amount, e.date_funded, 1 FROM early e WHERE e.date_funded <= $2::date)`;

/** $1 account, $2 to, $3 from. */
const RUN = `
WITH ${UNREMITTED},
${AMOUNTS_BY_INVESTOR}
SELECT json_build_object(
  'business_date', loanql_business_date($1), 'currency', (SELECT a.currency FROM accounts a WHERE a.id = $1),
  ${AMOUNTS_JSON},
  'remitted', coalesce((SELECT json_agg(${SUMMARY_JSON('r')} ORDER BY r.period_from)
      FROM remittances r WHERE r.account_id = $1 AND r.period_from <= $2::date AND r.period_to >= $3::date), '[]'::json))::text AS body`;

/** $1 account, $2 remittance. */
const RECORDED = `
WITH lines AS (
    SELECT d.person_id, d.component, d.adjustment, d.amount, greatest(d.date, coalesce(f.date_funded, d.date)) AS date, 1 AS n
      FROM distributions d LEFT JOIN funding_sources f ON f.account_id = $1 AND f.id = d.funding_source_id
     WHERE d.account_id = $1 AND d.remittance_id = $2),
${AMOUNTS_BY_INVESTOR}
SELECT json_build_object('remittance', ${SUMMARY_JSON('r')}, 'currency', a.currency, ${AMOUNTS_JSON})::text AS body
  FROM remittances r JOIN accounts a ON a.id = r.account_id WHERE r.account_id = $1 AND r.id = $2`;

/**
 * $1 account, $2 to, $3 from, $4 key id, $5 admin id, $6 command-line user: the remittance, at 0.00 and no lines
 * until its lines are stamped (`STAMP`, same transaction). No row when who marks is not of the account.
 */
const RECORD = `
WITH who AS (
    SELECT coalesce((SELECT 'key ' || k.prefix || ' (' || k.name || ')' FROM api_keys k WHERE k.account_id = $1 AND k.id = $4::uuid),
                    (SELECT 'admin ' || ad.email FROM admins ad WHERE ad.account_id = $1 AND ad.id = $5::uuid),
                    'cli ' || $6::text) AS text)
INSERT INTO remittances (account_id, period_from, period_to, remitted_by, remitted_by_key_id, remitted_by_admin_id, total, line_count)
SELECT $1, $3::date, $2::date, who.text, $4::uuid, $5::uuid, 0.00, 0 FROM who WHERE who.text IS NOT NULL
RETURNING id::text`;

/**
 * The most lines one statement of a mark stamps. Each stamped line is a new row version and an
 * entry in each of the table's seven indexes it is in: about 35 µs a line on PostgreSQL 15, so
 * 10,000 lines take about 0.35 s (0.7 s on a busy server), well inside any sensible
 * `statement_timeout` — a first run over years of history (~200,000 lines) stamped in one statement
 * took 7–14 s and failed at the 10 s default.
 */
export const STAMP_BATCH = 10_000;

/**
 * One step of a mark: $1 account, $2 to, $3 remittance, ($4, $5) the (date, id) of the last line
 * stamped so far (a line's place in the run), $6 the most lines to stamp. Stamps the next unstamped
 * investor lines the run owes in that order and adds them to the remittance's total and count in
 * the same statement, so the recorded total is always the sum of the lines stamped. Returns how
 * many it took (no row when none) and the last one's place. The lines are updated by `ctid` (a TID
 * scan, in heap order): a join by id chose a sequential scan of the whole table for each step, and
 * `id = ANY` through the primary key took twice as long on PGlite as this. A row stamped meanwhile
 * has another `ctid` and fails `remittance_id IS NULL` when PostgreSQL re-checks it: never twice.
 */
const STAMP = `
WITH lines AS (
    SELECT d.ctid, d.id, d.date, d.amount FROM distributions d
     WHERE d.account_id = $1 AND d.remittance_id IS NULL AND d.funding_source_id IS NOT NULL AND d.date <= $2::date
       AND d.date >= $4::date AND (d.date, d.id) > ($4::date, $5::uuid)
       AND NOT EXISTS (SELECT FROM funding_sources f WHERE f.account_id = $1 AND f.id = d.funding_source_id AND f.date_funded > $2::date)
     ORDER BY d.date, d.id LIMIT $6),
  stamped AS (
    UPDATE distributions d SET remittance_id = $3::uuid
     WHERE d.ctid = ANY (ARRAY(SELECT l.ctid FROM lines l)) AND d.account_id = $1 AND d.remittance_id IS NULL
    RETURNING d.amount),
  recorded AS (
    UPDATE remittances r SET total = r.total + (SELECT coalesce(sum(s.amount), 0.00) FROM stamped s), line_count = r.line_count + (SELECT count(*) FROM stamped)
     WHERE r.account_id = $1 AND r.id = $3::uuid)
SELECT (SELECT count(*) FROM lines)::int AS taken, last.date::text AS last_date, last.id::text AS last_id
  FROM (SELECT l.date, l.id FROM lines l ORDER BY l.date DESC, l.id DESC LIMIT 1) last`;

/** Before the first line of any run: the place a mark's first step starts after. */
const FIRST_PLACE = { date: '-infinity', id: '00000000-0000-0000-0000-000000000000' };

interface AmountsJson {
  investors: {
    person_id: string;
    name: string;
    principal: string;
    interest: string;
    fees: string;
    adjustments: string;
    total: string;
    line_count: number;
    earliest_date: string;
  }[];
  totals: ReceivedAmounts & { line_count: number };
}

interface SummaryJson {
  id: string;
  period_from: string;
  period_to: string;
  remitted_at: string;
  remitted_by: string;
  total: string;
  line_count: number;
}

function investorsOf(json: AmountsJson): { investors: RemittanceInvestor[]; totals: ReceivedAmounts & { lineCount: number } } {
  const { line_count: lineCount, ...totals } = json.totals;
  return {
    investors: json.investors.map((investor) => ({
      personId: investor.person_id,
      name: investor.name,
      principal: investor.principal,
      interest: investor.interest,
      fees: investor.fees,
      adjustments: investor.adjustments,
      total: investor.total,
      lineCount: investor.line_count,
      earliestDate: investor.earliest_date,
    })),
    totals: { ...totals, lineCount },
  };
}

function summaryOf(json: SummaryJson): RemittanceSummary {
  return {
    id: json.id,
    period: { from: json.period_from, to: json.period_to },
    remittedAt: json.remitted_at,
    remittedBy: json.remitted_by,
    total: json.total,
    lineCount: json.line_count,
  };
}

/** What the lender owes each investor for `period` (nothing is written). */
export async function remittanceRun(db: Database, accountId: string, period: StatementPeriod): Promise<RemittanceRun> {
  const { rows } = await db.query<{ body: string }>(RUN, [accountId, period.to, period.from], { reusable: true });
  const json = JSON.parse(rows[0]!.body) as AmountsJson & { business_date: string; currency: string; remitted: SummaryJson[] };
  return { period, businessDate: json.business_date, currency: json.currency, ...investorsOf(json), remitted: json.remitted.map(summaryOf) };
}

/** A recorded remittance with what it paid each investor (its stamped lines); null when there is none of that id. */
export async function findRemittance(db: Database, accountId: string, remittanceId: string): Promise<Remittance | null> {
  if (!isUuid(remittanceId)) return null;
  const { rows } = await db.query<{ body: string }>(RECORDED, [accountId, remittanceId], { reusable: true });
  if (!rows[0]) return null;
  const json = JSON.parse(rows[0].body) as AmountsJson & { remittance: SummaryJson; currency: string };
  return { ...summaryOf(json.remittance), currency: json.currency, ...investorsOf(json) };
}

/** The account's recorded remittances, latest period first. */
export async function listRemittances(db: Database, accountId: string, limit = 50): Promise<RemittanceSummary[]> {
  const { rows } = await db.query<{ body: string }>(
    `SELECT ${SUMMARY_JSON('r')}::text AS body FROM remittances r WHERE r.account_id = $1 ORDER BY r.period_to DESC, r.id LIMIT $2`,
    [accountId, limit],
  );
  return rows.map((row) => summaryOf(JSON.parse(row.body) as SummaryJson));
}

/** How long a mark waits for another mark of the account to end (`lock_timeout`, below any sensible `statement_timeout`). */
const MARK_LOCK_WAIT = '2s';

/**
 * One mark at a time per account: the account's row locked (NO KEY UPDATE: the account's other
 * writes, which only reference it, go on) until the mark commits; its business date. A mark waits
 * up to `MARK_LOCK_WAIT` for another one to end — a double click on the dashboard's button then
 * hears that the period was remitted — and is a 409 after that: a mark of a long history takes
 * seconds, and waiting on until the statement timeout was a 500 (until session 33).
 */
async function lockForMark(tx: Queryable, accountId: string): Promise<string> {
  // set_config(…, true): SET LOCAL with the value as a parameter, never spliced into the text.
  await tx.query(`SELECT set_config('lock_timeout', $1, true)`, [MARK_LOCK_WAIT]);
  try {
    const { rows } = await tx.query<{ today: string }>(`SELECT loanql_business_date(a.id)::text AS today FROM accounts a WHERE a.id = $1 FOR NO KEY UPDATE`, [accountId]);
    await tx.query('SET LOCAL lock_timeout TO DEFAULT');
    return rows[0]!.today;
  } catch (error) {
    if ((error as { code?: unknown }).code !== '55P03') throw error;
    throw new UserInputError('another mark of this account is running now (or its settings are being changed); nothing was written: when it has ended, the run shows what is left to pay', 409);
  }
}

/** What the clerk was shown of a run: its total and line count (a mark may require the run still owes exactly that). */
export interface RunShown {
  readonly total: string;
  readonly lineCount: number;
}

const MARK_FIELDS = ['from', 'to', 'total', 'line_count'];
/** A run's total as shown: an amount in cents (also `loanql remittance mark --total`). */
export const SHOWN_TOTAL = /^-?\d{1,15}(\.\d{1,2})?$/;

/** `total` and `line_count` of a mark's body: both or neither (null), or a 400 naming each wrong one. */
function runShown(fields: ReadonlyMap<string, unknown>): RunShown | null {
  const total = fields.get('total');
  const lineCount = fields.get('line_count');
  if (total === undefined && lineCount === undefined) return null;
  const problems = new Map<string, string>();
  if (total === undefined) problems.set('total', "required with line_count: the run's total as shown");
  else if (typeof total !== 'string' && typeof total !== 'number') problems.set('total', 'expected an amount such as 1234.56');
  else if (!SHOWN_TOTAL.test(String(total))) problems.set('total', `expected an amount in cents such as 1234.56, not ${JSON.stringify(String(total))}`);
  const count = typeof lineCount === 'string' && /^\d{1,9}$/.test(lineCount) ? Number(lineCount) : Number.isSafeInteger(lineCount) && (lineCount as number) >= 0 ? (lineCount as number) : null;
  if (lineCount === undefined) problems.set('line_count', "required with total: the run's line count as shown");
  else if (count === null) problems.set('line_count', `expected a whole number of lines, 0 or more, not ${JSON.stringify(lineCount)}`);
  if (problems.size) throw new UserInputError(`the run as shown is wrong: ${[...problems].map(([name, problem]) => `${name} ${problem}`).join('; ')}`, 400, problems);
  return { total: String(total), lineCount: count! };
}

/**
 * Marks `body`'s period (`{from, to}`) remitted by `remitter`: records the remittance and stamps
 * the lines its run owes, in one transaction. With the run as the clerk was shown it (`total` and
 * `line_count`), the lines stamped must be exactly that many, summing to exactly that: a run that
 * owes anything else by then — a payment dated into the period since — is a 409 saying what it owes
 * now, nothing written (lines are only ever added or stamped, never changed, so the same count
 * and total under the mark's lock are the lines shown). 400: a wrong period, or one that has not
 * ended (its last day after the business date); 409: a period overlapping, or before, one
 * remitted, or another mark of the account running.
 */
export async function markRemitted(db: Database, accountId: string, body: unknown, remitter: Remitter): Promise<Remittance> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new UserInputError('the body must be a JSON object {"from": "YYYY-MM-DD", "to": "YYYY-MM-DD"}', 400, new Map([['body', 'expected an object with from and to']]));
  const fields = new Map(Object.entries(body));
  const unknown = [...fields.keys()].filter((name) => !MARK_FIELDS.includes(name));
  if (unknown.length) throw new UserInputError(`unknown field${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}: the body has only from, to, total and line_count`, 400, new Map(unknown.map((name) => [name, 'unknown field'])));
  const period = statementPeriod(fields.get('from'), fields.get('to'));
  const shown = runShown(fields);
  const id = await db.transaction(async (tx) => {
    const today = await lockForMark(tx, accountId);
    if (period.to > today) {
      throw new UserInputError(`the period has not ended: to (${period.to}) is after the business date ${today}`, 400, new Map([['to', `must be on or before the business date ${today}`]]));
    }
    const { rows: clash } = await tx.query<{ id: string; period_from: string; period_to: string; remitted_at: string; remitted_by: string }>(
      `SELECT r.id, r.period_from::text, r.period_to::text, r.remitted_at::text, r.remitted_by FROM remittances r
        WHERE r.account_id = $1 AND r.period_to >= $2::date ORDER BY r.period_from LIMIT 1`,
      [accountId, period.from],
    );
    const other = clash[0];
    if (other) {
      const when = `remittance ${other.id}, marked ${other.remitted_at} by ${other.remitted_by}`;
      const message =
        other.period_from === period.from && other.period_to === period.to
          ? `the period ${period.from} – ${period.to} was remitted already (${when})`
          : other.period_from <= period.to
            ? `the period ${period.from} – ${period.to} overlaps the remitted period ${other.period_from} – ${other.period_to} (${when})`
            : `a later period, ${other.period_from} – ${other.period_to}, was remitted already (${when}); periods are remitted in order`;
      throw new UserInputError(message, 409, new Map([['from', message]]));
    }
    const keyId = 'keyId' in remitter ? remitter.keyId : null;
    const adminId = 'adminId' in remitter ? remitter.adminId : null;
    const commandLine = 'commandLine' in remitter ? remitter.commandLine : null;
    const { rows } = await tx.query<{ id: string }>(RECORD, [accountId, period.to, period.from, keyId, adminId, commandLine]);
    if (!rows[0]) throw new UserInputError('who marks the remittance is not of this account', 403);
    const id = rows[0].id;
    // The run's lines in order, STAMP_BATCH a statement: no statement nears statement_timeout, and
    // the transaction keeps the mark all or nothing.
    let place = FIRST_PLACE;
    for (;;) {
      const { rows: step } = await tx.query<{ taken: number; last_date: string; last_id: string }>(STAMP, [accountId, period.to, id, place.date, place.id, STAMP_BATCH]);
      const done = step[0];
      if (!done || done.taken < STAMP_BATCH) break;
      place = { date: done.last_date, id: done.last_id };
    }
    if (shown) await checkRunShown(tx, accountId, id, shown);
    return id;
  });
  return (await findRemittance(db, accountId, id))!;
}

/** Refuses (409, the transaction undone) a mark whose stamped lines are not the run as it was shown. */
async function checkRunShown(tx: Queryable, accountId: string, remittanceId: string, shown: RunShown): Promise<void> {
  const { rows } = await tx.query<{ total: string; line_count: number; same: boolean }>(
    `SELECT r.total::text AS total, r.line_count, r.total = $3::numeric AND r.line_count = $4 AS same FROM remittances r WHERE r.account_id = $1 AND r.id = $2`,
    [accountId, remittanceId, shown.total, shown.lineCount],
  );
  const now = rows[0]!;
  if (now.same) return;
  const message = `the run changed since it was shown: it owes ${now.total} in ${now.line_count} lines now, not ${shown.total} in ${shown.lineCount} lines (a payment or reversal dated into the period since); nothing was written: look at the run again, pay the difference, and mark it with what it shows`;
  throw new UserInputError(message, 409, new Map([['total', `now ${now.total}`], ['line_count', `now ${now.line_count}`]]));
}

/** A run or a remittance as CSV (`app/csv.ts`): one line per investor, then a `Total` line. */
export function remittanceCsv(run: { readonly investors: readonly RemittanceInvestor[]; readonly totals: ReceivedAmounts & { readonly lineCount: number }; readonly currency: string; readonly period: StatementPeriod }): string {
  const amounts = ['principal', 'interest', 'fees', 'adjustments', 'total'] as const;
  const header = ['Person ID', 'Investor', 'From', 'To', ...amounts.map((key) => `${key === 'total' ? 'Total owed' : key[0]!.toUpperCase() + key.slice(1)} (${run.currency})`), 'Lines', 'Earliest line'].map(textCell);
  const lines = run.investors.map((investor) => [
    textCell(investor.personId),
    textCell(investor.name),
    run.period.from,
    run.period.to,
    ...amounts.map((key) => numberCell(investor[key])),
    String(investor.lineCount),
    investor.earliestDate,
  ]);
  const total = ['', 'Total', run.period.from, run.period.to, ...amounts.map((key) => numberCell(run.totals[key])), String(run.totals.lineCount), ''];
  return csvDocument([header, ...lines, total]);
}
