/**
 * What carrying the allocation in `payment.posted` costs a write (issue 29). Not part of
 * `npm run bench`.
 *
 *   node --import tsx bench/webhookPayload.ts                            # in-memory PGlite
 *   DATABASE_URL=postgres://… node --import tsx bench/webhookPayload.ts  # PostgreSQL (creates an account, deletes it)
 *   … [--payments 1000] [--pairs 3] [--batch]
 *
 * One writer posts `--payments` payments (one INSERT per transaction, the ledger's replay
 * included), 10 to each of fresh 12-row loans, with an active endpoint subscribed to
 * `payment.posted` and no worker running (capture only), in three modes per round, the order
 * rotating: `allocation` — the shipped payload (allocation lines, their schedule rows, the loan's
 * balances; captured at commit); `columns` — the payment's columns only (captured per row, as
 * before); `no endpoint` — nothing captured. Prints each mode's median time and the ratios.
 * `--batch`: all the payments of a round in one multi-row INSERT (one replay per loan, so the
 * capture is a larger share of the write).
 */
import { fileURLToPath } from 'node:url';
import { createAccount } from '../app/accounts.js';
import { applyEventTriggers, createWebhookEndpoint, setWebhookEndpointActive } from '../app/webhooks/index.js';
import { migrate, openPgliteDatabase, openPostgresDatabase, type Database } from '../db/index.js';
import { loadMetadataFile } from '../metadata/index.js';

const argument = (name: string, fallback: string): string => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 && process.argv[at + 1] ? process.argv[at + 1]! : fallback;
};
const PAYMENTS = Number(argument('payments', '1000'));
const PAIRS = Number(argument('pairs', '3'));
const PER_LOAN = 10;
const BATCH = process.argv.includes('--batch');

const metadata = loadMetadataFile(fileURLToPath(new URL('../metadata/loanql.default.yaml', import.meta.url)));
const shipped = metadata.eventTypes;
const posted = shipped.get('payment.posted')!;
const columnsOnly = new Map(shipped).set('payment.posted', { ...posted, related: [] });

const url = process.env.DATABASE_URL;
const db: Database = url ? openPostgresDatabase({ connectionString: url, maxConnections: 2 }) : await openPgliteDatabase(undefined);
await migrate(db);
const account = await createAccount(db, `bench-payload-${process.pid}`);
const endpoint = await createWebhookEndpoint(db, account.id, { url: 'http://127.0.0.1:9/unused', eventTypes: ['payment.posted'] }, { knownEventTypes: new Set(shipped.keys()), allowPrivate: true });

/** Fresh loans of the reference shape (100,000 at 12 %, 12 monthly, funded 2026-01-15) with their 12 rows. */
async function freshLoans(count: number): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO loans (account_id, name, amount, rate, term, frequency, date_funded, status)
     SELECT $1, 'bench ' || n, 100000, 12, 12, 'monthly', '2026-01-15', 'servicing' FROM generate_series(1, $2) n RETURNING id`,
    [account.id, count],
  );
  const ids = rows.map((row) => row.id);
  await db.query(
    `INSERT INTO schedules (account_id, loan_id, number, due, payment, principal, interest, balance)
     SELECT $1, l, k, ('2026-01-15'::date + k * interval '1 month')::date, 8884.88, 8884.88 - 1000 + k * 10, 1000 - k * 10, 100000 - k * 8000
       FROM unnest($2::uuid[]) l, generate_series(1, 12) k`,
    [account.id, ids],
  );
  return ids;
}

async function round(mode: string): Promise<number> {
  await applyEventTriggers(db, mode === 'columns' ? columnsOnly : shipped);
  await setWebhookEndpointActive(db, endpoint.id, mode !== 'no endpoint', account.id);
  const loans = await freshLoans(PAYMENTS / PER_LOAN);
  const started = performance.now();
  const date = (i: number): string => `2026-${String(2 + (i % 10)).padStart(2, '0')}-15`;
  if (BATCH) {
    await db.query(
      `INSERT INTO payments (account_id, loan_id, date, amount) SELECT $1, l, d, 8884.88 FROM unnest($2::uuid[]) l, unnest($3::date[]) d`,
      [account.id, loans, Array.from({ length: PER_LOAN }, (_, i) => date(i))],
    );
  } else {
    for (let i = 0; i < PER_LOAN; i++) {
      for (const loan of loans) await db.query(`INSERT INTO payments (account_id, loan_id, date, amount) VALUES ($1, $2, $3::date, 8884.88)`, [account.id, loan, date(i)]);
    }
  }
  const elapsed = performance.now() - started;
  await db.query('DELETE FROM webhook_outbox WHERE account_id = $1', [account.id]);
  return elapsed;
}

const modes = ['allocation', 'columns', 'no endpoint'];
const times = new Map(modes.map((mode) => [mode, [] as number[]]));
await round('allocation'); // warm-up
for (let pair = 0; pair < PAIRS; pair++) {
  for (let i = 0; i < modes.length; i++) {
    const mode = modes[(pair + i) % modes.length]!;
    times.get(mode)!.push(await round(mode));
  }
}
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
for (const mode of modes) console.log(`${mode.padEnd(12)} ${PAYMENTS} payments: median ${median(times.get(mode)!).toFixed(0)} ms (${times.get(mode)!.map((t) => t.toFixed(0)).join(', ')})`);
const [a, c, n] = modes.map((mode) => median(times.get(mode)!));
console.log(`allocation / columns: ${(a! / c!).toFixed(3)}; columns / no endpoint: ${(c! / n!).toFixed(3)}; allocation / no endpoint: ${(a! / n!).toFixed(3)}`);
await applyEventTriggers(db, shipped);
if (url) await db.query('DELETE FROM accounts WHERE id = $1', [account.id]);
await db.close();
