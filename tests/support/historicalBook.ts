/**
 * A private lender's existing book, as data (no I/O), for the tests of moving it into loanql
 * (README, "Moving an existing book into loanql"): loans funded months or years before the
 * business date, their borrowers and investors, and what happened to each installment — paid on
 * time, late (past the grace period: a late fee), in two parts, missed (the loan is behind
 * today), or paid and returned NSF and paid again. Deterministic: the same `count` and `seed`
 * give the same book.
 *
 * The payments' amounts come from the loan's schedule as loanql made it (the lender's history
 * paid the installments it was owed), so the plan names, per installment, what happened and
 * when, and `paymentsOf` turns it into payments once the schedule is known.
 */

export type InstallmentFate =
  | { readonly kind: 'on_time' }
  | { readonly kind: 'late'; readonly daysLate: number }
  | { readonly kind: 'partial'; readonly restDaysLate: number }
  | { readonly kind: 'nsf'; readonly returnedAfter: number; readonly repaidAfter: number }
  | { readonly kind: 'missed' };

export interface HistoricalLoan {
  readonly name: string;
  readonly amount: number;
  readonly rate: number;
  readonly term: number;
  readonly amortization: 'amortizing' | 'interest_only';
  readonly dateFunded: string;
  readonly borrower: { readonly name: string; readonly email: string };
  /** Indexes into the book's investors, with the part of the loan each funded. */
  readonly fundedBy: readonly { readonly investor: number; readonly share: number; readonly rate: number }[];
  /** One fate per installment due before the business date, in order. */
  readonly fates: readonly InstallmentFate[];
}

export interface HistoricalBook {
  readonly businessDate: string;
  readonly investors: readonly { readonly name: string; readonly email: string }[];
  readonly loans: readonly HistoricalLoan[];
}

/** One payment of the history, and, for a returned one, its reversal. */
export interface HistoricalPayment {
  readonly date: string;
  readonly amount: string;
  readonly reversed?: { readonly date: string; readonly reason: 'nsf' };
}

/** A scheduled installment as loanql made it. */
export interface Installment {
  readonly number: number;
  readonly due: string;
  /** Exact decimal text, as the database gives it. */
  readonly payment: string;
}

/** mulberry32: a small seeded generator, enough to make a book. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const DAY_MS = 86_400_000;
const dayNumber = (day: string): number => Date.parse(`${day}T00:00:00Z`) / DAY_MS;
/** The day `days` after `day` (YYYY-MM-DD). */
export const addDays = (day: string, days: number): string => new Date((dayNumber(day) + days) * DAY_MS).toISOString().slice(0, 10);

/** Monthly due dates from `Date_Funded` (SPEC §7): the funding day, a month on, clamped to the month's end. */
function monthlyDue(funded: string, k: number): string {
  const [y, m, d] = funded.split('-').map(Number) as [number, number, number];
  const month = m - 1 + k;
  const year = y + Math.floor(month / 12);
  const inYear = ((month % 12) + 12) % 12;
  const last = new Date(Date.UTC(year, inYear + 1, 0)).getUTCDate();
  return `${year}-${String(inYear + 1).padStart(2, '0')}-${String(Math.min(d, last)).padStart(2, '0')}`;
}

const FIRST = ['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Donald', 'Frances', 'John', 'Radia', 'Ken', 'Margaret', 'Niklaus'];
const LAST = ['Lovelace', 'Hopper', 'Turing', 'Dijkstra', 'Liskov', 'Knuth', 'Allen', 'Backus', 'Perlman', 'Thompson', 'Hamilton', 'Wirth'];

/**
 * A book of `count` monthly loans dated before `businessDate`. About one loan in four has run
 * its whole term (paid off: closed on its last payment), most are servicing and current, some
 * have late or split installments (late fees), a few are behind today (missed installments at
 * the end), and the book holds exactly one NSF return (installment paid, returned three days
 * later, paid again).
 */
export function historicalBook(count: number, seed = 7, businessDate = '2026-06-30'): HistoricalBook {
  const random = generator(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const investors = Array.from({ length: Math.max(2, Math.ceil(count / 10)) }, (_, i) => ({
    name: `${pick(FIRST)} ${pick(LAST)} Capital ${i + 1}`,
    email: `investor${i + 1}@capital.example`,
  }));
  const loans: HistoricalLoan[] = [];
  let nsfGiven = false;
  for (let i = 0; i < count; i += 1) {
    const paidOff = i % 4 === 0;
    const term = paidOff ? 12 : pick([24, 36, 60]);
    // A paid-off loan ran its 12 months before the business date; the others were funded 3–30 months back.
    const monthsBack = paidOff ? 14 + Math.floor(random() * 20) : 3 + Math.floor(random() * 28);
    const fundedMonth = monthlyDue(businessDate.slice(0, 8) + '01', -monthsBack);
    const dateFunded = `${fundedMonth.slice(0, 8)}${String(1 + Math.floor(random() * 28)).padStart(2, '0')}`;
    const amortization = !paidOff && random() < 0.2 ? 'interest_only' : 'amortizing';
    const dues: string[] = [];
    for (let k = 1; k <= term; k += 1) {
      const due = monthlyDue(dateFunded, k);
      if (due >= businessDate) break;
      dues.push(due);
    }
    const behind = !paidOff && random() < 0.12 ? 1 + Math.floor(random() * 3) : 0;
    const fates: InstallmentFate[] = dues.map((_, k): InstallmentFate => {
      if (k >= dues.length - behind) return { kind: 'missed' };
      if (!paidOff && !nsfGiven && k === 1) {
        nsfGiven = true;
        return { kind: 'nsf', returnedAfter: 3, repaidAfter: 7 };
      }
      const roll = random();
      if (roll < 0.08) return { kind: 'late', daysLate: 12 + Math.floor(random() * 14) };
      if (roll < 0.13) return { kind: 'partial', restDaysLate: 15 + Math.floor(random() * 10) };
      return { kind: 'on_time' };
    });
    const first = pick(FIRST);
    const last = pick(LAST);
    const amount = 25_000 + 5_000 * Math.floor(random() * 90);
    const fundedBy = random() < 0.7
      ? [{ investor: Math.floor(random() * investors.length), share: pick([0.5, 0.6, 0.75, 1]), rate: pick([8, 9, 10]) }]
      : [];
    loans.push({
      name: `Book loan ${String(i + 1).padStart(3, '0')}`,
      amount,
      rate: pick([9, 10.5, 11, 12, 12.75]),
      term,
      amortization,
      dateFunded,
      borrower: { name: `${first} ${last}`, email: `${first}.${last}.${i + 1}@borrower.example`.toLowerCase() },
      fundedBy,
      fates,
    });
  }
  return { businessDate, investors, loans };
}

const toCents = (text: string): bigint => {
  const [whole, fraction = ''] = text.split('.');
  return BigInt(whole!) * 100n + BigInt((fraction + '00').slice(0, 2));
};
const fromCents = (cents: bigint): string => `${cents / 100n}.${String(cents % 100n).padStart(2, '0')}`;

/** The lender's fee policy, which the product's servicing settings are set to before loading (SPEC §12). */
export interface FeePolicy {
  readonly graceDays: number;
  /** A late fee as a whole percent of the installment. */
  readonly lateFeePercent: number;
  readonly nsfFee: string;
}

/** R4's late fee of an installment: the percent of its payment, rounded half-up to the cent. */
export function lateFeeOf(installment: Installment, policy: FeePolicy): string {
  return fromCents((toCents(installment.payment) * BigInt(policy.lateFeePercent) + 50n) / 100n);
}

/**
 * The loan's history as payments, oldest first, from its fates and the schedule loanql made. A
 * borrower who paid late paid the late fee with it, and the NSF fee with the payment that replaced
 * the returned one, as the lender's books show.
 */
export function paymentsOf(loan: HistoricalLoan, schedule: readonly Installment[], policy: FeePolicy): HistoricalPayment[] {
  const payments: HistoricalPayment[] = [];
  loan.fates.forEach((fate, k) => {
    const row = schedule[k];
    if (!row) throw new Error(`${loan.name}: no installment ${k + 1} in its schedule`);
    const withFee = (late: number): string => (late > policy.graceDays ? fromCents(toCents(row.payment) + toCents(lateFeeOf(row, policy))) : row.payment);
    switch (fate.kind) {
      case 'on_time':
        payments.push({ date: row.due, amount: row.payment });
        break;
      case 'late':
        payments.push({ date: addDays(row.due, fate.daysLate), amount: withFee(fate.daysLate) });
        break;
      case 'partial': {
        const half = toCents(row.payment) / 2n;
        payments.push({ date: row.due, amount: fromCents(half) });
        payments.push({ date: addDays(row.due, fate.restDaysLate), amount: fromCents(toCents(withFee(fate.restDaysLate)) - half) });
        break;
      }
      case 'nsf':
        payments.push({ date: row.due, amount: row.payment, reversed: { date: addDays(row.due, fate.returnedAfter), reason: 'nsf' } });
        payments.push({ date: addDays(row.due, fate.repaidAfter), amount: fromCents(toCents(row.payment) + toCents(policy.nsfFee)) });
        break;
      case 'missed':
        break;
    }
  });
  return payments;
}

/** A fee the history implies (R4, R8): `kind date amount`, amount with two decimals. */
export function feesOf(loan: HistoricalLoan, schedule: readonly Installment[], policy: FeePolicy, businessDate: string): string[] {
  const fees: string[] = [];
  loan.fates.forEach((fate, k) => {
    const row = schedule[k]!;
    const feeDay = addDays(row.due, policy.graceDays + 1);
    if (fate.kind === 'nsf' && toCents(policy.nsfFee) > 0n) fees.push(`nsf ${addDays(row.due, fate.returnedAfter)} ${policy.nsfFee}`);
    const late = fate.kind === 'late' ? fate.daysLate > policy.graceDays : fate.kind === 'partial' ? fate.restDaysLate > policy.graceDays : fate.kind === 'missed';
    if (late && feeDay <= businessDate) fees.push(`late ${feeDay} ${lateFeeOf(row, policy)}`);
  });
  return fees.sort();
}
