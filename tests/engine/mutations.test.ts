import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createApiKey, deactivateApiKey } from '../../app/apiKeys.js';
import { dataOf, send, startSeededService, type GraphBody, type SeededService } from '../support/seededService.js';

/** The first row of a result, which must be there. */
const firstRow = <T>(rows: readonly T[]): T => {
  assert.ok(rows.length, 'expected a row');
  return rows[0]!;
};

/**
 * Issue 14, Done-when 1 and 2: the mutation forms over HTTP with an API key on seeded data,
 * `returning` after the request's writes (trigger effects included), the shipped permissions
 * of every collection, and one transaction per request.
 */
let s: SeededService;
/** A servicing loan with a schedule and a next row. */
let loanId: string;
let personId: string;

const errorsOf = (answer: { body: unknown; status: number; text: string }): NonNullable<GraphBody['errors']> => {
  const body = answer.body as GraphBody;
  assert.equal(answer.status, 200, answer.text);
  assert.ok(body.errors?.length, `expected errors, got ${answer.text.slice(0, 500)}`);
  assert.equal(body.data, undefined, 'an error answers no data');
  return body.errors!;
};

const TABLES = ['loans', 'people', 'borrows', 'guarantees', 'documents', 'loan_documents', 'addresses', 'address_details', 'valuations', 'insurances', 'payments', 'schedules', 'tasks', 'comments', 'funding_sources'];

/** Row counts of every table and a digest of every row, to show that nothing at all changed. */
async function snapshot(): Promise<Record<string, string>> {
  const result: Record<string, string> = {};
  for (const table of TABLES) {
    const [row] = await s.sql<{ n: string; digest: string | null }>(`SELECT count(*)::text AS n, md5(string_agg(t::text, ',' ORDER BY t::text)) AS digest FROM ${table} t`);
    result[table] = `${row!.n}:${row!.digest}`;
  }
  return result;
}

const nextRow = async (loan: string): Promise<number | null> =>
  (await s.sql<{ number: number }>(`SELECT number FROM schedules WHERE account_id = $1 AND loan_id = $2 AND is_next`, [s.account.id, loan]))[0]?.number ?? null;

before(async () => {
  s = await startSeededService();
  const [loan] = await s.sql<{ id: string }>(
    // Funded by 2026-01-01: the tests below post and reverse payments dated from then, and a payment before its loan's Date_Funded is refused (0081).
    `SELECT l.id FROM loans l WHERE l.account_id = $1 AND l.status = 'servicing' AND l.date_funded <= '2026-01-01'
        AND EXISTS (SELECT 1 FROM schedules x JOIN schedules y ON y.account_id = x.account_id AND y.loan_id = x.loan_id AND y.number = x.number + 3
                     WHERE x.account_id = l.account_id AND x.loan_id = l.id AND x.is_next AND x.number > 1 AND y.payment = x.payment)
      ORDER BY l.id LIMIT 1`,
    [s.account.id],
  );
  loanId = loan!.id;
  personId = (await s.sql<{ id: string }>(`SELECT id FROM people WHERE account_id = $1 ORDER BY id LIMIT 1`, [s.account.id]))[0]!.id;
});
after(() => s?.close());

describe('Mutations: posting and reversing a payment', () => {
  it('posts a payment and shows the loan\'s new next row in the same response; the reversal moves it back', async () => {
    const before = await nextRow(loanId);
    const { payment } = firstRow(await s.sql<{ payment: string }>(`SELECT payment::text FROM schedules WHERE account_id = $1 AND loan_id = $2 AND is_next`, [s.account.id, loanId]));
    const posted = dataOf(
      await s.graph(
        `mutation Post($loan: uuid!, $amount: numeric!) {
          insert_payments_one(object: {loan_id: $loan, date: "2026-11-20", amount: $amount, type: "regular", method: "ach"}) {
            id amount date_reversed
            loan { schedules(where: {is_next: {_eq: true}}) { number } }
          }
        }`,
        { loan: loanId, amount: payment },
      ),
    ).insert_payments_one;
    assert.equal(posted.date_reversed, null);
    assert.equal(String(posted.amount), String(Number(payment)));
    assert.deepEqual(posted.loan.schedules, [{ number: before! + 1 }], 'a payment of one installment moves is_next to the following row');
    assert.equal(await nextRow(loanId), before! + 1);

    const reversed = dataOf(
      await s.graph(
        `mutation($id: uuid!) { update_payments_by_pk(pk_columns: {id: $id}, _set: {date_reversed: "2026-11-21"}) { id date_reversed loan { schedules(where: {is_next: {_eq: true}}) { number } } } }`,
        { id: posted.id },
      ),
    ).update_payments_by_pk;
    assert.equal(reversed.date_reversed, '2026-11-21');
    assert.deepEqual(reversed.loan.schedules, [{ number: before }]);
    assert.equal(await nextRow(loanId), before);
  });

  it('refuses to reverse a reversed payment again or to un-reverse it, in the database itself', async () => {
    const { id } = firstRow(await s.sql<{ id: string }>(
      `INSERT INTO payments (account_id, loan_id, date, amount, date_reversed) VALUES ($1, $2, '2026-01-01', 10, '2026-01-02') RETURNING id`,
      [s.account.id, loanId],
    ));
    for (const value of ['"2026-02-01"', 'null']) {
      const [error] = errorsOf(await s.graph(`mutation { update_payments_by_pk(pk_columns: {id: "${id}"}, _set: {date_reversed: ${value}}) { id } }`));
      assert.equal(error!.extensions?.code, 'check-violation');
      assert.match(error!.message, /date_reversed.*already reversed/);
    }
    await assert.rejects(s.sql(`UPDATE payments SET date_reversed = NULL WHERE account_id = $1 AND id = $2`, [s.account.id, id]), /reversal is final/);
    assert.equal((await s.sql<{ d: string }>(`SELECT date_reversed::text AS d FROM payments WHERE account_id = $1 AND id = $2`, [s.account.id, id]))[0]!.d, '2026-01-02');
  });

  it('refuses a payment of 0 or less, and a reversal dated before the payment, naming the field', async () => {
    for (const amount of ['0', '-5']) {
      const [error] = errorsOf(await s.graph(`mutation { insert_payments_one(object: {loan_id: "${loanId}", date: "2026-01-01", amount: ${amount}}) { id } }`));
      assert.equal(error!.extensions?.code, 'check-violation');
      assert.match(error!.message, /amount/);
    }
    const { id } = firstRow(await s.sql<{ id: string }>(`INSERT INTO payments (account_id, loan_id, date, amount) VALUES ($1, $2, '2026-05-01', 10) RETURNING id`, [s.account.id, loanId]));
    const [error] = errorsOf(await s.graph(`mutation { update_payments_by_pk(pk_columns: {id: "${id}"}, _set: {date_reversed: "2026-04-30"}) { id } }`));
    assert.equal(error!.extensions?.code, 'check-violation');
    await s.sql(`DELETE FROM payments WHERE account_id = $1 AND id = $2`, [s.account.id, id]);
  });
});

describe('Mutations: every form', () => {
  it('insert_<c> with several objects: affected_rows and returning in the order given', async () => {
    const data = dataOf(
      await s.graph(`mutation($loan: uuid!) { insert_tasks(objects: [{name: "call borrower", loan_id: $loan, date_due: "2026-12-01"}, {name: "no loan"}]) { affected_rows returning { name status date_due loan { id } } } }`, {
        loan: loanId,
      }),
    );
    assert.deepEqual(data.insert_tasks, {
      affected_rows: 2,
      returning: [
        { name: 'call borrower', status: 'open', date_due: '2026-12-01', loan: { id: loanId } },
        { name: 'no loan', status: 'open', date_due: null, loan: null },
      ],
    });
  });

  it('update_<c> with _set and a where, update_<c>_by_pk, update_<c>_many in order, delete_<c> and delete_<c>_by_pk', async () => {
    const created = dataOf(await s.graph(`mutation($loan: uuid!) { insert_tasks(objects: [{name: "t1", loan_id: $loan}, {name: "t2", loan_id: $loan}, {name: "t3", loan_id: $loan}]) { returning { id } } }`, { loan: loanId }))
      .insert_tasks.returning.map((row: { id: string }) => row.id) as string[];
    const data = dataOf(
      await s.graph(
        `mutation($ids: [uuid!]!, $first: uuid!) {
          completed: update_tasks(where: {id: {_in: $ids}, name: {_neq: "t3"}}, _set: {status: "completed"}) { affected_rows returning { name status } }
          renamed: update_tasks_by_pk(pk_columns: {id: $first}, _set: {name: "t1 renamed"}) { name status }
          many: update_tasks_many(updates: [{where: {id: {_eq: $first}}, _set: {date_due: "2027-01-01"}}, {where: {id: {_in: $ids}, date_due: {_is_null: false}}, _set: {status: "open"}}]) { affected_rows returning { name status date_due } }
        }`,
        { ids: created, first: created[0] },
      ),
    );
    // Deleted rows are gone by the end of the request, so deletes get a request of their own
    // (a row a later field deletes is missing from an earlier field's returning).
    const deleted = dataOf(
      await s.graph(
        `mutation($ids: [uuid!]!, $last: uuid!) {
          gone: delete_tasks_by_pk(id: $last) { name }
          none: delete_tasks_by_pk(id: $last) { name }
          rest: delete_tasks(where: {id: {_in: $ids}}) { affected_rows returning { name } }
        }`,
        { ids: created, last: created[2] },
      ),
    );
    assert.deepEqual(data.completed.affected_rows, 2);
    // returning shows the state after every write of the request: the later update_many reopened it.
    assert.deepEqual(data.renamed, { name: 't1 renamed', status: 'open' });
    assert.equal(data.many.length, 2);
    assert.equal(data.many[0].affected_rows, 1);
    assert.equal(data.many[1].affected_rows, 1, 'the second update sees the first one\'s write');
    assert.deepEqual(data.many[1].returning, [{ name: 't1 renamed', status: 'open', date_due: '2027-01-01' }]);
    assert.deepEqual(deleted.gone, { name: 't3' });
    assert.equal(deleted.none, null, 'a row already deleted is null');
    assert.equal(deleted.rest.affected_rows, 2);
    assert.deepEqual(deleted.rest.returning.map((row: { name: string }) => row.name).sort(), ['t1 renamed', 't2']);
    assert.equal((await s.sql(`SELECT 1 FROM tasks WHERE account_id = $1 AND id = ANY($2::uuid[])`, [s.account.id, created])).length, 0);
  });

  it('_inc adds to a number, and update without a where is a validation error (where: {} is the explicit form)', async () => {
    const { id } = firstRow(await s.sql<{ id: string }>(`INSERT INTO funding_sources (account_id, person_id, loan_id, committed_amount) VALUES ($1, $2, $3, 100) RETURNING id`, [s.account.id, personId, loanId]));
    const data = dataOf(await s.graph(`mutation { update_funding_sources_by_pk(pk_columns: {id: "${id}"}, _inc: {committed_amount: 25.5}) { committed_amount } }`));
    assert.equal(String(data.update_funding_sources_by_pk.committed_amount), '125.5');
    const [missing] = errorsOf(await s.graph(`mutation { update_tasks(_set: {status: "x"}) { affected_rows } }`));
    assert.equal(missing!.extensions?.code, 'validation-failed');
    assert.match(missing!.message, /where/);
    const [nothing] = errorsOf(await s.graph(`mutation { update_tasks(where: {}) { affected_rows } }`));
    assert.equal(nothing!.extensions?.code, 'validation-failed');
  });

  it('insert_<c>_one with on_conflict: DO NOTHING returns null, DO UPDATE keeps one row', async () => {
    const { id: documentId } = firstRow(await s.sql<{ id: string }>(`INSERT INTO documents (account_id, name) VALUES ($1, 'x.pdf') RETURNING id`, [s.account.id]));
    const link = `mutation($loan: uuid!, $doc: uuid!) { insert_loan_documents_one(object: {loan_id: $loan, document_id: $doc}, on_conflict: {constraint: loan_documents_account_id_loan_id_document_id_key}) { id } }`;
    const first = dataOf(await s.graph(link, { loan: loanId, doc: documentId })).insert_loan_documents_one;
    assert.ok(first.id);
    assert.equal(dataOf(await s.graph(link, { loan: loanId, doc: documentId })).insert_loan_documents_one, null);
    const [duplicate] = errorsOf(await s.graph(`mutation { insert_loan_documents_one(object: {loan_id: "${loanId}", document_id: "${documentId}"}) { id } }`));
    assert.equal(duplicate!.extensions?.code, 'constraint-violation');
    assert.match(duplicate!.message, /loan_id, document_id/);
    assert.equal((await s.sql(`SELECT 1 FROM loan_documents WHERE account_id = $1 AND document_id = $2`, [s.account.id, documentId])).length, 1);
  });

  it('nested inserts: an address with its loan link and first valuation; a document with its loan link', async () => {
    const data = dataOf(
      await s.graph(
        `mutation($loan: uuid!) {
          insert_addresses_one(object: {street1: "9 Elm St", city: "Springfield", state: "IL", zipcode: "62701",
              address_details: {data: [{loan_id: $loan}]}, valuations: {data: [{value: 250000, valuation_type: "appraisal", report_date: "2026-10-01"}]}}) {
            street1 address_details { loan { id } } valuations { value address { street1 } }
          }
          insert_documents(objects: [{name: "deed.pdf", type: "deed", loan_documents: {data: {loan_id: $loan}}}]) { affected_rows returning { name loan_documents { loan_id } } }
          insert_address_details_one(object: {loan_id: $loan, address: {data: {street1: "10 Elm St"}}}) { address { street1 } }
        }`,
        { loan: loanId },
      ),
    );
    assert.deepEqual(data.insert_addresses_one, {
      street1: '9 Elm St',
      address_details: [{ loan: { id: loanId } }],
      valuations: [{ value: 250000, address: { street1: '9 Elm St' } }],
    });
    assert.deepEqual(data.insert_documents, { affected_rows: 2, returning: [{ name: 'deed.pdf', loan_documents: [{ loan_id: loanId }] }] });
    assert.deepEqual(data.insert_address_details_one, { address: { street1: '10 Elm St' } });
  });

  it('updates a loan\'s name, status and custom fields (merged with _append), and nothing that drives the schedule', async () => {
    const data = dataOf(
      await s.graph(`mutation($id: uuid!) { update_loans_by_pk(pk_columns: {id: $id}, _set: {name: "Renamed"}, _append: {custom_fields: {loan_officer: "Zed"}}) { name loan_officer property_type } }`, {
        id: loanId,
      }),
    );
    assert.equal(data.update_loans_by_pk.name, 'Renamed');
    assert.equal(data.update_loans_by_pk.loan_officer, 'Zed');
    const [amount] = errorsOf(await s.graph(`mutation($id: uuid!) { update_loans_by_pk(pk_columns: {id: $id}, _set: {amount: 1}) { name } }`, { id: loanId }));
    assert.equal(amount!.extensions?.code, 'validation-failed');
    const [array] = errorsOf(await s.graph(`mutation($id: uuid!) { update_loans_by_pk(pk_columns: {id: $id}, _set: {custom_fields: [1]}) { name } }`, { id: loanId }));
    assert.equal(array!.extensions?.code, 'check-violation');
  });
});

describe('Mutations: the shipped permissions of every collection', () => {
  const MUTATIONS: Record<string, readonly string[]> = {
    loans: ['update', 'delete'],
    people: ['insert', 'update'],
    funding_sources: ['insert', 'update', 'delete'],
    documents: ['insert', 'update', 'delete'],
    addresses: ['insert', 'update', 'delete'],
    valuations: ['insert', 'update', 'delete'],
    insurances: ['insert', 'update', 'delete'],
    payments: ['insert', 'update'],
    schedules: [],
    tasks: ['insert', 'update', 'delete'],
    comments: ['insert', 'delete'],
    borrows: ['insert', 'delete'],
    guarantees: ['insert', 'delete'],
    loan_documents: ['insert', 'delete'],
    address_details: ['insert', 'delete'],
    fees: ['insert'],
    fee_waivers: ['insert'],
  };
  const WRITABLE: Record<string, { insert?: string[]; update?: string[] }> = {
    loans: { update: ['name', 'status', 'custom_fields'] },
    payments: { insert: ['loan_id', 'date', 'amount', 'type', 'method'], update: ['date_reversed', 'reversal_reason'] },
    tasks: { insert: ['loan_id', 'name', 'status', 'date_due', 'assignee_id'], update: ['name', 'status', 'date_due', 'assignee_id'] },
    comments: { insert: ['loan_id', 'text'] },
    fees: { insert: ['loan_id', 'date', 'amount', 'description'] },
    fee_waivers: { insert: ['fee_id', 'waived_on', 'waived_by', 'reason'] },
    people: { insert: ['name', 'email', 'phone', 'status', 'entity_type'], update: ['name', 'email', 'phone', 'status'] },
  };

  it('offers exactly the declared mutation fields and input fields', async () => {
    const schema = dataOf(await s.graph(`{ __schema { mutationType { fields { name } } } }`)).__schema.mutationType.fields.map((f: { name: string }) => f.name) as string[];
    const expected: string[] = [];
    for (const [collection, kinds] of Object.entries(MUTATIONS)) {
      if (kinds.includes('insert')) expected.push(`insert_${collection}`, `insert_${collection}_one`);
      if (kinds.includes('update')) expected.push(`update_${collection}`, `update_${collection}_by_pk`, `update_${collection}_many`);
      if (kinds.includes('delete')) expected.push(`delete_${collection}`, `delete_${collection}_by_pk`);
    }
    assert.deepEqual([...schema].sort(), expected.sort());
    for (const [collection, writable] of Object.entries(WRITABLE)) {
      for (const [kind, typeName] of [['insert', `${collection}_insert_input`], ['update', `${collection}_set_input`]] as const) {
        const type = dataOf(await s.graph(`query($n: String!) { __type(name: $n) { inputFields { name type { kind } } } }`, { n: typeName })).__type;
        const scalars = type ? type.inputFields.filter((f: { type: { kind: string } }) => f.type.kind === 'SCALAR').map((f: { name: string }) => f.name) : [];
        assert.deepEqual(scalars.sort(), [...(writable[kind] ?? [])].sort(), `${typeName}`);
      }
    }
  });

  // (The seeded loan may be fully funded already: a source of original_amount 0 keeps Σ w ≤ 1, SPEC §12 R10.)
  it('writes each collection as a servicer would, on seeded data', async () => {
    const { id: documentId } = firstRow(await s.sql<{ id: string }>(`SELECT id FROM documents WHERE account_id = $1 ORDER BY id LIMIT 1`, [s.account.id]));
    const { id: addressId } = firstRow(await s.sql<{ id: string }>(`SELECT id FROM addresses WHERE account_id = $1 ORDER BY id LIMIT 1`, [s.account.id]));
    const { id: otherPerson } = firstRow(await s.sql<{ id: string }>(
      `SELECT p.id FROM people p WHERE p.account_id = $1 AND NOT EXISTS (SELECT 1 FROM borrows b WHERE b.account_id = p.account_id AND b.loan_id = $2 AND b.person_id = p.id)
         AND NOT EXISTS (SELECT 1 FROM guarantees g WHERE g.account_id = p.account_id AND g.loan_id = $2 AND g.person_id = p.id) ORDER BY p.id LIMIT 1`,
      [s.account.id, loanId],
    ));
    const v = { loan: loanId, person: otherPerson, doc: documentId, address: addressId };
    const data = dataOf(
      await s.graph(
        `mutation($loan: uuid!, $person: uuid!, $doc: uuid!, $address: uuid!) {
          person: insert_people_one(object: {name: "Grace Hopper", email: "grace@example.com", entity_type: "individual"}) { name status is_borrower }
          borrow: insert_borrows_one(object: {loan_id: $loan, person_id: $person}) { person { id } }
          guarantee: insert_guarantees_one(object: {loan_id: $loan, person_id: $person}) { loan { id } }
          funding: insert_funding_sources_one(object: {loan_id: $loan, person_id: $person, class: "A", rate: 7.5, original_amount: 0, committed_amount: 1000}) { class rate }
          document: update_documents_by_pk(pk_columns: {id: $doc}, _set: {status: "approved"}) { status }
          valuation: insert_valuations_one(object: {address_id: $address, value: 1, valuation_type: "bpo", report_date: "2026-01-01"}) { value }
          insurance: insert_insurances_one(object: {address_id: $address, carrier: "Acme", type: "hazard", coverage_amount: 500000, expiration: "2027-01-01"}) { carrier }
          address: update_addresses_by_pk(pk_columns: {id: $address}, _set: {zipcode: "02139"}) { zipcode }
          comment: insert_comments_one(object: {loan_id: $loan, text: "Called the borrower."}) { text admin { id } }
          loan: update_loans_by_pk(pk_columns: {id: $loan}, _set: {status: "servicing"}) { status }
        }`,
        v,
      ),
    );
    assert.deepEqual(data.person, { name: 'Grace Hopper', status: 'active', is_borrower: false });
    assert.deepEqual(data.borrow, { person: { id: otherPerson } });
    assert.deepEqual(data.guarantee, { loan: { id: loanId } });
    assert.deepEqual(data.funding, { class: 'A', rate: 7.5 });
    assert.deepEqual(data.document, { status: 'approved' });
    assert.deepEqual(data.valuation, { value: 1 });
    assert.deepEqual(data.insurance, { carrier: 'Acme' });
    assert.deepEqual(data.address, { zipcode: '02139' });
    assert.deepEqual(data.comment, { text: 'Called the borrower.', admin: null }, 'an API key writes a comment with no admin');
    assert.deepEqual(data.loan, { status: 'servicing' });
    const removed = dataOf(
      await s.graph(
        `mutation($loan: uuid!, $person: uuid!) {
          b: delete_borrows(where: {loan_id: {_eq: $loan}, person_id: {_eq: $person}}) { affected_rows }
          g: delete_guarantees(where: {loan_id: {_eq: $loan}, person_id: {_eq: $person}}) { affected_rows }
          f: delete_funding_sources(where: {loan_id: {_eq: $loan}, person_id: {_eq: $person}, class: {_eq: "A"}}) { affected_rows }
          c: delete_comments(where: {text: {_eq: "Called the borrower."}}) { affected_rows }
          v: delete_valuations(where: {valuation_type: {_eq: "bpo"}, value: {_eq: 1}}) { affected_rows }
          i: delete_insurances(where: {carrier: {_eq: "Acme"}}) { affected_rows }
        }`,
        { loan: loanId, person: otherPerson },
      ),
    );
    assert.deepEqual(removed, { b: { affected_rows: 1 }, g: { affected_rows: 1 }, f: { affected_rows: 1 }, c: { affected_rows: 1 }, v: { affected_rows: 1 }, i: { affected_rows: 1 } });
  });

  it('has no way to delete a payment, change its amount, or write a schedule', async () => {
    for (const query of [
      `mutation { delete_payments(where: {}) { affected_rows } }`,
      `mutation { update_payments(where: {}, _set: {amount: 1}) { affected_rows } }`,
      `mutation { insert_schedules_one(object: {number: 1}) { id } }`,
      `mutation { insert_payments_one(object: {loan_id: "${loanId}", date: "2026-01-01", amount: 1, account_id: "${loanId}"}) { id } }`,
      `mutation { insert_tasks_one(object: {id: "${loanId}", name: "x"}) { id } }`,
    ]) {
      const [error] = errorsOf(await s.graph(query));
      assert.equal(error!.extensions?.code, 'validation-failed', query);
    }
  });
});

describe('Mutations: one transaction per request', () => {
  it('writes nothing when the second of two fields fails', async () => {
    const before = await snapshot();
    const [error] = errorsOf(
      await s.graph(
        `mutation($loan: uuid!) {
          insert_payments_one(object: {loan_id: $loan, date: "2026-11-01", amount: 100}) { id }
          update_loans_by_pk(pk_columns: {id: $loan}, _set: {status: "nonsense"}) { id }
        }`,
        { loan: loanId },
      ),
    );
    assert.equal(error!.extensions?.code, 'check-violation');
    assert.deepEqual(error!.path, ['update_loans_by_pk']);
    assert.match(error!.message, /status/);
    assert.deepEqual(await snapshot(), before);
  });

  it('writes nothing when a nested insert fails', async () => {
    const before = await snapshot();
    const [error] = errorsOf(
      await s.graph(`mutation { insert_addresses_one(object: {street1: "1 Nowhere", address_details: {data: [{loan_id: "00000000-0000-4000-8000-000000000000"}]}, valuations: {data: [{value: 5}]}}) { id } }`),
    );
    assert.equal(error!.extensions?.code, 'not-found');
    assert.deepEqual(await snapshot(), before);
  });

  it('names the field of a missing required value, a value out of range, and too many digits', async () => {
    const [required] = errorsOf(await s.graph(`mutation { insert_payments_one(object: {loan_id: "${loanId}", amount: 5}) { id } }`));
    assert.equal(required!.extensions?.code, 'validation-failed');
    assert.match(required!.message, /date/);
    const [digits] = errorsOf(await s.graph(`mutation { insert_payments_one(object: {loan_id: "${loanId}", date: "2026-01-01", amount: 1.005}) { id } }`));
    assert.equal(digits!.extensions?.code, 'validation-failed');
    assert.match(digits!.message, /amount/);
    const [huge] = errorsOf(await s.graph(`mutation { insert_payments_one(object: {loan_id: "${loanId}", date: "2026-01-01", amount: 1e20}) { id } }`));
    assert.equal(huge!.extensions?.code, 'validation-failed');
    assert.match(huge!.message, /amount/);
    for (const [query, variables] of [
      ['mutation { insert_tasks_one(object: {name: "a\\u0000b"}) { id } }', undefined],
      ['mutation($n: String) { insert_tasks_one(object: {name: $n}) { id } }', { n: 'a\u0000b' }],
      ['mutation($o: [tasks_insert_input!]!) { insert_tasks(objects: $o) { affected_rows } }', { o: [{ name: 'a\u0000b' }] }],
    ] as const) {
      const [nul] = errorsOf(await s.graph(query, variables));
      assert.equal(nul!.extensions?.code, 'validation-failed', query);
    }
    const [entity] = errorsOf(await s.graph(`mutation { insert_people_one(object: {name: "X", entity_type: "robot"}) { id } }`));
    assert.equal(entity!.extensions?.code, 'check-violation');
    assert.match(entity!.message, /entity_type/);
  });

  it('refuses more objects than MAX_INSERT_OBJECTS, nested rows included', async () => {
    const objects = Array.from({ length: 1001 }, (_, i) => ({ name: `bulk ${i}` }));
    const [error] = errorsOf(await s.graph(`mutation($o: [tasks_insert_input!]!) { insert_tasks(objects: $o) { affected_rows } }`, { o: objects }));
    assert.equal(error!.extensions?.code, 'validation-failed');
    assert.match(error!.message, /MAX_INSERT_OBJECTS/);
    const ok = dataOf(await s.graph(`mutation($o: [tasks_insert_input!]!) { insert_tasks(objects: $o) { affected_rows } }`, { o: objects.slice(0, 1000) }));
    assert.equal(ok.insert_tasks.affected_rows, 1000);
    await s.sql(`DELETE FROM tasks WHERE account_id = $1 AND name LIKE 'bulk %'`, [s.account.id]);
  });

  it('refuses more update_many entries than MAX_INSERT_OBJECTS in one request, counted over its fields, and writes nothing', async () => {
    const [task] = dataOf(await s.graph(`mutation { insert_tasks(objects: [{name: "many 0"}]) { returning { id } } }`)).insert_tasks.returning as { id: string }[];
    const entry = (i: number) => ({ where: { id: { _eq: task!.id } }, _set: { name: `many ${i + 1}` } });
    const many = `mutation($a: [tasks_updates!]!, $b: [tasks_updates!]!) { a: update_tasks_many(updates: $a) { affected_rows } b: update_tasks_many(updates: $b) { affected_rows } }`;
    // 5,000 entries ran as 5,000 statements in one transaction (5.4 s on PGlite) before.
    const [error] = errorsOf(await s.graph(many, { a: Array.from({ length: 600 }, (_, i) => entry(i)), b: Array.from({ length: 401 }, (_, i) => entry(600 + i)) }));
    assert.equal(error!.extensions?.code, 'validation-failed');
    assert.match(error!.message, /at most 1000 updates together \(MAX_INSERT_OBJECTS\), not 1001/);
    const rows = await s.sql<{ name: string }>(`SELECT name FROM tasks WHERE account_id = $1 AND id = $2`, [s.account.id, task!.id]);
    assert.deepEqual(rows, [{ name: 'many 0' }], 'nothing was written');
    const ok = dataOf(await s.graph(many, { a: [entry(0)], b: [entry(1)] }));
    assert.deepEqual([ok.a.length, ok.b.length], [1, 1]);
    await s.sql(`DELETE FROM tasks WHERE account_id = $1 AND id = $2`, [s.account.id, task!.id]);
  });
});

describe('Mutations: explain', () => {
  it('shows a mutation\'s statements without running them', async () => {
    const before = await snapshot();
    const answer = await s.post('/api/graph/explain', { query: `mutation($loan: uuid!) { insert_payments_one(object: {loan_id: $loan, date: "2026-01-01", amount: 5}) { id } }`, variables: { loan: loanId } });
    assert.equal(answer.status, 200, answer.text);
    const body = answer.body as { statements: { sql: string; params: unknown[] }[]; plan: unknown };
    assert.equal(body.statements.length, 2, 'one write statement, one response statement');
    assert.match(body.statements[0]!.sql, /^WITH "_w0" AS \(INSERT INTO "payments"/);
    assert.ok(body.statements[0]!.params.includes(loanId));
    assert.match(body.statements[1]!.sql, /^SELECT concat\('{"data":'/);
    assert.deepEqual(await snapshot(), before);
  });
});

describe('Mutations: a deactivated API key', () => {
  it('is refused with 403 and writes nothing, on the fast path and with an Idempotency-Key', async () => {
    const key = await createApiKey(s.db, s.account.id, 'soon revoked');
    const post = (headers: Record<string, string>) =>
      send(`${s.url}/api/graph`, {
        method: 'POST',
        headers: { authorization: `Token ${key.key}`, 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ query: `mutation { insert_tasks_one(object: {name: "by a revoked key"}) { id } }` }),
      });
    assert.equal((await post({})).status, 200, 'the key works before');
    await deactivateApiKey(s.db, key.prefix);
    for (const headers of [{}, { 'idempotency-key': 'revoked-1' }] as Record<string, string>[]) {
      const answer = await post(headers);
      assert.deepEqual([answer.status, answer.text], [403, 'Not authorized']);
    }
    const rows = await s.sql(`SELECT 1 FROM tasks WHERE account_id = $1 AND name = 'by a revoked key'`, [s.account.id]);
    assert.equal(rows.length, 1, 'only the write made before the key was deactivated');
  });
});
