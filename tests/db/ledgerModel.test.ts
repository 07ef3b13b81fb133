import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { analyzeGrownTables, type Database } from '../../db/index.js';
import { buildSchedule, type Amortization, type Frequency, type ScheduleRow } from '../../domain/schedule.js';
import { payoffQuote, replayLedger, type PaymentRecord, type PaymentType } from '../../domain/ledger/index.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';
import { installTestClock, setTestClock } from '../support/testClock.js';

/**
 * Issue 29, Done when 2: generated histories — payments of every type (a refund the database
 * refuses, more than the credit, is left out of the history as it is of the books), reversals in
 * any order, loans of every frequency and both amortizations, both allocation orders — written to
 * the database one statement at a time (each replays the loan, as any writer's would), then the
 * stored ledger compared with `domain/ledger`, a model written from SPEC §12 alone: balances,
 * status, payoff on random days; and the properties that hold whatever the rules: every payment's
 * lines add up to it, principal allocated plus outstanding is the amount, replaying again changes
 * nothing. Fixed seed; LEDGER_MODEL_RUNS sets the number of histories.
 */
const RUNS = Number(process.env.LEDGER_MODEL_RUNS ?? 100);
const SEED = 20261125;
/**
 * The business date the histories are written on (fixed, so a history's stored ledger does not
 * depend on the day the test runs): payments fall before and after it (a payment dated ahead is
 * applied, the stored ledger then as of its day); a reversal is dated at most this day, or its
 * payment's own day when later (migration 0050).
 */
const TODAY = '2026-09-01';

let database: TestDatabase;
let db: Database;
let accountId: string;
let productId: string;

before(async () => {
  database = await openTestDatabase();
  db = database.db;
  accountId = (await db.query<{ id: string }>(`INSERT INTO accounts (slug, name) VALUES ('ledger-model', 'm') RETURNING id`)).rows[0]!.id;
  productId = (await db.query<{ id: string }>(`INSERT INTO products (account_id, name, is_default) VALUES ($1, 'p', true) RETURNING id`, [accountId])).rows[0]!.id;
  await installTestClock(db);
  await setTestClock(db, TODAY);
});
after(() => database?.close());

const FREQUENCIES: readonly Frequency[] = ['monthly', 'quarterly', 'semi_monthly', 'biweekly', 'weekly', 'annually'];

interface Terms {
  readonly amount: string;
  readonly rate: string;
  readonly term: number;
  readonly frequency: Frequency;
  readonly amortization: Amortization;
  readonly dateFunded: string;
  readonly order: 'interest_principal_then_fees' | 'fees_interest_principal';
}

type Step =
  | { readonly kind: 'pay'; readonly offsetDays: number; readonly cents: number; readonly type: PaymentType }
  | { readonly kind: 'reverse'; readonly pick: number; readonly afterDays: number; readonly nsf: boolean };

const day = (iso: string, days: number): string => new Date(Date.parse(`${iso}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

const terms: fc.Arbitrary<Terms> = fc.record({
  amount: fc.integer({ min: 1_000, max: 500_000 }).map((dollars) => `${dollars}.00`),
  rate: fc.constantFrom('0', '5.5', '8', '12', '14.25'),
  term: fc.integer({ min: 2, max: 14 }),
  frequency: fc.constantFrom(...FREQUENCIES),
  amortization: fc.constantFrom<Amortization>('amortizing', 'interest_only'),
  dateFunded: fc.integer({ min: 0, max: 500 }).map((days) => day('2025-01-01', days)),
  order: fc.constantFrom('interest_principal_then_fees', 'fees_interest_principal'),
});

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('pay' as const), offsetDays: fc.integer({ min: 1, max: 400 }), cents: fc.integer({ min: 1, max: 4_000_000 }), type: fc.constantFrom<PaymentType>('regular', 'regular', 'principal', 'payoff', 'fee', 'refund') }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reverse' as const), pick: fc.nat(), afterDays: fc.integer({ min: 0, max: 30 }), nsf: fc.boolean() }) },
);

async function history(loanTerms: Terms, steps: readonly Step[]) {
  // Fresh statistics as the tables grow, as the service keeps them on PGlite (db/statisticsUpkeep.ts): the
  // replay's plans are then made for the rows written so far (tests/README.md, "How long", session 17).
  await analyzeGrownTables(db);
  await db.query(`UPDATE products SET allocation_order = $2, nsf_fee = 15 WHERE account_id = $1`, [accountId, loanTerms.order]);
  const schedule = buildSchedule({ amount: loanTerms.amount, rate: loanTerms.rate, term: loanTerms.term, frequency: loanTerms.frequency, amortization: loanTerms.amortization, dateFunded: loanTerms.dateFunded } as never);
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO loans (account_id, product_id, name, amount, status, rate, term, frequency, amortization, date_funded)
     VALUES ($1, $2, 'model', $3, 'servicing', $4, $5, $6, $7, $8) RETURNING id`,
    [accountId, productId, loanTerms.amount, loanTerms.rate, loanTerms.term, loanTerms.frequency, loanTerms.amortization, loanTerms.dateFunded],
  );
  const loan = rows[0]!.id;
  await db.query(
    `INSERT INTO schedules (account_id, loan_id, number, due, payment, principal, interest, balance)
     SELECT $1, $2, r.number, r.due, r.payment, r.principal, r.interest, r.balance FROM json_populate_recordset(NULL::schedules, $3::json) r`,
    [accountId, loan, JSON.stringify(schedule.rows)],
  );
  const payments: PaymentRecord[] = [];
  let clock = Date.parse('2027-01-01T00:00:00Z');
  for (const current of steps) {
    if (current.kind === 'pay') {
      const postedAt = new Date((clock += 1000)).toISOString();
      const record = { date: day(loanTerms.dateFunded, current.offsetDays), amount: (current.cents / 100).toFixed(2), type: current.type, postedAt };
      const inserted = await db
        .query<{ id: string }>(`INSERT INTO payments (account_id, loan_id, date, amount, type, posted_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`, [
          accountId, loan, record.date, record.amount, record.type, postedAt,
        ])
        .catch((error: { constraint?: string }) => {
          // R9: a refund above the credit on its day is refused, and nothing is written.
          if (record.type === 'refund' && error.constraint === 'payments_refund_within_credit') return null;
          throw error;
        });
      if (inserted) payments.push({ id: inserted.rows[0]!.id, ...record });
    } else {
      const open = payments.filter((p) => !p.dateReversed);
      if (!open.length) continue;
      const target = open[current.pick % open.length]!;
      const latest = target.date > TODAY ? target.date : TODAY;
      const wanted = day(target.date, current.afterDays);
      const reversed = { ...target, dateReversed: wanted < latest ? wanted : latest, reversalReason: current.nsf ? 'nsf' : 'error' };
      await db.query(`UPDATE payments SET date_reversed = $2, reversal_reason = $3 WHERE account_id = $1 AND id = $4`, [accountId, reversed.dateReversed, reversed.reversalReason, target.id]);
      payments[payments.indexOf(target)] = reversed;
    }
  }
  return { loan, schedule: schedule.rows as readonly ScheduleRow[], payments };
}

async function storedLedger(loan: string) {
  const { rows } = await db.query<Record<string, string | null>>(
    `SELECT status, principal_outstanding::text, interest_due::text, fees_due::text, credit_balance::text, oldest_unpaid_due::text, ledger_as_of::text, amount::text
       FROM loans WHERE account_id = $1 AND id = $2`,
    [accountId, loan],
  );
  return rows[0]!;
}

describe('The database\'s ledger against the model of SPEC §12 (domain/ledger), on generated histories', () => {
  it(`agrees on balances, status and payoffs, and keeps the books, over ${RUNS} histories`, async () => {
    await fc.assert(
      fc.asyncProperty(terms, fc.array(step, { minLength: 1, maxLength: 8 }), fc.array(fc.integer({ min: 0, max: 700 }), { minLength: 2, maxLength: 2 }), async (loanTerms, steps, quoteDays) => {
        const { loan, schedule, payments } = await history(loanTerms, steps);
        const stored = await storedLedger(loan);
        const input = {
          loan: { amount: loanTerms.amount, rate: loanTerms.rate, frequency: loanTerms.frequency, amortization: loanTerms.amortization, dateFunded: loanTerms.dateFunded },
          rows: schedule,
          settings: { allocationOrder: loanTerms.order, nsfFee: '15.00' },
          payments,
          asOf: stored.ledger_as_of!,
          status: 'servicing',
        };
        const model = replayLedger(input);
        const context = JSON.stringify({ loanTerms, steps, payments });
        assert.deepEqual(
          {
            status: stored.status,
            principal_outstanding: stored.principal_outstanding,
            interest_due: stored.interest_due,
            fees_due: stored.fees_due,
            credit_balance: stored.credit_balance,
            oldest_unpaid_due: stored.oldest_unpaid_due,
          },
          {
            status: model.status,
            principal_outstanding: model.balances.principalOutstanding,
            interest_due: model.balances.interestDue,
            fees_due: model.balances.feesDue,
            credit_balance: model.balances.creditBalance,
            oldest_unpaid_due: model.balances.oldestUnpaidDue,
          },
          context,
        );
        for (const offset of quoteDays) {
          const on = day(loanTerms.dateFunded, offset);
          const quoted = (await db.query<{ payoff: string }>(`SELECT greatest(0, (loanql_ledger($1, $2, $3::date)).payoff)::numeric(14, 2)::text AS payoff`, [accountId, loan, on])).rows[0]!.payoff;
          assert.equal(quoted, payoffQuote(input, on).amount, `payoff on ${on}: ${context}`);
        }
        // The books, whatever the rules: each applied payment's lines add up to it; principal
        // allocated plus outstanding is the amount; a second replay changes nothing.
        const lines = await db.query<{ payment_id: string; total: string }>(
          `SELECT payment_id, sum(amount)::text AS total FROM payment_allocations
            WHERE account_id = $1 AND loan_id = $2 AND payment_id IS NOT NULL GROUP BY payment_id`,
          [accountId, loan],
        );
        const applied = payments.filter((p) => !p.dateReversed && p.date <= stored.ledger_as_of!);
        assert.deepEqual(
          new Map(lines.rows.map((row) => [row.payment_id, Number(row.total).toFixed(2)])),
          new Map(applied.map((p) => [p.id, p.amount])),
          context,
        );
        const principal = (await db.query<{ n: string }>(`SELECT coalesce(sum(amount), 0)::text AS n FROM payment_allocations WHERE account_id = $1 AND loan_id = $2 AND component = 'principal'`, [accountId, loan])).rows[0]!.n;
        assert.equal((Number(principal) + Number(stored.principal_outstanding)).toFixed(2), Number(stored.amount).toFixed(2), context);
        await db.query(`SELECT loanql_refresh_next(ARRAY[$1::uuid], ARRAY[$2::uuid])`, [accountId, loan]);
        assert.deepEqual(await storedLedger(loan), stored, 'a second replay changes nothing');
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });
});
