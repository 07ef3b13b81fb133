import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { GraphRequest } from '../../engine/index.js';
import { startSeededService, type SeededService } from '../support/seededService.js';

/**
 * Issue 18, Done when 5 (docs/scaling.md, "Citus"): every statement the engine emits — for every
 * query form and every mutation form — names the account on every reference to a tenant table:
 * each `FROM`/`JOIN`/`UPDATE`/`DELETE FROM "<table>" AS "<alias>"` is followed somewhere in the
 * statement by `"<alias>"."account_id" = $n` with `$n` bound to the caller's account, and every
 * `INSERT INTO "<table>"` writes the `account_id` column. With that, Citus routes each statement
 * to the one shard group of the account (a router query) when the tenant tables are distributed
 * by `account_id` and co-located. The statements are captured with `db.observe` as the engine
 * runs them on a real database; the forms are checked to have run (no `errors`).
 */
let s: SeededService;
let accountId: string;
let tenantTables: Set<string>;
const ids = new Map<string, string>();

before(async () => {
  s = await startSeededService({ scale: 0.01 });
  accountId = s.account.id;
  tenantTables = new Set((await s.sql<{ table_name: string }>(`SELECT table_name FROM information_schema.columns WHERE column_name = 'account_id' AND table_schema = current_schema()`)).map((row) => row.table_name));
  ids.set('task', (await s.sql<{ id: string }>(`INSERT INTO tasks (account_id, name) VALUES ($1, 'to delete') RETURNING id`, [accountId]))[0]!.id);
  for (const table of ['loans', 'people', 'documents', 'payments']) {
    // A loan in servicing: the forms below post a payment to it, which a lead does not take (migration 0050).
    ids.set(table, (await s.sql<{ id: string }>(`SELECT id FROM ${table} WHERE account_id = $1${table === 'loans' ? ` AND status = 'servicing'` : ''} ORDER BY id LIMIT 1`, [accountId]))[0]!.id);
  }
});
after(() => s?.close());

const QUERIES: readonly (readonly [string, () => GraphRequest])[] = [
  ['a list with where, order_by, limit, offset', () => ({ query: `{ loans(where: {status: {_eq: "servicing"}, amount: {_gt: 1000}}, order_by: [{amount: desc}], limit: 5, offset: 1) { id name } }` })],
  ['_by_pk', () => ({ query: `query($id: uuid!) { loans_by_pk(id: $id) { id name } }`, variables: { id: ids.get('loans') } })],
  ['_aggregate with count, sum, avg, min, max and nodes', () => ({ query: `{ loans_aggregate(where: {status: {_neq: "closed"}}) { aggregate { count(columns: [status], distinct: true) sum { amount } avg { rate } min { date_funded } max { name } } nodes { id } } }` })],
  ['object and array relationships, nested where/order_by/limit, nested _aggregate', () => ({ query: `{ loans(limit: 3) { borrows { person { name } } schedules(where: {is_next: {_eq: true}}, order_by: {due: desc}, limit: 2) { due } payments_aggregate { aggregate { count sum { amount } } } address_details { address { city valuations { value } } } loan_documents { document { name } } comments { admin { name } } } }` })],
  ['filters through relationships, _and/_or/_not, _in, _ilike, _is_null', () => ({ query: `{ loans(where: {_or: [{borrows: {person: {name: {_ilike: "%a%"}}}}, {payments: {amount: {_gt: 100}}}], _not: {status: {_in: ["closed"]}}, date_funded: {_is_null: false}}) { id } }` })],
  ['order_by through an object relationship', () => ({ query: `{ payments(order_by: [{loan: {amount: desc}}, {date: asc}], limit: 5) { id loan { name } } }` })],
  ['every collection at the root', () => ({ query: `{ loans(limit: 1) { id } people(limit: 1) { id } funding_sources(limit: 1) { id } documents(limit: 1) { id } addresses(limit: 1) { id } valuations(limit: 1) { id } insurances(limit: 1) { id } payments(limit: 1) { id } schedules(limit: 1) { id } tasks(limit: 1) { id } comments(limit: 1) { id } borrows(limit: 1) { id } guarantees(limit: 1) { id } loan_documents(limit: 1) { id } address_details(limit: 1) { id } }` })],
];

const MUTATIONS: readonly (readonly [string, () => GraphRequest])[] = [
  ['insert_<c> with returning through a relationship', () => ({ query: `mutation($loan: uuid!) { insert_tasks(objects: [{name: "a", loan_id: $loan}, {name: "b"}]) { affected_rows returning { id loan { name } } } }`, variables: { loan: ids.get('loans') } })],
  ['insert_<c>_one', () => ({ query: `mutation($loan: uuid!) { insert_payments_one(object: {loan_id: $loan, date: "2026-11-20", amount: 10.5, method: "ach"}) { id loan { schedules(where: {is_next: {_eq: true}}) { due } } } }`, variables: { loan: ids.get('loans') } })],
  ['a nested insert (object and array relationships)', () => ({ query: `mutation($loan: uuid!) { insert_addresses_one(object: {street1: "1 Main St", city: "Springfield", address_details: {data: [{loan_id: $loan}]}, valuations: {data: [{value: 250000}]}}) { id address_details { loan { name } } valuations { value } } }`, variables: { loan: ids.get('loans') } })],
  ['insert with on_conflict', () => ({ query: `mutation($loan: uuid!, $doc: uuid!) { insert_loan_documents_one(object: {loan_id: $loan, document_id: $doc}, on_conflict: {constraint: loan_documents_account_id_loan_id_document_id_key}) { id } }`, variables: { loan: ids.get('loans'), doc: ids.get('documents') } })],
  ['update_<c> with _set and _inc', () => ({ query: `mutation { update_tasks(where: {name: {_eq: "a"}}, _set: {status: "open"}) { affected_rows returning { id } } update_valuations(where: {value: {_eq: 250000}}, _inc: {value: 1}) { affected_rows } }` })],
  ['update_<c>_by_pk', () => ({ query: `mutation($id: uuid!) { update_loans_by_pk(pk_columns: {id: $id}, _set: {name: "renamed"}) { name borrows { person { name } } } }`, variables: { id: ids.get('loans') } })],
  ['update_<c>_many', () => ({ query: `mutation { update_tasks_many(updates: [{where: {name: {_eq: "a"}}, _set: {name: "a2"}}, {where: {name: {_eq: "b"}}, _set: {status: "completed"}}]) { affected_rows } }` })],
  ['delete_<c>', () => ({ query: `mutation { delete_tasks(where: {name: {_in: ["a2", "b"]}}) { affected_rows returning { id } } }` })],
  ['delete_<c> through a relationship filter', () => ({ query: `mutation($doc: uuid!) { delete_loan_documents(where: {document_id: {_eq: $doc}, loan: {status: {_neq: "closed"}}}) { affected_rows } }`, variables: { doc: ids.get('documents') } })],
  ['delete_<c>_by_pk', () => ({ query: `mutation($id: uuid!) { delete_tasks_by_pk(id: $id) { id } }`, variables: { id: ids.get('task') } })],
];

interface Observed {
  readonly text: string;
  readonly values: readonly unknown[];
}

/** Every reference to a tenant table that lacks the account predicate, in words. */
function missingPredicates(statement: Observed): string[] {
  const problems: string[] = [];
  const { text, values } = statement;
  const accountParams = new Set(values.flatMap((value, index) => (value === accountId ? [`$${index + 1}`] : [])));
  const hasPredicate = (alias: string): boolean =>
    [...text.matchAll(new RegExp(`"${alias}"\\."account_id" = (\\$\\d+)`, 'g'))].some((match) => accountParams.has(match[1]!));
  for (const match of text.matchAll(/\b(FROM|JOIN|UPDATE|DELETE FROM)\s+"([a-z_]+)"(?:\s+AS\s+"([A-Za-z0-9_]+)")?/g)) {
    const [, keyword, table, alias] = match;
    if (!tenantTables.has(table!)) continue;
    if (!hasPredicate(alias ?? table!)) problems.push(`${keyword} "${table}"${alias ? ` AS "${alias}"` : ''} without "${alias ?? table}"."account_id" = <the account>`);
  }
  for (const match of text.matchAll(/\bINSERT INTO\s+"([a-z_]+)"(?:\s+AS\s+"[A-Za-z0-9_]+")?\s*\(([^)]*)\)/g)) {
    if (tenantTables.has(match[1]!) && !/"account_id"/.test(match[2]!)) problems.push(`INSERT INTO "${match[1]}" without the account_id column`);
  }
  if (/\bINSERT INTO\s+"[a-z_]+"/.test(text) && accountParams.size === 0) problems.push('an INSERT without the account bound');
  return problems;
}

async function capture(request: GraphRequest): Promise<{ body: string; statements: Observed[] }> {
  const statements: Observed[] = [];
  const stop = s.db.observe((text, values) => {
    if (!/^(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)\b/i.test(text.trim())) statements.push({ text, values });
  });
  try {
    return { body: await s.service.engine.execute(s.db, request, accountId), statements };
  } finally {
    stop();
  }
}

describe('Citus: every statement the engine emits carries the account predicate', () => {
  for (const [kind, forms] of [['query', QUERIES], ['mutation', MUTATIONS]] as const) {
    describe(`${kind} forms`, () => {
      for (const [what, request] of forms) {
        it(what, async () => {
          const { body, statements } = await capture(request());
          assert.equal((JSON.parse(body) as { errors?: unknown }).errors, undefined, body.slice(0, 300));
          assert.ok(statements.length > 0);
          const tenantReferences = statements.reduce((count, st) => count + [...st.text.matchAll(/\b(?:FROM|JOIN|UPDATE|INSERT INTO)\s+"([a-z_]+)"/g)].filter((m) => tenantTables.has(m[1]!)).length, 0);
          assert.ok(tenantReferences > 0, 'the statements reference tenant tables');
          assert.deepEqual(statements.flatMap(missingPredicates), []);
          if (process.env.SHOW_SQL) for (const st of statements) process.stdout.write(`${st.text}\n\n`);
        });
      }
    });
  }

  it('the check itself finds a reference without the predicate', () => {
    const problems = missingPredicates({ text: `SELECT 1 FROM "loans" AS "_t1" JOIN "people" AS "_t2" ON true WHERE "_t1"."account_id" = $1`, values: [accountId] });
    assert.deepEqual(problems, ['JOIN "people" AS "_t2" without "_t2"."account_id" = <the account>']);
  });
});
