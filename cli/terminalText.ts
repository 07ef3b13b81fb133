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

const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });

/** East Asian wide and fullwidth characters and emoji: two columns of a terminal (as wcwidth counts them). */
function isWide(codePoint: number): boolean {
  return (
    (codePoint >= 0x1100 && codePoint <= 0x115f) ||
    (codePoint >= 0x2e80 && codePoint <= 0xa4cf && codePoint !== 0x303f) ||
    (codePoint >= 0xac00 && codePoint <= 0xd7a3) ||
    (codePoint >= 0xf900 && codePoint <= 0xfaff) ||
    (codePoint >= 0xfe30 && codePoint <= 0xfe4f) ||
    (codePoint >= 0xff00 && codePoint <= 0xff60) ||
    (codePoint >= 0xffe0 && codePoint <= 0xffe6) ||
    (codePoint >= 0x1f300 && codePoint <= 0x1faff) ||
    (codePoint >= 0x20000 && codePoint <= 0x3fffd)
  );
}

/**
 * The columns one line of text takes on a terminal: one per grapheme (an accent written as a
 * combining mark adds none), two for a wide one. `String.length` counts UTF-16 units instead.
 */
export function displayWidth(text: string): number {
  let width = 0;
  for (const { segment } of graphemes.segment(text)) width += isWide(segment.codePointAt(0)!) ? 2 : 1;
  return width;
}

/** `text` (one line) padded with spaces to `width` columns. */
export function padToWidth(text: string, width: number): string {
  return text + ' '.repeat(Math.max(0, width - displayWidth(text)));
}
