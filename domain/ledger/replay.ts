/**
 * SPEC §12: the servicing ledger as a pure replay. Day by day up to the as-of day: fees of the
 * day (late R4, NSF R8, manual), waivers, credit paying new fees, then the day's payments in
 * (date, posted_at, id) order (R1) — each a waterfall (R1), a payoff (R6), a curtailment (R7), a
 * fee payment or a refund (R9) — and the status after the day (R9).
 */
import { accruedInterest, perDiem } from './accrual.js';
import { periodBefore, toDay, toIso } from './dates.js';
import { bucketOf, daysPastDue } from './delinquency.js';
import { addFee, applyWaivers, assessLate, creditPaysFees, lateFeeDay } from './fees.js';
import { curtail } from './curtail.js';
import { fromCents, LedgerError, toCents, toFraction } from './money.js';
import { payoffParts, settle } from './payoff.js';
import { resolveSettings } from './settings.js';
import { type FeeState, feeUnpaid, LedgerState, type LoanContext, type RowState, rowUnpaid } from './state.js';
import type { FeeKind, LedgerInput, LedgerResult, LedgerStatus, PaymentRecord, PayoffQuote, StatusChange } from './types.js';
import { applyRegular, payDue, payFees, payFuture } from './waterfall.js';

/** R1's replay order: (date, posted_at, id). */
export function replayOrder(payments: readonly PaymentRecord[]): PaymentRecord[] {
  return [...payments].sort((a, b) => cmp(a.date, b.date) || cmp(a.postedAt, b.postedAt) || cmp(a.id, b.id));
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function isReversed(p: PaymentRecord): boolean {
  return p.dateReversed !== undefined && p.dateReversed !== null;
}

/** Parses the loan's terms and schedule into the replay's state. */
export function initialState(input: LedgerInput): LedgerState {
  const settings = resolveSettings(input.settings);
  const { loan } = input;
  if (input.rows.length === 0) throw new LedgerError('the loan has no schedule', 'rows');
  const first = input.rows[0] as LedgerInput['rows'][number];
  const context: LoanContext = {
    amount: toCents(loan.amount, 'amount'),
    rate: toFraction(loan.rate, 'rate'),
    rateText: String(loan.rate),
    frequency: loan.frequency,
    amortization: loan.amortization ?? 'amortizing',
    firstPeriodStart: loan.dateFunded ? toDay(loan.dateFunded, 'dateFunded') : periodBefore(toDay(first.due, 'rows'), loan.frequency),
    settings,
  };
  let before = context.amount;
  const rows: RowState[] = input.rows.map((r) => {
    const row: RowState = {
      number: r.number,
      due: toDay(r.due, 'rows'),
      principal: toCents(r.principal, 'rows'),
      interest: toCents(r.interest, 'rows'),
      balance: toCents(r.balance, 'rows'),
      before,
      principalPaid: 0n,
      interestPaid: 0n,
    };
    before = row.balance;
    return row;
  });
  return new LedgerState(context, rows);
}

/** R9: what the ledger says the loan's status is. */
export function ledgerStatus(state: LedgerState): LedgerStatus {
  // Credit below zero (a reversal left a refund larger than the credit) is owed back: not settled.
  if (state.firstOpen() < state.rows.length || state.fees.some((f) => feeUnpaid(f) > 0n) || state.credit < 0n) return 'servicing';
  return state.credit > 0n ? 'overpaid' : 'closed';
}

/** Applies one payment on `day` (R1, R6, R7, R9 refunds, `fee` payments). */
export function applyPayment(state: LedgerState, payment: PaymentRecord, day: number): void {
  const amount = toCents(payment.amount, 'amount');
  if (amount <= 0n) throw new LedgerError(`payment ${payment.id}: amount must be greater than 0`, 'amount');
  const type = payment.type ?? 'regular';
  const id = payment.id;
  switch (type) {
    case 'refund':
      if (amount > state.credit) {
        throw new LedgerError(`payment ${id}: a refund of ${fromCents(amount)} is more than the credit balance ${fromCents(state.credit)}`, 'amount');
      }
      state.credit -= amount;
      state.add(id, null, null, 'credit', -amount);
      return;
    case 'regular':
    case 'payoff':
    case 'principal':
    case 'fee':
      break;
    default:
      throw new LedgerError(`payment ${id}: type must be one of regular, payoff, principal, refund, fee`, 'type');
  }
  const payoff = payoffParts(state, day);
  if (payoff.principalOutstanding > 0n && amount >= payoff.total) return settle(state, id, day, amount);
  if (type === 'principal') {
    const left = payFuture(state, id, day, curtail(state, id, day, payDue(state, id, day, amount)));
    return state.toCredit(id, left);
  }
  if (type === 'fee') return applyRegular(state, id, day, payFees(state, id, day, amount));
  applyRegular(state, id, day, amount);
}

/** Everything the replay does up to and including `asOf`; the state it leaves and the status history. */
function run(input: LedgerInput) {
  const state = initialState(input);
  const { settings } = state.loan;
  const asOf = toDay(input.asOf, 'asOf');
  const stored = input.fees ?? [];
  const idFor = (kind: FeeKind, key: string): string => {
    const found = stored.find((f) => f.kind === kind && (kind === 'late' ? String(f.rowNumber) === key : f.paymentId === key));
    return found?.id ?? `${kind}:${key}`;
  };
  const applied = replayOrder(input.payments.filter((p) => !isReversed(p)));
  const due = applied.filter((p) => toDay(p.date, 'date') <= asOf);
  const pendingPaymentIds = applied.filter((p) => toDay(p.date, 'date') > asOf).map((p) => p.id);
  const nsfFee = toCents(settings.nsfFee, 'nsf_fee');
  const nsf = input.payments
    .filter((p) => isReversed(p) && p.reversalReason === 'nsf' && toDay(p.dateReversed as string, 'dateReversed') <= asOf)
    .sort((a, b) => cmp(a.dateReversed as string, b.dateReversed as string) || cmp(a.id, b.id));
  const manual = stored.filter((f) => f.kind === 'manual' && toDay(f.date) <= asOf);
  const waivers = input.waivers ?? [];

  const days = new Set<number>();
  for (const p of due) days.add(toDay(p.date));
  for (const r of state.rows) if (lateFeeDay(r, settings) <= asOf) days.add(lateFeeDay(r, settings));
  for (const p of nsf) days.add(toDay(p.dateReversed as string));
  for (const f of manual) days.add(toDay(f.date));
  for (const w of waivers) if (toDay(w.date, 'waiver date') <= asOf) days.add(toDay(w.date));

  const tracked = input.status === undefined || input.status === null || ['servicing', 'closed', 'overpaid'].includes(input.status);
  let status: string = tracked ? 'servicing' : (input.status as string);
  let dateClosed: number | null = null;
  const statusChanges: StatusChange[] = [];
  const waived = new Set<string>();
  let next = 0;
  for (const day of [...days].sort((a, b) => a - b)) {
    assessLate(state, day, idFor);
    for (const p of nsf) if (toDay(p.dateReversed as string) === day) addFee(state, { id: idFor('nsf', p.id), kind: 'nsf', rowNumber: null, paymentId: p.id, date: day, amount: nsfFee });
    for (const f of manual) {
      if (toDay(f.date) === day) addFee(state, { id: f.id, kind: 'manual', rowNumber: f.rowNumber ?? null, paymentId: null, date: day, amount: toCents(f.amount, 'fee amount') });
    }
    applyWaivers(state, day, waivers, (iso) => toDay(iso, 'waiver date'), waived);
    creditPaysFees(state);
    while (next < due.length && toDay((due[next] as PaymentRecord).date) === day) applyPayment(state, due[next++] as PaymentRecord, day);
    if (tracked) {
      const now = ledgerStatus(state);
      if (now !== status) {
        statusChanges.push({ date: toIso(day), from: status, to: now });
        status = now;
        dateClosed = now === 'closed' ? day : null;
      }
    }
  }
  return { state, asOf, status, dateClosed, statusChanges, pendingPaymentIds, waived };
}

/** SPEC §12: replays a loan's ledger as of `input.asOf`. Throws LedgerError on input §12 refuses. */
export function replayLedger(input: LedgerInput): LedgerResult {
  const { state, asOf, status, dateClosed, statusChanges, pendingPaymentIds, waived } = run(input);
  const derivedIds = new Set(state.fees.map((f) => f.id));
  const quote = payoffQuoteOf(state, asOf);
  const dpd = daysPastDue(state, asOf);
  const oldest = state.rows.find((r) => rowUnpaid(r) > 0n);
  return deepFreeze({
    asOf: toIso(asOf),
    allocations: mergeLines(state),
    fees: state.fees.map(feeOut),
    voidedFeeIds: (input.fees ?? []).filter((f) => f.kind !== 'manual' && toDay(f.date) <= asOf && !derivedIds.has(f.id)).map((f) => f.id),
    unmatchedWaiverIds: (input.waivers ?? []).filter((w) => !waived.has(w.id) && toDay(w.date) <= asOf).map((w) => w.id),
    rows: state.rows.map((r) => ({
      number: r.number,
      due: toIso(r.due),
      payment: fromCents(r.principal + r.interest),
      principal: fromCents(r.principal),
      interest: fromCents(r.interest),
      balance: fromCents(r.balance),
      interestPaid: fromCents(r.interestPaid),
      principalPaid: fromCents(r.principalPaid),
    })),
    balances: {
      principalOutstanding: quote.principalOutstanding,
      interestDue: quote.interestDue,
      feesDue: quote.feesDue,
      creditBalance: quote.creditBalance,
      oldestUnpaidDue: oldest ? toIso(oldest.due) : null,
      accruedInterest: fromCents(accruedInterest(state, asOf)),
      perDiem: fromCents(perDiem(state, asOf)),
      daysPastDue: dpd,
      delinquencyBucket: bucketOf(dpd, state.loan.settings.delinquencyBuckets),
      nextRowNumber: status === 'servicing' && oldest ? oldest.number : null,
    },
    payoff: quote,
    status,
    dateClosed: status === 'closed' && dateClosed !== null ? toIso(dateClosed) : null,
    statusChanges,
    pendingPaymentIds,
  });
}

/** R5: payoff(D) of the loan as of `asOf` (a later date is quoted anew, never extrapolated). */
export function payoffQuote(input: LedgerInput, asOf: string): PayoffQuote {
  return replayLedger({ ...input, asOf }).payoff;
}

/**
 * R4's daily job for one loan: the late and NSF fees the ledger derives as of `asOf` that are
 * not stored yet (no stored fee with their id). Idempotent: once stored, they are not returned.
 */
export function assessLateFees(input: LedgerInput, asOf: string): LedgerResult['fees'] {
  const storedIds = new Set((input.fees ?? []).map((f) => f.id));
  return replayLedger({ ...input, asOf }).fees.filter((f) => f.kind !== 'manual' && !storedIds.has(f.id));
}

function payoffQuoteOf(state: LedgerState, day: number): PayoffQuote {
  const p = payoffParts(state, day);
  return {
    date: toIso(day),
    amount: fromCents(p.total > 0n ? p.total : 0n),
    principalOutstanding: fromCents(p.principalOutstanding),
    interestDue: fromCents(p.interestDue),
    accruedInterest: fromCents(p.accrued),
    interestPaidAhead: fromCents(p.interestPaidAhead),
    feesDue: fromCents(p.feesDue),
    creditBalance: fromCents(p.credit),
    perDiem: fromCents(p.perDiem),
  };
}

/** Lines grouped per (payment, row, fee, component) in order of first appearance; zero lines dropped. */
function mergeLines(state: LedgerState): LedgerResult['allocations'] {
  const merged = new Map<string, { paymentId: string; rowNumber: number | null; feeId: string | null; component: LedgerResult['allocations'][number]['component']; amount: bigint }>();
  for (const l of state.lines) {
    const key = JSON.stringify([l.paymentId, l.rowNumber, l.feeId, l.component]);
    const found = merged.get(key);
    if (found) found.amount += l.amount;
    else merged.set(key, { paymentId: l.paymentId, rowNumber: l.rowNumber, feeId: l.feeId, component: l.component, amount: l.amount });
  }
  return [...merged.values()].filter((l) => l.amount !== 0n).map((l) => ({ ...l, amount: fromCents(l.amount) }));
}

function feeOut(f: FeeState): LedgerResult['fees'][number] {
  return {
    id: f.id,
    kind: f.kind,
    rowNumber: f.rowNumber,
    paymentId: f.paymentId,
    date: toIso(f.date),
    amount: fromCents(f.amount),
    paid: fromCents(f.paid),
    waived: fromCents(f.waived),
    waiverId: f.waiverId,
  };
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
