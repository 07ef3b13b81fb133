import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createAccount } from '../../app/accounts.js';
import { createDefaultProduct } from '../../app/products.js';
import { createLoan } from '../../app/loanWrites.js';
import { verifyLedgers } from '../../app/ledgerVerify.js';
import { migrate, openPostgresDatabase, type Database } from '../../db/index.js';
import { createServerDatabase, openTestDatabase, testDatabaseKind } from '../support/testDatabase.js';

/**
 * Issue 29, Done-when 3: 20 concurrent posts and reversals on one loan, each in its own
 * transaction (some rolled back), end with exactly the ledger a serial replay of the committed
 * payments gives. On PostgreSQL (`TEST_DATABASE_URL`) the transactions run on 20 connections and
 * really overlap: each writes, then holds its transaction a little, so the others queue on the
 * loan's row lock (`loanql_refresh_next`, FOR NO KEY UPDATE) and replay after it commits. On PGlite
 * the one session runs them one after another; the result must hold all the same.
 *
 * "The ledger a serial replay gives" is checked three ways: the stored rows equal `loanql_ledger`
 * computed afresh (`verifyLedgers`); replaying again (`loanql_refresh_next`) changes no stored row;
 * and a second loan with the same terms, given the committed payments one at a time (same dates,
 * amounts, types, posting times, reversals), stores the same allocations, balances and rows.
 */
const CONCURRENT = 20;
const INITIAL = 10;

let db: Database;
let close: () => Promise<void>;
let accountId: string;

before(async () => {
  if (process.env.TEST_DATABASE_URL) {
    const created = await createServerDatabase(process.env.TEST_DATABASE_URL);
    db = openPostgresDatabase({ connectionString: created.url, maxConnections: CONCURRENT + 2 });
    await migrate(db);
    close = async () => {
      await db.close();
      await created.drop();
    };
  } else {
    const opened = await openTestDatabase();
    db = opened.db;
    close = () => opened.close();
  }
  const account = await createAccount(db, 'race');
  accountId = account.id;
  await createDefaultProduct(db, accountId, []);
  // NSF reversals add a fee, so reversals also move fees and their allocation lines.
  await db.query(`UPDATE products SET nsf_fee = 25 WHERE account_id = $1`, [accountId]);
});

after(async () => {
  await close?.();
});

const LOAN = { Name: 'concurrent', Amount: 100000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' };

/** Everything the replay stores for a loan, payments and fees named by `name` (their ids differ between loans). */
async function ledgerOf(loanId: string, name: (id: string | null) => string | null = (id) => id): Promise<unknown> {
  const loan = await db.query(
    `SELECT status, date_closed::text, principal_outstanding::text, interest_due::text, fees_due::text, credit_balance::text, oldest_unpaid_due::text
       FROM loans WHERE account_id = $1 AND id = $2`,
    [accountId, loanId],
  );
  const lines = await db.query<{ payment_id: string | null; fee_payment: string | null; fee_kind: string | null }>(
    `SELECT pa.position, pa.payment_id, pa.row_number, f.kind AS fee_kind, f.payment_id AS fee_payment, f.date::text AS fee_date, pa.component, pa.amount::text
       FROM payment_allocations pa LEFT JOIN fees f ON f.account_id = pa.account_id AND f.id = pa.fee_id
      WHERE pa.account_id = $1 AND pa.loan_id = $2 ORDER BY pa.position`,
    [accountId, loanId],
  );
  const rows = await db.query(
    `SELECT number, due::text, interest::text, principal::text, payment::text, balance::text, interest_paid::text, principal_paid::text, is_next
       FROM schedules WHERE account_id = $1 AND loan_id = $2 ORDER BY number`,
    [accountId, loanId],
  );
  const fees = await db.query<{ payment_id: string | null }>(
    `SELECT kind, payment_id, date::text, amount::text, paid::text, waived::text FROM fees WHERE account_id = $1 AND loan_id = $2 ORDER BY date, payment_id`,
    [accountId, loanId],
  );
  return {
    loan: loan.rows[0],
    lines: lines.rows.map((line) => ({ ...line, payment_id: name(line.payment_id), fee_payment: name(line.fee_payment) })),
    rows: rows.rows,
    fees: fees.rows.map((fee) => ({ ...fee, payment_id: name(fee.payment_id) })),
  };
}

async function pay(loanId: string, date: string, amount: string): Promise<string> {
  const { rows } = await db.query<{ id: string }>(`INSERT INTO payments (account_id, loan_id, date, amount) VALUES ($1, $2, $3, $4) RETURNING id`, [accountId, loanId, date, amount]);
  return rows[0]!.id;
}

describe(`ledger under concurrent writes to one loan (${testDatabaseKind})`, () => {
  it(`${CONCURRENT} concurrent posts and reversals end with the ledger of a serial replay of the committed payments`, { timeout: 120_000 }, async () => {
    const loanId = (await createLoan(db, accountId, LOAN)).id;
    const initial: string[] = [];
    for (let i = 0; i < INITIAL; i += 1) initial.push(await pay(loanId, `2026-${String(2 + i).padStart(2, '0')}-15`, '8884.88'));

    class RolledBack extends Error {}
    const outcomes = await Promise.allSettled(
      Array.from({ length: CONCURRENT }, (_, i) =>
        db.transaction(async (tx) => {
          // Every transaction has begun before any writes (on PostgreSQL, where they overlap).
          await tx.query(`SELECT pg_sleep(0.05)`);
          if (i % 2 === 0) {
            const date = `2026-${String(2 + (i % 10)).padStart(2, '0')}-${String(10 + i).padStart(2, '0')}`;
            const type = i % 6 === 4 ? 'principal' : 'regular';
            await tx.query(`INSERT INTO payments (account_id, loan_id, date, amount, type) VALUES ($1, $2, $3, $4, $5)`, [
              accountId,
              loanId,
              date,
              (2000 + i * 137.11).toFixed(2),
              type,
            ]);
          } else {
            const reversed = await tx.query(
              `UPDATE payments SET date_reversed = date '2026-11-15' + ($3::int % 10), reversal_reason = $4 WHERE account_id = $1 AND id = $2 AND date_reversed IS NULL`,
              [accountId, initial[(i - 1) / 2]!, i, i % 4 === 1 ? 'nsf' : 'error'],
            );
            assert.equal(reversed.rowCount, 1);
          }
          // The loan's row is locked now (the replay took it): hold it, so the others queue behind.
          await tx.query(`SELECT pg_sleep(random() * 0.02)`);
          if (i % 7 === 6) throw new RolledBack();
        }),
      ),
    );
    for (const [i, outcome] of outcomes.entries()) {
      if (i % 7 === 6) assert.ok(outcome.status === 'rejected' && outcome.reason instanceof RolledBack, `transaction ${i} rolled back`);
      else assert.equal(outcome.status, 'fulfilled', `transaction ${i}: ${outcome.status === 'rejected' ? String(outcome.reason) : ''}`);
    }
    const committedPosts = Array.from({ length: CONCURRENT }, (_, i) => i).filter((i) => i % 2 === 0 && i % 7 !== 6).length;
    const committedReversals = Array.from({ length: CONCURRENT }, (_, i) => i).filter((i) => i % 2 === 1 && i % 7 !== 6).length;
    const counts = await db.query<{ payments: number; reversed: number; nsf: number }>(
      `SELECT count(*)::int AS payments, count(date_reversed)::int AS reversed, count(*) FILTER (WHERE reversal_reason = 'nsf')::int AS nsf
         FROM payments WHERE account_id = $1 AND loan_id = $2`,
      [accountId, loanId],
    );
    assert.deepEqual(counts.rows[0], {
      payments: INITIAL + committedPosts,
      reversed: committedReversals,
      nsf: Array.from({ length: CONCURRENT }, (_, i) => i).filter((i) => i % 2 === 1 && i % 7 !== 6 && i % 4 === 1).length,
    });

    // 1. What is stored is what loanql_ledger computes afresh.
    const report = await verifyLedgers(db, { accountId });
    assert.deepEqual(report.differing, []);

    // 2. Every applied payment is allocated in full (its lines, credit included, sum to it).
    const sums = await db.query<{ id: string; amount: string; allocated: string | null }>(
      `SELECT p.id, p.amount::text, (SELECT sum(pa.amount) FROM payment_allocations pa WHERE pa.account_id = p.account_id AND pa.payment_id = p.id)::text AS allocated
         FROM payments p WHERE p.account_id = $1 AND p.loan_id = $2 AND p.date_reversed IS NULL`,
      [accountId, loanId],
    );
    for (const row of sums.rows) assert.equal(Number(row.allocated), Number(row.amount), `payment ${row.id}`);
    const unapplied = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM payment_allocations pa JOIN payments p ON p.account_id = pa.account_id AND p.id = pa.payment_id
        WHERE pa.account_id = $1 AND pa.loan_id = $2 AND p.date_reversed IS NOT NULL`,
      [accountId, loanId],
    );
    assert.equal(unapplied.rows[0]!.n, 0, 'no line of a reversed payment');

    // 3. Replaying again changes nothing stored.
    const stored = await ledgerOf(loanId);
    await db.query(`SELECT loanql_refresh_next(ARRAY[$1::uuid], ARRAY[$2::uuid])`, [accountId, loanId]);
    assert.deepEqual(await ledgerOf(loanId), stored);

    // 4. A loan with the same terms given the committed payments serially stores the same ledger.
    const twinId = (await createLoan(db, accountId, LOAN)).id;
    const committed = await db.query<{ id: string; date: string; amount: string; type: string; posted_at: string; date_reversed: string | null; reversal_reason: string | null }>(
      `SELECT id, date::text, amount::text, type, posted_at::text, date_reversed::text, reversal_reason
         FROM payments WHERE account_id = $1 AND loan_id = $2 ORDER BY posted_at, id`,
      [accountId, loanId],
    );
    const twinOf = new Map<string, string>();
    for (const p of committed.rows) {
      const { rows } = await db.query<{ id: string }>(
        `INSERT INTO payments (account_id, loan_id, date, amount, type, posted_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
        [accountId, twinId, p.date, p.amount, p.type, p.posted_at],
      );
      twinOf.set(rows[0]!.id, p.id);
    }
    for (const p of committed.rows.filter((p) => p.date_reversed !== null).sort((a, b) => a.date_reversed!.localeCompare(b.date_reversed!))) {
      const twin = [...twinOf].find(([, original]) => original === p.id)![0];
      await db.query(`UPDATE payments SET date_reversed = $3, reversal_reason = $4 WHERE account_id = $1 AND id = $2`, [accountId, twin, p.date_reversed, p.reversal_reason]);
    }
    const twinLedger = await ledgerOf(twinId, (id) => (id === null ? null : (twinOf.get(id) ?? id)));
    assert.deepEqual(twinLedger, stored);
  });
});
