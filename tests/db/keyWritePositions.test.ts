import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createAccount } from '../../app/accounts.js';
import { createApiKey, deactivateApiKey } from '../../app/apiKeys.js';
import { checkKeyForRead, recordKeyWrite } from '../../app/keyWritePositions.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';

/** Issue 33: each key's last write position, kept in the primary and read with the key check (docs/scaling.md). */
describe('Key write positions: recorded after a write, read with the key check', () => {
  let database: TestDatabase;
  let accountId: string;

  before(async () => {
    database = await openTestDatabase();
    accountId = (await createAccount(database.db, 'positions')).id;
  });
  after(() => database.close());

  it('a key that never wrote is active with no position', async () => {
    const key = await createApiKey(database.db, accountId, 'reader');
    assert.deepEqual(await checkKeyForRead(database.db, { accountId, keyId: key.id }, 60_000), { active: true, lastWrite: null });
  });

  it('a write records the WAL position at or past everything committed before it, and the check returns it within the window', async () => {
    const key = await createApiKey(database.db, accountId, 'writer');
    await database.db.query(`UPDATE accounts SET name = 'written' WHERE id = $1`, [accountId]);
    const { rows } = await database.db.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn');
    const [high, low] = rows[0]!.lsn.split('/').map((part) => BigInt(`0x${part}`));
    const afterCommit = (high! << 32n) + low!;
    const recorded = await recordKeyWrite(database.db, { accountId, keyId: key.id });
    assert.ok(recorded >= afterCommit, `recorded ${recorded}, the position after the commit ${afterCommit}`);
    const checked = await checkKeyForRead(database.db, { accountId, keyId: key.id }, 60_000);
    assert.deepEqual(checked, { active: true, lastWrite: recorded });
    // Another key's check does not see it.
    const other = await createApiKey(database.db, accountId, 'other');
    assert.equal((await checkKeyForRead(database.db, { accountId, keyId: other.id }, 60_000)).lastWrite, null);
  });

  it('moves on with each write and never lowers a position a concurrent write recorded higher', async () => {
    const key = await createApiKey(database.db, accountId, 'twice');
    const first = await recordKeyWrite(database.db, { accountId, keyId: key.id });
    await database.db.query(`UPDATE accounts SET name = 'again' WHERE id = $1`, [accountId]);
    const second = await recordKeyWrite(database.db, { accountId, keyId: key.id });
    assert.ok(second > first, `${second} after ${first}`);
    // As if another process's later write had recorded a higher position first.
    await database.db.query(`UPDATE key_write_positions SET lsn = 'FFFF/0' WHERE id = $1`, [key.id]);
    assert.equal(await recordKeyWrite(database.db, { accountId, keyId: key.id }), 0xffffn << 32n);
  });

  it('past the window the position no longer counts', async () => {
    const key = await createApiKey(database.db, accountId, 'old writer');
    await recordKeyWrite(database.db, { accountId, keyId: key.id });
    await database.db.query(`UPDATE key_write_positions SET at = now() - interval '61 seconds' WHERE id = $1`, [key.id]);
    assert.equal((await checkKeyForRead(database.db, { accountId, keyId: key.id }, 60_000)).lastWrite, null);
    assert.notEqual((await checkKeyForRead(database.db, { accountId, keyId: key.id }, 120_000)).lastWrite, null);
  });

  it('a deactivated key is reported inactive (its position with it), and a deleted account takes its keys’ positions along', async () => {
    const key = await createApiKey(database.db, accountId, 'revoked');
    const recorded = await recordKeyWrite(database.db, { accountId, keyId: key.id });
    assert.equal((await deactivateApiKey(database.db, key.prefix))?.wasActive, true);
    assert.deepEqual(await checkKeyForRead(database.db, { accountId, keyId: key.id }, 60_000), { active: false, lastWrite: recorded });
    const gone = (await createAccount(database.db, 'gone')).id;
    const goneKey = await createApiKey(database.db, gone, 'k');
    await recordKeyWrite(database.db, { accountId: gone, keyId: goneKey.id });
    await database.db.query('DELETE FROM accounts WHERE id = $1', [gone]);
    const { rows } = await database.db.query<{ n: number }>('SELECT count(*)::int AS n FROM key_write_positions WHERE account_id = $1', [gone]);
    assert.equal(rows[0]!.n, 0);
  });
});
