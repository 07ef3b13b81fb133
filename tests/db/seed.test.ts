import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Database } from '../../db/index.js';
import { REFERENCE_DATE, SeedError, seedPortfolio, type SeedSummary } from '../../app/seed/index.js';
import { planPortfolio } from '../../app/seed/generate.js';
import { buildSchedule, nextRowIndex, type Frequency, type Amortization } from '../../domain/schedule.js';
import { openBuiltTestDatabase, type TestDatabase } from '../support/testDatabase.js';

async function createAccount(db: Database, slug: string): Promise<{ accountId: string; adminId: string }> {
  const account = await db.query<{ id: string }>('INSERT INTO accounts (slug, name) VALUES ($1, $2) RETURNING id', [slug, `Demo ${slug}`]);
  const accountId = account.rows[0]?.id as string;
  const admin = await db.query<{ id: string }>(
    'INSERT INTO admins (account_id, email, name, password_hash) VALUES ($1, $2, $3, $4) RETURNING id',
    [accountId, `${slug}-admin@example.com`, 'Demo Admin', 'not-a-real-hash'],
  );
  return { accountId, adminId: admin.rows[0]?.id as string };
}

const SCALE = 0.02;
const SEED = 7;

function cents(money: string): bigint {
  const [whole = '0', fraction = ''] = money.split('.');
  return BigInt(whole) * 100n + BigInt((fraction + '00').slice(0, 2));
}
function money(value: bigint): string {
  return `${value / 100n}.${String(value % 100n).padStart(2, '0')}`;
}
function groupBy<T, K>(items: readonly T[], key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group === undefined) groups.set(k, [item]);
    else group.push(item);
  }
  return groups;
}
function near(actual: number, expected: number, tolerance: number, what: string): void {
  assert.ok(Math.abs(actual - expected) <= tolerance, `${what}: ${actual} is not within ${tolerance} of ${expected}`);
}

/** The day accounts c and d are seeded around. */
const LATER_TODAY = '2031-02-10';

/** What the seeds depend on: the seeder, the schema it writes, and this file (which seeds). */
const SEEDER_SOURCES = ['app', 'domain', 'db', 'tests/db/seed.test.ts'];

/**
 * Accounts a and b seeded alike at the reference date (a's progress recorded), c and d alike at
 * LATER_TODAY: the database every test below reads.
 */
async function seedFour(db: Database) {
  const a = await createAccount(db, 'seed-a');
  const b = await createAccount(db, 'seed-b');
  const progress: { done: number; total: number; stage: string }[] = [];
  const summaryA = await seedPortfolio(db, {
    accountId: a.accountId, scale: SCALE, seed: SEED, adminIds: [a.adminId],
    onProgress: (done, total, stage) => progress.push({ done, total, stage }),
  });
  const summaryB = await seedPortfolio(db, { accountId: b.accountId, scale: SCALE, seed: SEED, adminIds: [b.adminId] });
  const c = await createAccount(db, 'seed-today-c');
  const d = await createAccount(db, 'seed-today-d');
  await seedPortfolio(db, { accountId: c.accountId, scale: SCALE, seed: SEED, adminIds: [c.adminId], today: LATER_TODAY });
  await seedPortfolio(db, { accountId: d.accountId, scale: SCALE, seed: SEED, adminIds: [d.adminId], today: LATER_TODAY });
  return { a, b, c, d, summaryA, summaryB, progress };
}

/**
 * The demo seeder on a real database (PGlite, or PostgreSQL with TEST_DATABASE_URL): two
 * accounts seeded alike at scale 0.02 (and two more alike at a later today, `seedFour`), then
 * checked for counts, proportions, determinism, schedules equal to `buildSchedule`, and
 * `is_next` equal to `nextRowIndex` for every loan.
 */
describe('seedPortfolio', () => {
  let database: TestDatabase;
  let db: Database;
  let a: { accountId: string; adminId: string };
  let b: { accountId: string; adminId: string };
  let summaryA: SeedSummary;
  let summaryB: SeedSummary;
  let progress: { done: number; total: number; stage: string }[];
  let c: { accountId: string; adminId: string };
  let d: { accountId: string; adminId: string };

  const count = async (sql: string, values: unknown[] = [a.accountId]): Promise<number> => {
    const { rows } = await db.query<{ n: string }>(sql, values);
    return Number(rows[0]?.n);
  };

  before(async () => {
    // The four seeds below are this file's subject, and seconds of CPU each: on PGlite they run
    // once per version of the seeder (the key covers app/, domain/, db/ and this file) and are
    // kept as a dump with what they returned (openBuiltTestDatabase); on PostgreSQL every run.
    let built: Awaited<ReturnType<typeof seedFour>>;
    ({ database, built } = await openBuiltTestDatabase(`db/seed: a and b at the reference date, c and d at ${LATER_TODAY} (scale ${SCALE}, seed ${SEED})`, SEEDER_SOURCES, seedFour));
    db = database.db;
    ({ a, b, c, d, summaryA, summaryB, progress } = built);
  });

  after(async () => {
    await database?.close();
  });

  it('creates row counts proportional to the scale', async () => {
    assert.equal(summaryA.loans, 200);
    assert.equal(summaryA.people, 300);
    assert.equal(summaryA.tasks, 600);
    assert.equal(summaryA.comments, 600);
    assert.equal(summaryA.documents, 400);
    assert.equal(summaryA.addresses, 200);
    assert.equal(summaryA.fundingSources, 100);
    near(summaryA.payments, 4000, 40, 'payments');
    assert.ok(summaryA.schedules > 200, `schedules: ${summaryA.schedules}`);
    const tables: [string, number][] = [
      ['loans', summaryA.loans], ['people', summaryA.people], ['payments', summaryA.payments], ['schedules', summaryA.schedules],
      ['tasks', summaryA.tasks], ['comments', summaryA.comments], ['documents', summaryA.documents],
      ['addresses', summaryA.addresses], ['funding_sources', summaryA.fundingSources],
      ['loan_documents', summaryA.documents], ['address_details', summaryA.addresses],
    ];
    for (const [table, expected] of tables) {
      assert.equal(await count(`SELECT count(*) AS n FROM ${table} WHERE account_id = $1`), expected, table);
    }
  });

  it('mixes loan statuses, terms and frequencies in realistic proportions', async () => {
    const { rows } = await db.query<{ status: string; n: string }>('SELECT status, count(*) AS n FROM loans WHERE account_id = $1 GROUP BY status', [a.accountId]);
    const share = (status: string): number => Number(rows.find((row) => row.status === status)?.n ?? 0) / summaryA.loans;
    near(share('servicing'), 0.65, 0.1, 'servicing share');
    near(share('closed'), 0.2, 0.08, 'closed share');
    near(share('lead'), 0.15, 0.08, 'lead share');
    const io = await count(`SELECT count(*) AS n FROM loans WHERE account_id = $1 AND amortization = 'interest_only'`);
    near(io / summaryA.loans, 0.2, 0.1, 'interest-only share');
    const shortTerms = await count(`SELECT count(*) AS n FROM loans WHERE account_id = $1 AND term IN (12, 24, 36, 60)`);
    assert.ok(shortTerms / summaryA.loans > 0.55, `12/24/36/60 share ${shortTerms / summaryA.loans}`);
    assert.ok((await count(`SELECT count(*) AS n FROM loans WHERE account_id = $1 AND term IN (120, 360)`)) > 0);
    const monthly = await count(`SELECT count(*) AS n FROM loans WHERE account_id = $1 AND frequency = 'monthly'`);
    assert.ok(monthly / summaryA.loans > 0.65, `monthly share ${monthly / summaryA.loans}`);
    const outOfRange = await count(
      `SELECT count(*) AS n FROM loans WHERE account_id = $1
         AND (amount NOT BETWEEN 25000 AND 2000000 OR rate NOT BETWEEN 6 AND 15 OR name !~ '^[0-9]+ .+ Loan$')`,
    );
    assert.equal(outOfRange, 0);
    const unfundedWithSchedule = await count(
      `SELECT count(*) AS n FROM loans l WHERE l.account_id = $1 AND l.date_funded IS NULL
         AND EXISTS (SELECT 1 FROM schedules s WHERE s.account_id = l.account_id AND s.loan_id = l.id)`,
    );
    assert.equal(unfundedWithSchedule, 0);
    assert.equal(await count(`SELECT count(*) AS n FROM loans WHERE account_id = $1 AND jsonb_typeof(custom_fields) <> 'object'`), 0);
    const leadsFunded = await count(`SELECT count(*) AS n FROM loans WHERE account_id = $1 AND status = 'lead' AND date_funded IS NOT NULL`);
    assert.equal(leadsFunded, 0);
  });

  it('gives the same loans and payments for the same seed in another account, under other ids', async () => {
    const loans = (accountId: string) =>
      db.query(
        `SELECT name, amount, status, rate, term, frequency, amortization, date_funded, regular_payment, date_maturity, created_at
         FROM loans WHERE account_id = $1 ORDER BY created_at`,
        [accountId],
      );
    const [loansA, loansB] = await Promise.all([loans(a.accountId), loans(b.accountId)]);
    assert.equal(loansA.rows.length, 200);
    assert.deepEqual(loansA.rows, loansB.rows);
    const payments = (accountId: string) =>
      db.query(
        `SELECT l.name, p.date, p.amount, p.type, p.method, p.date_reversed
         FROM payments p JOIN loans l ON l.account_id = p.account_id AND l.id = p.loan_id
         WHERE p.account_id = $1 ORDER BY l.created_at, p.date, p.amount, p.type, p.date_reversed NULLS FIRST`,
        [accountId],
      );
    const [paymentsA, paymentsB] = await Promise.all([payments(a.accountId), payments(b.accountId)]);
    assert.deepEqual(paymentsA.rows, paymentsB.rows);
    assert.deepEqual({ ...summaryB, ms: 0 }, { ...summaryA, ms: 0 });
    const shared = await count(
      'SELECT count(*) AS n FROM loans x JOIN loans y ON x.id = y.id WHERE x.account_id = $1 AND y.account_id = $2',
      [a.accountId, b.accountId],
    );
    assert.equal(shared, 0);
    // A different seed gives a different portfolio.
    const names = (seed: number): string[] =>
      planPortfolio({ accountId: a.accountId, seed, scale: SCALE, adminIds: [], productId: null }).loans.map((loan) => loan.row.name);
    assert.notDeepEqual(names(SEED + 1), names(SEED));
  });

  it('dates the portfolio around the given today: the same seed and today give the same portfolio, next payments fall after it', async () => {
    const today = LATER_TODAY;
    const portfolio = async (accountId: string) => ({
      loans: (await db.query(`SELECT name, amount, status, rate, term, frequency, date_funded::text, date_maturity::text, created_at::text FROM loans WHERE account_id = $1 ORDER BY created_at, name`, [accountId])).rows,
      payments: (await db.query(`SELECT l.name, p.date::text, p.amount, p.type FROM payments p JOIN loans l ON l.account_id = p.account_id AND l.id = p.loan_id WHERE p.account_id = $1 ORDER BY l.created_at, p.date, p.amount, p.type`, [accountId])).rows,
      next: (await db.query(`SELECT l.name, s.due::text FROM schedules s JOIN loans l ON l.account_id = s.account_id AND l.id = s.loan_id WHERE s.account_id = $1 AND s.is_next ORDER BY l.created_at, l.name`, [accountId])).rows,
    });
    const [inC, inD] = await Promise.all([portfolio(c.accountId), portfolio(d.accountId)]);
    assert.deepEqual(inC, inD);
    // Another today moves the dates, not the portfolio: the same loans, their funding shifted. (Their
    // statuses are the ledger's, as of the business date: late fees accrue in the one dated in the past.)
    const atReference = await portfolio(a.accountId);
    assert.deepEqual(inC.loans.map((loan) => [loan.name, loan.amount]), atReference.loans.map((loan) => [loan.name, loan.amount]));
    assert.notDeepEqual(inC.loans.map((loan) => loan.date_funded), atReference.loans.map((loan) => loan.date_funded));
    // Every past event is before today; the next payments are ahead (a few loans are late, as in life).
    assert.equal(await count(`SELECT count(*) AS n FROM payments WHERE account_id = $1 AND date >= $2::date`, [c.accountId, today]), 0);
    assert.equal(await count(`SELECT count(*) AS n FROM loans WHERE account_id = $1 AND created_at >= $2::date`, [c.accountId, today]), 0);
    const dues = inC.next.map((row) => row.due as string);
    assert.ok(dues.length > 50, `servicing loans with a next payment: ${dues.length}`);
    const ahead = dues.filter((due) => due >= today).length;
    assert.ok(ahead / dues.length >= 0.8, `${ahead} of ${dues.length} next payments on or after ${today}`);
    const oldest = dues.reduce((min, due) => (due < min ? due : min));
    assert.ok(oldest >= '2030-02-10', `no next payment is a year overdue (oldest ${oldest})`);
  });

  it('stores each funded loan’s schedule exactly as buildSchedule computes it', async () => {
    const { rows: loans } = await db.query<{
      id: string; amount: string; rate: string; term: number; frequency: Frequency; amortization: Amortization;
      date_funded: string; regular_payment: string; date_maturity: string;
    }>(
      `SELECT id, amount, rate, term, frequency, amortization, date_funded, regular_payment, date_maturity
       FROM loans WHERE account_id = $1 AND date_funded IS NOT NULL ORDER BY created_at`,
      [a.accountId],
    );
    const { rows: schedule } = await db.query<{ loan_id: string; number: number; due: string; payment: string; principal: string; interest: string; balance: string }>(
      // The rows §7 made (the ledger keeps them beside the rows as payoffs and curtailments change them).
      'SELECT loan_id, number, due, scheduled_payment AS payment, scheduled_principal AS principal, scheduled_interest AS interest, scheduled_balance AS balance FROM schedules WHERE account_id = $1 ORDER BY loan_id, number',
      [a.accountId],
    );
    const byLoan = groupBy(schedule, (row) => row.loan_id);
    for (const loan of loans) {
      const expected = buildSchedule({
        amount: loan.amount, rate: loan.rate, term: loan.term, frequency: loan.frequency,
        amortization: loan.amortization, dateFunded: loan.date_funded,
      });
      assert.equal(loan.regular_payment, expected.regularPayment);
      assert.equal(loan.date_maturity, expected.dateMaturity);
      const stored = (byLoan.get(loan.id) ?? []).map(({ loan_id, ...row }) => (void loan_id, row));
      assert.deepEqual(stored, expected.rows.map((row) => ({ ...row })));
    }
  });

  it('keeps is_next equal to nextRowIndex for every seeded loan', async () => {
    const { rows: loans } = await db.query<{ id: string; status: string }>('SELECT id, status FROM loans WHERE account_id = $1', [a.accountId]);
    const { rows: schedule } = await db.query<{ loan_id: string; payment: string; is_next: boolean }>(
      'SELECT loan_id, payment, is_next FROM schedules WHERE account_id = $1 ORDER BY loan_id, due, number',
      [a.accountId],
    );
    // §7's rule over what the ledger applied to the rows (SPEC §12 R1: with fees and payoffs in
    // the history, a payment's money is not all the rows').
    const { rows: payments } = await db.query<{ loan_id: string; amount: string }>(
      `SELECT loan_id, amount FROM payment_allocations WHERE account_id = $1 AND row_number IS NOT NULL AND component IN ('interest', 'principal')`,
      [a.accountId],
    );
    const rowsByLoan = groupBy(schedule, (row) => row.loan_id);
    const paidByLoan = new Map<string, bigint>();
    for (const payment of payments) paidByLoan.set(payment.loan_id, (paidByLoan.get(payment.loan_id) ?? 0n) + cents(payment.amount));
    let withNext = 0;
    let behind = 0;
    for (const loan of loans) {
      const rows = rowsByLoan.get(loan.id) ?? [];
      const expected = nextRowIndex(rows, money(paidByLoan.get(loan.id) ?? 0n), loan.status);
      const actual = rows.findIndex((row) => row.is_next);
      assert.equal(actual, expected, `loan ${loan.id} (${loan.status})`);
      assert.ok(rows.filter((row) => row.is_next).length <= 1);
      if (actual >= 0) withNext++;
      if (actual >= 0 && actual < rows.length - 1 && loan.status === 'servicing') behind++;
    }
    const servicing = loans.filter((loan) => loan.status === 'servicing').length;
    assert.ok(withNext >= servicing * 0.9, `${withNext} of ${servicing} servicing loans have a next row`);
    assert.ok(behind > 0);
  });

  it('dates payments after their due dates and before the reference date, never on leads, ~3 % reversed', async () => {
    assert.equal(
      await count(`SELECT count(*) AS n FROM payments p JOIN loans l ON l.account_id = p.account_id AND l.id = p.loan_id
                   WHERE p.account_id = $1 AND l.status = 'lead'`),
      0,
    );
    assert.equal(await count(`SELECT count(*) AS n FROM payments WHERE account_id = $1 AND (date >= $2 OR date_reversed >= $2)`, [a.accountId, REFERENCE_DATE]), 0);
    assert.equal(await count(`SELECT count(*) AS n FROM payments WHERE account_id = $1 AND date_reversed <= date`), 0);
    assert.equal(
      await count(`SELECT count(*) AS n FROM payments p WHERE p.account_id = $1
                   AND p.date < (SELECT min(s.due) FROM schedules s WHERE s.account_id = p.account_id AND s.loan_id = p.loan_id)`),
      0,
    );
    const reversed = await count(`SELECT count(*) AS n FROM payments WHERE account_id = $1 AND date_reversed IS NOT NULL`);
    near(reversed / summaryA.payments, 0.03, 0.012, 'reversed share');
    const { rows } = await db.query<{ type: string; n: string }>('SELECT type, count(*) AS n FROM payments WHERE account_id = $1 GROUP BY type', [a.accountId]);
    const regular = Number(rows.find((row) => row.type === 'regular')?.n ?? 0);
    assert.ok(regular / summaryA.payments > 0.85, `regular share ${regular / summaryA.payments}`);
    const equalToSchedule = await count(
      `SELECT count(*) AS n FROM payments p WHERE p.account_id = $1 AND p.type = 'regular'
         AND EXISTS (SELECT 1 FROM schedules s WHERE s.account_id = p.account_id AND s.loan_id = p.loan_id AND s.payment = p.amount)`,
    );
    assert.ok(equalToSchedule / regular > 0.75, `regular payments equal to a scheduled payment: ${equalToSchedule / regular}`);
  });

  it('creates unique people with common surnames, companies, investors and borrowers', async () => {
    const smi = await count(`SELECT count(*) AS n FROM people WHERE account_id = $1 AND name ILIKE '%smi%'`);
    assert.ok(smi >= 2 && smi <= summaryA.people * 0.1, `people matching %smi%: ${smi}`);
    const companies = await count(`SELECT count(*) AS n FROM people WHERE account_id = $1 AND entity_type = 'company'`);
    near(companies / summaryA.people, 0.15, 0.07, 'company share');
    const investors = await count(`SELECT count(*) AS n FROM people WHERE account_id = $1 AND is_investor`);
    near(investors / summaryA.people, 0.1, 0.06, 'investor share');
    const individualsWithoutEmail = await count(`SELECT count(*) AS n FROM people WHERE account_id = $1 AND entity_type = 'individual' AND email IS NULL`);
    assert.equal(individualsWithoutEmail, 0);
    const borrows = await count(`SELECT count(*) AS n FROM borrows WHERE account_id = $1`);
    near(borrows / summaryA.loans, 1.5, 0.2, 'borrowers per loan');
    const loansWithoutBorrower = await count(
      `SELECT count(*) AS n FROM loans l WHERE l.account_id = $1 AND NOT EXISTS (SELECT 1 FROM borrows b WHERE b.account_id = l.account_id AND b.loan_id = l.id)`,
    );
    assert.equal(loansWithoutBorrower, 0);
    const guaranteed = await count(`SELECT count(DISTINCT loan_id) AS n FROM guarantees WHERE account_id = $1`);
    near(guaranteed / summaryA.loans, 0.3, 0.1, 'guaranteed share');
    const flagged = await count(
      `SELECT count(*) AS n FROM people p WHERE p.account_id = $1 AND p.is_borrower <> (
         EXISTS (SELECT 1 FROM borrows b WHERE b.account_id = p.account_id AND b.person_id = p.id)
         OR EXISTS (SELECT 1 FROM guarantees g WHERE g.account_id = p.account_id AND g.person_id = p.id))`,
    );
    assert.equal(flagged, 0);
    assert.ok((await count(`SELECT count(*) AS n FROM company_memberships WHERE account_id = $1`)) > 0);
  });

  it('links documents, addresses, valuations, funding sources, tasks and comments sensibly', async () => {
    assert.equal(
      await count(`SELECT count(*) AS n FROM documents d WHERE d.account_id = $1
                   AND NOT EXISTS (SELECT 1 FROM loan_documents x WHERE x.account_id = d.account_id AND x.document_id = d.id)`),
      0,
    );
    const statuses = await count(`SELECT count(DISTINCT status) AS n FROM documents WHERE account_id = $1`);
    assert.equal(statuses, 4);
    const { rows: valuations } = await db.query<{ min: number; max: number; addresses: string }>(
      `SELECT min(n)::int AS min, max(n)::int AS max, count(*) AS addresses FROM (
         SELECT a.id, (SELECT count(*) FROM valuations v WHERE v.account_id = a.account_id AND v.address_id = a.id) AS n
         FROM addresses a WHERE a.account_id = $1) t`,
      [a.accountId],
    );
    assert.equal(valuations[0]?.min, 1);
    assert.ok((valuations[0]?.max ?? 0) <= 3);
    assert.equal(
      await count(`SELECT count(*) AS n FROM funding_sources f JOIN people p ON p.account_id = f.account_id AND p.id = f.person_id
                   WHERE f.account_id = $1 AND NOT p.is_investor`),
      0,
    );
    assert.equal(
      await count(`SELECT count(*) AS n FROM funding_sources f JOIN loans l ON l.account_id = f.account_id AND l.id = f.loan_id
                   WHERE f.account_id = $1 AND l.status = 'lead'`),
      0,
    );
    const completed = await count(`SELECT count(*) AS n FROM tasks WHERE account_id = $1 AND status = 'completed'`);
    near(completed / summaryA.tasks, 0.4, 0.08, 'completed task share');
    assert.equal(await count(`SELECT count(*) AS n FROM comments WHERE account_id = $1 AND admin_id IS DISTINCT FROM $2`, [a.accountId, a.adminId]), 0);
    assert.equal(await count(`SELECT count(*) AS n FROM comments WHERE account_id = $1 AND created_at >= $2::date`, [a.accountId, REFERENCE_DATE]), 0);
  });

  it('reports progress up to the number of rows written', () => {
    assert.ok(progress.length > 5);
    for (let i = 1; i < progress.length; i++) {
      assert.ok((progress[i]?.done ?? 0) >= (progress[i - 1]?.done ?? 0), 'done never decreases');
    }
    const last = progress[progress.length - 1];
    assert.equal(last?.done, last?.total);
    assert.ok(new Set(progress.map((p) => p.stage)).has('payments'));
  });

  it('refuses to seed an account that already has data, and rejects bad options', async () => {
    await assert.rejects(seedPortfolio(db, { accountId: a.accountId, scale: SCALE, seed: 1, adminIds: [] }), SeedError);
    await assert.rejects(seedPortfolio(db, { accountId: a.accountId, scale: 0, seed: 1, adminIds: [] }), SeedError);
    await assert.rejects(seedPortfolio(db, { accountId: 'not-a-uuid', scale: 1, seed: 1, adminIds: [] }), SeedError);
    assert.equal(await count('SELECT count(*) AS n FROM loans WHERE account_id = $1'), summaryA.loans);
  });
});
