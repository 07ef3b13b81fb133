import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type RestClient } from '../support/restClient.js';
import { testDatabaseKind } from '../support/testDatabase.js';
import { startKeyedService, type KeyedService } from '../support/seededService.js';

/**
 * SPEC §6: find-or-create is race-safe. 20 concurrent `POST /api/loan` naming the same new
 * person create exactly one. On PostgreSQL (`TEST_DATABASE_URL`, as CI's second run does) the
 * requests run on a pool of 10 connections, so their transactions really overlap; the unique
 * identity indexes of `people` with `INSERT … ON CONFLICT` are what keeps them from duplicating.
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

const CONCURRENT = 20;

async function countPeople(where: string, values: unknown[]): Promise<number> {
  const { rows } = await service.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM people WHERE account_id = $1 AND (${where})`, [accountId, ...values]);
  return rows[0]!.n;
}

describe(`concurrent find-or-create (${testDatabaseKind})`, () => {
  it(`${CONCURRENT} concurrent POSTs with the same new Borrower_Name + Borrower_Email create exactly one person`, async () => {
    const name = `Race Person ${process.pid}`;
    const answers = await Promise.all(
      Array.from({ length: CONCURRENT }, (_, i) =>
        rest.post('/api/loan', { Name: `race ${i}`, Borrower_Name: i % 2 ? name : name.toUpperCase(), Borrower_Email: `race.${process.pid}@example.test` }),
      ),
    );
    assert.deepEqual(answers.map((answer) => answer.status), Array(CONCURRENT).fill(201));
    const ids = new Set(answers.map((answer) => answer.json.contacts.borrower.person_id));
    assert.equal(ids.size, 1, 'every loan got the same person');
    assert.equal(answers.filter((answer) => answer.json.contacts.borrower.outcome === 'created').length, 1, 'exactly one response says created');
    assert.equal(await countPeople('lower(name) = lower($2)', [name]), 1);
    const { rows } = await service.db.query<{ n: number }>('SELECT count(*)::int AS n FROM borrows WHERE account_id = $1 AND person_id = $2', [accountId, [...ids][0]]);
    assert.equal(rows[0]!.n, CONCURRENT, 'attached to every loan');
  });

  it(`${CONCURRENT} concurrent POSTs with the same new company (Guarantor_Company and Borrower_Is_Company) create one company`, async () => {
    const company = `Race Holdings ${process.pid}`;
    const answers = await Promise.all(
      Array.from({ length: CONCURRENT }, (_, i) =>
        rest.post(
          '/api/loan',
          i % 2
            ? { Name: `race ${i}`, Borrower_Name: company, Borrower_Is_Company: true }
            : { Name: `race ${i}`, Guarantor_Name: `Member ${i}`, Guarantor_Email: `m${i}.${process.pid}@example.test`, Guarantor_Company: company.toLowerCase() },
        ),
      ),
    );
    assert.deepEqual(answers.map((answer) => answer.status), Array(CONCURRENT).fill(201));
    assert.equal(await countPeople(`entity_type = 'company' AND lower(name) = lower($2)`, [company]), 1);
    const companyIds = new Set(answers.map((answer) => answer.json.contacts.borrower?.person_id ?? answer.json.contacts.guarantor.company.person_id));
    assert.equal(companyIds.size, 1);
  });
});
