/**
 * Loan payment schedules and the `is_next` rule (product spec §7) as pure
 * functions: no I/O, no database, no clock, no local time zone.
 *
 * Money never touches binary floating point and is never evaluated to a
 * fixed number of digits. Inputs are read as exact decimals; the periodic
 * rate is the exact rational r = R / D (R the rate's digits, D = 100 ×
 * periods per year × 10^decimals); the annuity payment P·r·(1+r)^n /
 * ((1+r)^n − 1) is one exact bigint fraction, rounded half-up to cents with
 * an exact tie test (1,000 at 6.25 % quarterly, 1 payment = 1,015.625 →
 * 1,015.63). Every row's interest is round_half_up(balance × r, 2), exact
 * too. Money is returned as strings with exactly two decimals. Dates are
 * plain `YYYY-MM-DD` calendar dates (proleptic Gregorian, years 0001..9999).
 *
 * Decisions not spelled out in §7 (kept deliberately simple):
 * - `amount` and `regularPayment` must have at most two decimals (they are
 *   money); `rate` may have any number of decimals.
 * - Amortizing rows never repay more than the balance: a row whose payment
 *   covers the balance repays it (payment = balance + interest) and is the
 *   last row, whether the payment is the formula's or a given one. So a
 *   rounded-up formula payment on a tiny loan (1.00 over 200 at 0 %: 0.01)
 *   ends the schedule early instead of leaving rows of 0.00; `dateMaturity`
 *   is then that row's date. Otherwise row `term` takes the remaining balance.
 * - "A payment that rounds to 0.00" is a formula payment (or an interest-only
 *   payment at a rate above 0) whose exact value is above 0 but below half a
 *   cent. An interest-only loan at 0 % pays 0.00 interest and is accepted.
 * - Every amount of the schedule, and its totals (interest, payments), must
 *   fit the columns' numeric(14,2): at most 999,999,999,999.99.
 * - `dateFunded` equal to `firstPaymentDate` is accepted; after it is refused.
 * - semi_monthly: when the first due date's day is after the 15th it is the
 *   second payment of its month (D = day − 15). The first row is the first
 *   due date itself, even on the 30th of a 31-day month (where later months
 *   use the last day). A second day below 30 that a month lacks (D = 14 in a
 *   28-day February) is clamped to the month's last day.
 */
import { Decimal as DecimalJs } from 'decimal.js';
import { civilFromDays, daysFromCivil, daysInMonth } from './calendar.js';

const Dec = DecimalJs.clone({ precision: 50, rounding: DecimalJs.ROUND_HALF_UP });
type Dec = InstanceType<typeof Dec>;

/** Payment frequencies known to the schedule. */
export type Frequency = 'monthly' | 'quarterly' | 'semi_monthly' | 'biweekly' | 'weekly' | 'annually';

/** `amortizing` (level payment) or `interest_only` (principal due on the last row). */
export type Amortization = 'amortizing' | 'interest_only';

/** Every valid frequency, in a stable order. */
export const FREQUENCIES: readonly Frequency[] = Object.freeze([
  'monthly',
  'quarterly',
  'semi_monthly',
  'biweekly',
  'weekly',
  'annually',
] as const);

/** Every valid amortization. */
export const AMORTIZATIONS: readonly Amortization[] = Object.freeze(['amortizing', 'interest_only'] as const);

/** Number of payment periods in a year for each frequency (used for the periodic rate). */
export const PERIODS_PER_YEAR: Readonly<Record<Frequency, number>> = Object.freeze({
  monthly: 12,
  quarterly: 4,
  semi_monthly: 24,
  biweekly: 26,
  weekly: 52,
  annually: 1,
});

/** Longest schedule accepted, in payments. */
export const MAX_TERM = 1200;

/** The largest amount a schedule may hold: the columns are numeric(14,2). */
export const MAX_MONEY = '999999999999.99';
const MAX_MONEY_CENTS = 99_999_999_999_999n;

/** What a schedule is built from. Money and rates may be numbers or decimal strings. */
export interface ScheduleInput {
  /** Principal, > 0, at most two decimals. */
  amount: string | number;
  /** Annual rate in percent (`12` = 12 %), >= 0. */
  rate: string | number;
  /** Number of scheduled payments, integer 1..1200. */
  term: number;
  frequency: Frequency;
  /** Defaults to `amortizing`. */
  amortization?: Amortization | null;
  /** `YYYY-MM-DD`; the first due date is one period later unless `firstPaymentDate` is given. */
  dateFunded?: string | null;
  /** `YYYY-MM-DD`; the first due date. Not before `dateFunded`. */
  firstPaymentDate?: string | null;
  /** Use this payment instead of the annuity formula (amortizing only), > 0, at most two decimals. */
  regularPayment?: string | number | null;
}

/** The input fields an error can be about. */
export type ScheduleField = keyof ScheduleInput;

/** One installment. Money fields are strings with exactly two decimals; `balance` is after this row. */
export interface ScheduleRow {
  /** 1-based position in the schedule. */
  readonly number: number;
  /** Due date, `YYYY-MM-DD`. */
  readonly due: string;
  /** principal + interest. */
  readonly payment: string;
  readonly principal: string;
  readonly interest: string;
  readonly balance: string;
}

/** A full schedule and the values derived from it. */
export interface Schedule {
  readonly rows: readonly ScheduleRow[];
  /** The payment of a regular (non-final) row: the formula payment, the given one, or the interest for interest_only. */
  readonly regularPayment: string;
  /** Due date of the last row. */
  readonly dateMaturity: string;
  /** Sum of the rows' interest. */
  readonly totalInterest: string;
}

/** Thrown for any invalid input to this module; the message says why, `fields` which inputs are involved. */
export class ScheduleInputError extends Error {
  constructor(
    message: string,
    readonly fields: readonly ScheduleField[] = [],
  ) {
    super(message);
    this.name = 'ScheduleInputError';
  }
}

// ---------------------------------------------------------------------------
// Dates: proleptic Gregorian calendar on day numbers, no Date objects.

interface YMD {
  readonly y: number;
  readonly m: number;
  readonly d: number;
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

function parseDate(value: unknown, field: ScheduleField): YMD {
  if (typeof value !== 'string') throw new ScheduleInputError(`${field} must be a YYYY-MM-DD string`, [field]);
  const match = ISO_DATE.exec(value);
  if (match === null) throw new ScheduleInputError(`${field} must be a YYYY-MM-DD date, got "${value}"`, [field]);
  const y = Number(match[1]);
  const m = Number(match[2]);
  const d = Number(match[3]);
  if (y < 1 || m < 1 || m > 12 || d < 1 || d > daysInMonth(y, m)) {
    throw new ScheduleInputError(`${field} is not a calendar date: "${value}"`, [field]);
  }
  return { y, m, d };
}

function inRange({ y }: YMD): boolean {
  return y >= 1 && y <= 9999;
}

function formatDate({ y, m, d }: YMD): string {
  return `${String(y).padStart(4, '0')}-${m < 10 ? '0' : ''}${m}-${d < 10 ? '0' : ''}${d}`;
}

/** Days since 1970-01-01 (`domain/calendar.ts`). */
function toDayNumber({ y, m, d }: YMD): number {
  return daysFromCivil(y, m, d);
}

/** Inverse of toDayNumber. */
function fromDayNumber(days: number): YMD {
  const [y, m, d] = civilFromDays(days);
  return { y, m, d };
}

/** The month `months` after (y, m), on day `day` clamped to that month's last day. */
function monthDay(y: number, m: number, months: number, day: number): YMD {
  const total = y * 12 + (m - 1) + months;
  const ny = Math.floor(total / 12);
  const nm = total - ny * 12 + 1;
  return { y: ny, m: nm, d: Math.min(day, daysInMonth(ny, nm)) };
}

function addDays(date: YMD, days: number): YMD {
  return fromDayNumber(toDayNumber(date) + days);
}

/**
 * Where a schedule's due dates are counted from (§7): First_Payment_Date counting from 0,
 * else Date_Funded counting from 1.
 */
interface Anchor {
  readonly date: YMD;
  /** 0 when `date` is the first due date, 1 when it is Date_Funded. */
  readonly offset: 0 | 1;
}

/**
 * Monthly (1), quarterly (3) and annually (12 months per period): row k (0-based) falls
 * k + offset periods after the anchor, on the anchor's day clamped to the month's last day —
 * always counted from the anchor, so Jan 31 gives Feb 29, Mar 31, Apr 30.
 */
function monthStepDue(anchor: Anchor, monthsPerPeriod: number, k: number): YMD {
  const { y, m, d } = anchor.date;
  return monthDay(y, m, monthsPerPeriod * (k + anchor.offset), d);
}

/** Weekly (7) and biweekly (14 days per period): row k falls (k + offset) periods after the anchor. */
function dayStepDue(anchor: Anchor, daysPerPeriod: number, k: number): YMD {
  return addDays(anchor.date, daysPerPeriod * (k + anchor.offset));
}

/**
 * Semi-monthly: two days in every month, D and D + 15, where D is the first due date's day
 * (that day − 15 when it is after the 15th, the first due date then being its month's second
 * payment); a second day of 30 or more is the month's last day (15th → 15th and last day; 1st →
 * 1st and 16th). Row 0 is the first due date itself; without First_Payment_Date that is
 * Date_Funded + 15 days.
 */
function semiMonthlyDue(anchor: Anchor, k: number): YMD {
  const first = anchor.offset === 0 ? anchor.date : addDays(anchor.date, 15);
  if (k === 0) return first;
  const secondHalf = first.d > 15;
  const day = secondHalf ? first.d - 15 : first.d;
  const position = (secondHalf ? 1 : 0) + k; // 0 = D of the first due date's month, 1 = its D + 15, …
  const month = monthDay(first.y, first.m, Math.floor(position / 2), 1);
  if (position % 2 === 0) return { ...month, d: day };
  const last = daysInMonth(month.y, month.m);
  return { ...month, d: day + 15 >= 30 ? last : Math.min(day + 15, last) };
}

/** The due date of row k (0-based). */
function dueDate(frequency: Frequency, anchor: Anchor, k: number): YMD {
  switch (frequency) {
    case 'monthly':
      return monthStepDue(anchor, 1, k);
    case 'quarterly':
      return monthStepDue(anchor, 3, k);
    case 'annually':
      return monthStepDue(anchor, 12, k);
    case 'weekly':
      return dayStepDue(anchor, 7, k);
    case 'biweekly':
      return dayStepDue(anchor, 14, k);
    case 'semi_monthly':
      return semiMonthlyDue(anchor, k);
  }
}

function checkFrequency(value: unknown): Frequency {
  if (typeof value !== 'string' || !Object.hasOwn(PERIODS_PER_YEAR, value)) {
    throw new ScheduleInputError(`frequency must be one of ${FREQUENCIES.join(', ')}, got ${JSON.stringify(value)}`, ['frequency']);
  }
  return value as Frequency;
}

function isGiven(value: unknown): boolean {
  return value !== undefined && value !== null;
}

/** The anchor of §7's date rules; refuses Date_Funded after First_Payment_Date. */
function anchorOf(input: Pick<ScheduleInput, 'dateFunded' | 'firstPaymentDate'>): Anchor {
  const funded = isGiven(input.dateFunded) ? parseDate(input.dateFunded, 'dateFunded') : null;
  const first = isGiven(input.firstPaymentDate) ? parseDate(input.firstPaymentDate, 'firstPaymentDate') : null;
  if (first !== null) {
    if (funded !== null && toDayNumber(funded) > toDayNumber(first)) {
      throw new ScheduleInputError(
        `dateFunded (${formatDate(funded)}) is after firstPaymentDate (${formatDate(first)}); a loan is funded before its first payment`,
        ['dateFunded', 'firstPaymentDate'],
      );
    }
    return { date: first, offset: 0 };
  }
  if (funded !== null) return { date: funded, offset: 1 };
  throw new ScheduleInputError('either firstPaymentDate or dateFunded is required', ['dateFunded', 'firstPaymentDate']);
}

/**
 * The first `count` due dates of a schedule with this frequency and start (§7). Throws
 * ScheduleInputError on a bad date or frequency, Date_Funded after First_Payment_Date, or a
 * date past year 9999.
 */
export function dueDates(
  input: Pick<ScheduleInput, 'frequency' | 'dateFunded' | 'firstPaymentDate'>,
  count: number,
): string[] {
  const frequency = checkFrequency(input.frequency);
  const anchor = anchorOf(input);
  if (!Number.isSafeInteger(count) || count < 0) throw new ScheduleInputError(`count must be a non-negative integer, got ${count}`);
  const dates: string[] = [];
  for (let k = 0; k < count; k++) dates.push(formatDate(checkedDue(frequency, anchor, k)));
  return dates;
}

function checkedDue(frequency: Frequency, anchor: Anchor, k: number): YMD {
  const date = dueDate(frequency, anchor, k);
  if (!inRange(date)) {
    throw new ScheduleInputError(`the schedule runs past year 9999 (row ${k + 1}); years 0001..9999 are supported`, [
      'term',
      anchor.offset === 0 ? 'firstPaymentDate' : 'dateFunded',
    ]);
  }
  return date;
}

// ---------------------------------------------------------------------------
// Money

const DECIMAL_STRING = /^[+-]?(\d+\.?\d*|\.\d+)$/;

function parseDecimal(value: unknown, field: string, fields: readonly ScheduleField[] = []): Dec {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new ScheduleInputError(`${field} must be a finite number, got ${value}`, fields);
    return new Dec(value);
  }
  if (typeof value === 'string') {
    const text = value.trim();
    if (DECIMAL_STRING.test(text)) return new Dec(text);
    throw new ScheduleInputError(`${field} must be a decimal number, got "${value}"`, fields);
  }
  throw new ScheduleInputError(`${field} must be a number or a decimal string, got ${value === null ? 'null' : typeof value}`, fields);
}

function parseMoney(value: unknown, field: 'amount' | 'regularPayment'): bigint {
  const amount = parseDecimal(value, field, [field]);
  if (amount.lte(0)) throw new ScheduleInputError(`${field} must be greater than 0, got ${amount.toString()}`, [field]);
  if (amount.decimalPlaces() > 2) throw new ScheduleInputError(`${field} must have at most two decimals, got ${amount.toString()}`, [field]);
  const cents = scaled(amount, 2);
  if (cents > MAX_MONEY_CENTS) throw new ScheduleInputError(`${field} must be at most ${MAX_MONEY}, got ${amount.toFixed()}`, [field]);
  return cents;
}

/** Exact integer `value × 10^places` for a non-negative value with at most `places` decimals. */
function scaled(value: Dec, places: number): bigint {
  return BigInt(value.toFixed(places).replace('.', ''));
}

/** Non-negative integer cents as a string with exactly two decimals. */
function money(cents: bigint): string {
  const digits = cents.toString().padStart(3, '0');
  return `${digits.slice(0, -2)}.${digits.slice(-2)}`;
}

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

/** round_half_up(num / den) for num >= 0, den > 0: exact, ties (a remainder of exactly half) go up. */
function roundHalfUp(num: bigint, den: bigint): bigint {
  return (2n * num + den) / (2n * den);
}

/**
 * The §7 annuity payment in cents, P·r / (1 − (1+r)^−n) = P·r·(1+r)^n / ((1+r)^n − 1), as one
 * exact fraction with r = R / D: P·R·(D+R)^n / (D·((D+R)^n − D^n)), rounded half up.
 * (D+R)^n has about n·27 bits at most (weekly, 4 decimals): ~32,000 bits for n = 1200, a
 * fraction of a millisecond of bigint work.
 */
function annuityPaymentCents(principalCents: bigint, rateNum: bigint, rateDen: bigint, term: number): bigint {
  if (rateNum === 0n) return roundHalfUp(principalCents, BigInt(term));
  const n = BigInt(term);
  const grown = (rateDen + rateNum) ** n;
  return roundHalfUp(principalCents * rateNum * grown, rateDen * (grown - rateDen ** n));
}

function tooLarge(what: string, cents: bigint, fields: readonly ScheduleField[]): ScheduleInputError {
  return new ScheduleInputError(`the schedule's ${what} would be ${money(cents)}, past the largest amount ${MAX_MONEY} (numeric(14,2))`, fields);
}

/**
 * Builds the payment schedule of §7. Guarantees: at most `term` rows (exactly `term` unless an
 * amortizing payment repays the loan earlier) with strictly increasing due dates, every row's
 * payment = principal + interest, balances never negative, principals summing exactly to
 * `amount`, a final balance of "0.00", and every amount and total within numeric(14,2). Throws
 * ScheduleInputError (with the fields involved) on input §7 refuses.
 */
export function buildSchedule(input: ScheduleInput): Schedule {
  if (input === null || typeof input !== 'object') throw new ScheduleInputError('schedule input must be an object');
  const principal = parseMoney(input.amount, 'amount');
  const parsedRate = parseDecimal(input.rate, 'rate', ['rate']);
  const rate = parsedRate.isZero() ? new Dec(0) : parsedRate; // drop a -0 sign
  if (rate.isNegative()) throw new ScheduleInputError(`rate must not be negative, got ${rate.toString()}`, ['rate']);
  const term = input.term;
  if (typeof term !== 'number' || !Number.isInteger(term) || term < 1 || term > MAX_TERM) {
    throw new ScheduleInputError(`term must be an integer from 1 to ${MAX_TERM}, got ${JSON.stringify(term)}`, ['term']);
  }
  const frequency = checkFrequency(input.frequency);
  const amortization = input.amortization ?? 'amortizing';
  if (!(AMORTIZATIONS as readonly unknown[]).includes(amortization)) {
    throw new ScheduleInputError(`amortization must be one of ${AMORTIZATIONS.join(', ')}, got ${JSON.stringify(amortization)}`, ['amortization']);
  }
  const anchor = anchorOf(input);
  const given = isGiven(input.regularPayment) ? parseMoney(input.regularPayment, 'regularPayment') : null;
  if (given !== null && amortization === 'interest_only') {
    throw new ScheduleInputError('regularPayment cannot be given for an interest_only loan: each row pays the interest, the last adds the principal', [
      'regularPayment',
    ]);
  }
  // Fails on a date past year 9999 before any money maths (every row is on or before row `term`).
  checkedDue(frequency, anchor, term - 1);

  // r = rate / 100 / periods = R / D exactly (R: the rate's digits), reduced.
  const rateScale = rate.decimalPlaces();
  const rawNum = scaled(rate, rateScale);
  const rawDen = BigInt(100 * PERIODS_PER_YEAR[frequency]) * 10n ** BigInt(rateScale);
  const divisor = rawNum === 0n ? rawDen : gcd(rawNum, rawDen);
  const rateNum = rawNum / divisor;
  const rateDen = rawDen / divisor;
  const interestOn = (balance: bigint): bigint => roundHalfUp(balance * rateNum, rateDen);
  const moneyFields: ScheduleField[] = given === null ? ['amount', 'rate'] : ['amount', 'rate', 'regularPayment'];

  if (amortization === 'interest_only') {
    const interest = interestOn(principal);
    if (interest === 0n && rateNum !== 0n) {
      throw new ScheduleInputError(`the interest-only payment rounds to 0.00 (amount ${money(principal)} at this rate)`, ['amount']);
    }
    if (principal + interest > MAX_MONEY_CENTS) throw tooLarge('last payment', principal + interest, moneyFields);
    const totalInterest = interest * BigInt(term);
    if (totalInterest > MAX_MONEY_CENTS) throw tooLarge('total interest', totalInterest, ['amount', 'rate', 'term']);
    if (principal + totalInterest > MAX_MONEY_CENTS) throw tooLarge('total of payments', principal + totalInterest, ['amount', 'rate', 'term']);
    const interestText = money(interest);
    const balanceText = money(principal);
    const rows: ScheduleRow[] = new Array<ScheduleRow>(term);
    for (let k = 0; k < term; k++) {
      const last = k === term - 1;
      rows[k] = {
        number: k + 1,
        due: formatDate(dueDate(frequency, anchor, k)),
        payment: last ? money(principal + interest) : interestText,
        principal: last ? balanceText : '0.00',
        interest: interestText,
        balance: last ? '0.00' : balanceText,
      };
    }
    return { rows, regularPayment: interestText, dateMaturity: (rows[term - 1] as ScheduleRow).due, totalInterest: money(totalInterest) };
  }

  let payment: bigint;
  if (given !== null) {
    payment = given;
    const firstInterest = interestOn(principal);
    if (payment <= firstInterest) {
      throw new ScheduleInputError(
        `regularPayment ${money(payment)} must exceed the first row's interest ${money(firstInterest)}`,
        ['regularPayment', 'amount', 'rate'],
      );
    }
  } else {
    payment = annuityPaymentCents(principal, rateNum, rateDen, term);
    if (payment === 0n) throw new ScheduleInputError(`the payment rounds to 0.00 (amount ${money(principal)} over ${term} payments)`, ['amount']);
    if (payment > MAX_MONEY_CENTS) throw tooLarge('payment', payment, moneyFields);
  }

  const rows: ScheduleRow[] = [];
  let balance = principal;
  let totalInterest = 0n;
  for (let k = 0; k < term && balance > 0n; k++) {
    const interest = interestOn(balance);
    const part = k === term - 1 || payment - interest >= balance ? balance : payment - interest;
    const rowPayment = part + interest;
    if (rowPayment > MAX_MONEY_CENTS) throw tooLarge(`payment of row ${k + 1}`, rowPayment, moneyFields);
    balance -= part;
    totalInterest += interest;
    rows.push({
      number: k + 1,
      due: formatDate(dueDate(frequency, anchor, k)),
      payment: money(rowPayment),
      principal: money(part),
      interest: money(interest),
      balance: money(balance),
    });
  }
  if (totalInterest > MAX_MONEY_CENTS) throw tooLarge('total interest', totalInterest, ['amount', 'rate', 'term']);
  if (principal + totalInterest > MAX_MONEY_CENTS) throw tooLarge('total of payments', principal + totalInterest, ['amount', 'rate', 'term']);
  return { rows, regularPayment: money(payment), dateMaturity: (rows[rows.length - 1] as ScheduleRow).due, totalInterest: money(totalInterest) };
}

// ---------------------------------------------------------------------------
// is_next

/**
 * The §7 `is_next` rule. For a loan in `servicing`, returns the index of the
 * earliest row whose cumulative scheduled payment (rows up to and including
 * it) exceeds `paidTotal` (sum of the loan's non-reversed payments); returns
 * -1 when every row is covered or the status is anything else. Rows are
 * taken in the given order (schedule order, i.e. by due date).
 * Throws ScheduleInputError if `paidTotal` is not a decimal or a row's payment
 * is not a non-negative money string (at most two decimals).
 */
export function nextRowIndex(
  rows: readonly Pick<ScheduleRow, 'payment'>[],
  paidTotal: string | number,
  loanStatus: string,
): number {
  if (loanStatus !== 'servicing') return -1;
  // cumulative (whole cents) > paid  <=>  cumulative > floor(paid × 100)
  const paidCents = BigInt(parseDecimal(paidTotal, 'paidTotal').times(100).floor().toFixed(0));
  let cumulative = 0n;
  for (let i = 0; i < rows.length; i++) {
    cumulative += moneyToCents((rows[i] as Pick<ScheduleRow, 'payment'>).payment, i);
    if (cumulative > paidCents) return i;
  }
  return -1;
}

const MONEY_STRING = /^(\d+)(?:\.(\d{1,2}))?$/;

function moneyToCents(value: unknown, index: number): bigint {
  const match = typeof value === 'string' ? MONEY_STRING.exec(value) : null;
  if (match === null) {
    throw new ScheduleInputError(`rows[${index}].payment must be a non-negative amount with at most two decimals, got ${JSON.stringify(value)}`);
  }
  return BigInt(match[1] as string) * 100n + BigInt((match[2] ?? '0').padEnd(2, '0'));
}
