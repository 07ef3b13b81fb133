import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Database, Queryable } from '../../db/index.js';
import { buildSchedule, type Frequency, type ScheduleRow } from '../../domain/schedule.js';
import { replayLedger, type PaymentRecord } from '../../domain/ledger/index.js';
import { assessFees } from '../../app/feeJob.js';
import { openEmbeddedTestDatabase, openTestDatabase, testDatabaseKind, type TestDatabase } from '../support/testDatabase.js';

/**
 * Issue 31, Done when 2: the daily fee job in time travel. About 20 loans with generated payment
 * histories (payments of random amounts on random days, some reversed, NSF or not), in two
 * accounts alike: account `daily` runs the job every day for 120 days, account `skipping` skips
 * days 50–59 and then runs once. Every day each loan's stored fees (kind, row, date, amount,
 * paid, waived) and stored delinquency (days past due, bucket) must equal `domain/ledger`, the
 * model written from SPEC §12 alone; running a day twice adds nothing; the skipping account equals
 * the daily one on every day it ran. The clock is the database's `loanql.business_date` (PGlite's
 * one session). Then two connections running the job at once on PostgreSQL (TEST_DATABASE_URL):
 * each loan replayed once, each fee once.
 */
const START = '2026-01-01';
const DAYS = 120;
const SKIPPED = { from: 50, to: 59 };
const LOANS = Number(process.env.FEE_JOB_LOANS ?? 20);
const SEED = 20261126;

const day = (iso: string, days: number): string => new Date(Date.parse(`${iso}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

interface LoanPlan {
  readonly amount: string;
  readonly rate: string;
  readonly term: number;
  readonly frequency: Frequency;
  readonly fundedDay: number;
  readonly events: readonly { readonly day: number; readonly cents: number; readonly reverseAfter: number | null; readonly nsf: boolean }[];
}

const plan: fc.Arbitrary<LoanPlan> = fc.record({
  amount: fc.integer({ min: 1_000, max: 50_000 }).map((d) => `${d}.00`),
  rate: fc.constantFrom('0', '8', '12'),
  term: fc.integer({ min: 2, max: 8 }),
  frequency: fc.constantFrom<Frequency>('monthly', 'biweekly', 'weekly', 'semi_monthly'),
  fundedDay: fc.integer({ min: 0, max: 20 }),
  events: fc.array(
    fc.record({ day: fc.integer({ min: 1, max: DAYS - 1 }), cents: fc.integer({ min: 100, max: 1_500_000 }), reverseAfter: fc.option(fc.integer({ min: 0, max: 20 }), { freq: 5 }), nsf: fc.boolean() }),
    { maxLength: 8 },
  ),
});

interface Loan {
  readonly id: string;
  readonly plan: LoanPlan;
  readonly rows: readonly ScheduleRow[];
  readonly payments: PaymentRecord[];
}

async function makeAccount(db: Database, slug: string): Promise<string> {
  const account = (await db.query<{ id: string }>(`INSERT INTO accounts (slug, name) VALUES ($1, $1) RETURNING id`, [slug])).rows[0]!.id;
  await db.query(`INSERT INTO products (account_id, name, is_default, nsf_fee) VALUES ($1, 'p', true, 15)`, [account]);
  return account;
}

async function makeLoan(db: Queryable, account: string, loanPlan: LoanPlan): Promise<Loan> {
  const dateFunded = day(START, loanPlan.fundedDay);
  const schedule = buildSchedule({ amount: loanPlan.amount, rate: loanPlan.rate, term: loanPlan.term, frequency: loanPlan.frequency, dateFunded });
  const id = (
    await db.query<{ id: string }>(
      `INSERT INTO loans (account_id, name, amount, status, rate, term, frequency, amortization, date_funded) VALUES ($1, 'job', $2, 'servicing', $3, $4, $5, 'amortizing', $6) RETURNING id`,
      [account, loanPlan.amount, loanPlan.rate, loanPlan.term, loanPlan.frequency, dateFunded],
    )
  ).rows[0]!.id;
  await db.query(
    `INSERT INTO schedules (account_id, loan_id, number, due, payment, principal, interest, balance)
     SELECT $1, $2, r.number, r.due, r.payment, r.principal, r.interest, r.balance FROM json_populate_recordset(NULL::schedules, $3::json) r`,
    [account, id, JSON.stringify(schedule.rows)],
  );
  return { id, plan: loanPlan, rows: schedule.rows, payments: [] };
}

/** The writes of `d` (payments dated d, reversals dated d), as a servicer would make them that day. */
async function writeDay(db: Database, account: string, loan: Loan, d: number): Promise<void> {
  for (const [index, event] of loan.plan.events.entries()) {
    if (event.day === d && loan.plan.fundedDay < d) {
      const postedAt = new Date(Date.parse(`${day(START, d)}T12:00:00Z`) + index * 1000).toISOString();
      const record = { date: day(START, d), amount: (event.cents / 100).toFixed(2), type: 'regular' as const, postedAt };
      const inserted = await db.query<{ id: string }>(`INSERT INTO payments (account_id, loan_id, date, amount, type, posted_at) VALUES ($1, $2, $3, $4, 'regular', $5) RETURNING id`, [account, loan.id, record.date, record.amount, postedAt]);
      loan.payments[index] = { id: inserted.rows[0]!.id, ...record };
    }
    const posted = loan.payments[index];
    if (posted && event.reverseAfter !== null && event.day + event.reverseAfter === d && !posted.dateReversed) {
      await db.query(`UPDATE payments SET date_reversed = $3, reversal_reason = $4 WHERE account_id = $1 AND id = $2`, [account, posted.id, day(START, d), event.nsf ? 'nsf' : 'error']);
      loan.payments[index] = { ...posted, dateReversed: day(START, d), reversalReason: event.nsf ? 'nsf' : 'error' };
    }
  }
}

/** The stored fees and delinquency of an account's loans, keyed by loan id. */
async function stored(db: Database, account: string): Promise<Map<string, { fees: string[]; dpd: number; bucket: string }>> {
  const { rows } = await db.query<{ id: string; dpd: number; bucket: string; fees: string[] }>(
    `SELECT l.id, l.days_past_due AS dpd, l.delinquency_bucket AS bucket,
            coalesce((SELECT array_agg(concat_ws(' ', f.kind, f.row_number, f.date, f.amount, f.paid, f.waived) ORDER BY f.date, f.kind, f.row_number)
                        FROM fees f WHERE f.account_id = l.account_id AND f.loan_id = l.id), '{}') AS fees
       FROM loans l WHERE l.account_id = $1`,
    [account],
  );
  return new Map(rows.map((r) => [r.id, { fees: r.fees, dpd: r.dpd, bucket: r.bucket }]));
}

function modelOf(loan: Loan, asOf: string): { fees: string[]; dpd: number; bucket: string } {
  const result = replayLedger({
    loan: { amount: loan.plan.amount, rate: loan.plan.rate, frequency: loan.plan.frequency, amortization: 'amortizing', dateFunded: day(START, loan.plan.fundedDay) },
    rows: loan.rows,
    settings: { nsfFee: '15.00' },
    payments: loan.payments.filter(Boolean),
    asOf,
    status: 'servicing',
  });
  const servicing = result.status === 'servicing';
  const fees = [...result.fees]
    .sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : (a.rowNumber ?? 0) - (b.rowNumber ?? 0)))
    .map((f) => [f.kind, f.rowNumber ?? '', f.date, f.amount, f.paid, f.waived].filter((x) => x !== '').join(' '));
  return { fees, dpd: servicing ? result.balances.daysPastDue : 0, bucket: servicing ? result.balances.delinquencyBucket : 'current' };
}

describe('The daily fee job in time travel (issue 31)', () => {
  let embedded: TestDatabase;
  let db: Database;
  before(async () => {
    embedded = await openEmbeddedTestDatabase();
    db = embedded.db;
  });
  after(() => embedded?.close());

  it('refuses an as-of day that is not on the calendar (2026-02-30 is not March 2), before touching the database', async () => {
    for (const asOf of ['2026-02-30', '2026-13-01', '2026-2-3', '2026-04-31']) await assert.rejects(assessFees(db, { asOf }), new RegExp(`--as-of: "${asOf}" is not a date`), asOf);
  });

  it(`${DAYS} days over ${LOANS} generated loans: fees and buckets equal the model every day; a day twice adds nothing; 10 days skipped then one run equals running daily`, async () => {
    const plans = fc.sample(plan, { numRuns: LOANS, seed: SEED });
    await db.query(`SELECT set_config('loanql.business_date', $1, false)`, [START]);
    const daily = await makeAccount(db, 'daily');
    const skipping = await makeAccount(db, 'skipping');
    const loansDaily: Loan[] = [];
    const loansSkipping: Loan[] = [];
    for (const loanPlan of plans) {
      loansDaily.push(await makeLoan(db, daily, loanPlan));
      loansSkipping.push(await makeLoan(db, skipping, loanPlan));
    }
    let feesSeen = 0;
    const bucketsSeen = new Set<string>();
    for (let d = 0; d < DAYS; d++) {
      const today = day(START, d);
      await db.query(`SELECT set_config('loanql.business_date', $1, false)`, [today]);
      for (const loan of loansDaily) await writeDay(db, daily, loan, d);
      for (const loan of loansSkipping) await writeDay(db, skipping, loan, d);
      const [run] = await assessFees(db, { accountSlug: 'daily' });
      assert.deepEqual(run!.days, [today]);
      if (d % 17 === 0) {
        const before = await stored(db, daily);
        const [twice] = await assessFees(db, { accountSlug: 'daily' });
        assert.deepEqual([twice!.days, twice!.feesAssessed], [[], 0], 'a day already done');
        assert.deepEqual(await stored(db, daily), before, 'running a day twice adds nothing');
      }
      const skipped = d >= SKIPPED.from && d <= SKIPPED.to;
      if (!skipped) {
        const [caught] = await assessFees(db, { accountSlug: 'skipping' });
        assert.equal(caught!.days.length, d === SKIPPED.to + 1 ? SKIPPED.to - SKIPPED.from + 2 : 1);
      }
      const storedDaily = await stored(db, daily);
      const storedSkipping = await stored(db, skipping);
      for (const [i, loan] of loansDaily.entries()) {
        const model = modelOf(loan, today);
        const got = storedDaily.get(loan.id)!;
        assert.deepEqual(got, model, `loan ${i} on ${today}: ${JSON.stringify({ plan: loan.plan, payments: loan.payments })}`);
        if (!skipped) assert.deepEqual(storedSkipping.get(loansSkipping[i]!.id), got, `the skipping account's loan ${i} on ${today}`);
        feesSeen = Math.max(feesSeen, got.fees.length);
        bucketsSeen.add(got.bucket);
      }
    }
    // The histories are not trivial: fees were assessed and loans went through several buckets.
    assert.ok(feesSeen >= 2, `fees seen: ${feesSeen}`);
    assert.ok(bucketsSeen.size >= 3, `buckets seen: ${[...bucketsSeen].join(', ')}`);
    const days = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ledger_job_days d JOIN accounts a ON a.id = d.account_id WHERE a.slug = 'skipping'`);
    assert.equal(days.rows[0]!.n, DAYS, 'every day is recorded, the skipped ones by the catch-up');
  });
});

describe(`Two connections running the job at once (PostgreSQL; here: ${testDatabaseKind})`, () => {
  let database: TestDatabase | undefined;
  after(() => database?.close());

  it('assess each fee once and replay each loan once', async (t) => {
    if (testDatabaseKind !== 'postgres') {
      console.warn('\n*** SKIPPED: two processes running the fee job at once needs PostgreSQL: set TEST_DATABASE_URL (see .ci/postgres.sh) ***\n');
      t.skip('needs TEST_DATABASE_URL (PostgreSQL)');
      return;
    }
    database = await openTestDatabase();
    const db = database.db;
    const account = await makeAccount(db, 'concurrent');
    // 1,200 loans funded in the past, nothing paid: every row past its grace has its late fee.
    // Written with the business date at START, so their stored ledgers are of that day (no fee
    // yet) and every loan has rows falling due since: the job replays each (migration 0022).
    await db.query(`SELECT set_config('loanql.capture_events', 'off', false)`);
    const plans = fc.sample(plan, { numRuns: 1200, seed: SEED + 1 });
    const loans: Loan[] = [];
    await db.transaction(async (tx) => {
      await tx.query(`SELECT set_config('loanql.business_date', $1, true)`, [START]);
      for (const loanPlan of plans) loans.push(await makeLoan(tx, account, { ...loanPlan, events: [] }));
    });
    const today = (await db.query<{ d: string }>(`SELECT loanql_business_date($1)::text AS d`, [account])).rows[0]!.d;
    const runs = await Promise.all([assessFees(db, { accountSlug: 'concurrent' }), assessFees(db, { accountSlug: 'concurrent' })]);
    const replayed = runs.reduce((sum, [run]) => sum + (run?.loansReplayed ?? 0), 0);
    assert.equal(replayed, loans.length, 'each loan replayed by one of the two');
    assert.equal(runs.reduce((sum, [run]) => sum + (run?.loansForwarded ?? 0), 0), 0, 'none brought forward: a late fee falls due on each');
    const assessed = runs.reduce((sum, [run]) => sum + (run?.feesAssessed ?? 0), 0);
    const expected = loans.reduce((sum, loan) => sum + modelOf(loan, today).fees.length, 0);
    const fees = await db.query<{ n: number; distinct_rows: number }>(`SELECT count(*)::int AS n, count(DISTINCT (loan_id, row_number))::int AS distinct_rows FROM fees WHERE account_id = $1`, [account]);
    assert.equal(fees.rows[0]!.n, expected);
    assert.equal(fees.rows[0]!.distinct_rows, expected);
    assert.equal(assessed, expected, 'the two runs together report each fee once');
    const day = await db.query<{ loans_replayed: number; fees_assessed: number }>(`SELECT loans_replayed, fees_assessed FROM ledger_job_days WHERE account_id = $1`, [account]);
    assert.deepEqual(day.rows, [{ loans_replayed: loans.length, fees_assessed: expected }]);
  });
});

describe(`A loan another transaction holds while the job runs (PostgreSQL; here: ${testDatabaseKind})`, () => {
  let database: TestDatabase | undefined;
  after(() => database?.close());

  it('is assessed by the next run the same day when that transaction rolls back, once', async (t) => {
    if (testDatabaseKind !== 'postgres') {
      console.warn('\n*** SKIPPED: a row lock held by another transaction needs PostgreSQL: set TEST_DATABASE_URL (see .ci/postgres.sh) ***\n');
      t.skip('needs TEST_DATABASE_URL (PostgreSQL)');
      return;
    }
    database = await openTestDatabase();
    const db = database.db;
    const account = await makeAccount(db, 'held');
    // Two loans funded on START, nothing paid: each row past its grace has its late fee today.
    const loanPlan: LoanPlan = { amount: '12000.00', rate: '12', term: 6, frequency: 'monthly', fundedDay: 0, events: [] };
    const [free, held] = await db.transaction(async (tx) => {
      await tx.query(`SELECT set_config('loanql.business_date', $1, true)`, [START]);
      return [await makeLoan(tx, account, loanPlan), await makeLoan(tx, account, loanPlan)];
    });
    const today = (await db.query<{ d: string }>(`SELECT loanql_business_date($1)::text AS d`, [account])).rows[0]!.d;
    const expected = modelOf(held!, today).fees;
    assert.ok(expected.length >= 2, `late fees fall due by ${today}: ${expected.join('; ')}`);
    // A writer locks the held loan, waits while the job runs, then rolls back.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const writer = db
      .transaction(async (tx) => {
        await tx.query(`SELECT id FROM loans WHERE account_id = $1 AND id = $2 FOR NO KEY UPDATE`, [account, held!.id]);
        locked();
        await released;
        throw new Error('rolled back');
      })
      .catch((error: unknown) => assert.equal((error as Error).message, 'rolled back'));
    await isLocked;
    const [first] = await assessFees(db, { accountSlug: 'held' });
    release();
    await writer;
    assert.equal(first!.loansReplayed, 1, 'the free loan only');
    assert.equal(first!.loansSkipped, 1, 'the held loan was skipped');
    assert.deepEqual(first!.days, [], 'the day is not done while a loan is behind');
    assert.deepEqual((await stored(db, account)).get(free!.id)!.fees, modelOf(free!, today).fees);
    const [second] = await assessFees(db, { accountSlug: 'held' });
    assert.deepEqual([second!.days, second!.loansReplayed, second!.loansSkipped, second!.feesAssessed], [[today], 1, 0, expected.length], 'the second run the same day assesses the held loan');
    const [third] = await assessFees(db, { accountSlug: 'held' });
    assert.deepEqual([third!.days, third!.loansReplayed, third!.feesAssessed], [[], 0, 0], 'then the day is done');
    const after = await stored(db, account);
    assert.deepEqual(after.get(held!.id), modelOf(held!, today), 'the held loan has its fees and delinquency of the day, each fee once');
    const day = await db.query<{ loans_replayed: number; fees_assessed: number; complete: boolean }>(`SELECT loans_replayed, fees_assessed, complete FROM ledger_job_days WHERE account_id = $1`, [account]);
    assert.deepEqual(day.rows, [{ loans_replayed: 2, fees_assessed: 2 * expected.length, complete: true }]);
  });
});
