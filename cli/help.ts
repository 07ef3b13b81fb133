import type { Command } from './commands.js';

/** Where every description starts (0-based column); a longer synopsis puts its description on the next line. */
export const DESCRIPTION_COLUMN = 52;
const INDENT = '  ';
/** Descriptions wrap so that a line stays within a 120-column terminal. */
const LINE_WIDTH = 120;

/**
 * `loanql help` (also `--help`, `-h`): each command's synopsis, and its description starting at
 * `DESCRIPTION_COLUMN` on every line it takes, so the descriptions read as one column.
 */
export function helpText(commands: readonly Command[]): string {
  const lines = ['Usage: loanql <command> [options]', ''];
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
  lines.push('', 'Environment: DATABASE_URL (PostgreSQL) or DATA_DIR (embedded, default ./data).');
  return `${lines.join('\n')}\n`;
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
