import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { migrate, type Database } from '../../db/index.js';
import * as m0001 from '../../db/migrations/0001_schema.js';
import * as m0002 from '../../db/migrations/0002_is_next_on_every_write.js';
import * as m0003 from '../../db/migrations/0003_dashboard.js';
import * as m0004 from '../../db/migrations/0004_loan_derived_fields.js';
import * as m0005 from '../../db/migrations/0005_servicing_writes.js';
import * as m0006 from '../../db/migrations/0006_webhooks.js';
import * as m0007 from '../../db/migrations/0007_key_roles.js';
import * as m0008 from '../../db/migrations/0008_event_outbox.js';
import * as m0009 from '../../db/migrations/0009_custom_fields_gin.js';
import * as m0010 from '../../db/migrations/0010_outbox_json.js';
import * as m0011 from '../../db/migrations/0011_idempotency_scope.js';
import * as m0012 from '../../db/migrations/0012_servicing_ledger.js';
import { loanLabel } from '../../dashboard/pages/servicingFormat.js';
import { restClient, type RestClient } from '../support/restClient.js';
import { startTestServer, tokenHeader, type TestServer } from '../support/http.js';
import { openSeededTestDatabase, type SeededAccount } from '../support/seededService.js';
import { openEmptyTestDatabase, type TestDatabase } from '../support/testDatabase.js';
import { DashboardClient } from './dashboardClient.js';

/**
 * Issue 28: a loan needs a name that is not blank. Every write path refuses a blank one and
 * names the field — REST (400 naming `Name`), the dashboard's forms (the form again, the error
 * beside the field, which has the focus), GraphQL (the database's `loans_name_not_blank`, a
 * `check-violation` naming `name`) — and writes nothing; migration 0013 names the loans already
 * nameless; the Loans list shows every loan as a link with a label.
 */
const PASSWORD = 'correct horse battery'; // seedAccount's admin password

let database: TestDatabase;
let server: TestServer;
let mine: SeededAccount;
let rest: RestClient;
let client: DashboardClient;
let loanId: string;

const loanCount = async (): Promise<number> => Number((await database.db.query<{ n: string }>('SELECT count(*) AS n FROM loans WHERE account_id = $1', [mine.account.id])).rows[0]!.n);
const nameOf = async (id: string): Promise<string> => (await database.db.query<{ name: string }>('SELECT name FROM loans WHERE id = $1', [id])).rows[0]!.name;

async function graph(query: string, variables: Record<string, unknown> = {}): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.url}/api/graph`, { method: 'POST', headers: { ...tokenHeader(mine.apiKey), 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
  return { status: response.status, body: await response.json() };
}

before(async () => {
  ({ database, seeded: [mine] } = await openSeededTestDatabase([{ scale: 0.01 }]));
  server = await startTestServer(database.db);
  rest = await restClient(server.url, mine.apiKey);
  loanId = (await database.db.query<{ id: string }>('SELECT id FROM loans WHERE account_id = $1 ORDER BY id LIMIT 1', [mine.account.id])).rows[0]!.id;
  client = new DashboardClient(server.url);
  assert.equal((await client.logIn(`admin@${mine.account.slug}.test`, PASSWORD)).status, 303);
});

after(async () => {
  await server?.close();
  await database?.close();
});

describe('A loan needs a name: REST', () => {
  it('POST without a Name, or with a blank one, is a 400 naming Name, and creates nothing', async () => {
    const before = await loanCount();
    for (const body of [{ Amount: 5 }, { Name: '', Amount: 5 }, { name: ' \t\n ', Amount: 5 }, { Name: null }]) {
      const answer = await rest.post('/api/loan', body);
      assert.equal(answer.status, 400, answer.text);
      const sent = Object.keys(body).find((key) => key.toLowerCase() === 'name') ?? 'Name';
      assert.deepEqual(Object.keys(answer.json.fields), [sent], answer.text);
      assert.match(answer.json.fields[sent], /name that is not blank/);
    }
    assert.equal(await loanCount(), before);
  });

  it('the OpenAPI document says so: POST needs a body with a Name of at least one visible character', () => {
    const document = rest.document as any;
    const create = document.components.schemas.LoanCreate;
    assert.ok(create.required.includes('Name'), JSON.stringify(create.required));
    assert.equal(create.properties.Name.minLength, 1);
    assert.equal(new RegExp(create.properties.Name.pattern).test(' \t'), false, 'a blank name does not match the pattern');
    assert.equal(new RegExp(create.properties.Name.pattern).test(' Bridge loan '), true);
    assert.equal(document.paths['/api/loan'].post.requestBody.required, true);
    assert.equal(document.components.schemas.LoanUpdate.required, undefined, 'PATCH needs no field');
  });

  it('PATCH cannot blank or clear the name; the loan keeps it', async () => {
    const name = await nameOf(loanId);
    for (const body of [{ Name: '' }, { Name: '   ' }, { Name: null }]) {
      const answer = await rest.patch(`/api/loan/${loanId}`, body);
      assert.equal(answer.status, 400, answer.text);
      assert.deepEqual(Object.keys(answer.json.fields), ['Name']);
    }
    assert.equal(await nameOf(loanId), name);
    const renamed = await rest.patch(`/api/loan/${loanId}`, { Name: `${name} ` });
    assert.equal(renamed.status, 200, 'a name with spaces around it is still a name');
    assert.equal((await rest.patch(`/api/loan/${loanId}`, { Name: name })).status, 200);
  });
});

describe('A loan needs a name: the dashboard forms', () => {
  it('the new-loan form with Name empty is shown again, the error beside Name, which has the focus', async () => {
    await client.get('/dashboard/loans/new');
    const before = await loanCount();
    for (const typed of ['', '   ']) {
      const page = await client.postForm('/dashboard/loans', { Name: typed, Amount: '5000', Loan_Officer: 'Lee' });
      assert.equal(page.status, 400);
      const input = /<input[^>]* name="Name"[^>]*>/.exec(page.text)?.[0] ?? '';
      assert.match(input, / autofocus/);
      assert.match(input, / aria-invalid="true"/);
      assert.match(input, /aria-describedby="[^"]*-error"/);
      assert.match(page.text, /class="field-error">Name: is required: a loan needs a name that is not blank/);
      assert.match(page.text, /value="5000"/, 'what was typed is kept');
    }
    assert.equal(await loanCount(), before);
  });

  it('the edit form refuses an emptied Name and keeps the loan’s name', async () => {
    const name = await nameOf(loanId);
    await client.get(`/dashboard/loans/${loanId}/edit`);
    const page = await client.postForm(`/dashboard/loans/${loanId}/edit`, { Name: '' });
    assert.equal(page.status, 400);
    assert.match(/<input[^>]* name="Name"[^>]*>/.exec(page.text)?.[0] ?? '', / autofocus/);
    assert.match(page.text, /class="field-error">Name: is required/);
    assert.equal(await nameOf(loanId), name);
  });
});

describe('A loan needs a name: GraphQL', () => {
  // The shipped metadata has no insert_loans (loans are created through REST, which makes the
  // schedule); a metadata that adds one meets the same constraint as these updates.
  for (const [what, mutation] of [
    ['update_loans_by_pk to an empty name', `mutation($id: uuid!) { update_loans_by_pk(pk_columns: {id: $id}, _set: {name: ""}) { id } }`],
    ['update_loans to a blank name', `mutation($id: uuid!) { update_loans(where: {id: {_eq: $id}}, _set: {name: " \\t "}) { affected_rows } }`],
  ] as const) {
    it(`${what}: a check-violation naming name, and nothing written`, async () => {
      const name = await nameOf(loanId);
      const answer = await graph(mutation, { id: loanId });
      assert.equal(answer.status, 200);
      const [error] = answer.body.errors;
      assert.equal(error.extensions.code, 'check-violation', JSON.stringify(answer.body));
      assert.deepEqual(error.extensions.fields, ['name']);
      // The rule's sentence, as REST words it; its name in extensions (session 39; the message named only the rule before).
      assert.match(error.message, /: name: a loan's name is not blank$/);
      assert.equal(error.extensions.constraint, 'loans_name_not_blank');
      assert.equal(await nameOf(loanId), name);
    });
  }

  it('a name that is not blank is still accepted', async () => {
    const name = await nameOf(loanId);
    const answer = await graph(`mutation($id: uuid!, $name: String!) { update_loans_by_pk(pk_columns: {id: $id}, _set: {name: $name}) { name } }`, { id: loanId, name: 'Graph loan' });
    assert.equal(answer.body.data?.update_loans_by_pk?.name, 'Graph loan', JSON.stringify(answer.body));
    await graph(`mutation($id: uuid!, $name: String!) { update_loans_by_pk(pk_columns: {id: $id}, _set: {name: $name}) { name } }`, { id: loanId, name });
  });
});

describe('The Loans list', () => {
  it('shows every loan as a link with a visible label', async () => {
    const page = await client.get('/dashboard/loans?sort=name');
    assert.equal(page.status, 200);
    const links = [...page.text.matchAll(/<td><a href="\/dashboard\/loans\/[0-9a-f-]{36}">([^<]*)<\/a><\/td>/g)];
    assert.equal(links.length, 25);
    for (const [, label] of links) assert.ok(label!.trim().length > 0, 'no empty link');
  });

  it('labels a loan whose name is somehow blank by its id', () => {
    assert.equal(loanLabel({ id: 'abcdef12-3456-4789-8abc-def012345678', name: '  ' }), 'Loan abcdef12');
    assert.equal(loanLabel({ id: 'abcdef12-3456-4789-8abc-def012345678', name: ' Elm St ' }), 'Elm St');
  });
});

describe('migration 0013 on a database with nameless loans', { timeout: 120_000 }, () => {
  let db: Database;
  let close: () => Promise<void>;

  before(async () => {
    ({ db, close } = await openEmptyTestDatabase());
  });

  after(async () => close?.());

  it('names them `Loan <id prefix>`, keeps the others, then refuses a blank name', async () => {
    await db.transaction(async (tx) => {
      await tx.query(`CREATE TABLE loanql_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
      for (const migration of [m0001, m0002, m0003, m0004, m0005, m0006, m0007, m0008, m0009, m0010, m0011, m0012]) {
        await tx.script(migration.sql);
        await tx.query('INSERT INTO loanql_migrations (name) VALUES ($1)', [migration.name]);
      }
    });
    const account = (await db.query<{ id: string }>(`INSERT INTO accounts (slug, name) VALUES ('before', 'Before') RETURNING id`)).rows[0]!.id;
    const { rows } = await db.query<{ id: string; name: string }>(
      `INSERT INTO loans (account_id, name) VALUES ($1, ''), ($1, '   '), ($1, E'\\t'), ($1, 'Kept'), ($1, ' Kept too ') RETURNING id, name`,
      [account],
    );

    const applied = await migrate(db);
    assert.equal(applied[0], '0013_loan_name_not_blank', 'the migrations after 0012, 0013 first');

    const after = await db.query<{ id: string; name: string }>('SELECT id, name FROM loans WHERE account_id = $1', [account]);
    const names = new Map(after.rows.map((loan) => [loan.id, loan.name]));
    for (const loan of rows) assert.equal(names.get(loan.id), loan.name.trim() === '' ? `Loan ${loan.id.slice(0, 8)}` : loan.name);
    await assert.rejects(db.query(`INSERT INTO loans (account_id, name) VALUES ($1, ' ')`, [account]), (error: { code?: string; constraint?: string }) => error.code === '23514' && error.constraint === 'loans_name_not_blank');
    await assert.rejects(db.query(`INSERT INTO loans (account_id) VALUES ($1)`, [account]), (error: { constraint?: string }) => error.constraint === 'loans_name_not_blank');
  });
});
