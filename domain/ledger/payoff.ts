/** SPEC §12 R5 (payoff quote) and R6 (paying off). */
import { accruedInterest, perDiem } from './accrual.js';
import type { LedgerState, RowState } from './state.js';
import { payDue } from './waterfall.js';

/** The parts of payoff(D), in cents; `total` may be negative (interest paid ahead above what accrued). */
export interface PayoffParts {
  readonly principalOutstanding: bigint;
  readonly interestDue: bigint;
  readonly accrued: bigint;
  readonly interestPaidAhead: bigint;
  readonly feesDue: bigint;
  readonly credit: bigint;
  readonly perDiem: bigint;
  readonly total: bigint;
}

/**
 * R5: payoff(D) = principal_outstanding + interest_due + accrued(D) − interest already paid on
 * rows due after D + fees_due − credit_balance, with per_diem, from the state as of D.
 */
export function payoffParts(state: LedgerState, day: number): PayoffParts {
  const principalOutstanding = state.principalOutstanding();
  const interestDue = state.interestDue(day);
  const accrued = accruedInterest(state, day);
  const interestPaidAhead = state.interestPaidAhead(day);
  const feesDue = state.feesDue(day);
  const total = principalOutstanding + interestDue + accrued - interestPaidAhead + feesDue - state.credit;
  return { principalOutstanding, interestDue, accrued, interestPaidAhead, feesDue, credit: state.credit, perDiem: perDiem(state, day), total };
}

/**
 * R6: settles the loan with a payment on `day`: amounts due, then row k's interest cut to
 * accrued(day), then all principal; the surplus is credit. Row k becomes the last row (its
 * principal is all the principal left after row k − 1); what was paid on later rows moves to it,
 * and interest already paid on rows due after `day` becomes principal of row k (beyond row k's
 * unpaid principal it pays row k's cut interest, and beyond that it is credit).
 */
export function settle(state: LedgerState, paymentId: string, day: number, amount: bigint): void {
  let left = payDue(state, paymentId, day, amount);
  const index = state.nextRowIndex(day);
  if (index >= 0) {
    const row = state.rows[index] as RowState;
    const accrued = accruedInterest(state, day);
    const later = state.rows.slice(index);
    const principal = later.reduce((sum, r) => sum + r.principal, 0n);
    const principalPaid = later.reduce((sum, r) => sum + r.principalPaid, 0n);
    const interestPaid = later.reduce((sum, r) => sum + r.interestPaid, 0n);
    const onLater = (component: 'principal' | 'interest') => (line: { rowNumber: number | null; component: string }) =>
      line.rowNumber !== null && line.rowNumber >= row.number && line.component === component;
    state.relabel(onLater('principal'), principalPaid, { rowNumber: row.number, feeId: null, component: 'principal' });
    const room = principal - principalPaid;
    const toPrincipal = interestPaid < room ? interestPaid : room;
    state.relabel(onLater('interest'), toPrincipal, { rowNumber: row.number, feeId: null, component: 'principal' });
    // Beyond the principal left, interest paid ahead pays row k's accrued interest, then is credit.
    const rest = interestPaid - toPrincipal;
    const keep = rest < accrued ? rest : accrued;
    state.credit += state.relabel(onLater('interest'), rest - keep, { rowNumber: null, feeId: null, component: 'credit' });
    state.relabel(onLater('interest'), keep, { rowNumber: row.number, feeId: null, component: 'interest' }); // what is left of it
    state.rows.splice(index + 1);
    state.rowsChanged();
    row.interest = accrued;
    row.interestPaid = keep;
    row.principal = principal;
    row.principalPaid = principalPaid + toPrincipal;
    row.balance = 0n;
    left = state.payInterest(paymentId, row, left);
    left = state.payPrincipal(paymentId, row, left);
  }
  state.toCredit(paymentId, left);
}
