import type { Command } from './commands.js';

/** Where every description starts (0-based column); a longer synopsis puts its description on the next line. */
export const DESCRIPTION_COLUMN = 52;
const INDENT = '  ';
/** Descriptions wrap so that a line stays within a 120-column terminal. */
const LINE_WIDTH = 120;
const VERSION = '`loanql --version` (or -V) prints the version and the newest migration it knows.';
const ENVIRONMENT = 'Environment: DATABASE_URL (PostgreSQL) or DATA_DIR (embedded, default ./data).';

/**
 * `loanql help` (also `--help`, `-h`): each command's synopsis, and its description starting at
 * `DESCRIPTION_COLUMN` on every line it takes, so the descriptions read as one column. Not `whole`
 * (`loanql key --help`, `loanql help key create`): the commands named only — one command as its
 * synopsis and description.
 */
export function helpText(commands: readonly Command[], { whole }: { readonly whole: boolean } = { whole: true }): string {
  if (!whole && commands.length === 1) {
    // One command: its synopsis as the usage line, its description below it.
    const [command] = commands as [Command];
    const description = wrap(command.description, LINE_WIDTH - INDENT.length).map((line) => `${INDENT}${line}`);
    return `${[`Usage: loanql ${command.synopsis}`, '', ...description, '', '`loanql help` lists every command.', '', ENVIRONMENT].join('\n')}\n`;
  }
  const lines = [whole ? 'Usage: loanql <command> [options]' : `Usage: loanql ${commonWords(commands)} …`, ''];
  for (const command of commands) {
    const [first = '', ...rest] = wrap(command.description, LINE_WIDTH - DESCRIPTION_COLUMN);
    const synopsis = `${INDENT}${command.synopsis}`;
    if (synopsis.length + 2 <= DESCRIPTION_COLUMN) {
      lines.push(synopsis.padEnd(DESCRIPTION_COLUMN) + first);
    } else {
      lines.push(synopsis, ' '.repeat(DESCRIPTION_COLUMN) + first);
    }
    for (const line of rest) lines.push(' '.repeat(DESCRIPTION_COLUMN) + line);
  }
  if (!whole) lines.push('', '`loanql help` lists every command.');
  else lines.push('', VERSION);
  lines.push('', ENVIRONMENT);
  return `${lines.join('\n')}\n`;
}

/** The words every one of `commands` begins with (`product field` for the product field commands). */
function commonWords(commands: readonly Command[]): string {
  const first = commands[0]!.words;
  let count = first.length;
  for (const command of commands) while (count > 0 && first.slice(0, count).some((word, index) => command.words[index] !== word)) count--;
  return first.slice(0, count).join(' ');
}

/** `text` in lines of at most `width` characters, broken between words (a longer word keeps its own line). */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(line);
  return lines;
}
