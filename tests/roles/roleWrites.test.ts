import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApiKey } from '../../app/apiKeys.js';
import { METADATA_PATH, send, startSeededService, type Answer, type SeededService } from '../support/seededService.js';

/**
 * Issue 15, Done when 3 and 4: what each shipped role may write (GraphQL mutations and the REST
 * loan routes), checks verified in the transaction, and roles changed in the metadata file
 * taking effect without a restart (a bad role refused, the old metadata serving).
 */
const ORIGINAL = readFileSync(METADATA_PATH, 'utf8');
let dir: string;
let metadataPath: string;
let a: SeededService;
const keys = new Map<string, string>();
let investorId: string;
let servicingLoan: string;
let closedLoan: string;
let investorLoan: string;

async function keyFor(role: string, variables: Record<string, string> = {}): Promise<string> {
  const created = await createApiKey(a.db, a.account.id, `${role} key`, { role, variables: new Map(Object.entries(variables)) });
  return created.key;
}

function graphAs(role: string, query: string, variables?: Record<string, unknown>): Promise<Answer<any>> {
  return send(`${a.url}/api/graph`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Token ${keys.get(role)}` },
    body: JSON.stringify({ query, variables }),
  });
}

function rest(role: string, method: string, path: string, body?: unknown): Promise<Answer<any>> {
  return send(`${a.url}/api/loan${path}`, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Token ${keys.get(role)}` },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

const count = async (text: string, values: unknown[]): Promise<number> => Number((await a.sql<{ n: string }>(text, values))[0]!.n);

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'loanql-role-writes-'));
  metadataPath = join(dir, 'loanql.yaml');
  writeFileSync(metadataPath, ORIGINAL);
  a = await startSeededService({ scale: 0.01, config: { metadataPath } });
  const A = a.account.id;
  investorId = (await a.sql<{ person_id: string }>(`SELECT person_id FROM funding_sources WHERE account_id = $1 ORDER BY person_id LIMIT 1`, [A]))[0]!.person_id;
  servicingLoan = (await a.sql<{ id: string }>(`SELECT id FROM loans WHERE account_id = $1 AND status = 'servicing' ORDER BY id LIMIT 1`, [A]))[0]!.id;
  // Closed, not a lead: a lead takes no payment from any role (migration 0050), so the servicer's
  // own check (servicing only) is what refuses this one, and the admin's post is taken (credit).
  const closed = await a.sql<{ id: string }>(`SELECT id FROM loans WHERE account_id = $1 AND status = 'closed' ORDER BY id LIMIT 1`, [A]);
  closedLoan = closed[0]!.id;
  investorLoan = (await a.sql<{ loan_id: string }>(`SELECT loan_id FROM funding_sources WHERE account_id = $1 AND person_id = $2 ORDER BY loan_id LIMIT 1`, [A, investorId]))[0]!.loan_id;
  keys.set('admin', a.apiKey);
  keys.set('read_only', await keyFor('read_only'));
  keys.set('servicer', await keyFor('servicer'));
  keys.set('investor', await keyFor('investor', { person_id: investorId }));
});

after(async () => {
  await a?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('Roles: read_only writes nothing', () => {
  it('has no mutation field at all: every mutation is a validation error, nothing written', async () => {
    const before = await count(`SELECT count(*) AS n FROM comments WHERE account_id = $1`, [a.account.id]);
    for (const mutation of [
      `mutation ($loan: uuid!) { insert_comments_one(object: {loan_id: $loan, text: "hi"}) { id } }`,
      `mutation ($loan: uuid!) { update_loans_by_pk(pk_columns: {id: $loan}, _set: {name: "x"}) { id } }`,
      `mutation ($loan: uuid!) { delete_tasks(where: {loan_id: {_eq: $loan}}) { affected_rows } }`,
    ]) {
      const answer = await graphAs('read_only', mutation, { loan: servicingLoan });
      assert.equal(answer.body.errors?.[0]?.extensions?.code, 'validation-failed', JSON.stringify(answer.body));
    }
    assert.equal(await count(`SELECT count(*) AS n FROM comments WHERE account_id = $1`, [a.account.id]), before);
    // It still reads everything the admin reads.
    const admin = (await graphAs('admin', `{ loans_aggregate { aggregate { count } } people { email } }`)).body.data;
    const readOnly = (await graphAs('read_only', `{ loans_aggregate { aggregate { count } } people { email } }`)).body.data;
    assert.deepEqual(readOnly, admin);
  });

  it('cannot POST or PATCH /api/loan (403 JSON naming the permission); GET works', async () => {
    const post = await rest('read_only', 'POST', '', { name: 'x', amount: 1000, rate: 5, term: 12 });
    assert.equal(post.status, 403);
    assert.deepEqual([post.body.permission, post.body.role], ['loans.insert', 'read_only']);
    assert.match(post.body.error, /no insert permission on loans/);
    const patch = await rest('read_only', 'PATCH', `/${servicingLoan}`, { name: 'renamed' });
    assert.equal(patch.status, 403);
    assert.equal(patch.body.permission, 'loans.update');
    assert.equal((await rest('read_only', 'GET', `/${servicingLoan}`)).status, 200);
    assert.equal(await count(`SELECT count(*) AS n FROM loans WHERE account_id = $1 AND name = 'renamed'`, [a.account.id]), 0);
    // A key without a role's permission is still told apart from a bad key.
    const bad = await send(`${a.url}/api/loan`, { headers: { authorization: 'Token lq_nothing' } });
    assert.deepEqual([bad.status, bad.text], [403, 'Not authorized']);
  });
});

describe('Roles: servicer writes only within its permissions', () => {
  it('posts a payment to a loan in servicing', async () => {
    const answer = await graphAs('servicer', `mutation ($loan: uuid!) { insert_payments_one(object: {loan_id: $loan, date: "2026-11-20", amount: 10, type: "regular", method: "ach"}) { id loan { id } } }`, {
      loan: servicingLoan,
    });
    assert.equal(answer.body.errors, undefined, JSON.stringify(answer.body));
    assert.equal(answer.body.data.insert_payments_one.loan.id, servicingLoan);
  });

  it('an insert failing its check (a payment to a loan not in servicing) is a permission-error and writes nothing', async () => {
    const before = await count(`SELECT count(*) AS n FROM payments WHERE account_id = $1`, [a.account.id]);
    const answer = await graphAs(
      'servicer',
      `mutation ($lead: uuid!, $ok: uuid!) {
        good: insert_payments_one(object: {loan_id: $ok, date: "2026-11-21", amount: 11, type: "regular", method: "ach"}) { id }
        bad: insert_payments(objects: [{loan_id: $lead, date: "2026-11-21", amount: 12, type: "regular", method: "ach"}]) { affected_rows }
      }`,
      { lead: closedLoan, ok: servicingLoan },
    );
    assert.equal(answer.body.errors?.[0]?.extensions?.code, 'permission-error', JSON.stringify(answer.body));
    assert.deepEqual(answer.body.errors[0].path, ['bad']);
    assert.equal(await count(`SELECT count(*) AS n FROM payments WHERE account_id = $1`, [a.account.id]), before, 'not even the first field of the request');
    // The admin role has no such check.
    const admin = await graphAs('admin', `mutation ($lead: uuid!) { insert_payments_one(object: {loan_id: $lead, date: "2026-11-21", amount: 12, type: "regular", method: "ach"}) { id } }`, { lead: closedLoan });
    assert.equal(admin.body.errors, undefined, JSON.stringify(admin.body));
  });

  it('cannot delete people or loans, nor rename a loan (its loans update is status and custom_fields only)', async () => {
    for (const mutation of [
      `mutation { delete_people(where: {}) { affected_rows } }`,
      `mutation { delete_loans(where: {}) { affected_rows } }`,
      `mutation ($loan: uuid!) { update_loans_by_pk(pk_columns: {id: $loan}, _set: {name: "x"}) { id } }`,
      `mutation { insert_loans_one(object: {name: "x"}) { id } }`,
    ]) {
      const answer = await graphAs('servicer', mutation, mutation.includes('$loan') ? { loan: servicingLoan } : undefined);
      assert.equal(answer.body.errors?.[0]?.extensions?.code, 'validation-failed', `${mutation}: ${JSON.stringify(answer.body)}`);
    }
    const fields = (await graphAs('servicer', `{ __type(name: "mutation_root") { fields { name } } }`)).body.data.__type.fields.map((f: { name: string }) => f.name);
    assert.ok(fields.includes('insert_payments_one') && fields.includes('delete_tasks') && !fields.includes('delete_people') && !fields.includes('delete_loans'));
    const patch = await rest('servicer', 'PATCH', `/${servicingLoan}`, { status: 'servicing' });
    assert.equal(patch.status, 200, patch.text);
    assert.equal((await rest('servicer', 'POST', '', { name: 'x', amount: 1000 })).status, 403);
  });
});

describe('Roles: investor over REST', () => {
  it('GET /api/loan lists only the funded loans; another loan is 404; writes are 403', async () => {
    const funded = await a.sql<{ id: string }>(
      `SELECT DISTINCT loan_id AS id FROM funding_sources WHERE account_id = $1 AND person_id = $2 ORDER BY loan_id`,
      [a.account.id, investorId],
    );
    const page = await rest('investor', 'GET', '?limit=1000');
    assert.equal(page.status, 200, page.text);
    assert.equal(page.body.total, funded.length);
    assert.deepEqual(page.body.loans.map((loan: { id: string }) => loan.id).sort(), funded.map((row) => row.id));
    for (const loan of page.body.loans) for (const person of [...loan.borrowers, ...loan.guarantors]) assert.ok(person === null || person.id === investorId, 'no other person');
    const outside = (await a.sql<{ id: string }>(`SELECT id FROM loans WHERE account_id = $1 AND NOT (id = ANY($2::uuid[])) LIMIT 1`, [a.account.id, funded.map((r) => r.id)]))[0]!.id;
    assert.equal((await rest('investor', 'GET', `/${outside}`)).status, 404);
    assert.equal((await rest('investor', 'GET', `/${investorLoan}`)).status, 200);
    const patch = await rest('investor', 'PATCH', `/${investorLoan}`, { name: 'mine' });
    assert.deepEqual([patch.status, patch.body.permission], [403, 'loans.update']);
  });
});

describe('Roles: the OpenAPI document', () => {
  it('lists only the loan operations the key\'s role may use', async () => {
    const operations = async (role: string): Promise<string[]> => {
      const answer = await send(`${a.url}/api/openapi.json`, { headers: { authorization: `Token ${keys.get(role)}` } });
      assert.equal(answer.status, 200, answer.text);
      const paths = (answer.body as { paths: Record<string, Record<string, unknown>> }).paths;
      return Object.entries(paths).flatMap(([path, item]) => ['get', 'post', 'patch'].filter((method) => method in item).map((method) => `${method.toUpperCase()} ${path}`)).sort();
    };
    // GET /api/product and GET /api/account for every role that reads loans; their PATCH for admin keys only.
    // Statements for roles that read distributions (an investor: its own); the remittance run for those reading every line; marking for admin keys.
    assert.deepEqual(await operations('admin'), ['GET /api/account', 'GET /api/distributions', 'GET /api/investors/{person_id}/statement', 'GET /api/loan', 'GET /api/loan/{id}', 'GET /api/loan/{id}/ledger', 'GET /api/loan/{id}/payoff', 'GET /api/openapi.json', 'GET /api/product', 'GET /api/remittances', 'GET /api/remittances/{id}', 'PATCH /api/account', 'PATCH /api/loan/{id}', 'PATCH /api/product', 'POST /api/loan', 'POST /api/remittances']);
    assert.deepEqual(await operations('read_only'), ['GET /api/account', 'GET /api/distributions', 'GET /api/investors/{person_id}/statement', 'GET /api/loan', 'GET /api/loan/{id}', 'GET /api/loan/{id}/ledger', 'GET /api/loan/{id}/payoff', 'GET /api/openapi.json', 'GET /api/product', 'GET /api/remittances', 'GET /api/remittances/{id}']);
    assert.deepEqual(await operations('servicer'), ['GET /api/account', 'GET /api/distributions', 'GET /api/investors/{person_id}/statement', 'GET /api/loan', 'GET /api/loan/{id}', 'GET /api/loan/{id}/ledger', 'GET /api/loan/{id}/payoff', 'GET /api/openapi.json', 'GET /api/product', 'GET /api/remittances', 'GET /api/remittances/{id}', 'PATCH /api/loan/{id}']);
    assert.deepEqual(await operations('investor'), ['GET /api/account', 'GET /api/distributions', 'GET /api/investors/{person_id}/statement', 'GET /api/loan', 'GET /api/loan/{id}', 'GET /api/loan/{id}/ledger', 'GET /api/loan/{id}/payoff', 'GET /api/openapi.json', 'GET /api/product']);
    const investorDoc = (await send(`${a.url}/api/openapi.json`, { headers: { authorization: `Token ${keys.get('investor')}` } })).body as any;
    assert.ok(investorDoc.components.schemas.Loan.properties.borrowers.items.oneOf, 'a borrower the investor cannot see is null');
  });
});

describe('Roles: hot reload', () => {
  const investorPeopleColumns = '[id, name, status, entity_type, is_borrower, is_investor, created_at]';

  it('a changed role takes effect without a restart', async () => {
    assert.ok(ORIGINAL.includes(investorPeopleColumns));
    const before = await graphAs('investor', `{ people { email } }`);
    assert.equal(before.body.errors?.[0]?.extensions?.code, 'validation-failed');
    writeFileSync(metadataPath, ORIGINAL.replace(investorPeopleColumns, '[id, name, email]'));
    assert.deepEqual(await a.service.engines.reload(), { ok: true });
    const after = await graphAs('investor', `{ people { id email } }`);
    assert.equal(after.body.errors, undefined, JSON.stringify(after.body));
    assert.deepEqual(after.body.data.people.map((p: { id: string }) => p.id), [investorId]);
  });

  it('a bad role is refused, naming it, and the previous metadata keeps serving', async () => {
    const bad = [
      [ORIGINAL.replace('filter: { id: { _eq: key.person_id } }', 'filter: { id: { _eq: key.investor_id } }'), /role investor, collection people, select filter, id\._eq: key\.investor_id is not a variable of the role/],
      [ORIGINAL.replace('filter: { id: { _eq: key.person_id } }', 'filter: { owner: { _eq: key.person_id } }'), /role investor, collection people, select filter, owner: not a field or relationship of people/],
      [ORIGINAL.replace(investorPeopleColumns, '[id, name, salary]'), /role investor, collection people, select columns: salary is not a field/],
      [ORIGINAL.replace('filter: { id: { _eq: key.person_id } }', 'filter: { name: { _contains: x } }'), /role investor, collection people, select filter, name\._contains: _contains needs a jsonb field/],
      [ORIGINAL.replace('filter: { id: { _eq: key.person_id } }', 'filter: { name: { _regex: [a] } }'), /role investor, collection people, select filter, name\._regex: give a value or key\.<variable>/],
      // A literal of the wrong type: refused here, naming the place, not by the database on every request of the role.
      [ORIGINAL.replace('filter: { id: { _eq: key.person_id } }', 'filter: { id: { _eq: not-a-uuid } }'), /role investor, collection people, select filter, id\._eq: "not-a-uuid" is not a uuid, the type of id/],
      [ORIGINAL.replace('filter: { id: { _eq: key.person_id } }', 'filter: { created_at: { _gt: 2026-02-30 } }'), /role investor, collection people, select filter, created_at\._gt: "2026-02-30" is not a timestamptz/],
      [ORIGINAL.replace("funding_sources: { person_id: { _eq: key.person_id } } }, allow_aggregations: true }", "fundings: { person_id: { _eq: key.person_id } } }, allow_aggregations: true }"), /role investor, collection loans, select filter, fundings: not a field or relationship of loans/],
    ] as const;
    for (const [text, problem] of bad) {
      assert.notEqual(text, ORIGINAL, `the edit applies: ${problem}`);
      writeFileSync(metadataPath, text);
      const outcome = await a.service.engines.reload();
      assert.equal(outcome.ok, false);
      assert.match(outcome.problems!.join('\n'), problem);
      // Still the metadata of the previous test (email visible to the investor).
      const still = await graphAs('investor', `{ people { id email } }`);
      assert.equal(still.body.errors, undefined, JSON.stringify(still.body));
    }
    writeFileSync(metadataPath, ORIGINAL);
    assert.deepEqual(await a.service.engines.reload(), { ok: true });
  });

  it('a key whose role the metadata no longer has is refused like a bad key', async () => {
    writeFileSync(metadataPath, ORIGINAL.replace('\n  read_only:\n', '\n  read_only_renamed:\n'));
    // The reload says so: the role's active keys, by prefix, are refused until it is back or they are revoked.
    const outcome = await a.service.engines.reload();
    assert.equal(outcome.ok, true);
    assert.match(String((outcome as { warnings?: string[] }).warnings), /^role read_only: 1 active API key \(lq_\w+\) carries it, and the metadata has no such role: it is refused \(403\)/);
    const answer = await graphAs('read_only', `{ loans { id } }`);
    assert.deepEqual([answer.status, answer.text], [403, 'Not authorized']);
    assert.equal((await rest('read_only', 'GET', '')).status, 403);
    writeFileSync(metadataPath, ORIGINAL);
    assert.deepEqual(await a.service.engines.reload(), { ok: true });
  });
});
