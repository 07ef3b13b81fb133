import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAccount } from '../../app/accounts.js';
import { createLoan } from '../../app/loanWrites.js';
import { verifyLedgers } from '../../app/ledgerVerify.js';
import { databaseSettingsFromEnv, migrate, openCommandDatabase, type Database } from '../../db/index.js';
import { buildSchedule, type Frequency } from '../../domain/schedule.js';
import * as m0001 from '../../db/migrations/0001_schema.js';
import * as m0002 from '../../db/migrations/0002_is_next_on_every_write.js';
import * as m0003 from '../../db/migrations/0003_dashboard.js';
import * as m0004 from '../../db/migrations/0004_loan_derived_fields.js';
import * as m0005 from '../../db/migrations/0005_servicing_writes.js';
import * as m0006 from '../../db/migrations/0006_webhooks.js';
import * as m0007 from '../../db/migrations/0007_key_roles.js';
import * as m0008 from '../../db/migrations/0008_event_outbox.js';
import * as m0009 from '../../db/migrations/0009_custom_fields_gin.js';
import * as m0010 from '../../db/migrations/0010_outbox_json.js';
import * as m0011 from '../../db/migrations/0011_idempotency_scope.js';
import { seedAccount } from '../support/seededService.js';
import { copyBuiltDataDir, createServerDatabase, openEmptyTestDatabase } from '../support/testDatabase.js';
import { assertBuilt, runCli, type ProcessResult } from '../support/processes.js';
import { installTestClock, setTestClock } from '../support/testClock.js';

/**
 * `loanql ledger verify` and `loanql ledger rebuild` as processes (issue 29, Done-when 4): a
 * seeded account verifies with 0 differences; a stored value changed by hand (an allocation
 * line's amount, a loan's principal outstanding, in two accounts) is reported for exactly its
 * loan, with exit status 1; rebuild puts it right and verify is 0 again. Then migration 0012 on a
 * database from before it: every payment kept, and the ledger it derived is a fresh replay's.
 * On the embedded database (DATA_DIR), and on PostgreSQL with TEST_DATABASE_URL.
 */
describe('loanql ledger verify / rebuild', { timeout: 300_000 }, () => {
  let env: Record<string, string>;
  let cleanUp: () => Promise<void> = async () => {};
  let workDir: string;
  const cli = (...args: string[]): Promise<ProcessResult> => runCli(args, env, workDir);
  let loansInAcme = 0;
  const corrupt = { allocationLoan: '', balanceLoan: '', otherLoan: '' };

  /** Works on the database in this process; closed before any CLI runs (the embedded one has one user at a time). */
  async function withDatabase<T>(work: (db: Database) => Promise<T>): Promise<T> {
    const opened = await openCommandDatabase(databaseSettingsFromEnv(env));
    try {
      return await work(opened.database);
    } finally {
      await opened.close();
    }
  }

  /** The loans named on verify's `loan <id> …` lines. */
  const reported = (stdout: string): string[] => [...stdout.matchAll(/^loan ([0-9a-f-]{36})/gm)].map((m) => m[1]!).sort();

  before(async () => {
    assertBuilt();
    workDir = mkdtempSync(join(tmpdir(), 'loanql-ledger-'));
    // The business date is pinned for every connection (the CLI processes too): values that
    // depend on the day (interest due, late fees) were stored as of it, and a run that crosses
    // midnight must not see them fall due between a rebuild and the verify after it.
    const today = new Date().toISOString().slice(0, 10);
    /** The test data: a seeded account, and a second account with one serviced loan and its payments. */
    const fill = async (db: Database): Promise<{ loansInAcme: number; otherLoan: string }> => {
      await installTestClock(db);
      await setTestClock(db, today);
      const seeded = await seedAccount(db, { slug: 'acme', scale: 0.005 });
      const other = await createAccount(db, 'other');
      const otherLoan = (await createLoan(db, other.id, { Name: 'other account', Amount: 100000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' })).id;
      await db.query(`INSERT INTO payments (account_id, loan_id, date, amount) VALUES ($1, $2, '2026-02-15', 8884.88), ($1, $2, '2026-03-15', 9000.00)`, [other.id, otherLoan]);
      return { loansInAcme: seeded.summary.loans, otherLoan };
    };
    let filled: { loansInAcme: number; otherLoan: string };
    if (process.env.TEST_DATABASE_URL) {
      const created = await createServerDatabase(process.env.TEST_DATABASE_URL);
      env = { DATABASE_URL: created.url };
      cleanUp = () => created.drop();
      filled = await withDatabase(async (db) => {
        await migrate(db);
        return fill(db);
      });
    } else {
      env = { DATA_DIR: join(workDir, 'data') };
      // Seeding costs seconds of CPU: the filled data directory is built once (per schema,
      // seeder sources and day, since the seed dates around today) and copied for each run.
      filled = await copyBuiltDataDir(env.DATA_DIR!, `loanql ledger verify: acme at 0.005 and one other loan, ${today}`, ['app', 'domain', 'db', 'tests/support/seededService.ts', 'tests/cli/ledger.test.ts'], fill);
    }
    loansInAcme = filled.loansInAcme;
    corrupt.otherLoan = filled.otherLoan;
  });

  after(async () => {
    await cleanUp();
    rmSync(workDir, { recursive: true, force: true });
  });

  it('is listed by loanql help', async () => {
    const help = await cli('help');
    assert.equal(help.code, 0);
    assert.match(help.stdout, /ledger verify \[--account SLUG\]/);
    assert.match(help.stdout, /ledger rebuild \[--account SLUG\]/);
  });

  it('reports 0 differences on a seeded account and on every account, exit 0', async () => {
    const acme = await cli('ledger', 'verify', '--account', 'acme');
    assert.equal(acme.code, 0, acme.stdout + acme.stderr);
    assert.equal(acme.stdout, `${loansInAcme} loans checked (account acme): 0 differences\n`);
    const all = await cli('ledger', 'verify');
    assert.equal(all.code, 0, all.stdout + all.stderr);
    assert.equal(all.stdout, `${loansInAcme + 1} loans checked (all accounts): 0 differences\n`);
  });

  it('refuses an unknown account with exit status 2', async () => {
    const result = await cli('ledger', 'verify', '--account', 'nobody');
    assert.equal(result.code, 2);
    assert.match(result.stderr, /nobody/);
  });

  it('reports exactly the loans whose stored values were changed by hand, with the values, exit 1', async () => {
    const stored = await withDatabase(async (db) => {
      const line = (
        await db.query<{ id: string; loan_id: string; position: number; amount: string }>(
          `SELECT pa.id, pa.loan_id, pa.position, pa.amount::text AS amount FROM payment_allocations pa JOIN accounts a ON a.id = pa.account_id
            WHERE a.slug = 'acme' AND pa.component = 'interest' ORDER BY pa.loan_id, pa.position LIMIT 1`,
        )
      ).rows[0]!;
      await db.query(`UPDATE payment_allocations SET amount = amount + 0.01 WHERE id = $1`, [line.id]);
      const loan = (
        await db.query<{ id: string; principal_outstanding: string }>(
          `SELECT l.id, l.principal_outstanding::text AS principal_outstanding FROM loans l JOIN accounts a ON a.id = l.account_id
            WHERE a.slug = 'acme' AND l.status = 'servicing' AND l.id <> $1 ORDER BY l.id DESC LIMIT 1`,
          [line.loan_id],
        )
      ).rows[0]!;
      await db.query(`UPDATE loans SET principal_outstanding = principal_outstanding - 100 WHERE id = $1`, [loan.id]);
      await db.query(`UPDATE loans SET credit_balance = 5 WHERE id = $1`, [corrupt.otherLoan]);
      corrupt.allocationLoan = line.loan_id;
      corrupt.balanceLoan = loan.id;
      return { line, loan };
    });

    const acme = await cli('ledger', 'verify', '--account', 'acme');
    assert.equal(acme.code, 1, acme.stdout + acme.stderr);
    assert.deepEqual(reported(acme.stdout), [corrupt.allocationLoan, corrupt.balanceLoan].sort());
    const cents = (text: string): string => (Math.round(Number(text) * 100) / 100).toFixed(2);
    assert.match(
      acme.stdout,
      new RegExp(`^  allocation line ${stored.line.position}: stored interest ${cents(String(Number(stored.line.amount) + 0.01)).replace('.', '\\.')} .*, replay interest ${stored.line.amount.replace('.', '\\.')} `, 'm'),
    );
    const po = stored.loan.principal_outstanding;
    assert.match(acme.stdout, new RegExp(`^  principal_outstanding: stored ${cents(String(Number(po) - 100)).replace('.', '\\.')}, replay ${po.replace('.', '\\.')}$`, 'm'));
    assert.match(acme.stdout, new RegExp(`^${loansInAcme} loans checked \\(account acme\\): 2 loans differ from a fresh replay`, 'm'));

    const all = await cli('ledger', 'verify');
    assert.equal(all.code, 1);
    assert.deepEqual(reported(all.stdout), [corrupt.allocationLoan, corrupt.balanceLoan, corrupt.otherLoan].sort());
    assert.match(all.stdout, /^  credit_balance: stored 5\.00, replay 0\.00$/m);
  });

  it('rebuild rewrites them, and verify is 0 again', async () => {
    const rebuilt = await cli('ledger', 'rebuild', '--account', 'acme');
    assert.equal(rebuilt.code, 0, rebuilt.stdout + rebuilt.stderr);
    assert.equal(rebuilt.stdout, `${loansInAcme} loans replayed (account acme) in 1 transaction\n`);
    const acme = await cli('ledger', 'verify', '--account', 'acme');
    assert.equal(acme.code, 0, acme.stdout);
    // The other account was not touched.
    const all = await cli('ledger', 'verify');
    assert.equal(all.code, 1);
    assert.deepEqual(reported(all.stdout), [corrupt.otherLoan]);

    const everything = await cli('ledger', 'rebuild');
    assert.equal(everything.code, 0, everything.stderr);
    assert.equal(everything.stdout, `${loansInAcme + 1} loans replayed (all accounts) in 1 transaction\n`);
    const again = await cli('ledger', 'verify');
    assert.equal(again.code, 0, again.stdout);
    assert.equal(again.stdout, `${loansInAcme + 1} loans checked (all accounts): 0 differences\n`);
  });
});

/**
 * Migration 0012 on a database from before it (0001–0011 applied, loans with schedules made by
 * §7's rules and payments of the old kinds, reversed ones and a `late_fee` among them): every
 * payment is kept as it was, and the ledger the migration stored is the one a fresh replay gives
 * (verify: 0 differences; a replay changes no stored row).
 */
describe('migration 0012 on an earlier database', { timeout: 120_000 }, () => {
  let db: Database;
  let close: () => Promise<void>;

  before(async () => {
    ({ db, close } = await openEmptyTestDatabase());
  });

  after(async () => close());

  it('keeps every payment and derives the ledger a fresh replay gives', async () => {
    await db.transaction(async (tx) => {
      await tx.query(`CREATE TABLE loanql_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
      for (const migration of [m0001, m0002, m0003, m0004, m0005, m0006, m0007, m0008, m0009, m0010, m0011]) {
        await tx.script(migration.sql);
        await tx.query('INSERT INTO loanql_migrations (name) VALUES ($1)', [migration.name]);
      }
    });
    const account = (await db.query<{ id: string }>(`INSERT INTO accounts (slug, name) VALUES ('before', 'Before') RETURNING id`)).rows[0]!.id;

    // Loans of every frequency and both amortizations, paid in various ways (deterministic).
    const frequencies: Frequency[] = ['monthly', 'quarterly', 'semi_monthly', 'biweekly', 'weekly', 'annually'];
    let seed = 29;
    const random = (): number => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    for (let i = 0; i < 24; i += 1) {
      const frequency = frequencies[i % frequencies.length]!;
      const amortization = i % 4 === 3 ? 'interest_only' : 'amortizing';
      const input = { amount: String(10000 + i * 2500), rate: String(6 + (i % 7)), term: 6 + (i % 10), frequency, amortization, dateFunded: `2025-0${1 + (i % 9)}-1${i % 10}` } as const;
      const schedule = buildSchedule(input);
      const status = i % 6 === 5 ? 'lead' : 'servicing';
      const loan = (
        await db.query<{ id: string }>(
          `INSERT INTO loans (account_id, name, amount, status, rate, term, frequency, amortization, regular_payment, date_funded, date_maturity)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id`,
          [account, `loan ${i}`, input.amount, status, input.rate, input.term, frequency, amortization, schedule.regularPayment, input.dateFunded, schedule.dateMaturity],
        )
      ).rows[0]!.id;
      await db.query(
        `INSERT INTO schedules (account_id, loan_id, number, due, payment, principal, interest, balance)
         SELECT $1, $2, * FROM unnest($3::int[], $4::date[], $5::numeric[], $6::numeric[], $7::numeric[], $8::numeric[])`,
        [account, loan, ...(['number', 'due', 'payment', 'principal', 'interest', 'balance'] as const).map((field) => schedule.rows.map((row) => row[field]))],
      );
      if (status === 'lead') continue;
      const paid = Math.floor(random() * (schedule.rows.length + 1));
      for (const row of schedule.rows.slice(0, paid)) {
        const late = Math.floor(random() * 20);
        const amount = (Number(row.payment) * (random() < 0.2 ? 0.5 : random() < 0.1 ? 1.5 : 1)).toFixed(2);
        const type = random() < 0.05 ? 'late_fee' : 'regular';
        const id = (
          await db.query<{ id: string }>(
            `INSERT INTO payments (account_id, loan_id, date, amount, type) VALUES ($1, $2, $3::date + $4::int, $5, $6) RETURNING id`,
            [account, loan, row.due, late, amount, type],
          )
        ).rows[0]!.id;
        if (random() < 0.08) await db.query(`UPDATE payments SET date_reversed = date + 3 WHERE id = $1`, [id]);
      }
    }
    const paymentsBefore = (await db.query(`SELECT id, loan_id, date::text, amount::text, date_reversed::text FROM payments ORDER BY id`)).rows;
    assert.ok(paymentsBefore.length > 50, `${paymentsBefore.length} payments`);

    const applied = await migrate(db);
    assert.equal(applied[0], '0012_servicing_ledger', 'the ledger first, then every later migration');
    assert.ok(applied.includes('0016_faster_replay'), applied.join(', '));

    const paymentsAfter = (await db.query(`SELECT id, loan_id, date::text, amount::text, date_reversed::text FROM payments ORDER BY id`)).rows;
    assert.deepEqual(paymentsAfter, paymentsBefore);
    const lines = await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM payment_allocations`);
    assert.ok(Number(lines.rows[0]!.n) > paymentsBefore.length, 'allocations were derived');

    const report = await verifyLedgers(db, { batchSize: 7 });
    assert.equal(report.checked, 24);
    assert.deepEqual(report.differing, []);

    // A replay now changes nothing stored.
    const stored = async (): Promise<unknown> => ({
      loans: (await db.query(`SELECT id, status, date_closed::text, principal_outstanding::text, interest_due::text, fees_due::text, credit_balance::text, oldest_unpaid_due::text FROM loans ORDER BY id`)).rows,
      lines: (await db.query(`SELECT loan_id, position, payment_id, row_number, fee_id, component, amount::text FROM payment_allocations ORDER BY loan_id, position`)).rows,
      rows: (await db.query(`SELECT loan_id, number, interest::text, principal::text, payment::text, balance::text, interest_paid::text, principal_paid::text, is_next FROM schedules ORDER BY loan_id, number`)).rows,
    });
    const beforeReplay = await stored();
    await db.query(`SELECT loanql_refresh_next(array_agg(account_id), array_agg(id)) FROM loans`);
    assert.deepEqual(await stored(), beforeReplay);
  });
});
