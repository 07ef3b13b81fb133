import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startSeededService, type GraphBody, type SeededAccount, type SeededService } from '../support/seededService.js';

/** The first row of a result, which must be there. */
const firstRow = <T>(rows: readonly T[]): T => {
  assert.ok(rows.length, 'expected a row');
  return rows[0]!;
};

/**
 * Issue 14, Done-when 3: account A's key tries every mutation form against account B's ids —
 * update and delete by primary key and by `where`, inserts that refer to B's loans, people,
 * documents and addresses, nested inserts. No row of B changes, and every error A gets for B's
 * id is the very error it gets for an id that exists nowhere: nothing says B's record exists.
 */
let a: SeededService;
let b: SeededAccount;
const ids = new Map<string, string>();
const NOWHERE = '7f1c6a52-0000-4000-8000-00000000abcd';

const TABLES = ['loans', 'people', 'borrows', 'guarantees', 'documents', 'loan_documents', 'addresses', 'address_details', 'valuations', 'insurances', 'payments', 'schedules', 'tasks', 'comments', 'funding_sources'];

async function digestOf(accountId: string): Promise<string> {
  const parts: string[] = [];
  for (const table of TABLES) {
    const [row] = await a.sql<{ d: string }>(`SELECT count(*) || ':' || coalesce(md5(string_agg(t::text, ',' ORDER BY t::text)), '') AS d FROM ${table} t WHERE account_id = $1`, [accountId]);
    parts.push(`${table}=${row!.d}`);
  }
  return parts.join(' ');
}

before(async () => {
  a = await startSeededService({ scale: 0.01, others: [{ scale: 0.01, seed: 2 }] });
  [b] = a.others as [SeededAccount];
  for (const table of ['loans', 'people', 'documents', 'addresses', 'valuations', 'insurances', 'payments', 'tasks', 'comments', 'funding_sources', 'borrows', 'guarantees', 'loan_documents', 'address_details']) {
    const [row] = await a.sql<{ id: string }>(`SELECT id FROM ${table} WHERE account_id = $1 ORDER BY id LIMIT 1`, [b.account.id]);
    assert.ok(row, `account B has ${table}`);
    ids.set(table, row.id);
  }
  // A task of B tied to no loan, and a reversed-free payment, so every update below would succeed in B.
  ids.set('tasks', (await a.sql<{ id: string }>(`INSERT INTO tasks (account_id, name) VALUES ($1, 'B task') RETURNING id`, [b.account.id]))[0]!.id);
});
after(() => a?.close());

const graph = (query: string, variables?: Record<string, unknown>) => a.graph(query, variables);

describe('Mutations: tenancy', () => {
  it('updates and deletes by primary key and by where reach no row of another account', async () => {
    const before = await digestOf(b.account.id);
    const updates: [string, string][] = [
      ['loans', '_set: {name: "hijacked"}'],
      ['people', '_set: {phone: "hijacked"}'],
      ['funding_sources', '_set: {class: "Z"}'],
      ['documents', '_set: {name: "hijacked"}'],
      ['addresses', '_set: {street1: "hijacked"}'],
      ['valuations', '_set: {value: 1}'],
      ['insurances', '_set: {carrier: "hijacked"}'],
      ['payments', '_set: {date_reversed: "2099-01-01"}'],
      ['tasks', '_set: {status: "completed"}'],
    ];
    for (const [collection, set] of updates) {
      const id = ids.get(collection)!;
      const answer = await graph(`mutation($id: uuid!) {
        byPk: update_${collection}_by_pk(pk_columns: {id: $id}, ${set}) { id }
        byWhere: update_${collection}(where: {id: {_eq: $id}}, ${set}) { affected_rows returning { id } }
        many: update_${collection}_many(updates: [{where: {id: {_eq: $id}}, ${set}}]) { affected_rows }
      }`, { id });
      const body = answer.body as GraphBody;
      assert.equal(body.errors, undefined, `${collection}: ${answer.text.slice(0, 300)}`);
      assert.equal(body.data.byPk, null, collection);
      assert.deepEqual(body.data.byWhere, { affected_rows: 0, returning: [] }, collection);
      assert.deepEqual(body.data.many, [{ affected_rows: 0 }], collection);
    }
    // where: {} is every row of the caller's account, and only those.
    for (const collection of ['tasks', 'documents']) {
      const answer = await graph(`mutation { update_${collection}(where: {}, _set: {name: "renamed by A"}) { affected_rows returning { id } } }`);
      const body = answer.body as GraphBody;
      const { n } = firstRow(await a.sql<{ n: number }>(`SELECT count(*)::int AS n FROM ${collection} WHERE account_id = $1`, [a.account.id]));
      assert.equal(body.data.update_tasks?.affected_rows ?? body.data[`update_${collection}`].affected_rows, n);
      assert.ok(!body.data[`update_${collection}`].returning.some((row: { id: string }) => row.id === ids.get(collection)), collection);
    }
    const deletable = ['funding_sources', 'documents', 'addresses', 'valuations', 'insurances', 'tasks', 'comments', 'borrows', 'guarantees', 'loan_documents', 'address_details'];
    for (const collection of deletable) {
      const id = ids.get(collection)!;
      const answer = await graph(`mutation($id: uuid!) {
        byPk: delete_${collection}_by_pk(id: $id) { id }
        byWhere: delete_${collection}(where: {id: {_eq: $id}}) { affected_rows }
      }`, { id });
      const body = answer.body as GraphBody;
      assert.equal(body.errors, undefined, `${collection}: ${answer.text.slice(0, 300)}`);
      assert.deepEqual(body.data, { byPk: null, byWhere: { affected_rows: 0 } }, collection);
    }
    assert.equal(await digestOf(b.account.id), before, 'no row of account B changed');
  });

  it('inserts that refer to another account\'s records fail exactly as for records that do not exist', async () => {
    const before = await digestOf(b.account.id);
    // In servicing: a lead takes no payment (0050); paid on its funding day: not before it (0081).
    const own = (await a.sql<{ id: string; funded: string }>(`SELECT id, date_funded::text AS funded FROM loans WHERE account_id = $1 AND status = 'servicing' ORDER BY id LIMIT 1`, [a.account.id]))[0]!;
    const ownLoan = own.id;
    const ownPerson = (await a.sql<{ id: string }>(`SELECT id FROM people WHERE account_id = $1 ORDER BY id LIMIT 1`, [a.account.id]))[0]!.id;
    const attempts: ((other: (table: string) => string) => string)[] = [
      (o) => `insert_payments_one(object: {loan_id: "${o('loans')}", date: "${own.funded}", amount: 1}) { id }`,
      (o) => `insert_payments(objects: [{loan_id: "${ownLoan}", date: "${own.funded}", amount: 1}, {loan_id: "${o('loans')}", date: "${own.funded}", amount: 1}]) { affected_rows }`,
      (o) => `insert_tasks_one(object: {loan_id: "${o('loans')}", name: "x"}) { id }`,
      (o) => `insert_comments_one(object: {loan_id: "${o('loans')}", text: "x"}) { id }`,
      (o) => `insert_funding_sources_one(object: {loan_id: "${ownLoan}", person_id: "${o('people')}"}) { id }`,
      (o) => `insert_borrows_one(object: {loan_id: "${ownLoan}", person_id: "${o('people')}"}) { id }`,
      (o) => `insert_guarantees_one(object: {loan_id: "${o('loans')}", person_id: "${ownPerson}"}, on_conflict: {constraint: guarantees_account_id_loan_id_person_id_key}) { id }`,
      (o) => `insert_loan_documents_one(object: {loan_id: "${ownLoan}", document_id: "${o('documents')}"}) { id }`,
      (o) => `insert_address_details_one(object: {loan_id: "${ownLoan}", address_id: "${o('addresses')}"}) { id }`,
      (o) => `insert_valuations_one(object: {address_id: "${o('addresses')}", value: 1}) { id }`,
      (o) => `insert_insurances_one(object: {address_id: "${o('addresses')}"}) { id }`,
      // Nested inserts.
      (o) => `insert_addresses_one(object: {street1: "x", address_details: {data: [{loan_id: "${o('loans')}"}]}}) { id }`,
      (o) => `insert_documents_one(object: {name: "x", loan_documents: {data: [{loan_id: "${o('loans')}"}]}}) { id }`,
      (o) => `insert_address_details_one(object: {loan_id: "${o('loans')}", address: {data: {street1: "x"}}}) { id }`,
    ];
    for (const attempt of attempts) {
      const other = await graph(`mutation { ${attempt((table) => ids.get(table)!)} }`);
      const nowhere = await graph(`mutation { ${attempt(() => NOWHERE)} }`);
      const errors = (other.body as GraphBody).errors;
      assert.ok(errors?.length, `refused: ${attempt(() => 'ID')}: ${other.text.slice(0, 300)}`);
      assert.equal(errors![0]!.extensions?.code, 'not-found', other.text);
      assert.equal(other.text, nowhere.text, 'the same answer for another account\'s id as for an id that exists nowhere');
      assert.ok(!other.text.includes(ids.get('loans')!) && !other.text.includes(b.account.id), 'no id of B in the answer');
    }
    assert.equal(await digestOf(b.account.id), before, 'no row of account B changed');
  });

  it('returning and nested selections show only the caller\'s rows', async () => {
    const ownLoan = (await a.sql<{ id: string }>(`SELECT id FROM loans WHERE account_id = $1 AND status = 'servicing' ORDER BY id LIMIT 1`, [a.account.id]))[0]!.id; // in servicing: a lead takes no payment (0050)
    const answer = await graph(`mutation($loan: uuid!) { insert_tasks_one(object: {loan_id: $loan, name: "mine"}) { loan { tasks_aggregate { aggregate { count } } } } }`, { loan: ownLoan });
    const { n } = firstRow(await a.sql<{ n: number }>(`SELECT count(*)::int AS n FROM tasks WHERE account_id = $1 AND loan_id = $2`, [a.account.id, ownLoan]));
    assert.equal((answer.body as GraphBody).data.insert_tasks_one.loan.tasks_aggregate.aggregate.count, n);
  });
});
