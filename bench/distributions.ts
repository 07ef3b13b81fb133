/**
 * The cost of investor distributions (issue 32, Done when 5): posting a payment (m1's write) on a
 * loan with 4 funding sources against the same loan without any. Not part of `npm run bench`:
 *
 *   node --import tsx bench/distributions.ts [--runs 20]     (PGlite in memory; DATABASE_URL: that PostgreSQL)
 *
 * Two 30-year monthly loans (360 rows) with 359 payments each; one has 4 funding sources (A–D,
 * 20/20/20/10 %, rates 5–8 %). Posting the 360th payment runs the replay and, on the funded loan,
 * the split of that payment alone (its 2 components × 5 parties: 10 lines and one batch). Server
 * time (clock_timestamp around the INSERT and its triggers), each run in a transaction that is
 * rolled back, alternating the loans; ratio = median without / median with (target ≥ 0.85).
 */
import { parseArgs } from 'node:util';
import { createAccount } from '../app/accounts.js';
import { createDefaultProduct } from '../app/products.js';
import { createLoan } from '../app/loanWrites.js';
import { migrate, openPgliteDatabase, openPostgresDatabase, type Database } from '../db/index.js';
import { median } from './median.js';

const args = parseArgs({ options: { runs: { type: 'string', default: '20' } } }).values;
class RolledBack extends Error {}

async function loanWithHistory(db: Database, accountId: string, name: string): Promise<{ id: string; lastDue: string; lastPayment: string }> {
  const loan = await createLoan(db, accountId, { Name: name, Amount: 400000, Rate: 6.5, Term: 360, Frequency: 'monthly', Date_Funded: '2000-01-15', Status: 'servicing' });
  const { rows } = await db.query<{ due: string; payment: string }>(`SELECT due::text, payment::text FROM schedules WHERE account_id = $1 AND loan_id = $2 ORDER BY number`, [accountId, loan.id]);
  await db.query(`INSERT INTO payments (account_id, loan_id, date, amount) SELECT $1, $2, d, a FROM unnest($3::date[], $4::numeric[]) AS u(d, a)`, [
    accountId,
    loan.id,
    rows.slice(0, 359).map((r) => r.due),
    rows.slice(0, 359).map((r) => r.payment),
  ]);
  return { id: loan.id, lastDue: rows[359]!.due, lastPayment: rows[359]!.payment };
}

/** Server time (ms) of posting the last payment, in a transaction rolled back. */
async function post(db: Database, accountId: string, loan: { id: string; lastDue: string; lastPayment: string }): Promise<number> {
  let ms = 0;
  await db
    .transaction(async (tx) => {
      const before = await tx.query<{ t: string }>(`SELECT clock_timestamp()::text AS t`);
      await tx.query(`INSERT INTO payments (account_id, loan_id, date, amount) VALUES ($1, $2, $3, $4)`, [accountId, loan.id, loan.lastDue, loan.lastPayment]);
      const after = await tx.query<{ ms: number }>(`SELECT extract(epoch FROM clock_timestamp() - $1::timestamptz)::float8 * 1000 AS ms`, [before.rows[0]!.t]);
      ms = Number(after.rows[0]!.ms);
      throw new RolledBack();
    })
    .catch((error: unknown) => {
      if (!(error instanceof RolledBack)) throw error;
    });
  return ms;
}

async function main(): Promise<void> {
  const url = process.env.DATABASE_URL;
  const db = url ? openPostgresDatabase({ connectionString: url, maxConnections: 2 }) : await openPgliteDatabase(undefined);
  await migrate(db);
  const account = await createAccount(db, `dist-bench-${Date.now().toString(36)}`);
  await createDefaultProduct(db, account.id, []);
  const plain = await loanWithHistory(db, account.id, 'no funding sources');
  const funded = await loanWithHistory(db, account.id, 'four funding sources');
  for (const [i, [share, rate]] of [[80000, 5], [80000, 6], [80000, 7], [40000, 8]].entries()) {
    const { rows } = await db.query<{ id: string }>(`INSERT INTO people (account_id, name) VALUES ($1, $2) RETURNING id`, [account.id, `Investor ${i}`]);
    await db.query(`INSERT INTO funding_sources (account_id, person_id, loan_id, original_amount, rate, date_funded) VALUES ($1, $2, $3, $4, $5, '2000-01-15')`, [
      account.id,
      rows[0]!.id,
      funded.id,
      share,
      rate,
    ]);
  }
  const { rows: lines } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM distributions WHERE account_id = $1 AND loan_id = $2`, [account.id, funded.id]);
  await db.query('ANALYZE');
  const runs = Number(args.runs);
  await post(db, account.id, plain);
  await post(db, account.id, funded);
  const without: number[] = [];
  const withSources: number[] = [];
  for (let i = 0; i < runs; i++) {
    without.push(await post(db, account.id, plain));
    withSources.push(await post(db, account.id, funded));
  }
  const result = {
    database: url ? 'PostgreSQL' : 'PGlite',
    existingDistributionLines: lines[0]!.n,
    postWithoutSourcesMsMedian: median(without),
    postWithFourSourcesMsMedian: median(withSources),
    ratio: median(without) / median(withSources),
  };
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  await db.close();
}

await main();
