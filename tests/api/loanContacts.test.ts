import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type RestClient } from '../support/restClient.js';
import { startKeyedService, type KeyedService } from '../support/seededService.js';

/**
 * The Borrower_/Guarantor_ rules of interface §4.2 and SPEC §6, one test per rule, for both
 * prefixes, checked over HTTP and in the database. Every response is checked against the
 * OpenAPI document by the client.
 */
let service: KeyedService;
let rest: RestClient;
let accountId: string;
let otherRest: RestClient;

before(async () => {
  service = await startKeyedService();
  ({ rest, accountId } = service);
  otherRest = (await service.newAccount()).rest;
});

after(async () => {
  await service?.close();
});

interface PersonRow {
  id: string;
  name: string;
  email: string | null;
  entity_type: string;
  is_borrower: boolean;
}

async function people(where = 'true', values: unknown[] = []): Promise<PersonRow[]> {
  const { rows } = await service.db.query<PersonRow>(
    `SELECT id, name, email, entity_type, is_borrower FROM people WHERE account_id = $1 AND (${where}) ORDER BY created_at, id`,
    [accountId, ...values],
  );
  return rows;
}

async function linksOf(table: 'borrows' | 'guarantees', loanId: string): Promise<string[]> {
  const { rows } = await service.db.query<{ person_id: string }>(`SELECT person_id FROM ${table} WHERE account_id = $1 AND loan_id = $2`, [accountId, loanId]);
  return rows.map((row) => row.person_id);
}

let serial = 0;
const unique = (stem: string): string => `${stem} ${process.pid}-${++serial}`;

for (const role of ['Borrower', 'Guarantor'] as const) {
  const key = role === 'Borrower' ? 'borrower' : 'guarantor';
  const table = role === 'Borrower' ? 'borrows' : 'guarantees';
  const listKey = role === 'Borrower' ? 'borrowers' : 'guarantors';

  describe(`${role}_ parameters on POST /api/loan`, () => {
    it(`${role}_Id of an existing person attaches that person, and wins over the other ${role}_ parameters`, async () => {
      const existing = await rest.post('/api/loan', { Name: 'contacts', [`${role}_Name`]: unique('Existing'), [`${role}_Email`]: `${serial}@id.test` });
      const personId = existing.json.contacts[key].person_id as string;
      const before = (await people()).length;
      const answer = await rest.post('/api/loan', {
        Name: 'by id',
        [`${role}_Id`]: personId,
        [`${role}_Name`]: 'Someone Else',
        [`${role}_Email`]: 'someone@else.test',
        [`${role}_Company`]: 'Ignored Co',
      });
      assert.equal(answer.status, 201);
      assert.deepEqual(answer.json.contacts[key], { outcome: 'found', person_id: personId });
      assert.deepEqual(answer.json.loan[listKey].map((p: { id: string }) => p.id), [personId]);
      assert.deepEqual(await linksOf(table, answer.json.loan.id), [personId]);
      assert.equal((await people()).length, before, 'the other parameters created nobody');
    });

    it(`${role}_Id that is not found — or of another account, or not an id — attaches nobody and is not an error`, async () => {
      const foreign = await otherRest.post('/api/loan', { Name: 'contacts', [`${role}_Name`]: unique('Foreign'), [`${role}_Email`]: 'f@other.test' });
      assert.equal(foreign.status, 201);
      const foreignId = foreign.json.contacts[key].person_id as string;
      for (const id of ['00000000-0000-4000-8000-000000000000', foreignId, 'not-an-id']) {
        const before = (await people()).length;
        const answer = await rest.post('/api/loan', { Name: 'contacts', [`${role}_Id`]: id, [`${role}_Name`]: 'Fallback Person' });
        assert.equal(answer.status, 201, id);
        assert.deepEqual(answer.json.contacts[key], { outcome: 'not_found', requested_id: id });
        assert.deepEqual(answer.json.loan[listKey], []);
        assert.deepEqual(await linksOf(table, answer.json.loan.id), []);
        assert.equal((await people()).length, before, 'nobody was created');
      }
    });

    it(`${role}_Name + ${role}_Email finds the individual case-insensitively, otherwise creates one`, async () => {
      const name = unique('Ada Lovelace');
      const email = `ada.${serial}@Example.test`;
      const first = await rest.post('/api/loan', { Name: 'contacts', [`${role}_Name`]: name, [`${role}_Email`]: email });
      assert.equal(first.status, 201);
      assert.equal(first.json.contacts[key].outcome, 'created');
      const personId = first.json.contacts[key].person_id;
      const second = await rest.post('/api/loan', { Name: 'contacts', [`${role}_Name`]: name.toUpperCase(), [`${role}_Email`]: email.toLowerCase() });
      assert.deepEqual(second.json.contacts[key], { outcome: 'found', person_id: personId });
      const third = await rest.post('/api/loan', { Name: 'contacts', [`${role}_Name`]: name, [`${role}_Email`]: `other.${email}` });
      assert.equal(third.json.contacts[key].outcome, 'created', 'another e-mail is another individual');
      assert.notEqual(third.json.contacts[key].person_id, personId);
      const rows = await people('lower(name) = lower($2)', [name]);
      assert.equal(rows.length, 2);
      assert.ok(rows.every((row) => row.entity_type === 'individual'));
      assert.deepEqual(second.json.loan[listKey], [{ id: personId, name, email, entity_type: 'individual' }]);
    });

    it(`${role}_Name alone creates a new individual every time`, async () => {
      const name = unique('Solo Name');
      const a = await rest.post('/api/loan', { Name: 'contacts', [`${role}_Name`]: name });
      const b = await rest.post('/api/loan', { Name: 'contacts', [`${role}_Name`]: name });
      assert.equal(a.json.contacts[key].outcome, 'created');
      assert.equal(b.json.contacts[key].outcome, 'created');
      assert.notEqual(a.json.contacts[key].person_id, b.json.contacts[key].person_id);
      const rows = await people('name = $2', [name]);
      assert.equal(rows.length, 2);
      assert.ok(rows.every((row) => row.entity_type === 'individual' && row.email === null));
    });

    it(`${role}_Company finds or creates the company, connects the individual to it, and attaches the individual`, async () => {
      const company = unique('Acme Lending');
      const name = unique('Grace Hopper');
      const email = `grace.${serial}@acme.test`;
      const first = await rest.post('/api/loan', { Name: 'contacts', [`${role}_Name`]: name, [`${role}_Email`]: email, [`${role}_Company`]: company });
      assert.equal(first.status, 201);
      const outcome = first.json.contacts[key];
      assert.equal(outcome.outcome, 'created');
      assert.equal(outcome.company.outcome, 'created');
      assert.deepEqual(await linksOf(table, first.json.loan.id), [outcome.person_id], 'the individual is attached, not the company');
      const { rows: memberships } = await service.db.query('SELECT company_id, person_id FROM company_memberships WHERE account_id = $1 AND person_id = $2', [
        accountId,
        outcome.person_id,
      ]);
      assert.deepEqual(memberships, [{ company_id: outcome.company.person_id, person_id: outcome.person_id }]);

      const second = await rest.post('/api/loan', { Name: 'contacts', [`${role}_Name`]: name, [`${role}_Email`]: email.toUpperCase(), [`${role}_Company`]: company.toLowerCase() });
      assert.deepEqual(second.json.contacts[key], { outcome: 'found', person_id: outcome.person_id, company: { outcome: 'found', person_id: outcome.company.person_id } });
      assert.equal((await people('lower(name) = lower($2)', [company])).length, 1, 'one company');
      const { rows: count } = await service.db.query<{ n: number }>('SELECT count(*)::int AS n FROM company_memberships WHERE account_id = $1 AND person_id = $2', [
        accountId,
        outcome.person_id,
      ]);
      assert.equal(count[0]!.n, 1, 'one membership');

      const newcomer = await rest.post('/api/loan', { Name: 'contacts', [`${role}_Name`]: unique('Newcomer'), [`${role}_Company`]: company });
      assert.equal(newcomer.json.contacts[key].outcome, 'created');
      assert.deepEqual(newcomer.json.contacts[key].company, { outcome: 'found', person_id: outcome.company.person_id });
    });

    it(`${role}_Is_Company: true makes ${role}_Name a company name: found or created, and attached`, async () => {
      const company = unique('Globex Holdings');
      const first = await rest.post('/api/loan', { Name: 'contacts', [`${role}_Name`]: company, [`${role}_Is_Company`]: true });
      assert.equal(first.status, 201);
      assert.equal(first.json.contacts[key].outcome, 'created');
      const companyId = first.json.contacts[key].person_id;
      assert.deepEqual(first.json.loan[listKey], [{ id: companyId, name: company, email: null, entity_type: 'company' }]);
      const second = await rest.post('/api/loan', { Name: 'contacts', [`${role}_Name`]: company.toUpperCase(), [`${role}_Is_Company`]: true });
      assert.deepEqual(second.json.contacts[key], { outcome: 'found', person_id: companyId });
      assert.deepEqual(await linksOf(table, second.json.loan.id), [companyId]);
      assert.equal((await people('lower(name) = lower($2)', [company])).length, 1);
      const individual = await rest.post('/api/loan', { Name: 'contacts', [`${role}_Name`]: company, [`${role}_Is_Company`]: false });
      assert.equal(individual.json.contacts[key].outcome, 'created', 'Is_Company false: an individual of that name');
      assert.notEqual(individual.json.contacts[key].person_id, companyId);
    });

    it(`an attached ${key} ${role === 'Borrower' ? 'gets' : 'does not get'} is_borrower = true`, async () => {
      const answer = await rest.post('/api/loan', { Name: 'contacts', [`${role}_Name`]: unique('Flag Check'), [`${role}_Email`]: `flag.${serial}@x.test` });
      const [row] = await people('id = $2', [answer.json.contacts[key].person_id]);
      assert.equal(row!.is_borrower, role === 'Borrower');
    });
  });
}

describe('contacts together', () => {
  it('no Borrower_/Guarantor_ parameters: contacts are null and nobody is attached', async () => {
    const answer = await rest.post('/api/loan', { Name: 'no contacts' });
    assert.equal(answer.status, 201);
    assert.deepEqual(answer.json.contacts, { borrower: null, guarantor: null });
    assert.deepEqual(answer.json.loan.borrowers, []);
    assert.deepEqual(answer.json.loan.guarantors, []);
  });

  it('one borrower and one guarantor in the same request; the same person may be both', async () => {
    const name = unique('Both Roles');
    const email = `both.${serial}@x.test`;
    const answer = await rest.post('/api/loan', { Name: 'contacts', Borrower_Name: name, Borrower_Email: email, Guarantor_Name: name, Guarantor_Email: email });
    assert.equal(answer.status, 201);
    assert.equal(answer.json.contacts.borrower.outcome, 'created');
    assert.deepEqual(answer.json.contacts.guarantor, { outcome: 'found', person_id: answer.json.contacts.borrower.person_id });
    assert.equal(answer.json.loan.borrowers[0].id, answer.json.loan.guarantors[0].id);
  });

  it('a guarantor found by id keeps is_borrower as it was; a borrower found by id gets it', async () => {
    const created = await rest.post('/api/loan', { Name: 'contacts', Guarantor_Name: unique('Plain Guarantor'), Guarantor_Email: `g.${serial}@x.test` });
    const id = created.json.contacts.guarantor.person_id;
    assert.equal((await people('id = $2', [id]))[0]!.is_borrower, false);
    await rest.post('/api/loan', { Name: 'contacts', Guarantor_Id: id });
    assert.equal((await people('id = $2', [id]))[0]!.is_borrower, false);
    await rest.post('/api/loan', { Name: 'contacts', Borrower_Id: id });
    assert.equal((await people('id = $2', [id]))[0]!.is_borrower, true);
  });
});

describe('PATCH /api/loan/{id} and contacts', () => {
  it('any Borrower_/Guarantor_ key is a 400 naming it, and nothing changes', async () => {
    const created = await rest.post('/api/loan', { Name: 'patch target', Amount: 1000 });
    const id = created.json.loan.id;
    const peopleBefore = (await people()).length;
    for (const body of [{ Borrower_Id: created.json.loan.id }, { borrower_name: 'X' }, { Name: 'renamed', GUARANTOR_EMAIL: 'a@b.test', Guarantor_Is_Company: true }]) {
      const answer = await rest.patch(`/api/loan/${id}`, body);
      assert.equal(answer.status, 400, JSON.stringify(body));
      const contactKeys = Object.keys(body).filter((k) => /^(borrower|guarantor)_/i.test(k));
      for (const name of contactKeys) assert.match(answer.json.fields[name], /only when creating a loan/, name);
    }
    const after = await rest.get(`/api/loan/${id}`);
    assert.equal(after.json.loan.name, 'patch target');
    assert.equal(after.json.loan.updated_at, created.json.loan.updated_at);
    assert.equal((await people()).length, peopleBefore);
  });

  it('an unknown id, an id of another account, or a malformed id is 404', async () => {
    const foreign = await otherRest.post('/api/loan', { Name: 'theirs' });
    for (const id of ['00000000-0000-4000-8000-000000000000', foreign.json.loan.id, 'nope']) {
      const answer = await rest.patch(`/api/loan/${id}`, { Name: 'mine now' });
      assert.equal(answer.status, 404, id);
      assert.equal((await rest.get(`/api/loan/${id}`)).status, 404);
    }
    assert.equal((await otherRest.get(`/api/loan/${foreign.json.loan.id}`)).json.loan.name, 'theirs');
  });
});
