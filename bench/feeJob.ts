/**
 * The daily fee job's cost (issue 31) on PostgreSQL (DATABASE_URL): N synthetic serviced loans
 * (FEE_BENCH_LOANS, default 2,000; 100,000 at 12 %, 12 monthly, funded 2026-01-15, one payment
 * in three months paid), their stored ledgers put back 1 day and then 30 days, and
 * `assessFees` timed bringing them to today: one day, and a 30-day catch-up.
 *   DATABASE_URL=postgres://… node --import tsx bench/feeJob.ts
 */
import { migrate, openPostgresDatabase } from '../db/index.js';
import { assessFees } from '../app/feeJob.js';

const url = process.env.DATABASE_URL;
if (!url) throw new Error('set DATABASE_URL');
const loans = Number(process.env.FEE_BENCH_LOANS ?? 2000);
const db = openPostgresDatabase({ connectionString: url, maxConnections: 2 });
await migrate(db);
const slug = `fee-bench-${Date.now()}`;
const account = (await db.query<{ id: string }>(`INSERT INTO accounts (slug, name) VALUES ($1, $1) RETURNING id`, [slug])).rows[0]!.id;
await db.query(`INSERT INTO products (account_id, name, is_default) VALUES ($1, 'p', true)`, [account]);
let started = Date.now();
await db.transaction(async (tx) => {
  await tx.query(`SELECT set_config('loanql.replaying', 'on', true)`);
  await tx.query(
    `INSERT INTO loans (account_id, name, amount, status, rate, term, frequency, amortization, date_funded)
     SELECT $1, 'bench ' || g, 100000, 'servicing', 12, 12, 'monthly', 'amortizing', DATE '2026-01-15' FROM generate_series(1, $2) g`,
    [account, loans],
  );
  await tx.query(
    `INSERT INTO schedules (account_id, loan_id, number, due, payment, principal, interest, balance)
     SELECT $1, l.id, n, (DATE '2026-01-15' + make_interval(months => n))::date, 8884.88, 7884.88, 1000, 100000 - 7884.88 * n
       FROM loans l CROSS JOIN generate_series(1, 12) n WHERE l.account_id = $1`,
    [account],
  );
  await tx.query(
    `INSERT INTO payments (account_id, loan_id, date, amount, type)
     SELECT $1, l.id, (DATE '2026-01-15' + make_interval(months => n))::date, 8884.88, 'regular'
       FROM loans l CROSS JOIN generate_series(1, 10) n WHERE l.account_id = $1 AND n % 3 <> 0`,
    [account],
  );
});
await db.query(`ANALYZE loans, schedules, payments, payment_allocations, fees`);
const today = (await db.query<{ d: string }>(`SELECT loanql_business_date($1)::text AS d`, [account])).rows[0]!.d;
const at = (back: number) => new Date(Date.parse(`${today}T00:00:00Z`) - back * 86_400_000).toISOString().slice(0, 10);
/** Every loan's stored ledger as of `back` days ago (the job's own batch, with that day as the clock). */
async function storeAsOf(back: number): Promise<void> {
  await db.query(`DELETE FROM ledger_job_days WHERE account_id = $1`, [account]);
  await db.transaction(async (tx) => {
    await tx.query(`SELECT set_config('loanql.replaying', 'on', true)`);
    await tx.query(`UPDATE loans SET ledger_as_of = NULL WHERE account_id = $1`, [account]);
  });
  for (let after: string | null = null; ; ) {
    const result: { rows: { n: number; last: string | null }[] } = await db.query<{ n: number; last: string | null }>(
      `SELECT loans_taken AS n, last_id AS last FROM loanql_assess_fees_batch($1, $2::date, $3::uuid, 500)`,
      [account, at(back), after],
    );
    if (result.rows[0]!.n < 500) break;
    after = result.rows[0]!.last;
  }
  await db.query(`INSERT INTO ledger_job_days (account_id, job, business_date) VALUES ($1, 'fees', $2)`, [account, at(back)]);
}
started = Date.now();
await storeAsOf(30);
console.log(`${loans} loans, first replay (every allocation written): ${((Date.now() - started) / 1000).toFixed(1)} s`);
for (const back of [1, 30]) {
  await storeAsOf(back);
  started = Date.now();
  const [run] = await assessFees(db, { accountSlug: slug });
  console.log(`${back} day(s) back → ${today}: ${((Date.now() - started) / 1000).toFixed(1)} s; ${run!.loansReplayed} loans replayed, ${run!.loansForwarded} brought forward, ${run!.feesAssessed} fees (${run!.feesAmount}), ${run!.days.length} days recorded`);
}
await db.close();
