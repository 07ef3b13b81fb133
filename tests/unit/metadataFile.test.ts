import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configFromEnv, metadataFileOf } from '../../app/config.js';
import { ensureMetadataFile, shippedEntriesMissing } from '../../metadata/index.js';
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

  it('says which roles and event types of the shipped default an existing file lacks (a file made from an older default)', () => {
    const newer = join(dir, 'newer.default.yaml');
    writeFileSync(newer, 'collections: {}\nevent_types:\n  loan.created: {}\n  payment.posted: {}\nroles:\n  read_only: {}\n  investor: {}\n');
    const older = join(dir, 'older.yaml');
    writeFileSync(older, 'collections: {}\nevent_types:\n  loan.created: {}\n');
    assert.deepEqual(shippedEntriesMissing(older, newer), [
      { section: 'roles', names: ['read_only', 'investor'] },
      { section: 'event_types', names: ['payment.posted'] },
    ]);
    const told: string[] = [];
    const config = { ...configFromEnv({}), metadataPath: older, shippedMetadataPath: newer, metadataPathIsDefault: true };
    assert.equal(metadataFileOf(config, undefined, undefined, (_path, section, names) => told.push(`${section}: ${names.join(',')}`)), older);
    assert.deepEqual(told, ['roles: read_only,investor', 'event_types: payment.posted']);
    assert.deepEqual(shippedEntriesMissing(newer, newer), [], 'nothing is missing from an up-to-date file');
    // A collection added to the shipped default since (remittances) is named too.
    writeFileSync(newer, 'collections:\n  loans: {}\n  remittances: {}\nroles: {}\n');
    writeFileSync(older, 'collections:\n  loans: {}\nroles: {}\n');
    assert.deepEqual(shippedEntriesMissing(older, newer), [{ section: 'collections', names: ['remittances'] }]);
    writeFileSync(older, 'roles: [not, a, map\n');
    assert.deepEqual(shippedEntriesMissing(older, newer), [], 'a file that is not YAML is left to the metadata loader to report');
  });

  it('says which relationships a shipped event type’s payload names that the file’s own lacks (payment.posted’s allocation)', () => {
    const older = join(dir, 'older-payload.yaml');
    writeFileSync(older, 'collections: {}\nevent_types:\n  payment.posted: { collection: payments, on: insert }\n  loan.created: { collection: loans, on: insert }\n');
    const missing = shippedEntriesMissing(older, METADATA_PATH);
    assert.deepEqual(missing.find((entry) => entry.section === 'event type payload relationships'), { section: 'event type payload relationships', names: ['payment.posted allocations', 'payment.posted loan'] });
    writeFileSync(older, 'collections: {}\nevent_types:\n  payment.posted: { collection: payments, on: insert, payload: [id, loan, { allocations: [amount] }] }\n');
    assert.equal(shippedEntriesMissing(older, METADATA_PATH).find((entry) => entry.section === 'event type payload relationships'), undefined, 'named in either form, nothing is missing');
    assert.deepEqual(shippedEntriesMissing(METADATA_PATH, METADATA_PATH), [], 'the shipped file lacks nothing of itself');
  });

  it('says which shipped computed-field argument ranges and overflow sentences an older copy lacks (its ledger fields then take any day, its overflows come in PostgreSQL’s words)', () => {
    const older = join(dir, 'older-ranges.yaml');
    writeFileSync(
      older,
      'collections:\n  loans:\n    table: loans\n    computed_fields:\n      payoff: { function: loanql_loan_payoff, type: numeric, args: { as_of: date } }\n      per_diem: { function: loanql_loan_per_diem, type: numeric, args: { as_of: { type: date, range: { from: "1900-01-01", to: "2999-12-31" } } } }\n  payments: { table: payments, overflow: { fields: [amount], sentence: "too large" } }\n',
    );
    const missing = new Map(shippedEntriesMissing(older, METADATA_PATH).map(({ section, names }) => [section, names]));
    assert.deepEqual(missing.get('computed field argument ranges'), ['loans.payoff as_of'], 'per_diem has its range; the fields the copy does not declare are not its ranges to miss');
    assert.deepEqual(missing.get('collection overflow sentences'), ['loans']);
  });

  it('the project’s own shipped default has roles and event types to compare with', () => {
    const sections = shippedEntriesMissing(join(dir, 'absent.yaml'), METADATA_PATH);
    assert.deepEqual(sections, [], 'an unreadable file reports nothing');
    const empty = join(dir, 'empty.yaml');
    writeFileSync(empty, 'collections: {}\n');
    const missing = new Map(shippedEntriesMissing(empty, METADATA_PATH).map(({ section, names }) => [section, names]));
    assert.ok(missing.get('roles')?.includes('investor'));
    assert.ok(missing.get('event_types')?.includes('payment.posted'));
  });
});
