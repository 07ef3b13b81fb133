import type { Database } from '../db/index.js';
import { numberCell, textCell, csvDocument } from './csv.js';
import { UserInputError } from './errors.js';
import { dayParameter } from './ledgerReads.js';
import { letterheadOf, profileJsonSql, type Letterhead } from './accountProfile.js';

/**
 * An investor's statement for a period (issue 32, SPEC §12 R10): per loan the person funds, the
 * investor's principal at the start and the end of the period, what the period's distribution
 * lines paid them — principal, interest, fees — and the adjustments, with totals; and the lines
 * themselves. Read in one statement (one snapshot) from `distributions` (0024) and
 * `funding_sources`:
 *
 * - The investor's principal on a day = the funding source's `original_amount` − Σ its principal
 *   lines dated before that day (adjustments included). Opening: before `from`; closing: on or
 *   before `to`. A source funded inside the period opens at 0.00 and shows its amount as
 *   `funded`, so closing = opening + funded − principal − the principal part of the adjustments.
 *   A source funded after `to` (or a person's several sources on one loan) is left out (summed).
 *   A source with no `date_funded` (a commitment) holds 0.00 until it is funded, as it takes no share.
 *   A source since deleted keeps its lines: it counts as a source of 0.00 funded on no day, so
 *   its principal is minus what was paid on it until its removal's adjustments take that back.
 * - `principal`, `interest`, `fees`: the period's original lines; `adjustments`: the period's
 *   adjustment lines of every component (negative when money was taken back); `total`: all of them.
 * - Money is PostgreSQL's exact text, never a float.
 */

export interface StatementPeriod {
  readonly from: string;
  readonly to: string;
}

/** `from` and `to` as given (both required, `from` ≤ `to`), or a 400 naming each wrong one. */
export function statementPeriod(from: unknown, to: unknown): StatementPeriod {
  const problems = new Map<string, string>();
  const day = (name: string, value: unknown): string | null => {
    if (value === undefined || value === '') {
      problems.set(name, 'required: a day as YYYY-MM-DD');
      return null;
    }
    try {
      return dayParameter(name, value);
    } catch (error) {
      if (!(error instanceof UserInputError)) throw error;
      problems.set(name, error.fields?.[name] ?? error.message);
      return null;
    }
  };
  const first = day('from', from);
  const last = day('to', to);
  if (first !== null && last !== null && first > last) problems.set('to', `must not be before from (${first})`);
  if (problems.size) throw new UserInputError(`the period is wrong: ${[...problems].map(([name, problem]) => `${name} ${problem}`).join('; ')}`, 400, problems);
  return { from: first!, to: last! };
}

/** The principal, interest, fees, adjustments and total of some distribution lines. */
export interface ReceivedAmounts {
  readonly principal: string;
  readonly interest: string;
  readonly fees: string;
  readonly adjustments: string;
  readonly total: string;
}

export interface StatementLoan extends ReceivedAmounts {
  readonly loanId: string;
  readonly loanName: string;
  /** The investor's rate on the loan (percent), when its sources agree; null otherwise. */
  readonly rate: string | null;
  readonly dateFunded: string | null;
  readonly openingPrincipal: string;
  readonly funded: string;
  readonly closingPrincipal: string;
}

export interface StatementLine {
  readonly id: string;
  readonly date: string;
  readonly loanId: string;
  readonly paymentId: string;
  readonly component: 'principal' | 'interest' | 'fees';
  readonly amount: string;
  readonly adjustment: boolean;
  readonly causePaymentId: string | null;
  readonly remittanceId: string | null;
}

export interface InvestorStatement {
  readonly accountName: string;
  /** The lender's letterhead (`accountProfile.ts`): the legal name, address and contact its PDF prints. */
  readonly letterhead: Letterhead;
  readonly currency: string;
  readonly person: { readonly id: string; readonly name: string };
  readonly period: StatementPeriod;
  readonly loans: readonly StatementLoan[];
  readonly totals: ReceivedAmounts & { readonly openingPrincipal: string; readonly funded: string; readonly closingPrincipal: string };
  readonly lines: readonly StatementLine[];
}

/** $1 account, $2 person, $3 from, $4 to. One JSON document, every amount as text. */
const STATEMENT = `
WITH person AS (SELECT pe.id, pe.name FROM people pe WHERE pe.account_id = $1 AND pe.id = $2),
  sources AS (
    -- A source with no funding day is a commitment: it holds nothing (and takes no share) until funded.
    SELECT f.id, f.loan_id, f.rate, f.date_funded, CASE WHEN f.date_funded IS NULL THEN 0.00 ELSE coalesce(f.original_amount, 0.00) END AS original_amount,
           f.date_funded IS NOT NULL AND f.date_funded >= $3::date AS funded_in_period
      FROM funding_sources f
     WHERE f.account_id = $1 AND f.person_id = $2 AND (f.date_funded IS NULL OR f.date_funded <= $4::date)
    UNION ALL
    -- A source since deleted keeps its lines, and its removal's adjustments take them back: it is
    -- a source of 0.00 funded on no day (as one set to 0.00), so its lines count on their dates.
    SELECT d.funding_source_id, d.loan_id, NULL::numeric, NULL::date, 0.00, false
      FROM distributions d
     WHERE d.account_id = $1 AND d.person_id = $2 AND d.date <= $4::date
       AND NOT EXISTS (SELECT FROM funding_sources f WHERE f.account_id = $1 AND f.id = d.funding_source_id)
     GROUP BY d.funding_source_id, d.loan_id),
  -- A line counts on its own date, or on its source's funding day when that is later: an
  -- adjustment from a back-dated reversal can be dated before the source it pays was funded.
  lines AS (
    SELECT d.id, d.loan_id, d.payment_id, d.funding_source_id, d.component, d.amount, d.adjustment,
           d.cause_payment_id, d.remittance_id, d.created_at, greatest(d.date, coalesce(s.date_funded, d.date)) AS date
      FROM distributions d JOIN sources s ON s.id = d.funding_source_id
     WHERE d.account_id = $1 AND d.person_id = $2 AND greatest(d.date, coalesce(s.date_funded, d.date)) <= $4::date),
  -- Per source, its principal lines before the period and in it: one pass over the lines (a
  -- subquery per source read them all once per source: 55 s for a fund in 1,622 loans).
  principal_lines AS (
    SELECT l.funding_source_id,
           coalesce(sum(l.amount) FILTER (WHERE l.date < $3::date), 0.00) AS before,
           coalesce(sum(l.amount) FILTER (WHERE l.date >= $3::date), 0.00) AS within
      FROM lines l WHERE l.component = 'principal' GROUP BY l.funding_source_id),
  per_source AS (
    SELECT s.id, s.loan_id, s.rate, s.date_funded,
           CASE WHEN s.funded_in_period THEN 0.00 ELSE s.original_amount END - coalesce(pr.before, 0.00) AS opening,
           CASE WHEN s.funded_in_period THEN s.original_amount ELSE 0.00 END AS funded,
           coalesce(pr.within, 0.00) AS principal_all
      FROM sources s LEFT JOIN principal_lines pr ON pr.funding_source_id = s.id),
  period_lines AS (SELECT l.* FROM lines l WHERE l.date >= $3::date),
  received AS (
    SELECT pl.loan_id,
           coalesce(sum(pl.amount) FILTER (WHERE pl.component = 'principal' AND NOT pl.adjustment), 0.00) AS principal,
           coalesce(sum(pl.amount) FILTER (WHERE pl.component = 'interest' AND NOT pl.adjustment), 0.00) AS interest,
           coalesce(sum(pl.amount) FILTER (WHERE pl.component = 'fees' AND NOT pl.adjustment), 0.00) AS fees,
           coalesce(sum(pl.amount) FILTER (WHERE pl.adjustment), 0.00) AS adjustments,
           coalesce(sum(pl.amount), 0.00) AS total
      FROM period_lines pl GROUP BY pl.loan_id),
  per_loan AS (
    SELECT ps.loan_id, lo.name AS loan_name,
           CASE WHEN count(DISTINCT ps.rate) = 1 THEN min(ps.rate) END AS rate, min(ps.date_funded) AS date_funded,
           sum(ps.opening) AS opening, sum(ps.funded) AS funded, sum(ps.opening) + sum(ps.funded) - sum(ps.principal_all) AS closing,
           coalesce(min(r.principal), 0.00) AS principal, coalesce(min(r.interest), 0.00) AS interest, coalesce(min(r.fees), 0.00) AS fees,
           coalesce(min(r.adjustments), 0.00) AS adjustments, coalesce(min(r.total), 0.00) AS total
      FROM per_source ps
      JOIN loans lo ON lo.account_id = $1 AND lo.id = ps.loan_id
      LEFT JOIN received r ON r.loan_id = ps.loan_id
     GROUP BY ps.loan_id, lo.name)
SELECT json_build_object(
  'account_name', a.name, 'currency', a.currency, 'profile', ${profileJsonSql('a')},
  'person', json_build_object('id', p.id, 'name', p.name),
  'loans', coalesce((SELECT json_agg(json_build_object(
      'loan_id', pl.loan_id, 'loan_name', pl.loan_name, 'rate', pl.rate::text, 'date_funded', pl.date_funded,
      'opening_principal', pl.opening::text, 'funded', pl.funded::text, 'principal', pl.principal::text, 'interest', pl.interest::text,
      'fees', pl.fees::text, 'adjustments', pl.adjustments::text, 'total', pl.total::text, 'closing_principal', pl.closing::text)
      ORDER BY pl.loan_name, pl.loan_id) FROM per_loan pl), '[]'::json),
  'totals', (SELECT json_build_object(
      'opening_principal', coalesce(sum(pl.opening), 0.00)::text, 'funded', coalesce(sum(pl.funded), 0.00)::text,
      'principal', coalesce(sum(pl.principal), 0.00)::text, 'interest', coalesce(sum(pl.interest), 0.00)::text,
      'fees', coalesce(sum(pl.fees), 0.00)::text, 'adjustments', coalesce(sum(pl.adjustments), 0.00)::text,
      'total', coalesce(sum(pl.total), 0.00)::text, 'closing_principal', coalesce(sum(pl.closing), 0.00)::text) FROM per_loan pl),
  'lines', coalesce((SELECT json_agg(json_build_object(
      'id', l.id, 'date', l.date, 'loan_id', l.loan_id, 'payment_id', l.payment_id, 'component', l.component, 'amount', l.amount::text,
      'adjustment', l.adjustment, 'cause_payment_id', l.cause_payment_id, 'remittance_id', l.remittance_id)
      ORDER BY l.date, l.created_at, l.id) FROM period_lines l), '[]'::json))::text AS body
  FROM person p, accounts a WHERE a.id = $1`;

interface StatementJson {
  account_name: string;
  profile: Record<string, unknown>;
  currency: string;
  person: { id: string; name: string };
  loans: {
    loan_id: string;
    loan_name: string;
    rate: string | null;
    date_funded: string | null;
    opening_principal: string;
    funded: string;
    principal: string;
    interest: string;
    fees: string;
    adjustments: string;
    total: string;
    closing_principal: string;
  }[];
  totals: Record<'opening_principal' | 'funded' | 'principal' | 'interest' | 'fees' | 'adjustments' | 'total' | 'closing_principal', string>;
  lines: {
    id: string;
    date: string;
    loan_id: string;
    payment_id: string;
    component: StatementLine['component'];
    amount: string;
    adjustment: boolean;
    cause_payment_id: string | null;
    remittance_id: string | null;
  }[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `value` is a uuid's text (anything else names no record: a 404, not a database error). */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/** The statement of `personId` for `period`; null when the account has no such person. */
export async function investorStatement(db: Database, accountId: string, personId: string, period: StatementPeriod): Promise<InvestorStatement | null> {
  if (!isUuid(personId)) return null;
  const { rows } = await db.query<{ body: string }>(STATEMENT, [accountId, personId, period.from, period.to], { reusable: true });
  if (!rows[0]) return null;
  const json = JSON.parse(rows[0].body) as StatementJson;
  return {
    accountName: json.account_name,
    letterhead: letterheadOf(json.account_name, json.profile),
    currency: json.currency,
    person: json.person,
    period,
    loans: json.loans.map((loan) => ({
      loanId: loan.loan_id,
      loanName: loan.loan_name,
      rate: loan.rate,
      dateFunded: loan.date_funded,
      openingPrincipal: loan.opening_principal,
      funded: loan.funded,
      principal: loan.principal,
      interest: loan.interest,
      fees: loan.fees,
      adjustments: loan.adjustments,
      total: loan.total,
      closingPrincipal: loan.closing_principal,
    })),
    totals: {
      openingPrincipal: json.totals.opening_principal,
      funded: json.totals.funded,
      principal: json.totals.principal,
      interest: json.totals.interest,
      fees: json.totals.fees,
      adjustments: json.totals.adjustments,
      total: json.totals.total,
      closingPrincipal: json.totals.closing_principal,
    },
    lines: json.lines.map((line) => ({
      id: line.id,
      date: line.date,
      loanId: line.loan_id,
      paymentId: line.payment_id,
      component: line.component,
      amount: line.amount,
      adjustment: line.adjustment,
      causePaymentId: line.cause_payment_id,
      remittanceId: line.remittance_id,
    })),
  };
}

/** The statement's columns, in the order of the CSV, the PDF and the dashboard. */
export const STATEMENT_COLUMNS = [
  ['openingPrincipal', 'Opening principal'],
  ['funded', 'Funded'],
  ['principal', 'Principal'],
  ['interest', 'Interest'],
  ['fees', 'Fees'],
  ['adjustments', 'Adjustments'],
  ['total', 'Total received'],
  ['closingPrincipal', 'Closing principal'],
] as const;

/**
 * The statement as CSV (`app/csv.ts`): a header, one line per loan, then a `Total` line; the
 * amounts in the account's currency, named in the header.
 */
export function investorStatementCsv(statement: InvestorStatement): string {
  const header = ['Loan ID', 'Loan', 'From', 'To', ...STATEMENT_COLUMNS.map(([, label]) => `${label} (${statement.currency})`)].map(textCell);
  const loanLines = statement.loans.map((loan) => [
    textCell(loan.loanId),
    textCell(loan.loanName),
    statement.period.from,
    statement.period.to,
    ...STATEMENT_COLUMNS.map(([key]) => numberCell(loan[key])),
  ]);
  const total = ['', 'Total', statement.period.from, statement.period.to, ...STATEMENT_COLUMNS.map(([key]) => numberCell(statement.totals[key]))];
  return csvDocument([header, ...loanLines, total]);
}

/** A person who funds loans, for the dashboard's list of investors. */
export interface InvestorListing {
  readonly personId: string;
  readonly name: string;
  readonly loans: number;
  readonly funded: string;
}

/**
 * The investors' CTEs of `listInvestors` and `countInvestors` (`$1`: the account). The people with
 * lines are found one index probe each (distributions_person_date), not by a scan of every line.
 */
const INVESTORS = /* sql */ `WITH RECURSIVE with_lines(person_id) AS (
       SELECT (SELECT d.person_id FROM distributions d WHERE d.account_id = $1 AND d.person_id IS NOT NULL ORDER BY d.person_id LIMIT 1)
       UNION ALL
       SELECT (SELECT d.person_id FROM distributions d WHERE d.account_id = $1 AND d.person_id > w.person_id ORDER BY d.person_id LIMIT 1)
         FROM with_lines w WHERE w.person_id IS NOT NULL),
     investors AS (
       SELECT f.person_id, count(DISTINCT f.loan_id) FILTER (WHERE f.date_funded IS NOT NULL)::int AS loans,
              coalesce(sum(f.original_amount) FILTER (WHERE f.date_funded IS NOT NULL), 0.00) AS funded
         FROM funding_sources f WHERE f.account_id = $1 GROUP BY f.person_id
       UNION ALL
       SELECT w.person_id, 0, 0.00 FROM with_lines w
        WHERE w.person_id IS NOT NULL AND NOT EXISTS (SELECT FROM funding_sources f WHERE f.account_id = $1 AND f.person_id = w.person_id))`;

/**
 * The account's investors, by name, with how many loans they funded and how much: the people with
 * a funding source, and those with distribution lines but no source any more (removed from their
 * loans: the remittance run may still charge them the removal's take-back). A commitment not funded
 * yet (no `date_funded`) lists its person but counts in neither.
 */
export async function listInvestors(db: Database, accountId: string, limit = 500, offset = 0): Promise<InvestorListing[]> {
  const { rows } = await db.query<{ person_id: string; name: string; loans: number; funded: string }>(
    `${INVESTORS}
     SELECT pe.id::text AS person_id, pe.name, i.loans, i.funded::text AS funded
       FROM investors i JOIN people pe ON pe.account_id = $1 AND pe.id = i.person_id
      ORDER BY pe.name, pe.id LIMIT $2 OFFSET $3`,
    [accountId, limit, offset],
  );
  return rows.map((row) => ({ personId: row.person_id, name: row.name, loans: row.loans, funded: row.funded }));
}

/** How many investors `listInvestors` has for the account (the dashboard's list pages through them). */
export async function countInvestors(db: Database, accountId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`${INVESTORS} SELECT count(*)::int AS n FROM investors i JOIN people pe ON pe.account_id = $1 AND pe.id = i.person_id`, [accountId]);
  return rows[0]!.n;
}

/** The month of `day` so far: its first day to `day` (the dashboard's default period). */
export function monthToDate(day: string): StatementPeriod {
  return { from: `${day.slice(0, 8)}01`, to: day };
}
