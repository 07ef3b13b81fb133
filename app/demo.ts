import { randomBytes } from 'node:crypto';
import type { Database } from '../db/index.js';
import { seedPortfolio } from './seed/index.js';
import { countAccounts, createAccount, createAdmin } from './accounts.js';
import { createApiKey } from './apiKeys.js';
import { createDefaultProduct, DEMO_CUSTOM_FIELDS } from './products.js';

export interface DemoSetUp {
  readonly accountSlug: string;
  readonly adminEmail: string;
  /** Shown once at first start: only its scrypt hash is stored. */
  readonly adminPassword: string;
  /** Shown once at first start: only its SHA-256 is stored. */
  readonly apiKey: string;
  readonly loans: number;
}

export const DEMO_ACCOUNT = 'demo';
export const DEMO_ADMIN_EMAIL = 'admin@demo.loanql.test';

/**
 * On an empty database: the demo account, its admin, default product, an API key and a
 * deterministic demo portfolio. Returns null when the database already has accounts.
 * If seeding fails the demo account is removed again, so the next start tries afresh.
 */
export async function setUpDemoIfEmpty(db: Database, scale = 0.05): Promise<DemoSetUp | null> {
  if ((await countAccounts(db)) > 0) return null;
  const adminPassword = randomBytes(12).toString('base64url');
  const setUp = await db.transaction(async (tx) => {
    const account = await createAccount(tx, DEMO_ACCOUNT, 'Demo Lending');
    const admin = await createAdmin(tx, account.id, { email: DEMO_ADMIN_EMAIL, password: adminPassword, name: 'Demo Admin' });
    const productId = await createDefaultProduct(tx, account.id, DEMO_CUSTOM_FIELDS);
    const key = await createApiKey(tx, account.id, 'demo key');
    return { account, admin, productId, key };
  });
  try {
    const summary = await seedPortfolio(db, {
      accountId: setUp.account.id,
      scale,
      seed: 1,
      adminIds: [setUp.admin.id],
      productId: setUp.productId,
      // Dated around the day it is set up, so its next payments are ahead, not months overdue.
      today: new Date().toISOString().slice(0, 10),
    });
    return { accountSlug: setUp.account.slug, adminEmail: setUp.admin.email, adminPassword, apiKey: setUp.key.key, loans: summary.loans };
  } catch (error) {
    await db.query('DELETE FROM accounts WHERE id = $1', [setUp.account.id]).catch(() => undefined);
    throw error;
  }
}
