import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openCommandDatabase, type OpenedDatabase } from '../../db/index.js';
import { copyMigratedDataDir } from '../support/testDatabase.js';
import { assertBuilt, freePort, runCli, startService, type ProcessResult, type RunningService } from '../support/processes.js';

/**
 * Issue 15, Done when 1, from a fresh data directory and as processes: the service starts (and
 * seeds the demo portfolio), `loanql key create --role investor --var person_id=…` makes an
 * investor key for a seeded investor in a second process, and with that key the API answers
 * only what the investor role reaches — compared with SQL run by the test on the same database.
 */
const KEY_LINE = /^lq_[a-z0-9]{8}_[A-Za-z0-9_-]{43}$/;

describe('an investor key made with the CLI (issue 15)', { timeout: 600_000 }, () => {
  let dir: string;
  let env: Record<string, string>;
  let service: RunningService;
  let opened: OpenedDatabase;
  let accountId: string;
  let investorId: string;
  let otherPersonId: string;
  let key: string;
  let fundedLoans: string[];
  const cli = (...args: string[]): Promise<ProcessResult> => runCli(args, env, dir);
  const sql = async <R>(text: string, values: unknown[] = []): Promise<R[]> => (await opened.database.query(text, values)).rows as R[];
  const graph = async (query: string, variables?: Record<string, unknown>): Promise<{ data?: any; errors?: { message: string; extensions: { code: string } }[] }> => {
    const response = await fetch(`${service.url}/api/graph`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Token ${key}` },
      body: JSON.stringify({ query, variables }),
    });
    const text = await response.text();
    assert.equal(response.status, 200, `${query}\n${text}\n${service.output().slice(-2000)}`);
    return JSON.parse(text) as never;
  };
  const data = async (query: string, variables?: Record<string, unknown>): Promise<any> => {
    const body = await graph(query, variables);
    assert.equal(body.errors, undefined, JSON.stringify(body.errors));
    return body.data;
  };

  before(async () => {
    assertBuilt();
    dir = mkdtempSync(join(tmpdir(), 'loanql-roles-'));
    env = { DATA_DIR: join(dir, 'data') };
    await copyMigratedDataDir(env.DATA_DIR!); // first start is not this file's subject
    service = await startService(env, await freePort(), dir);
    opened = await openCommandDatabase({ dataDir: env.DATA_DIR! });
    [{ id: accountId }] = (await sql<{ id: string }>(`SELECT id FROM accounts WHERE slug = 'demo'`)) as [{ id: string }];
    // The seeded investor funding the most loans, and someone else of the account.
    const [investor] = await sql<{ person_id: string }>(
      `SELECT person_id FROM funding_sources WHERE account_id = $1 GROUP BY person_id ORDER BY count(DISTINCT loan_id) DESC, person_id LIMIT 1`,
      [accountId],
    );
    investorId = investor!.person_id;
    otherPersonId = (await sql<{ id: string }>(`SELECT id FROM people WHERE account_id = $1 AND id <> $2 ORDER BY id LIMIT 1`, [accountId, investorId]))[0]!.id;
    fundedLoans = (
      await sql<{ id: string }>(
        `SELECT l.id FROM loans l WHERE l.account_id = $1 AND EXISTS (SELECT 1 FROM funding_sources f WHERE f.account_id = l.account_id AND f.loan_id = l.id AND f.person_id = $2) ORDER BY l.id`,
        [accountId, investorId],
      )
    ).map((row) => row.id);
    assert.ok(fundedLoans.length > 0, 'the investor funds loans');
    const total = Number((await sql<{ n: string }>(`SELECT count(*) AS n FROM loans WHERE account_id = $1`, [accountId]))[0]!.n);
    assert.ok(fundedLoans.length < total, 'and not every loan, so the filter can show');
  });

  after(async () => {
    await opened?.close();
    await service?.stop(5_000);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('key create refuses an unknown role, a missing or unknown variable, and a person of no such account', async () => {
    const cases: [string[], RegExp][] = [
      [['--role', 'auditor'], /role: "auditor" is not a role of the metadata/],
      [['--role', 'investor'], /variables: role investor needs person_id/],
      [['--role', 'investor', '--var', `person_id=${investorId}`, '--var', 'region=west'], /role investor has no variable region/],
      [['--role', 'investor', '--var', 'person_id=not-a-uuid'], /person_id must be a uuid/],
      [['--role', 'investor', '--var', 'person_id=00000000-0000-4000-8000-000000000000'], /is not a person of the account/],
    ];
    for (const [args, message] of cases) {
      const result = await cli('key', 'create', '--account', 'demo', ...args);
      assert.notEqual(result.code, 0, `refused: ${args.join(' ')}`);
      assert.match(result.stderr, message);
    }
    const keys = Number((await sql<{ n: string }>(`SELECT count(*) AS n FROM api_keys WHERE account_id = $1 AND role <> 'admin'`, [accountId]))[0]!.n);
    assert.equal(keys, 0, 'no key was made');
  });

  it('key create makes the investor key; key list shows its role and variable', async () => {
    const created = await cli('key', 'create', '--account', 'demo', '--name', 'portal', '--role', 'investor', '--var', `person_id=${investorId}`);
    assert.equal(created.code, 0, created.stderr);
    key = created.stdout.trimEnd().split('\n').at(-1)!;
    assert.match(key, KEY_LINE);
    const listed = await cli('key', 'list', '--account', 'demo');
    assert.match(listed.stdout, new RegExp(`portal\\s+investor \\(person_id=${investorId}\\)`));
    assert.match(listed.stdout, /\sadmin\s/, 'existing keys are admin');
  });

  it('loans are exactly the loans the person funds; loans_aggregate counts only those', async () => {
    const answer = await data(`{ loans { id } loans_aggregate { aggregate { count } } }`);
    assert.deepEqual(answer.loans.map((loan: { id: string }) => loan.id).sort(), fundedLoans);
    assert.equal(answer.loans_aggregate.aggregate.count, fundedLoans.length);
    const outside = (await sql<{ id: string }>(`SELECT id FROM loans WHERE account_id = $1 AND NOT (id = ANY($2::uuid[])) LIMIT 1`, [accountId, fundedLoans]))[0]!.id;
    assert.equal((await data(`query ($id: uuid!) { loans_by_pk(id: $id) { id } }`, { id: outside })).loans_by_pk, null, '_by_pk stays inside too');
    assert.equal((await data(`query ($id: uuid!) { loans_by_pk(id: $id) { id } }`, { id: fundedLoans[0] })).loans_by_pk.id, fundedLoans[0]);
  });

  it('people is only that person, and email and phone are not in its schema', async () => {
    assert.deepEqual(await data(`{ people { id } }`), { people: [{ id: investorId }] });
    assert.equal((await data(`query ($id: uuid!) { people_by_pk(id: $id) { id } }`, { id: otherPersonId })).people_by_pk, null);
    const fields = (await data(`{ __type(name: "people") { fields { name } } }`)).__type.fields.map((field: { name: string }) => field.name);
    assert.ok(fields.includes('name') && !fields.includes('email') && !fields.includes('phone'), fields.join(' '));
    const refused = await graph(`{ people { email } }`);
    assert.equal(refused.errors?.[0]?.extensions.code, 'validation-failed');
    assert.match(refused.errors![0]!.message, /Cannot query field "email"/);
    const types = (await data(`{ __schema { types { name } queryType { fields { name } } } }`)).__schema;
    const roots = types.queryType.fields.map((field: { name: string }) => field.name);
    assert.ok(!roots.includes('tasks') && !roots.includes('admins') && !roots.includes('people_aggregate'), roots.join(' '));
    assert.ok(!types.types.some((type: { name: string }) => type.name === 'tasks'), 'collections the role cannot select are absent');
    assert.equal((await graph(`mutation { insert_comments_one(object: {text: "x"}) { id } }`)).errors?.[0]?.extensions.code, 'validation-failed', 'no mutations');
  });

  it('every nested path stays inside the filter: loan → borrows → person → funding_sources → loan …', async () => {
    const answer = await data(`{
      loans {
        id
        borrows { person_id person { id funding_sources { person_id loan { id funding_sources { person_id } } } } }
        funding_sources { person_id person { id } }
        payments_aggregate { aggregate { count } }
        payments(limit: 2) { loan_id loan { id } }
        schedules(limit: 2) { loan_id }
        loan_documents { loan_id document { id loan_documents { loan_id } } }
      }
      funding_sources { person_id loan { id } }
      payments_aggregate { aggregate { count sum { amount } } }
      people { funding_sources { loan_id loan { id borrows { person { id } } } } }
    }`);
    const funded = new Set(fundedLoans);
    const seenLoans: string[] = [];
    const seenPeople: string[] = [];
    // Borrow links of the investor's loans are visible (their person_id too); the people behind them are not.
    const walk = (value: unknown, key: string, parent: string): void => {
      if (Array.isArray(value)) return value.forEach((item) => walk(item, key, parent));
      if (value === null || typeof value !== 'object') {
        if (key === 'loan_id' && typeof value === 'string') seenLoans.push(value);
        if (key === 'person_id' && parent === 'funding_sources' && typeof value === 'string') seenPeople.push(value);
        return;
      }
      for (const [name, inner] of Object.entries(value)) {
        if ((name === 'loan' || name === 'loans') && inner) (Array.isArray(inner) ? inner : [inner]).forEach((loan: { id: string }) => seenLoans.push(loan.id));
        if (name === 'person' && inner) seenPeople.push((inner as { id: string }).id);
        walk(inner, name, key);
      }
    };
    walk(answer, '', '');
    assert.ok(seenLoans.length > fundedLoans.length, 'the paths reach loans');
    assert.deepEqual(seenLoans.filter((id) => !funded.has(id)), [], 'no loan outside the investor’s');
    assert.deepEqual([...new Set(seenPeople)].filter((id) => id !== investorId), [], 'no person but the investor');
    for (const loan of answer.loans) for (const source of loan.funding_sources) assert.equal(source.person_id, investorId);
    const [expected] = await sql<{ n: string; total: string }>(
      `SELECT count(*) AS n, sum(amount)::text AS total FROM payments WHERE account_id = $1 AND loan_id = ANY($2::uuid[])`,
      [accountId, fundedLoans],
    );
    assert.equal(answer.payments_aggregate.aggregate.count, Number(expected!.n));
    assert.equal(Number(answer.payments_aggregate.aggregate.sum.amount), Number(expected!.total));
  });

  it('relationship filters and order_by through relationships see only the role’s rows', async () => {
    // A filter through borrows.person reaches only the investor's own person record.
    const throughPeople = await data(`{ loans(where: {borrows: {person: {name: {_ilike: "%"}}}}) { id } }`);
    const ownBorrows = await sql<{ loan_id: string }>(
      `SELECT DISTINCT loan_id FROM borrows WHERE account_id = $1 AND person_id = $2 AND loan_id = ANY($3::uuid[]) ORDER BY loan_id`,
      [accountId, investorId, fundedLoans],
    );
    assert.deepEqual(throughPeople.loans.map((loan: { id: string }) => loan.id).sort(), ownBorrows.map((row) => row.loan_id));
    const anyBorrower = await data(`{ loans(where: {borrows: {}}) { id } }`);
    assert.ok(anyBorrower.loans.length > ownBorrows.length, 'the borrows themselves are visible, their people are not');
    const sorted = await data(`{ payments(order_by: [{loan: {name: asc}}], limit: 5) { loan_id } }`);
    for (const payment of sorted.payments) assert.ok(fundedLoans.includes(payment.loan_id));
  });
});
