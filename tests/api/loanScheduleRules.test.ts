import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { buildSchedule, ScheduleInputError, type Schedule } from '../../domain/schedule.js';
import { type RestAnswer, type RestClient } from '../support/restClient.js';
import { startKeyedService, type KeyedService } from '../support/seededService.js';

/**
 * The edges of SPEC §7 over REST (issue 13), each with its expected values written out: exact
 * half-cent ties, month-end dates anchored on Date_Funded, semi-monthly on the 15th and the last
 * day, and the given values and amounts §7 refuses — 400s naming the field, with nothing written.
 */
let service: KeyedService;
let rest: RestClient;
let accountId: string;

before(async () => {
  service = await startKeyedService();
  ({ rest, accountId } = service);
});

after(async () => {
  await service?.close();
});

interface StoredRow {
  due: string;
  payment: string;
  principal: string;
  interest: string;
  balance: string;
}

async function storedRows(loanId: string): Promise<StoredRow[]> {
  const { rows } = await service.db.query<StoredRow>(
    `SELECT due::text AS due, payment::text AS payment, principal::text AS principal, interest::text AS interest, balance::text AS balance
       FROM schedules WHERE account_id = $1 AND loan_id = $2 ORDER BY number`,
    [accountId, loanId],
  );
  return rows;
}

async function storedLoan(loanId: string): Promise<Record<string, unknown>> {
  const { rows } = await service.db.query(
    `SELECT amount::text AS amount, rate::text AS rate, term, regular_payment::text AS regular_payment, date_maturity::text AS date_maturity, updated_at::text AS updated_at
       FROM loans WHERE account_id = $1 AND id = $2`,
    [accountId, loanId],
  );
  return rows[0]!;
}

/** Everything the account holds that a refused write could have changed. */
async function snapshot(): Promise<unknown> {
  const loans = await service.db.query(`SELECT id, amount::text, rate::text, term, regular_payment::text, date_maturity::text, updated_at::text FROM loans WHERE account_id = $1 ORDER BY id`, [accountId]);
  const rows = await service.db.query(`SELECT loan_id, number, due::text, payment::text, balance::text, is_next FROM schedules WHERE account_id = $1 ORDER BY loan_id, number`, [accountId]);
  return { loans: loans.rows, rows: rows.rows };
}

/** A loan needs a name (issue 28); these bodies are about the schedule. */
const named = (body: Record<string, unknown>): Record<string, unknown> => ({ Name: 'schedule rules', ...body });

async function created(body: Record<string, unknown>): Promise<{ id: string; answer: RestAnswer }> {
  const answer = await rest.post('/api/loan', named(body));
  assert.equal(answer.status, 201, answer.text);
  return { id: answer.json.loan.id, answer };
}

function assertRefused(answer: RestAnswer, fields: readonly string[]): void {
  assert.equal(answer.status, 400, answer.text);
  assert.deepEqual(Object.keys(answer.json.fields).sort(), [...fields].sort(), answer.text);
  for (const field of fields) assert.ok(answer.json.fields[field].length > 10, `a reason for ${field}`);
}

async function assertPostRefused(body: Record<string, unknown>, fields: readonly string[]): Promise<void> {
  const before = await snapshot();
  assertRefused(await rest.post('/api/loan', named(body)), fields);
  assert.deepEqual(await snapshot(), before, 'nothing written');
}

async function assertPatchRefused(loanId: string, body: Record<string, unknown>, fields: readonly string[]): Promise<void> {
  const before = await snapshot();
  assertRefused(await rest.patch(`/api/loan/${loanId}`, body), fields);
  assert.deepEqual(await snapshot(), before, 'nothing written');
}

describe('1. half-cent payments round up, exactly', () => {
  it('1,000 at 6.25 % quarterly, 1 payment = 1,015.625 → regular payment and row 1,015.63', async () => {
    const { id, answer } = await created({ Amount: 1000, Rate: 6.25, Term: 1, Frequency: 'quarterly', First_Payment_Date: '2026-03-31' });
    assert.match(answer.text, /"regular_payment":1015\.63,/);
    assert.deepEqual(await storedRows(id), [{ due: '2026-03-31', payment: '1015.63', principal: '1000.00', interest: '15.63', balance: '0.00' }]);
  });

  it('360,390 at 2.6 % monthly, 2 payments = 180,780.845 → 180,780.85 / 180,000.00 / 180,390.00', async () => {
    const { id, answer } = await created({ Amount: '360390', Rate: '2.6', Term: 2, Frequency: 'monthly', Date_Funded: '2026-01-15' });
    assert.match(answer.text, /"regular_payment":180780\.85,/);
    assert.deepEqual(await storedRows(id), [
      { due: '2026-02-15', payment: '180780.85', principal: '180000.00', interest: '780.85', balance: '180390.00' },
      { due: '2026-03-15', payment: '180780.85', principal: '180390.00', interest: '390.85', balance: '0.00' },
    ]);
  });
});

describe('2. month-end is kept when counting from Date_Funded', () => {
  it('funded 2024-01-31 monthly → Feb 29, Mar 31, Apr 30', async () => {
    const { id, answer } = await created({ Amount: 3000, Rate: 0, Term: 3, Frequency: 'monthly', Date_Funded: '2024-01-31' });
    assert.deepEqual((await storedRows(id)).map((row) => row.due), ['2024-02-29', '2024-03-31', '2024-04-30']);
    assert.equal(answer.json.loan.date_maturity, '2024-04-30');
  });

  it('funded 2024-02-29 annually returns to Feb 29 in 2028', async () => {
    const { id } = await created({ Amount: 4000, Rate: 5, Term: 4, Frequency: 'annually', Date_Funded: '2024-02-29' });
    assert.deepEqual((await storedRows(id)).map((row) => row.due), ['2025-02-28', '2026-02-28', '2027-02-28', '2028-02-29']);
  });
});

describe('3. semi-monthly is the 15th and the month’s last day', () => {
  it('from 2025-01-15: 01-15, 2025-01-31, 02-15, 02-28, 03-15, 03-31 — two payments in every month', async () => {
    const { id, answer } = await created({ Amount: 6000, Rate: 12, Term: 6, Frequency: 'semi_monthly', First_Payment_Date: '2025-01-15' });
    assert.deepEqual((await storedRows(id)).map((row) => row.due), ['2025-01-15', '2025-01-31', '2025-02-15', '2025-02-28', '2025-03-15', '2025-03-31']);
    assert.equal(answer.json.loan.date_maturity, '2025-03-31');
  });

  it('without First_Payment_Date the first due date is Date_Funded + 15 days (2025-01-16 → 01-31, then the 16th and the last day)', async () => {
    const { id } = await created({ Amount: 4000, Rate: 0, Term: 4, Frequency: 'semi_monthly', Date_Funded: '2025-01-16' });
    assert.deepEqual((await storedRows(id)).map((row) => row.due), ['2025-01-31', '2025-02-16', '2025-02-28', '2025-03-16']);
  });
});

describe('4. given values the schedule must agree with', () => {
  it('a Regular_Payment on an interest_only loan is a 400 naming it', async () => {
    await assertPostRefused(
      { Amount: 100000, Rate: 6, Term: 12, Frequency: 'monthly', Amortization: 'interest_only', Date_Funded: '2026-01-15', Regular_Payment: 500 },
      ['Regular_Payment'],
    );
    // also before the schedule can be built
    await assertPostRefused({ Amortization: 'interest_only', Regular_Payment: 500 }, ['Regular_Payment']);
  });

  it('a Regular_Payment not above the first row\'s interest is a 400 in the body\'s words (Regular_Payment, not regularPayment)', async () => {
    const answer = await rest.post('/api/loan', named({ Amount: 100000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Regular_Payment: 1000 }));
    assert.equal(answer.status, 400, answer.text);
    assert.match(answer.json.error, /Regular_Payment 1000\.00 must exceed the first row's interest 1000\.00/);
    assert.doesNotMatch(answer.text, /regularPayment/);
  });

  it('PATCH to interest_only of a loan with a given Regular_Payment names both', async () => {
    const { id } = await created({ Amount: 10000, Rate: 6, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Regular_Payment: 2000 });
    await assertPatchRefused(id, { Amortization: 'interest_only' }, ['Regular_Payment', 'Amortization']);
    const fixed = await rest.patch(`/api/loan/${id}`, { Amortization: 'interest_only', Regular_Payment: null });
    assert.equal(fixed.status, 200, fixed.text);
    assert.match(fixed.text, /"regular_payment":50\.00,/);
  });

  it('a Date_Maturity other than the schedule’s last date is a 400; the same date is accepted', async () => {
    const body = { Amount: '250000.00', Rate: '9.5', Term: 4, Frequency: 'annually', Amortization: 'interest_only', Date_Funded: '2026-06-30' };
    await assertPostRefused({ ...body, Date_Maturity: '2031-01-01' }, ['Date_Maturity']);
    const { id, answer } = await created({ ...body, Date_Maturity: '2030-06-30' });
    assert.equal(answer.json.loan.date_maturity, '2030-06-30');
    await assertPatchRefused(id, { Date_Maturity: '2030-07-01' }, ['Date_Maturity']);
    // a given maturity stays given: a term that moves the last date is refused until it is cleared
    await assertPatchRefused(id, { Term: 5 }, ['Date_Maturity']);
    const cleared = await rest.patch(`/api/loan/${id}`, { Term: 5, Date_Maturity: null });
    assert.equal(cleared.status, 200, cleared.text);
    assert.equal(cleared.json.loan.date_maturity, '2031-06-30');
  });

  it('a given amortizing payment that pays off early ends the schedule on that row (no 0.00 rows), maturing then', async () => {
    const { id, answer } = await created({ Amount: 1000, Rate: 12, Term: 4, Frequency: 'monthly', First_Payment_Date: '2026-01-31', Regular_Payment: 600 });
    assert.deepEqual(await storedRows(id), [
      { due: '2026-01-31', payment: '600.00', principal: '590.00', interest: '10.00', balance: '410.00' },
      { due: '2026-02-28', payment: '414.10', principal: '410.00', interest: '4.10', balance: '0.00' },
    ]);
    assert.equal(answer.json.loan.date_maturity, '2026-02-28');
    assert.equal(answer.json.loan.term, 4, 'the term as given is kept');
  });

  it('a given Regular_Payment that does not exceed the first row’s interest is a 400', async () => {
    const loan = { Amount: 100000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15' };
    await assertPostRefused({ ...loan, Regular_Payment: '1000.00' }, ['Regular_Payment', 'Amount', 'Rate']);
    await created({ ...loan, Regular_Payment: '1000.01' });
  });

  it('Date_Funded after First_Payment_Date is a 400 naming both; the same day is accepted', async () => {
    await assertPostRefused({ Amount: 1000, Rate: 5, Term: 6, Frequency: 'monthly', Date_Funded: '2026-02-01', First_Payment_Date: '2026-01-31' }, [
      'Date_Funded',
      'First_Payment_Date',
    ]);
    await assertPostRefused({ Date_Funded: '2026-02-01', First_Payment_Date: '2026-01-31' }, ['Date_Funded', 'First_Payment_Date']);
    const { id } = await created({ Amount: 1000, Rate: 5, Term: 6, Frequency: 'monthly', Date_Funded: '2026-01-31', First_Payment_Date: '2026-01-31' });
    await assertPatchRefused(id, { Date_Funded: '2026-02-01' }, ['Date_Funded', 'First_Payment_Date']);
  });

  it('a payment that rounds to 0.00 is a 400: Amount 0.01 at 12 % × 12', async () => {
    await assertPostRefused({ Amount: 0.01, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15' }, ['Amount']);
  });
});

describe('5. amounts past numeric(14,2) are 400s, not 500s', () => {
  it('999,999,999,999.99 at 100 % annually, 1 payment: the payment would be 1,999,999,999,999.98', async () => {
    await assertPostRefused({ Amount: 999999999999.99, Rate: 100, Term: 1, Frequency: 'annually', Date_Funded: '2024-01-01' }, ['Amount', 'Rate']);
  });

  it('an interest-only last payment (900,000,000,000 at 20 %, 1 year) and a total of payments (at 2 %, 10 years) past it', async () => {
    await assertPostRefused({ Amount: 900000000000, Rate: 20, Term: 1, Frequency: 'annually', Amortization: 'interest_only', Date_Funded: '2024-01-01' }, ['Amount', 'Rate']);
    await assertPostRefused({ Amount: 900000000000, Rate: 2, Term: 10, Frequency: 'annually', Date_Funded: '2024-01-01' }, ['Amount', 'Rate', 'Term']);
  });

  it('PATCH {"Rate": 500} on a large loan is a 400 naming Rate, and the loan and its schedule stay as they were', async () => {
    const { id } = await created({ Amount: 500000000000, Rate: 5, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15' });
    const before = { loan: await storedLoan(id), rows: await storedRows(id) };
    // 500 % a year: payments of about 212,000,000,000 a month, 2 × 10^12 of interest in total
    await assertPatchRefused(id, { Rate: 500 }, ['Amount', 'Rate', 'Term']);
    const { id: single } = await created({ Amount: 900000000000, Rate: 5, Term: 1, Frequency: 'monthly', Date_Funded: '2026-01-15' });
    await assertPatchRefused(single, { Rate: 500 }, ['Amount', 'Rate']); // one payment of 1,275,000,000,000
    assert.deepEqual({ loan: await storedLoan(id), rows: await storedRows(id) }, before);
  });
});

describe('random loans over REST store exactly the schedule domain/ computes (fast-check, seed 13)', () => {
  const BODY_NAMES = new Map([
    ['amount', 'Amount'],
    ['rate', 'Rate'],
    ['term', 'Term'],
    ['frequency', 'Frequency'],
    ['amortization', 'Amortization'],
    ['dateFunded', 'Date_Funded'],
    ['firstPaymentDate', 'First_Payment_Date'],
    ['regularPayment', 'Regular_Payment'],
  ]);
  const day = fc.oneof(fc.integer({ min: 28, max: 31 }), fc.integer({ min: 1, max: 31 }));
  const date = fc
    .tuple(fc.integer({ min: 2020, max: 2030 }), fc.integer({ min: 1, max: 12 }), day)
    .map(([y, m, d]) => `${y}-${String(m).padStart(2, '0')}-${String(Math.min(d, new Date(Date.UTC(y, m, 0)).getUTCDate())).padStart(2, '0')}`);
  const loan = fc
    .record(
      {
        Amount: fc.oneof(fc.integer({ min: 1, max: 5000 }).map((c) => (c / 100).toFixed(2)), fc.integer({ min: 1000, max: 99_999_999 }).map(String), fc.constant('999999999999.99')),
        Rate: fc.tuple(fc.integer({ min: 0, max: 60 }), fc.integer({ min: 0, max: 9999 })).map(([w, f]) => `${w}.${String(f).padStart(4, '0')}`),
        Term: fc.integer({ min: 1, max: 400 }),
        Frequency: fc.constantFrom('monthly', 'quarterly', 'semi_monthly', 'biweekly', 'weekly', 'annually'),
        Amortization: fc.constantFrom('amortizing', 'interest_only'),
        Date_Funded: date,
        First_Payment_Date: date,
        // a share of the amount, in 1/10,000
        Regular_Payment: fc.integer({ min: 50, max: 12_000 }),
      },
      { requiredKeys: ['Amount', 'Rate', 'Term', 'Frequency'] },
    )
    .map(({ Regular_Payment: share, ...body }) => {
      const sometimes = body.Term % 6 === 0; // the refusals of §7 now and then, not all the time
      const out: Record<string, unknown> & { Amount: string; Rate: string; Term: number; Frequency: string; Amortization?: string; Date_Funded?: string; First_Payment_Date?: string; Regular_Payment?: string } = { ...body };
      if (out.Date_Funded && out.First_Payment_Date && out.Date_Funded > out.First_Payment_Date && !sometimes) {
        [out.Date_Funded, out.First_Payment_Date] = [out.First_Payment_Date, out.Date_Funded];
      }
      if (share !== undefined && (out.Amortization !== 'interest_only' || sometimes)) {
        const amountCents = out.Amount.includes('.') ? BigInt(out.Amount.replace('.', '')) : BigInt(out.Amount) * 100n;
        const cents = (amountCents * BigInt(share)) / 10_000n;
        if (cents > 0n && cents < 100_000_000_000_000n) out.Regular_Payment = `${cents / 100n}.${String(cents % 100n).padStart(2, '0')}`;
      }
      return out;
    });

  it('every row, regular payment and maturity, or the same refusal naming the same fields', async (t) => {
    const seen = { created: 0, refused: 0 };
    await fc.assert(
      fc.asyncProperty(loan, async (body) => {
        fc.pre(body.Date_Funded !== undefined || body.First_Payment_Date !== undefined);
        let expected: Schedule | ScheduleInputError;
        try {
          expected = buildSchedule({
            amount: body.Amount,
            rate: body.Rate,
            term: body.Term,
            frequency: body.Frequency as never,
            amortization: (body.Amortization ?? null) as never,
            dateFunded: body.Date_Funded ?? null,
            firstPaymentDate: body.First_Payment_Date ?? null,
            regularPayment: body.Regular_Payment ?? null,
          });
        } catch (error) {
          if (!(error instanceof ScheduleInputError)) throw error;
          expected = error;
        }
        const answer = await rest.post('/api/loan', named(body));
        if (expected instanceof ScheduleInputError) {
          // The same fields; when the loan also breaks the rules checked before the schedule is
          // built (interest_only with a payment, dates in the wrong order) those are named too.
          assert.equal(answer.status, 400, answer.text);
          const named = new Set(Object.keys(answer.json.fields));
          for (const field of expected.fields) assert.ok(named.has(BODY_NAMES.get(field)!), `${answer.text} names ${field}`);
          const alsoAllowed = new Set([...expected.fields.map((field) => BODY_NAMES.get(field)!), 'Regular_Payment', 'Date_Funded', 'First_Payment_Date']);
          for (const name of named) assert.ok(alsoAllowed.has(name), `${answer.text}: ${name}`);
          seen.refused++;
          return;
        }
        assert.equal(answer.status, 201, answer.text);
        seen.created++;
        assert.ok(answer.text.includes(`"regular_payment":${expected.regularPayment},`), answer.text);
        assert.equal(answer.json.loan.date_maturity, expected.dateMaturity);
        assert.deepEqual(
          await storedRows(answer.json.loan.id),
          expected.rows.map(({ due, payment, principal, interest, balance }) => ({ due, payment, principal, interest, balance })),
        );
      }),
      { seed: 13, numRuns: 120 },
    );
    assert.ok(seen.created >= 40 && seen.refused >= 10, JSON.stringify(seen));
    t.diagnostic(JSON.stringify(seen));
  });
});
