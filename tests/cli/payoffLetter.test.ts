import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAccount } from '../../app/accounts.js';
import { createLoan } from '../../app/loanWrites.js';
import { migrate } from '../../db/index.js';
import { assertBuilt, runCli, type ProcessResult } from '../support/processes.js';
import { commandEnvironment, withCommandDatabase } from '../support/commandDatabase.js';
import { pdfPages } from '../support/pdfText.js';

/**
 * `loanql loan payoff-letter` as a process (docs/ledger.md, "Payoff letter"): SPEC §12 R5's
 * on-time example written as a PDF file whose text totals 84,600.20 with its borrower; the
 * mistakes a person types (a day before funding, a loan the account does not have, no --out)
 * exit 2 with one line naming them, and no file is written.
 */
describe('loanql loan payoff-letter', { timeout: 300_000 }, () => {
  let env: Record<string, string>;
  let workDir: string;
  let cleanUp: () => Promise<void> = async () => {};
  let loan = '';
  const cli = (...args: string[]): Promise<ProcessResult> => runCli(args, env, workDir);

  before(async () => {
    assertBuilt();
    const environment = await commandEnvironment('loanql-payoff-letter-');
    ({ workDir, env } = environment);
    cleanUp = environment.remove;
    await withCommandDatabase(env, async (db) => {
      await migrate(db);
      const account = await createAccount(db, 'harbor', 'Harbor Private Lending');
      loan = (await createLoan(db, account.id, { Name: 'Elm St refinance', Amount: 100000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing', Borrower_Name: 'Ada Borrower' })).id;
      await db.query(`INSERT INTO payments (account_id, loan_id, date, amount) VALUES ($1, $2, '2026-02-15', 8884.88), ($1, $2, '2026-03-15', 8884.88)`, [account.id, loan]);
    });
  });

  after(async () => {
    await cleanUp();
  });

  it("writes R5's on-time letter (84,600.20 on 2026-03-31) to --out and says so", async () => {
    const file = join(workDir, 'letter.pdf');
    const written = await cli('loan', 'payoff-letter', '--account', 'harbor', '--loan', loan, '--date', '2026-03-31', '--out', file);
    assert.equal(written.code, 0, written.stderr);
    assert.equal(written.stdout, `payoff letter written to ${file}\nElm St refinance: payoff 84600.20 USD good through 2026-03-31, per diem 28.05\n`);
    const text = (await pdfPages(readFileSync(file)))[0]!.text;
    for (const fact of ['Harbor Private Lending', 'Borrower: Ada Borrower', 'Principal outstanding $84,151.39', 'Interest accrued to 2026-03-31 $448.81', 'Total to pay off on 2026-03-31 $84,600.20', 'Per diem: $28.05']) {
      assert.ok(text.includes(fact), `${fact} in: ${text}`);
    }
  });

  it('a day before funding, a loan the account does not have, and no --out exit 2 naming them, writing nothing', async () => {
    const file = join(workDir, 'refused.pdf');
    const early = await cli('loan', 'payoff-letter', '--account', 'harbor', '--loan', loan, '--date', '2026-01-14', '--out', file);
    assert.equal(early.code, 2);
    assert.equal(early.stderr, 'loanql: --date: 2026-01-14 is before the loan was funded (2026-01-15)\n');
    const none = await cli('loan', 'payoff-letter', '--account', 'harbor', '--loan', '00000000-0000-4000-8000-000000000000', '--out', file);
    assert.equal(none.code, 2);
    assert.equal(none.stderr, 'loanql: account harbor has no loan 00000000-0000-4000-8000-000000000000\n');
    const noOut = await cli('loan', 'payoff-letter', '--account', 'harbor', '--loan', loan);
    assert.equal(noOut.code, 2);
    assert.equal(noOut.stderr, 'loanql: --out is required\n');
    assert.throws(() => readFileSync(file), /ENOENT/);
  });
});
