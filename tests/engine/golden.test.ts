import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildEngine } from '../../app/engineHolder.js';
import type { GraphEngine, GraphRequest, Principal } from '../../engine/index.js';
import { METADATA_PATH, parseExact, seedAccount, stringifyExact } from '../support/seededService.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';

/**
 * Golden tests (STYLE.md): each `tests/golden/<feature>/<case>/` holds `query.graphql`
 * (+ `variables.json`), the exact SQL the engine compiles it to (`expected.sql`) and the result
 * it gives on a database seeded with a fixed seed (`result.json`, numbers with PostgreSQL's
 * digits). A change of SQL text or of results shows up as a diff to review.
 *
 * Regenerate with `UPDATE_GOLDEN=1 node --import tsx --test tests/engine/golden.test.ts`, then
 * review the diff. Never under `CI`: there the files are only compared.
 *
 * The seed's ids derive from the seed and the account id, so the account (and the admin who
 * writes the comments) get fixed ids here. The account id is a parameter, never SQL text,
 * and must not appear in any result.
 */
const GOLDEN_DIR = fileURLToPath(new URL('../golden/', import.meta.url));
const ACCOUNT_ID = '601de000-0000-4000-8000-000000000001';
const ADMIN_ID = '601de000-0000-4000-8000-0000000000ad';
const SEED = 42;
const SCALE = 0.01;

const updating = process.env.UPDATE_GOLDEN === '1';
if (updating && process.env.CI) {
  throw new Error('UPDATE_GOLDEN=1 under CI: golden files are regenerated on a developer machine and reviewed, never in CI');
}

interface GoldenCase {
  readonly name: string;
  readonly dir: string;
  readonly request: GraphRequest;
  /** `role.json`: the role the case runs as and its key variables (default: admin). */
  readonly role: { readonly role: string; readonly variables: Readonly<Record<string, string>> } | null;
}

function goldenCases(): GoldenCase[] {
  const cases: GoldenCase[] = [];
  for (const feature of readdirSync(GOLDEN_DIR, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort()) {
    for (const name of readdirSync(join(GOLDEN_DIR, feature), { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort()) {
      const dir = join(GOLDEN_DIR, feature, name);
      const query = readFileSync(join(dir, 'query.graphql'), 'utf8');
      const variablesFile = join(dir, 'variables.json');
      const variables = existsSync(variablesFile) ? (JSON.parse(readFileSync(variablesFile, 'utf8')) as Record<string, unknown>) : undefined;
      const roleFile = join(dir, 'role.json');
      const role = existsSync(roleFile) ? (JSON.parse(readFileSync(roleFile, 'utf8')) as GoldenCase['role']) : null;
      cases.push({ name: `${feature}/${name}`, dir, request: { query, ...(variables ? { variables } : {}) }, role });
    }
  }
  return cases;
}

const CASES = goldenCases();

let database: TestDatabase;
let engine: GraphEngine;

before(async () => {
  database = await openTestDatabase();
  await seedAccount(database.db, { slug: 'golden', accountId: ACCOUNT_ID, adminId: ADMIN_ID, seed: SEED, scale: SCALE });
  engine = await buildEngine(METADATA_PATH, database.db, { maxDepth: 12, maxRows: null, planCacheSize: 100 });
});

after(async () => {
  await database?.close();
});

/** Compares `actual` with the golden file, or writes it when regenerating. */
function golden(file: string, actual: string, compare: (expected: string) => void): void {
  if (updating) {
    writeFileSync(file, actual);
    return;
  }
  assert.ok(existsSync(file), `${file} is missing: regenerate with UPDATE_GOLDEN=1 and review it`);
  compare(readFileSync(file, 'utf8'));
}

describe('golden queries: the exact SQL and the result of each case in tests/golden', () => {
  it('has cases across the features', () => {
    const features = new Set(CASES.map((c) => c.name.split('/')[0]));
    assert.ok(CASES.length >= 15, `${CASES.length} cases`);
    assert.ok(features.size >= 10, `${features.size} features`);
  });

  for (const goldenCase of CASES) {
    it(goldenCase.name, async () => {
      const caseEngine = goldenCase.role ? engine.forRole(goldenCase.role.role) : engine;
      assert.ok(caseEngine, `no role ${goldenCase.role?.role}`);
      const principal: Principal = goldenCase.role ? { accountId: ACCOUNT_ID, keyVariables: new Map(Object.entries(goldenCase.role.variables)) } : ACCOUNT_ID;
      const prepared = caseEngine.prepare(goldenCase.request, principal);
      assert.equal(prepared.kind, 'statement');
      const text = prepared.kind === 'statement' ? prepared.text : '';
      golden(join(goldenCase.dir, 'expected.sql'), `${text}\n`, (expected) => assert.equal(`${text}\n`, expected, 'the compiled SQL changed'));

      const body = await caseEngine.execute(database.db, goldenCase.request, principal);
      assert.ok(!body.includes(ACCOUNT_ID), 'the account id must not be in a golden result');
      const result = parseExact(body) as { data?: unknown; errors?: unknown };
      assert.equal(result.errors, undefined, body);
      golden(join(goldenCase.dir, 'result.json'), `${stringifyExact(result)}\n`, (expected) => assert.deepEqual(result, parseExact(expected), 'the result changed'));
    });
  }
});
