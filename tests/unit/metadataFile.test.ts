import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configFromEnv, metadataFileOf } from '../../api/config.js';
import { ensureMetadataFile } from '../../metadata/index.js';
import { METADATA_PATH } from '../support/http.js';

/**
 * Issue 12: the metadata an admin edits (`metadata/loanql.yaml`) is theirs — git-ignored, made
 * from the shipped `metadata/loanql.default.yaml` when missing — and the tests read the shipped
 * file only.
 */
describe('the metadata file an admin edits', () => {
  const dir = mkdtempSync(join(tmpdir(), 'loanql-metadata-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const shipped = join(dir, 'loanql.default.yaml');
  writeFileSync(shipped, 'shipped: true\n');

  it('is created from the shipped default when missing, and left alone when present', () => {
    const mine = join(dir, 'loanql.yaml');
    assert.equal(ensureMetadataFile(mine, shipped), true);
    assert.equal(readFileSync(mine, 'utf8'), 'shipped: true\n');
    writeFileSync(mine, 'edited: true\n');
    assert.equal(ensureMetadataFile(mine, shipped), false);
    assert.equal(readFileSync(mine, 'utf8'), 'edited: true\n', 'an edit is never overwritten');
  });

  it('is the project’s metadata/loanql.yaml by default, made from metadata/loanql.default.yaml; METADATA_PATH is used as given', () => {
    const byDefault = configFromEnv({});
    assert.match(byDefault.metadataPath, /metadata[/\\]loanql\.yaml$/);
    assert.equal(byDefault.shippedMetadataPath, METADATA_PATH, 'the tests read the shipped file');
    assert.equal(byDefault.metadataPathIsDefault, true);
    const given = configFromEnv({ METADATA_PATH: join(dir, 'absent.yaml') });
    assert.equal(given.metadataPathIsDefault, false);
    assert.throws(() => readFileSync(metadataFileOf(given)), /ENOENT/, 'a METADATA_PATH that does not exist is not invented');
    const created: string[] = [];
    const own = { ...given, metadataPath: join(dir, 'own.yaml'), shippedMetadataPath: shipped, metadataPathIsDefault: true };
    assert.equal(metadataFileOf(own, (path) => created.push(path)), own.metadataPath);
    assert.deepEqual(created, [own.metadataPath]);
  });

  it('falls back to the shipped file, saying why, when the file cannot be created', () => {
    const unwritable = { ...configFromEnv({}), metadataPath: join(dir, 'no-such-folder', 'loanql.yaml'), shippedMetadataPath: shipped, metadataPathIsDefault: true };
    const problems: string[] = [];
    assert.equal(metadataFileOf(unwritable, undefined, (path, reason) => problems.push(`${path}: ${reason}`)), shipped);
    assert.equal(problems.length, 1);
    assert.match(problems[0]!, /no-such-folder.*ENOENT/);
  });
});
