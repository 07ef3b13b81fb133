import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertBuilt, PROJECT_ROOT, runCli } from '../support/processes.js';
import { createApiKey } from '../../app/apiKeys.js';
import { seedAccount, send, startSeededService, type SeededService } from '../support/seededService.js';
import { copyMigratedDataDir } from '../support/testDatabase.js';

/**
 * SPEC §5 and §2: developers see the SQL of any query — `POST /api/graph/explain` answers
 * `{sql, params, plan}` (PostgreSQL's `EXPLAIN (FORMAT JSON)`), and the CLI's
 * `loanql sql '<graphql>' --account <slug>` prints the statement, its parameters and a plan.
 * The CLI is the built one (`npm run build`, which `npm test` runs first), on an embedded
 * database in a temporary DATA_DIR.
 */
let s: SeededService;
let loanId: string;
let dataDir: string;
const cliSlug = 'explain-cli';
let cliAccountId = '';

interface Explained {
  readonly sql: string;
  readonly params: unknown[];
  readonly plan: { Plan: Record<string, unknown> }[];
}

/** The built CLI on its own embedded DATA_DIR (never DATABASE_URL, whatever the test mode). */
function cli(...args: string[]) {
  return runCli(args, { DATA_DIR: dataDir }, PROJECT_ROOT);
}

before(async () => {
  assertBuilt();
  dataDir = join(mkdtempSync(join(tmpdir(), 'loanql-explain-')), 'data');
  // A copy of the migrated data directory kept beside the test dumps (copyMigratedDataDir): the
  // CLI still migrates (nothing to do) and creates the account itself.
  // The README examples' account (docs/readmeExamples): one seeded dump for the four files.
  const [service] = await Promise.all([startSeededService({ slug: 'demo', scale: 0.005 }), copyMigratedDataDir(dataDir)]);
  const created = await cli('account', 'create', cliSlug);
  s = service;
  assert.equal(created.code, 0, created.stderr);
  cliAccountId = /\(([0-9a-f-]{36})\)/.exec(created.stdout)?.[1] ?? '';
  assert.ok(cliAccountId, created.stdout);
  loanId = (await s.sql<{ id: string }>(`SELECT id FROM loans WHERE account_id = $1 ORDER BY id LIMIT 1`, [s.account.id]))[0]!.id;
});

after(async () => {
  await s?.close();
  if (dataDir) rmSync(join(dataDir, '..'), { recursive: true, force: true });
});

const PORTFOLIO = `query($status: String!, $id: uuid!) {
  servicing: loans(where: {status: {_eq: $status}}, order_by: {amount: desc}, limit: 3) {
    name address_details { address { valuations(order_by: {report_date: desc}, limit: 1) { value } } }
    payments_aggregate { aggregate { count sum { amount } } }
  }
  one: loans_by_pk(id: $id) { name borrows { person { name } } }
  totals: loans_aggregate { aggregate { count avg { rate } } }
}`;

/** The `$n` placeholders of a statement, as numbers. */
function placeholders(sql: string): number[] {
  return [...new Set([...sql.matchAll(/\$(\d+)/g)].map((match) => Number(match[1])))].sort((a, b) => a - b);
}

async function explain(body: unknown, key = s.apiKey) {
  return s.post('/api/graph/explain', body, { authorization: `Token ${key}` });
}

describe('POST /api/graph/explain', () => {
  it('answers {sql, params, plan}: one statement, its parameters, PostgreSQL’s JSON plan', async () => {
    const answer = await explain({ query: PORTFOLIO, variables: { status: 'servicing', id: loanId } });
    assert.equal(answer.status, 200, answer.text);
    const body = answer.body as Explained;
    assert.deepEqual(Object.keys(body).sort(), ['params', 'plan', 'sql']);
    assert.match(body.sql, /^SELECT concat\('{"data":', /);
    assert.ok(!body.sql.includes(';'), 'no second statement');
    assert.ok(Array.isArray(body.plan) && body.plan.length === 1);
    assert.equal(typeof body.plan[0]!.Plan['Node Type'], 'string');
    // No estimates: they come from every account's statistics (issue 26, finding 2).
    assert.equal(body.plan[0]!.Plan['Total Cost'], undefined);
  });

  it('has exactly as many params as the statement has placeholders, $1 to $n', async () => {
    const body = (await explain({ query: PORTFOLIO, variables: { status: 'servicing', id: loanId } })).body as Explained;
    const used = placeholders(body.sql);
    assert.deepEqual(
      used,
      body.params.map((_, index) => index + 1),
    );
  });

  it('binds the variables and the account as parameters, never as text', async () => {
    const body = (await explain({ query: PORTFOLIO, variables: { status: 'servicing', id: loanId } })).body as Explained;
    assert.ok(body.params.includes('servicing'));
    assert.ok(body.params.includes(loanId));
    assert.ok(body.params.includes(s.account.id));
    // The alias `servicing` is in the text as a JSON key (a GraphQL name, engine/README.md
    // "Constants in the text"); the value "servicing" never is.
    assert.ok(body.sql.includes(`'{"servicing":'`));
    assert.ok(!/'servicing'|"servicing"(?!:)/.test(body.sql) && !body.sql.includes(loanId) && !body.sql.includes(s.account.id));
  });

  it('explains the very statement /api/graph runs: run with its params it gives the same response, byte for byte', async () => {
    const request = { query: PORTFOLIO, variables: { status: 'servicing', id: loanId } };
    const body = (await explain(request)).body as Explained;
    const [row] = await s.sql<{ response: string }>(body.sql, body.params);
    const served = await s.post('/api/graph', request);
    assert.equal(served.status, 200);
    assert.equal(row!.response, served.text);
    assert.ok((served.body as any).data.servicing.length > 0);
  });

  it('answers a request it cannot explain with 400 and the errors', async () => {
    for (const [request, code] of [
      [{ query: `{ loans { nope } }` }, 'validation-failed'],
      [{ query: `{ loans(limit: -1) { id } }` }, 'validation-failed'],
      [{ query: `{ loans { id }` }, 'parse-failed'],
      [{ query: 5 }, 'invalid-request'],
      // Year 0 is refused by the timestamptz scalar (session 37; PostgreSQL refused it when binding before).
      [{ query: `{ loans(where: {created_at: {_gt: "0000-01-01"}}) { id } }` }, 'validation-failed'],
      // A pattern PostgreSQL cannot compile passes the engine's checks; PostgreSQL refuses it when planning.
      [{ query: `{ loans(where: {name: {_regex: "(unclosed"}}) { id } }` }, 'data-exception'],
    ] as const) {
      const answer = await explain(request);
      assert.equal(answer.status, 400, answer.text);
      assert.equal((answer.body as any).errors[0].extensions.code, code, JSON.stringify(request));
    }
  });

  it('refuses a request without a valid key like every /api route', async () => {
    const answer = await send(`${s.url}/api/graph/explain`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ loans { id } }' }) });
    assert.deepEqual([answer.status, answer.text], [403, 'Not authorized']);
  });

  it('answers introspection alone without a statement (no SQL to show)', async () => {
    const answer = await explain({ query: `{ __schema { queryType { name } } }` });
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.body, { sql: '', params: [], plan: null });
  });
});

/** Every key of a plan tree, nested plans included. */
function planKeys(plan: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(plan)) for (const item of plan) planKeys(item, into);
  else if (plan && typeof plan === 'object') {
    for (const [key, value] of Object.entries(plan)) {
      into.add(key);
      planKeys(value, into);
    }
  }
  return into;
}

/** Every number in a plan tree (estimates would be numbers). */
function planNumbers(plan: unknown): number[] {
  if (typeof plan === 'number') return [plan];
  if (Array.isArray(plan)) return plan.flatMap(planNumbers);
  if (plan && typeof plan === 'object') return Object.values(plan).flatMap(planNumbers);
  return [];
}

describe('Security: explain reveals nothing beyond what the key can read (issue 26, finding 2)', () => {
  const TASKS = `query($name: String!) { tasks(where: {name: {_eq: $name}}) { id name } }`;

  it('is refused (403 permission-denied) to every role but the account\'s admin, and unchanged by another account\'s rows', async () => {
    const b = await seedAccount(s.db, { scale: 0.001, seed: 9 });
    const investorId = (await s.sql<{ person_id: string }>(`SELECT person_id FROM funding_sources WHERE account_id = $1 LIMIT 1`, [s.account.id]))[0]!.person_id;
    for (const [role, variables] of [['read_only', {}], ['servicer', {}], ['investor', { person_id: investorId }]] as const) {
      const key = (await createApiKey(s.db, s.account.id, role, { role, variables: new Map(Object.entries(variables)) })).key;
      const answer = await explain({ query: `{ loans(limit: 1) { id } }` }, key);
      assert.equal(answer.status, 403, `${role}: ${answer.text}`);
      assert.equal((answer.body as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code, 'permission-denied');
    }
    const request = { query: TASKS, variables: { name: 'Project NEPTUNE acquisition' } };
    const before = await explain(request);
    assert.equal(before.status, 200, before.text);
    const keys = planKeys((before.body as Explained).plan);
    for (const estimate of ['Plan Rows', 'Plan Width', 'Total Cost', 'Startup Cost']) assert.ok(!keys.has(estimate), `no ${estimate}`);
    // The probe: another account writes 600 rows with that very value, and statistics are renewed.
    const loanB = (await s.sql<{ id: string }>(`SELECT id FROM loans WHERE account_id = $1 LIMIT 1`, [b.account.id]))[0]!.id;
    await s.sql(`INSERT INTO tasks (account_id, loan_id, name) SELECT $1, $2, 'Project NEPTUNE acquisition' FROM generate_series(1, 600)`, [b.account.id, loanB]);
    await s.sql(`ANALYZE tasks`);
    const after = await explain(request);
    // No count, cost or width anywhere: the 1-row / 250-row oracle of the probe is gone. (The
    // plan's shape is still chosen from table-wide statistics: README "Security" says so.)
    for (const body of [before.body, after.body]) assert.deepEqual(planNumbers((body as Explained).plan), [], 'no number in the plan');
    assert.deepEqual([(after.body as Explained).sql, (after.body as Explained).params], [(before.body as Explained).sql, (before.body as Explained).params]);
    // B's own admin key explains B's statement, with B's account bound.
    const forB = await explain(request, b.apiKey);
    assert.equal(forB.status, 200, forB.text);
    assert.ok((forB.body as Explained).params.includes(b.account.id));
    assert.ok(!(forB.body as Explained).params.includes(s.account.id));
  });
});

describe('loanql sql (the built CLI, embedded database)', () => {
  it('prints the statement, its parameters and its plan', async () => {
    const query = `query($status: String!) { loans(where: {status: {_eq: $status}}, limit: 2) { name payments_aggregate { aggregate { count } } } }`;
    const variables = { status: 'lead' };
    const { stdout, stderr, code } = await cli('sql', query, '--variables', JSON.stringify(variables), '--account', cliSlug);
    assert.equal(code, 0, stderr);
    const [head, parameters, plan] = stdout.split(/\n\n(?=-- )/);
    assert.match(head!, new RegExp(`^-- one statement for account ${cliSlug}\n`));
    const printed = head!.split('\n').slice(1).join('\n');
    // The statement text does not depend on the account: it is the one the service explains.
    const served = (await explain({ query, variables })).body as Explained;
    assert.equal(printed, `${served.sql};`);
    assert.equal((printed.match(/;/g) ?? []).length, 1, 'one statement');

    const lines = parameters!.trim().split('\n');
    assert.equal(lines[0], '-- parameters');
    const values = lines.slice(1).map((line) => {
      const match = /^\$(\d+) = (.*)$/.exec(line);
      assert.ok(match, line);
      return [Number(match[1]), JSON.parse(match[2]!)] as const;
    });
    assert.deepEqual(
      values.map(([n]) => n),
      placeholders(served.sql),
    );
    assert.ok(values.some(([, value]) => value === cliAccountId), 'the CLI account is bound');
    assert.ok(values.some(([, value]) => value === 'lead'), 'the variable is bound');

    assert.match(plan!, /^-- plan\n/);
    assert.match(plan!, /cost=\d/);
  });

  it('prints a mutation\'s statements and parameters without running them', async () => {
    // A payment's triggers change the loan's rows after the INSERT: two statements in a transaction.
    const query = `mutation { insert_payments_one(object: {loan_id: "00000000-0000-4000-8000-000000000001", date: "2026-01-01", amount: 10}) { id loan { name } } }`;
    const { stdout, stderr, code } = await cli('sql', query, '--account', cliSlug);
    assert.equal(code, 0, stderr);
    assert.match(stdout, new RegExp(`^-- a mutation for account ${cliSlug}: 2 statements in one transaction \\(not run\\)`));
    assert.match(stdout, /-- statement 1\nWITH "_w0" AS \(INSERT INTO "payments"/);
    assert.match(stdout, /\$\d+ = "2026-01-01"/);
    assert.match(stdout, /-- statement 2\nSELECT concat\('{"data":'/);
    const served = await explain({ query });
    assert.equal((served.body as { statements: unknown[] }).statements.length, 2);
  });

  it('prints a mutation of several writes with the statement announcing their tables first (migration 0071)', async () => {
    const query = `mutation { a: insert_payments_one(object: {loan_id: "00000000-0000-4000-8000-000000000001", date: "2026-01-01", amount: 10}) { id } b: insert_tasks_one(object: {name: "beside"}) { id } }`;
    const served = await explain({ query });
    const statements = (served.body as { statements: { sql: string; params: unknown[] }[] }).statements;
    assert.equal(statements.length, 4);
    assert.match(statements[0]!.sql, /^SELECT loanql_several_writes\(\$1, ARRAY\[\$2::text, \$3::text\]::text\[\]\)/);
    assert.deepEqual(statements[0]!.params.slice(1), ['payments', 'tasks']);
    assert.match(statements[1]!.sql, /INSERT INTO "payments"/);
  });

  it('prints a write whose response is its own row as one statement in autocommit', async () => {
    const query = `mutation { insert_tasks_one(object: {name: "from loanql sql"}) { id } }`;
    const { stdout, stderr, code } = await cli('sql', query, '--account', cliSlug);
    assert.equal(code, 0, stderr);
    assert.match(stdout, new RegExp(`^-- a mutation for account ${cliSlug}: one statement in autocommit \\(not run\\)`));
    assert.match(stdout, /-- statement 1\nWITH "_w0" AS \(INSERT INTO "tasks" .* RETURNING "_t1"\.\*\) SELECT CASE WHEN true THEN concat\('{"data":'/);
    assert.doesNotMatch(stdout, /-- statement 2/);
    assert.match(stdout, /\$\d+ = "from loanql sql"/);
    const served = await explain({ query });
    assert.equal((served.body as { statements: unknown[] }).statements.length, 1);
  });

  it('refuses a query that does not validate, saying why, with exit code 2', async () => {
    const { stdout, stderr, code } = await cli('sql', '{ loans { nope } }', '--account', cliSlug);
    assert.equal(code, 2);
    assert.equal(stdout, '');
    assert.match(stderr, /validation-failed: Cannot query field "nope"/);
  });
});
