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

describe('Metadata: a file the JSON Schema refuses is described by place (keys and line) and by what was expected', () => {
  for (const [what, text, problems] of [
    ['collections written as a list', `${HEAD}collections:\n  - loans\n`, ['collections: expected a mapping (name: value entries), found a list (line 4)']],
    ['collections written as a number', `${HEAD}collections: 5\n`, ['collections: expected a mapping (name: value entries), found the number 5 (line 3)']],
    ['a collection written as text', `${HEAD}collections:\n  loans: everything\n`, ['collection loans: expected a mapping (name: value entries), found text "everything" (line 4)']],
    ['a collection\'s fields written as a list', `${HEAD}collections:\n${LOANS}    fields: [id, name]\n`, ['collection loans, fields: expected a mapping (name: value entries), found a list (line 7)']],
    ['a version other than 1', `version: 2\ntenant_column: account_id\ncollections:\n${LOANS}    fields: {id: uuid}\n`, ['version: expected 1, found the number 2 (line 1)']],
    ['an unknown key of a collection', `${HEAD}collections:\n${LOANS}    colour: red\n    fields: {id: uuid}\n`, ['collection loans: must NOT have additional properties: unknown key "colour" (line 7)']],
    ['a whole file that is a list', '- version: 1\n', ['metadata: expected a mapping (name: value entries), found a list (line 1)']],
    ['a whole file that is a sentence', 'just some text\n', ['metadata: expected a mapping (name: value entries), found text "just some text" (line 1)']],
    // The line of the field's value: in a long file, where to look (session 39: only the keys were named).
    ['a field of a type that does not exist, deep in the file', `${HEAD}collections:\n${LOANS}    fields:\n      id: uuid\n      name: text\n      amount: money\n`, ['collection loans, field amount: type "money" is not one of uuid, text, numeric, integer, boolean, date, timestamptz, jsonb, json, bigint, smallint, float8, real, citext, timestamp, time, or an array of one but json and jsonb (text[]) (line 10)']],
    // A role's own keys (rate_limit, variables) are not collections: before, "role r1, collection per_second".
    ['a role\'s rate limit out of range', `${HEAD}collections:\n${LOANS}    fields: {id: uuid}\nroles:\n  r1:\n    rate_limit: { per_second: 0.000001 }\n    collections: { loans: { select: { columns: '*' } } }\n`, ['role r1, rate_limit, per_second: must be >= 0.00001 (line 10)']],
    ['a role\'s variable of a type that does not exist', `${HEAD}collections:\n${LOANS}    fields: {id: uuid}\nroles:\n  r1:\n    variables: { person_id: money }\n    collections: { loans: { select: { columns: '*' } } }\n`, ['role r1, variables, person_id: expected one of "uuid", "text", "numeric", "integer", "boolean", "date", "timestamptz", "jsonb", "json", "bigint", "smallint", "float8", "real", "citext", "timestamp", "time", found text "money" (line 10)']],
    ['a role\'s collection written as text', `${HEAD}collections:\n${LOANS}    fields: {id: uuid}\nroles:\n  r1:\n    collections: { loans: everything }\n`, ['role r1, collection loans: expected a mapping (name: value entries), found text "everything" (line 10)']],
    ['event types written as a list', `${HEAD}collections:\n${LOANS}    fields: {id: uuid}\nevent_types: [loan.created]\n`, ['event_types: expected a mapping (name: value entries), found a list (line 8)']],
  ] as const) {
    it(what, () => {
      const found = problemsOf(text);
      assert.deepEqual(found, problems);
      for (const problem of found) assert.doesNotMatch(problem, /undefined/);
    });
  }
});
