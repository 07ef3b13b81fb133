import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createAccount } from '../../app/accounts.js';
import { createLoan } from '../../app/loanWrites.js';
import { migrate, type Database } from '../../db/index.js';
import { assertBuilt, runCli, type ProcessResult } from '../support/processes.js';
import { commandEnvironment, withCommandDatabase } from '../support/commandDatabase.js';

/**
 * `loanql product settings` and `loanql product set` as processes (issue 29): the same table and
 * validation as `PATCH /api/product` (`app/productSettings.ts`). A bad value exits 2 naming the
 * setting and writes nothing; a good change replays the product's loans. Kept to four CLI runs:
 * process tests are the suite's slowest part.
 */
describe('loanql product settings / set', { timeout: 180_000 }, () => {
  let env: Record<string, string>;
  let cleanUp: () => Promise<void> = async () => {};
  let workDir: string;
  let loanId = '';
  const cli = (...args: string[]): Promise<ProcessResult> => runCli(args, env, workDir);

  const withDatabase = <T>(work: (db: Database) => Promise<T>): Promise<T> => withCommandDatabase(env, work);

  before(async () => {
    assertBuilt();
    const environment = await commandEnvironment('loanql-product-');
    ({ workDir, env } = environment);
    cleanUp = environment.remove;
    await withDatabase(async (db) => {
      await migrate(db);
      const account = await createAccount(db, 'acme');
      // The reference loan of SPEC §7 with nothing paid: rows 1 and 2 get late fees of 444.24.
      loanId = (await createLoan(db, account.id, { Name: 'Reference', Amount: 100000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' })).id;
    });
  });

  after(async () => {
    await cleanUp();
  });

  it('prints each setting with its value and default; refuses a bad value (exit 2, named, nothing written); sets values and replays', async () => {
    const shown = await cli('product', 'settings', '--account', 'acme');
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /^SETTING\s+VALUE\s+DEFAULT$/m);
    assert.match(shown.stdout, /^day_count\s+actual\/360\s+actual\/360$/m);
    assert.match(shown.stdout, /^late_fee_fixed\s+none\s+none$/m);
    assert.match(shown.stdout, /^delinquency_buckets\s+current: 0, 1-29: 1, 30-59: 30, 60-89: 60, 90-119: 90, 120\+: 120\s+current: 0, 1-29: 1/m);

    const refused = await cli('product', 'set', '--account', 'acme', 'late_fee_grace_days=15', 'day_count=actual/366');
    assert.equal(refused.code, 2, refused.stdout + refused.stderr);
    assert.match(refused.stderr, /^loanql: day_count must be one of actual\/360, actual\/365, 30\/360\n$/);

    const set = await cli('product', 'set', '--account', 'acme', 'late_fee_percent=none', 'late_fee_fixed=50', 'delinquency_buckets=current: 0, late: 1, default: 90');
    assert.equal(set.code, 0, set.stderr);
    assert.match(set.stdout, /late_fee_fixed = 50\.00/);
    assert.match(set.stdout, /delinquency_buckets = current: 0, late: 1, default: 90/);
    assert.match(set.stdout, /^1 loan replayed$/m);

    await withDatabase(async (db) => {
      const product = (await db.query<{ late_fee_grace_days: number; late_fee_percent: string | null; day_count: string }>('SELECT late_fee_grace_days, late_fee_percent, day_count FROM products')).rows[0]!;
      assert.deepEqual(product, { late_fee_grace_days: 10, late_fee_percent: null, day_count: 'actual/360' }, 'the refused change wrote nothing');
      const fees = await db.query<{ amount: string }>(`SELECT amount::text FROM fees WHERE loan_id = $1 AND row_number <= 2 ORDER BY row_number`, [loanId]);
      assert.deepEqual(fees.rows.map((row) => row.amount), ['50.00', '50.00'], 'the late fees follow the fixed amount');
    });
  });
});
