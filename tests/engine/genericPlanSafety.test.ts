import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildEngine } from '../../app/engineHolder.js';
import type { GraphEngine } from '../../engine/index.js';
import { genericPlanSafety } from '../../engine/sql/fragment.js';
import { METADATA_PATH } from '../support/seededService.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';

/**
 * Which compiled statements the engine marks `genericPlanSafe` (db/planChoice.ts): those whose
 * parameters cannot choose another plan unseen — values written in the document, the account,
 * limits and offsets, and variables compared with a field whose column a CHECK constraint limits
 * to a few values (each of which the check then tries) — and not those with any other request
 * variable compared with a column.
 */
let database: TestDatabase;
let engine: GraphEngine;
const ACCOUNT = '601de000-0000-4000-8000-000000000002';

before(async () => {
  database = await openTestDatabase();
  engine = await buildEngine(METADATA_PATH, database.db, { maxDepth: 12, maxRows: null, planCacheSize: 100 });
});
after(async () => {
  await database?.close();
});

/** The statement's generic-plan safety: null, or the listed values by parameter index (as an object, to compare). */
function safety(query: string, variables: Record<string, unknown> = {}): Record<number, readonly unknown[]> | null {
  const prepared = engine.prepare({ query, variables }, ACCOUNT);
  assert.equal(prepared.kind, 'statement');
  const safe = genericPlanSafety((prepared as Extract<typeof prepared, { kind: 'statement' }>).params);
  return safe && Object.fromEntries(safe.oneOf);
}

describe('Statements whose parameters cannot choose their plan unseen', () => {
  it('a page of loans with a status written in the document and a variable limit and offset: safe, nothing to try', () => {
    assert.deepEqual(
      safety(`query($limit: Int, $offset: Int) { loans(where: {status: {_eq: "servicing"}}, order_by: {created_at: desc}, limit: $limit, offset: $offset) { id borrows { person { name } } } }`, { limit: 20, offset: 40 }),
      {},
    );
  });

  it('a variable status of loans (CHECK: lead, servicing, closed, overpaid): safe once each of the four values is tried', () => {
    const safe = safety(`query($status: String!, $limit: Int!) { loans(where: {status: {_eq: $status}}, limit: $limit) { id } }`, { status: 'servicing', limit: 20 });
    assert.deepEqual(Object.values(safe ?? {}), [['lead', 'servicing', 'closed', 'overpaid']]);
  });

  it('a variable compared with a column of unlisted values is not safe (its value may call for another plan)', () => {
    assert.equal(safety(`query($status: String!) { tasks(where: {status: {_eq: $status}}, limit: 20) { id } }`, { status: 'open' }), null);
    assert.equal(safety(`query($pattern: String!) { people(where: {name: {_ilike: $pattern}}, limit: 20) { id } }`, { pattern: '%smi%' }), null);
    assert.equal(safety(`query($id: uuid!) { loans_by_pk(id: $id) { id } }`, { id: ACCOUNT }), null);
    assert.equal(safety(`query($status: String!) { loans(where: {status: {_neq: $status}}) { id } }`, { status: 'lead' }), null, 'only _eq is listed');
  });

  it('an aggregate over values written in the document is safe', () => {
    assert.deepEqual(safety(`{ loans_aggregate(where: {status: {_in: ["servicing", "lead"]}}) { aggregate { count } } }`), {});
  });
});
