import type { Database } from '../../db/index.js';
import { seedPortfolio, type SeedOptions, type SeedSummary } from './seedPortfolio.js';

/**
 * Seeds an account that already exists (behind `loanql seed`): its admins, oldest first, author
 * the comments and its default product, when it has one, is every loan's. Throws `SeedError`
 * as `seedPortfolio` does (e.g. an account that already has loans or people).
 */
export async function seedExistingAccount(db: Database, accountId: string, options: Omit<SeedOptions, 'accountId' | 'adminIds' | 'productId'>): Promise<SeedSummary> {
  const admins = await db.query<{ id: string }>('SELECT id FROM admins WHERE account_id = $1 ORDER BY created_at, id', [accountId]);
  const product = await db.query<{ id: string }>('SELECT id FROM products WHERE account_id = $1 AND is_default', [accountId]);
  return seedPortfolio(db, { ...options, accountId, adminIds: admins.rows.map((row) => row.id), productId: product.rows[0]?.id ?? null });
}
