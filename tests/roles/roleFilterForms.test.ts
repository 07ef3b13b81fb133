import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { buildEngine } from '../../app/engineHolder.js';
import { addProductField } from '../../app/products.js';
import type { GraphEngine, Principal } from '../../engine/index.js';
import { parseExact } from '../support/exactJson.js';
import type { TestDatabase } from '../support/testDatabase.js';
import { openSeededAccounts } from '../support/seededService.js';

/**
 * Issue 30, Done-when 3: role filters with Hasura's `_exists`, a column comparison (`_cgte`), an
 * aggregate predicate (`payments_aggregate: {count: …}`) and a key variable inside a jsonb
 * operator (`_has_key: key.field_key`), each answer compared with plain SQL written from the rule
 * in words; and two investor-like roles, one permitted the computed fields `payoff` and
 * `days_past_due`, one not — which sees neither, in introspection nor in a query.
 */
const DEFAULT_METADATA = fileURLToPath(new URL('../../metadata/loanql.default.yaml', import.meta.url));
const ACCOUNT = 'a3000000-0000-4000-8000-00000000000a';
const OTHER = 'b3000000-0000-4000-8000-00000000000b';

const ROLES = {
  // Sees loans only while the person funds something (_exists: uncorrelated, as Hasura's), that
  // have at least two payments not reversed, whose custom fields hold the key's field name; and
  // the schedule rows whose principal is paid in full (a column comparison).
  watcher: {
    variables: { person_id: 'uuid', field_key: 'text' },
    collections: {
      loans: {
        select: {
          columns: ['id', 'name', 'amount'],
          filter: {
            _and: [
              { _exists: { _table: { name: 'funding_sources', schema: 'public' }, _where: { person_id: { _eq: 'key.person_id' } } } },
              { payments_aggregate: { count: { predicate: { _gte: 2 }, filter: { date_reversed: { _is_null: true } } } } },
              { custom_fields: { _has_key: 'key.field_key' } },
            ],
          },
        },
      },
      payments: { select: { columns: '*' } },
      schedules: { select: { columns: ['id', 'loan_id', 'number', 'principal', 'principal_paid'], filter: { principal_paid: { _cgte: 'principal' } }, allow_aggregations: true } },
    },
  },
  investor_plain: {
    variables: { person_id: 'uuid' },
    collections: { loans: { select: { columns: ['id', 'name', 'amount'], filter: { funding_sources: { person_id: { _eq: 'key.person_id' } } } } }, funding_sources: { select: { columns: '*' } } },
  },
  investor_plus: {
    variables: { person_id: 'uuid' },
    collections: {
      loans: { select: { columns: ['id', 'name', 'amount', 'payoff', 'days_past_due'], filter: { funding_sources: { person_id: { _eq: 'key.person_id' } } } } },
      funding_sources: { select: { columns: '*' } },
    },
  },
};

let database: TestDatabase;
let admin: GraphEngine;
let directory: string;
let investorId: string;
let idleId: string;

async function answer(role: string, query: string, principal: Principal): Promise<{ data?: any; errors?: { message: string; extensions?: { code?: string } }[] }> {
  return parseExact(await admin.forRole(role)!.execute(database.db, { query }, principal)) as any;
}
async function plainIds(text: string, values: unknown[]): Promise<string[]> {
  return (await database.db.query<{ id: string }>(text, values)).rows.map((row) => row.id);
}

before(async () => {
  // Seeded once and kept as a dump (openBuiltTestDatabase): seeding both accounts costs seconds.
  database = await openSeededAccounts(
    'roleFilterForms: two accounts',
    'tests/roles/roleFilterForms.test.ts',
    [
      { id: ACCOUNT, slug: 'role-forms-a', scale: 0.005 },
      { id: OTHER, slug: 'role-forms-b', scale: 0.005 },
    ],
    30,
  );
  const document = parseYaml(readFileSync(DEFAULT_METADATA, 'utf8')) as { roles: Record<string, unknown> };
  Object.assign(document.roles, ROLES);
  directory = mkdtempSync(join(tmpdir(), 'loanql-role-forms-'));
  const path = join(directory, 'metadata.yaml');
  writeFileSync(path, stringifyYaml(document));
  admin = await buildEngine(path, database.db, { maxDepth: 12, maxRows: null, planCacheSize: 100, maxCost: 0 });
  investorId = (await plainIds(`SELECT person_id AS id FROM funding_sources WHERE account_id = $1 GROUP BY person_id ORDER BY count(*) DESC, person_id LIMIT 1`, [ACCOUNT]))[0]!;
  idleId = (await plainIds(`SELECT id FROM people WHERE account_id = $1 AND id NOT IN (SELECT person_id FROM funding_sources WHERE account_id = $1) ORDER BY id LIMIT 1`, [ACCOUNT]))[0]!;
  // Some loans hold the key's field, some do not: a field of the account's product (the database
  // checks every custom key a write sets against the product, migrations 0063 and 0064).
  await addProductField(database.db, ACCOUNT, { name: 'Watch', type: 'boolean' });
  await database.db.query(`UPDATE loans SET custom_fields = custom_fields || '{"watch": true}' WHERE account_id = $1 AND id IN (SELECT id FROM loans WHERE account_id = $1 ORDER BY id LIMIT 12)`, [ACCOUNT]);
});
after(async () => {
  await database?.close();
  if (directory) rmSync(directory, { recursive: true, force: true });
});

describe('Role filters: _exists, column comparisons, aggregate predicates, key variables in jsonb operators', () => {
  const watcher = (personId: string, fieldKey: string): Principal => ({ accountId: ACCOUNT, keyVariables: new Map([['person_id', personId], ['field_key', fieldKey]]) });

  it('a role filter with _exists, an aggregate predicate and _has_key: key.<variable> answers what plain SQL does', async () => {
    const expected = await plainIds(
      `SELECT l.id FROM loans AS l WHERE l.account_id = $1
         AND EXISTS (SELECT 1 FROM funding_sources AS f WHERE f.account_id = $1 AND f.person_id = $2)
         AND (SELECT count(*) FROM payments AS p WHERE p.account_id = $1 AND p.loan_id = l.id AND p.date_reversed IS NULL) >= 2
         AND l.custom_fields ? $3
       ORDER BY l.id`,
      [ACCOUNT, investorId, 'watch'],
    );
    assert.ok(expected.length > 0 && expected.length < 12, `some watched loans, not all: ${expected.length}`);
    const seen = await answer('watcher', '{ loans(order_by: {id: asc}) { id } }', watcher(investorId, 'watch'));
    assert.equal(seen.errors, undefined);
    assert.deepEqual(seen.data.loans.map((loan: { id: string }) => loan.id), expected);
    // Another key variable value: another answer from the same plan.
    const other = await answer('watcher', '{ loans(order_by: {id: asc}) { id } }', watcher(investorId, 'no_such_field'));
    assert.deepEqual(other.data.loans, []);
    // _exists false (the person funds nothing): nothing, whatever the loan.
    const idle = await answer('watcher', '{ loans { id } }', watcher(idleId, 'watch'));
    assert.deepEqual(idle.data.loans, []);
  });

  it('a column comparison (_cgte) keeps the schedule rows whose principal is paid in full, in lists and aggregates', async () => {
    const expected = await plainIds(`SELECT id FROM schedules WHERE account_id = $1 AND principal_paid >= principal ORDER BY id`, [ACCOUNT]);
    const all = await plainIds(`SELECT id FROM schedules WHERE account_id = $1`, [ACCOUNT]);
    assert.ok(expected.length > 0 && expected.length < all.length, `${expected.length} of ${all.length}`);
    const seen = await answer('watcher', '{ schedules(order_by: {id: asc}) { id } schedules_aggregate { aggregate { count } } }', watcher(investorId, 'watch'));
    assert.equal(seen.errors, undefined);
    assert.deepEqual(seen.data.schedules.map((row: { id: string }) => row.id), expected);
    assert.equal(Number(String(seen.data.schedules_aggregate.aggregate.count.text)), expected.length);
  });

  it('an investor-like role sees a computed field only when its columns permit it', async () => {
    const principal: Principal = { accountId: ACCOUNT, keyVariables: new Map([['person_id', investorId]]) };
    const query = '{ loans(order_by: {id: asc}) { id payoff(args: {as_of: "2026-06-30"}) days_past_due } }';
    const plus = await answer('investor_plus', query, principal);
    assert.equal(plus.errors, undefined);
    const { rows } = await database.db.query<{ j: string }>(
      `SELECT json_build_object('id', l.id, 'payoff', loanql_loan_payoff(l.account_id, l.id, as_of => '2026-06-30'), 'days_past_due', loanql_loan_days_past_due(l.account_id, l.id))::text AS j
         FROM loans AS l WHERE l.account_id = $1 AND l.id IN (SELECT loan_id FROM funding_sources WHERE account_id = $1 AND person_id = $2) ORDER BY l.id`,
      [ACCOUNT, investorId],
    );
    assert.ok(rows.length > 0);
    assert.deepEqual(plus.data.loans, rows.map((row) => parseExact(row.j)));

    await assert.rejects(answer('investor_plain', query, principal), (error: { name: string; errors: { message: string; extensions?: { code?: string } }[] }) => {
      assert.equal(error.name, 'RequestError');
      assert.equal(error.errors[0]!.extensions?.code, 'validation-failed');
      assert.match(error.errors.map((e) => e.message).join(' '), /"payoff" on type "loans".*"days_past_due" on type "loans"/);
      return true;
    });
    // Introspection shows the computed fields to the permitted role only.
    const fieldsOf = async (role: string) =>
      ((await answer(role, '{ __type(name: "loans") { fields { name } } }', principal)).data.__type.fields as { name: string }[]).map((field) => field.name);
    assert.deepEqual((await fieldsOf('investor_plus')).filter((name) => name === 'payoff' || name === 'days_past_due'), ['payoff', 'days_past_due']);
    assert.deepEqual((await fieldsOf('investor_plain')).filter((name) => name === 'payoff' || name === 'days_past_due'), []);
  });
});
