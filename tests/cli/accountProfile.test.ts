import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createAccount } from '../../app/accounts.js';
import { readAccountProfile } from '../../app/accountProfile.js';
import { migrate, type Database } from '../../db/index.js';
import { assertBuilt, runCli, type ProcessResult } from '../support/processes.js';
import { commandEnvironment, withCommandDatabase } from '../support/commandDatabase.js';

/**
 * `loanql account profile` as a process (session 38): the lender's letterhead with the rules of
 * `PATCH /api/account` (`app/accountProfile.ts`). A bad value exits 2 naming the field and writes
 * nothing; good values are written and the profile printed. Kept to three CLI runs.
 */
describe('loanql account profile', { timeout: 180_000 }, () => {
  let env: Record<string, string>;
  let cleanUp: () => Promise<void> = async () => {};
  let workDir: string;
  let accountId = '';
  const cli = (...args: string[]): Promise<ProcessResult> => runCli(args, env, workDir);
  const withDatabase = <T>(work: (db: Database) => Promise<T>): Promise<T> => withCommandDatabase(env, work);

  before(async () => {
    assertBuilt();
    const environment = await commandEnvironment('loanql-profile-');
    ({ workDir, env } = environment);
    cleanUp = environment.remove;
    await withDatabase(async (db) => {
      await migrate(db);
      accountId = (await createAccount(db, 'acme', 'Acme Lending')).id;
    });
  });

  after(async () => {
    await cleanUp();
  });

  it('prints the empty profile; refuses a bad value (exit 2, named, nothing written); sets fields and prints them', async () => {
    const shown = await cli('account', 'profile', '--account', 'acme');
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /^FIELD\s+VALUE$/m);
    assert.match(shown.stdout, /^legal_name\s+none \(letters print "Acme Lending"\)$/m);
    assert.match(shown.stdout, /^payment_instructions\s+none$/m);

    const refused = await cli('account', 'profile', '--account', 'acme', 'city=Chicago', 'email=not-an-address', 'fax=555');
    assert.equal(refused.code, 2, refused.stdout + refused.stderr);
    assert.match(refused.stderr, /^loanql: fax: unknown field; the profile's fields are legal_name, .*; email: expected an e-mail address \(name@example\.com\)/);

    const set = await cli('account', 'profile', '--account', 'acme', 'legal_name=Acme Lending LLC', 'city=Chicago', 'phone=+1 312 555 0100', 'payment_instructions=Wire to First Lakes Bank\nABA 071000013');
    assert.equal(set.code, 0, set.stderr);
    assert.match(set.stdout, /^changed on acme: legal_name, city, phone, payment_instructions$/m);
    assert.match(set.stdout, /^legal_name\s+Acme Lending LLC$/m);
    assert.match(set.stdout, /^payment_instructions\s+Wire to First Lakes Bank\\nABA 071000013$/m, 'a line break shown as \\n, the row on one line');

    await withDatabase(async (db) => {
      const { profile } = await readAccountProfile(db, accountId);
      assert.deepEqual([profile.legal_name, profile.city, profile.email, profile.payment_instructions], ['Acme Lending LLC', 'Chicago', null, 'Wire to First Lakes Bank\nABA 071000013'], 'the refused change wrote nothing');
    });
  });
});
