import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { format as formatSqlText } from 'sql-formatter';
import { buildEngine } from '../../app/engineHolder.js';
import type { GraphEngine, GraphRequest, Principal } from '../../engine/index.js';
import { METADATA_PATH, openSeededTestDatabase, parseExact, stringifyExact } from '../support/seededService.js';
import type { TestDatabase } from '../support/testDatabase.js';

/**
 * Golden tests (STYLE.md): each `tests/golden/<feature>/<case>/` holds `query.graphql`
 * (+ `variables.json`), the exact SQL the engine compiles it to (`expected.sql`) and the result
 * it gives on a database seeded with a fixed seed (`result.json`, numbers with PostgreSQL's
 * digits). A change of SQL text or of results shows up as a diff to review.
 *
 * `expected.sql` is the statement laid out on several lines by `sql-formatter` so that a change
 * reads as a small diff; the engine's one-line text and the file are compared after
 * `normaliseSqlWhitespace`, which touches whitespace only outside string literals and quoted
 * identifiers (`'{"name":'` and `', '` keep their spaces). Every case also checks that the
 * formatter changed nothing but that whitespace in the engine's actual SQL, so a formatter quirk
 * cannot hide a change.
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
  /** The feature's own `metadata.yaml` (tables its `schema.sql` makes: a lender's own), or null for the shipped metadata. */
  readonly metadataPath: string | null;
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
      const featureMetadata = join(GOLDEN_DIR, feature, 'metadata.yaml');
      cases.push({ name: `${feature}/${name}`, dir, request: { query, ...(variables ? { variables } : {}) }, role, metadataPath: existsSync(featureMetadata) ? featureMetadata : null });
    }
  }
  return cases;
}

const CASES = goldenCases();

let database: TestDatabase;
let engine: GraphEngine;
/** Engines of the features with a metadata file of their own, by that file. */
const featureEngines = new Map<string, GraphEngine>();

before(async () => {
  ({ database } = await openSeededTestDatabase([{ slug: 'golden', accountId: ACCOUNT_ID, adminId: ADMIN_ID, seed: SEED, scale: SCALE }]));
  engine = await buildEngine(METADATA_PATH, database.db, { maxDepth: 12, maxRows: null, planCacheSize: 100 });
  // A feature with `metadata.yaml` has a `schema.sql` too: its tables and rows (statements split on `;` at a line's end).
  for (const metadataPath of new Set(CASES.flatMap((c) => (c.metadataPath ? [c.metadataPath] : [])))) {
    const schema = readFileSync(join(metadataPath, '..', 'schema.sql'), 'utf8');
    for (const statement of schema.split(/;\s*$/m).filter((text) => text.trim())) await database.db.query(statement);
    featureEngines.set(metadataPath, await buildEngine(metadataPath, database.db, { maxDepth: 12, maxRows: null, planCacheSize: 100 }));
  }
});

after(async () => {
  await database?.close();
});

type SqlCharacterClass = 'word' | 'operator' | 'quote' | 'punctuation';

function sqlCharacterClass(character: string): SqlCharacterClass {
  if (/[A-Za-z0-9_$]/.test(character)) return 'word';
  if (/[+\-*/<>=~!@#%^&|`?]/.test(character)) return 'operator';
  if (character === "'" || character === '"') return 'quote';
  return 'punctuation';
}

/**
 * The SQL text with every run of whitespace outside string literals (`'…'`) and quoted
 * identifiers (`"…"`, both with doubled quotes as escapes) removed, except one space where it
 * separates two characters of the same kind: two words (`AS "j"` needs none, `$1 AND` needs
 * one), two operator characters (`< =` is not `<=`) or two quoted tokens (`"a" "b"` is not
 * `"a""b"`). Two texts that differ after this differ in more than layout. The engine writes
 * neither comments nor dollar-quoted or `E'…'` strings; a quote left open is an error.
 */
function normaliseSqlWhitespace(sql: string): string {
  let normalised = '';
  let afterWhitespace = false;
  let index = 0;
  while (index < sql.length) {
    const character = sql[index]!;
    if (/\s/.test(character)) {
      afterWhitespace = true;
      index += 1;
      continue;
    }
    const previous = normalised.at(-1);
    if (afterWhitespace && previous !== undefined) {
      const kind = sqlCharacterClass(character);
      if (kind !== 'punctuation' && kind === sqlCharacterClass(previous)) normalised += ' ';
    }
    afterWhitespace = false;
    if (character === "'" || character === '"') {
      let end = index + 1;
      for (;;) {
        if (end >= sql.length) throw new Error(`unterminated ${character} opened at offset ${index} of ${sql.slice(index, index + 40)}…`);
        if (sql[end] === character) {
          if (sql[end + 1] !== character) break;
          end += 2;
        } else {
          end += 1;
        }
      }
      normalised += sql.slice(index, end + 1);
      index = end + 1;
      continue;
    }
    normalised += character;
    index += 1;
  }
  return normalised;
}

/** The statement on several lines, as `expected.sql` holds it (keywords and names as written). */
function formatSql(sql: string): string {
  return `${formatSqlText(sql, { language: 'postgresql', tabWidth: 2, keywordCase: 'preserve' })}\n`;
}

/** Compares `actual` with the golden file, or writes it when regenerating. */
function golden(file: string, actual: string, compare: (expected: string) => void): void {
  if (updating) {
    writeFileSync(file, actual);
    return;
  }
  assert.ok(existsSync(file), `${file} is missing: regenerate with UPDATE_GOLDEN=1 and review it`);
  compare(readFileSync(file, 'utf8'));
}

describe('golden SQL comparison: only whitespace outside literals and quoted names is layout', () => {
  it('ignores line breaks and indentation between tokens', () => {
    assert.equal(normaliseSqlWhitespace('SELECT concat(\n  \'[\',\n  "_t1"."id"\n) AS "j"\nFROM "loans" AS "_t1"'), normaliseSqlWhitespace(`SELECT concat('[', "_t1"."id") AS "j" FROM "loans" AS "_t1"`));
  });

  it('keeps the spaces inside a string literal and a quoted identifier', () => {
    assert.notEqual(normaliseSqlWhitespace(`SELECT ', '`), normaliseSqlWhitespace(`SELECT ','`));
    assert.notEqual(normaliseSqlWhitespace(`SELECT '{"name":'`), normaliseSqlWhitespace(`SELECT '{"name": '`));
    assert.notEqual(normaliseSqlWhitespace('SELECT "a b"'), normaliseSqlWhitespace('SELECT "ab"'));
    assert.notEqual(normaliseSqlWhitespace(`SELECT 'it''s  so'`), normaliseSqlWhitespace(`SELECT 'it''s so'`));
  });

  it('keeps the space that separates two words, two operators or two quoted tokens', () => {
    assert.notEqual(normaliseSqlWhitespace('$1 AND x'), normaliseSqlWhitespace('$1AND x'));
    assert.notEqual(normaliseSqlWhitespace('a < = b'), normaliseSqlWhitespace('a <= b'));
    assert.notEqual(normaliseSqlWhitespace('"a" "b"'), normaliseSqlWhitespace('"a""b"'));
  });

  it('sees a changed token, parameter or cast', () => {
    const sql = `SELECT "_t1"."id" FROM "loans" AS "_t1" WHERE "_t1"."account_id" = $1 AND "_t1"."rate" < $2::numeric`;
    for (const changed of [sql.replace('$2', '$3'), sql.replace('::numeric', '::text'), sql.replace('<', '<='), sql.replace('"rate"', '"Rate"')]) {
      assert.notEqual(normaliseSqlWhitespace(formatSql(changed)), normaliseSqlWhitespace(sql), changed);
    }
  });

  it('refuses a quote left open', () => {
    assert.throws(() => normaliseSqlWhitespace(`SELECT 'open`), /unterminated/);
  });
});

describe('golden queries: the exact SQL and the result of each case in tests/golden', () => {
  it('has cases across the features', () => {
    const features = new Set(CASES.map((c) => c.name.split('/')[0]));
    assert.ok(CASES.length >= 15, `${CASES.length} cases`);
    assert.ok(features.size >= 10, `${features.size} features`);
  });

  for (const goldenCase of CASES) {
    it(goldenCase.name, async () => {
      const base = goldenCase.metadataPath ? featureEngines.get(goldenCase.metadataPath)! : engine;
      const caseEngine = goldenCase.role ? base.forRole(goldenCase.role.role) : base;
      assert.ok(caseEngine, `no role ${goldenCase.role?.role}`);
      const principal: Principal = goldenCase.role ? { accountId: ACCOUNT_ID, keyVariables: new Map(Object.entries(goldenCase.role.variables)) } : ACCOUNT_ID;
      const prepared = caseEngine.prepare(goldenCase.request, principal);
      assert.equal(prepared.kind, 'statement');
      const text = prepared.kind === 'statement' ? prepared.text : '';
      const formatted = formatSql(text);
      assert.equal(normaliseSqlWhitespace(formatted), normaliseSqlWhitespace(text), 'sql-formatter changed more than whitespace in this statement');
      golden(join(goldenCase.dir, 'expected.sql'), formatted, (expected) => {
        // Equal apart from layout passes; otherwise the formatted forms are compared so that
        // the failure shows a line-by-line diff.
        if (normaliseSqlWhitespace(expected) !== normaliseSqlWhitespace(text)) assert.equal(formatted, expected, 'the compiled SQL changed');
      });

      const body = await caseEngine.execute(database.db, goldenCase.request, principal);
      assert.ok(!body.includes(ACCOUNT_ID), 'the account id must not be in a golden result');
      const result = parseExact(body) as { data?: unknown; errors?: unknown };
      assert.equal(result.errors, undefined, body);
      golden(join(goldenCase.dir, 'result.json'), `${stringifyExact(result)}\n`, (expected) => assert.deepEqual(result, parseExact(expected), 'the result changed'));
    });
  }
});
