import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { assertBuilt, runCli } from '../support/processes.js';
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
});
