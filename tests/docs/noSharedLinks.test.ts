import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * A clone stands alone: the specification and interface documents that sit beside the
 * repository on the development machine (`../shared/`) are not in a clone, so no tracked file
 * may point there; what a user needs from them is written in `docs/`. Tests are left out (this
 * file names the path it looks for).
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('docs: the repository stands alone', () => {
  it('no tracked file outside tests/ refers to ../shared/', () => {
    const files = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' })
      .split('\0')
      .filter((file) => file !== '' && !file.startsWith('tests/'));
    assert.ok(files.includes('README.md'), 'git ls-files lists the repository');
    const referring = files.filter((file) => {
      try {
        return readFileSync(join(ROOT, file), 'utf8').includes('../shared/');
      } catch {
        return false; // deleted in the work tree but still tracked
      }
    });
    assert.deepEqual(referring, [], 'write what they need into docs/ and link that instead');
  });
});
