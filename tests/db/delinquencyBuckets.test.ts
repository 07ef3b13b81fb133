import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Database } from '../../db/index.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';

/**
 * SPEC §12's `delinquency_buckets` setting (migrations 0012 and 0014): a list of named buckets by
 * the first day past due they hold; a loan's bucket is the last one whose `from` it has reached,
 * and the product refuses a list that does not start at 0, does not rise, or is not that shape.
 */
const DEFAULT = JSON.stringify([
  { name: 'current', from: 0 }, { name: '1-29', from: 1 }, { name: '30-59', from: 30 },
  { name: '60-89', from: 60 }, { name: '90-119', from: 90 }, { name: '120+', from: 120 },
]);

describe('delinquency buckets (SPEC §12 R3)', () => {
  let opened: TestDatabase;
  let db: Database;
  before(async () => {
    opened = await openTestDatabase();
    db = opened.db;
  });
  after(async () => {
    await opened.close();
  });

  const bucket = async (buckets: string, days: number) =>
    (await db.query<{ name: string }>('SELECT loanql_delinquency_bucket($1::jsonb, $2) AS name', [buckets, days])).rows[0]!.name;

  it('names the default buckets as the SPEC lists them', async () => {
    const expected: [number, string][] = [
      [0, 'current'], [1, '1-29'], [5, '1-29'], [29, '1-29'], [30, '30-59'], [33, '30-59'], [59, '30-59'],
      [60, '60-89'], [89, '60-89'], [90, '90-119'], [119, '90-119'], [120, '120+'], [5000, '120+'], [-3, 'current'],
    ];
    for (const [days, name] of expected) assert.equal(await bucket(DEFAULT, days), name, `${days} days`);
  });

  it('gives every product the default buckets and refuses a list of another shape', async () => {
    const account = (await db.query<{ id: string }>(`INSERT INTO accounts (slug, name) VALUES ('buckets', 'Buckets') RETURNING id`)).rows[0]!.id;
    const product = (
      await db.query<{ id: string; delinquency_buckets: unknown }>(
        `INSERT INTO products (account_id, name, is_default) VALUES ($1, 'Default', true) RETURNING id, delinquency_buckets`,
        [account],
      )
    ).rows[0]!;
    assert.deepEqual(product.delinquency_buckets, JSON.parse(DEFAULT));
    const refused = [
      [], {}, 'current', [{ name: 'late', from: 1 }], [{ name: 'current', from: 0 }, { name: 'late', from: 0 }],
      [{ name: 'current', from: 0 }, { name: 'b', from: 60 }, { name: 'c', from: 30 }], [{ name: 'current', from: 0 }, { name: 'x', from: 3651 }],
      [{ name: 'current', from: 0 }, { name: 'x', from: 1.5 }], [{ name: 'current', from: 0 }, { name: 'x', from: '30' }],
      [{ name: 'current', from: 0 }, { name: ' ', from: 30 }], [{ name: 'current', from: 0 }, { name: 'current', from: 30 }],
      [{ name: 'current', from: 0, color: 'red' }], [{ name: 'current' }], [{ name: 'current', from: 0 }, null],
      Array.from({ length: 13 }, (_, i) => ({ name: `b${i}`, from: i })),
    ];
    for (const buckets of refused) {
      await assert.rejects(
        db.query('UPDATE products SET delinquency_buckets = $1::jsonb WHERE id = $2', [JSON.stringify(buckets), product.id]),
        /products_delinquency_buckets/,
        JSON.stringify(buckets),
      );
    }
    const mine = [{ name: 'current', from: 0 }, { name: 'late', from: 15 }, { name: 'default', from: 90 }];
    await db.query('UPDATE products SET delinquency_buckets = $1::jsonb WHERE id = $2', [JSON.stringify(mine), product.id]);
    assert.equal(await bucket(JSON.stringify(mine), 14), 'current');
    assert.equal(await bucket(JSON.stringify(mine), 15), 'late');
    assert.equal(await bucket(JSON.stringify(mine), 3000), 'default');
  });
});
