/**
 * SPEC §12 R10: investor distributions. Each payment's allocation is split per component (the
 * payment's total of that component, not each line) between the funding sources funded on or
 * before the payment date and the lender, to the cent: floor each party's exact share, then hand
 * the leftover cents out one each by largest remainder, ties by (date_funded, id), the lender last.
 */
import { toDay } from './dates.js';
import { type Fraction, fromCents, LedgerError, toCents, toFraction } from './money.js';
import { replayLedger } from './replay.js';
import { resolveSettings } from './settings.js';
import type { Allocation, Distribution, FundingSource, LedgerInput, LedgerResult, LoanTerms, PaymentRecord } from './types.js';

type Part = Distribution['component'];
const PARTS: readonly Part[] = ['interest', 'principal', 'fee'];

/** What a split needs to know about the loan. */
export interface DistributionTerms {
  readonly loan: Pick<LoanTerms, 'amount' | 'rate'>;
  readonly sources: readonly FundingSource[];
  /** `investor_fee_share`, a fraction 0–1 ("0.25"). */
  readonly investorFeeShare: string;
}

/** Checks Σ w ≤ 1 (R10: more is a 400 when the source is written). */
export function checkSources(loan: Pick<LoanTerms, 'amount'>, sources: readonly FundingSource[]): void {
  const total = sources.reduce((sum, s) => sum + toCents(s.originalAmount, 'original_amount'), 0n);
  if (total > toCents(loan.amount, 'amount')) {
    throw new LedgerError(`funding sources total ${fromCents(total)}, more than the loan amount ${loan.amount}`, 'original_amount');
  }
}

/**
 * Splits `cents` of one component of one payment dated `date` (R10). Returns one amount per
 * party, funding sources in (date_funded, id) order then the lender (id null); parts sum exactly.
 */
export function splitComponent(cents: bigint, component: Part, date: string, terms: DistributionTerms): { fundingSourceId: string | null; amount: bigint }[] {
  checkSources(terms.loan, terms.sources);
  const amount = toCents(terms.loan.amount, 'amount');
  const rate = toFraction(terms.loan.rate, 'rate');
  const share = toFraction(terms.investorFeeShare, 'investor_fee_share');
  const day = toDay(date);
  const funded = [...terms.sources]
    .filter((s) => toDay(s.dateFunded, 'date_funded') <= day)
    .sort((a, b) => (a.dateFunded < b.dateFunded ? -1 : a.dateFunded > b.dateFunded ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const negative = cents < 0n;
  const total = negative ? -cents : cents;
  const exact: Fraction[] = funded.map((s) => {
    // w_f = original_amount_f / amount
    let num = total * toCents(s.originalAmount, 'original_amount');
    let den = amount;
    if (component === 'interest') {
      if (rate.num === 0n) return { num: 0n, den: 1n };
      const rf = toFraction(s.rate, 'funding source rate');
      const lower = rf.num * rate.den < rate.num * rf.den ? rf : rate; // min(rate_f, rate)
      num *= lower.num * rate.den;
      den *= lower.den * rate.num;
    } else if (component === 'fee') {
      num *= share.num;
      den *= share.den;
    }
    return { num, den };
  });
  const floors = exact.map((f) => f.num / f.den);
  const remainders = exact.map((f) => ({ num: f.num % f.den, den: f.den }));
  // The lender's exact share is total − Σ floors − Σ remainders: its floor is total − Σ floors −
  // ceil(Σ remainders), its remainder ceil(Σ remainders) − Σ remainders.
  const sumRem = remainders.reduce((acc, r) => ({ num: acc.num * r.den + r.num * acc.den, den: acc.den * r.den }), { num: 0n, den: 1n });
  const ceilRem = (sumRem.num + sumRem.den - 1n) / sumRem.den;
  const lenderFloor = total - floors.reduce((s, f) => s + f, 0n) - ceilRem;
  const lenderRem = { num: ceilRem * sumRem.den - sumRem.num, den: sumRem.den };
  const parties = [
    ...funded.map((s, i) => ({ fundingSourceId: s.id as string | null, amount: floors[i] as bigint, rem: remainders[i] as Fraction, order: i })),
    { fundingSourceId: null, amount: lenderFloor, rem: lenderRem, order: funded.length },
  ];
  let leftover = total - parties.reduce((s, p) => s + p.amount, 0n);
  const byRemainder = [...parties].sort((a, b) => {
    const diff = b.rem.num * a.rem.den - a.rem.num * b.rem.den;
    return diff > 0n ? 1 : diff < 0n ? -1 : a.order - b.order;
  });
  for (const p of byRemainder) {
    if (leftover <= 0n) break;
    p.amount += 1n;
    leftover -= 1n;
  }
  return parties.map((p) => ({ fundingSourceId: p.fundingSourceId, amount: negative ? -p.amount : p.amount }));
}

/** Per payment, the total of each distributed component of its allocation (credit is the borrower's, never distributed). */
export function componentTotals(allocations: readonly Allocation[]): Map<string, Map<Part, bigint>> {
  const totals = new Map<string, Map<Part, bigint>>();
  for (const a of allocations) {
    if (a.component === 'credit') continue;
    const perPayment = totals.get(a.paymentId) ?? new Map<Part, bigint>();
    perPayment.set(a.component, (perPayment.get(a.component) ?? 0n) + toCents(a.amount));
    totals.set(a.paymentId, perPayment);
  }
  return totals;
}

/**
 * R10: the distribution lines of a ledger's allocations (payments in allocation order, components
 * interest, principal, fee; zero lines omitted). `payments` gives each payment's date.
 */
export function distribute(allocations: readonly Allocation[], payments: readonly Pick<PaymentRecord, 'id' | 'date'>[], terms: DistributionTerms): Distribution[] {
  const dates = new Map(payments.map((p) => [p.id, p.date]));
  const lines: Distribution[] = [];
  for (const [paymentId, perPayment] of componentTotals(allocations)) {
    for (const component of PARTS) {
      const cents = perPayment.get(component) ?? 0n;
      if (cents === 0n) continue;
      for (const part of splitComponent(cents, component, dateOf(dates, paymentId), terms)) {
        if (part.amount !== 0n) lines.push({ paymentId, fundingSourceId: part.fundingSourceId, component, amount: fromCents(part.amount), adjustmentOf: null });
      }
    }
  }
  return lines;
}

/**
 * R10 adjustment lines between two ledgers (new − old, per payment, component and party, each side
 * split on its own), tagged with `adjustmentOf` (the reversed payment that caused them).
 */
export function adjustments(before: readonly Allocation[], after: readonly Allocation[], payments: readonly Pick<PaymentRecord, 'id' | 'date'>[], terms: DistributionTerms, adjustmentOf: string): Distribution[] {
  const dates = new Map(payments.map((p) => [p.id, p.date]));
  const old = componentTotals(before);
  const now = componentTotals(after);
  const ids = [...new Set([...old.keys(), ...now.keys()])];
  const lines: Distribution[] = [];
  for (const paymentId of ids) {
    for (const component of PARTS) {
      const a = old.get(paymentId)?.get(component) ?? 0n;
      const b = now.get(paymentId)?.get(component) ?? 0n;
      if (a === b) continue;
      const date = dateOf(dates, paymentId);
      const was = splitComponent(a, component, date, terms);
      const is = splitComponent(b, component, date, terms);
      is.forEach((part, i) => {
        const delta = part.amount - (was[i] as { amount: bigint }).amount;
        if (delta !== 0n) lines.push({ paymentId, fundingSourceId: part.fundingSourceId, component, amount: fromCents(delta), adjustmentOf });
      });
    }
  }
  return lines;
}

/**
 * R10 over a loan's history: the original lines of the ledger with no payment reversed, then the
 * adjustment lines of each reversal in order of (date_reversed, id), each against the ledger
 * before it. Summed per payment, component and party, they equal the split of the final ledger.
 */
export function distributionHistory(input: LedgerInput, sources: readonly FundingSource[]): Distribution[] {
  const terms: DistributionTerms = { loan: input.loan, sources, investorFeeShare: resolveSettings(input.settings).investorFeeShare };
  const reversed = input.payments
    .filter((p) => p.dateReversed !== undefined && p.dateReversed !== null)
    .sort((a, b) => cmp(a.dateReversed as string, b.dateReversed as string) || cmp(a.id, b.id));
  // The ledger with the payments of `stillApplied` un-reversed.
  const ledger = (stillApplied: ReadonlySet<string>): LedgerResult =>
    replayLedger({ ...input, payments: input.payments.map((p) => (stillApplied.has(p.id) ? { ...p, dateReversed: null, reversalReason: null } : p)) });
  const stillApplied = new Set(reversed.map((p) => p.id));
  let previous = ledger(stillApplied);
  const lines = distribute(previous.allocations, input.payments, terms);
  for (const p of reversed) {
    stillApplied.delete(p.id);
    const next = ledger(stillApplied);
    lines.push(...adjustments(previous.allocations, next.allocations, input.payments, terms, p.id));
    previous = next;
  }
  return lines;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function dateOf(dates: Map<string, string>, paymentId: string): string {
  const date = dates.get(paymentId);
  if (date === undefined) throw new LedgerError(`no date for payment ${paymentId}`, 'payments');
  return date;
}
