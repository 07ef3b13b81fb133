import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { buildSchedule, ScheduleInputError, type Amortization, type Frequency, type ScheduleInput } from '../../domain/schedule.js';

/**
 * Schedule: domain/ against a second implementation written here from the words of SPEC §7,
 * with its own exact rationals (a bigint fraction class) and its own calendar (JavaScript's UTC
 * `Date`), sharing no code with domain/. Every row, the regular payment, the maturity, the
 * refusals and the invariants are compared over random amounts, rates with up to 4 decimals,
 * terms 1–600, every frequency, both amortizations, start dates biased to the 28th–31st and
 * Feb 29, with and without First_Payment_Date and a given Regular_Payment.
 */

// ---------------------------------------------------------------------------
// Exact rationals

/**
 * n/d with d > 0, not reduced to lowest terms: every use here (truncating n/d, comparing n with
 * d, n = 0) holds for any fraction of the value, and the values are built fresh from cents
 * at each step. Reducing by Euclid's gcd at each operation took 4.7 of the file's 6.4 seconds,
 * on the thousands of digits of (1 + r)^term for terms up to 600.
 */
class Q {
  readonly n: bigint;
  readonly d: bigint;
  constructor(n: bigint, d: bigint = 1n) {
    if (d === 0n) throw new Error('division by zero');
    if (d < 0n) [n, d] = [-n, -d];
    this.n = n;
    this.d = d;
  }
  static decimal(text: string): Q {
    const [whole, fraction = ''] = text.split('.');
    return new Q(BigInt(`${whole}${fraction}`), 10n ** BigInt(fraction.length));
  }
  plus(o: Q): Q {
    return new Q(this.n * o.d + o.n * this.d, this.d * o.d);
  }
  minus(o: Q): Q {
    return new Q(this.n * o.d - o.n * this.d, this.d * o.d);
  }
  times(o: Q): Q {
    return new Q(this.n * o.n, this.d * o.d);
  }
  div(o: Q): Q {
    return new Q(this.n * o.d, this.d * o.n);
  }
  pow(k: number): Q {
    return new Q(this.n ** BigInt(k), this.d ** BigInt(k));
  }
  isZero(): boolean {
    return this.n === 0n;
  }
  /** Round half up to whole cents of a non-negative amount (in currency units): exact. */
  cents(): bigint {
    const hundred = this.times(new Q(100n));
    const floor = hundred.n / hundred.d;
    const rest = hundred.minus(new Q(floor));
    return rest.times(new Q(2n)).n >= rest.times(new Q(2n)).d ? floor + 1n : floor; // rest >= 1/2 → up
  }
}

const LIMIT = 99_999_999_999_999n; // numeric(14,2) in cents
const money = (cents: bigint): string => `${cents / 100n}.${String(cents % 100n).padStart(2, '0')}`;

// ---------------------------------------------------------------------------
// Calendar with Date (UTC)

const DAY = 86_400_000;
const toIso = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
const fromIso = (iso: string): number => Date.parse(`${iso}T00:00:00Z`);
const lastDayOf = (year: number, monthIndex: number): number => new Date(Date.UTC(year, monthIndex + 1, 0)).getUTCDate();

/** The date `months` months after `iso`, on day `day` (clamped to that month's last day). */
function monthsLater(iso: string, months: number, day: number): string {
  const start = new Date(fromIso(iso));
  const target = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + months, 1));
  const y = target.getUTCFullYear();
  const m = target.getUTCMonth();
  return toIso(Date.UTC(y, m, Math.min(day, lastDayOf(y, m))));
}

const MONTHS: Partial<Record<Frequency, number>> = { monthly: 1, quarterly: 3, annually: 12 };
const DAYS: Partial<Record<Frequency, number>> = { weekly: 7, biweekly: 14 };
const PER_YEAR: Record<Frequency, number> = { monthly: 12, quarterly: 4, semi_monthly: 24, biweekly: 26, weekly: 52, annually: 1 };

/** "Due dates" of §7, the first `count`. */
function oracleDates(frequency: Frequency, funded: string | null, first: string | null, count: number): string[] {
  const dates: string[] = [];
  if (frequency === 'semi_monthly') {
    // Two days in every month, D and D+15; D the first due date's day, or that day − 15 after the 15th;
    // a second day of 30 or more is the month's last day. No First_Payment_Date: Date_Funded + 15 days.
    const start = first ?? toIso(fromIso(funded!) + 15 * DAY);
    const startDay = Number(start.slice(8));
    const d = startDay > 15 ? startDay - 15 : startDay;
    dates.push(start);
    let skip = startDay > 15 ? 2 : 1; // the first due date takes its month's first or second place
    for (let month = 0; dates.length < count; month++) {
      const firstOfMonth = monthsLater(start.slice(0, 8) + '01', month, 1);
      const y = Number(firstOfMonth.slice(0, 4));
      const mi = Number(firstOfMonth.slice(5, 7)) - 1;
      const last = lastDayOf(y, mi);
      for (const day of [d, d + 15 >= 30 ? last : Math.min(d + 15, last)]) {
        if (skip > 0) {
          skip--;
          continue;
        }
        if (dates.length < count) dates.push(toIso(Date.UTC(y, mi, day)));
      }
    }
    return dates;
  }
  // Row k falls k periods after the anchor: First_Payment_Date counting from 0, else Date_Funded from 1.
  const anchor = first ?? funded!;
  const from = first ? 0 : 1;
  for (let k = from; k < from + count; k++) {
    if (MONTHS[frequency]) dates.push(monthsLater(anchor, MONTHS[frequency]! * k, Number(anchor.slice(8))));
    else dates.push(toIso(fromIso(anchor) + DAYS[frequency]! * k * DAY));
  }
  return dates;
}

// ---------------------------------------------------------------------------
// The money rules of §7

interface Case {
  readonly amount: string;
  readonly rate: string;
  readonly term: number;
  readonly frequency: Frequency;
  readonly amortization: Amortization;
  readonly dateFunded: string | null;
  readonly firstPaymentDate: string | null;
  readonly regularPayment: string | null;
}

interface OracleRow {
  readonly due: string;
  readonly payment: bigint;
  readonly principal: bigint;
  readonly interest: bigint;
  readonly balance: bigint;
}

type Outcome =
  | { readonly refused: 'interest_only_payment' | 'dates' | 'payment_not_above_interest' | 'payment_zero' | 'too_large' }
  | { readonly refused: null; readonly rows: readonly OracleRow[]; readonly regularPayment: bigint };

function oracle(c: Case): Outcome {
  if (c.dateFunded && c.firstPaymentDate && c.dateFunded > c.firstPaymentDate) return { refused: 'dates' };
  if (c.amortization === 'interest_only' && c.regularPayment !== null) return { refused: 'interest_only_payment' };
  const P = Q.decimal(c.amount);
  const principalCents = P.cents();
  const r = Q.decimal(c.rate).div(new Q(100n)).div(new Q(BigInt(PER_YEAR[c.frequency])));
  const interestOn = (balanceCents: bigint): bigint => new Q(balanceCents, 100n).times(r).cents();
  const rows: OracleRow[] = [];
  let regularPayment: bigint;
  if (c.amortization === 'interest_only') {
    // each row's interest = round(P·r, 2), the last row adds the principal
    const interest = P.times(r).cents();
    if (interest === 0n && !r.isZero()) return { refused: 'payment_zero' };
    regularPayment = interest;
    for (let k = 0; k < c.term; k++) {
      const last = k === c.term - 1;
      rows.push({ due: '', payment: last ? interest + principalCents : interest, principal: last ? principalCents : 0n, interest, balance: last ? 0n : principalCents });
    }
  } else {
    if (c.regularPayment !== null) {
      regularPayment = Q.decimal(c.regularPayment).cents();
      if (regularPayment <= interestOn(principalCents)) return { refused: 'payment_not_above_interest' }; // must exceed the first row's interest
    } else {
      // P·r / (1 − (1+r)^−n), P/n when r = 0, rounded half-up to cents
      const n = c.term;
      const exact = r.isZero() ? P.div(new Q(BigInt(n))) : P.times(r).div(new Q(1n).minus(new Q(1n).div(new Q(1n).plus(r).pow(n))));
      regularPayment = exact.cents();
      if (regularPayment === 0n) return { refused: 'payment_zero' };
    }
    // interest = round(balance·r, 2), principal = payment − interest, the last row takes the remaining
    // balance; the schedule ends at the row that pays the balance off.
    let balance = principalCents;
    for (let k = 0; k < c.term && balance > 0n; k++) {
      const interest = interestOn(balance);
      let principal = regularPayment - interest;
      if (k === c.term - 1 || principal >= balance) principal = balance;
      balance -= principal;
      rows.push({ due: '', payment: principal + interest, principal, interest, balance });
    }
  }
  // any amount past numeric(14,2), totals included
  const totalInterest = rows.reduce((sum, row) => sum + row.interest, 0n);
  const tooLarge = rows.some((row) => row.payment > LIMIT) || totalInterest > LIMIT || totalInterest + principalCents > LIMIT;
  if (tooLarge) return { refused: 'too_large' };
  const dates = oracleDates(c.frequency, c.dateFunded, c.firstPaymentDate, rows.length);
  return { refused: null, regularPayment, rows: rows.map((row, k) => ({ ...row, due: dates[k]! })) };
}

/** The domain fields each refusal must name. */
const REFUSAL_FIELDS: Record<string, readonly string[]> = {
  dates: ['dateFunded', 'firstPaymentDate'],
  interest_only_payment: ['regularPayment'],
  payment_not_above_interest: ['regularPayment'],
  payment_zero: ['amount'],
  too_large: ['amount', 'rate'],
};

// ---------------------------------------------------------------------------
// Inputs

const leapYear = fc.integer({ min: 490, max: 515 }).map((q) => q * 4); // 1960..2060, all leap (2000 too)
const anyYear = fc.integer({ min: 1960, max: 2060 });
const date = fc.oneof(
  { weight: 4, arbitrary: fc.tuple(anyYear, fc.integer({ min: 1, max: 12 }), fc.integer({ min: 28, max: 31 })) },
  { weight: 2, arbitrary: leapYear.map((y) => [y, 2, 29] as [number, number, number]) },
  { weight: 3, arbitrary: fc.tuple(anyYear, fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 31 })) },
).map(([y, m, d]) => toIso(Date.UTC(y, m - 1, Math.min(d, lastDayOf(y, m - 1)))));

const cents = fc.oneof(
  { weight: 1, arbitrary: fc.bigInt({ min: 1n, max: 10_000n }) },
  { weight: 6, arbitrary: fc.bigInt({ min: 10_000n, max: 100_000_000_00n }) },
  { weight: 1, arbitrary: fc.bigInt({ min: 100_000_000_00n, max: LIMIT }) },
);
const rate = fc
  .tuple(
    fc.oneof({ weight: 8, arbitrary: fc.integer({ min: 0, max: 40 }) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 9999 }) }),
    fc.integer({ min: 0, max: 9999 }),
    fc.integer({ min: 0, max: 4 }),
  )
  .map(([whole, fraction, decimals]) => (decimals === 0 ? String(whole) : `${whole}.${String(fraction).padStart(4, '0').slice(0, decimals)}`));

const caseArbitrary = fc
  .record({
    amountCents: cents,
    rate,
    term: fc.oneof({ weight: 3, arbitrary: fc.integer({ min: 1, max: 24 }) }, { weight: 2, arbitrary: fc.integer({ min: 1, max: 600 }) }),
    frequency: fc.constantFrom<Frequency>('monthly', 'quarterly', 'semi_monthly', 'biweekly', 'weekly', 'annually'),
    amortization: fc.constantFrom<Amortization>('amortizing', 'interest_only'),
    start: fc.constantFrom('funded', 'first', 'both'),
    funded: date,
    first: date,
    // a given payment as a fraction of the amount (in 1/10,000), or absent
    givenShare: fc.option(fc.integer({ min: 1, max: 12_000 }), { freq: 3 }),
    interestOnlyGiven: fc.boolean(),
  })
  .map((x): Case => {
    // with both dates, Date_Funded is on or before First_Payment_Date most of the time, after it sometimes
    const swap = x.start === 'both' && x.first < x.funded && x.term % 7 !== 0;
    const funded = x.start === 'first' ? null : swap ? x.first : x.funded;
    const first = x.start === 'funded' ? null : swap ? x.funded : x.first;
    const given = x.givenShare === null || (x.amortization === 'interest_only' && !x.interestOnlyGiven) ? null : (x.amountCents * BigInt(x.givenShare)) / 10_000n;
    return {
      amount: money(x.amountCents),
      rate: x.rate,
      term: x.term,
      frequency: x.frequency,
      amortization: x.amortization,
      dateFunded: funded,
      firstPaymentDate: first,
      regularPayment: given === null || given === 0n ? null : money(given > LIMIT ? LIMIT : given),
    };
  });

// ---------------------------------------------------------------------------

describe('Schedule: domain/ against an independent implementation of SPEC §7 (fast-check, seed 1307)', () => {
  it('agrees on every row, payment, maturity and refusal, and keeps the invariants', (t) => {
    const seen = { runs: 0, refused: 0, givenPayment: 0, semiMonthly: 0, endedEarly: 0 };
    const started = performance.now();
    fc.assert(
      fc.property(caseArbitrary, (c) => {
        seen.runs++;
        const expected = oracle(c);
        const input: ScheduleInput = { ...c };
        if (expected.refused !== null) {
          seen.refused++;
          assert.throws(
            () => buildSchedule(input),
            (error: unknown) => {
              assert.ok(error instanceof ScheduleInputError, String(error));
              for (const field of REFUSAL_FIELDS[expected.refused]!) assert.ok(error.fields.includes(field as never), `${expected.refused}: ${error.message} names ${field}`);
              return true;
            },
          );
          return;
        }
        const schedule = buildSchedule(input);
        if (c.regularPayment !== null) seen.givenPayment++;
        if (c.frequency === 'semi_monthly') seen.semiMonthly++;
        if (schedule.rows.length < c.term) seen.endedEarly++;
        assert.equal(schedule.regularPayment, money(expected.regularPayment), 'regular payment');
        assert.deepEqual(
          schedule.rows.map((row) => [row.number, row.due, row.payment, row.principal, row.interest, row.balance]),
          expected.rows.map((row, k) => [k + 1, row.due, money(row.payment), money(row.principal), money(row.interest), money(row.balance)]),
        );
        assert.equal(schedule.dateMaturity, expected.rows.at(-1)!.due, 'maturity is the last row');
        // invariants
        const amountCents = Q.decimal(c.amount).cents();
        let principalSum = 0n;
        let interestSum = 0n;
        let previousDue = '';
        for (const row of expected.rows) {
          assert.ok(row.interest >= 0n && row.principal >= 0n && row.balance >= 0n);
          assert.equal(row.payment, row.principal + row.interest);
          assert.ok(row.due > previousDue, 'due dates strictly increase');
          previousDue = row.due;
          principalSum += row.principal;
          interestSum += row.interest;
        }
        assert.equal(principalSum, amountCents, 'principal sums to the amount');
        assert.equal(expected.rows.at(-1)!.balance, 0n, 'final balance 0');
        assert.equal(schedule.totalInterest, money(interestSum));
        assert.ok(expected.rows.every((row) => row.payment > 0n || c.amortization === 'interest_only'), 'no 0.00 amortizing rows');
      }),
      { seed: 1307, numRuns: 4000, interruptAfterTimeLimit: 90_000, markInterruptAsFailure: false },
    );
    const seconds = (performance.now() - started) / 1000;
    t.diagnostic(`${JSON.stringify(seen)} in ${seconds.toFixed(1)} s`);
    // The run must have covered the interesting parts, not just passed.
    assert.ok(seen.runs >= 2000, `${seen.runs} runs in ${seconds.toFixed(1)} s`);
    assert.ok(seen.refused >= 50 && seen.givenPayment >= 200 && seen.semiMonthly >= 200 && seen.endedEarly >= 50, JSON.stringify(seen));
  });
});

describe('Schedule: the oracle itself on the cases SPEC §7 writes out', () => {
  const ok = (c: Partial<Case>) => {
    const outcome = oracle({ amount: '1000.00', rate: '0', term: 1, frequency: 'monthly', amortization: 'amortizing', dateFunded: null, firstPaymentDate: '2024-01-31', regularPayment: null, ...c });
    assert.equal(outcome.refused, null);
    return outcome as Extract<Outcome, { refused: null }>;
  };
  it('the reference loan: 8,884.88, row 12 8,884.85, 6,618.53 interest', () => {
    const { rows, regularPayment } = ok({ amount: '100000.00', rate: '12', term: 12 });
    assert.equal(regularPayment, 888_488n);
    assert.equal(rows[11]!.payment, 888_485n);
    assert.equal(rows.reduce((s, row) => s + row.interest, 0n), 661_853n);
  });
  it('a half-cent payment rounds up: 1,000 at 6.25 % quarterly, 1 payment → 1,015.63', () => {
    assert.equal(ok({ rate: '6.25', frequency: 'quarterly' }).regularPayment, 101_563n);
  });
  it('Jan 31 monthly from Date_Funded: Feb 29, Mar 31, Apr 30; semi-monthly from the 15th', () => {
    assert.deepEqual(oracleDates('monthly', '2024-01-31', null, 3), ['2024-02-29', '2024-03-31', '2024-04-30']);
    assert.deepEqual(oracleDates('semi_monthly', null, '2025-01-15', 6), ['2025-01-15', '2025-01-31', '2025-02-15', '2025-02-28', '2025-03-15', '2025-03-31']);
    assert.deepEqual(oracleDates('semi_monthly', null, '2025-01-01', 2), ['2025-01-01', '2025-01-16']);
  });
});
