/**
 * Input and output of the servicing-ledger replay (SPEC §12). Every type is readonly and maps
 * 1:1 to a table or a loan field the write path stores: `Allocation` → payment_allocations,
 * `LedgerFee` → fees, `Distribution` → distributions. Money is a string with two decimals,
 * dates are `YYYY-MM-DD` business dates.
 */
import type { Amortization, Frequency, ScheduleRow } from '../schedule.js';

/** The loan's terms the ledger needs (the same fields §7's schedule is built from). */
export interface LoanTerms {
  /** Principal, two decimals. */
  readonly amount: string;
  /** Annual rate in percent ("12" = 12 %). */
  readonly rate: string;
  readonly frequency: Frequency;
  /** Defaults to `amortizing`. */
  readonly amortization?: Amortization | null;
  readonly dateFunded?: string | null;
  readonly firstPaymentDate?: string | null;
}

/** SPEC §12 settings per product; see `DEFAULT_SETTINGS`. */
export interface ServicingSettings {
  readonly allocationOrder: 'interest_principal_then_fees' | 'fees_interest_principal';
  readonly dayCount: 'actual/360' | 'actual/365' | '30/360';
  readonly lateFeeGraceDays: number;
  /** Percent of the row's scheduled payment ("5" = 5 %); used when `lateFeeFixed` is null. */
  readonly lateFeePercent: string;
  readonly lateFeeFixed: string | null;
  readonly lateFeeMin: string | null;
  readonly lateFeeMax: string | null;
  readonly nsfFee: string;
  readonly arrearsTolerance: string;
  readonly delinquencyBuckets: readonly DelinquencyBucket[];
  /** Fraction 0–1 of fees that goes to investors, pro rata. */
  readonly investorFeeShare: string;
}

/** A range of days past due: `min` ≤ DPD ≤ `max` (`max` null: no upper bound). */
export interface DelinquencyBucket {
  readonly name: string;
  readonly min: number;
  readonly max: number | null;
}

export type PaymentType = 'regular' | 'payoff' | 'principal' | 'refund' | 'fee';

/** A row of `payments` (reversed ones included: they leave the replay, an NSF one adds a fee). */
export interface PaymentRecord {
  readonly id: string;
  /** Business date of the payment. */
  readonly date: string;
  /** Time of posting (ISO timestamp); orders payments of one day (R1). */
  readonly postedAt: string;
  /** > 0, two decimals. */
  readonly amount: string;
  /** Defaults to `regular`. */
  readonly type?: PaymentType | null;
  readonly dateReversed?: string | null;
  readonly reversalReason?: string | null;
}

export type FeeKind = 'late' | 'nsf' | 'manual';

/**
 * A stored row of `fees`. Manual fees are taken as they are; late and NSF fees are derived by
 * the replay, and a stored one only lends its `id` to the derived fee with the same key (late:
 * `rowNumber`, nsf: `paymentId`).
 */
export interface FeeRecord {
  readonly id: string;
  readonly kind: FeeKind;
  readonly rowNumber?: number | null;
  /** The reversed payment an NSF fee is for. */
  readonly paymentId?: string | null;
  readonly date: string;
  readonly amount: string;
}

/** A waiver record (R4): waives what is unpaid of the fee on its date. */
export interface WaiverRecord {
  readonly id: string;
  readonly feeId: string;
  readonly date: string;
  readonly by?: string | null;
  readonly reason?: string | null;
}

/** Everything a loan's ledger follows from (SPEC §12, first paragraph), and the as-of day. */
export interface LedgerInput {
  readonly loan: LoanTerms;
  /** The schedule as domain/schedule.ts `buildSchedule` produced it. */
  readonly rows: readonly ScheduleRow[];
  readonly settings?: Partial<ServicingSettings> | null;
  readonly payments: readonly PaymentRecord[];
  readonly fees?: readonly FeeRecord[] | null;
  readonly waivers?: readonly WaiverRecord[] | null;
  /** Business day the ledger is computed for; later payments, fees and waivers are not applied yet. */
  readonly asOf: string;
  /** The loan's stored status; a `lead` loan stays `lead` (R9 is about loans in servicing). */
  readonly status?: string | null;
}

export type Component = 'interest' | 'principal' | 'fee' | 'credit';

/**
 * A row of `payment_allocations`. Exactly one of `rowNumber` / `feeId` is set for interest and
 * fee lines; principal has a row, or none for unscheduled principal (curtailment, R7; interest
 * prepaid on rows a payoff or curtailment removed); credit has neither and is negative for a
 * refund.
 */
export interface Allocation {
  readonly paymentId: string;
  readonly rowNumber: number | null;
  readonly feeId: string | null;
  readonly component: Component;
  readonly amount: string;
}

/** A row of `fees` as the replay derives it, with what is paid and waived of it. */
export interface LedgerFee {
  readonly id: string;
  readonly kind: FeeKind;
  readonly rowNumber: number | null;
  readonly paymentId: string | null;
  readonly date: string;
  readonly amount: string;
  readonly paid: string;
  readonly waived: string;
  readonly waiverId: string | null;
}

/** The schedule as the ledger left it (R6 and R7 rewrite rows), with what is paid of each row. */
export interface LedgerRow extends ScheduleRow {
  readonly interestPaid: string;
  readonly principalPaid: string;
}

/** SPEC §12 R2, R3 as of `asOf`. */
export interface Balances {
  readonly principalOutstanding: string;
  readonly interestDue: string;
  readonly feesDue: string;
  readonly creditBalance: string;
  readonly oldestUnpaidDue: string | null;
  /** With the product's day count. */
  readonly accruedInterest: string;
  readonly perDiem: string;
  readonly daysPastDue: number;
  readonly delinquencyBucket: string;
  /** R1's `is_next`: the earliest row with unpaid principal or interest, for a loan in servicing. */
  readonly nextRowNumber: number | null;
}

/** SPEC §12 R5: payoff(D) and its parts. */
export interface PayoffQuote {
  readonly date: string;
  /** max(0, the sum below): a loan that owes nothing has a payoff of 0.00 (its credit is shown). */
  readonly amount: string;
  readonly principalOutstanding: string;
  readonly interestDue: string;
  readonly accruedInterest: string;
  readonly interestPaidAhead: string;
  readonly feesDue: string;
  readonly creditBalance: string;
  readonly perDiem: string;
}

export type LedgerStatus = 'servicing' | 'closed' | 'overpaid';

export interface StatusChange {
  readonly date: string;
  readonly from: string;
  readonly to: string;
}

export interface LedgerResult {
  readonly asOf: string;
  /** Every applied payment's lines, in replay order. */
  readonly allocations: readonly Allocation[];
  /** Every fee dated ≤ asOf (manual, derived late and NSF). */
  readonly fees: readonly LedgerFee[];
  /** Stored late/NSF fees (ids) the replay no longer derives (a reversal removed their cause). */
  readonly voidedFeeIds: readonly string[];
  /** Waivers whose fee does not exist as of asOf. */
  readonly unmatchedWaiverIds: readonly string[];
  readonly rows: readonly LedgerRow[];
  readonly balances: Balances;
  readonly payoff: PayoffQuote;
  readonly status: LedgerStatus | string;
  readonly dateClosed: string | null;
  readonly statusChanges: readonly StatusChange[];
  /** Non-reversed payments dated after asOf (not applied yet). */
  readonly pendingPaymentIds: readonly string[];
}

/** A funding source of the loan (R10). */
export interface FundingSource {
  readonly id: string;
  readonly originalAmount: string;
  /** Annual rate in percent. */
  readonly rate: string;
  readonly dateFunded: string;
}

/** A row of `distributions`: `fundingSourceId` null is the lender (the account). */
export interface Distribution {
  readonly paymentId: string;
  readonly fundingSourceId: string | null;
  readonly component: 'interest' | 'principal' | 'fee';
  readonly amount: string;
  /** null for an original line; for an adjustment line, the reversed payment that caused it. */
  readonly adjustmentOf: string | null;
}
