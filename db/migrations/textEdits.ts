/**
 * Text edits for migrations that redefine a function from an earlier migration's text (0034, 0038,
 * 0042, 0043): each change is found in that text exactly once, so a migration fails to load, naming
 * itself, rather than redefine a function from text that is not what it expects.
 */

/** `text` with each [from, to] replaced once; a `from` not found exactly once throws, naming `migration`. */
export function edited(migration: string, text: string, replacements: readonly (readonly [string, string])[]): string {
  let out = text;
  for (const [from, to] of replacements) {
    const at = out.indexOf(from);
    if (at < 0 || out.indexOf(from, at + 1) >= 0) throw new Error(`${migration}: expected exactly one ${JSON.stringify(from.slice(0, 80))}`);
    out = out.slice(0, at) + to + out.slice(at + from.length);
  }
  return out;
}

/** The text from `start` to the first `end` after it (both included); throws, naming `migration`, when either is missing. */
export function between(migration: string, text: string, start: string, end: string): string {
  const from = text.indexOf(start);
  const to = text.indexOf(end, from);
  if (from < 0 || to < 0) throw new Error(`${migration}: no ${JSON.stringify(start.slice(0, 80))}`);
  return text.slice(from, to + end.length);
}
