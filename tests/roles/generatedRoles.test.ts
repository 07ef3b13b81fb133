import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { buildEngine } from '../../app/engineHolder.js';
import type { GraphEngine, Principal } from '../../engine/index.js';
import type { Collection } from '../../metadata/index.js';
import type { TestDatabase } from '../support/testDatabase.js';
import { openRoleAccounts, ROLE_ACCOUNTS } from '../support/seededService.js';

/**
 * Issue 15, Done when 2: generated queries (fast-check, fixed seed) with nested relationships
 * of both kinds, relationship filters in `where`, `order_by` (through object relationships
 * too), `limit` and aggregates, run as each shipped role and as `admin`. The expected answer of
 * a role is the admin answer restricted by that role's rule, which the test computes on its
 * own: the rows each role may see are read with plain SQL (below, written from the rules in
 * words, not from the metadata), the admin query gets `id: {_in: visible}` at every list,
 * aggregate and relationship filter, and object relationships to a row the role cannot see
 * are nulled. Two accounts: a row of the other account in any answer is a difference.
 */
const SEED = 20261122;
const METADATA_PATH = fileURLToPath(new URL('../../metadata/loanql.default.yaml', import.meta.url));
const ACCOUNT_A = ROLE_ACCOUNTS.a;
const ACCOUNT_B = ROLE_ACCOUNTS.b;
const RUNS_PER_ROLE = 100;
/** The collections the generated queries walk (the investor's whole world). */
const WORLD = ['loans', 'payments', 'schedules', 'funding_sources', 'people', 'borrows', 'loan_documents', 'documents'] as const;
/** Object relationships whose target the role always sees when it sees the source: order_by may walk them. */
const ORDER_PATHS = new Set(['payments.loan', 'schedules.loan', 'funding_sources.loan', 'funding_sources.person', 'borrows.loan', 'loan_documents.loan', 'loan_documents.document']);

let database: TestDatabase;
let admin: GraphEngine;
let investorId: string;
/** Per role: collection → the ids the role may see (null: every row of the account). */
const visible = new Map<string, Map<string, Set<string> | null>>();
/** Per collection and field: a few values present in the data, for comparisons. */
const samples = new Map<string, string[]>();

type Json = any;

before(async () => {
  // Seeded once and kept as a dump, shared with sharedScanRoles (openRoleAccounts).
  database = await openRoleAccounts();
  const db = database.db;
  // No cost limit: generated queries nest deeply; what is compared here is rows, not cost (limits.test.ts).
  admin = await buildEngine(METADATA_PATH, db, { maxDepth: 12, maxRows: null, planCacheSize: 500, maxCost: 0 });
  const q = async (text: string, values: unknown[] = []): Promise<string[]> => (await db.query<{ id: string }>(text, values)).rows.map((row) => row.id);
  investorId = (await q(`SELECT person_id AS id FROM funding_sources WHERE account_id = $1 GROUP BY person_id ORDER BY count(*) DESC, person_id LIMIT 1`, [ACCOUNT_A]))[0]!;
  // The investor rule, in words: the loans the person funds; the rows hanging off those loans;
  // the person's own record and funding records; documents linked to those loans.
  const funded = `SELECT loan_id FROM funding_sources WHERE account_id = $1 AND person_id = $2`;
  const byLoan = (table: string) => q(`SELECT id FROM ${table} WHERE account_id = $1 AND loan_id IN (${funded})`, [ACCOUNT_A, investorId]);
  visible.set(
    'investor',
    new Map<string, Set<string> | null>([
      ['loans', new Set(await q(`SELECT id FROM loans WHERE account_id = $1 AND id IN (${funded})`, [ACCOUNT_A, investorId]))],
      ['payments', new Set(await byLoan('payments'))],
      ['schedules', new Set(await byLoan('schedules'))],
      ['borrows', new Set(await byLoan('borrows'))],
      ['loan_documents', new Set(await byLoan('loan_documents'))],
      ['funding_sources', new Set(await q(`SELECT id FROM funding_sources WHERE account_id = $1 AND person_id = $2`, [ACCOUNT_A, investorId]))],
      ['people', new Set([investorId])],
      ['documents', new Set(await q(`SELECT document_id AS id FROM loan_documents WHERE account_id = $1 AND loan_id IN (${funded})`, [ACCOUNT_A, investorId]))],
    ]),
  );
  assert.ok(visible.get('investor')!.get('loans')!.size > 0 && visible.get('investor')!.get('payments')!.size > 0, 'the investor sees something');
  // read_only and servicer read everything.
  for (const role of ['read_only', 'servicer']) visible.set(role, new Map(WORLD.map((name) => [name, null])));
  for (const name of WORLD) {
    const collection = admin.metadata.collections.get(name)!;
    for (const field of collection.fields.values()) {
      if (field.type === 'jsonb' || field.type === 'boolean') continue;
      // As JSON writes them (ISO timestamps), which is what the GraphQL scalars read.
      const value = field.source.kind === 'column' ? `to_json(${field.source.column}) #>> '{}'` : `${field.source.column} ->> '${field.source.key}'`;
      const rows = await db.query<{ v: string }>(`SELECT DISTINCT ${value} AS v FROM ${collection.table} WHERE account_id = $1 AND ${value} IS NOT NULL ORDER BY 1 LIMIT 4`, [ACCOUNT_A]);
      samples.set(`${name}.${field.name}`, rows.rows.map((row) => row.v));
    }
  }
});

after(async () => {
  await database?.close();
});

// ---------------------------------------------------------------------------------------------
// Query model: one tree, printed twice (as the role asks it, and as the admin with the rule).

interface Where {
  readonly kind: 'field' | 'relationship' | 'or' | 'not';
  readonly text: (rule: Rule) => string;
}
/** The admin's extra condition per collection (`id: {_in: […]}`), or nothing for the role itself. */
type Rule = ((collection: string) => string | null) | null;

interface ListNode {
  readonly collection: string;
  readonly where: Where | null;
  readonly orderBy: string | null;
  readonly limit: number | null;
  readonly fields: readonly string[];
  readonly children: readonly ChildNode[];
}
type ChildNode =
  | { readonly kind: 'object'; readonly name: string; readonly target: string; readonly fields: readonly string[]; readonly children: readonly ChildNode[] }
  | { readonly kind: 'array'; readonly name: string; readonly list: ListNode }
  | { readonly kind: 'aggregate'; readonly name: string; readonly list: ListNode };

interface QueryNode {
  readonly root: ListNode;
  readonly aggregate: boolean;
}

const conditions = (where: Where | null, rule: Rule, collection: string): string => {
  const parts = [where?.text(rule), rule?.(collection)].filter((part): part is string => !!part);
  return parts.length === 0 ? '' : parts.length === 1 ? parts[0]! : `_and: [{${parts[0]}}, {${parts[1]}}]`;
};

function listArgs(list: ListNode, rule: Rule): string {
  const args: string[] = [];
  const where = conditions(list.where, rule, list.collection);
  if (where) args.push(`where: {${where}}`);
  if (list.orderBy) args.push(`order_by: [${list.orderBy}]`);
  if (list.limit !== null) args.push(`limit: ${list.limit}`);
  return args.length ? `(${args.join(', ')})` : '';
}

function printChildren(children: readonly ChildNode[], rule: Rule): string {
  return children
    .map((child) => {
      if (child.kind === 'object') return `${child.name} { id ${child.fields.join(' ')} ${printChildren(child.children, rule)} }`;
      if (child.kind === 'array') return `${child.name}${listArgs(child.list, rule)} { ${printList(child.list, rule)} }`;
      return `${child.name}_aggregate${listArgs(child.list, rule)} { aggregate { count } }`;
    })
    .join(' ');
}

function printList(list: ListNode, rule: Rule): string {
  return `id ${list.fields.join(' ')} ${printChildren(list.children, rule)}`;
}

function printQuery(query: QueryNode, rule: Rule): string {
  const root = query.root;
  const aggregate = query.aggregate ? ` agg: ${root.collection}_aggregate${listArgs({ ...root, orderBy: null, limit: null }, rule)} { aggregate { count } }` : '';
  return `{ rows: ${root.collection}${listArgs(root, rule)} { ${printList(root, rule)} }${aggregate} }`;
}

/** The admin answer restricted by the role: object relationships to rows the role cannot see become null. */
function restrictObjects(value: Json, children: readonly ChildNode[], role: string): Json {
  const ids = visible.get(role)!;
  const walkRow = (row: Json, nested: readonly ChildNode[]): Json => {
    for (const child of nested) {
      if (child.kind === 'object') {
        const target = row[child.name];
        const allowed = ids.get(child.target);
        if (target && allowed && !allowed.has(target.id)) row[child.name] = null;
        else if (target) walkRow(target, child.children);
      } else if (child.kind === 'array') for (const item of row[child.name]) walkRow(item, child.list.children);
    }
    return row;
  };
  for (const row of value) walkRow(row, children);
  return value;
}

// ---------------------------------------------------------------------------------------------
// Generation, from the role's view of the metadata (which fields and relationships it has).

function arbitraries(roleView: ReadonlyMap<string, Collection>) {
  const inWorld = (name: string): boolean => (WORLD as readonly string[]).includes(name) && roleView.has(name);
  const scalarFields = (collection: Collection) => [...collection.fields.values()].filter((field) => field.type !== 'jsonb');

  const comparison = (collection: Collection): fc.Arbitrary<Where> => {
    const fields = scalarFields(collection).filter((field) => field.type !== 'boolean' && field.type !== 'integer' && (samples.get(`${collection.name}.${field.name}`)?.length ?? 0) > 0);
    const isNull = fc.record({ field: fc.constantFrom(...scalarFields(collection)), value: fc.boolean() }).map(
      ({ field, value }): Where => ({ kind: 'field', text: () => `${field.name}: {_is_null: ${value}}` }),
    );
    if (!fields.length) return isNull;
    const compare = fc
      .record({ field: fc.constantFrom(...fields), op: fc.constantFrom('_eq', '_neq', '_gt', '_lte'), pick: fc.nat() })
      .map(({ field, op, pick }): Where => {
        const values = samples.get(`${collection.name}.${field.name}`)!;
        return { kind: 'field', text: () => `${field.name}: {${op}: ${JSON.stringify(values[pick % values.length])}}` };
      });
    return fc.oneof(compare, isNull);
  };

  const where = (collection: Collection, depth: number): fc.Arbitrary<Where> => {
    const relationships = [...collection.relationships.values()].filter((relationship) => inWorld(relationship.target));
    // Relationship filters weigh most: they are where a role's filter on another collection shows.
    const options: fc.WeightedArbitrary<Where>[] = [{ arbitrary: comparison(collection), weight: 2 }];
    if (depth > 0 && relationships.length) {
      options.push({
        weight: 5,
        arbitrary: fc.constantFrom(...relationships).chain((relationship) =>
          fc.option(where(roleView.get(relationship.target)!, depth - 1), { nil: null, freq: 4 }).map(
            (inner): Where => ({ kind: 'relationship', text: (rule) => `${relationship.name}: {${conditions(inner, rule, relationship.target)}}` }),
          ),
        ),
      });
      options.push({
        weight: 1,
        arbitrary: fc.tuple(where(collection, depth - 1), where(collection, depth - 1)).map(([x, y]): Where => ({ kind: 'or', text: (rule) => `_or: [{${x.text(rule)}}, {${y.text(rule)}}]` })),
      });
      options.push({ weight: 1, arbitrary: where(collection, depth - 1).map((x): Where => ({ kind: 'not', text: (rule) => `_not: {${x.text(rule)}}` })) });
    }
    return fc.oneof(...options);
  };

  const orderBy = (collection: Collection): fc.Arbitrary<string | null> => {
    const direct = scalarFields(collection).map((field) => `{${field.name}: %}`);
    const through = [...collection.relationships.values()]
      .filter((relationship) => relationship.kind === 'object' && ORDER_PATHS.has(`${collection.name}.${relationship.name}`) && inWorld(relationship.target))
      .flatMap((relationship) => scalarFields(roleView.get(relationship.target)!).map((field) => `{${relationship.name}: {${field.name}: %}}`));
    return fc.option(
      fc.tuple(fc.constantFrom(...direct, ...through), fc.constantFrom('asc', 'desc', 'asc_nulls_first', 'desc_nulls_last')).map(([item, direction]) => item.replace('%', direction)),
      { nil: null },
    );
  };

  const fieldsOf = (collection: Collection): fc.Arbitrary<string[]> => {
    const names = scalarFields(collection).map((field) => field.name).filter((name) => name !== 'id');
    return fc.subarray(names, { maxLength: Math.min(3, names.length) });
  };

  const children = (collection: Collection, depth: number): fc.Arbitrary<ChildNode[]> => {
    const relationships = [...collection.relationships.values()].filter((relationship) => inWorld(relationship.target));
    if (depth === 0 || !relationships.length) return fc.constant([]);
    const child = fc.constantFrom(...relationships).chain((relationship): fc.Arbitrary<ChildNode> => {
      const target = roleView.get(relationship.target)!;
      if (relationship.kind === 'object')
        return fc.record({ fields: fieldsOf(target), children: children(target, depth - 1) }).map(({ fields, children: nested }) => ({ kind: 'object', name: relationship.name, target: target.name, fields, children: nested }));
      const kinds: ('array' | 'aggregate')[] = target.allowAggregations ? ['array', 'aggregate'] : ['array'];
      return fc.tuple(fc.constantFrom(...kinds), list(target, depth - 1)).map(([kind, nested]) => ({ kind, name: relationship.name, list: nested }));
    });
    return fc.uniqueArray(child, { maxLength: 3, selector: (c) => c.name + c.kind });
  };

  const list = (collection: Collection, depth: number): fc.Arbitrary<ListNode> =>
    fc.record({
      collection: fc.constant(collection.name),
      where: fc.option(where(collection, 2), { nil: null, freq: 3 }),
      orderBy: orderBy(collection),
      limit: fc.option(fc.integer({ min: 0, max: 6 }), { nil: null, freq: 2 }),
      fields: fieldsOf(collection),
      children: children(collection, depth),
    });

  const roots = WORLD.filter(inWorld).map((name) => roleView.get(name)!);
  return fc.constantFrom(...roots).chain((collection) =>
    fc.record({ root: list(collection, 3), aggregate: collection.allowAggregations ? fc.boolean() : fc.constant(false) }),
  );
}

async function answer(engine: GraphEngine, query: string, principal: Principal): Promise<Json> {
  const text = await engine.execute(database.db, { query }, principal);
  const body = JSON.parse(text) as { data?: Json; errors?: unknown };
  assert.equal(body.errors, undefined, `${query}\n${text}`);
  return body.data;
}

describe('Roles: generated queries, each role against the admin answer restricted by its rule', { timeout: 600_000 }, () => {
  for (const role of ['investor', 'read_only', 'servicer']) {
    it(`${role}: ${RUNS_PER_ROLE} queries`, async () => {
      const engine = admin.forRole(role)!;
      const principal: Principal = { accountId: ACCOUNT_A, keyVariables: new Map([['person_id', investorId]]) };
      const ids = visible.get(role)!;
      const rule: Rule = (collection) => {
        const allowed = ids.get(collection);
        return allowed ? `id: {_in: ${JSON.stringify([...allowed])}}` : null;
      };
      let rows = 0;
      const checkOne = async (query: QueryNode): Promise<void> => {
        const asRole = printQuery(query, null);
        const asAdmin = printQuery(query, rule);
        const actual = await answer(engine, asRole, principal);
        const expected = await answer(admin, asAdmin, ACCOUNT_A);
        restrictObjects(expected.rows, query.root.children, role);
        rows += expected.rows.length;
        if (!isDeepStrictEqual(actual, expected))
          assert.fail(`${role} answered differently\nrole: ${asRole}\nadmin: ${asAdmin}\nactual: ${JSON.stringify(actual).slice(0, 2000)}\nexpected: ${JSON.stringify(expected).slice(0, 2000)}`);
      };
      await fc.assert(
        fc.asyncProperty(arbitraries(engine.metadata.collections), async (query) => {
          try {
            await checkOne(query);
          } catch (error) {
            // fast-check's report shows the generated tree, not this message: print it.
            console.error(String((error as Error).message).slice(0, 3000));
            throw new Error(String((error as Error).message).slice(0, 6000));
          }
        }),
        { seed: SEED, numRuns: RUNS_PER_ROLE, endOnFailure: true },
      );
      assert.ok(rows > RUNS_PER_ROLE, `the queries returned rows (${rows})`);
    });
  }

  it('across accounts: a key of account B with A’s investor as its variable sees nothing of A', async () => {
    const engine = admin.forRole('investor')!;
    const principal: Principal = { accountId: ACCOUNT_B, keyVariables: new Map([['person_id', investorId]]) };
    const data = await answer(engine, `{ loans { id } people { id } funding_sources { id } payments { id } documents { id } loans_aggregate { aggregate { count } } }`, principal);
    assert.deepEqual(data, { loans: [], people: [], funding_sources: [], payments: [], documents: [], loans_aggregate: { aggregate: { count: 0 } } });
    const none = await answer(engine, `{ loans { id } people { id } }`, { accountId: ACCOUNT_A, keyVariables: new Map() });
    assert.deepEqual(none, { loans: [], people: [] }, 'a key without its variable sees nothing, not everything');
  });
});
