import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MetadataError, parseMetadataDocument } from '../../metadata/index.js';

/** The problems `parseMetadataDocument` names for a text, one line each (what `loanql metadata check` prints). */
function problemsOf(text: string): readonly string[] {
  try {
    parseMetadataDocument(text);
  } catch (error) {
    assert.ok(error instanceof MetadataError, String(error));
    return error.problems;
  }
  assert.fail('the text was accepted');
}

const HEAD = 'version: 1\ntenant_column: account_id\n';
const LOANS = '  loans:\n    table: loans\n    primary_key: id\n';

describe('Metadata: a file the JSON Schema refuses is described by place and by what was expected', () => {
  for (const [what, text, problems] of [
    ['collections written as a list', `${HEAD}collections:\n  - loans\n`, ['collections: expected a mapping (name: value entries), found a list']],
    ['collections written as a number', `${HEAD}collections: 5\n`, ['collections: expected a mapping (name: value entries), found the number 5']],
    ['a collection written as text', `${HEAD}collections:\n  loans: everything\n`, ['collection loans: expected a mapping (name: value entries), found text "everything"']],
    ['a collection\'s fields written as a list', `${HEAD}collections:\n${LOANS}    fields: [id, name]\n`, ['collection loans, fields: expected a mapping (name: value entries), found a list']],
    ['a version other than 1', `version: 2\ntenant_column: account_id\ncollections:\n${LOANS}    fields: {id: uuid}\n`, ['version: expected 1, found the number 2']],
    ['an unknown key of a collection', `${HEAD}collections:\n${LOANS}    colour: red\n    fields: {id: uuid}\n`, ['collection loans: must NOT have additional properties: unknown key "colour"']],
    ['a whole file that is a list', '- version: 1\n', ['metadata: expected a mapping (name: value entries), found a list']],
    ['a whole file that is a sentence', 'just some text\n', ['metadata: expected a mapping (name: value entries), found text "just some text"']],
    ['event types written as a list', `${HEAD}collections:\n${LOANS}    fields: {id: uuid}\nevent_types: [loan.created]\n`, ['event_types: expected a mapping (name: value entries), found a list']],
  ] as const) {
    it(what, () => {
      const found = problemsOf(text);
      assert.deepEqual(found, problems);
      for (const problem of found) assert.doesNotMatch(problem, /undefined/);
    });
  }
});
