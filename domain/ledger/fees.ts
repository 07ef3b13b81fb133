/** SPEC §12 R4 (late fees), R8's NSF fee, waivers, and credit paying a new fee. */
import { maxBig, minBig, roundHalfUp, toCents, toFraction } from './money.js';
import { type FeeState, feeUnpaid, type LedgerState, type RowState, rowUnpaid } from './state.js';
import type { FeeKind, ServicingSettings, WaiverRecord } from './types.js';

/**
 * A fee's amount (R4 and "Details"): the fixed amount if set, else round(percent × base), then
 * held within min/max.
 */
export function feeAmount(base: bigint, settings: ServicingSettings): bigint {
  let amount: bigint;
  if (settings.lateFeeFixed !== null) amount = toCents(settings.lateFeeFixed, 'late_fee_fixed');
  else {
    const percent = toFraction(settings.lateFeePercent, 'late_fee_percent');
    amount = roundHalfUp(base * percent.num, percent.den * 100n);
  }
  if (settings.lateFeeMin !== null) amount = maxBig(amount, toCents(settings.lateFeeMin));
  if (settings.lateFeeMax !== null) amount = minBig(amount, toCents(settings.lateFeeMax));
  return amount;
}

/** R4's base: the row's scheduled payment as it stands; the interest-only balloon row: its interest. */
export function lateFeeBase(state: LedgerState, row: RowState): bigint {
  const last = state.rows[state.rows.length - 1] === row;
  if (state.loan.amortization === 'interest_only' && last) return row.interest;
  return row.principal + row.interest;
}

/** The day a row's late fee is dated: due + grace + 1 (R4). */
export function lateFeeDay(row: { due: number }, settings: ServicingSettings): number {
  return row.due + settings.lateFeeGraceDays + 1;
}

/**
 * Assesses R4 on `day` (before that day's payments): every row whose late-fee day is `day`, not
 * fully paid by then and without a late fee, gets one; a 0.00 fee is not recorded.
 */
export function assessLate(state: LedgerState, day: number, idFor: (kind: FeeKind, key: string) => string): FeeState[] {
  const created: FeeState[] = [];
  const row = state.rowDueOn(day - state.loan.settings.lateFeeGraceDays - 1);
  if (row === undefined || rowUnpaid(row) <= 0n) return created;
  if (state.fees.some((f) => f.kind === 'late' && f.rowNumber === row.number)) return created;
  const amount = feeAmount(lateFeeBase(state, row), state.loan.settings);
  const fee = addFee(state, { id: idFor('late', String(row.number)), kind: 'late', rowNumber: row.number, paymentId: null, date: day, amount });
  if (fee) created.push(fee);
  return created;
}

/** Records a fee (not a 0.00 one); returns it, or null. */
export function addFee(state: LedgerState, fee: Pick<FeeState, 'id' | 'kind' | 'rowNumber' | 'paymentId' | 'date' | 'amount'>): FeeState | null {
  if (fee.amount <= 0n) return null;
  const added: FeeState = { ...fee, seq: state.fees.length, paid: 0n, waived: 0n, waiverId: null };
  state.fees.push(added);
  return added;
}

/**
 * Applies the waivers dated ≤ `day` whose fee exists by then (a waiver dated before its fee takes
 * effect on the fee's date): each waives what is unpaid of its fee.
 */
export function applyWaivers(state: LedgerState, day: number, waivers: readonly WaiverRecord[], dayOf: (iso: string) => number, applied: Set<string>): void {
  for (const waiver of waivers) {
    if (applied.has(waiver.id) || dayOf(waiver.date) > day) continue;
    const fee = state.fees.find((f) => f.id === waiver.feeId);
    if (fee === undefined) continue;
    applied.add(waiver.id);
    const unpaid = feeUnpaid(fee);
    if (unpaid <= 0n) continue;
    fee.waived += unpaid;
    fee.waiverId = waiver.id;
  }
}

/**
 * Existing credit pays unpaid fees, oldest first ("Details": on the fee's date). The money is the
 * payments' that made the credit: their newest credit lines become fee lines.
 */
export function creditPaysFees(state: LedgerState): void {
  for (const fee of state.feesInOrder()) {
    if (state.credit <= 0n) return;
    const part = minBig(state.credit, feeUnpaid(fee));
    if (part <= 0n) continue;
    const moved = state.relabel((line) => line.component === 'credit' && line.rowNumber === null && line.feeId === null, part, { rowNumber: null, feeId: fee.id, component: 'fee' }, true);
    fee.paid += moved;
    state.credit -= moved;
  }
}

