import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type RestAnswer, type RestClient } from '../support/restClient.js';
import { startKeyedService, type KeyedService } from '../support/seededService.js';

/**
 * SPEC §6: bad input (unknown field, wrong type, bad enum value, non-object body, malformed
 * JSON) gets a 400 whose JSON body names each offending field, and nothing is written —
 * checked by counting every table a loan write touches, before and after, and by comparing
 * the patched loan's whole row.
 */
let service: KeyedService;
let rest: RestClient;
let accountId: string;
let loanId: string;

before(async () => {
  service = await startKeyedService({
    fields: [
      { name: 'Property Type', type: 'select', options: ['residential', 'commercial'] },
      { name: 'Units', type: 'integer' },
      { name: 'Loan Officer', type: 'text', required: true },
    ],
  });
  ({ rest, accountId } = service);
  const created = await rest.post('/api/loan', {
    Name: 'existing', Amount: 1000, Rate: 5, Term: 3, Frequency: 'monthly', Date_Funded: '2026-01-01', Loan_Officer: 'Lee', Borrower_Name: 'Existing Borrower',
  });
  assert.equal(created.status, 201, created.text);
  loanId = created.json.loan.id;
});

after(async () => {
  await service?.close();
});

const TABLES = ['loans', 'people', 'borrows', 'guarantees', 'company_memberships', 'schedules', 'products', 'product_fields'] as const;

/** Row counts of every table a loan write touches, plus the existing loan's whole row. */
async function snapshot(): Promise<Record<string, unknown>> {
  const counts: Record<string, unknown> = {};
  for (const table of TABLES) {
    const { rows } = await service.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE account_id = $1`, [accountId]);
    counts[table] = rows[0]!.n;
  }
  const { rows } = await service.db.query('SELECT to_jsonb(l) AS row FROM loans l WHERE account_id = $1 AND id = $2', [accountId, loanId]);
  counts.loan = rows[0];
  const schedule = await service.db.query('SELECT jsonb_agg(s ORDER BY number) AS rows FROM schedules s WHERE account_id = $1 AND loan_id = $2', [accountId, loanId]);
  counts.schedule = schedule.rows[0];
  return counts;
}

function assertRefused(answer: RestAnswer, offending: readonly string[]): void {
  assert.equal(answer.status, 400, answer.text);
  assert.equal(typeof answer.json.error, 'string');
  assert.deepEqual(Object.keys(answer.json.fields).sort(), [...offending].sort(), answer.text);
  for (const name of offending) assert.ok(answer.json.fields[name].length > 5, `a reason for ${name}`);
}

interface Case {
  readonly what: string;
  readonly body?: unknown;
  readonly raw?: string;
  readonly offending: readonly string[];
}

const COMMON: readonly Case[] = [
  { what: 'an unknown field', body: { Name: 'x', Colour: 'red' }, offending: ['Colour'] },
  { what: 'several unknown fields and a wrong type, all named at once', body: { Foo: 1, Bar: 2, Amount: 'lots' }, offending: ['Foo', 'Bar', 'Amount'] },
  { what: 'Amount as a boolean', body: { Amount: true }, offending: ['Amount'] },
  { what: 'Amount with three decimals', body: { Amount: 10.005 }, offending: ['Amount'] },
  { what: 'a negative Amount', body: { Amount: -5 }, offending: ['Amount'] },
  { what: 'an Amount over numeric(14,2)', body: { Amount: 1e15 }, offending: ['Amount'] },
  { what: 'Rate as an object', body: { Rate: { value: 5 } }, offending: ['Rate'] },
  { what: 'Term as a fraction', body: { Term: 12.5 }, offending: ['Term'] },
  { what: 'Term of 0', body: { Term: 0 }, offending: ['Term'] },
  { what: 'Term as a string', body: { Term: '12' }, offending: ['Term'] },
  { what: 'a bad Frequency', body: { Frequency: 'fortnightly' }, offending: ['Frequency'] },
  { what: 'a bad Status', body: { Status: 'active' }, offending: ['Status'] },
  { what: 'a bad Amortization', body: { Amortization: 'balloon' }, offending: ['Amortization'] },
  { what: 'a date that does not exist', body: { Date_Funded: '2026-02-30' }, offending: ['Date_Funded'] },
  { what: 'a date in another format', body: { First_Payment_Date: '01/02/2026' }, offending: ['First_Payment_Date'] },
  { what: 'Name as a number', body: { Name: 42 }, offending: ['Name'] },
  { what: 'a blank Name (issue 28: a loan needs a name)', body: { Name: ' \t ' }, offending: ['Name'] },
  { what: 'Name null', body: { Name: null }, offending: ['Name'] },
  { what: 'Status null', body: { Status: null }, offending: ['Status'] },
  { what: 'a select value not among the options', body: { Property_Type: 'castle' }, offending: ['Property_Type'] },
  { what: 'an integer custom field as a string', body: { Units: 'four' }, offending: ['Units'] },
  { what: 'a required custom field set to null', body: { Loan_Officer: null }, offending: ['Loan_Officer'] },
  { what: 'the same field twice in different case', body: { Name: 'a', NAME: 'b' }, offending: ['NAME'] },
  { what: 'a schedule the maths refuses (payment below the interest)', body: { Name: 'below interest', Loan_Officer: 'x', Regular_Payment: 1, Amount: 100000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-01' }, offending: ['Regular_Payment', 'Amount', 'Rate'] },
  { what: 'an array body', body: [{ Name: 'x' }], offending: [] },
  { what: 'a string body', body: 'Name', offending: [] },
  { what: 'a number body', body: 7, offending: [] },
  { what: 'a null body', body: null, offending: [] },
  { what: 'malformed JSON', raw: '{"Name": "x",', offending: [] },
  // Money is exact: a JSON number with more digits than a double holds is judged as written
  // (http/exactJson.ts), not read as 100.1 and stored as 100.10.
  { what: 'an Amount of 100.10000000000000001 (more digits than a double holds): three decimals and more, not 100.10', raw: '{"Name": "x", "Loan_Officer": "x", "Amount": 100.10000000000000001}', offending: ['Amount'] },
  { what: 'an integer custom field of 9007199254740993 (past 2^53): not read as …992', raw: '{"Name": "x", "Loan_Officer": "x", "Units": 9007199254740993}', offending: ['Units'] },
];

const CREATE_ONLY: readonly Case[] = [
  { what: 'a required custom field missing', body: { Name: 'no officer' }, offending: ['Loan_Officer'] },
  { what: 'a Borrower_ parameter of the wrong type', body: { Loan_Officer: 'x', Borrower_Name: 5 }, offending: ['Borrower_Name'] },
  { what: 'a Borrower_Email that is not an e-mail', body: { Loan_Officer: 'x', Borrower_Name: 'A', Borrower_Email: 'nope' }, offending: ['Borrower_Email'] },
  { what: 'Borrower_Email without Borrower_Name', body: { Loan_Officer: 'x', Borrower_Email: 'a@b.test' }, offending: ['Borrower_Name'] },
  { what: 'Guarantor_Company with Guarantor_Is_Company', body: { Loan_Officer: 'x', Guarantor_Name: 'A', Guarantor_Company: 'B', Guarantor_Is_Company: true }, offending: ['Guarantor_Company'] },
  { what: 'Guarantor_Is_Company as a string', body: { Loan_Officer: 'x', Guarantor_Name: 'A', Guarantor_Is_Company: 'yes' }, offending: ['Guarantor_Is_Company'] },
  { what: 'a good contact with a bad field: the contact is not created either', body: { Loan_Officer: 'x', Borrower_Name: 'Would Be Created', Borrower_Email: 'w@b.test', Term: -1 }, offending: ['Term'] },
];

describe('POST /api/loan refuses bad input and writes nothing', () => {
  for (const testCase of [...COMMON, ...CREATE_ONLY]) {
    it(testCase.what, async () => {
      const before = await snapshot();
      const answer = await rest.post('/api/loan', testCase.body, testCase.raw !== undefined ? { raw: testCase.raw } : {});
      assertRefused(answer, [...testCase.offending, ...(needsOfficer(testCase) ? ['Loan_Officer'] : []), ...(needsName(testCase) ? ['Name'] : [])]);
      assert.deepEqual(await snapshot(), before);
    });
  }
});

/** On creation the product's required Loan Officer is also missing from the common cases' object bodies. */
function needsOfficer(testCase: Case): boolean {
  const body = testCase.body;
  if (CREATE_ONLY.includes(testCase) || testCase.raw !== undefined) return false;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return false;
  return !Object.keys(body).some((key) => key.toLowerCase() === 'loan_officer');
}

/** On creation a loan needs a name (issue 28): an object body without one also has Name named. */
function needsName(testCase: Case): boolean {
  const body = testCase.body;
  if (testCase.raw !== undefined || body === null || typeof body !== 'object' || Array.isArray(body)) return false;
  return !Object.keys(body).some((key) => key.toLowerCase() === 'name');
}

describe('POST /api/loan names Status overpaid with the other bad fields at once (session 41)', () => {
  it('a 400 naming Status, Amount and Loan_Officer together; nothing written', async () => {
    // Status was named only in a second 400, after the others were fixed: the database refused it once the rest passed.
    const before = await snapshot();
    const answer = await rest.post('/api/loan', { Name: 'Born overpaid', Status: 'overpaid', Amount: 'lots' });
    assertRefused(answer, ['Status', 'Amount', 'Loan_Officer']);
    assert.equal(answer.json.fields.Status, 'overpaid is set by the ledger (when a loan is paid off with money to spare), not by hand');
    assert.deepEqual(await snapshot(), before);
    // Alone, it is the same sentence.
    const alone = await rest.post('/api/loan', { Name: 'Born overpaid', Status: 'overpaid', Loan_Officer: 'Lee' });
    assertRefused(alone, ['Status']);
    assert.equal(alone.json.fields.Status, answer.json.fields.Status);
    assert.deepEqual(await snapshot(), before);
  });
});

describe('PATCH /api/loan/{id} refuses bad input and changes nothing', () => {
  for (const testCase of COMMON) {
    it(testCase.what, async () => {
      const before = await snapshot();
      const answer = await rest.patch(`/api/loan/${loanId}`, testCase.body, testCase.raw !== undefined ? { raw: testCase.raw } : {});
      assertRefused(answer, testCase.offending);
      assert.deepEqual(await snapshot(), before);
    });
  }

  it('Borrower_ and Guarantor_ keys, each named', async () => {
    const before = await snapshot();
    const answer = await rest.patch(`/api/loan/${loanId}`, { Name: 'fine', Borrower_Name: 'X', guarantor_id: loanId });
    assertRefused(answer, ['Borrower_Name', 'guarantor_id']);
    assert.deepEqual(await snapshot(), before);
  });
});

describe('a body over the limit', () => {
  it('is a 413 on POST and PATCH naming the limit and BODY_LIMIT_BYTES, as GraphQL does, and nothing is written', async () => {
    const before = await snapshot();
    const huge = JSON.stringify({ Name: 'x'.repeat(2 * 1024 * 1024) });
    for (const answer of [await rest.post('/api/loan', null, { raw: huge }), await rest.patch(`/api/loan/${loanId}`, null, { raw: huge })]) {
      assert.equal(answer.status, 413);
      // It said only "request body is too large"; GraphQL's 413 named the limit and its setting.
      assert.equal(answer.json.error, 'request body is over 1048576 bytes (BODY_LIMIT_BYTES)');
    }
    assert.deepEqual(await snapshot(), before);
  });
});

describe('GET /api/loan refuses bad query parameters', () => {
  for (const [query, offending] of [
    ['limit=1001', ['limit']],
    ['limit=-1', ['limit']],
    ['limit=ten', ['limit']],
    ['offset=1.5', ['offset']],
    ['status=open', ['status']],
    ['colour=red', ['colour']],
  ] as const) {
    it(query, async () => assertRefused(await rest.get(`/api/loan?${query}`), offending));
  }
});

describe('a request with no body at all counts as an empty body, {} (README)', () => {
  /** A request without any body: no Content-Length, no Transfer-Encoding (curl -X POST without -d). */
  const bodiless = (method: string, path: string) => rest.send(method, path, { headers: { 'Content-Type': 'application/json' } });

  it('POST: the same answer as {} and as an empty body — the missing required fields named, nothing written', async () => {
    const before = await snapshot();
    const none = await bodiless('POST', '/api/loan');
    const empty = await rest.post('/api/loan', null, { raw: '' });
    const object = await rest.post('/api/loan', {});
    for (const answer of [none, empty]) {
      assert.equal(answer.status, object.status, answer.text);
      assert.deepEqual(answer.json, object.json);
    }
    assertRefused(none, ['Loan_Officer', 'Name']);
    assert.deepEqual(await snapshot(), before);
  });

  it('PATCH: changes nothing and answers the loan, like {}', async () => {
    const before = await snapshot();
    const none = await bodiless('PATCH', `/api/loan/${loanId}`);
    assert.equal(none.status, 200, none.text);
    assert.equal(none.json.loan.id, loanId);
    assert.deepEqual(await snapshot(), before);
  });
});
