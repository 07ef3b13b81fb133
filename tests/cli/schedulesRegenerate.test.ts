import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { findAccount } from '../../app/accounts.js';
import { createLoan } from '../../app/loanWrites.js';
import { type Database } from '../../db/index.js';
import { assertBuilt, runCli, type ProcessResult } from '../support/processes.js';
import { commandEnvironment, withCommandDatabase } from '../support/commandDatabase.js';

/**
 * `loanql schedules regenerate` as a process: loans whose stored schedules were made under the
 * earlier rules (a half-cent payment rounded down, month-ends lost, trailing 0.00 rows) get the
 * schedule SPEC §7 gives now, payments are kept and `is_next` follows them; a loan the rules
 * now refuse is listed and left alone; `--dry-run` writes nothing; a second run changes nothing.
 * A loan whose rows the ledger changed (a curtailment, a payoff) under today's rules is up to
 * date: it is neither counted nor rewritten (it was, on every run: 60 of a fresh demo's 500).
 * On the embedded database (DATA_DIR), and on PostgreSQL with TEST_DATABASE_URL.
 */
describe('loanql schedules regenerate', { timeout: 300_000 }, () => {
  let env: Record<string, string>;
  let cleanUp: () => Promise<void> = async () => {};
  let workDir: string;
  const cli = (...args: string[]): Promise<ProcessResult> => runCli(args, env, workDir);
  const ids = { tie: '', monthEnd: '', early: '', unchanged: '', refused: '', curtailed: '', paidOff: '' };

  /** Works on the database in this process; closed before any CLI runs (the embedded one has one user at a time). */
  const withDatabase = <T>(work: (db: Database) => Promise<T>): Promise<T> => withCommandDatabase(env, work);

  async function state(db: Database): Promise<unknown> {
    const loans = await db.query(`SELECT id, regular_payment::text, date_maturity::text, updated_at::text FROM loans ORDER BY id`);
    const rows = await db.query(`SELECT id, loan_id, number, due::text, payment::text, principal::text, balance::text, is_next FROM schedules ORDER BY loan_id, number`);
    const payments = await db.query(`SELECT id, loan_id, amount::text FROM payments ORDER BY id`);
    return { loans: loans.rows, rows: rows.rows, payments: payments.rows };
  }

  before(async () => {
    assertBuilt();
    const environment = await commandEnvironment('loanql-regen-');
    ({ workDir, env } = environment);
    cleanUp = environment.remove;
    const made = await cli('account', 'create', 'acme');
    assert.equal(made.code, 0, made.stderr);

    // Loans made under today's rules, then turned into what the earlier rules stored.
    await withDatabase(async (db) => {
      const account = await findAccount(db, 'acme');
      const create = async (body: Record<string, unknown>) => (await createLoan(db, account.id, { Name: 'regenerated', ...body })).id;
      ids.tie = await create({ Amount: 1000, Rate: 6.25, Term: 1, Frequency: 'quarterly', First_Payment_Date: '2026-03-31' });
      await db.query(`UPDATE loans SET regular_payment = 1015.62 WHERE id = $1`, [ids.tie]);

      ids.monthEnd = await create({ Amount: 3000, Rate: 0, Term: 3, Frequency: 'monthly', Date_Funded: '2024-01-31', Status: 'servicing' });
      await db.query(`UPDATE schedules SET due = make_date(2024, 1 + number, 29) WHERE loan_id = $1 AND number > 1`, [ids.monthEnd]);
      await db.query(`UPDATE loans SET date_maturity = '2024-04-29' WHERE id = $1`, [ids.monthEnd]);
      await db.query(`INSERT INTO payments (account_id, loan_id, date, amount) VALUES ($1, $2, '2024-02-29', 1000.00)`, [account.id, ids.monthEnd]);

      ids.early = await create({ Amount: 1000, Rate: 12, Term: 4, Frequency: 'monthly', First_Payment_Date: '2026-01-31', Regular_Payment: 600 });
      await db.query(
        `INSERT INTO schedules (account_id, loan_id, number, due, payment, principal, interest, balance)
         VALUES ($1, $2, 3, '2026-03-31', 0, 0, 0, 0), ($1, $2, 4, '2026-04-30', 0, 0, 0, 0)`,
        [account.id, ids.early],
      );
      await db.query(`UPDATE loans SET date_maturity = '2026-04-30' WHERE id = $1`, [ids.early]);

      ids.unchanged = await create({ Amount: 100000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' });

      ids.refused = await create({ Amount: 5000, Rate: 6, Term: 6, Frequency: 'monthly', Amortization: 'interest_only', Date_Funded: '2026-01-15' });
      await db.query(`UPDATE loans SET regular_payment = 500, regular_payment_given = true WHERE id = $1`, [ids.refused]);

      // Today's rules, rows changed by the ledger since: a curtailment rebuilds the rows after it, a payoff cuts its row's interest.
      ids.curtailed = await create({ Amount: 12000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' });
      await db.query(`INSERT INTO payments (account_id, loan_id, date, amount, type) VALUES ($1, $2, '2026-02-20', 5000.00, 'principal')`, [account.id, ids.curtailed]);
      ids.paidOff = await create({ Amount: 12000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' });
      await db.query(`INSERT INTO payments (account_id, loan_id, date, amount, type) VALUES ($1, $2, '2026-02-20', 12200.00, 'payoff')`, [account.id, ids.paidOff]);
      const { rows: moved } = await db.query<{ loan_id: string }>(
        `SELECT DISTINCT loan_id FROM schedules WHERE loan_id = ANY($1::uuid[]) AND (payment, principal, interest, balance) IS DISTINCT FROM (scheduled_payment, scheduled_principal, scheduled_interest, scheduled_balance)`,
        [[ids.curtailed, ids.paidOff]],
      );
      assert.equal(moved.length, 2, 'the ledger changed both loans\' rows');
    });
  });

  after(async () => {
    await cleanUp();
  });

  it('--dry-run counts the loans that would change and writes nothing', async () => {
    const before = await withDatabase(state);
    const run = await cli('schedules', 'regenerate', '--dry-run');
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, new RegExp(`left as it is: loan ${ids.refused}: regularPayment cannot be given for an interest_only loan`));
    assert.match(run.stdout, /^7 loans checked \(all accounts\), 1 left as they are; 3 would change \(dry run: nothing written\)$/m);
    assert.deepEqual(await withDatabase(state), before);
  });

  it('regenerates the three schedules, keeping payments and is_next right, and says how many changed', async () => {
    const before = (await withDatabase(state)) as { payments: unknown[]; rows: { id: string; loan_id: string }[] };
    const run = await cli('schedules', 'regenerate', '--account', 'acme');
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^7 loans checked \(account acme\), 1 left as they are; 3 changed$/m);

    await withDatabase(async (db) => {
      const loan = async (id: string) => (await db.query<{ regular_payment: string; date_maturity: string }>(`SELECT regular_payment::text, date_maturity::text FROM loans WHERE id = $1`, [id])).rows[0]!;
      const rows = async (id: string) =>
        (await db.query<{ due: string; payment: string; is_next: boolean }>(`SELECT due::text, payment::text, is_next FROM schedules WHERE loan_id = $1 ORDER BY number`, [id])).rows;

      assert.equal((await loan(ids.tie)).regular_payment, '1015.63');

      assert.deepEqual(await rows(ids.monthEnd), [
        { due: '2024-02-29', payment: '1000.00', is_next: false },
        { due: '2024-03-31', payment: '1000.00', is_next: true },
        { due: '2024-04-30', payment: '1000.00', is_next: false },
      ]);
      assert.equal((await loan(ids.monthEnd)).date_maturity, '2024-04-30');

      assert.deepEqual((await rows(ids.early)).map((row) => [row.due, row.payment]), [
        ['2026-01-31', '600.00'],
        ['2026-02-28', '414.10'],
      ]);
      assert.deepEqual(await loan(ids.early), { regular_payment: '600.00', date_maturity: '2026-02-28' });

      const after = (await state(db)) as typeof before;
      assert.deepEqual(after.payments, before.payments, 'payments are kept');
      const rowIds = (state: typeof before, loanId: string) => state.rows.filter((row) => row.loan_id === loanId).map((row) => row.id);
      assert.deepEqual(rowIds(after, ids.unchanged), rowIds(before, ids.unchanged), 'an up-to-date schedule is not rewritten');
      assert.deepEqual(rowIds(after, ids.refused), rowIds(before, ids.refused), 'a refused loan is left as it is');
      for (const id of [ids.curtailed, ids.paidOff]) assert.deepEqual(rowIds(after, id), rowIds(before, id), 'rows the ledger changed under today\'s rules are not rewritten');
    });
  });

  it('a second run changes nothing; an unknown account is a one-line error with status 2', async () => {
    const again = await cli('schedules', 'regenerate');
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /^7 loans checked \(all accounts\), 1 left as they are; 0 changed$/m);
    const unknown = await cli('schedules', 'regenerate', '--account', 'nobody');
    assert.equal(unknown.code, 2);
    assert.equal(unknown.stderr.trim().split('\n').length, 1, unknown.stderr);
  });
});
