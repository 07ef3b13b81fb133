import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildSchedule } from '../../domain/schedule.js';
import { tokenHeader } from '../support/http.js';
import { type RestClient } from '../support/restClient.js';
import { exactDataOf, num, send, startKeyedService, type KeyedService } from '../support/seededService.js';

/**
 * SPEC §7 through the REST routes: the reference loan created with POST reads back through
 * `/api/graph` with exactly the reference schedule, regular payment and is_next; PATCH
 * regenerates the schedule when an input changes and keeps given values given. Custom fields
 * of the product are typed and stored with their exact values.
 */
let service: KeyedService;
let rest: RestClient;
let key: string;
let accountId: string;

const REFERENCE = { Name: 'Reference loan', Amount: 100000, Rate: 12, Term: 12, Frequency: 'monthly', Amortization: 'amortizing', Date_Funded: '2026-01-15', Status: 'servicing' };

before(async () => {
  service = await startKeyedService({
    fields: [
      { name: 'Loan Officer', type: 'text', required: true, defaultValue: 'unassigned' },
      { name: 'Property Type', type: 'select', options: ['residential', 'commercial'] },
      { name: 'LTV', type: 'percent' },
      { name: 'Origination Fee', type: 'currency' },
      { name: 'Units', type: 'integer' },
      { name: 'Inspected On', type: 'date' },
      { name: 'Owner Occupied', type: 'boolean' },
    ],
  });
  ({ rest, key, accountId } = service);
});

after(async () => {
  await service?.close();
});

const SCHEDULE_QUERY = `query ($id: uuid!) {
  loans_by_pk(id: $id) {
    regular_payment date_maturity term
    schedules(order_by: {due: asc}) { number due payment principal interest balance is_next }
    next: schedules(where: {is_next: {_eq: true}}) { number }
    schedules_aggregate { aggregate { count sum { interest } } }
  }
}`;

async function graphSchedule(id: string): Promise<any> {
  const answer = await send(`${service.url}/api/graph`, {
    method: 'POST',
    headers: { ...tokenHeader(key), 'content-type': 'application/json' },
    body: JSON.stringify({ query: SCHEDULE_QUERY, variables: { id } }),
  });
  return exactDataOf(answer).loans_by_pk;
}

/** The expected rows as the engine returns them (exact numbers). */
function expectedRows(input: Parameters<typeof buildSchedule>[0], nextNumber: number | null) {
  return buildSchedule(input).rows.map((row) => ({
    number: num(row.number),
    due: row.due,
    payment: num(row.payment),
    principal: num(row.principal),
    interest: num(row.interest),
    balance: num(row.balance),
    is_next: row.number === nextNumber,
  }));
}

describe('the reference loan of SPEC §7 over REST', () => {
  let loanId: string;

  it('POST creates it with the reference schedule, regular payment 8,884.88 and row 1 next', async () => {
    const created = await rest.post('/api/loan', REFERENCE);
    assert.equal(created.status, 201);
    loanId = created.json.loan.id;
    assert.equal(created.json.loan.regular_payment, 8884.88);
    assert.match(created.text, /"regular_payment":8884\.88,/);
    assert.match(created.text, /"amount":100000\.00,/, 'numbers keep their exact digits');
    assert.equal(created.json.loan.date_maturity, '2027-01-15');

    const loan = await graphSchedule(loanId);
    assert.deepEqual(loan.regular_payment, num('8884.88'));
    assert.equal(loan.schedules.length, 12);
    assert.deepEqual(loan.schedules[0], { number: num(1), due: '2026-02-15', payment: num('8884.88'), principal: num('7884.88'), interest: num('1000.00'), balance: num('92115.12'), is_next: true });
    assert.deepEqual(loan.schedules[1], { number: num(2), due: '2026-03-15', payment: num('8884.88'), principal: num('7963.73'), interest: num('921.15'), balance: num('84151.39'), is_next: false });
    assert.deepEqual(loan.schedules[11].payment, num('8884.85'));
    assert.deepEqual(loan.schedules[11].balance, num('0.00'));
    assert.deepEqual(loan.schedules_aggregate.aggregate.sum.interest, num('6618.53'));
    assert.deepEqual(loan.next, [{ number: num(1) }]);
    assert.deepEqual(loan.schedules, expectedRows({ amount: 100000, rate: 12, term: 12, frequency: 'monthly', dateFunded: '2026-01-15' }, 1));
  });

  it('a payment covering the first installment moves is_next to row 2', async () => {
    await service.db.query(`INSERT INTO payments (account_id, loan_id, date, amount) VALUES ($1, $2, '2026-02-15', 8884.88)`, [accountId, loanId]);
    assert.deepEqual((await graphSchedule(loanId)).next, [{ number: num(2) }]);
  });

  it('PATCH of the term regenerates the schedule, re-derives payment and maturity, and keeps is_next right', async () => {
    const patched = await rest.patch(`/api/loan/${loanId}`, { term: 24 });
    assert.equal(patched.status, 200);
    const expected = buildSchedule({ amount: 100000, rate: 12, term: 24, frequency: 'monthly', dateFunded: '2026-01-15' });
    assert.equal(patched.json.loan.term, 24);
    assert.equal(patched.text.includes(`"regular_payment":${expected.regularPayment},`), true, patched.text);
    assert.equal(patched.json.loan.date_maturity, expected.dateMaturity);
    const loan = await graphSchedule(loanId);
    assert.equal(loan.schedules.length, 24);
    // 8,884.88 paid covers row 1 of the new schedule (4,707.35) but not rows 1 and 2 together.
    assert.deepEqual(loan.schedules, expectedRows({ amount: 100000, rate: 12, term: 24, frequency: 'monthly', dateFunded: '2026-01-15' }, 2));
  });

  it('PATCH of a field that is not a schedule input leaves the schedule rows untouched', async () => {
    const { rows: before } = await service.db.query<{ id: string }>('SELECT id FROM schedules WHERE account_id = $1 AND loan_id = $2 ORDER BY number', [accountId, loanId]);
    const patched = await rest.patch(`/api/loan/${loanId}`, { Name: 'Renamed reference', LTV: '65.5' });
    assert.equal(patched.status, 200);
    assert.equal(patched.json.loan.name, 'Renamed reference');
    const { rows: after } = await service.db.query<{ id: string }>('SELECT id FROM schedules WHERE account_id = $1 AND loan_id = $2 ORDER BY number', [accountId, loanId]);
    assert.deepEqual(after, before);
  });

  it('a given Regular_Payment is used and kept across later changes; null makes it derived again', async () => {
    const given = await rest.patch(`/api/loan/${loanId}`, { Regular_Payment: '5000.00' });
    assert.match(given.text, /"regular_payment":5000\.00,/);
    let loan = await graphSchedule(loanId);
    assert.deepEqual(loan.schedules[0].payment, num('5000.00'));
    const rate = await rest.patch(`/api/loan/${loanId}`, { Rate: 10 });
    assert.match(rate.text, /"regular_payment":5000\.00,/, 'still the given payment after a rate change');
    loan = await graphSchedule(loanId);
    assert.deepEqual(loan.schedules[0].interest, num('833.33'));
    const derived = await rest.patch(`/api/loan/${loanId}`, { Regular_Payment: null });
    const expected = buildSchedule({ amount: 100000, rate: 10, term: 24, frequency: 'monthly', dateFunded: '2026-01-15' });
    assert.ok(derived.text.includes(`"regular_payment":${expected.regularPayment},`), derived.text);
  });

  it('clearing a schedule input removes the schedule and the derived fields', async () => {
    const cleared = await rest.patch(`/api/loan/${loanId}`, { Rate: null });
    assert.equal(cleared.status, 200);
    assert.equal(cleared.json.loan.regular_payment, null);
    assert.equal(cleared.json.loan.date_maturity, null);
    assert.equal((await graphSchedule(loanId)).schedules.length, 0);
  });
});

describe('schedules on creation', () => {
  it('no schedule until amount, rate, term, frequency and a start date are all there', async () => {
    const partial = await rest.post('/api/loan', { Name: 'partial', Amount: 5000, Rate: 8, Term: 6 });
    assert.equal(partial.status, 201);
    assert.equal(partial.json.loan.regular_payment, null);
    assert.equal(partial.json.loan.status, 'lead', 'lead is the default status');
    assert.equal(partial.json.loan.amortization, 'amortizing');
    assert.equal((await graphSchedule(partial.json.loan.id)).schedules.length, 0);
    const completed = await rest.patch(`/api/loan/${partial.json.loan.id}`, { Frequency: 'quarterly', First_Payment_Date: '2026-03-31' });
    const loan = await graphSchedule(completed.json.loan.id);
    assert.equal(loan.schedules.length, 6);
    assert.deepEqual(
      loan.schedules.map((row: { due: string }) => row.due),
      buildSchedule({ amount: 5000, rate: 8, term: 6, frequency: 'quarterly', firstPaymentDate: '2026-03-31' }).rows.map((row) => row.due),
    );
    assert.ok(loan.schedules.every((row: { is_next: boolean }) => row.is_next === false), 'a lead has no next row');
  });

  it('interest-only, and a given Date_Maturity must be the schedule\'s last due date', async () => {
    const body = { Name: 'interest only', Amount: '250000.00', Rate: '9.5', Term: 4, Frequency: 'annually', Amortization: 'interest_only', Date_Funded: '2026-06-30' };
    const refused = await rest.post('/api/loan', { ...body, Date_Maturity: '2031-01-01' });
    assert.equal(refused.status, 400, refused.text);
    assert.deepEqual(Object.keys(refused.json.fields), ['Date_Maturity']);
    const created = await rest.post('/api/loan', { ...body, Date_Maturity: '2030-06-30' });
    assert.equal(created.status, 201);
    assert.equal(created.json.loan.date_maturity, '2030-06-30');
    assert.match(created.text, /"regular_payment":23750\.00,/);
    const loan = await graphSchedule(created.json.loan.id);
    assert.deepEqual(loan.schedules.at(-1).payment, num('273750.00'));
  });
});

describe('custom fields of the product', () => {
  it('are stored typed with exact values, defaults applied, and returned under their keys', async () => {
    const created = await rest.post('/api/loan', {
      Name: 'custom fields',
      'Property_Type': 'commercial',
      ltv: 72.125,
      ORIGINATION_FEE: '1250.50',
      Units: 4,
      Inspected_On: '2026-05-01',
      Owner_Occupied: false,
    });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.exact.loan.custom_fields, {
      loan_officer: 'unassigned',
      property_type: 'commercial',
      ltv: num('72.125'),
      origination_fee: num('1250.50'),
      units: num(4),
      inspected_on: '2026-05-01',
      owner_occupied: false,
    });
    const { rows } = await service.db.query<{ t: string }>(`SELECT jsonb_typeof(custom_fields -> 'origination_fee') AS t FROM loans WHERE account_id = $1 AND id = $2`, [accountId, created.json.loan.id]);
    assert.equal(rows[0]!.t, 'number');
    const patched = await rest.patch(`/api/loan/${created.json.loan.id}`, { Units: null, Loan_Officer: 'Kim' });
    assert.deepEqual(patched.exact.loan.custom_fields, {
      loan_officer: 'Kim',
      property_type: 'commercial',
      ltv: num('72.125'),
      origination_fee: num('1250.50'),
      inspected_on: '2026-05-01',
      owner_occupied: false,
    });
  });

  it('the OpenAPI document lists the account\'s custom fields with their types', () => {
    const create = (rest.document as any).components.schemas.LoanCreate.properties;
    assert.deepEqual(create.Property_Type.anyOf[0].enum, ['residential', 'commercial']);
    assert.equal(create.Units.anyOf[0].type, 'integer');
    assert.ok(create.Loan_Officer.description.includes('Required'));
    assert.ok(create.Borrower_Is_Company);
  });
});

describe('GET /api/loan', () => {
  it('pages newest first with total, limit and offset, and filters by status', async () => {
    const client = (await service.newAccount()).rest;
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) ids.push((await client.post('/api/loan', { Name: `L${i}`, Status: i % 2 ? 'closed' : 'servicing' })).json.loan.id);
    const all = await client.get('/api/loan');
    assert.equal(all.json.total, 5);
    assert.equal(all.json.limit, 50);
    assert.equal(all.json.offset, 0);
    assert.deepEqual(all.json.loans.map((loan: { id: string }) => loan.id), [...ids].reverse());
    const page = await client.get('/api/loan?limit=2&offset=1');
    assert.deepEqual(page.json.loans.map((loan: { id: string }) => loan.id), [ids[3], ids[2]]);
    assert.equal(page.json.total, 5);
    const closed = await client.get('/api/loan?status=closed');
    assert.equal(closed.json.total, 2);
    assert.deepEqual(closed.json.loans.map((loan: { name: string }) => loan.name), ['L3', 'L1']);
    const one = await client.get(`/api/loan/${ids[0]}`);
    assert.deepEqual(one.json.loan, all.json.loans[4]);
  });
});
