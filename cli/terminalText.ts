import stringWidth from 'string-width';

/**
 * Free text (a loan's, an investor's, a key's name) as the command line prints it: on one line,
 * and measured as a terminal shows it, so a table's columns stay aligned whatever the names hold.
 */

/** C0 and C1 controls, DEL, and the Unicode line and paragraph separators. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/gu;
const NAMED: ReadonlyMap<string, string> = new Map([
  ['\n', '\\n'],
  ['\r', '\\r'],
  ['\t', '\\t'],
]);

/**
 * `text` with every control character written visibly — a line break as `\n`, a tab as `\t`, a
 * carriage return as `\r`, any other (an escape that would drive the terminal, say) as `\u001b` —
 * so a name prints on one line and moves no column.
 */
export function oneLine(text: string): string {
  return text.replace(CONTROL, (char) => NAMED.get(char) ?? `\\u${char.codePointAt(0)!.toString(16).padStart(4, '0')}`);
}

/**
 * The columns one line of text takes on a terminal, as `string-width` measures it (graphemes, East
 * Asian wide characters and emoji two columns, combining marks none; cli/README.md says why a
 * library). `String.length` counts UTF-16 units instead.
 */
export function displayWidth(text: string): number {
  return stringWidth(text);
}

/** `text` (one line) padded with spaces to `width` columns. */
export function padToWidth(text: string, width: number): string {
  return text + ' '.repeat(Math.max(0, width - displayWidth(text)));
}
