import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fixedViewDocument } from '../../app/fixedView.js';
import { assumeEmptyCatalogue, loadMetadataFile, MetadataError, parseMetadata, parseMetadataDocument, resolveMetadata, validateMetadataDocument, withSelectFilters, type Metadata } from '../../metadata/index.js';
import { literalProblem } from '../../metadata/filterLiterals.js';
import { readFileSync } from 'node:fs';
import { METADATA_PATH } from '../support/http.js';

/** Issue 27: the metadata in typed stages — parsed, resolved, checked — and the facts each adds. */
describe('Metadata: stages', () => {
  const resolved = loadMetadataFile(METADATA_PATH);

  it('resolving adds no catalogue fact; assuming an empty catalogue states them, empty, on every view', () => {
    assert.equal('notNullColumns' in resolved, false);
    const checked = assumeEmptyCatalogue(resolved);
    assert.equal(checked.roles.get('admin')!.metadata, checked, "admin's view is the metadata itself");
    for (const view of [checked, ...[...checked.roles.values()].map((role) => role.metadata)]) {
      assert.equal(view.notNullColumns.size, 0);
      assert.equal(view.indexConstants.size, 0);
      assert.equal(view.fieldValues.size, 0);
      assert.equal(view.foreignKeyRelationships.size, 0);
    }
  });

  it('the permissions stage records, per view, the relationships that reach only rows the view lets through', () => {
    const admin = resolved.collections;
    for (const collection of admin.values()) assert.deepEqual([...collection.relationshipsOnlyToVisibleRows].sort(), [...collection.relationships.keys()].sort(), `admin ${collection.name}`);
    const investor = resolved.roles.get('investor')!.metadata.collections;
    // Back to the parent: a payment's filter is {loan: <the loans' filter>}.
    assert.ok(investor.get('loans')!.relationshipsOnlyToVisibleRows.has('payments'));
    assert.ok(investor.get('loans')!.relationshipsOnlyToVisibleRows.has('schedules'));
    // Through an object relationship to the target's primary key: the payment's filter went through its loan.
    assert.ok(investor.get('payments')!.relationshipsOnlyToVisibleRows.has('loan'));
    // A loan's funding sources carry a filter of their own (the person's), which the path does not prove.
    assert.equal(investor.get('loans')!.relationshipsOnlyToVisibleRows.has('funding_sources'), false);
  });

  it('a view given other select filters works the facts out again', () => {
    const checked = assumeEmptyCatalogue(resolved);
    const investor = checked.roles.get('investor')!.metadata;
    const filters = new Map([...investor.collections].map(([name, collection]) => [name, collection.selectFilter] as const));
    const restricted: Metadata = withSelectFilters(checked, filters);
    // The admin view with the investor's filters answers as the investor's own view for every relationship the investor has.
    for (const [name, collection] of investor.collections)
      for (const relationship of collection.relationships.keys())
        assert.equal(restricted.collections.get(name)!.relationshipsOnlyToVisibleRows.has(relationship), collection.relationshipsOnlyToVisibleRows.has(relationship), `${name}.${relationship}`);
    assert.equal(restricted.collections.get('loans')!.relationshipsOnlyToVisibleRows.has('funding_sources'), false);
    assert.ok(restricted.collections.get('loans')!.relationshipsOnlyToVisibleRows.has('payments'));
  });

  it('a fixed view is data, checked by the same JSON Schema as the file', () => {
    const view = resolveMetadata(validateMetadataDocument(fixedViewDocument({ collections: { people: { table: 'people', primary_key: 'id', fields: { id: 'uuid' } } } })));
    assert.deepEqual([...view.collections.keys()], ['loans', 'borrows', 'guarantees', 'people']);
    assert.throws(
      () => validateMetadataDocument(fixedViewDocument({ collections: { people: { table: 'people; DROP TABLE loans', primary_key: 'id', fields: { id: 'uuid' } } } })),
      (error: unknown) => error instanceof MetadataError && error.problems.some((problem) => problem.startsWith('collection people, table')),
    );
  });
});

describe('Metadata: a role filter\'s literals checked against the field\'s type', () => {
  it('takes what PostgreSQL reads as the type, and names what it does not', () => {
    const ok: [Parameters<typeof literalProblem>[0], unknown][] = [
      ['uuid', '0b7e7c8a-3f55-4a8e-9f6d-2b8f0e3a9c11'], ['integer', 12], ['integer', '-7'], ['smallint', 32767], ['bigint', '9223372036854775807'],
      ['numeric', '1000.50'], ['numeric', 2.5], ['float8', '1e3'], ['boolean', true], ['date', '2024-02-29'], ['date', '2000-02-29'], ['timestamptz', '2026-01-01T10:00:00Z'],
      ['timestamp', '2026-01-01 10:00:00'], ['time', '23:59:59.5'], ['text', 'servicing'], ['text', 123], ['jsonb', { any: 'thing' }],
    ];
    for (const [type, value] of ok) assert.equal(literalProblem(type, value), null, `${type} ${JSON.stringify(value)}`);
    const refused: [Parameters<typeof literalProblem>[0], unknown, string][] = [
      ['uuid', 'not-a-uuid', '"not-a-uuid" is not a uuid'], ['integer', 2 ** 31, '2147483648 is not an integer'], ['smallint', '40000', '"40000" is not a smallint'],
      ['integer', 1.5, '1.5 is not an integer'], ['numeric', 'ten', '"ten" is not a numeric'], ['boolean', 'yes', '"yes" is not a boolean'],
      ['date', '2026-02-30', '"2026-02-30" is not a date'], ['date', '1900-02-29', '"1900-02-29" is not a date'], ['date', '2026-13-01', '"2026-13-01" is not a date'], ['timestamptz', 'soon', '"soon" is not a timestamptz'], ['time', '24:00', '"24:00" is not a time'],
    ];
    for (const [type, value, problem] of refused) assert.equal(literalProblem(type, value), problem);
  });
});

describe('Metadata: what a malformed file is told', () => {
  const problemsOf = (text: string): string[] => {
    try {
      parseMetadataDocument(text, 'lender.yaml');
    } catch (error) {
      if (error instanceof MetadataError) return [...error.problems];
      throw error;
    }
    return [];
  };
  const collection = (fields: string) => `version: 1\ntenant_column: account_id\ncollections:\n  notes:\n    table: notes\n    primary_key: id\n    fields:\n${fields}`;

  it('names a field whose name is not valid, once', () => {
    assert.deepEqual(problemsOf(collection('      id: uuid\n      my-label: { type: text, column: label }\n')), [
      'collection notes, fields: "my-label" is not a valid name (a letter, then letters, digits or _; at most 63 characters) (line 9)',
    ]);
  });

  it('shows the line of a duplicate key, without the library\'s dangling colon', () => {
    const [problem, ...rest] = problemsOf(collection('      id: uuid\n      label: text\n      label: text\n'));
    assert.deepEqual(rest, []);
    assert.match(problem!, /^lender\.yaml is not valid YAML at line 10: Map keys must be unique.* \(the line: label: text\)$/);
  });
});

describe('Metadata: a problem found after the schema says its line', () => {
  const shipped = readFileSync(METADATA_PATH, 'utf8');
  const lineOf = (text: string, line: string): number => text.split('\n').indexOf(line) + 1;
  const problemsOf = (text: string): readonly string[] => {
    try {
      parseMetadata(text);
    } catch (error) {
      if (error instanceof MetadataError) return error.problems;
      throw error;
    }
    assert.fail('the metadata was accepted');
  };

  it('a relationship to an unknown collection, a field clashing with one: the line of the relationship, of the collection', () => {
    const anchor = '      borrows: { array: borrows, on: { id: loan_id } }';
    const edited = shipped.replace(`${anchor}\n`, `${anchor}\n      lender: { object: lenders, on: { product_id: id } }\n`);
    // Before session 40: the same words, and no line (a schema problem said its line since session 39).
    assert.deepEqual(problemsOf(edited), [`collection loans, relationship lender: target collection lenders does not exist (line ${lineOf(edited, '      lender: { object: lenders, on: { product_id: id } }')})`]);
  });

  it("a role's filter naming an unknown field, a role's unknown collection: the line of the filter, of the collection", () => {
    const filter = "        select: { columns: '*', filter: { person_id: { _eq: key.person_id } }, allow_aggregations: true }";
    assert.ok(shipped.includes(filter));
    const edited = shipped
      .replace(filter, filter.replace('person_id: {', 'persn_id: {'))
      .replace('  investor:\n    variables: { person_id: uuid }\n    collections:\n', '  investor:\n    variables: { person_id: uuid }\n    collections:\n      lenders:\n        select: { columns: "*" }\n');
    assert.deepEqual(problemsOf(edited), [
      `role investor, collection lenders: not a collection of the metadata (line ${lineOf(edited, '      lenders:')})`,
      `role investor, collection funding_sources, select filter, persn_id: not a field or relationship of funding_sources (line ${lineOf(edited, filter.replace('person_id: {', 'persn_id: {'))})`,
    ]);
  });
});
