import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertBuilt, PROJECT_ROOT, runCli } from '../support/processes.js';
import { knownMigrations } from '../../db/index.js';
import { COMMANDS } from '../../cli/commands.js';
import { DESCRIPTION_COLUMN } from '../../cli/help.js';

describe('loanql help', () => {
  it('starts every line of every description at one column, and describes every command', async () => {
    assertBuilt();
    const result = await runCli(['help'], {}, tmpdir());
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout.split('\n');
    const first = lines.findIndex((line) => line.startsWith('  '));
    const last = lines.findLastIndex((line) => line.startsWith('  '));
    const commandLines = lines.slice(first, last + 1);
    let described = 0;
    for (const [index, line] of commandLines.entries()) {
      const descriptionOnly = /^ +/.exec(line)![0].length === DESCRIPTION_COLUMN;
      if (descriptionOnly) continue;
      // A synopsis: its description begins on the same line at the column, or alone on the next.
      assert.match(line, /^ {2}\S/, `line ${index}: "${line}"`);
      const sameLine = line.length > DESCRIPTION_COLUMN && /^ {2}\S.*\S {2,}$/.test(line.slice(0, DESCRIPTION_COLUMN)) && line[DESCRIPTION_COLUMN] !== ' ';
      const nextLine = /^ +/.exec(commandLines[index + 1] ?? '')?.[0].length === DESCRIPTION_COLUMN;
      assert.ok(sameLine || nextLine, `the description of "${line.trim()}" starts at column ${DESCRIPTION_COLUMN}`);
      described++;
    }
    assert.equal(described, COMMANDS.length, 'one synopsis per command');
    for (const command of COMMANDS) assert.ok(command.description.trim().length > 0, `${command.words.join(' ')} has a description`);
  });

  it('gives admin create a description and documents sql --operation-name', async () => {
    const result = await runCli(['--help'], {}, tmpdir());
    const lines = result.stdout.split('\n');
    const after = (synopsisStart: string): string => {
      const at = lines.findIndex((line) => line.startsWith(`  ${synopsisStart}`));
      assert.ok(at >= 0, `${synopsisStart} is listed`);
      return `${lines[at]!.slice(DESCRIPTION_COLUMN)} ${lines[at + 1]!.slice(DESCRIPTION_COLUMN)}`.trim();
    };
    assert.match(after('admin create'), /admin/);
    const sql = lines.find((line) => line.startsWith('  sql '))!;
    assert.match(sql, /--operation-name NAME/);
  });

  it('prints one command\'s usage for `<command> --help` (option values and all) and `help <command>`, a group\'s for `help <group>`', async () => {
    const single = [['key', 'create', '--help'], ['help', 'key', 'create'], ['key', 'create', '--account', 'acme', '-h']];
    const outputs = new Set<string>();
    for (const args of single) {
      const result = await runCli(args, {}, tmpdir());
      assert.equal(result.code, 0, `loanql ${args.join(' ')}: ${result.stderr}`);
      const lines = result.stdout.split('\n');
      assert.equal(lines[0], `Usage: loanql ${COMMANDS.find((command) => command.words.join(' ') === 'key create')!.synopsis}`);
      assert.match(result.stdout, /create an API key/);
      assert.doesNotMatch(result.stdout, /product field list|key revoke/, 'only the command asked');
      assert.match(result.stdout, /`loanql help` lists every command\./);
      outputs.add(result.stdout);
    }
    assert.equal(outputs.size, 1, 'the same usage each way');
    const group = await runCli(['help', 'product', 'field'], {}, tmpdir());
    assert.equal(group.code, 0, group.stderr);
    assert.match(group.stdout, /^Usage: loanql product field …\n/);
    const listed = COMMANDS.filter((command) => command.words[0] === 'product' && command.words[1] === 'field');
    for (const command of listed) assert.ok(group.stdout.includes(`  ${command.synopsis}`), `${command.words.join(' ')} is listed`);
    assert.equal(group.stdout.split('\n').filter((line) => /^ {2}\S/.test(line)).length, listed.length, 'and nothing else');
  });

  it('prints the version and the newest migration for --version and -V (exit 0), and lists them in the help', async () => {
    const { version } = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string };
    const expected = `loanql ${version} (migrations up to ${knownMigrations().at(-1)})\n`;
    for (const flag of ['--version', '-V']) {
      const result = await runCli([flag], {}, tmpdir());
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, expected);
      assert.equal(result.stderr, '');
    }
    const extra = await runCli(['--version', 'now'], {}, tmpdir());
    assert.equal(extra.code, 2);
    assert.equal(extra.stderr, 'loanql: --version takes nothing after it, not now\n');
    const help = await runCli(['help'], {}, tmpdir());
    assert.match(help.stdout, /^`loanql --version` \(or -V\) prints the version and the newest migration it knows\.$/m);
  });
});
