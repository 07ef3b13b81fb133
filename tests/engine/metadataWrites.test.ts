import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { checkMetadataAgainstDatabase, MetadataError, parseMetadata } from '../../metadata/index.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';

/**
 * Issue 14: the metadata says what is writable, and `loanql metadata check` / the reload refuse
 * a writable field that cannot be written — naming collection, operation and field.
 */
const ORIGINAL = readFileSync(fileURLToPath(new URL('../../metadata/loanql.default.yaml', import.meta.url)), 'utf8');
let database: TestDatabase;

before(async () => {
  database = await openTestDatabase();
  // A generated column, to show one is refused as writable.
  await database.db.query(`ALTER TABLE tasks ADD COLUMN name_length integer GENERATED ALWAYS AS (length(name)) STORED`);
});
after(() => database?.close());

/** The shipped file with the `tasks` collection's insert columns replaced. */
const withTaskInsert = (columns: string, extraField = ''): string => {
  const anchor = '    insert:\n      columns: [loan_id, name, status, date_due, assignee_id]\n';
  assert.ok(ORIGINAL.includes(anchor));
  let text = ORIGINAL.replace(anchor, `    insert:\n      columns: [${columns}]\n`);
  if (extraField) text = text.replace('      date_due: date\n      created_at: timestamptz\n', `      date_due: date\n      created_at: timestamptz\n${extraField}`);
  return text;
};

async function problemsOf(text: string): Promise<string[]> {
  try {
    await checkMetadataAgainstDatabase(parseMetadata(text), database.db);
    return [];
  } catch (error) {
    if (error instanceof MetadataError) return [...error.problems];
    throw error;
  }
}

describe('Metadata: writable fields', () => {
  it('accepts the shipped file, and reads the constraints and numeric precision writes need', async () => {
    const { catalogue } = await checkMetadataAgainstDatabase(parseMetadata(ORIGINAL), database.db);
    assert.deepEqual(catalogue.numericLimits.get('payments.amount'), { precision: 14, scale: 2 });
    assert.deepEqual(catalogue.constraints.get('borrows')?.get('borrows_account_id_loan_id_person_id_key')?.columns, ['account_id', 'loan_id', 'person_id']);
    assert.equal(catalogue.constraints.get('payments')?.get('payments_amount_positive')?.kind, 'c');
  });

  const REFUSED: readonly { name: string; text: string; problem: RegExp }[] = [
    { name: 'the primary key among update columns', text: ORIGINAL.replace('columns: [name, status, custom_fields]', 'columns: [id, name, status, custom_fields]'), problem: /collection loans, update columns, field id: the primary key identifies the row/ },
    { name: 'the tenant column', text: withTaskInsert('name, account_id', '      account_id: uuid\n'), problem: /collection tasks, insert columns, field account_id: the tenant column/ },
    { name: 'a custom-field path', text: ORIGINAL.replace('columns: [name, status, custom_fields]', 'columns: [name, status, loan_officer]'), problem: /collection loans, update columns, field loan_officer: a custom field is a key inside custom_fields/ },
    { name: 'an unknown field', text: withTaskInsert('name, nope'), problem: /collection tasks, insert columns, field nope: not a field/ },
    { name: 'a generated column', text: withTaskInsert('name, name_length', '      name_length: integer\n'), problem: /collection tasks, insert, field name_length: column tasks.name_length is generated/ },
    {
      name: 'an on_conflict constraint that is not a unique constraint of the table',
      text: ORIGINAL.replace('on_conflict_constraints: [borrows_account_id_loan_id_person_id_key]', 'on_conflict_constraints: [payments_amount_positive]'),
      problem: /collection borrows, insert on_conflict_constraints: payments_amount_positive is not a unique constraint of table borrows/,
    },
    {
      // Before session 36 such an index was offered (and declarable) like a constraint, and every upsert naming it was a 500.
      name: 'an on_conflict constraint that is a unique index backing no constraint',
      text: ORIGINAL.replace('    insert:\n      columns: [name, email, phone, status, entity_type]\n', '    insert:\n      columns: [name, email, phone, status, entity_type]\n      on_conflict_constraints: [people_individual_identity]\n'),
      problem: /collection people, insert on_conflict_constraints: people_individual_identity is a unique index of table people, not a constraint/,
    },
    { name: 'a preset on the primary key', text: ORIGINAL.replace("set: { updated_at: now }", 'set: { id: "x" }'), problem: /collection loans, update set, field id: the primary key/ },
    { name: 'an unknown key under insert (JSON Schema)', text: ORIGINAL.replace('    insert:\n', '    insert:\n      check: {}\n'), problem: /collection people, insert: must NOT have additional properties/ },
  ];
  it('accepts the primary key among insert columns: a request may give a new row its key (Hasura)', async () => {
    assert.deepEqual(await problemsOf(withTaskInsert('id, loan_id, name, status, date_due')), []);
  });
  for (const refused of REFUSED) {
    it(`refuses ${refused.name}, naming collection and field`, async () => {
      const problems = await problemsOf(refused.text);
      assert.ok(problems.some((problem) => refused.problem.test(problem)), problems.join('\n'));
    });
  }
});

describe('Metadata: primary keys against the catalogue (issue 30)', () => {
  it('refuses a primary_key that no primary key or unique constraint of the table covers', async () => {
    const text = ORIGINAL.replace(/(  tasks:\n    table: tasks\n    primary_key: )id\n/, '$1created_at\n');
    assert.notEqual(text, ORIGINAL);
    const problems = await problemsOf(text);
    assert.ok(problems.some((problem) => /collection tasks: primary_key created_at does not identify a row/.test(problem)), problems.join('\n'));
  });
  it('accepts a composite primary_key written as a list', async () => {
    assert.deepEqual(await problemsOf(ORIGINAL.replace(/(  tasks:\n    table: tasks\n    primary_key: )id\n/, '$1[id, loan_id]\n')), []);
  });
});
