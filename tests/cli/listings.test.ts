import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { assertBuilt, PROJECT_ROOT, runCli, type ProcessResult } from '../support/processes.js';
import { copyMigratedDataDir } from '../support/testDatabase.js';
import { withCommandDatabase } from '../support/commandDatabase.js';
import { COMMANDS } from '../../cli/commands.js';

/**
 * The key and webhook commands as processes on a migrated `DATA_DIR` with no service running:
 * what a listing prints is what `loanql help` says it prints, and `key revoke` says what it did;
 * a listing longer than a pipe holds reaches its reader whole.
 */
let dir: string;
let env: Record<string, string>;
const cli = (...args: string[]): Promise<ProcessResult> => runCli(args, env, dir);

function assertOk(result: ProcessResult, what: string): void {
  assert.equal(result.code, 0, `${what} failed:\n${result.stdout}\n${result.stderr}`);
}

/** A table's header as words: `PREFIX  ACCOUNT  LAST USED` → prefix, account, last used. */
function headerOf(output: string): string[] {
  return output.split('\n')[0]!.trim().split(/\s{2,}/).map((column) => column.toLowerCase());
}

/** The columns a command's help names after its colon: `list keys: prefix, role (and its variables)` → prefix, role. */
function columnsInHelp(words: string): string[] {
  const command = COMMANDS.find((c) => c.words.join(' ') === words);
  assert.ok(command, `${words} is a command`);
  const list = command.description.slice(command.description.indexOf(':') + 1);
  return list.split(',').map((item) => item.replace(/\(.*?\)/g, '').trim());
}

before(async () => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'loanql-listings-'));
  await copyMigratedDataDir(join(dir, 'data'));
  env = { DATA_DIR: join(dir, 'data'), WEBHOOK_ALLOW_PRIVATE: '1' };
  assertOk(await cli('account', 'create', 'listed'), 'account create');
  assertOk(await cli('key', 'create', '--account', 'listed', '--name', 'first'), 'key create');
});

after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('loanql listings', () => {
  it('key list prints the columns its help names, the account among them', async () => {
    const listed = await cli('key', 'list');
    assertOk(listed, 'key list');
    assert.deepEqual(headerOf(listed.stdout), columnsInHelp('key list'));
    assert.ok(headerOf(listed.stdout).includes('account'));
  });

  it('webhook deliveries prints the columns its help names', async () => {
    const added = await cli('webhook', 'add', '--account', 'listed', '--url', 'http://127.0.0.1:9/hooks');
    assertOk(added, 'webhook add');
    const id = /webhook endpoint ([0-9a-f-]{36}) added/.exec(added.stdout)?.[1];
    assert.ok(id, added.stdout);
    const shown = await cli('webhook', 'deliveries', id);
    assertOk(shown, 'webhook deliveries');
    assert.deepEqual(headerOf(shown.stdout), columnsInHelp('webhook deliveries'));
  });

  it('key revoke deactivates a key once; revoking it again changes nothing and says so, exit 0', async () => {
    const listed = await cli('key', 'list', '--account', 'listed');
    const prefix = /^(lq_[a-z0-9]{8})\s/m.exec(listed.stdout)?.[1];
    assert.ok(prefix, listed.stdout);
    const first = await cli('key', 'revoke', prefix);
    assertOk(first, 'key revoke');
    assert.equal(first.stdout, `key ${prefix} deactivated; it is refused from its next request on\n`);
    const again = await cli('key', 'revoke', prefix);
    assertOk(again, 'key revoke of a revoked key');
    assert.match(again.stdout, new RegExp(`^key ${prefix} was already revoked \\(\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\); nothing changed\n$`));
    assert.equal(again.stderr, '');
    assert.match((await cli('key', 'list', '--account', 'listed')).stdout, new RegExp(`^${prefix}\\s.*\\bno$`, 'm'), 'still inactive');
  });

  it('key create shows a name with control characters visibly, on one line, the key alone on the last', async () => {
    // The name is printed back; an escape sequence in it reached the terminal (key list showed it visibly).
    const created = await cli('key', 'create', '--account', 'listed', '--name', 'ops\tkey\u001b[2J');
    assertOk(created, 'key create');
    const lines = created.stdout.trimEnd().split('\n');
    assert.equal(lines.length, 2, created.stdout);
    assert.match(lines[0]!, /^key "ops\\tkey\\u001b\[2J" \(role admin\) created for account listed, prefix lq_[a-z0-9]{8}\. It is shown only now:$/);
    assert.match(lines[1]!, /^lq_[a-z0-9]{8}_\S+$/);
    assert.doesNotMatch(created.stdout.replace(/\n/g, ''), /[\u0000-\u001f]/);
  });

  it('a listing longer than a pipe holds reaches the reader whole (it was cut at 65,536 bytes)', async () => {
    // The CLI's stdout is a pipe here, as in `loanql key list | grep …`: Node queues what the pipe
    // cannot take at once, and exiting straight after the command dropped it.
    assertOk(await cli('account', 'create', 'many'), 'account create');
    await withCommandDatabase(env, (db) =>
      db.query(
        `INSERT INTO api_keys (account_id, key_hash, name, prefix)
         SELECT a.id, sha256(convert_to(g::text, 'UTF8')), 'bulk key ' || g, 'lq_' || lpad(g::text, 8, '0')
           FROM accounts a, generate_series(1, 2000) AS g WHERE a.slug = 'many'`,
      ),
    );
    // Its reader a moment late, as `| (sleep 3; cat)`: the CLI has finished before the pipe is read.
    const script = '"$0" "$1" key list --account many | (sleep 3; cat); exit "${PIPESTATUS[0]}"';
    const listed = await new Promise<ProcessResult>((resolve) => {
      execFile('bash', ['-c', script, process.execPath, join(PROJECT_ROOT, 'dist/cli/main.js')], { env: { ...process.env, ...env }, cwd: dir, maxBuffer: 1 << 22 }, (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
      );
    });
    assertOk(listed, 'key list');
    assert.ok(Buffer.byteLength(listed.stdout) > 65_536 * 2, `${Buffer.byteLength(listed.stdout)} bytes`);
    const prefixes = new Set(listed.stdout.trimEnd().split('\n').slice(1).map((line) => line.split(' ')[0]));
    assert.equal(prefixes.size, 2000);
    for (const n of [1, 1000, 2000]) assert.ok(prefixes.has(`lq_${String(n).padStart(8, '0')}`), `key ${n} listed`);
  });
});
