/**
 * Pure generation of the demo portfolio (no I/O): `planPortfolio` decides every loan, person and
 * link up front (sizes grow with the number of loans only), and hands out lazy generators for the
 * big tables (schedules, payments, documents, tasks, comments) so that scale 10 stays in memory.
 *
 * Determinism: everything is derived from `seed` and `today` (the day the portfolio is dated
 * around: every past event falls before it, open tasks and next payments around and after it;
 * default the fixed `REFERENCE_DATE`), never from the clock. Two seeded PRNG families are used:
 * - data streams keyed by `seed` only, so the same seed gives the same names, amounts, dates…
 *   in every account;
 * - id streams keyed by `seed` and `accountId`, so two accounts seeded alike get different ids.
 * Loans are generated from one stream per loan index, so a smaller scale yields a prefix of the
 * loans of a larger one (same seed).
 */
import { buildSchedule, PERIODS_PER_YEAR, type Amortization, type Frequency, type ScheduleRow } from '../../domain/schedule.js';
import { Random } from './random.js';
import {
  AREA_CODES, BROKERS, CITIES, COMMENT_TEXTS, COMPANY_NOUNS, COMPANY_SUFFIXES, COMPANY_WORDS, DOCUMENT_TYPES,
  EMAIL_DOMAINS, FIRST_NAMES, INSURANCE_CARRIERS, INVESTOR_NOUNS, LOAN_OFFICERS, MEMBER_ROLES, STREET_NAMES,
  STREET_SUFFIXES, SURNAMES, TASK_NAMES, VALUATION_TYPES,
} from './vocabulary.js';

/** The default "today" of the generated data (library and tests; the CLI and the demo pass the real day). */
export const REFERENCE_DATE = '2026-06-30';

/** Row counts at scale 1. */
export const BASE_COUNTS = Object.freeze({
  loans: 10_000,
  people: 15_000,
  payments: 200_000,
  tasks: 30_000,
  comments: 30_000,
  documents: 20_000,
  addresses: 10_000,
  fundingSources: 5_000,
});

export type SeedCounts = { -readonly [K in keyof typeof BASE_COUNTS]: number };

/**
 * The largest scale the seeder takes: 100,000 loans and 2,000,000 payments, planned in memory
 * (the module comment), 25 minutes on PostgreSQL (bench/RESULTS.md). A larger one never finished:
 * `loanql seed --scale 1e308` grew past 3 GB in ten minutes, writing nothing.
 */
export const MAX_SEED_SCALE = 10;

/**
 * The days a portfolio can be dated around (`today`): its loans were funded up to four years before
 * (`WINDOW_DAYS`), its payments after that, and a loan runs at most 30 years (`MAX_YEARS`), so every
 * payment and due date stays in the years 1900–2999 that payments (migration 0050) and the REST
 * routes take. Before, `loanql seed --today 1901-06-01` wrote for seconds, then failed on a payment
 * "dated in the years 1900–2999, not 1899-04-30" (exit 1).
 */
export const SEED_DAYS = { first: '1905-01-01', last: '2969-12-31' } as const;

/** Whether `day` (YYYY-MM-DD, a calendar day) is one a portfolio can be dated around (`SEED_DAYS`). */
export function isSeedDay(day: string): boolean {
  return day >= SEED_DAYS.first && day <= SEED_DAYS.last;
}

/** Target counts for a scale: every base count × scale, rounded, at least 1 (payments may be 0). */
export function seedCounts(scale: number): SeedCounts {
  if (typeof scale !== 'number' || !Number.isFinite(scale) || scale <= 0 || scale > MAX_SEED_SCALE) {
    throw new RangeError(`scale must be a number above 0 and at most ${MAX_SEED_SCALE}, got ${String(scale)}`);
  }
  const count = (base: number): number => Math.max(1, Math.round(base * scale));
  return {
    loans: count(BASE_COUNTS.loans),
    people: Math.max(3, count(BASE_COUNTS.people)),
    payments: Math.round(BASE_COUNTS.payments * scale),
    tasks: count(BASE_COUNTS.tasks),
    comments: count(BASE_COUNTS.comments),
    documents: count(BASE_COUNTS.documents),
    addresses: count(BASE_COUNTS.addresses),
    fundingSources: count(BASE_COUNTS.fundingSources),
  };
}

// ---------------------------------------------------------------------------
// Row shapes: property names are the column names (the rows travel as JSON to
// json_populate_recordset). `account_id` is added by the writer.

export interface PersonRow { id: string; name: string; email: string | null; phone: string | null; status: string; entity_type: 'individual' | 'company'; is_borrower: boolean; is_investor: boolean; created_at: string }
export interface MembershipRow { id: string; company_id: string; person_id: string; role: string; created_at: string }
export interface LoanRow {
  id: string; product_id: string | null; name: string; amount: string; status: LoanStatus; rate: string; term: number;
  frequency: Frequency; amortization: Amortization; regular_payment: string | null; date_funded: string | null;
  date_maturity: string | null; custom_fields: Record<string, string>; created_at: string; updated_at: string;
}
export interface LinkRow { id: string; loan_id: string; person_id: string; created_at: string }
export interface AddressRow { id: string; street1: string; city: string; state: string; zipcode: string }
export interface AddressDetailRow { id: string; loan_id: string; address_id: string }
export interface ValuationRow { id: string; address_id: string; value: string; valuation_type: string; report_date: string }
export interface InsuranceRow { id: string; address_id: string; carrier: string; type: string; coverage_amount: string; expiration: string }
export interface ScheduleDbRow { id: string; loan_id: string; number: number; due: string; payment: string; principal: string; interest: string; balance: string; scheduled_payment: string; scheduled_principal: string; scheduled_interest: string; scheduled_balance: string }
export interface PaymentRow { id: string; loan_id: string; date: string; amount: string; type: PaymentType; method: string; date_reversed?: string; reversal_reason?: string }
const REVERSAL_REASONS = ['returned', 'nsf', 'error'] as const;
export interface FundingSourceRow { id: string; person_id: string; loan_id: string; class: string; rate: string; original_amount: string; committed_amount: string; date_funded: string }
export interface DocumentRow { id: string; name: string; status: string; type: string; uploaded_date: string | null }
export interface LoanDocumentRow { id: string; loan_id: string; document_id: string }
export interface TaskRow { id: string; loan_id: string | null; name: string; status: string; date_due: string; created_at: string }
export interface CommentRow { id: string; loan_id: string; admin_id: string | null; text: string; created_at: string }

export type LoanStatus = 'lead' | 'servicing' | 'closed';
export type PaymentType = 'regular' | 'fee' | 'payoff';

// ---------------------------------------------------------------------------
// Dates as day numbers (days since 1970-01-01, UTC; no local time zone involved).

const DAY_MS = 86_400_000;
const WINDOW_DAYS = 1461; // ~4 years of funding history

export function dayOf(iso: string): number {
  return Date.UTC(Number(iso.slice(0, 4)), Number(iso.slice(5, 7)) - 1, Number(iso.slice(8, 10))) / DAY_MS;
}
export function isoOf(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}
function stampOf(ms: number): string {
  return new Date(ms).toISOString();
}

/** A business-hours instant on `day` (13:00–23:00 UTC, i.e. US office hours), with milliseconds. */
function businessMs(r: Random, day: number): number {
  return day * DAY_MS + r.int(13 * 3600, 23 * 3600 - 1) * 1000 + r.int(0, 999);
}

// ---------------------------------------------------------------------------
// Money helpers: integer cents in JS numbers (all values stay far below 2^53).

export function centsOf(money: string): number {
  const negative = money.startsWith('-');
  const [whole = '0', fraction = ''] = (negative ? money.slice(1) : money).split('.');
  const cents = Number(whole) * 100 + Number((fraction + '00').slice(0, 2));
  return negative ? -cents : cents;
}
export function moneyOf(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(Math.round(cents));
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}
function roundTo(value: number, step: number): number {
  return Math.round(value / step) * step;
}
function formatRate(value: number): string {
  const three = value.toFixed(3);
  return three.endsWith('0') ? value.toFixed(2) : three;
}

function get<T>(items: readonly T[], index: number): T {
  const item = items[index];
  if (item === undefined) throw new RangeError(`index ${index} out of range (length ${items.length})`);
  return item;
}

// ---------------------------------------------------------------------------
// Loans

interface LoanKind {
  readonly label: string;
  readonly weight: number;
  readonly interestOnly: number;
  readonly min: number;
  readonly max: number;
  readonly rate: readonly [number, number];
  /** Monthly terms and their weights; other frequencies use the same duration in years. */
  readonly terms: readonly (readonly [number, number])[];
}

const LOAN_KINDS: readonly LoanKind[] = [
  { label: 'Bridge Loan', weight: 26, interestOnly: 0.4, min: 100_000, max: 2_000_000, rate: [9, 13.5], terms: [[12, 55], [24, 35], [36, 10]] },
  { label: 'Fix & Flip Loan', weight: 12, interestOnly: 0.35, min: 50_000, max: 750_000, rate: [10, 15], terms: [[12, 70], [24, 30]] },
  { label: 'Construction Loan', weight: 9, interestOnly: 0.35, min: 150_000, max: 2_000_000, rate: [9.5, 14], terms: [[12, 40], [24, 45], [36, 15]] },
  { label: 'Rental Loan', weight: 18, interestOnly: 0.05, min: 25_000, max: 800_000, rate: [6, 9.5], terms: [[60, 30], [120, 25], [360, 45]] },
  { label: 'Term Loan', weight: 20, interestOnly: 0.05, min: 50_000, max: 1_500_000, rate: [7, 12], terms: [[24, 25], [36, 40], [60, 35]] },
  { label: 'Refinance Loan', weight: 15, interestOnly: 0.05, min: 75_000, max: 2_000_000, rate: [6, 10], terms: [[36, 25], [60, 35], [120, 20], [360, 20]] },
];
const KIND_CHOICES = LOAN_KINDS.map((kind) => [kind, kind.weight] as const);

const FREQUENCY_CHOICES: readonly (readonly [Frequency, number])[] = [
  ['monthly', 80], ['quarterly', 4], ['semi_monthly', 4], ['biweekly', 5], ['weekly', 4], ['annually', 3],
];
/** Longest duration (years) used for a frequency, to keep schedules of sensible length. */
const MAX_YEARS: Readonly<Record<Frequency, number>> = { monthly: 30, quarterly: 10, semi_monthly: 5, biweekly: 5, weekly: 5, annually: 10 };

const STATUS_CHOICES: readonly (readonly [LoanStatus, number])[] = [['servicing', 65], ['closed', 20], ['lead', 15]];
const METHOD_CHOICES: readonly (readonly [string, number])[] = [['ach', 65], ['check', 20], ['wire', 15]];

interface AddressParts { readonly street1: string; readonly city: string; readonly state: string; readonly zipcode: string }

function makeAddress(r: Random): AddressParts {
  const [city, state, zip] = r.pick(CITIES);
  const number = r.chance(0.7) ? r.int(100, 9999) : r.int(10, 99999);
  return {
    street1: `${number} ${r.pick(STREET_NAMES)} ${r.weighted(STREET_SUFFIXES)}`,
    city,
    state,
    zipcode: `${zip}${String(r.int(1, 99)).padStart(2, '0')}`,
  };
}

/** Everything decided about a loan before any row is written. */
export interface LoanPlan {
  readonly index: number;
  readonly row: LoanRow;
  readonly kind: string;
  readonly amountCents: number;
  readonly rateValue: number;
  readonly fundedDay: number | null;
  readonly createdMs: number;
  readonly address: AddressParts;
  /** Early payoff day of a closed loan (null when it ran to maturity or is not closed). */
  readonly payoffDay: number | null;
  /** Schedule rows paid (in order) by the borrower. */
  readonly paidRows: number;
  /** Preferred payment method. */
  readonly method: string;
}

/** `REF`: the day number of "today" (see the module comment). */
function planLoan(data: Random, ids: Random, index: number, productId: string | null, createdTaken: Set<number>, REF: number): LoanPlan {
  const r = data.fork('loan', index);
  const id = ids.uuid();
  const status = r.weighted(STATUS_CHOICES);
  const kind = r.weighted(KIND_CHOICES);
  const frequency = r.weighted(FREQUENCY_CHOICES);
  const ppy = PERIODS_PER_YEAR[frequency];
  const monthlyTerm = r.weighted(kind.terms);
  const term = frequency === 'monthly' ? monthlyTerm : Math.max(1, Math.round(Math.min(monthlyTerm / 12, MAX_YEARS[frequency]) * ppy));
  const amortization: Amortization = r.chance(kind.interestOnly) ? 'interest_only' : 'amortizing';

  // Amount: log-uniform in the kind's range, rounded to $5,000, $1,000 or $50.
  const raw = Math.exp(Math.log(kind.min) + r.next() * (Math.log(kind.max) - Math.log(kind.min)));
  const step = r.weighted([[5000, 60], [1000, 30], [50, 10]] as const);
  const dollars = Math.min(2_000_000, Math.max(25_000, roundTo(raw, step)));
  const amountCents = dollars * 100;
  // Rate: eighths (9.125, 9.50) or hundredths (9.37), within 6–15 %.
  const rawRate = r.real(kind.rate[0], kind.rate[1]);
  const rateValue = Math.min(15, Math.max(6, r.chance(0.65) ? roundTo(rawRate, 0.125) : roundTo(rawRate, 0.01)));
  const rate = formatRate(rateValue);

  const address = makeAddress(r);
  const name = `${address.street1} ${kind.label}`;
  const method = r.weighted(METHOD_CHOICES);

  const durationDays = (term * 365.25) / ppy;
  let fundedDay: number | null = null;
  let payoffDay: number | null = null;
  let missed = 0;
  let createdDay: number;
  if (status === 'lead') {
    createdDay = REF - r.int(1, 150);
  } else {
    let age: number;
    if (status === 'servicing') {
      if (durationDays + 10 < WINDOW_DAYS && r.chance(0.03)) {
        // Past maturity and still servicing: the last installment(s) are unpaid.
        age = r.int(Math.ceil(durationDays) + 5, Math.min(WINDOW_DAYS, Math.ceil(durationDays) + 240));
        missed = r.int(1, 2);
      } else {
        // Skewed towards older loans: the book grew faster in the past than it does now.
        const maxAge = Math.max(3, Math.min(WINDOW_DAYS, Math.floor(durationDays) - 1));
        age = 3 + Math.floor((maxAge - 3) * r.next() ** 0.7);
        if (r.chance(0.08)) missed = r.weighted([[1, 60], [2, 25], [3, 15]] as const);
      }
    } else if (durationDays + 30 <= WINDOW_DAYS && r.chance(0.65)) {
      age = r.int(Math.ceil(durationDays) + 30, WINDOW_DAYS); // ran to maturity, fully paid
    } else {
      // Paid off early, some time after the first installment fell due.
      const periodDays = Math.ceil(365.25 / ppy) + 3;
      age = r.int(Math.max(150, periodDays + 30), WINDOW_DAYS);
      const life = Math.min(age - 7, Math.floor(durationDays) - 1);
      payoffDay = REF - age + Math.max(periodDays, Math.floor(life * r.real(0.3, 0.95)));
    }
    fundedDay = REF - age;
    createdDay = fundedDay - r.int(7, 60);
  }
  let createdMs = businessMs(r, createdDay);
  while (createdTaken.has(createdMs)) createdMs += 1; // unique, so "ORDER BY created_at" is total
  createdTaken.add(createdMs);

  let regularPayment: string | null = null;
  let dateMaturity: string | null = null;
  let paidRows = 0;
  if (fundedDay !== null) {
    const schedule = buildSchedule(scheduleInput(amountCents, rate, term, frequency, amortization, fundedDay));
    regularPayment = schedule.regularPayment;
    dateMaturity = schedule.dateMaturity;
    const cutoff = payoffDay ?? REF;
    let elapsed = 0;
    while (elapsed < schedule.rows.length && dayOf(get(schedule.rows, elapsed).due) < cutoff) elapsed++;
    paidRows = Math.max(0, elapsed - missed);
  }

  let updatedMs = createdMs;
  if (status === 'servicing') updatedMs = Math.max(createdMs, businessMs(r, REF - r.int(1, 45)));
  else if (status === 'closed') {
    const closedDay = payoffDay ?? Math.min(REF - 1, dayOf(dateMaturity as string) + r.int(1, 20));
    updatedMs = Math.max(createdMs, businessMs(r, closedDay));
  }

  const customFields: Record<string, string> = {};
  if (r.chance(0.06)) {
    customFields.loan_officer = r.pick(LOAN_OFFICERS);
    if (r.chance(0.3)) customFields.broker = r.pick(BROKERS);
  }

  return {
    index,
    kind: kind.label,
    amountCents,
    rateValue,
    fundedDay,
    createdMs,
    address,
    payoffDay,
    paidRows,
    method,
    row: {
      id,
      product_id: productId,
      name,
      amount: moneyOf(amountCents),
      status,
      rate,
      term,
      frequency,
      amortization,
      regular_payment: regularPayment,
      date_funded: fundedDay === null ? null : isoOf(fundedDay),
      date_maturity: dateMaturity,
      custom_fields: customFields,
      created_at: stampOf(createdMs),
      updated_at: stampOf(updatedMs),
    },
  };
}

function scheduleInput(amountCents: number, rate: string, term: number, frequency: Frequency, amortization: Amortization, fundedDay: number) {
  return { amount: moneyOf(amountCents), rate, term, frequency, amortization, dateFunded: isoOf(fundedDay) };
}

/** The schedule of a funded loan, exactly as `buildSchedule` computes it from the loan row. */
export function loanSchedule(loan: LoanPlan): readonly ScheduleRow[] {
  if (loan.fundedDay === null) return [];
  const { row } = loan;
  return buildSchedule(scheduleInput(loan.amountCents, row.rate, row.term, row.frequency, row.amortization, loan.fundedDay)).rows;
}

// ---------------------------------------------------------------------------
// Payments

interface Draft {
  day: number;
  cents: number;
  type: PaymentType;
  method: string;
  reversedDay?: number;
}

/** SPEC §12's default grace: a row unpaid 10 days after its due date gets a late fee on the 11th. */
const LATE_FEE_GRACE_DAYS = 10;

function paymentDelay(r: Random): number {
  const bucket = r.next();
  if (bucket < 0.3) return 0;
  if (bucket < 0.65) return r.int(1, 2);
  if (bucket < 0.9) return r.int(3, 9);
  return r.int(10, 25);
}

const REVERSED_SHARE = 0.03;

/**
 * The payments of one funded loan, as close to `target` payments as its history allows.
 * Paid schedule rows are paid exactly (one payment each); the count is then matched to `target`
 * by paying two consecutive installments at once or one installment in two parts, which keeps
 * the total paid (and so `is_next`) unchanged. ~3 % of regular payments are reversed a few days
 * later and paid again.
 */
function loanPayments(loan: LoanPlan, rows: readonly ScheduleRow[], target: number, r: Random, REF: number): Draft[] {
  const method = (): string => (r.chance(0.9) ? loan.method : r.weighted(METHOD_CHOICES));
  const regular: Draft[] = [];
  const extra: Draft[] = [];
  for (let k = 0; k < loan.paidRows; k++) {
    const row = get(rows, k);
    const due = dayOf(row.due);
    const delay = paymentDelay(r);
    const day = Math.min(due + delay, REF - 1);
    const cents = centsOf(row.payment);
    const m = method();
    regular.push({ day, cents, type: 'regular', method: m });
    // A row paid after its grace period gets a late fee from the ledger (SPEC §12 R4: 5 % of the
    // row's payment by default); the borrower pays it with the row.
    // (A chance is still drawn here, as before, so the rest of the portfolio stays the same.)
    if (delay >= LATE_FEE_GRACE_DAYS) r.chance(0.6);
    if (day > due + LATE_FEE_GRACE_DAYS) {
      extra.push({ day, cents: Math.floor((cents * 5 + 50) / 100), type: 'fee', method: m });
    }
  }
  if (loan.payoffDay !== null && loan.paidRows < rows.length) {
    // Early payoff (R6): its amount is the loan's payoff quote on the day, worked out by the
    // database's ledger when it is written (seedPortfolio); this estimate only orders it.
    const last = loan.paidRows > 0 ? get(rows, loan.paidRows - 1) : null;
    const balance = last === null ? loan.amountCents : centsOf(last.balance);
    const since = last === null ? (loan.fundedDay as number) : dayOf(last.due);
    const interest = Math.round((balance * loan.rateValue * Math.max(0, loan.payoffDay - since)) / 36_000);
    extra.push({ day: loan.payoffDay, cents: balance + interest, type: 'payoff', method: 'wire' });
  } else if (loan.row.status === 'servicing' && loan.paidRows >= 3 && r.chance(0.04)) {
    // A principal curtailment after some installment.
    const after = r.int(1, loan.paidRows - 1);
    const row = get(rows, after);
    const cents = Math.min(centsOf(row.balance), Math.max(100_000, roundTo(loan.amountCents * r.real(0.03, 0.15), 100_000)));
    if (cents > 0) extra.push({ day: Math.min(dayOf(row.due) + r.int(1, 20), REF - 1), cents, type: 'regular', method: r.chance(0.5) ? 'wire' : loan.method });
  }

  // Reversals each add a payment (the replacement), so plan for them in the count.
  const reversals = Math.floor(Math.max(0, target) * REVERSED_SHARE + r.next());
  let wanted = target - extra.length - reversals;
  if (regular.length > 0) wanted = Math.max(1, wanted);
  let guard = 4 * (regular.length + Math.abs(wanted)) + 16;
  while (regular.length > wanted && regular.length >= 2 && guard-- > 0) {
    // Two consecutive installments paid together, on the later one's date.
    const i = r.int(0, regular.length - 2);
    const first = get(regular, i);
    const second = get(regular, i + 1);
    second.cents += first.cents;
    regular.splice(i, 1);
  }
  while (regular.length > 0 && regular.length < wanted && guard-- > 0) {
    // One installment paid in two parts, the second a few days later.
    const i = r.int(0, regular.length - 1);
    const draft = get(regular, i);
    if (draft.cents < 200) continue;
    const part = Math.round(draft.cents * r.real(0.3, 0.7));
    const rest: Draft = { day: Math.min(draft.day + r.int(1, 10), REF - 1), cents: draft.cents - part, type: 'regular', method: draft.method };
    draft.cents = part;
    regular.splice(i + 1, 0, rest);
  }

  const eligible: number[] = [];
  regular.forEach((draft, i) => {
    if (draft.day <= REF - 12) eligible.push(i);
  });
  const replacements: Draft[] = [];
  for (const i of r.sample(eligible.length, reversals)) {
    const draft = get(regular, get(eligible, i));
    draft.reversedDay = draft.day + r.int(2, 6);
    replacements.push({ day: draft.reversedDay + r.int(1, 5), cents: draft.cents, type: 'regular', method: draft.method });
  }
  const all = [...regular, ...replacements, ...extra];
  if (loan.payoffDay !== null) {
    // Nothing is paid after the payoff: what fell later is paid on its day, before it (the quote counts it).
    const last = loan.payoffDay;
    for (const draft of all) {
      if (draft.type === 'payoff') continue;
      // A reversed payment stays strictly before its reversal, both before the payoff.
      draft.day = Math.min(draft.day, draft.reversedDay === undefined ? last : last - 2);
      if (draft.reversedDay !== undefined) draft.reversedDay = Math.min(draft.reversedDay, last - 1);
    }
  }
  all.sort((a, b) => a.day - b.day);
  return all;
}

// ---------------------------------------------------------------------------
// People

export interface PersonPlan {
  readonly index: number;
  readonly row: PersonRow;
}

function slug(text: string): string {
  return text.toLowerCase().normalize('NFKD').replace(/[^a-z0-9]+/g, '');
}

const ROMAN = ['II', 'III', 'IV', 'V', 'VI', 'VII', 'VIII', 'IX', 'X'];

function phone(r: Random): string {
  return `(${r.pick(AREA_CODES)}) ${r.int(200, 999)}-${String(r.int(0, 9999)).padStart(4, '0')}`;
}

function planPeople(data: Random, ids: Random, count: number): PersonPlan[] {
  const r = data.fork('people');
  const emails = new Set<string>();
  const companyNames = new Set<string>();
  const people: PersonPlan[] = [];
  for (let index = 0; index < count; index++) {
    const id = ids.uuid();
    const status = r.chance(0.94) ? 'active' : 'inactive';
    // The first two people are individuals so the portfolio always has someone to borrow.
    const company = index >= 2 && r.chance(0.15);
    if (company) {
      const investor = r.chance(0.25);
      const first = r.weighted([['surname', 45], ['word', 35], ['street', 20]] as const);
      const head = first === 'surname' ? r.weighted(SURNAMES) : first === 'word' ? r.pick(COMPANY_WORDS) : `${r.pick(STREET_NAMES)} Street`;
      const noun = investor ? r.pick(INVESTOR_NOUNS) : r.pick(COMPANY_NOUNS);
      const suffix = investor && r.chance(0.6) ? 'LP' : r.weighted(COMPANY_SUFFIXES);
      let name = `${head} ${noun} ${suffix}`;
      for (let k = 0; companyNames.has(name.toLowerCase()); k++) {
        name = k < ROMAN.length ? `${head} ${noun} ${ROMAN[k]} ${suffix}` : `${head} ${noun} ${k + 2} ${suffix}`;
      }
      companyNames.add(name.toLowerCase());
      people.push({
        index,
        row: {
          id, name, status, entity_type: 'company', is_borrower: false, is_investor: investor, created_at: '',
          email: r.chance(0.7) ? `${r.pick(['info', 'loans', 'accounting', 'office'])}@${slug(`${head}${noun}`)}.example` : null,
          phone: r.chance(0.8) ? phone(r) : null,
        },
      });
      continue;
    }
    const firstName = r.pick(FIRST_NAMES);
    const lastName = r.weighted(SURNAMES);
    const name = r.chance(0.08) ? `${firstName} ${String.fromCharCode(65 + r.int(0, 25))}. ${lastName}` : `${firstName} ${lastName}`;
    const f = slug(firstName);
    const l = slug(lastName);
    const local = r.weighted([[`${f}.${l}`, 45], [`${f[0] ?? 'x'}${l}`, 25], [`${f}${l}`, 15], [`${f}_${l}`, 10], [`${l}.${f}`, 5]] as const);
    const domain = r.weighted(EMAIL_DOMAINS);
    let email = `${local}@${domain}`;
    for (let attempt = 0; emails.has(email); attempt++) {
      email = `${local}${attempt < 5 ? r.int(1, 99) : r.int(100, 99_999)}@${domain}`;
    }
    emails.add(email);
    people.push({
      index,
      row: {
        id, name, email, phone: r.chance(0.95) ? phone(r) : null, status, entity_type: 'individual',
        is_borrower: false, is_investor: r.chance(0.075), created_at: '',
      },
    });
  }
  return people;
}

/** Picks from a pool with a skew towards its start, so some people appear on many loans. */
function pickSkewed<T>(r: Random, pool: readonly T[], power = 1.6): T {
  return get(pool, Math.min(pool.length - 1, Math.floor(pool.length * r.next() ** power)));
}

// ---------------------------------------------------------------------------
// The plan

export interface PlanOptions {
  readonly accountId: string;
  readonly seed: number;
  readonly scale: number;
  readonly adminIds: readonly string[];
  readonly productId: string | null;
  /** `YYYY-MM-DD`: the day the data is dated around (default `REFERENCE_DATE`). */
  readonly today?: string;
}

export interface PortfolioPlan {
  readonly counts: SeedCounts;
  readonly loans: readonly LoanPlan[];
  readonly people: readonly PersonRow[];
  readonly memberships: readonly MembershipRow[];
  readonly borrows: readonly LinkRow[];
  readonly guarantees: readonly LinkRow[];
  readonly addresses: readonly AddressRow[];
  readonly addressDetails: readonly AddressDetailRow[];
  readonly valuations: readonly ValuationRow[];
  readonly insurances: readonly InsuranceRow[];
  readonly fundingSources: readonly FundingSourceRow[];
  /** Σ term over funded loans: the number of schedule rows `schedulesAndPayments` yields. */
  readonly scheduleRowCount: number;
  /** Per funded loan, in loan order: its schedule rows, then its payments. */
  schedulesAndPayments(): Generator<{ schedules: ScheduleDbRow[]; payments: PaymentRow[] }>;
  documents(): Generator<{ document: DocumentRow; link: LoanDocumentRow }>;
  tasks(): Generator<TaskRow>;
  comments(): Generator<CommentRow>;
}

export function planPortfolio(options: PlanOptions): PortfolioPlan {
  const counts = seedCounts(options.scale);
  if (!Number.isSafeInteger(options.seed)) throw new RangeError(`seed must be a safe integer, got ${String(options.seed)}`);
  const data = Random.from('loanql-seed', options.seed);
  const idStream = (table: string): Random => Random.from('loanql-seed-ids', options.seed, options.accountId, table);
  const today = options.today ?? REFERENCE_DATE;
  if (!/^\d{4}-\d{2}-\d{2}$/.test(today) || isoOf(dayOf(today)) !== today) throw new RangeError(`today must be a date as YYYY-MM-DD, got ${JSON.stringify(today)}`);
  if (!isSeedDay(today)) throw new RangeError(`today must be from ${SEED_DAYS.first} to ${SEED_DAYS.last}, got ${today}`);
  const REF = dayOf(today);
  const REF_MS = REF * DAY_MS;

  // Loans
  const loanIds = idStream('loans');
  const createdTaken = new Set<number>();
  const loans: LoanPlan[] = [];
  for (let i = 0; i < counts.loans; i++) loans.push(planLoan(data, loanIds, i, options.productId, createdTaken, REF));
  const funded = loans.filter((loan) => loan.fundedDay !== null);

  // People and company memberships
  const peoplePlans = planPeople(data, idStream('people'), counts.people);
  const people = peoplePlans.map((plan) => plan.row);
  const individuals = people.filter((p) => p.entity_type === 'individual');
  const companies = people.filter((p) => p.entity_type === 'company');
  const membersOf = new Map<string, PersonRow[]>();
  const membershipDrafts: { company: PersonRow; person: PersonRow; role: string }[] = [];
  {
    const r = data.fork('memberships');
    for (const company of companies) {
      const n = Math.min(individuals.length, r.weighted([[0, 30], [1, 40], [2, 20], [3, 10]] as const));
      const members = r.sample(individuals.length, n).map((i) => get(individuals, i));
      membersOf.set(company.id, members);
      for (const person of members) membershipDrafts.push({ company, person, role: r.weighted(MEMBER_ROLES) });
    }
  }

  // Borrowers and guarantors
  const firstLinkMs = new Map<string, number>();
  const link = (person: PersonRow, loan: LoanPlan): void => {
    const known = firstLinkMs.get(person.id);
    if (known === undefined || loan.createdMs < known) firstLinkMs.set(person.id, loan.createdMs);
    person.is_borrower = true;
  };
  const borrowerIndividuals = individuals.filter((p) => !p.is_investor);
  const borrowerCompanies = companies.filter((p) => !p.is_investor);
  const poolInd = borrowerIndividuals.length > 0 ? borrowerIndividuals : individuals;
  const borrows: LinkRow[] = [];
  const guarantees: LinkRow[] = [];
  {
    const r = data.fork('parties');
    const borrowIds = idStream('borrows');
    const guaranteeIds = idStream('guarantees');
    for (const loan of loans) {
      const chosen = new Set<string>();
      const parties: PersonRow[] = [];
      const wanted = r.weighted([[1, 60], [2, 30], [3, 10]] as const);
      const primary = borrowerCompanies.length > 0 && r.chance(0.4) ? pickSkewed(r, borrowerCompanies) : pickSkewed(r, poolInd);
      parties.push(primary);
      chosen.add(primary.id);
      for (let attempt = 0; parties.length < wanted && attempt < 10; attempt++) {
        const person = pickSkewed(r, poolInd);
        if (chosen.has(person.id)) continue;
        chosen.add(person.id);
        parties.push(person);
      }
      const createdMs = loan.createdMs + r.int(1, 600) * 1000;
      for (const person of parties) {
        link(person, loan);
        borrows.push({ id: borrowIds.uuid(), loan_id: loan.row.id, person_id: person.id, created_at: stampOf(createdMs) });
      }
      if (r.chance(0.3)) {
        const count = r.chance(0.8) ? 1 : 2;
        const members = (membersOf.get(primary.id) ?? []).filter((m) => !chosen.has(m.id));
        for (let attempt = 0, added = 0; added < count && attempt < 10; attempt++) {
          const person = members.length > 0 && attempt < members.length ? get(members, attempt) : r.pick(poolInd);
          if (chosen.has(person.id)) continue;
          chosen.add(person.id);
          added++;
          link(person, loan);
          guarantees.push({ id: guaranteeIds.uuid(), loan_id: loan.row.id, person_id: person.id, created_at: stampOf(createdMs + r.int(1, 3600) * 1000) });
        }
      }
    }
  }
  {
    // A person exists shortly before the first loan they are on; others at any time in the last 5 years.
    const r = data.fork('people-created');
    for (const person of people) {
      const first = firstLinkMs.get(person.id);
      const ms = first !== undefined ? first - r.int(0, 30 * 24 * 3600) * 1000 - r.int(1, 3600) * 1000 : businessMs(r, REF - r.int(1, 1826));
      person.created_at = stampOf(ms);
    }
  }
  const memberships: MembershipRow[] = [];
  {
    const r = data.fork('memberships-created');
    const membershipIds = idStream('company_memberships');
    for (const { company, person, role } of membershipDrafts) {
      const ms = Math.max(Date.parse(company.created_at), Date.parse(person.created_at)) + r.int(60, 30 * 24 * 3600) * 1000;
      memberships.push({ id: membershipIds.uuid(), company_id: company.id, person_id: person.id, role, created_at: stampOf(Math.min(ms, REF_MS - 1000)) });
    }
  }

  // Addresses: most loans' own property (the one in the loan's name), the rest second properties.
  const addresses: AddressRow[] = [];
  const addressDetails: AddressDetailRow[] = [];
  const valuations: ValuationRow[] = [];
  const insurances: InsuranceRow[] = [];
  {
    const r = data.fork('addresses');
    const addressIds = idStream('addresses');
    const detailIds = idStream('address_details');
    const valuationIds = idStream('valuations');
    const insuranceIds = idStream('insurances');
    const addProperty = (loan: LoanPlan, parts: AddressParts, share: number): void => {
      const id = addressIds.uuid();
      addresses.push({ id, ...parts });
      addressDetails.push({ id: detailIds.uuid(), loan_id: loan.row.id, address_id: id });
      const startDay = (loan.fundedDay ?? Math.floor(loan.createdMs / DAY_MS)) - r.int(5, 45);
      let value = roundTo((loan.amountCents * share) / r.real(0.55, 0.8), 100_000);
      let day = startDay;
      const n = r.weighted([[1, 50], [2, 35], [3, 15]] as const);
      for (let k = 0; k < n && day < REF; k++) {
        valuations.push({
          id: valuationIds.uuid(), address_id: id, value: moneyOf(value),
          valuation_type: k === 0 ? 'appraisal' : r.weighted(VALUATION_TYPES), report_date: isoOf(day),
        });
        day += r.int(90, 400);
        value = roundTo(value * (1 + 0.03 * r.normal() + 0.02), 100_000);
      }
      const insured = r.weighted([[0, 30], [1, 55], [2, 15]] as const);
      for (let k = 0; k < insured; k++) {
        const type = k === 0 ? (loan.kind === 'Construction Loan' ? 'builders_risk' : 'hazard') : r.chance(0.6) ? 'flood' : 'liability';
        insurances.push({
          id: insuranceIds.uuid(), address_id: id, carrier: r.pick(INSURANCE_CARRIERS), type,
          coverage_amount: moneyOf(roundTo(value * r.real(0.8, 1.1), 100_000)), expiration: isoOf(REF + r.int(-90, 365)),
        });
      }
    };
    for (const loan of loans) {
      if (addresses.length < counts.addresses && r.chance(0.93)) addProperty(loan, loan.address, 1);
    }
    const hosts = funded.length > 0 ? funded : loans;
    while (addresses.length < counts.addresses) addProperty(r.pick(hosts), makeAddress(r), r.real(0.2, 0.6));
  }

  // Funding sources: investors' participations in funded loans.
  const fundingSources: FundingSourceRow[] = [];
  {
    const r = data.fork('funding');
    const fundingIds = idStream('funding_sources');
    const investors = people.filter((p) => p.is_investor);
    const order = funded.map((_, i) => i);
    for (let i = order.length - 1; i > 0; i--) {
      const j = r.int(0, i);
      const swap = get(order, i);
      order[i] = get(order, j);
      order[j] = swap;
    }
    for (const position of order) {
      if (fundingSources.length >= counts.fundingSources || investors.length === 0) break;
      const loan = get(funded, position);
      const tranches = r.weighted([[1, 65], [2, 30], [3, 5]] as const);
      const classes = tranches === 1 ? [r.chance(0.6) ? 'senior' : 'A'] : tranches === 2 ? (r.chance(0.6) ? ['A', 'B'] : ['senior', 'mezzanine']) : ['senior', 'A', 'B'];
      const shares = tranches === 1 ? [r.chance(0.8) ? 1 : r.real(0.5, 0.95)] : tranches === 2 ? [r.real(0.65, 0.85)] : [r.real(0.5, 0.6), r.real(0.2, 0.3)];
      const used = new Set<string>();
      let remaining = loan.amountCents;
      for (let k = 0; k < classes.length && fundingSources.length < counts.fundingSources; k++) {
        const original = k < shares.length ? Math.min(remaining, roundTo(loan.amountCents * get(shares, k), 10_000)) : remaining;
        remaining -= original;
        let investor = pickSkewed(r, investors, 1.4);
        for (let attempt = 0; used.has(investor.id) && attempt < 5; attempt++) investor = pickSkewed(r, investors, 1.4);
        if (used.has(investor.id) || original <= 0) continue;
        used.add(investor.id);
        const cls = get(classes, k);
        const spread = cls === 'senior' || cls === 'A' ? r.real(1.5, 3.5) : r.real(0.25, 1.5);
        fundingSources.push({
          id: fundingIds.uuid(), person_id: investor.id, loan_id: loan.row.id, class: cls,
          rate: formatRate(Math.max(4, roundTo(loan.rateValue - spread, 0.125))),
          original_amount: moneyOf(original),
          committed_amount: moneyOf(r.chance(0.85) ? original : roundTo(original * r.real(1, 1.15), 100_000)),
          date_funded: isoOf(Math.min(REF - 1, (loan.fundedDay as number) + r.int(0, 5))),
        });
      }
    }
  }

  const scheduleRowCount = funded.reduce((sum, loan) => sum + loan.row.term, 0);

  function* schedulesAndPayments(): Generator<{ schedules: ScheduleDbRow[]; payments: PaymentRow[] }> {
    const scheduleIds = idStream('schedules');
    const paymentIds = idStream('payments');
    // Payments are shared out in proportion to each loan's paid installments (an early payoff counts one).
    const weight = (loan: LoanPlan): number => loan.paidRows + (loan.payoffDay !== null && loan.paidRows < loan.row.term ? 1 : 0);
    const totalWeight = funded.reduce((sum, loan) => sum + weight(loan), 0);
    let cumulative = 0;
    let produced = 0;
    for (const loan of funded) {
      const rows = loanSchedule(loan);
      const schedules = rows.map((row) => ({
        id: scheduleIds.uuid(), loan_id: loan.row.id, number: row.number, due: row.due,
        payment: row.payment, principal: row.principal, interest: row.interest, balance: row.balance,
        // The rows as §7 made them (SPEC §12 keeps them beside the rows payoffs and curtailments change).
        scheduled_payment: row.payment, scheduled_principal: row.principal, scheduled_interest: row.interest, scheduled_balance: row.balance,
      }));
      cumulative += weight(loan);
      const target = totalWeight === 0 ? 0 : Math.round((counts.payments * cumulative) / totalWeight) - produced;
      const drafts = weight(loan) === 0 ? [] : loanPayments(loan, rows, target, data.fork('payments', loan.index), REF);
      produced += drafts.length;
      const payments = drafts.map((draft): PaymentRow => {
        const payment: PaymentRow = { id: paymentIds.uuid(), loan_id: loan.row.id, date: isoOf(draft.day), amount: moneyOf(draft.cents), type: draft.type, method: draft.method };
        if (draft.reversedDay !== undefined) {
          payment.date_reversed = isoOf(draft.reversedDay);
          // Alternate the reasons SPEC §12 names (deterministic; nsf adds the product's NSF fee, 0 in the demo).
          payment.reversal_reason = REVERSAL_REASONS[draft.day % REVERSAL_REASONS.length]!;
        }
        return payment;
      });
      yield { schedules, payments };
    }
  }

  function* documents(): Generator<{ document: DocumentRow; link: LoanDocumentRow }> {
    const r = data.fork('documents');
    const documentIds = idStream('documents');
    const linkIds = idStream('loan_documents');
    const types = DOCUMENT_TYPES.map(([type, label, weight]) => [[type, label] as const, weight] as const);
    for (let i = 0; i < counts.documents; i++) {
      const loan = r.pick(loans);
      const [type, label] = r.weighted(types);
      const status = loan.row.status === 'lead'
        ? r.weighted([['pending', 50], ['received', 40], ['rejected', 10]] as const)
        : r.weighted([['approved', 55], ['received', 20], ['pending', 15], ['rejected', 10]] as const);
      const createdDay = Math.floor(loan.createdMs / DAY_MS);
      const uploaded = status === 'pending' ? null : Math.min(REF - 1, createdDay + r.int(0, Math.max(0, Math.min(REF - 1 - createdDay, loan.fundedDay === null ? 120 : 900))));
      const year = isoOf(uploaded ?? createdDay).slice(0, 4);
      const name = type === 'bank_statement' || type === 'tax_return' ? `${label} ${year}.pdf` : `${label} - ${loan.address.street1}.pdf`;
      const id = documentIds.uuid();
      yield {
        document: { id, name, status, type, uploaded_date: uploaded === null ? null : isoOf(uploaded) },
        link: { id: linkIds.uuid(), loan_id: loan.row.id, document_id: id },
      };
    }
  }

  function* tasks(): Generator<TaskRow> {
    const r = data.fork('tasks');
    const taskIds = idStream('tasks');
    for (let i = 0; i < counts.tasks; i++) {
      const loan = r.chance(0.95) ? r.pick(loans) : null;
      const status = r.weighted([['completed', 40], ['open', 40], ['in_progress', 20]] as const);
      const floorDay = loan === null ? REF - 600 : Math.floor(loan.createdMs / DAY_MS);
      let dueDay = status === 'completed'
        ? REF - (r.chance(0.95) ? r.int(1, 540) : -r.int(0, 30))
        : REF + Math.max(-120, Math.min(180, Math.round(r.normal() * 45 + 10)));
      const lead = r.int(3, 60);
      if (dueDay < floorDay + 3) dueDay = floorDay + lead; // never due before its loan existed
      const createdDay = Math.max(floorDay, Math.min(REF - 1, dueDay - lead));
      const createdMs = loan === null ? businessMs(r, createdDay) : Math.max(loan.createdMs + 1000, businessMs(r, createdDay));
      yield {
        id: taskIds.uuid(), loan_id: loan === null ? null : loan.row.id, name: r.pick(TASK_NAMES), status,
        date_due: isoOf(dueDay), created_at: stampOf(Math.min(createdMs, REF_MS - 1000)),
      };
    }
  }

  function* comments(): Generator<CommentRow> {
    const r = data.fork('comments');
    const commentIds = idStream('comments');
    for (let i = 0; i < counts.comments; i++) {
      const loan = r.pick(loans);
      const adminDraw = r.next(); // drawn even without admins, so the rest of the stream does not depend on them
      const admin = options.adminIds.length === 0 ? null : get(options.adminIds, Math.floor(adminDraw * options.adminIds.length));
      const createdMs = loan.createdMs + Math.floor(r.next() * Math.max(1, REF_MS - 1000 - loan.createdMs));
      yield { id: commentIds.uuid(), loan_id: loan.row.id, admin_id: admin, text: r.pick(COMMENT_TEXTS), created_at: stampOf(createdMs) };
    }
  }

  return {
    counts,
    loans,
    people,
    memberships,
    borrows,
    guarantees,
    addresses,
    addressDetails,
    valuations,
    insurances,
    fundingSources,
    scheduleRowCount,
    schedulesAndPayments,
    documents,
    tasks,
    comments,
  };
}
