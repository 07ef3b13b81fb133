import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { migrate, openPostgresDatabase, type Database } from '../../db/index.js';
import { buildSchedule, type Frequency } from '../../domain/schedule.js';
import { assessFees } from '../../app/feeJob.js';
import { verifyLedgers } from '../../app/ledgerVerify.js';
import { createServerDatabase, openTestDatabase, testDatabaseKind, type TestDatabase } from '../support/testDatabase.js';

/**
 * Issue 31: the daily job brings most loans to the day without a replay (migration 0022). Here,
 * over generated histories — payments dated ahead of the day they are posted, reversals (NSF or
 * not), curtailments and fee payments, manual fees (some dated ahead), waivers, two products (one
 * with an arrears tolerance, a short grace and a fixed late fee; the other the defaults) — the job
 * runs day by day with gaps (a catch-up after a few days missed). After every run, for every loan:
 * `loanql ledger verify` finds nothing, and every stored value (the loan's balances, status,
 * `ledger_as_of`, days past due, bucket, arrears date; its schedule rows, fees and allocation
 * lines) equals what a full replay of every loan stores (replayed in a transaction that is then
 * rolled back). PGlite, or PostgreSQL with TEST_DATABASE_URL (one session: the clock is the
 * session's `loanql.business_date`).
 */
const START = '2026-02-01';
const DAYS = 110;
/** Days the job does not run (the next run catches up). */
const MISSED = new Set([20, 21, 22, 23, 24, 25, 26, 60, 61, 95]);
const LOANS = Number(process.env.FEE_JOB_FORWARD_LOANS ?? 24);
const SEED = 31022;

const day = (iso: string, days: number): string => new Date(Date.parse(`${iso}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

type Event =
  | { readonly kind: 'payment'; readonly day: number; readonly ahead: number; readonly cents: number; readonly type: 'regular' | 'principal' | 'fee'; readonly reverseAfter: number | null; readonly nsf: boolean }
  | { readonly kind: 'fee'; readonly day: number; readonly ahead: number; readonly cents: number }
  | { readonly kind: 'waiver'; readonly day: number };

interface LoanPlan {
  readonly amount: string;
  readonly rate: string;
  readonly term: number;
  readonly frequency: Frequency;
  readonly fundedDay: number;
  readonly tolerant: boolean;
  readonly events: readonly Event[];
}

const event: fc.Arbitrary<Event> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('payment' as const),
      day: fc.integer({ min: 1, max: DAYS - 1 }),
      // a payment dated ahead of the day it is posted (a third of them)
      ahead: fc.oneof({ weight: 2, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 12 }) }),
      cents: fc.integer({ min: 100, max: 1_200_000 }),
      type: fc.constantFrom('regular' as const, 'regular' as const, 'regular' as const, 'principal' as const, 'fee' as const),
      reverseAfter: fc.option(fc.integer({ min: 0, max: 15 }), { freq: 5 }),
      nsf: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('fee' as const), day: fc.integer({ min: 1, max: DAYS - 1 }), ahead: fc.constantFrom(0, 0, 3, 9), cents: fc.integer({ min: 500, max: 9_000 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('waiver' as const), day: fc.integer({ min: 1, max: DAYS - 1 }) }) },
);

const plan: fc.Arbitrary<LoanPlan> = fc.record({
  amount: fc.integer({ min: 1_000, max: 40_000 }).map((d) => `${d}.00`),
  rate: fc.constantFrom('0', '7.5', '12'),
  term: fc.integer({ min: 2, max: 9 }),
  frequency: fc.constantFrom<Frequency>('monthly', 'biweekly', 'weekly', 'semi_monthly'),
  fundedDay: fc.integer({ min: 0, max: 15 }),
  tolerant: fc.boolean(),
  events: fc.array(event, { maxLength: 9 }),
});

/** One session, so that the session's `loanql.business_date` is every statement's clock. */
async function openOneSession(): Promise<TestDatabase> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) return openTestDatabase();
  const created = await createServerDatabase(url);
  const db = openPostgresDatabase({ connectionString: created.url, maxConnections: 1 });
  await migrate(db);
  return {
    db,
    async close() {
      await db.close();
      await created.drop();
    },
  };
}

async function setDay(db: Database, iso: string): Promise<void> {
  await db.query(`SELECT set_config('loanql.business_date', $1, false)`, [iso]);
}

/** Everything the replay stores for the account's loans, one text per value, keyed by what it is. */
async function storedState(db: Database | { query: Database['query'] }, account: string): Promise<Map<string, string>> {
  const { rows } = await db.query<{ k: string; v: string }>(
    `SELECT 'loan ' || l.id AS k,
            concat_ws(' | ', l.principal_outstanding, l.interest_due, l.fees_due, l.credit_balance, l.oldest_unpaid_due, l.status, l.date_closed,
                      l.ledger_as_of, l.days_past_due, l.delinquency_bucket, l.arrears_since) AS v
       FROM loans l WHERE l.account_id = $1
     UNION ALL
     SELECT 'row ' || s.loan_id || ' ' || s.number, concat_ws(' | ', s.due, s.interest, s.principal, s.payment, s.balance, s.interest_paid, s.principal_paid, s.is_next)
       FROM schedules s WHERE s.account_id = $1
     UNION ALL
     SELECT 'fee ' || f.id, concat_ws(' | ', f.loan_id, f.kind, f.row_number, f.date, f.amount, f.paid, f.waived, f.waived_on)
       FROM fees f WHERE f.account_id = $1
     UNION ALL
     SELECT 'line ' || a.loan_id || ' ' || a.position, concat_ws(' | ', a.payment_id, a.row_number, a.fee_id, a.component, a.amount)
       FROM payment_allocations a WHERE a.account_id = $1`,
    [account],
  );
  return new Map(rows.map((row) => [row.k, row.v]));
}

class RolledBack extends Error {}

/** The stored state after replaying every loan of the account as of the day (rolled back). */
async function replayedState(db: Database, account: string): Promise<Map<string, string>> {
  let state: Map<string, string> | undefined;
  await db
    .transaction(async (tx) => {
      await tx.query(
        `SELECT loanql_refresh_next(array_agg(account_id ORDER BY id), array_agg(id ORDER BY id)) FROM loans WHERE account_id = $1`,
        [account],
      );
      state = await storedState(tx, account);
      throw new RolledBack();
    })
    .catch((error: unknown) => {
      if (!(error instanceof RolledBack)) throw error;
    });
  return state!;
}

describe(`The fee job's loans brought forward without a replay equal a full replay (${testDatabaseKind})`, () => {
  let database: TestDatabase;
  before(async () => {
    database = await openOneSession();
  });
  after(() => database?.close());

  it(`${DAYS} days over ${LOANS} generated loans, with days missed: verify finds nothing and every stored value equals a replay's, after every run`, async () => {
    const db = database.db;
    await setDay(db, START);
    const account = (await db.query<{ id: string }>(`INSERT INTO accounts (slug, name) VALUES ('forward', 'forward') RETURNING id`)).rows[0]!.id;
    await db.query(`INSERT INTO products (account_id, name, is_default, nsf_fee) VALUES ($1, 'standard', true, 15)`, [account]);
    const tolerant = (
      await db.query<{ id: string }>(
        `INSERT INTO products (account_id, name, is_default, nsf_fee, arrears_tolerance, late_fee_grace_days, late_fee_percent, late_fee_fixed, allocation_order)
         VALUES ($1, 'tolerant', false, 0, 25.00, 3, NULL, 20.00, 'fees_interest_principal') RETURNING id`,
        [account],
      )
    ).rows[0]!.id;

    const plans = fc.sample(plan, { numRuns: LOANS, seed: SEED });
    const loans: { id: string; plan: LoanPlan; payments: (string | undefined)[] }[] = [];
    for (const loanPlan of plans) {
      const dateFunded = day(START, loanPlan.fundedDay);
      const schedule = buildSchedule({ amount: loanPlan.amount, rate: loanPlan.rate, term: loanPlan.term, frequency: loanPlan.frequency, dateFunded });
      const id = (
        await db.query<{ id: string }>(
          `INSERT INTO loans (account_id, name, amount, status, rate, term, frequency, amortization, date_funded, product_id)
           VALUES ($1, 'forward', $2, 'servicing', $3, $4, $5, 'amortizing', $6, $7) RETURNING id`,
          [account, loanPlan.amount, loanPlan.rate, loanPlan.term, loanPlan.frequency, dateFunded, loanPlan.tolerant ? tolerant : null],
        )
      ).rows[0]!.id;
      await db.query(
        `INSERT INTO schedules (account_id, loan_id, number, due, payment, principal, interest, balance)
         SELECT $1, $2, r.number, r.due, r.payment, r.principal, r.interest, r.balance FROM json_populate_recordset(NULL::schedules, $3::json) r`,
        [account, id, JSON.stringify(schedule.rows)],
      );
      loans.push({ id, plan: loanPlan, payments: [] });
    }

    let replayed = 0;
    let forwarded = 0;
    let runs = 0;
    const written = { payments: 0, ahead: 0, reversals: 0, fees: 0, feesAhead: 0, waivers: 0 };
    let lateLoansForwarded = 0;
    for (let d = 0; d < DAYS; d++) {
      const today = day(START, d);
      await setDay(db, today);
      // The day's writes, as a servicer would make them (each replays its loan as of the day).
      for (const loan of loans) {
        for (const [index, e] of loan.plan.events.entries()) {
          if (loan.plan.fundedDay >= d) continue;
          if (e.kind === 'payment' && e.day === d) {
            const inserted = await db.query<{ id: string }>(
              `INSERT INTO payments (account_id, loan_id, date, amount, type, posted_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
              [account, loan.id, day(today, e.ahead), (e.cents / 100).toFixed(2), e.type, `${today}T12:00:0${index}Z`],
            );
            loan.payments[index] = inserted.rows[0]!.id;
            written.payments++;
            if (e.ahead > 0) written.ahead++;
          }
          if (e.kind === 'payment' && e.reverseAfter !== null && e.day + e.reverseAfter === d && loan.payments[index]) {
            await db.query(`UPDATE payments SET date_reversed = greatest(date, $3::date), reversal_reason = $4 WHERE account_id = $1 AND id = $2`, [account, loan.payments[index], today, e.nsf ? 'nsf' : 'error']);
            written.reversals++;
          }
          if (e.kind === 'fee' && e.day === d) {
            await db.query(`INSERT INTO fees (account_id, loan_id, kind, amount, date, description) VALUES ($1, $2, 'manual', $3, $4, 'generated')`, [
              account,
              loan.id,
              (e.cents / 100).toFixed(2),
              day(today, e.ahead),
            ]);
            written.fees++;
            if (e.ahead > 0) written.feesAhead++;
          }
          if (e.kind === 'waiver' && e.day === d) {
            // the loan's oldest fee dated by today, not waived, with something unpaid (as the stored ledger says)
            const fee = await db.query<{ id: string }>(
              `SELECT f.id FROM fees f WHERE f.account_id = $1 AND f.loan_id = $2 AND f.date <= $3 AND f.waived_on IS NULL AND f.amount > f.paid
                  AND NOT EXISTS (SELECT 1 FROM fee_waivers w WHERE w.account_id = f.account_id AND w.fee_id = f.id)
                ORDER BY f.date, f.id LIMIT 1`,
              [account, loan.id, today],
            );
            if (fee.rows[0]) {
              await db.query(`INSERT INTO fee_waivers (account_id, fee_id, waived_by, reason) VALUES ($1, $2, 'test', 'generated')`, [account, fee.rows[0].id]);
              written.waivers++;
            }
          }
        }
      }
      if (MISSED.has(d)) continue;
      const lateBefore = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM loans WHERE account_id = $1 AND days_past_due > 0 AND ledger_as_of < $2`, [account, today]);
      const [run] = await assessFees(db, { accountSlug: 'forward' });
      runs++;
      replayed += run!.loansReplayed;
      forwarded += run!.loansForwarded;
      if (run!.loansForwarded > 0) lateLoansForwarded += lateBefore.rows[0]!.n;

      const verified = await verifyLedgers(db, { accountId: account });
      assert.deepEqual(verified.differing, [], `verify on ${today}`);
      const stored = await storedState(db, account);
      const replay = await replayedState(db, account);
      for (const [key, value] of replay) assert.equal(stored.get(key), value, `${key} on ${today} (stored, then a full replay's)`);
      assert.equal(stored.size, replay.size, `the same rows, fees and lines on ${today}`);
      const asOf = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM loans WHERE account_id = $1 AND status = 'servicing' AND ledger_as_of < $2`, [account, today]);
      assert.equal(asOf.rows[0]!.n, 0, `every serviced loan is at ${today}`);
    }
    // The histories exercised what the job must get right, and most loans were brought forward.
    assert.equal(runs, DAYS - MISSED.size);
    assert.ok(forwarded > 2 * replayed, `brought forward ${forwarded}, replayed ${replayed}`);
    assert.ok(replayed > 20, `replayed ${replayed}`);
    assert.ok(lateLoansForwarded > 10, `late loans at a run that brought loans forward: ${lateLoansForwarded}`);
    for (const [what, n] of Object.entries(written)) assert.ok(n >= 3, `${what}: ${n}`);
    const buckets = await db.query<{ n: number }>(`SELECT count(DISTINCT delinquency_bucket)::int AS n FROM loans WHERE account_id = $1`, [account]);
    assert.ok(buckets.rows[0]!.n >= 2, 'loans in several buckets');
  });
});
