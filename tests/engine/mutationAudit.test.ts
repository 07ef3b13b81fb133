import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addProductField } from '../../app/products.js';
import { dataOf, METADATA_PATH, startSeededService, type Answer, type GraphBody, type SeededService } from '../support/seededService.js';

/**
 * Session 36's audit of the mutations as a developer who knows Hasura would use them: each case
 * is one a Hasura client writes, answered as Hasura's documentation says (or as the README says
 * where loanql differs on purpose), and failed before the session's fix.
 */
let s: SeededService;
let dir: string;
/** A servicing loan of the account. */
let loanId: string;

/** The shipped metadata, but a request may give a new task its id (Hasura's upsert by primary key). */
function auditMetadata(): string {
  const original = readFileSync(METADATA_PATH, 'utf8');
  const anchor = '    insert:\n      columns: [loan_id, name, status, date_due, assignee_id]\n';
  assert.ok(original.includes(anchor));
  return original.replace(anchor, '    insert:\n      columns: [id, loan_id, name, status, date_due, assignee_id]\n');
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'loanql-mutation-audit-'));
  writeFileSync(join(dir, 'loanql.yaml'), auditMetadata());
  s = await startSeededService({ config: { metadataPath: join(dir, 'loanql.yaml') } });
  loanId = (await s.sql<{ id: string }>(`SELECT id FROM loans WHERE account_id = $1 AND status = 'servicing' ORDER BY id LIMIT 1`, [s.account.id]))[0]!.id;
});
after(async () => {
  await s?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const tasksNamed = async (name: string): Promise<number> =>
  Number((await s.sql<{ n: string }>(`SELECT count(*)::text AS n FROM tasks WHERE account_id = $1 AND name = $2`, [s.account.id, name]))[0]!.n);

/** The errors of an answer that must have failed as a client's mistake (200, no data). */
function errorsOf(answer: Answer<GraphBody>): NonNullable<GraphBody['errors']> {
  assert.equal(answer.status, 200, answer.text);
  assert.ok(answer.body.errors?.length, `expected errors, got ${answer.text.slice(0, 500)}`);
  assert.equal(answer.body.data, undefined, answer.text);
  return answer.body.errors!;
}

const peopleNamed = async (name: string): Promise<number> =>
  Number((await s.sql<{ n: string }>(`SELECT count(*)::text AS n FROM people WHERE account_id = $1 AND lower(name) = lower($2)`, [s.account.id, name]))[0]!.n);

describe('Mutation audit: on_conflict names constraints only', () => {
  it('offers the table\'s unique constraints, not a unique index backing none (an upsert naming one was a 500)', async () => {
    const offered = dataOf(await s.graph(`{ __type(name: "people_constraint") { enumValues { name } } }`)).__type.enumValues.map((value: { name: string }) => value.name);
    assert.deepEqual(offered, ['people_pkey'], 'people_individual_identity and people_company_identity are unique indexes on lower(name): ON CONFLICT ON CONSTRAINT cannot name them');

    const refused = errorsOf(
      await s.graph(`mutation { insert_people_one(object: {name: "Ada Upsert", email: "ada@upsert.test", entity_type: "individual"}, on_conflict: {constraint: people_individual_identity, update_columns: [phone]}) { id } }`),
    );
    assert.equal(refused[0]!.extensions?.code, 'validation-failed', JSON.stringify(refused));
    assert.match(refused[0]!.message, /people_individual_identity/);
    assert.equal(await peopleNamed('Ada Upsert'), 0, 'nothing written');

    const inserted = dataOf(
      await s.graph(`mutation { insert_people_one(object: {name: "Ada Upsert", email: "ada@upsert.test", entity_type: "individual"}, on_conflict: {constraint: people_pkey, update_columns: [phone]}) { name } }`),
    );
    assert.deepEqual(inserted.insert_people_one, { name: 'Ada Upsert' }, 'the primary key still serves an upsert');
  });
});

describe('Mutation audit: an upsert that names one row twice', () => {
  it('is validation-failed, nothing written (PostgreSQL\'s "cannot affect row a second time" was a 500)', async () => {
    const id = '6d1f3c9e-0a57-4c1e-9b1a-37d0c0de0001';
    const refused = errorsOf(
      await s.graph(
        `mutation($loan: uuid!, $id: uuid!) {
          insert_tasks(objects: [{id: $id, loan_id: $loan, name: "upsert twice a"}, {id: $id, loan_id: $loan, name: "upsert twice b"}],
                       on_conflict: {constraint: tasks_pkey, update_columns: [name]}) { affected_rows }
        }`,
        { loan: loanId, id },
      ),
    );
    assert.equal(refused[0]!.extensions?.code, 'validation-failed', JSON.stringify(refused));
    assert.deepEqual(refused[0]!.path, ['insert_tasks']);
    assert.match(refused[0]!.message, /two of the objects are the same tasks row/);
    assert.equal((await tasksNamed('upsert twice a')) + (await tasksNamed('upsert twice b')), 0, 'nothing written');

    const once = dataOf(
      await s.graph(
        `mutation($loan: uuid!, $id: uuid!) {
          a: insert_tasks_one(object: {id: $id, loan_id: $loan, name: "upsert once"}, on_conflict: {constraint: tasks_pkey, update_columns: [name]}) { name }
          b: insert_tasks_one(object: {id: $id, loan_id: $loan, name: "upsert again"}, on_conflict: {constraint: tasks_pkey, update_columns: [name]}) { name }
        }`,
        { loan: loanId, id },
      ),
    );
    assert.deepEqual(once, { a: { name: 'upsert again' }, b: { name: 'upsert again' } }, 'the same row upserted by two fields is one row, updated by the second');
  });
});

describe('Mutation audit: update_columns: [] on a collection that is inserted and never updated', () => {
  it('is accepted as Hasura\'s "do nothing" (the field was missing: validation-failed); a column there is refused', async () => {
    const [link] = await s.sql<{ loan_id: string; person_id: string }>(`SELECT loan_id, person_id FROM borrows WHERE account_id = $1 ORDER BY loan_id, person_id LIMIT 1`, [s.account.id]);
    const linksBefore = Number((await s.sql<{ n: string }>(`SELECT count(*)::text AS n FROM borrows WHERE account_id = $1`, [s.account.id]))[0]!.n);
    const ignored = dataOf(
      await s.graph(
        `mutation($loan: uuid!, $person: uuid!) {
          insert_borrows(objects: [{loan_id: $loan, person_id: $person}], on_conflict: {constraint: borrows_account_id_loan_id_person_id_key, update_columns: []}) { affected_rows returning { person_id } }
        }`,
        { loan: link!.loan_id, person: link!.person_id },
      ),
    );
    assert.deepEqual(ignored.insert_borrows, { affected_rows: 0, returning: [] }, 'the link exists: nothing inserted, nothing updated');

    const placeholder = errorsOf(
      await s.graph(
        `mutation($loan: uuid!, $person: uuid!) {
          insert_borrows(objects: [{loan_id: $loan, person_id: $person}], on_conflict: {constraint: borrows_account_id_loan_id_person_id_key, update_columns: [_PLACEHOLDER]}) { affected_rows }
        }`,
        { loan: link!.loan_id, person: link!.person_id },
      ),
    );
    assert.equal(placeholder[0]!.extensions?.code, 'validation-failed', JSON.stringify(placeholder));
    assert.match(placeholder[0]!.message, /_PLACEHOLDER is not an update column of borrows/);
    assert.equal(Number((await s.sql<{ n: string }>(`SELECT count(*)::text AS n FROM borrows WHERE account_id = $1`, [s.account.id]))[0]!.n), linksBefore);
  });
});

describe('Mutation audit: dates of the years 1 to 99', () => {
  // A document's day, not a task's: a task is due in the years 1900–2999 since migration 0074.
  it('are real dates, in a value written and in a where (Date.UTC read them as 1901–1999: "0001-01-01" was validation-failed)', async () => {
    const written = dataOf(
      await s.graph(
        `mutation {
          insert_documents_one(object: {name: "ancient deed", status: "received", uploaded_date: "0099-06-30"}) { uploaded_date }
          update_documents(where: {name: {_eq: "ancient deed"}, uploaded_date: {_gte: "0001-01-01", _lt: "0100-01-01"}}, _set: {status: "archived"}) { affected_rows returning { uploaded_date status } }
        }`,
      ),
    );
    assert.deepEqual(written, {
      insert_documents_one: { uploaded_date: '0099-06-30' },
      update_documents: { affected_rows: 1, returning: [{ uploaded_date: '0099-06-30', status: 'archived' }] },
    });
    const [stored] = await s.sql<{ uploaded_date: string }>(`SELECT uploaded_date::text FROM documents WHERE account_id = $1 AND name = 'ancient deed'`, [s.account.id]);
    assert.equal(stored!.uploaded_date, '0099-06-30');
    const refused = errorsOf(await s.graph(`mutation { update_documents(where: {uploaded_date: {_eq: "0099-02-29"}}, _set: {status: "received"}) { affected_rows } }`));
    assert.match(refused[0]!.message, /invalid date "0099-02-29"/, 'still refused: 99 is no leap year');
  });
});

describe('Mutation audit: numbers written in a jsonb literal', () => {
  // Since migration 0063 the keys of loans.custom_fields are the product's fields, checked by
  // their type: the digits are shown on a `number` field (25 significant digits, past a double's
  // 17) and in the refusals, which quote the value the database received.
  it('keep the digits as written (they went through a double: 12345678901234567890 became …567000, 1e-400 became 0)', async () => {
    await addProductField(s.db, s.account.id, { name: 'Audit Exact', type: 'number' });
    const written = dataOf(
      await s.graph(
        `mutation($loan: uuid!) {
          update_loans_by_pk(pk_columns: {id: $loan}, _append: {custom_fields: {audit_exact: 123456789012345.1234567891}}) { id }
        }`,
        { loan: loanId },
      ),
    );
    assert.equal(written.update_loans_by_pk.id, loanId);
    const [stored] = await s.sql<{ exact: string; kind: string }>(
      `SELECT custom_fields->>'audit_exact' AS exact, jsonb_typeof(custom_fields->'audit_exact') AS kind FROM loans WHERE account_id = $1 AND id = $2`,
      [s.account.id, loanId],
    );
    assert.deepEqual(stored, { exact: '123456789012345.1234567891', kind: 'number' });

    const found = dataOf(
      await s.graph(`mutation { update_loans(where: {custom_fields: {_contains: {audit_exact: 123456789012345.1234567891}}}, _set: {name: "found by its jsonb number"}) { affected_rows } }`),
    );
    assert.deepEqual(found.update_loans, { affected_rows: 1 }, 'a filter with the same literal finds it');

    // Refused for their digits, which arrived whole: through a double the first would be quoted
    // as 12345678901234567000, and 1e-400 would have been 0, a value the field takes.
    const big = errorsOf(await s.graph(`mutation($loan: uuid!) { update_loans_by_pk(pk_columns: {id: $loan}, _append: {custom_fields: {audit_exact: 12345678901234567890}}) { id } }`, { loan: loanId }));
    assert.match(big[0]!.message, /custom_fields\.audit_exact: expected a number .*, got 12345678901234567890$/);
    const tiny = errorsOf(await s.graph(`mutation($loan: uuid!) { update_loans_by_pk(pk_columns: {id: $loan}, _append: {custom_fields: {audit_exact: 1e-400}}) { id } }`, { loan: loanId }));
    assert.match(tiny[0]!.message, /custom_fields\.audit_exact: expected a number \(or a decimal string\), with at most 10 decimal places/);
    assert.equal((await s.sql<{ exact: string }>(`SELECT custom_fields->>'audit_exact' AS exact FROM loans WHERE account_id = $1 AND id = $2`, [s.account.id, loanId]))[0]!.exact, '123456789012345.1234567891');

    const refused = errorsOf(await s.graph(`mutation($loan: uuid!) { update_loans_by_pk(pk_columns: {id: $loan}, _append: {custom_fields: {audit_huge: 1e400000}}) { id } }`, { loan: loanId }));
    assert.equal(refused[0]!.extensions?.code, 'validation-failed', JSON.stringify(refused));
    assert.match(refused[0]!.message, /out of PostgreSQL's numeric range/);
    assert.ok(refused[0]!.locations, 'located');
    const [after] = await s.sql<{ has: boolean }>(`SELECT custom_fields ? 'audit_huge' AS has FROM loans WHERE account_id = $1 AND id = $2`, [s.account.id, loanId]);
    assert.equal(after!.has, false, 'nothing written');
  });
});
