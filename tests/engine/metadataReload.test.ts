import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkKeyRole, createApiKey, deactivateApiKey } from '../../app/apiKeys.js';
import { buildEngine, EngineHolder, type ReloadOutcome } from '../../app/engineHolder.js';
import { createDefaultProduct } from '../../app/products.js';
import { RequestError, type EngineOptions } from '../../engine/index.js';
import { copyMigratedDataDir, openTestDatabase, testDatabaseKind, type TestDatabase } from '../support/testDatabase.js';
import { assertBuilt, freePort, runCli, startService, type RunningService } from '../support/processes.js';

/**
 * SPEC §1: "Admins expose a new field by editing the metadata file". The running service
 * picks an edit up without a restart (file watch, or SIGHUP → `EngineHolder.reload()`); an
 * invalid edit is refused with problems that name the collection and field, and the previous
 * schema keeps answering. `loanql metadata check` says the same before anyone reloads.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ORIGINAL = readFileSync(join(ROOT, 'metadata/loanql.default.yaml'), 'utf8');
const OPTIONS: EngineOptions = { maxDepth: 12, maxRows: null, planCacheSize: 50 };

const CUSTOM_FIELD_ANCHOR = '      property_type: { type: text, custom_field: property_type }\n';
const RELATIONSHIP_ANCHOR = '      funding_sources: { array: funding_sources, on: { id: loan_id } }\n';

/** The file with one more line after an anchor line of the `loans` collection. */
function withLine(text: string, anchor: string, line: string): string {
  assert.ok(text.includes(anchor), `metadata/loanql.default.yaml no longer has the line ${JSON.stringify(anchor)}`);
  return text.replace(anchor, `${anchor}${line}\n`);
}

/** The edit under test: a product custom field (a key of loans.custom_fields) exposed as numeric. */
const WITH_FEE = withLine(ORIGINAL, CUSTOM_FIELD_ANCHOR, '      origination_fee: { type: numeric, custom_field: origination_fee }');

/** The line of the line `withLine` adds after `anchor`: where a problem with it must say it is (session 40: stages 2 and 3 say the line too). */
const lineAfter = (text: string, anchor: string): number => text.slice(0, text.indexOf(anchor) + anchor.length).split('\n').length;

/** Invalid edits, each made on top of WITH_FEE, and what the refusal must say. */
const INVALID_EDITS: readonly { name: string; text: string; problem: RegExp }[] = [
  {
    name: 'a YAML syntax error',
    text: withLine(WITH_FEE, CUSTOM_FIELD_ANCHOR, '      broken: { type: numeric, custom_field: broken'),
    problem: /not valid YAML at line \d+/,
  },
  {
    name: 'an unknown type',
    text: withLine(WITH_FEE, CUSTOM_FIELD_ANCHOR, '      ltv: { type: percentage, custom_field: ltv }'),
    problem: /collection loans, field ltv\b/,
  },
  {
    name: 'a field whose column does not exist',
    text: withLine(WITH_FEE, CUSTOM_FIELD_ANCHOR, '      broker_fee: numeric'),
    problem: new RegExp(`collection loans, field broker_fee: column loans\\.broker_fee does not exist \\(line ${lineAfter(WITH_FEE, CUSTOM_FIELD_ANCHOR)}\\)`),
  },
  {
    name: 'a relationship to a missing collection',
    text: withLine(WITH_FEE, RELATIONSHIP_ANCHOR, '      lender: { object: lenders, on: { product_id: id } }'),
    problem: new RegExp(`collection loans, relationship lender: target collection lenders does not exist \\(line ${lineAfter(WITH_FEE, RELATIONSHIP_ANCHOR)}\\)`),
  },
  {
    // graphql-js refused the schema before, in its words alone, naming no collection (the CLI exited 1).
    name: 'a collection named as a GraphQL type another collection generates',
    text: WITH_FEE.replace('\nevent_types:\n', '\n  loans_bool_exp:\n    table: loans\n    primary_key: id\n    fields: { id: uuid }\n\nevent_types:\n'),
    problem: /collection loans_bool_exp: its GraphQL type loans_bool_exp is also a type that collection loans generates; rename the collection/,
  },
];

const FEE_QUERY = '{ loans(where: {origination_fee: {_gte: 1000}}, order_by: {origination_fee: desc}) { name origination_fee } }';
const FEE_ROWS = [{ name: 'Fee Loan', origination_fee: 1250.5 }];

let database: TestDatabase;
let accountId: string;
let workDir: string;

before(async () => {
  database = await openTestDatabase();
  const { rows } = await database.db.query<{ id: string }>(`INSERT INTO accounts (slug, name) VALUES ($1, 'reload') RETURNING id`, [`reload-${process.pid}`]);
  accountId = rows[0]!.id;
  // The keys the loans hold are fields of the account's product (the database checks them, 0063).
  await createDefaultProduct(database.db, accountId, [
    { name: 'Origination Fee', type: 'currency' },
    { name: 'Loan Officer', type: 'text' },
  ]);
  await database.db.query(
    `INSERT INTO loans (account_id, name, amount, custom_fields) VALUES
       ($1, 'Fee Loan', 100000, '{"origination_fee": 1250.50, "loan_officer": "Dana Whitfield"}'),
       ($1, 'Small Fee Loan', 5000, '{"origination_fee": 99.99}'),
       ($1, 'No Fee Loan', 7000, '{}')`,
    [accountId],
  );
  workDir = mkdtempSync(join(tmpdir(), 'loanql-reload-'));
});

after(async () => {
  await database?.close();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

/** A fresh copy of the metadata file in the work directory. */
function metadataCopy(name: string, text = ORIGINAL): string {
  const path = join(workDir, name);
  writeFileSync(path, text);
  return path;
}

/** The data of a query, or the messages of the errors the engine refused it with. */
async function ask(holder: EngineHolder, query: string): Promise<{ data?: unknown; errors?: string[] }> {
  try {
    return { data: (JSON.parse(await holder.engine.execute(database.db, { query }, accountId)) as { data: unknown }).data };
  } catch (error) {
    if (error instanceof RequestError) return { errors: error.errors.map((e) => e.message) };
    throw error;
  }
}

async function assertFeeQueryable(holder: EngineHolder, what: string): Promise<void> {
  assert.deepEqual(await ask(holder, FEE_QUERY), { data: { loans: FEE_ROWS } }, what);
}

async function assertFeeUnknown(holder: EngineHolder, what: string): Promise<void> {
  const answer = await ask(holder, FEE_QUERY);
  assert.ok(answer.errors?.some((message) => message.includes('origination_fee')), `${what}: ${JSON.stringify(answer)}`);
}

/** Polls until `check` passes (or the time is up, then its last failure is thrown). */
async function eventually(check: () => Promise<void>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

async function holderFor(path: string, outcomes: ReloadOutcome[] = []): Promise<EngineHolder> {
  return new EngineHolder(await buildEngine(path, database.db, OPTIONS), path, database.db, OPTIONS, (outcome) => outcomes.push(outcome));
}

describe(`Metadata hot reload: engine level (${testDatabaseKind})`, () => {
  it('reload() (what SIGHUP calls) makes a newly exposed custom field queryable, without a restart', async () => {
    const path = metadataCopy('reload.yaml');
    const holder = await holderFor(path);
    await assertFeeUnknown(holder, 'before the edit');
    writeFileSync(path, WITH_FEE);
    await assertFeeUnknown(holder, 'edited but not reloaded (no watch on this holder)');
    assert.deepEqual(await holder.reload(), { ok: true });
    await assertFeeQueryable(holder, 'after reload()');
    // The new field works like any other: filter, order, aggregate, exact numbers.
    const answer = await ask(holder, '{ loans_aggregate(where: {origination_fee: {_is_null: false}}) { aggregate { count sum { origination_fee } max { origination_fee } } } }');
    assert.deepEqual(answer, { data: { loans_aggregate: { aggregate: { count: 2, sum: { origination_fee: 1350.49 }, max: { origination_fee: 1250.5 } } } } });
    holder.close();
  });

  it('the file watch picks up an edit written in place', async () => {
    const path = metadataCopy('watch-in-place.yaml');
    const outcomes: ReloadOutcome[] = [];
    const holder = await holderFor(path, outcomes);
    holder.watch();
    try {
      await assertFeeUnknown(holder, 'before the edit');
      writeFileSync(path, WITH_FEE);
      await eventually(() => assertFeeQueryable(holder, 'after the edit, through the watch'));
      assert.ok(outcomes.length >= 1 && outcomes.every((o) => o.ok), JSON.stringify(outcomes));
    } finally {
      holder.close();
    }
  });

  it('the file watch follows an editor that replaces the file (write elsewhere, rename over it), edit after edit', async () => {
    const path = metadataCopy('watch-rename.yaml');
    const holder = await holderFor(path);
    holder.watch();
    try {
      const replace = (text: string) => {
        const temporary = `${path}.tmp`;
        writeFileSync(temporary, text);
        renameSync(temporary, path);
      };
      replace(WITH_FEE);
      await eventually(() => assertFeeQueryable(holder, 'after the first replacement'));
      replace(ORIGINAL);
      await eventually(() => assertFeeUnknown(holder, 'after the second replacement (the field removed again)'));
      replace(WITH_FEE);
      await eventually(() => assertFeeQueryable(holder, 'after the third replacement'));
    } finally {
      holder.close();
    }
  });

  it('a file deleted, then written anew (a deploy script, `git checkout`), is read once it is back, without another edit', async () => {
    const path = metadataCopy('watch-deleted.yaml');
    const outcomes: ReloadOutcome[] = [];
    const holder = await holderFor(path, outcomes);
    holder.watch();
    try {
      rmSync(path);
      await eventually(async () => assert.ok(outcomes.some((o) => !o.ok && o.problems?.some((p) => p.startsWith(`cannot read ${path}`))), JSON.stringify(outcomes)));
      await assertFeeUnknown(holder, 'the previous schema keeps serving while the file is gone');
      writeFileSync(path, WITH_FEE);
      await eventually(() => assertFeeQueryable(holder, 'the file written anew is served'));
      assert.ok(outcomes.at(-1)?.ok, JSON.stringify(outcomes.at(-1)));
    } finally {
      holder.close();
    }
  });

  it('a replacement that lands while a reload is finishing is not lost (the file is compared with what the reload read)', async () => {
    const path = metadataCopy('watch-during-reload.yaml');
    const replace = (text: string) => {
      writeFileSync(`${path}.tmp`, text);
      renameSync(`${path}.tmp`, path);
    };
    let replacedDuringReload = false;
    const holder = new EngineHolder(await buildEngine(path, database.db, OPTIONS), path, database.db, OPTIONS, () => {
      // The first reload's outcome is being reported: the file is replaced again at that moment.
      if (replacedDuringReload) return;
      replacedDuringReload = true;
      replace(ORIGINAL);
    });
    holder.watch();
    try {
      replace(WITH_FEE);
      await eventually(async () => assert.ok(replacedDuringReload, 'the first reload ran'));
      await eventually(() => assertFeeUnknown(holder, 'the replacement made while the first reload finished is served'));
    } finally {
      holder.close();
    }
  });

  it('a reload that drops a role active keys carry is served, with a warning naming the role and the keys (they are refused from then on)', async () => {
    const created = await createApiKey(database.db, accountId, 'reader', { role: 'read_only', variables: new Map() });
    try {
      const path = metadataCopy('without-read-only.yaml', WITH_FEE);
      const outcomes: ReloadOutcome[] = [];
      const holder = await holderFor(path, outcomes);
      assert.ok(ORIGINAL.includes('\n  read_only:\n'));
      writeFileSync(path, WITH_FEE.replace('\n  read_only:\n', '\n  readers:\n'));
      const outcome = await holder.reload();
      assert.equal(outcome.ok, true, JSON.stringify(outcome));
      assert.deepEqual(outcome.warnings, [
        `role read_only: 1 active API key (${created.prefix}) carries it, and the metadata has no such role: it is refused (403) until the role is back or the key is revoked`,
      ]);
      assert.deepEqual(outcomes, [outcome], 'the callback (the service logs it) gets the warning');
      await assertFeeQueryable(holder, 'the new metadata serves');
      writeFileSync(path, WITH_FEE);
      assert.deepEqual(await holder.reload(), { ok: true }, 'the role is back: no warning');
      holder.close();
    } finally {
      await deactivateApiKey(database.db, created.prefix);
    }
  });

  it('a reload that changes the variables of a role keys carry is served, with a warning naming the keys that no longer fit (a variable they lack, a value of another type)', async () => {
    const byLabel = (variables: string, filter: string) =>
      WITH_FEE.replace('\nroles:\n', `\nroles:\n  by_label:\n    variables: { ${variables} }\n    collections:\n      loans: { select: { columns: [id, name], filter: { ${filter} } } }\n`);
    const path = metadataCopy('role-variables.yaml', byLabel('label: text', 'name: { _eq: key.label }'));
    const outcomes: ReloadOutcome[] = [];
    const holder = await holderFor(path, outcomes);
    const created = await createApiKey(database.db, accountId, 'labelled', { role: 'by_label', variables: new Map([['label', 'Fee Loan']]) });
    try {
      // The variable's type changed: the key's "Fee Loan" is no uuid (before: loaded with no word, and every request of the key failed with `invalid input syntax for type uuid`).
      writeFileSync(path, byLabel('label: uuid', 'id: { _eq: key.label }'));
      assert.deepEqual(await holder.reload(), {
        ok: true,
        warnings: [`role by_label: 1 active API key (${created.prefix}) carries label "Fee Loan", which the role declares uuid: its requests fail, until the key is replaced (key create) or the role declares label as before`],
      });
      // A variable added that the key lacks (before: loaded with no word, and the key saw no rows).
      writeFileSync(path, byLabel('label: text, branch: integer', 'name: { _eq: key.label }, term: { _eq: key.branch }'));
      assert.deepEqual(await holder.reload(), {
        ok: true,
        warnings: [`role by_label: 1 active API key (${created.prefix}) lacks the variable branch (integer) the role declares: its filters match no rows, until the key is replaced (key create) or the role declares branch as before`],
      });
      writeFileSync(path, byLabel('label: text', 'name: { _eq: key.label }'));
      assert.deepEqual(await holder.reload(), { ok: true }, 'the key fits again: no warning');
      assert.deepEqual(outcomes.map((outcome) => outcome.warnings?.length ?? 0), [1, 1, 0], 'the callback (the service logs it) gets each warning');
    } finally {
      holder.close();
      await deactivateApiKey(database.db, created.prefix);
    }
  });

  it('a reload that removes an event type active webhook endpoints subscribe to is served, with a warning naming them (they receive none of it)', async () => {
    const line = '  payment.reversed: { collection: payments, on: update, when: { set: [date_reversed] } }\n';
    assert.ok(WITH_FEE.includes(line));
    const path = metadataCopy('event-type-removed.yaml', WITH_FEE);
    const holder = await holderFor(path);
    const { rows } = await database.db.query<{ id: string }>(
      `INSERT INTO webhook_endpoints (account_id, url, event_types, secret) VALUES ($1, 'https://hooks.example.com/in?token=s3cret', ARRAY['payment.reversed', 'loan.updated'], 'whsec_test') RETURNING id`,
      [accountId],
    );
    try {
      writeFileSync(path, WITH_FEE.replace(line, ''));
      const outcome = await holder.reload();
      assert.deepEqual(outcome, {
        ok: true,
        warnings: [
          `event type payment.reversed: 1 active webhook endpoint (${rows[0]!.id} of reload-${process.pid}) subscribes to it, and the metadata has no such event type: it receives none until the event type is back or the endpoint is changed`,
        ],
      });
      assert.ok(!JSON.stringify(outcome).includes('s3cret'), 'the URL (which may hold a token) is not in the warning');
      writeFileSync(path, WITH_FEE);
      assert.deepEqual(await holder.reload(), { ok: true }, 'the event type is back: no warning');
    } finally {
      holder.close();
      await database.db.query('DELETE FROM webhook_endpoints WHERE id = $1', [rows[0]!.id]);
    }
  });

  it('a key is made only with variables its role\'s types can hold (before: any text, and every request of the key failed with the database\'s words)', async () => {
    const path = metadataCopy('role-variable-types.yaml', WITH_FEE.replace('\nroles:\n', '\nroles:\n  by_term:\n    variables: { max_term: integer, open: boolean, since: date }\n    collections:\n      loans: { select: { columns: [id, name], filter: { term: { _lte: key.max_term } } } }\n'));
    const roles = (await buildEngine(path, database.db, OPTIONS)).metadata.roles;
    const attempt = (variables: Record<string, string>) => checkKeyRole(database.db, accountId, roles, 'by_term', new Map(Object.entries(variables))).then(() => 'made', (error: Error) => error.message);
    assert.equal(await attempt({ max_term: 'twelve', open: 'true', since: '2026-01-31' }), 'variables: max_term must be an integer');
    assert.equal(await attempt({ max_term: '12', open: 'maybe', since: '2026-01-31' }), 'variables: open must be a boolean (true or false)');
    assert.equal(await attempt({ max_term: '12', open: 'yes', since: '2026-02-30' }), 'variables: since must be a date');
    assert.equal(await attempt({ max_term: '12', open: 'yes', since: '2026-02-28' }), 'made');
  });

  describe('an invalid edit is refused, names what is wrong, and the previous schema keeps answering', () => {
    for (const edit of INVALID_EDITS) {
      it(`${edit.name}, through reload()`, async () => {
        const path = metadataCopy(`invalid-${INVALID_EDITS.indexOf(edit)}.yaml`, WITH_FEE);
        const holder = await holderFor(path);
        const serving = holder.engine;
        writeFileSync(path, edit.text);
        const outcome = await holder.reload();
        assert.equal(outcome.ok, false, JSON.stringify(outcome));
        assert.ok(outcome.problems?.some((problem) => edit.problem.test(problem)), `expected a problem matching ${edit.problem}, got ${JSON.stringify(outcome.problems)}`);
        assert.equal(holder.engine, serving, 'the engine in service is unchanged');
        await assertFeeQueryable(holder, 'the previous schema still answers');
        // Fixing the file makes the next reload succeed.
        writeFileSync(path, WITH_FEE);
        assert.deepEqual(await holder.reload(), { ok: true });
        holder.close();
      });
    }

    it('an unknown type is named with the allowed types (not only "must be equal to one of the allowed values")', async () => {
      const path = metadataCopy('invalid-type-message.yaml', WITH_FEE);
      const holder = await holderFor(path);
      writeFileSync(path, INVALID_EDITS[1]!.text);
      const outcome = await holder.reload();
      holder.close();
      assert.equal(outcome.ok, false);
      const named = outcome.problems?.filter((problem) => /collection loans, field ltv\b/.test(problem) && problem.includes('percentage') && /uuid, text, numeric/.test(problem));
      assert.ok(named?.length, `a problem naming "percentage" and the allowed types, got:\n  ${outcome.problems?.join('\n  ')}`);
    });

    it('a typo in a table name is refused as that one problem, not first as each of its computed fields\' functions', async () => {
      const path = metadataCopy('invalid-table-name.yaml', WITH_FEE);
      const holder = await holderFor(path);
      assert.ok(WITH_FEE.includes('\n  loans:\n    table: loans\n'));
      writeFileSync(path, WITH_FEE.replace('\n  loans:\n    table: loans\n', '\n  loans:\n    table: loanz\n'));
      const outcome = await holder.reload();
      holder.close();
      // Before: six "function loanql_loan_payoff takes uuid first, where the engine passes the
      // tenant column loanz.account_id,  (…)" and a stored_form's missing column came first.
      // With the line of `loans:` (session 40: a problem found against the database says its line).
      const line = WITH_FEE.split('\n').indexOf('  loans:') + 1;
      assert.deepEqual(outcome, { ok: false, problems: [`collection loans: table loanz does not exist (line ${line})`] });
    });

    it("a computed field whose function is missing is refused with the field's line (it named only the path)", async () => {
      const path = metadataCopy('missing-function.yaml', WITH_FEE);
      const holder = await holderFor(path);
      const line = WITH_FEE.split('\n').findIndex((text) => text.startsWith('      per_diem: { function: loanql_loan_per_diem,')) + 1;
      assert.ok(line > 0);
      writeFileSync(path, WITH_FEE.replace('per_diem: { function: loanql_loan_per_diem,', 'per_diem: { function: loanql_loan_per_diam,'));
      const outcome = await holder.reload();
      holder.close();
      assert.equal(outcome.ok, false);
      assert.equal(outcome.problems?.length, 1, JSON.stringify(outcome));
      assert.match(outcome.problems![0]!, new RegExp(`^collection loans, computed field per_diem: .*loanql_loan_per_diam.* \\(line ${line}\\)$`));
    });

    it('a wrong file saved over it (too large, binary, a directory, a FIFO) is refused as that, unparsed, and the service never blocks on it', async () => {
      const path = join(workDir, 'wrong-file.yaml');
      const cases: readonly { name: string; make: () => void; problem: string }[] = [
        // Before: read and parsed, blocking every request (30 MB: 6.5 s), then served.
        { name: 'a file over 4 MiB', make: () => writeFileSync(path, `${WITH_FEE}${'#'.repeat(99)}\n`.padEnd(4 * 1024 * 1024 + 1, '#')), problem: `${path} is 4.0 MiB; a metadata file may be at most 4.0 MiB (is it the right file?)` },
        // Before: "metadata: expected a mapping (name: value entries), found text "\u001e…" (the bytes, mangled).
        { name: 'a binary file', make: () => writeFileSync(path, Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0xff, 0xfe, 0x00, 0x41])), problem: `${path} is not a text file: it is not UTF-8 (a metadata file is YAML text)` },
        { name: 'a file with a NUL byte', make: () => writeFileSync(path, `${WITH_FEE}\0\n`), problem: `${path} is not a text file: line ${WITH_FEE.split('\n').length} holds a NUL byte (a metadata file is YAML text)` },
        { name: 'a directory', make: () => mkdirSync(path), problem: `cannot read ${path}: it is not a regular file (a metadata file is YAML text)` },
        // Before: readFileSync waited for a writer, and the whole service with it.
        { name: 'a FIFO', make: () => execFileSync('mkfifo', [path]), problem: `cannot read ${path}: it is not a regular file (a metadata file is YAML text)` },
      ];
      writeFileSync(path, WITH_FEE);
      const holder = await holderFor(path);
      try {
        for (const wrong of cases) {
          rmSync(path, { recursive: true, force: true });
          wrong.make();
          assert.deepEqual(await holder.reload(), { ok: false, problems: [wrong.problem] }, wrong.name);
          await assertFeeQueryable(holder, `${wrong.name}: the previous schema keeps serving`);
        }
        rmSync(path, { recursive: true, force: true });
        writeFileSync(path, WITH_FEE);
        assert.deepEqual(await holder.reload(), { ok: true });
      } finally {
        holder.close();
      }
    });

    it('through the file watch: refused, reported to the callback, and the watch keeps working', async () => {
      const path = metadataCopy('invalid-watch.yaml', WITH_FEE);
      const outcomes: ReloadOutcome[] = [];
      const holder = await holderFor(path, outcomes);
      holder.watch();
      try {
        writeFileSync(path, INVALID_EDITS[2]!.text);
        await eventually(async () => assert.ok(outcomes.some((o) => !o.ok), 'a refused reload was reported'));
        const refused = outcomes.find((o) => !o.ok)!;
        assert.ok(refused.problems?.some((p) => INVALID_EDITS[2]!.problem.test(p)), JSON.stringify(refused));
        await assertFeeQueryable(holder, 'the previous schema still answers');
        writeFileSync(path, ORIGINAL);
        await eventually(() => assertFeeUnknown(holder, 'a later valid edit is still picked up'));
      } finally {
        holder.close();
      }
    });
  });
});

// ---------------------------------------------------------------------------------------------
// The built CLI and the service as processes (embedded database in a temporary DATA_DIR).

describe('Metadata on the command line and in the running service (built dist/, embedded database)', () => {
  let dataDir: string;
  let goodPath: string;
  const badPaths = INVALID_EDITS.map((edit, index) => ({ edit, index, path: '' }));
  const cli = (args: readonly string[]) => runCli(args, { DATA_DIR: dataDir }, workDir);

  before(async () => {
    assertBuilt();
    dataDir = mkdtempSync(join(tmpdir(), 'loanql-reload-data-'));
    await copyMigratedDataDir(dataDir); // first start is not this file's subject
    goodPath = metadataCopy('cli-good.yaml', WITH_FEE);
    for (const bad of badPaths) bad.path = metadataCopy(`cli-bad-${bad.index}.yaml`, bad.edit.text);
  });

  after(() => {
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  async function assertCheckRefuses(bad: (typeof badPaths)[number]): Promise<void> {
    const result = await cli(['metadata', 'check', '--file', bad.path]);
    assert.equal(result.code, 2, `exit code (2: the user's mistake); stdout: ${result.stdout}; stderr: ${result.stderr}`);
    assert.match(result.stderr, bad.edit.problem);
    assert.ok(result.stderr.includes(bad.path), `the message names the file: ${result.stderr}`);
  }

  it('`loanql metadata check --file` exits 0 on a valid file (CLI alone on the data directory)', async () => {
    const result = await cli(['metadata', 'check', '--file', goodPath]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /is valid: \d+ collections/);
  });

  it(`\`loanql metadata check --file\` exits 2 and names the problem: ${INVALID_EDITS[0]!.name} (CLI alone)`, async () => {
    await assertCheckRefuses(badPaths[0]!);
  });

  describe('with the service running (`node dist/server/main.js`, METADATA_PATH a symlink to a temp copy)', () => {
    let service: RunningService;
    let key: string;
    // METADATA_PATH is a symlink: swapping the link changes what a reload reads without
    // touching the watched file, so the change is picked up only on SIGHUP.
    let link: string;
    const point = (target: string) => {
      const temporary = `${link}.new`;
      symlinkSync(target, temporary);
      renameSync(temporary, link);
    };
    const graph = async (query: string) => {
      const response = await fetch(`${service.url}/api/graph`, {
        method: 'POST',
        headers: { authorization: `Token ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query }),
      });
      assert.equal(response.status, 200);
      return (await response.json()) as { data?: unknown; errors?: { message: string }[] };
    };
    const feeQuery = '{ loans(where: {origination_fee: {_is_null: false}}) { id origination_fee } }';

    before(async () => {
      // An account and key made with the CLI, so the service finds data and sets up no demo.
      const account = await cli(['account', 'create', 'reload-service']);
      assert.equal(account.code, 0, account.stderr);
      const created = await cli(['key', 'create', '--account', 'reload-service']);
      assert.equal(created.code, 0, created.stderr);
      key = created.stdout.trim().split('\n').at(-1)!;
      link = join(workDir, 'service-current.yaml');
      point(metadataCopy('service-original.yaml', ORIGINAL));
      service = await startService({ DATA_DIR: dataDir, METADATA_PATH: link }, await freePort(), workDir, 60_000);
    });

    after(async () => {
      await service?.stop();
    });

    it('picks up an edit on SIGHUP (not before), then refuses an invalid edit and keeps serving', async () => {
      assert.ok((await graph(feeQuery)).errors, 'origination_fee is unknown before the edit');
      point(goodPath);
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.ok((await graph(feeQuery)).errors, 'not picked up before SIGHUP (the watched file did not change)');
      service.process.kill('SIGHUP');
      await eventually(async () => assert.deepEqual(await graph(feeQuery), { data: { loans: [] } }), 10_000);

      point(badPaths[2]!.path);
      service.process.kill('SIGHUP');
      await eventually(async () => assert.match(service.output(), /metadata edit refused/), 10_000);
      // The log line says where in the file (session 40: the line of the field, as a schema problem's).
      const brokerFeeLine = readFileSync(badPaths[2]!.path, 'utf8').split('\n').findIndex((line) => /^\s+broker_fee:/.test(line)) + 1;
      assert.ok(brokerFeeLine > 0);
      assert.match(service.output(), new RegExp(`collection loans, field broker_fee: column loans\\.broker_fee does not exist \\(line ${brokerFeeLine}\\)`));
      assert.deepEqual(await graph(feeQuery), { data: { loans: [] } }, 'the previous schema keeps serving');
      // /readyz says so too (before: only the log and the dashboard did): still ready, the
      // problems for an admin key only.
      const ready = async (headers: Record<string, string> = {}) => {
        const response = await fetch(`${service.url}/readyz`, { headers });
        assert.equal(response.status, 200);
        return ((await response.json()) as { metadata: { status: string; lastEditRefused?: { at: string; problems?: string[] } } }).metadata;
      };
      const anonymous = await ready();
      assert.equal(anonymous.status, 'ok');
      assert.ok(anonymous.lastEditRefused && !Number.isNaN(Date.parse(anonymous.lastEditRefused.at)) && !anonymous.lastEditRefused.problems, JSON.stringify(anonymous));
      assert.deepEqual((await ready({ authorization: `Token ${key}` })).lastEditRefused?.problems, [`collection loans, field broker_fee: column loans.broker_fee does not exist (line ${brokerFeeLine})`]);
      point(goodPath);
      service.process.kill('SIGHUP');
      await eventually(async () => assert.equal((await ready()).lastEditRefused, undefined, 'a later edit that loads clears it'), 10_000);
      assert.equal(service.process.exitCode, null, 'the service is still running');
    });

    it('`loanql metadata check` works beside it (through its shared database): 0 on the valid file', async () => {
      const result = await cli(['metadata', 'check', '--file', goodPath]);
      assert.equal(result.code, 0, result.stderr);
    });

    for (const bad of badPaths) {
      it(`\`loanql metadata check --file\` beside the service exits 2 and names the problem: ${bad.edit.name}`, async () => {
        await assertCheckRefuses(bad);
      });
    }

    it('stops cleanly on SIGTERM', async () => {
      assert.equal(await service.stop(), 0, service.output().slice(-2000));
    });
  });
});
