import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Decimal } from 'decimal.js';
import type { Database } from '../../db/index.js';
import { nextRowIndex } from '../../domain/schedule.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';

/**
 * SPEC §7: for a loan in `servicing`, exactly one schedule row is next while any installment
 * is uncovered (the earliest by due date whose cumulative scheduled total exceeds the loan's
 * non-reversed payments); none otherwise. The database keeps `schedules.is_next` true for any
 * writer, so these tests write with plain SQL and read the flag back.
 */
let database: TestDatabase;
let db: Database;
let accountId: string;

before(async () => {
  database = await openTestDatabase();
  db = database.db;
  accountId = (await db.query<{ id: string }>(`INSERT INTO accounts (slug, name) VALUES ('is-next', 'is_next') RETURNING id`)).rows[0]!.id;
});

after(async () => {
  await database?.close();
});

async function newLoan(status = 'servicing'): Promise<string> {
  const { rows } = await db.query<{ id: string }>(`INSERT INTO loans (account_id, name, status) VALUES ($1, 'Loan', $2) RETURNING id`, [accountId, status]);
  return rows[0]!.id;
}

/** Inserts installments of the given amounts, due monthly from 2024-01-31, in one statement. */
async function addSchedule(loanId: string, payments: readonly string[]): Promise<void> {
  await db.query(
    `INSERT INTO schedules (account_id, loan_id, number, due, payment, principal, interest, balance)
     SELECT $1, $2, n, (date '2024-01-31' + make_interval(months => n::int - 1))::date, p, p, 0, 0
       FROM unnest($3::numeric[]) WITH ORDINALITY AS s(p, n)`,
    [accountId, loanId, payments],
  );
}

async function pay(loanId: string, amount: string, date = '2024-02-01'): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    'INSERT INTO payments (account_id, loan_id, date, amount) VALUES ($1, $2, $3, $4) RETURNING id',
    [accountId, loanId, date, amount],
  );
  return rows[0]!.id;
}

/** The numbers of the loan's rows flagged next (at most one, by the unique index). */
async function nextRows(loanId: string): Promise<number[]> {
  const { rows } = await db.query<{ number: number }>('SELECT number FROM schedules WHERE account_id = $1 AND loan_id = $2 AND is_next ORDER BY number', [
    accountId,
    loanId,
  ]);
  return rows.map((row) => row.number);
}

const statusOf = async (loanId: string): Promise<string> =>
  (await db.query<{ status: string }>('SELECT status FROM loans WHERE account_id = $1 AND id = $2', [accountId, loanId])).rows[0]!.status;

const setStatus = (loanId: string, status: string) => db.query('UPDATE loans SET status = $3 WHERE account_id = $1 AND id = $2', [accountId, loanId, status]);

describe('is_next, kept by the database (SPEC §7)', () => {
  it('marks the first row of a schedule inserted for a servicing loan', async () => {
    const loan = await newLoan();
    await addSchedule(loan, ['100.00', '100.00', '100.00']);
    assert.deepEqual(await nextRows(loan), [1]);
  });

  it('marks no row of a loan that is not servicing, and follows its status', async () => {
    const loan = await newLoan('lead');
    await addSchedule(loan, ['100.00', '100.00', '100.00']);
    assert.deepEqual(await nextRows(loan), []);
    await setStatus(loan, 'servicing');
    assert.deepEqual(await nextRows(loan), [1]);
    await setStatus(loan, 'lead');
    assert.deepEqual(await nextRows(loan), []);
    await setStatus(loan, 'servicing');
    assert.deepEqual(await nextRows(loan), [1]);
    await pay(loan, '100.00');
    assert.deepEqual(await nextRows(loan), [2]);
    // Funded (it took a payment), it is not a lead again (migration 0053).
    await assert.rejects(setStatus(loan, 'lead'), /the loan has taken payments, so it has been funded/);
    assert.deepEqual(await nextRows(loan), [2]);
    // SPEC §12 R9: closing by hand while money is owed is refused, naming it; paid off, the loan closes itself.
    await assert.rejects(setStatus(loan, 'closed'), /still owes principal 200\.00/);
    assert.deepEqual(await nextRows(loan), [2]);
    await pay(loan, '200.00');
    assert.deepEqual(await nextRows(loan), []);
    assert.equal(await statusOf(loan), 'closed');
    await pay(loan, '1.00');
    assert.deepEqual(await nextRows(loan), [], 'overpaid');
    assert.equal(await statusOf(loan), 'overpaid');
  });

  it('moves to the next row only once a row is paid in full', async () => {
    const loan = await newLoan();
    await addSchedule(loan, ['100.00', '100.00', '100.00']);
    await pay(loan, '99.99');
    assert.deepEqual(await nextRows(loan), [1], 'one cent short');
    await pay(loan, '0.01');
    assert.deepEqual(await nextRows(loan), [2], 'paid exactly');
    await pay(loan, '150.00');
    assert.deepEqual(await nextRows(loan), [3], 'an overpayment covers part of the next row');
  });

  it('moves back when a payment is reversed; a reversal cannot be undone (migration 0005), so it stays back', async () => {
    const loan = await newLoan();
    await addSchedule(loan, ['100.00', '100.00', '100.00']);
    const payment = await pay(loan, '100.00');
    assert.deepEqual(await nextRows(loan), [2]);
    await db.query(`UPDATE payments SET date_reversed = '2024-02-05' WHERE account_id = $1 AND id = $2`, [accountId, payment]);
    assert.deepEqual(await nextRows(loan), [1]);
    await assert.rejects(db.query('UPDATE payments SET date_reversed = NULL WHERE account_id = $1 AND id = $2', [accountId, payment]), /a reversal is final/);
    assert.deepEqual(await nextRows(loan), [1]);
  });

  it('moves back when a payment is deleted, or its amount lowered', async () => {
    const loan = await newLoan();
    await addSchedule(loan, ['100.00', '100.00', '100.00']);
    const first = await pay(loan, '100.00');
    const second = await pay(loan, '100.00');
    assert.deepEqual(await nextRows(loan), [3]);
    await db.query('DELETE FROM payments WHERE account_id = $1 AND id = $2', [accountId, second]);
    assert.deepEqual(await nextRows(loan), [2]);
    await db.query('UPDATE payments SET amount = 50 WHERE account_id = $1 AND id = $2', [accountId, first]);
    assert.deepEqual(await nextRows(loan), [1]);
  });

  it('marks no row once every installment is paid', async () => {
    const loan = await newLoan();
    await addSchedule(loan, ['100.00', '100.00', '100.00']);
    await pay(loan, '300.00');
    assert.deepEqual(await nextRows(loan), []);
    await pay(loan, '1.00');
    assert.deepEqual(await nextRows(loan), [], 'overpaid');
  });

  it('follows the due dates, not the row numbers', async () => {
    const loan = await newLoan();
    await db.query(
      `INSERT INTO schedules (account_id, loan_id, number, due, payment, principal, interest, balance)
       VALUES ($1, $2, 1, '2024-03-01', 100, 100, 0, 0), ($1, $2, 2, '2024-01-01', 100, 100, 0, 0)`,
      [accountId, loan],
    );
    assert.deepEqual(await nextRows(loan), [2]);
    await pay(loan, '100.00');
    assert.deepEqual(await nextRows(loan), [1]);
  });

  it('updates every loan a single statement touches', async () => {
    const loans = [await newLoan(), await newLoan(), await newLoan()];
    for (const loan of loans) await addSchedule(loan, ['100.00', '100.00', '100.00']);
    await db.query(
      `INSERT INTO payments (account_id, loan_id, date, amount)
       SELECT $1, l, '2024-02-01', a FROM unnest($2::uuid[], $3::numeric[]) AS t(l, a)`,
      [accountId, [loans[0], loans[1], loans[1], loans[2]], ['100.00', '100.00', '100.00', '300.00']],
    );
    assert.deepEqual([await nextRows(loans[0]!), await nextRows(loans[1]!), await nextRows(loans[2]!)], [[2], [3], []]);
  });

  it('is right after the schedule is regenerated in a transaction', async () => {
    const loan = await newLoan();
    await addSchedule(loan, ['100.00', '100.00', '100.00']);
    await pay(loan, '150.00');
    assert.deepEqual(await nextRows(loan), [2]);
    await db.transaction(async (tx) => {
      await tx.query('DELETE FROM schedules WHERE account_id = $1 AND loan_id = $2', [accountId, loan]);
      await tx.query(
        `INSERT INTO schedules (account_id, loan_id, number, due, payment, principal, interest, balance)
         SELECT $1, $2, n, date '2024-01-31' + n * 30, 50, 50, 0, 0 FROM generate_series(1, 6) n`,
        [accountId, loan],
      );
    });
    assert.deepEqual(await nextRows(loan), [4]);
  });

  it('moves to the following row when the next row is deleted', async () => {
    const loan = await newLoan();
    await addSchedule(loan, ['100.00', '100.00', '100.00']);
    await db.query('DELETE FROM schedules WHERE account_id = $1 AND loan_id = $2 AND number = 1', [accountId, loan]);
    assert.deepEqual(await nextRows(loan), [2]);
  });

  it('follows a change to a row’s amount or due date', async () => {
    const loan = await newLoan();
    await addSchedule(loan, ['100.00', '100.00', '100.00']);
    await pay(loan, '60.00');
    assert.deepEqual(await nextRows(loan), [1]);
    await db.query('UPDATE schedules SET payment = 50 WHERE account_id = $1 AND loan_id = $2 AND number = 1', [accountId, loan]);
    assert.deepEqual(await nextRows(loan), [2]);
    await db.query('UPDATE schedules SET payment = 100 WHERE account_id = $1 AND loan_id = $2 AND number = 1', [accountId, loan]);
    assert.deepEqual(await nextRows(loan), [1]);
    await db.query(`UPDATE schedules SET due = '2023-12-01' WHERE account_id = $1 AND loan_id = $2 AND number = 3`, [accountId, loan]);
    assert.deepEqual(await nextRows(loan), [3]);
  });

  it('updates both loans when a payment moves from one to the other', async () => {
    const from = await newLoan();
    const to = await newLoan();
    await addSchedule(from, ['100.00', '100.00']);
    await addSchedule(to, ['100.00', '100.00']);
    const payment = await pay(from, '100.00');
    assert.deepEqual([await nextRows(from), await nextRows(to)], [[2], [1]]);
    await db.query('UPDATE payments SET loan_id = $3 WHERE account_id = $1 AND id = $2', [accountId, payment, to]);
    assert.deepEqual([await nextRows(from), await nextRows(to)], [[1], [2]]);
  });

  it('agrees with the domain rule after any sequence of payment, reversal, deletion and status changes', async () => {
    type Step =
      | { readonly kind: 'pay'; readonly cents: number }
      | { readonly kind: 'reverse' | 'restore' | 'delete'; readonly pick: number }
      | { readonly kind: 'status'; readonly status: 'lead' | 'servicing' | 'closed' };
    const step: fc.Arbitrary<Step> = fc.oneof(
      fc.record({ kind: fc.constant('pay' as const), cents: fc.integer({ min: 1, max: 40_000 }) }),
      fc.record({ kind: fc.constantFrom('reverse' as const, 'restore' as const, 'delete' as const), pick: fc.nat() }),
      fc.record({ kind: fc.constant('status' as const), status: fc.constantFrom('lead' as const, 'servicing' as const, 'closed' as const) }),
    );
    const installments = fc.array(fc.integer({ min: 0, max: 30_000 }), { minLength: 1, maxLength: 8 });

    await fc.assert(
      fc.asyncProperty(installments, fc.array(step, { maxLength: 10 }), async (scheduleCents, steps) => {
        const loan = await newLoan();
        const rows = scheduleCents.map((cents) => ({ payment: new Decimal(cents).div(100).toFixed(2) }));
        await addSchedule(
          loan,
          rows.map((row) => row.payment),
        );
        let status = 'servicing';
        const payments: { id: string; cents: number; reversed: boolean }[] = [];
        for (const current of steps) {
          if (current.kind === 'pay') {
            const amount = new Decimal(current.cents).div(100).toFixed(2);
            // A lead takes no payment (migration 0050).
            if ((await statusOf(loan)) === 'lead') await assert.rejects(pay(loan, amount), /the loan is a lead/);
            else payments.push({ id: await pay(loan, amount), cents: current.cents, reversed: false });
          } else if (current.kind === 'status') {
            // R9: closing a serviced loan by hand is refused while anything is owed (or held as credit).
            const before = await statusOf(loan);
            const paid = payments.filter((p) => !p.reversed).reduce((sum, p) => sum + p.cents, 0);
            const total = scheduleCents.reduce((sum, cents) => sum + cents, 0);
            const refused = current.status === 'closed' && (before === 'servicing' || before === 'overpaid') && paid !== total;
            // A loan that took a payment is not a lead again (migration 0053).
            const funded = current.status === 'lead' && before !== 'lead' && payments.length > 0;
            // Money owed: "still owes …"; only credit held: "owes nothing but holds credit …" (migration 0078).
            // A loan the ledger settled (every row paid by a live payment) is not put back in servicing by hand (migration 0078).
            const settled = scheduleCents.length > 0 && payments.some((p) => !p.reversed) && paid >= total;
            const reopened = current.status === 'servicing' && (before === 'closed' || before === 'overpaid') && settled;
            if (refused) await assert.rejects(setStatus(loan, current.status), paid > total ? /owes nothing but holds credit/ : /still owes/);
            else if (reopened) await assert.rejects(setStatus(loan, current.status), /the loan is paid off/);
            else if (funded) await assert.rejects(setStatus(loan, current.status), /the loan has taken payments/);
            else await setStatus(loan, current.status);
          } else if (payments.length > 0) {
            const index = current.pick % payments.length;
            const target = payments[index]!;
            if (current.kind === 'delete') {
              await db.query('DELETE FROM payments WHERE account_id = $1 AND id = $2', [accountId, target.id]);
              payments.splice(index, 1);
            } else {
              const write = db.query('UPDATE payments SET date_reversed = $3 WHERE account_id = $1 AND id = $2', [
                accountId,
                target.id,
                current.kind === 'reverse' ? '2024-03-01' : null,
              ]);
              // A reversal is final (migration 0005): any later write of date_reversed is refused.
              if (target.reversed) await assert.rejects(write, /a reversal is final/);
              else {
                await write;
                target.reversed = current.kind === 'reverse';
              }
            }
          }
          const paidCents = payments.filter((p) => !p.reversed).reduce((sum, p) => sum + p.cents, 0);
          // The status as the ledger left it (it closes a paid-off loan and reopens it on a reversal).
          status = await statusOf(loan);
          const expected = nextRowIndex(rows, new Decimal(paidCents).div(100).toFixed(2), status);
          assert.deepEqual(await nextRows(loan), expected === -1 ? [] : [expected + 1], JSON.stringify({ scheduleCents, steps, paidCents, status }));
        }
      }),
      { numRuns: 40 },
    );
  });
});
