/**
 * Loan payment schedules and the `is_next` rule (product spec §7) as pure
 * functions: no I/O, no database, no clock, no local time zone.
 *
 * Money never touches binary floating point. Inputs are parsed with a local
 * decimal.js clone (50 significant digits, ROUND_HALF_UP), which also
 * evaluates the annuity formula; the per-row maths then runs in exact integer
 * cents (BigInt), exact and several times faster than Decimal objects per row. Money is
 * returned as strings with exactly two decimals. Dates are plain `YYYY-MM-DD`
 * calendar dates (proleptic Gregorian, years 0001..9999).
 *
 * Decisions not spelled out in §7 (kept deliberately simple):
 * - `amount` and `regularPayment` must have at most two decimals (they are
 *   money); `rate` may have any number of decimals.
 * - Per-row interest is `round_half_up(balance × rate / (100 × periods), 2)`
 *   evaluated on the exact rational, so r itself is never rounded.
 * - The annuity payment is evaluated at 50 significant digits before rounding
 *   to cents (exact to the cent unless the true value sits within ~1e-40 of a
 *   half cent). r = 0 gives round_half_up(P / n, 2), exactly.
 * - Every row's principal is `min(payment − interest, balance)` and every
 *   row's payment is `principal + interest`, so a payment that is too large
 *   (given, or a rounded-up formula payment on a tiny loan) pays the loan off
 *   early and the remaining rows are all zero. The last row takes whatever
 *   balance is left.
 * - A given `regularPayment` smaller than the first period's interest would
 *   grow the balance; it is rejected. For `interest_only` loans a given
 *   `regularPayment` is ignored: the payment is the interest by definition.
 * - semi_monthly: row k (0-based) is due `first + floor(k/2) months`, plus 15
 *   days when k is odd. "One period after dateFunded" is therefore +15 days.
 * - `firstPaymentDate` wins over `dateFunded`; both are validated when given,
 *   their order is not checked. `null` and `undefined` mean "absent"; an empty
 *   string is an invalid date.
 */
import { Decimal as DecimalJs } from 'decimal.js';

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
  /** `YYYY-MM-DD`; wins over `dateFunded`. */
  firstPaymentDate?: string | null;
  /** Use this payment instead of the annuity formula (amortizing only), > 0, at most two decimals. */
  regularPayment?: string | number | null;
}

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

/** Thrown for any invalid input to this module; the message says which field and why. */
export class ScheduleInputError extends Error {
  constructor(message: string) {
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

function isLeap(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

function daysInMonth(y: number, m: number): number {
  return m === 2 ? (isLeap(y) ? 29 : 28) : m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31;
}

function parseDate(value: unknown, field: string): YMD {
  if (typeof value !== 'string') throw new ScheduleInputError(`${field} must be a YYYY-MM-DD string`);
  const match = ISO_DATE.exec(value);
  if (match === null) throw new ScheduleInputError(`${field} must be a YYYY-MM-DD date, got "${value}"`);
  const y = Number(match[1]);
  const m = Number(match[2]);
  const d = Number(match[3]);
  if (y < 1 || m < 1 || m > 12 || d < 1 || d > daysInMonth(y, m)) {
    throw new ScheduleInputError(`${field} is not a calendar date: "${value}"`);
  }
  return { y, m, d };
}

function formatDate({ y, m, d }: YMD): string {
  if (y < 1 || y > 9999) throw new ScheduleInputError(`date out of range (year ${y}); years 0001..9999 are supported`);
  return `${String(y).padStart(4, '0')}-${m < 10 ? '0' : ''}${m}-${d < 10 ? '0' : ''}${d}`;
}

/** Days since 1970-01-01 (H. Hinnant's days_from_civil). */
function toDayNumber({ y, m, d }: YMD): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** Inverse of toDayNumber (civil_from_days). */
function fromDayNumber(days: number): YMD {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return { y: yoe + era * 400 + (m <= 2 ? 1 : 0), m, d };
}

function addMonths({ y, m, d }: YMD, months: number): YMD {
  const total = y * 12 + (m - 1) + months;
  const ny = Math.floor(total / 12);
  const nm = total - ny * 12 + 1;
  return { y: ny, m: nm, d: Math.min(d, daysInMonth(ny, nm)) };
}

function addDays(date: YMD, days: number): YMD {
  return fromDayNumber(toDayNumber(date) + days);
}

function addPeriodsYmd(first: YMD, frequency: Frequency, k: number): YMD {
  switch (frequency) {
    case 'monthly':
      return addMonths(first, k);
    case 'quarterly':
      return addMonths(first, 3 * k);
    case 'annually':
      return addMonths(first, 12 * k);
    case 'weekly':
      return addDays(first, 7 * k);
    case 'biweekly':
      return addDays(first, 14 * k);
    case 'semi_monthly': {
      const base = addMonths(first, Math.floor(k / 2));
      return k % 2 === 0 ? base : addDays(base, 15);
    }
  }
}

function checkFrequency(value: unknown): Frequency {
  if (typeof value !== 'string' || !Object.hasOwn(PERIODS_PER_YEAR, value)) {
    throw new ScheduleInputError(`frequency must be one of ${FREQUENCIES.join(', ')}, got ${JSON.stringify(value)}`);
  }
  return value as Frequency;
}

/**
 * The date `k` periods after `isoDate` (k = 0 returns the date itself), always
 * computed from `isoDate` directly. Months clamp to the month's last day
 * (2024-01-31 + 1 month = 2024-02-29); semi_monthly adds floor(k/2) months
 * plus 15 days when k is odd. Throws ScheduleInputError on a bad date,
 * frequency or k (must be a non-negative integer).
 */
export function addPeriods(isoDate: string, frequency: Frequency, k: number): string {
  const date = parseDate(isoDate, 'date');
  const freq = checkFrequency(frequency);
  if (!Number.isSafeInteger(k) || k < 0) throw new ScheduleInputError(`k must be a non-negative integer, got ${k}`);
  return formatDate(addPeriodsYmd(date, freq, k));
}

// ---------------------------------------------------------------------------
// Money

const DECIMAL_STRING = /^[+-]?(\d+\.?\d*|\.\d+)$/;
const ONE = new Dec(1);

function parseDecimal(value: unknown, field: string): Dec {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new ScheduleInputError(`${field} must be a finite number, got ${value}`);
    return new Dec(value);
  }
  if (typeof value === 'string') {
    const text = value.trim();
    if (DECIMAL_STRING.test(text)) return new Dec(text);
    throw new ScheduleInputError(`${field} must be a decimal number, got "${value}"`);
  }
  throw new ScheduleInputError(`${field} must be a number or a decimal string, got ${value === null ? 'null' : typeof value}`);
}

function parseMoney(value: unknown, field: string): Dec {
  const amount = parseDecimal(value, field);
  if (amount.lte(0)) throw new ScheduleInputError(`${field} must be greater than 0, got ${amount.toString()}`);
  if (amount.decimalPlaces() > 2) throw new ScheduleInputError(`${field} must have at most two decimals, got ${amount.toString()}`);
  return amount;
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

/**
 * Builds the payment schedule of §7. Guarantees: exactly `term` rows with
 * strictly increasing due dates, every row's payment = principal + interest,
 * balances never negative, principals summing exactly to `amount`, and a
 * final balance of "0.00". Throws ScheduleInputError on invalid input.
 */
export function buildSchedule(input: ScheduleInput): Schedule {
  if (input === null || typeof input !== 'object') throw new ScheduleInputError('schedule input must be an object');
  const amount = parseMoney(input.amount, 'amount');
  const parsedRate = parseDecimal(input.rate, 'rate');
  const rate = parsedRate.isZero() ? new Dec(0) : parsedRate; // drop a -0 sign
  if (rate.isNegative()) throw new ScheduleInputError(`rate must not be negative, got ${rate.toString()}`);
  const term = input.term;
  if (typeof term !== 'number' || !Number.isInteger(term) || term < 1 || term > MAX_TERM) {
    throw new ScheduleInputError(`term must be an integer from 1 to ${MAX_TERM}, got ${JSON.stringify(term)}`);
  }
  const frequency = checkFrequency(input.frequency);
  const amortization = input.amortization ?? 'amortizing';
  if (!(AMORTIZATIONS as readonly unknown[]).includes(amortization)) {
    throw new ScheduleInputError(`amortization must be one of ${AMORTIZATIONS.join(', ')}, got ${JSON.stringify(amortization)}`);
  }
  const hasFirst = input.firstPaymentDate !== undefined && input.firstPaymentDate !== null;
  const hasFunded = input.dateFunded !== undefined && input.dateFunded !== null;
  if (!hasFirst && !hasFunded) throw new ScheduleInputError('either firstPaymentDate or dateFunded is required');
  const funded = hasFunded ? parseDate(input.dateFunded, 'dateFunded') : null;
  const first = hasFirst
    ? parseDate(input.firstPaymentDate, 'firstPaymentDate')
    : addPeriodsYmd(funded as YMD, frequency, 1);
  const given =
    input.regularPayment === undefined || input.regularPayment === null
      ? null
      : parseMoney(input.regularPayment, 'regularPayment');

  // Fails on an out-of-range maturity before any money maths.
  const dateMaturity = formatDate(addPeriodsYmd(first, frequency, term - 1));

  // Rows are computed in exact integer cents. With rate = R / 10^s and
  // r = rate / 100 / periods = R / den, interest(b) = round_half_up(b × r) is
  // floor((2·b·R + den) / (2·den)) for b >= 0 — the exact rational, no rounding of r.
  const periods = PERIODS_PER_YEAR[frequency];
  const rateScale = rate.decimalPlaces();
  const rateNum = scaled(rate, rateScale);
  const den = BigInt(100 * periods) * 10n ** BigInt(rateScale);
  const twoRateNum = 2n * rateNum;
  const twoDen = 2n * den;
  const interestOn = (balance: bigint): bigint => (balance * twoRateNum + den) / twoDen;

  const principal = scaled(amount, 2);
  const rows: ScheduleRow[] = new Array<ScheduleRow>(term);

  if (amortization === 'interest_only') {
    const interest = interestOn(principal);
    const interestText = money(interest);
    const balanceText = money(principal);
    for (let k = 0; k < term - 1; k++) {
      rows[k] = {
        number: k + 1,
        due: formatDate(addPeriodsYmd(first, frequency, k)),
        payment: interestText,
        principal: '0.00',
        interest: interestText,
        balance: balanceText,
      };
    }
    rows[term - 1] = {
      number: term,
      due: dateMaturity,
      payment: money(principal + interest),
      principal: balanceText,
      interest: interestText,
      balance: '0.00',
    };
    return { rows, regularPayment: interestText, dateMaturity, totalInterest: money(interest * BigInt(term)) };
  }

  let payment: bigint;
  if (given !== null) {
    payment = scaled(given, 2);
    const firstInterest = interestOn(principal);
    if (payment < firstInterest) {
      throw new ScheduleInputError(
        `regularPayment ${money(payment)} does not cover the first period's interest ${money(firstInterest)}`,
      );
    }
  } else if (rateNum === 0n) {
    // P / n in cents, rounded half up.
    payment = (2n * principal + BigInt(term)) / (2n * BigInt(term));
  } else {
    // The annuity formula P·r / (1 − (1+r)^−n), at 50 significant digits, rounded half up to cents.
    const r = rate.div(100 * periods);
    payment = scaled(amount.times(r).div(ONE.minus(r.plus(1).pow(-term))).toDecimalPlaces(2), 2);
  }

  let balance = principal;
  let totalInterest = 0n;
  for (let k = 0; k < term; k++) {
    const interest = interestOn(balance);
    let part = k === term - 1 ? balance : payment - interest;
    if (part > balance) part = balance;
    balance -= part;
    totalInterest += interest;
    rows[k] = {
      number: k + 1,
      due: k === term - 1 ? dateMaturity : formatDate(addPeriodsYmd(first, frequency, k)),
      payment: money(part + interest),
      principal: money(part),
      interest: money(interest),
      balance: money(balance),
    };
  }
  return { rows, regularPayment: money(payment), dateMaturity, totalInterest: money(totalInterest) };
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
