/**
 * Writes on the embedded database as it grows, with and without the statistics upkeep
 * (db/statisticsUpkeep.ts). Not part of `npm run bench`:
 *
 *   node --import tsx bench/embeddedGrowth.ts [--loans 300]
 *
 * Two in-memory PGlite databases, migrated (so `migrate`'s ANALYZE leaves every table's statistics
 * empty), each one session for the whole run as the embedded service's is. Both write the same
 * loans: a loan, its 36-row schedule and 10 payments, one statement each, every write replaying
 * the loan (the ledger's triggers). The first loan is written while the tables are empty, so
 * the replay's generic plans are made then. Side "upkeep" runs `analyzeGrownTables` after every
 * 25 loans, as the service's minute timer would on a busy day; side "none" never does. Reported:
 * the process's CPU milliseconds per loan for each hundred loans, per side, and their ratio.
 * The two sides run in turns of 25 loans, so the machine's noise falls on both alike.
 */
import { migrate, analyzeGrownTables, openPgliteDatabase, type Database } from '../db/index.js';
import { buildSchedule } from '../domain/schedule.js';

const LOANS = Number(process.argv[process.argv.indexOf('--loans') + 1] || 300) || 300;
const TURN = 25;

interface Side {
  readonly name: 'none' | 'upkeep';
  readonly db: Database;
  readonly accountId: string;
  /** CPU milliseconds per hundred loans. */
  readonly spent: number[];
}

const cpuMs = (): number => {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
};

async function open(name: Side['name']): Promise<Side> {
  const db = await openPgliteDatabase(undefined);
  await migrate(db);
  const accountId = (await db.query<{ id: string }>(`INSERT INTO accounts (slug, name) VALUES ($1, $1) RETURNING id`, [`growth-${name}`])).rows[0]!.id;
  await db.query(`INSERT INTO products (account_id, name, is_default) VALUES ($1, 'p', true)`, [accountId]);
  return { name, db, accountId, spent: [] };
}

const SCHEDULE = JSON.stringify(buildSchedule({ amount: '100000.00', rate: '8', term: 36, frequency: 'monthly', amortization: 'amortizing', dateFunded: '2024-01-01' } as never).rows);

async function writeLoan({ db, accountId }: Side, payments: number): Promise<void> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO loans (account_id, name, amount, status, rate, term, frequency, amortization, date_funded)
     VALUES ($1, 'growth', 100000, 'servicing', 8, 36, 'monthly', 'amortizing', '2024-01-01') RETURNING id`,
    [accountId],
  );
  const loan = rows[0]!.id;
  await db.query(
    `INSERT INTO schedules (account_id, loan_id, number, due, payment, principal, interest, balance)
     SELECT $1, $2, r.number, r.due, r.payment, r.principal, r.interest, r.balance FROM json_populate_recordset(NULL::schedules, $3::json) r`,
    [accountId, loan, SCHEDULE],
  );
  for (let i = 0; i < payments; i++) {
    await db.query(`INSERT INTO payments (account_id, loan_id, date, amount) VALUES ($1, $2, $3, 3000)`, [accountId, loan, `2024-${String(2 + i).padStart(2, '0')}-01`]);
  }
}

const sides = [await open('none'), await open('upkeep')];
for (const side of sides) await writeLoan(side, 1);
for (let written = 0; written < LOANS; written += TURN) {
  for (const side of sides) {
    const started = cpuMs();
    for (let i = 0; i < TURN; i++) await writeLoan(side, 10);
    if (side.name === 'upkeep') await analyzeGrownTables(side.db);
    const hundred = Math.floor(written / 100);
    side.spent[hundred] = (side.spent[hundred] ?? 0) + (cpuMs() - started);
  }
}
console.log('loans        | none (ms a loan) | upkeep (ms a loan) | none / upkeep');
sides[0]!.spent.forEach((none, i) => {
  const upkeep = sides[1]!.spent[i]!;
  const loans = Math.min(100, LOANS - i * 100);
  console.log(`${String(i * 100 + 1).padStart(4)}–${String(i * 100 + loans).padEnd(7)} | ${(none / loans).toFixed(1).padStart(16)} | ${(upkeep / loans).toFixed(1).padStart(18)} | ${(none / upkeep).toFixed(2)}`);
});
for (const side of sides) await side.db.close();
