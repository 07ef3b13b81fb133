import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildEngine } from '../../app/engineHolder.js';
import type { GraphEngine } from '../../engine/index.js';
import { planNeutral } from '../../engine/sql/fragment.js';
import { METADATA_PATH } from '../support/seededService.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';

/**
 * Which compiled statements the engine marks `genericPlanSafe` (db/planChoice.ts): those whose
 * parameters cannot choose another plan from one execution to the next — values written in the
 * document, the account, limits and offsets — and not those with a request variable compared
 * with a column.
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

function neutral(query: string, variables: Record<string, unknown> = {}): boolean {
  const prepared = engine.prepare({ query, variables }, ACCOUNT);
  assert.equal(prepared.kind, 'statement');
  return planNeutral((prepared as Extract<typeof prepared, { kind: 'statement' }>).params);
}

describe('Statements whose parameters cannot choose their plan', () => {
  it('a page of loans with a status written in the document and a variable limit and offset is plan-neutral', () => {
    assert.equal(
      neutral(`query($limit: Int, $offset: Int) { loans(where: {status: {_eq: "servicing"}}, order_by: {created_at: desc}, limit: $limit, offset: $offset) { id borrows { person { name } } } }`, { limit: 20, offset: 40 }),
      true,
    );
  });

  it('a variable compared with a column is not (its value may call for another plan)', () => {
    assert.equal(neutral(`query($status: String!) { loans(where: {status: {_eq: $status}}, limit: 20) { id } }`, { status: 'servicing' }), false);
    assert.equal(neutral(`query($pattern: String!) { people(where: {name: {_ilike: $pattern}}, limit: 20) { id } }`, { pattern: '%smi%' }), false);
    assert.equal(neutral(`query($id: uuid!) { loans_by_pk(id: $id) { id } }`, { id: ACCOUNT }), false);
  });

  it('an aggregate over values written in the document is plan-neutral', () => {
    assert.equal(neutral(`{ loans_aggregate(where: {status: {_in: ["servicing", "lead"]}}) { aggregate { count } } }`), true);
  });
});
