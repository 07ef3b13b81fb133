/** SPEC §12 R7: a curtailment rebuilds the rows after row k with §7's maths. */
import { buildSchedule, PERIODS_PER_YEAR, ScheduleInputError } from '../schedule.js';
import { toIso } from './dates.js';
import { fromCents, roundHalfUp, toCents } from './money.js';
import type { LedgerState, RowState } from './state.js';

/**
 * Reduces principal by up to `budget` on `day` (after R1 steps 1–2 were paid): row k (the first
 * row due after `day`) stays as scheduled; rows after k are rebuilt from row k's balance less the
 * curtailment over the same remaining due dates. Money paid ahead on rows after k becomes
 * unscheduled principal first (those rows are replaced). Returns the budget left (more than the
 * principal after row k), which goes on through the waterfall.
 */
export function curtail(state: LedgerState, paymentId: string, day: number, budget: bigint): bigint {
  const index = state.nextRowIndex(day);
  if (index < 0 || budget <= 0n) return budget;
  const row = state.rows[index] as RowState;
  const after = state.rows.slice(index + 1);
  const scheduled = after.reduce((sum, r) => sum + r.principal, 0n);
  const paidAhead = after.reduce((sum, r) => sum + r.principalPaid + r.interestPaid, 0n);
  const isAfter = (line: { rowNumber: number | null; component: string }) =>
    line.rowNumber !== null && line.rowNumber > row.number && (line.component === 'principal' || line.component === 'interest');
  const toPrincipal = paidAhead < scheduled ? paidAhead : scheduled;
  state.relabel(isAfter, toPrincipal, { rowNumber: null, feeId: null, component: 'principal' });
  state.credit += state.relabel(isAfter, paidAhead - toPrincipal, { rowNumber: null, feeId: null, component: 'credit' });
  const base = scheduled - toPrincipal;
  const cut = budget < base ? budget : base;
  state.add(paymentId, null, null, 'principal', cut);
  rebuildAfter(state, index, base - cut);
  return budget - cut;
}

/** Replaces the rows after `index` by §7's schedule of `balance` over their due dates. */
export function rebuildAfter(state: LedgerState, index: number, balance: bigint): void {
  const row = state.rows[index] as RowState;
  const after = state.rows.splice(index + 1);
  state.rowsChanged();
  row.balance = balance;
  if (balance <= 0n || after.length === 0) return;
  const { loan } = state;
  let money: { principal: bigint; interest: bigint; balance: bigint }[];
  try {
    money = buildSchedule({
      amount: fromCents(balance),
      rate: loan.rateText,
      term: after.length,
      frequency: loan.frequency,
      amortization: loan.amortization,
      firstPaymentDate: toIso((after[0] as RowState).due),
    }).rows.map((r) => ({ principal: toCents(r.principal), interest: toCents(r.interest), balance: toCents(r.balance) }));
  } catch (error) {
    if (!(error instanceof ScheduleInputError)) throw error;
    // A balance too small for §7's payment over these rows (it rounds to 0.00): one row repays it.
    const interest = roundHalfUp(balance * loan.rate.num, loan.rate.den * 100n * BigInt(PERIODS_PER_YEAR[loan.frequency]));
    money = [{ principal: balance, interest, balance: 0n }];
  }
  let before = balance;
  money.forEach((m, i) => {
    const old = after[i] as RowState;
    state.rows.push({ number: old.number, due: old.due, principal: m.principal, interest: m.interest, balance: m.balance, before, principalPaid: 0n, interestPaid: 0n });
    before = m.balance;
  });
}
