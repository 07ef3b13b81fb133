import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { AMORTIZATIONS, buildSchedule, FREQUENCIES, type Frequency } from '../../domain/schedule.js';
import {
  adjustments,
  assessLateFees,
  distribute,
  distributionHistory,
  LedgerError,
  payoffQuote,
  replayLedger,
  type FundingSource,
  type LedgerInput,
  type PaymentRecord,
  type ServicingSettings,
} from '../../domain/ledger/index.js';

// The reference loan of SPEC §7, funded 2026-01-15: rows due on the 15th from 2026-02-15.
const loan = { amount: '100000.00', rate: '12', frequency: 'monthly' as const, dateFunded: '2026-01-15' };
const rows = buildSchedule({ ...loan, term: 12 }).rows;

let posted = 0;
function pay(id: string, date: string, amount: string, extra: Partial<PaymentRecord> = {}): PaymentRecord {
  posted += 1;
  return { id, date, postedAt: `${date}T12:00:${String(posted % 60).padStart(2, '0')}Z`, amount, ...extra };
}

function ledger(payments: PaymentRecord[], asOf: string, more: Partial<LedgerInput> = {}) {
  return replayLedger({ loan, rows, payments, asOf, ...more });
}

/** A payment's allocation as [row or fee, component, amount] triples. */
function linesOf(result: ReturnType<typeof replayLedger>, paymentId: string): [number | string | null, string, string][] {
  return result.allocations.filter((a) => a.paymentId === paymentId).map((a) => [a.rowNumber ?? a.feeId, a.component, a.amount]);
}

const onTime = [pay('p1', '2026-02-15', '8884.88'), pay('p2', '2026-03-15', '8884.88')];
const delinquent = [pay('late', '2026-03-20', '10000.00')];

describe('R1: the waterfall of a payment', () => {
  it('pays row 1 interest 1,000.00 and principal 7,884.88, then row 2 interest 921.15 and principal 193.97, in the default order', () => {
    const result = ledger(delinquent, '2026-03-20');
    assert.deepEqual(linesOf(result, 'late'), [
      [1, 'interest', '1000.00'],
      [1, 'principal', '7884.88'],
      [2, 'interest', '921.15'],
      [2, 'principal', '193.97'],
    ]);
    assert.equal(result.fees.length, 1, 'the late fee of row 1 was assessed on 02-26 and stays unpaid');
    assert.equal(result.balances.feesDue, '444.24');
  });

  it('pays the fee 444.24, row 1 1,000.00 + 7,884.88 and row 2 interest 670.88 with fees_interest_principal', () => {
    const result = ledger(delinquent, '2026-03-20', { settings: { allocationOrder: 'fees_interest_principal' } });
    assert.deepEqual(linesOf(result, 'late'), [
      ['late:1', 'fee', '444.24'],
      [1, 'interest', '1000.00'],
      [1, 'principal', '7884.88'],
      [2, 'interest', '670.88'],
    ]);
  });

  it('orders payments of one day by posted_at, then id', () => {
    const a = { id: 'b', date: '2026-02-15', postedAt: '2026-02-15T09:00:00Z', amount: '100.00' };
    const b = { id: 'a', date: '2026-02-15', postedAt: '2026-02-15T10:00:00Z', amount: '100.00' };
    const result = ledger([b, a], '2026-02-15');
    assert.deepEqual(result.allocations.map((l) => l.paymentId), ['b', 'a']);
  });

  it('makes the earliest row with unpaid principal or interest the next one (is_next)', () => {
    assert.equal(ledger(onTime, '2026-03-31').balances.nextRowNumber, 3);
    assert.equal(ledger(delinquent, '2026-03-20').balances.nextRowNumber, 2);
  });
});

describe('R2: balances as of a day', () => {
  const asOf = '2026-03-31';
  it('leaves principal 84,151.39 after rows 1–2 paid on time', () => {
    const b = ledger(onTime, asOf).balances;
    assert.equal(b.principalOutstanding, '84151.39');
    assert.equal(b.interestDue, '0.00');
    assert.equal(b.feesDue, '0.00');
    assert.equal(b.creditBalance, '0.00');
    assert.equal(b.oldestUnpaidDue, '2026-04-15');
  });
  it('accrues 448.81 over 16 days with actual/360, per diem 28.05', () => {
    const b = ledger(onTime, asOf, { settings: { dayCount: 'actual/360' } }).balances;
    assert.equal(b.accruedInterest, '448.81');
    assert.equal(b.perDiem, '28.05');
  });
  it('accrues 442.66 with actual/365', () => {
    assert.equal(ledger(onTime, asOf, { settings: { dayCount: 'actual/365' } }).balances.accruedInterest, '442.66');
  });
  it('accrues 420.76 with 30/360 (30E/360: 15 days)', () => {
    assert.equal(ledger(onTime, asOf, { settings: { dayCount: '30/360' } }).balances.accruedInterest, '420.76');
  });
  it('accrues nothing after maturity (no default interest)', () => {
    const b = ledger(onTime, '2027-03-01').balances;
    assert.equal(b.accruedInterest, '0.00');
    assert.equal(b.perDiem, '0.00');
  });
  it('does not apply a payment dated after the as-of day', () => {
    const result = ledger(onTime, '2026-03-14');
    assert.deepEqual(result.pendingPaymentIds, ['p2']);
    assert.equal(result.balances.principalOutstanding, '92115.12');
  });
});

describe('R3: days past due and bucket', () => {
  it('is 33 days (30-59) on 2026-03-20 before R1’s payment and 5 (1-29) after it', () => {
    const before = ledger([], '2026-03-20').balances;
    assert.equal(before.daysPastDue, 33);
    assert.equal(before.delinquencyBucket, '30-59');
    const after = ledger(delinquent, '2026-03-20').balances;
    assert.equal(after.daysPastDue, 5);
    assert.equal(after.delinquencyBucket, '1-29');
  });
  it('counts a row short by no more than arrears_tolerance as paid, and never counts fees', () => {
    const short = [pay('s1', '2026-02-15', '8884.00')];
    assert.equal(ledger(short, '2026-03-01').balances.daysPastDue, 14);
    assert.equal(ledger(short, '2026-03-01', { settings: { arrearsTolerance: '1.00' } }).balances.daysPastDue, 0);
    const feeOnly = ledger([pay('x', '2026-03-20', '17769.76')], '2026-03-20');
    assert.equal(feeOnly.balances.feesDue, '444.24');
    assert.equal(feeOnly.balances.daysPastDue, 0);
    assert.equal(feeOnly.balances.delinquencyBucket, 'current');
  });
});

describe('R4: late fees', () => {
  it('charges 444.24 dated 2026-02-26 when row 1 is unpaid on 2026-02-25', () => {
    assert.deepEqual(ledger([], '2026-02-25').fees, []);
    const fees = ledger([], '2026-02-26').fees;
    assert.deepEqual(fees.map((f) => [f.kind, f.rowNumber, f.date, f.amount]), [['late', 1, '2026-02-26', '444.24']]);
  });
  it('charges a second 444.24 dated 2026-03-26 when row 2 is short at 03-25 after R1’s payment', () => {
    const fees = ledger(delinquent, '2026-03-26').fees;
    assert.deepEqual(fees.map((f) => [f.rowNumber, f.date, f.amount]), [
      [1, '2026-02-26', '444.24'],
      [2, '2026-03-26', '444.24'],
    ]);
    assert.deepEqual(ledger(delinquent, '2026-03-25').fees.length, 1);
  });
  it('lets a payment on due + grace + 1 pay that row’s fee (fees take effect before the day’s payments)', () => {
    const result = ledger([pay('x', '2026-02-26', '9329.12')], '2026-02-26');
    assert.deepEqual(linesOf(result, 'x'), [
      [1, 'interest', '1000.00'],
      [1, 'principal', '7884.88'],
      ['late:1', 'fee', '444.24'],
    ]);
    assert.equal(result.balances.feesDue, '0.00');
  });
  it('uses the fixed amount if set, holds the fee within min/max, and records no 0.00 fee', () => {
    const fee = (settings: Partial<ServicingSettings>) => ledger([], '2026-02-26', { settings }).fees.map((f) => f.amount);
    assert.deepEqual(fee({ lateFeeFixed: '35.00', lateFeePercent: '5' }), ['35.00']);
    assert.deepEqual(fee({ lateFeeMax: '100.00' }), ['100.00']);
    assert.deepEqual(fee({ lateFeeFixed: '10.00', lateFeeMin: '25.00' }), ['25.00']);
    assert.deepEqual(fee({ lateFeePercent: '0' }), []);
  });
  it('charges the interest-only balloon row a percent of its interest', () => {
    const io = { ...loan, amortization: 'interest_only' as const };
    const ioRows = buildSchedule({ ...io, term: 2 }).rows;
    const interestPaid = [pay('i1', '2026-02-15', '1000.00')];
    const fees = replayLedger({ loan: io, rows: ioRows, payments: interestPaid, asOf: '2026-03-26' }).fees;
    assert.deepEqual(fees.map((f) => [f.rowNumber, f.amount]), [[2, '50.00']]);
  });
  it('lets existing credit pay a new fee on the fee’s date, and a waiver waive what is unpaid', () => {
    const manual = { id: 'm1', kind: 'manual' as const, date: '2026-02-20', amount: '30.00' };
    const prepaid = [pay('big', '2026-01-20', '120000.00')];
    const withCredit = ledger(prepaid, '2026-02-20', { fees: [manual] });
    assert.equal(withCredit.fees[0]?.paid, '30.00');
    assert.equal(withCredit.balances.creditBalance, '19803.33'); // 120,000 − payoff 100,166.67 (5 days) − the fee
    assert.deepEqual(linesOf(withCredit, 'big').slice(-2), [
      [null, 'credit', '19803.33'],
      ['m1', 'fee', '30.00'],
    ]);
    const waived = ledger([pay('x', '2026-02-21', '10.00', { type: 'fee' })], '2026-02-22', {
      fees: [manual],
      waivers: [{ id: 'w1', feeId: 'm1', date: '2026-02-22', by: 'clerk', reason: 'goodwill' }],
    });
    assert.deepEqual(waived.fees.map((f) => [f.paid, f.waived, f.waiverId]), [['10.00', '20.00', 'w1']]);
    assert.equal(waived.balances.feesDue, '0.00');
  });
  it('reports the fees the daily job must record, once (idempotent), reusing stored ids', () => {
    const first = assessLateFees({ loan, rows, payments: [], asOf: '2026-03-31' }, '2026-03-31');
    assert.deepEqual(first.map((f) => [f.id, f.date, f.amount]), [
      ['late:1', '2026-02-26', '444.24'],
      ['late:2', '2026-03-26', '444.24'],
    ]);
    const stored = first.map((f) => ({ id: `uuid-${f.rowNumber}`, kind: f.kind, rowNumber: f.rowNumber, date: f.date, amount: f.amount }));
    assert.deepEqual(assessLateFees({ loan, rows, payments: [], asOf: '2026-03-31', fees: stored }, '2026-03-31'), []);
    assert.deepEqual(ledger([], '2026-03-31', { fees: stored }).fees.map((f) => f.id), ['uuid-1', 'uuid-2']);
  });
});

describe('R5: payoff quotes (actual/360)', () => {
  it('is 84,600.20 on 2026-03-31 for the on-time loan', () => {
    assert.equal(payoffQuote({ loan, rows, payments: onTime, asOf: '2026-03-31' }, '2026-03-31').amount, '84600.20');
  });
  it('is 93,258.44 on 2026-03-31 for R1’s delinquent loan', () => {
    const quote = payoffQuote({ loan, rows, payments: delinquent, asOf: '2026-03-31' }, '2026-03-31');
    assert.equal(quote.amount, '93258.44');
    assert.deepEqual([quote.principalOutstanding, quote.accruedInterest, quote.feesDue], ['91921.15', '448.81', '888.48']);
  });
  it('is 76,051.92 on 04-12 for the on-time loan with row 3 paid in full on 04-10', () => {
    const quote = payoffQuote({ loan, rows, payments: [...onTime, pay('p3', '2026-04-10', '8884.88')], asOf: '2026-04-12' }, '2026-04-12');
    assert.equal(quote.amount, '76051.92');
    assert.deepEqual([quote.principalOutstanding, quote.accruedInterest, quote.interestPaidAhead], ['76108.02', '785.41', '841.51']);
  });
  it('quotes a later date anew with its own accrual', () => {
    assert.equal(payoffQuote({ loan, rows, payments: onTime, asOf: '2026-03-31' }, '2026-04-01').amount, '84628.25');
  });
});

describe('R6: paying off', () => {
  it('applies 84,600.20 on 2026-03-31 as row 3 interest 448.81 and principal 84,151.39, leaving nothing owed', () => {
    const result = ledger([...onTime, pay('off', '2026-03-31', '84600.20')], '2026-04-30');
    assert.deepEqual(linesOf(result, 'off'), [
      [3, 'interest', '448.81'],
      [3, 'principal', '84151.39'],
    ]);
    const b = result.balances;
    assert.deepEqual([b.principalOutstanding, b.interestDue, b.feesDue, b.creditBalance], ['0.00', '0.00', '0.00', '0.00']);
    assert.equal(result.status, 'closed');
    assert.equal(result.dateClosed, '2026-03-31');
    assert.deepEqual(result.fees, [], 'no late fee after the payoff');
  });
  it('turns interest paid ahead into principal when paying off (the 76,051.92 quote paid on 04-12)', () => {
    const result = ledger([...onTime, pay('p3', '2026-04-10', '8884.88'), pay('off', '2026-04-12', '76051.92')], '2026-04-12');
    assert.equal(result.status, 'closed');
    assert.deepEqual(linesOf(result, 'p3'), [[3, 'principal', '8884.88']]);
    assert.deepEqual(linesOf(result, 'off'), [
      [3, 'interest', '785.41'],
      [3, 'principal', '75266.51'],
    ]);
  });
  it('applies a payoff-type payment below the payoff as a regular one, and keeps a surplus as credit (overpaid)', () => {
    const below = ledger([...onTime, pay('off', '2026-03-31', '1000.00', { type: 'payoff' })], '2026-03-31');
    assert.deepEqual(linesOf(below, 'off'), [
      [3, 'interest', '841.51'],
      [3, 'principal', '158.49'],
    ]);
    const over = ledger([...onTime, pay('off', '2026-03-31', '84700.20')], '2026-03-31');
    assert.equal(over.status, 'overpaid');
    assert.equal(over.balances.creditBalance, '100.00');
  });
});

describe('R7: curtailment', () => {
  const result = ledger([...onTime, pay('cut', '2026-03-20', '10000.00', { type: 'principal' })], '2026-03-20');
  it('reduces principal by 10,000.00 as unscheduled principal', () => {
    assert.deepEqual(linesOf(result, 'cut'), [[null, 'principal', '10000.00']]);
    assert.equal(result.balances.principalOutstanding, '74151.39');
  });
  it('keeps row 3 as scheduled: 841.51 + 8,043.37', () => {
    const row3 = result.rows[2];
    assert.deepEqual([row3?.interest, row3?.principal], ['841.51', '8043.37']);
  });
  it('rebuilds rows 4–12 at 7,717.47: row 4 interest 661.08, principal 7,056.39; row 12 76.41 + 7,641.10 = 7,717.51, same maturity', () => {
    assert.deepEqual(result.rows.slice(3, 11).map((r) => r.payment), Array(8).fill('7717.47'));
    const row4 = result.rows[3];
    assert.deepEqual([row4?.interest, row4?.principal], ['661.08', '7056.39']);
    const row12 = result.rows[11];
    assert.deepEqual([row12?.interest, row12?.principal, row12?.payment, row12?.due], ['76.41', '7641.10', '7717.51', '2027-01-15']);
    assert.equal(result.rows.length, 12);
  });
  it('pays what is due first (R1 steps 1–2)', () => {
    const late = ledger([pay('cut', '2026-02-20', '10000.00', { type: 'principal' })], '2026-02-20');
    assert.deepEqual(linesOf(late, 'cut'), [
      [1, 'interest', '1000.00'],
      [1, 'principal', '7884.88'],
      [null, 'principal', '1115.12'],
    ]);
  });
});

describe('R8: reversals', () => {
  const p1 = pay('P1', '2026-02-13', '8884.88', { dateReversed: '2026-02-20', reversalReason: 'nsf' });
  const p2 = pay('P2', '2026-03-15', '8884.88');
  const result = ledger([p1, p2], '2026-03-20', { settings: { nsfFee: '25.00' } });
  it('re-derives P2 to pay row 1 once P1 is reversed as NSF', () => {
    assert.deepEqual(linesOf(result, 'P2'), [
      [1, 'interest', '1000.00'],
      [1, 'principal', '7884.88'],
    ]);
    assert.deepEqual(linesOf(result, 'P1'), []);
  });
  it('adds row 1’s late fee 444.24 (02-26) and the NSF fee 25.00 (02-20)', () => {
    assert.deepEqual(result.fees.map((f) => [f.kind, f.date, f.amount]), [
      ['nsf', '2026-02-20', '25.00'],
      ['late', '2026-02-26', '444.24'],
    ]);
  });
  it('is 5 days past due on 03-20', () => {
    assert.equal(result.balances.daysPastDue, 5);
  });
  it('adds no NSF fee with nsf_fee 0, and equals never having posted the payment', () => {
    const zero = ledger([p1, p2], '2026-03-20');
    assert.deepEqual(zero.fees.map((f) => f.kind), ['late']);
    assert.deepEqual(zero, ledger([p2], '2026-03-20'));
  });
  it('reports a stored late fee the replay no longer derives', () => {
    const paid = ledger([pay('ok', '2026-02-15', '8884.88')], '2026-03-01', { fees: [{ id: 'f1', kind: 'late', rowNumber: 1, date: '2026-02-26', amount: '444.24' }] });
    assert.deepEqual(paid.voidedFeeIds, ['f1']);
  });
});

describe('R9: status follows the ledger', () => {
  it('closes on the payoff day, goes to overpaid with credit, back to closed after a refund, and errs on a refund above the credit', () => {
    const over = [...onTime, pay('off', '2026-03-31', '84650.20'), pay('ref', '2026-04-02', '50.00', { type: 'refund' })];
    const result = ledger(over, '2026-04-30');
    assert.deepEqual(result.statusChanges.map((c) => [c.date, c.to]), [
      ['2026-03-31', 'overpaid'],
      ['2026-04-02', 'closed'],
    ]);
    assert.equal(result.dateClosed, '2026-04-02');
    assert.deepEqual(linesOf(result, 'ref'), [[null, 'credit', '-50.00']]);
    assert.throws(() => ledger([...onTime, pay('ref', '2026-04-02', '0.01', { type: 'refund' })], '2026-04-30'), LedgerError);
  });
  it('puts the loan back in servicing when the paying-off payment is reversed', () => {
    const result = ledger([...onTime, pay('off', '2026-03-31', '84600.20', { dateReversed: '2026-04-03', reversalReason: 'error' })], '2026-04-30');
    assert.equal(result.status, 'servicing');
    assert.equal(result.dateClosed, null);
  });
  it('leaves a lead loan a lead', () => {
    assert.equal(ledger([], '2026-03-01', { status: 'lead' }).status, 'lead');
  });
});

describe('R10: investor distributions', () => {
  const sources: FundingSource[] = [
    { id: 'A', originalAmount: '60000.00', rate: '10', dateFunded: '2026-01-15' },
    { id: 'B', originalAmount: '30000.00', rate: '9', dateFunded: '2026-01-15' },
  ];
  const terms = { loan, sources, investorFeeShare: '0' };
  const result = ledger([onTime[0] as PaymentRecord], '2026-02-15');
  const lines = distribute(result.allocations, onTime, terms);
  const of = (component: string) => lines.filter((l) => l.component === component).map((l) => [l.fundingSourceId, l.amount]);
  it('splits row 1 interest 1,000.00 into A 500.00, B 225.00, lender 275.00', () => {
    assert.deepEqual(of('interest'), [
      ['A', '500.00'],
      ['B', '225.00'],
      [null, '275.00'],
    ]);
  });
  it('splits principal 7,884.88 into 4,730.93 / 2,365.46 / 788.49 (largest remainder, the lender last on ties)', () => {
    assert.deepEqual(of('principal'), [
      ['A', '4730.93'],
      ['B', '2365.46'],
      [null, '788.49'],
    ]);
  });
  it('records adjustment lines new − old when a reversal re-derives an allocation', () => {
    const p1 = pay('P1', '2026-02-13', '8884.88', { dateReversed: '2026-02-20', reversalReason: 'nsf' });
    const p2 = pay('P2', '2026-03-15', '8884.88');
    const history = distributionHistory({ loan, rows, payments: [p1, p2], asOf: '2026-03-20' }, sources);
    const adjusted = history.filter((l) => l.adjustmentOf === 'P1');
    const sum = (id: string, component: string) =>
      history.filter((l) => l.paymentId === id && l.component === component).reduce((s, l) => s + Number(l.amount.replace('.', '')), 0);
    assert.equal(sum('P1', 'principal'), 0, 'P1’s lines are undone');
    assert.equal(sum('P2', 'interest'), 100000, 'P2 now pays row 1 interest');
    assert.ok(adjusted.every((l) => l.adjustmentOf === 'P1'));
    const direct = adjustments(
      ledger([{ ...p1, dateReversed: null }, p2], '2026-03-20').allocations,
      ledger([p1, p2], '2026-03-20').allocations,
      [p1, p2],
      terms,
      'P1',
    );
    assert.deepEqual(adjusted, direct);
  });
  it('refuses funding sources above the loan amount', () => {
    assert.throws(() => distribute(result.allocations, onTime, { ...terms, sources: [...sources, { id: 'C', originalAmount: '10000.01', rate: '5', dateFunded: '2026-01-15' }] }), LedgerError);
  });
});

// ---------------------------------------------------------------------------
// Properties over generated loans and histories (fast-check, seed 29).

const cents = (money: string): bigint => BigInt(money.replace('.', ''));
const money = (c: bigint): string => {
  const neg = c < 0n;
  const d = (neg ? -c : c).toString().padStart(3, '0');
  return `${neg ? '-' : ''}${d.slice(0, -2)}.${d.slice(-2)}`;
};
const addDays = (iso: string, days: number): string => new Date(Date.parse(`${iso}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

const arbitraryCase = fc
  .record({
    amount: fc.integer({ min: 100_00, max: 500_000_00 }),
    rate: fc.integer({ min: 0, max: 3000 }),
    term: fc.integer({ min: 1, max: 24 }),
    frequency: fc.constantFrom<Frequency>(...FREQUENCIES),
    amortization: fc.constantFrom(...AMORTIZATIONS),
    funded: fc.integer({ min: 0, max: 700 }),
    settings: fc.record({
      allocationOrder: fc.constantFrom('interest_principal_then_fees' as const, 'fees_interest_principal' as const),
      dayCount: fc.constantFrom('actual/360' as const, 'actual/365' as const, '30/360' as const),
      nsfFee: fc.constantFrom('0', '25.00'),
      lateFeeGraceDays: fc.integer({ min: 0, max: 15 }),
    }),
    payments: fc.array(
      fc.record({
        day: fc.integer({ min: 0, max: 500 }),
        fraction: fc.integer({ min: 1, max: 300 }),
        type: fc.constantFrom('regular' as const, 'regular' as const, 'principal' as const, 'payoff' as const, 'fee' as const),
        reversed: fc.option(fc.tuple(fc.integer({ min: 0, max: 30 }), fc.constantFrom('nsf', 'error')), { freq: 4 }),
      }),
      { maxLength: 8 },
    ),
    asOf: fc.integer({ min: 0, max: 600 }),
  })
  .map((c) => {
    const dateFunded = addDays('2024-01-01', c.funded);
    let terms = { amount: money(BigInt(c.amount)), rate: (c.rate / 100).toFixed(2), frequency: c.frequency, amortization: c.amortization, dateFunded };
    let schedule;
    try {
      schedule = buildSchedule({ ...terms, term: c.term });
    } catch {
      terms = { ...terms, rate: '0.00' }; // §7 refuses a payment that rounds to 0.00
      schedule = buildSchedule({ ...terms, term: c.term });
    }
    const regular = cents(schedule.regularPayment);
    const payments: PaymentRecord[] = c.payments.map((p, i) => {
      const date = addDays(dateFunded, p.day);
      const amount = (regular * BigInt(p.fraction)) / 100n || 1n;
      return {
        id: `pay-${String(i).padStart(2, '0')}`,
        date,
        postedAt: `${date}T10:00:${String(i).padStart(2, '0')}Z`,
        amount: money(amount),
        type: p.type,
        dateReversed: p.reversed ? addDays(date, p.reversed[0]) : null,
        reversalReason: p.reversed ? p.reversed[1] : null,
      };
    });
    const input: LedgerInput = { loan: terms, rows: schedule.rows, settings: c.settings, payments, asOf: addDays(dateFunded, c.asOf) };
    return input;
  });

const options = { seed: Number(process.env.LEDGER_SEED ?? 29), numRuns: Number(process.env.LEDGER_RUNS ?? 250) };

describe('Ledger properties (fast-check, seed 29)', () => {
  it('allocates every applied payment exactly: its lines sum to its amount, every line is positive', () => {
    fc.assert(
      fc.property(arbitraryCase, (input) => {
        const result = replayLedger(input);
        for (const p of input.payments) {
          const lines = result.allocations.filter((a) => a.paymentId === p.id);
          const applied = !p.dateReversed && p.date <= input.asOf;
          const total = lines.reduce((s, l) => s + cents(l.amount), 0n);
          assert.equal(total, applied ? cents(p.amount) : 0n, `payment ${p.id}`);
          for (const l of lines) assert.ok(cents(l.amount) > 0n);
        }
      }),
      options,
    );
  });

  it('keeps the books: principal outstanding = amount − principal allocated ≥ 0, credit = credit lines, allocations + credit = payments', () => {
    fc.assert(
      fc.property(arbitraryCase, (input) => {
        const result = replayLedger(input);
        const sum = (component: string) => result.allocations.filter((a) => a.component === component).reduce((s, a) => s + cents(a.amount), 0n);
        const b = result.balances;
        assert.equal(cents(b.principalOutstanding), cents(input.loan.amount) - sum('principal'));
        assert.ok(cents(b.principalOutstanding) >= 0n);
        assert.equal(cents(b.creditBalance), sum('credit'));
        assert.ok(cents(b.creditBalance) >= 0n);
        assert.ok(cents(b.interestDue) >= 0n && cents(b.feesDue) >= 0n);
        const applied = input.payments.filter((p) => !p.dateReversed && p.date <= input.asOf).reduce((s, p) => s + cents(p.amount), 0n);
        assert.equal(result.allocations.reduce((s, a) => s + cents(a.amount), 0n), applied);
        const feePaid = result.fees.reduce((s, f) => s + cents(f.paid), 0n);
        assert.equal(sum('fee'), feePaid);
        for (const r of result.rows) {
          assert.ok(cents(r.interestPaid) <= cents(r.interest) && cents(r.principalPaid) <= cents(r.principal), `row ${r.number}`);
        }
      }),
      options,
    );
  });

  it('gives the ledger of never having posted a payment when it is reversed (fees aside: no NSF fee)', () => {
    fc.assert(
      fc.property(arbitraryCase, fc.nat(), (input, pick) => {
        if (input.payments.length === 0) return;
        const victim = input.payments[pick % input.payments.length] as PaymentRecord;
        const reversed = { ...input, payments: input.payments.map((p) => (p === victim ? { ...p, dateReversed: p.date, reversalReason: 'error' } : p)) };
        const never = { ...input, payments: input.payments.filter((p) => p !== victim) };
        assert.deepEqual(replayLedger(reversed), replayLedger(never));
      }),
      options,
    );
  });

  it('closes the loan when payoff(d) is paid on d', () => {
    fc.assert(
      fc.property(arbitraryCase, (input) => {
        const quote = payoffQuote(input, input.asOf);
        if (cents(quote.amount) === 0n) return;
        const off: PaymentRecord = { id: 'zz-payoff', date: input.asOf, postedAt: `${input.asOf}T23:59:59Z`, amount: quote.amount };
        const result = replayLedger({ ...input, payments: [...input.payments, off] });
        const b = result.balances;
        assert.deepEqual([b.principalOutstanding, b.interestDue, b.feesDue, b.creditBalance], ['0.00', '0.00', '0.00', '0.00']);
        assert.equal(result.status, 'closed');
        assert.equal(result.dateClosed, input.asOf);
        assert.equal(payoffQuote({ ...input, payments: [...input.payments, off] }, input.asOf).amount, '0.00');
      }),
      options,
    );
  });

  it('splits every payment’s components exactly between investors and the lender, and adjustments add up to the final split', () => {
    const arbitrarySources = fc.array(
      fc.record({ share: fc.integer({ min: 1, max: 40 }), rate: fc.integer({ min: 0, max: 3000 }), day: fc.integer({ min: -10, max: 200 }) }),
      { maxLength: 4 },
    );
    fc.assert(
      fc.property(arbitraryCase, arbitrarySources, fc.constantFrom('0', '0.5', '1'), (input, raw, feeShare) => {
        const amount = cents(input.loan.amount);
        const sources: FundingSource[] = raw.map((s, i) => ({
          id: `src-${i}`,
          originalAmount: money((amount * BigInt(s.share)) / 160n),
          rate: (s.rate / 100).toFixed(2),
          dateFunded: addDays(input.loan.dateFunded as string, s.day),
        }));
        const withShare = { ...input, settings: { ...input.settings, investorFeeShare: feeShare } };
        const result = replayLedger(withShare);
        const lines = distribute(result.allocations, input.payments, { loan: input.loan, sources, investorFeeShare: feeShare });
        const key = (p: string, c: string) => `${p}/${c}`;
        const allocated = new Map<string, bigint>();
        for (const a of result.allocations) if (a.component !== 'credit') allocated.set(key(a.paymentId, a.component), (allocated.get(key(a.paymentId, a.component)) ?? 0n) + cents(a.amount));
        const distributed = new Map<string, bigint>();
        for (const l of lines) {
          assert.ok(cents(l.amount) > 0n);
          distributed.set(key(l.paymentId, l.component), (distributed.get(key(l.paymentId, l.component)) ?? 0n) + cents(l.amount));
        }
        assert.deepEqual(distributed, allocated);
        // History: original lines plus adjustments, summed per (payment, party, component), equal the final split.
        const history = distributionHistory(withShare, sources);
        const net = (ls: typeof lines) => {
          const m = new Map<string, bigint>();
          for (const l of ls) {
            const k = `${l.paymentId}/${l.fundingSourceId}/${l.component}`;
            m.set(k, (m.get(k) ?? 0n) + cents(l.amount));
          }
          for (const [k, v] of m) if (v === 0n) m.delete(k);
          return m;
        };
        assert.deepEqual(net(history), net(lines));
      }),
      { seed: 29, numRuns: 120 },
    );
  });
});
