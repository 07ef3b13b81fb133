/**
 * CSV as every download of loanql writes it (RFC 4180): lines ended by CRLF, UTF-8 with a
 * byte-order mark (so a spreadsheet reads names with accents right). A field holding a comma, a
 * quote or a line break is quoted, its quotes doubled. Text that begins with `=`, `+`, `-`, `@`,
 * a tab or a carriage return is prefixed with `'`, so a spreadsheet never runs a name as a
 * formula (CSV injection); amounts are the database's exact digits and are never prefixed (they
 * are numbers, not text someone chose, and a prefix would change them).
 */

/** A text field: defused if a spreadsheet would read it as a formula, then quoted if it must be. */
export function textCell(value: string): string {
  const defused = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(defused) ? `"${defused.replaceAll('"', '""')}"` : defused;
}

/** An amount as the database wrote it (`-12.50`, `0.00`), or empty for none. */
export function numberCell(value: string | null): string {
  if (value === null) return '';
  if (!/^-?\d+(\.\d+)?$/.test(value)) throw new Error(`not a decimal: ${value}`);
  return value;
}

/** Lines of cells (already made with `textCell` / `numberCell`) as a CSV document. */
export function csvDocument(lines: readonly (readonly string[])[]): string {
  return `\uFEFF${lines.map((cells) => `${cells.join(',')}\r\n`).join('')}`;
}
