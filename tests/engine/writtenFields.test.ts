import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kind, parse, type OperationDefinitionNode } from 'graphql';
import fc from 'fast-check';
import { foldSelections, fragmentsOf, rootFields, type SelectionFold } from '../../engine/document/foldSelections.js';
import { fewestFieldsPerOperation, writtenSizeRefusal, type WrittenFields } from '../../engine/validation/writtenFields.js';
import { assumeEmptyCatalogue, loadMetadataFile } from '../../metadata/index.js';
import { GraphEngine, RequestError } from '../../engine/index.js';

/**
 * MAX_QUERY_FIELDS on the document's text, before parsing (issue 35, the chaos suite's
 * 10,000-alias attack): the count read from the text is never above what `maxFieldsRule` counts
 * after parsing (so it refuses nothing that rule admits), equals it for a document without
 * fragment spreads, and an alias bomb is refused as `query-too-expensive` before the parser
 * sees it — even one too long for the parser's token limit, which used to be `parse-failed`.
 */
const GOLDEN = fileURLToPath(new URL('../golden/', import.meta.url));
const METADATA_PATH = fileURLToPath(new URL('../../metadata/loanql.default.yaml', import.meta.url));

const FIELD_COUNT: SelectionFold<number> = { field: (field, nested) => 1 + (field.selectionSet ? nested(field.selectionSet) : 0), combine: (a, b) => a + b, empty: 0 };

/** What `maxFieldsRule` and `maxRootFieldsRule` count, per operation, after parsing. */
function parsedCounts(text: string): WrittenFields[] {
  const document = parse(text);
  const fragments = fragmentsOf(document);
  return document.definitions
    .filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)
    .map((operation) => ({ fields: foldSelections(operation.selectionSet, fragments, FIELD_COUNT), rootFields: rootFields(operation, fragments).length }));
}

/** The text's counts are at most the parsed ones, and equal when `exact`. */
function assertLowerBound(text: string, exact: boolean): void {
  const written = fewestFieldsPerOperation(text);
  const parsed = parsedCounts(text);
  assert.equal(written.length, parsed.length, text);
  for (const [index, count] of written.entries()) {
    const real = parsed[index]!;
    assert.ok((count.fields >= 1 || real.fields === 0) && count.fields <= real.fields && count.rootFields <= real.rootFields, `${text}: ${JSON.stringify(count)} against ${JSON.stringify(real)}`);
    if (exact) assert.deepEqual(count, real, text);
  }
}

const TRICKY = [
  '{ loans { id } }',
  'query Q($where: loans_bool_exp = {name: {_eq: "a { b: c }"}}, $n: Int = -1.5e3) @cached { a: loans(where: $where, limit: $n) { b: id name # comment { x: y }\n borrows { person { name } } } }',
  'query { loans(where: {_or: [{name: {_eq: "\\"}"}}, {amount: {_gt: 10}}]}) { id ... on loans { name } ... @include(if: true) { amount } } }',
  '{ loans { ...F ...F } } fragment F on loans { id name ...G } fragment G on loans { amount }',
  'query A { loans { id } } query B { x: loans { id name amount } } fragment Unused on loans { id id id }',
  '{ loans(limit: 1) { id description: name } __typename }',
  '{ loans { ...onLoan } } fragment onLoan on loans { id }',
  'query { loans(where: {name: {_eq: """block { string } : with "quotes" """}}) { id } }',
];

describe('Fields counted on the text (MAX_QUERY_FIELDS before parsing)', () => {
  it('counts exactly without fragment spreads, and never more than after parsing with them (crafted documents)', () => {
    for (const text of TRICKY) assertLowerBound(text, !text.includes('...F') && !text.includes('...G') && !text.includes('...onLoan'));
    assert.deepEqual(fewestFieldsPerOperation(TRICKY[3]!), [{ fields: 4, rootFields: 1 }], 'loans, then F (id, name) and G (amount) once each');
    assert.deepEqual(parsedCounts(TRICKY[3]!), [{ fields: 7, rootFields: 1 }], 'F spread twice after parsing');
    assert.deepEqual(fewestFieldsPerOperation('{ a: loans { id } b: loans { id } ... on query_root { c: loans { id } } }'), [{ fields: 6, rootFields: 2 }], 'root fields of an inline fragment are not counted (a lower bound)');
  });

  it('never counts more than after parsing, for every golden query', () => {
    let checked = 0;
    for (const feature of readdirSync(GOLDEN)) {
      const dir = join(GOLDEN, feature);
      if (feature.endsWith('.md') || !existsSync(dir)) continue;
      for (const name of readdirSync(dir)) {
        const file = join(dir, name, 'query.graphql');
        if (!existsSync(file)) continue;
        assertLowerBound(readFileSync(file, 'utf8'), false);
        checked++;
      }
    }
    assert.ok(checked >= 30, `${checked} golden queries`);
  });

  it('never counts more than after parsing, for random documents of aliases, arguments, inline fragments, spreads, strings and comments', () => {
    const name = fc.constantFrom('id', 'name', 'amount', 'on', 'fragment', 'query', 'onX', 'loans');
    const argument = fc.constantFrom('(limit: 1)', '(where: {name: {_eq: "x: { y }"}})', '(ids: [1, -2.5e1, "]"])', '(flag: true) @include(if: $v)', '');
    const leaf = fc.tuple(fc.option(name), name, argument).map(([alias, field, args]) => `${alias ? `${alias}: ` : ''}${field}${args}`);
    const selection: fc.Arbitrary<string> = fc.letrec<{ set: string; item: string }>((tie) => ({
      set: fc.array(tie('item'), { minLength: 1, maxLength: 4 }).map((items) => `{ ${items.join(' ')} }`),
      item: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        leaf,
        fc.tuple(leaf, tie('set')).map(([field, set]) => `${field} ${set}`),
        tie('set').map((set) => `... on loans ${set}`),
        fc.constantFrom('...F', '...G # a comment { x }\n'),
      ),
    })).set;
    fc.assert(
      fc.property(selection, selection, selection, (operation, f, g) => {
        assertLowerBound(`query Q($v: Boolean = true) ${operation} fragment F on loans ${f} fragment G on loans ${g}`, false);
        assertLowerBound(`query Q($v: Boolean = true) ${operation.replace(/\.\.\.[FG]/g, 'id')}`, !operation.includes('... on'));
      }),
      { numRuns: 300, seed: 35 },
    );
  });

  it('refuses an alias bomb as query-too-expensive before parsing it, even one past the parser’s token limit', () => {
    const engine = new GraphEngine(assumeEmptyCatalogue(loadMetadataFile(METADATA_PATH)), { maxDepth: 12, maxRows: null, planCacheSize: 10 });
    const account = '00000000-0000-4000-8000-000000000001';
    for (const aliases of [10_000, 20_000]) {
      const text = `{ loans(limit: 1) { ${Array.from({ length: aliases }, (_, i) => `a${i}: id`).join(' ')} } }`;
      assert.deepEqual(writtenSizeRefusal(text, 50, 1_000)?.extensions, { code: 'query-too-expensive', fields: aliases + 1, limit: 1_000 });
      assert.throws(
        () => engine.prepare({ query: text }, account),
        (error: unknown) => error instanceof RequestError && error.errors[0]?.extensions?.code === 'query-too-expensive' && /selects \d+ fields or more .*MAX_QUERY_FIELDS/.test(error.errors[0]!.message),
      );
    }
    // 20,000 aliases are 60,000 tokens: the parser alone would refuse them as parse-failed.
    assert.throws(() => parse(`{ loans { ${Array.from({ length: 20_000 }, (_, i) => `a${i}: id`).join(' ')} } }`, { maxTokens: 50_000 }), /token/i);
    assert.equal(writtenSizeRefusal('{ loans { id } }', 50, 1_000), null);
    assert.equal(writtenSizeRefusal(`{ loans { ${'id '.repeat(5_000)} } }`, 50, 0), null, '0 = no limit');
    // Root fields first, as checkDocumentSize: 5,000 aliased root fields are a MAX_ROOT_FIELDS refusal.
    const roots = `{ ${Array.from({ length: 5_000 }, (_, i) => `a${i}: loans_aggregate { aggregate { count } }`).join(' ')} }`;
    assert.deepEqual(writtenSizeRefusal(roots, 50, 1_000)?.extensions, { code: 'query-too-expensive', rootFields: 5_000, limit: 50 });
    assert.equal(writtenSizeRefusal(roots, 0, 0), null);
  });
});
