import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { migrate } from '../../db/index.js';
import { sql as changeNoticesByLoan } from '../../db/migrations/0031_change_notices_by_loan.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';

/**
 * Migration 0039 (issue 36) writes out the change-notice statements 0031 built with `EXECUTE
 * format(…)` for the two key columns its triggers name (`loan_id`, `id`). On a database whose
 * notice functions are put back as 0031 made them, the same writes are made before and after
 * migrating: every notice must be the same, in the same order — for each key column (`loan_id`,
 * `id`, another one, which stays dynamic, and none), insert, update (rows moved between loans and
 * accounts) and delete, rows without a loan or an account, and more loans than a notice names.
 */
const PROBES = `
CREATE TABLE notice_probe_loan_id (account_id uuid, loan_id uuid, note text);
CREATE TABLE notice_probe_id (account_id uuid, id uuid, note text);
CREATE TABLE notice_probe_other (account_id uuid, loan_ref uuid, note text);
CREATE TABLE notice_probe_none (account_id uuid, note text);
`;

/** The triggers 0031 puts on an account table, with `argument` as the loan key column ('' for none). */
const triggersOn = (table: string, argument: string): string => `
CREATE TRIGGER loanql_notice_insert AFTER INSERT ON ${table} REFERENCING NEW TABLE AS loanql_changed_rows FOR EACH STATEMENT EXECUTE FUNCTION loanql_notice_changes(${argument});
CREATE TRIGGER loanql_notice_update AFTER UPDATE ON ${table} REFERENCING OLD TABLE AS loanql_old_rows NEW TABLE AS loanql_changed_rows FOR EACH STATEMENT EXECUTE FUNCTION loanql_notice_updates(${argument});
CREATE TRIGGER loanql_notice_delete AFTER DELETE ON ${table} REFERENCING OLD TABLE AS loanql_changed_rows FOR EACH STATEMENT EXECUTE FUNCTION loanql_notice_changes(${argument});`;

/** 0031's two notice functions, as it defined them (replacing whatever is there). */
function functionsOf0031(): string {
  const definitions = changeNoticesByLoan.match(/CREATE (?:OR REPLACE )?FUNCTION loanql_notice_(?:changes|updates)\(\)[\s\S]*?\n\$\$;/g) ?? [];
  assert.equal(definitions.length, 2, "0031's two notice functions");
  return definitions.map((definition) => definition.replace(/^CREATE (?:OR REPLACE )?FUNCTION/, 'CREATE OR REPLACE FUNCTION')).join('\n');
}

describe('migration 0039: change notices without dynamic SQL', () => {
  let database: TestDatabase;
  const accounts = [randomUUID(), randomUUID()];
  const loans = Array.from({ length: 20 }, () => randomUUID());

  before(async () => {
    database = await openTestDatabase();
    await database.db.script(PROBES + triggersOn('notice_probe_loan_id', "'loan_id'") + triggersOn('notice_probe_id', "'id'") + triggersOn('notice_probe_other', "'loan_ref'") + triggersOn('notice_probe_none', ''));
  });
  after(() => database.close());

  /** Every notice the writes send, in the order they arrive, then the probes emptied again. */
  async function noticesOfWrites(): Promise<string[]> {
    const heard: string[] = [];
    let ended: () => void = () => undefined;
    const end = new Promise<void>((resolve) => (ended = resolve));
    const stop = await database.db.listen('loanql_changes', (payload) => (payload === 'end' ? ended() : heard.push(payload)));
    const [a, b] = accounts as [string, string];
    for (const [table, key] of [['notice_probe_loan_id', 'loan_id'], ['notice_probe_id', 'id'], ['notice_probe_other', 'loan_ref']] as const) {
      await database.db.query(`INSERT INTO ${table} (account_id, ${key}, note) VALUES ($1, $3, 'one'), ($1, $4, 'two'), ($2, $3, 'three'), (NULL, $4, 'no account')`, [a, b, loans[0], loans[1]]);
      await database.db.query(`UPDATE ${table} SET note = note || '.' WHERE note = 'one'`);
      await database.db.query(`UPDATE ${table} SET note = note || '!' WHERE account_id IS NOT NULL`);
      // Moved to another loan and another account: both sides are named.
      await database.db.query(`UPDATE ${table} SET ${key} = $1, account_id = $2 WHERE note LIKE 'two%'`, [loans[2], b]);
      // A row without a loan: the notice names none (every loan).
      await database.db.query(`INSERT INTO ${table} (account_id, ${key}, note) VALUES ($1, NULL, 'no loan')`, [a]);
      // More loans than a notice names (16): none named.
      await database.db.query(`INSERT INTO ${table} (account_id, ${key}, note) SELECT $1, loan, 'many' FROM unnest($2::uuid[]) AS loan`, [b, loans]);
      await database.db.query(`UPDATE ${table} SET note = note WHERE note = 'nothing matches'`);
      await database.db.query(`DELETE FROM ${table}`);
    }
    await database.db.query(`INSERT INTO notice_probe_none (account_id, note) VALUES ($1, 'one'), ($2, 'two'), ($1, 'three'), (NULL, 'none')`, [a, b]);
    await database.db.query(`UPDATE notice_probe_none SET account_id = $1 WHERE note = 'two'`, [a]);
    await database.db.query('DELETE FROM notice_probe_none');
    await database.db.query("SELECT pg_notify('loanql_changes', 'end')");
    await end;
    await stop();
    return heard;
  }

  it('sends the notices 0031 sent, in the same order', async () => {
    await database.db.script(`${functionsOf0031()}\nDELETE FROM loanql_migrations WHERE name = '0039_change_notices_without_dynamic_sql';`);
    const before = await noticesOfWrites();
    assert.deepEqual(await migrate(database.db), ['0039_change_notices_without_dynamic_sql']);
    const after = await noticesOfWrites();
    assert.deepEqual(after, before);
    // What the writes announce (so that equal lists cannot be two empty ones).
    const [a, b] = accounts as [string, string];
    const [first, second, third] = [loans[0]!, loans[1]!, loans[2]!];
    for (const expected of [`${a} ${[first, second].sort().join(',')}`, `${b} ${first}`, `${a} ${first}`, `${a} ${second}`, `${b} ${third}`, a]) {
      assert.ok(after.includes(`notice_probe_loan_id ${expected}`), `notice_probe_loan_id ${expected}`);
    }
    assert.ok(after.includes(`notice_probe_id ${b}`), 'over 16 loans: the account alone');
    assert.ok(after.some((notice) => notice.startsWith('notice_probe_other ')));
    assert.ok(after.includes(`notice_probe_none ${a}`) && after.includes(`notice_probe_none ${b}`));
  });
});
