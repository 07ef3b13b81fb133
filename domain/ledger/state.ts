/**
 * The mutable state of one replay (SPEC §12): the schedule as it stands, fees, every payment's
 * allocation lines and the credit. Only the replay modules touch it; the result is a frozen copy.
 */
import type { Amortization, Frequency } from '../schedule.js';
import type { Fraction } from './money.js';
import type { Component, FeeKind, ServicingSettings } from './types.js';

/** The loan's terms, parsed. */
export interface LoanContext {
  readonly amount: bigint;
  /** Annual rate in percent, exact. */
  readonly rate: Fraction;
  readonly rateText: string;
  readonly frequency: Frequency;
  readonly amortization: Amortization;
  /** Start of row 1's period (R2): Date_Funded, else one period before the first due date. */
  readonly firstPeriodStart: number;
  readonly settings: ServicingSettings;
}

export interface RowState {
  readonly number: number;
  readonly due: number;
  principal: bigint;
  interest: bigint;
  /** Scheduled balance after the row. */
  balance: bigint;
  /** Scheduled balance before the row (B of R2); kept when R7 rebuilds later rows. */
  before: bigint;
  principalPaid: bigint;
  interestPaid: bigint;
}

export interface FeeState {
  readonly id: string;
  readonly kind: FeeKind;
  readonly rowNumber: number | null;
  readonly paymentId: string | null;
  readonly date: number;
  readonly amount: bigint;
  /** Order of creation, for "oldest first" among fees of one date. */
  readonly seq: number;
  paid: bigint;
  waived: bigint;
  waiverId: string | null;
}

export interface Line {
  readonly paymentId: string;
  rowNumber: number | null;
  feeId: string | null;
  component: Component;
  amount: bigint;
}

export class LedgerState {
  readonly rows: RowState[];
  readonly fees: FeeState[] = [];
  readonly lines: Line[] = [];
  credit = 0n;
  /** No row before this index has anything unpaid (payments only ever add to what is paid). */
  private openHint = 0;

  constructor(
    readonly loan: LoanContext,
    rows: RowState[],
  ) {
    this.rows = rows;
  }

  /** Appends a line (merging with the previous line of the same payment and target). */
  add(paymentId: string, rowNumber: number | null, feeId: string | null, component: Component, amount: bigint): void {
    if (amount === 0n) return;
    const last = this.lines[this.lines.length - 1];
    if (last && last.paymentId === paymentId && last.rowNumber === rowNumber && last.feeId === feeId && last.component === component) {
      last.amount += amount;
    } else {
      this.lines.push({ paymentId, rowNumber, feeId, component, amount });
    }
  }

  /** Pays up to `budget` of a row's unpaid interest; returns the budget left. */
  payInterest(paymentId: string, row: RowState, budget: bigint): bigint {
    const part = minOf(budget, row.interest - row.interestPaid);
    if (part <= 0n) return budget;
    row.interestPaid += part;
    this.add(paymentId, row.number, null, 'interest', part);
    return budget - part;
  }

  /** Pays up to `budget` of a row's unpaid principal; returns the budget left. */
  payPrincipal(paymentId: string, row: RowState, budget: bigint): bigint {
    const part = minOf(budget, row.principal - row.principalPaid);
    if (part <= 0n) return budget;
    row.principalPaid += part;
    this.add(paymentId, row.number, null, 'principal', part);
    return budget - part;
  }

  /** Pays up to `budget` of a fee's unpaid amount; returns the budget left. */
  payFee(paymentId: string, fee: FeeState, budget: bigint): bigint {
    const part = minOf(budget, feeUnpaid(fee));
    if (part <= 0n) return budget;
    fee.paid += part;
    this.add(paymentId, null, fee.id, 'fee', part);
    return budget - part;
  }

  /** The rest of a payment is credit (R1 step 4). */
  toCredit(paymentId: string, amount: bigint): void {
    if (amount <= 0n) return;
    this.credit += amount;
    this.add(paymentId, null, null, 'credit', amount);
  }

  /**
   * Moves `amount` of the lines matching `pick` (oldest first) to another target, splitting a
   * line when only part of it moves; returns how much moved.
   */
  relabel(pick: (line: Line) => boolean, amount: bigint, to: Pick<Line, 'rowNumber' | 'feeId' | 'component'>, newest = false): bigint {
    let left = amount;
    const order = newest ? [...this.lines.keys()].reverse() : [...this.lines.keys()];
    for (const index of order) {
      if (left <= 0n) break;
      const line = this.lines[index] as Line;
      if (line.amount <= 0n || !pick(line)) continue;
      if (line.amount <= left) {
        left -= line.amount;
        line.rowNumber = to.rowNumber;
        line.feeId = to.feeId;
        line.component = to.component;
      } else {
        line.amount -= left;
        this.lines.splice(index + 1, 0, { paymentId: line.paymentId, ...to, amount: left });
        left = 0n;
      }
    }
    return amount - left;
  }

  /** Index of the earliest row with unpaid principal or interest (rows.length when none). */
  firstOpen(): number {
    let i = this.openHint;
    while (i < this.rows.length && rowUnpaid(this.rows[i] as RowState) <= 0n) i++;
    this.openHint = i;
    return i;
  }

  /** Called when R6 or R7 rewrites rows (what is paid of a row may go down). */
  rowsChanged(): void {
    this.openHint = 0;
  }

  principalOutstanding(): bigint {
    let sum = 0n;
    for (let i = this.firstOpen(); i < this.rows.length; i++) {
      const r = this.rows[i] as RowState;
      sum += r.principal - r.principalPaid;
    }
    return sum;
  }

  /** Unpaid interest of rows due on or before `day` (R2 interest_due). */
  interestDue(day: number): bigint {
    let sum = 0n;
    for (let i = this.firstOpen(); i < this.rows.length; i++) {
      const r = this.rows[i] as RowState;
      if (r.due > day) break;
      sum += r.interest - r.interestPaid;
    }
    return sum;
  }

  /** Interest already paid on rows due after `day` (R5). */
  interestPaidAhead(day: number): bigint {
    let sum = 0n;
    const from = this.nextRowIndex(day);
    if (from < 0) return 0n;
    for (let i = from; i < this.rows.length; i++) sum += (this.rows[i] as RowState).interestPaid;
    return sum;
  }

  /** Unpaid fees dated on or before `day` (R2 fees_due). */
  feesDue(day: number): bigint {
    return this.fees.reduce((sum, f) => (f.date <= day ? sum + feeUnpaid(f) : sum), 0n);
  }

  /** Index of the first row due after `day` (R2's k), or -1 after maturity. */
  nextRowIndex(day: number): number {
    let lo = 0;
    let hi = this.rows.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((this.rows[mid] as RowState).due > day) hi = mid;
      else lo = mid + 1;
    }
    return lo < this.rows.length ? lo : -1;
  }

  /** The row due on `day`, if any (due dates are strictly increasing). */
  rowDueOn(day: number): RowState | undefined {
    const index = this.nextRowIndex(day - 1);
    const row = index < 0 ? undefined : this.rows[index];
    return row !== undefined && row.due === day ? row : undefined;
  }

  /** Fees in waterfall order: oldest first (date, then creation). */
  feesInOrder(): FeeState[] {
    return [...this.fees].sort((a, b) => a.date - b.date || a.seq - b.seq);
  }
}

export function feeUnpaid(fee: FeeState): bigint {
  return fee.amount - fee.paid - fee.waived;
}

export function rowUnpaid(row: RowState): bigint {
  return row.principal - row.principalPaid + row.interest - row.interestPaid;
}

function minOf(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}
