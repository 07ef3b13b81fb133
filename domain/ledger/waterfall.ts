/** SPEC §12 R1: the allocation waterfall of one payment (both allocation orders). */
import type { FeeState, LedgerState, RowState } from './state.js';

/** R1 step 2 (and a `fee` payment's first step): fees dated ≤ day, oldest first. */
export function payFees(state: LedgerState, paymentId: string, day: number, budget: bigint, only?: (fee: FeeState) => boolean): bigint {
  let left = budget;
  for (const fee of state.feesInOrder()) {
    if (left <= 0n) break;
    if (fee.date <= day && (only === undefined || only(fee))) left = state.payFee(paymentId, fee, left);
  }
  return left;
}

/**
 * R1 steps 1–2, what is due on `day`. Default order: each due row's interest then principal,
 * oldest first, then fees dated ≤ day. `fees_interest_principal`: per due row its fees, interest,
 * principal, then the remaining fees dated ≤ day (fees of no row, or of a row not yet due).
 */
export function payDue(state: LedgerState, paymentId: string, day: number, budget: bigint): bigint {
  let left = budget;
  const feesFirst = state.loan.settings.allocationOrder === 'fees_interest_principal';
  for (let i = state.firstOpen(); i < state.rows.length; i++) {
    const row = state.rows[i] as RowState;
    if (row.due > day || left <= 0n) break;
    if (feesFirst) left = payFees(state, paymentId, day, left, (fee) => fee.rowNumber === row.number);
    left = state.payInterest(paymentId, row, left);
    left = state.payPrincipal(paymentId, row, left);
  }
  return payFees(state, paymentId, day, left);
}

/** R1 step 3: rows due after `day`, in due order, interest then principal. */
export function payFuture(state: LedgerState, paymentId: string, day: number, budget: bigint): bigint {
  let left = budget;
  const next = state.nextRowIndex(day);
  if (next < 0) return left;
  for (let i = Math.max(state.firstOpen(), next); i < state.rows.length; i++) {
    const row = state.rows[i] as RowState;
    if (left <= 0n) break;
    left = state.payInterest(paymentId, row, left);
    left = state.payPrincipal(paymentId, row, left);
  }
  return left;
}

/** The whole R1 waterfall: due, future, then credit (step 4). */
export function applyRegular(state: LedgerState, paymentId: string, day: number, amount: bigint): void {
  const left = payFuture(state, paymentId, day, payDue(state, paymentId, day, amount));
  state.toCredit(paymentId, left);
}
