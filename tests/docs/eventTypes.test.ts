import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadMetadataFile } from '../../metadata/index.js';
import { METADATA_PATH } from '../support/http.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The text of a Markdown file from the line that starts with `start` to the next line that starts with `end`. */
function passage(file: string, start: string, end: string): string {
  const lines = readFileSync(`${ROOT}${file}`, 'utf8').split('\n');
  const from = lines.findIndex((line) => line.startsWith(start));
  assert.ok(from >= 0, `${file} has a line starting "${start}"`);
  const to = lines.findIndex((line, index) => index > from && line.startsWith(end));
  return lines.slice(from, to < 0 ? undefined : to).join('\n');
}

/** Every event type the shipped metadata defines is listed where the documentation lists them. */
describe('docs: the shipped event types', () => {
  const shipped = [...loadMetadataFile(METADATA_PATH).eventTypes.keys()];

  it('the shipped metadata has event types to list', () => {
    assert.ok(shipped.includes('payment.posted') && shipped.includes('distribution.created'), shipped.join(', '));
  });

  for (const [file, start, end] of [
    ['README.md', '**Events.**', '**Capture.**'],
    ['docs/interface.md', '## Events', '## '],
  ] as const) {
    it(`are each named in ${file} (${start})`, () => {
      const text = passage(file, start, end);
      assert.deepEqual(shipped.filter((type) => !text.includes(`\`${type}\``)), [], `event types ${file} does not name`);
    });
  }
});
