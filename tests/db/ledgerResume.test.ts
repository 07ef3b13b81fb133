import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Database, Queryable } from '../../db/index.js';
import { buildSchedule, type Amortization } from '../../domain/schedule.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';

/**
 * Migration 0034 (issue 29; docs/ledger.md, "Migration 0034"): a write that adds payments after a
 * loan's last one resumes the replay from the state stored after that payment. Generated histories
 * (fixed seed) of writes one statement at a time — payments mostly after the last one, some
 * back-dated, of every type (payoffs and curtailments fall back to a full replay), reversals,
 * manual fees, waivers, the business date moving, a funding source — and after every write the
 * stored ledger (balances, status, lines by position, rows, fees, each payment's distributed
 * totals) equals a full replay's of the same rows (states and versions deleted, replayed, rolled
 * back). Every regular payment after the last one, below the payoff of its day, on a loan whose
 * stored state has no line of its last as-of step, resumes (asserted write by write; 100 of the
 * seed's 307 writes), and at least a tenth of the writes replayed in full.
 */
const RUNS = Number(process.env.LEDGER_RESUME_RUNS ?? 40);
const SEED = 20261126;

let database: TestDatabase;
let db: Database;
let accountId: string;
let products: string[];
let personId: string;

before(async () => {
  database = await openTestDatabase();
  db = database.db;
  accountId = (await db.query<{ id: string }>(`INSERT INTO accounts (slug, name) VALUES ('ledger-resume', 'r') RETURNING id`)).rows[0]!.id;
  products = [
    (await db.query<{ id: string }>(`INSERT INTO products (account_id, name, is_default) VALUES ($1, 'default', true) RETURNING id`, [accountId])).rows[0]!.id,
    (
      await db.query<{ id: string }>(
        `INSERT INTO products (account_id, name, allocation_order, late_fee_grace_days, late_fee_percent, late_fee_fixed, nsf_fee)
         VALUES ($1, 'strict', 'fees_interest_principal', 3, NULL, 25, 30) RETURNING id`,
        [accountId],
      )
    ).rows[0]!.id,
  ];
  personId = (await db.query<{ id: string }>(`INSERT INTO people (account_id, name, email) VALUES ($1, 'Investor', 'i@example.com') RETURNING id`, [accountId])).rows[0]!
    .id;
});
after(() => database?.close());

const day = (iso: string, days: number): string => new Date(Date.parse(`${iso}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

type Step =
  | { readonly kind: 'pay'; readonly days: number; readonly cents: number; readonly type: 'regular' | 'fee' | 'principal' | 'payoff' | 'refund' }
  | { readonly kind: 'reverse'; readonly pick: number; readonly nsf: boolean }
  | { readonly kind: 'fee'; readonly days: number; readonly cents: number }
  | { readonly kind: 'waive'; readonly pick: number }
  | { readonly kind: 'today'; readonly days: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc.record({
      kind: fc.constant('pay' as const),
      days: fc.integer({ min: 0, max: 45 }),
      cents: fc.integer({ min: 1, max: 400_000 }),
      type: fc.constantFrom<'regular' | 'fee' | 'principal' | 'payoff' | 'refund'>('regular', 'regular', 'regular', 'regular', 'fee', 'principal', 'payoff', 'refund'),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('reverse' as const), pick: fc.nat(), nsf: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('fee' as const), days: fc.integer({ min: 0, max: 30 }), cents: fc.integer({ min: 100, max: 10_000 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('waive' as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('today' as const), days: fc.integer({ min: 1, max: 60 }) }) },
);

const history = fc.record({
  term: fc.integer({ min: 3, max: 24 }),
  amortization: fc.constantFrom<Amortization>('amortizing', 'interest_only'),
  product: fc.nat({ max: 1 }),
  funded: fc.boolean(),
  // back-dated payments are one in six
  steps: fc.array(fc.tuple(step, fc.nat({ max: 5 })), { minLength: 4, maxLength: 16 }),
});

/** Everything a replay stores for the loan, in a comparable form. */
async function stored(q: Queryable, loanId: string): Promise<unknown> {
  return (
    await q.query(
      `SELECT l.principal_outstanding::text, l.interest_due::text, l.fees_due::text, l.credit_balance::text, l.oldest_unpaid_due::text,
              l.status, l.date_closed::text, l.ledger_as_of::text, l.days_past_due,
              (SELECT json_agg(json_build_object('p', a.position, 'pay', a.payment_id, 'r', a.row_number, 'f', a.fee_id, 'c', a.component, 'a', a.amount::text)
                               ORDER BY a.position) FROM payment_allocations a WHERE a.account_id = l.account_id AND a.loan_id = l.id) AS lines,
              (SELECT json_agg(json_build_object('n', s.number, 'i', s.interest::text, 'pr', s.principal::text, 'b', s.balance::text,
                                                 'ip', s.interest_paid::text, 'pp', s.principal_paid::text, 'x', s.is_next) ORDER BY s.number)
                 FROM schedules s WHERE s.account_id = l.account_id AND s.loan_id = l.id) AS rows,
              (SELECT json_agg(json_build_object('id', f.id, 'k', f.kind, 'r', f.row_number, 'd', f.date, 'a', f.amount::text, 'p', f.paid::text, 'w', f.waived::text)
                               ORDER BY f.id) FROM fees f WHERE f.account_id = l.account_id AND f.loan_id = l.id) AS fees,
              (SELECT json_agg(d ORDER BY d.payment_id, d.party, d.component) FROM (
                 SELECT d.payment_id, coalesce(d.funding_source_id::text, 'lender') AS party, d.component, sum(d.amount)::text AS amount
                   FROM distributions d WHERE d.account_id = l.account_id AND d.loan_id = l.id GROUP BY 1, 2, 3) d) AS distributed
         FROM loans l WHERE l.account_id = $1 AND l.id = $2`,
      [accountId, loanId],
    )
  ).rows[0];
}

/** A transaction's calls so far of the full ledger and of the resumable one (statistics not yet flushed included). */
async function ledgerCalls(q: Queryable): Promise<{ ledger: number; from: number }> {
  return (
    await q.query<{ ledger: number; from: number }>(
      `SELECT coalesce(pg_stat_get_xact_function_calls('loanql_ledger(uuid, uuid, date)'::regprocedure), 0)::int AS ledger,
              coalesce(pg_stat_get_xact_function_calls('loanql_ledger_from(uuid, uuid, date, loanql_ledger_state)'::regprocedure), 0)::int AS from`,
    )
  ).rows[0]!;
}

/**
 * Whether a regular payment of `amount` on `date` (on or after the loan's last payment) must resume:
 * the loan has a stored state that is still its rows' (its version; since migration 0038 a full
 * replay that wrote nothing stores none), with no line of its last as-of step (credit paying a fee
 * on that day), and the payment is below the payoff of its day (R6 rewrites earlier lines).
 */
async function resumable(loanId: string, date: string, amount: number): Promise<boolean> {
  const row = (
    await db.query<{ ok: boolean }>(
      `SELECT s.version = loanql_ledger_resume_version(s.account_id, s.id, s.state) AND s.lines = (s.state).lines
              AND $3::numeric < (loanql_ledger(s.account_id, s.id, $2::date)).payoff AS ok
         FROM ledger_resume_states s WHERE s.account_id = $1 AND s.id = $4`,
      [accountId, date, amount, loanId],
    )
  ).rows[0];
  return row?.ok === true;
}

/** The ledger a full replay of the same rows stores (rolled back). */
async function fullReplay(loanId: string): Promise<unknown> {
  let result: unknown;
  await db
    .transaction(async (tx) => {
      await tx.query(`DELETE FROM ledger_resume_states WHERE account_id = $1 AND id = $2`, [accountId, loanId]);
      await tx.query(`DELETE FROM ledger_fingerprints WHERE account_id = $1 AND id = $2`, [accountId, loanId]);
      await tx.query(`SELECT loanql_refresh_next(ARRAY[$1::uuid], ARRAY[$2::uuid])`, [accountId, loanId]);
      result = await stored(tx, loanId);
      throw new Error('roll back');
    })
    .catch((error: Error) => {
      if (error.message !== 'roll back') throw error;
    });
  return result;
}

describe('A write after the last payment resumes the replay (migration 0034)', () => {
  it('stores what a full replay of the same rows stores, after every write of generated histories', async () => {
    let resumed = 0;
    let full = 0;
    let writes = 0;
    let regularAfterLast = 0;
    await fc.assert(
      fc.asyncProperty(history, async (h) => {
        const funded = '2025-01-15';
        let today = day(funded, 20);
        await db.query(`SELECT set_config('loanql.business_date', $1, false)`, [today]);
        const schedule = buildSchedule({ amount: '24000', rate: '12', term: h.term, frequency: 'monthly', firstPaymentDate: day(funded, 31), amortization: h.amortization } as never);
        const loanId = (
          await db.query<{ id: string }>(
            `INSERT INTO loans (account_id, name, amount, status, rate, term, frequency, amortization, first_payment_date, date_funded, product_id)
             VALUES ($1, 'r', 24000, 'servicing', 12, $2, 'monthly', $3, $4, $5, $6) RETURNING id`,
            [accountId, h.term, h.amortization, day(funded, 31), funded, products[h.product]],
          )
        ).rows[0]!.id;
        for (const row of schedule.rows) {
          await db.query(`INSERT INTO schedules (account_id, loan_id, number, due, payment, principal, interest, balance) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, [
            accountId, loanId, row.number, row.due, row.payment, row.principal, row.interest, row.balance,
          ]);
        }
        if (h.funded) {
          await db.query(
            `INSERT INTO funding_sources (account_id, person_id, loan_id, rate, original_amount, date_funded) VALUES ($1, $2, $3, 10, 12000, $4)`,
            [accountId, personId, loanId, funded],
          );
        }
        let last = funded;
        for (const [s, backDice] of h.steps) {
          let write: ((tx: Queryable) => Promise<unknown>) | null = null;
          let mustResume = false;
          if (s.kind === 'pay') {
            const back = backDice === 0;
            // Back-dated, but never before the loan was funded (migration 0081 refuses that).
            const earlier = day(last, -s.days);
            const date = back ? (earlier < funded ? funded : earlier) : day(last, s.days);
            if (!back && date > last) last = date;
            const amount = s.type === 'refund' ? (s.cents % 3_000) / 100 + 0.01 : s.cents / 100;
            mustResume = s.type === 'regular' && !back && (await resumable(loanId, date, amount));
            write = (tx) => tx.query(`INSERT INTO payments (account_id, loan_id, date, amount, type) VALUES ($1, $2, $3, $4, $5)`, [accountId, loanId, date, amount, s.type]);
          } else if (s.kind === 'reverse') {
            const open = (await db.query<{ id: string }>(`SELECT id FROM payments WHERE loan_id = $1 AND date_reversed IS NULL ORDER BY date, posted_at, id`, [loanId])).rows;
            if (open.length) {
              const id = open[s.pick % open.length]!.id;
              write = (tx) =>
                tx.query(`UPDATE payments SET date_reversed = greatest(date, $2::date), reversal_reason = $3 WHERE id = $1`, [id, today, s.nsf ? 'nsf' : 'other']);
            }
          } else if (s.kind === 'fee') {
            // Never before the loan was funded (migration 0084 refuses that, as 0081 a payment).
            const earlier = day(today, -s.days);
            write = (tx) =>
              tx.query(`INSERT INTO fees (account_id, loan_id, kind, date, amount, description) VALUES ($1, $2, 'manual', $3, $4, 'm')`, [
                accountId, loanId, earlier < funded ? funded : earlier, s.cents / 100,
              ]);
          } else if (s.kind === 'waive') {
            const open = (await db.query<{ id: string; date: string }>(`SELECT id, date::text FROM fees WHERE loan_id = $1 AND waived_on IS NULL AND amount > paid ORDER BY date, row_number NULLS LAST, created_at, id`, [loanId])).rows;
            if (open.length) {
              const fee = open[s.pick % open.length]!;
              write = (tx) => tx.query(`INSERT INTO fee_waivers (account_id, fee_id, waived_on, waived_by, reason) VALUES ($1, $2, $3, 'tester', 'w')`, [accountId, fee.id, today]);
            }
          } else {
            today = day(today, s.days);
            await db.query(`SELECT set_config('loanql.business_date', $1, false)`, [today]);
            write = (tx) => tx.query(`SELECT loanql_refresh_next(ARRAY[$1::uuid], ARRAY[$2::uuid])`, [accountId, loanId]);
          }
          if (!write) continue;
          const calls = await db
            .transaction(async (tx) => {
              await tx.query(`SET LOCAL track_functions = 'all'`);
              // The counts are read before and after the write: a transaction's function counts are
              // pending statistics, which PostgreSQL flushes at most once a second, so they also hold
              // the calls of earlier transactions (the full replay of the previous check, rolled
              // back) until a flush — counting from 0 made the rate depend on the clock.
              const before = await ledgerCalls(tx);
              await write(tx);
              const counts = await ledgerCalls(tx);
              // resumed: the ledger computed from a state only, never from the first payment
              return counts.ledger === before.ledger && counts.from > before.from ? 1 : 0;
            })
            .catch((error: { code?: string }) => {
              // a refund above the credit, a waiver of a paid fee…: refused, nothing written
              if (error.code === '23514' || error.code === '23503' || error.code === 'P0001') return null;
              throw error;
            });
          if (calls === null) continue;
          writes += 1;
          if (calls > 0) resumed += 1;
          else full += 1;
          if (mustResume) {
            regularAfterLast += 1;
            assert.equal(calls, 1, `a regular payment after the last, below the payoff, resumes (${JSON.stringify(s)})`);
          }
          assert.deepEqual(await stored(db, loanId), await fullReplay(loanId), `after ${JSON.stringify(s)}`);
        }
      }),
      { seed: SEED, numRuns: RUNS, includeErrorInReport: true },
    );
    await db.query(`SELECT set_config('loanql.business_date', '', false)`);
    console.log(`# resumed ${resumed} of ${writes} writes (${full} replayed in full; ${regularAfterLast} regular payments after the last, all resumed)`);
    // every ordinary payment after the last resumed (asserted one by one above), and they are many
    assert.ok(regularAfterLast >= writes / 5, `${regularAfterLast} regular payments after the last of ${writes} writes`);
    assert.ok(full >= writes / 10, `${full} of ${writes} writes replayed in full`);
  });
});
