import { isMap, isScalar, isSeq, type Document, type LineCounter } from 'yaml';

/**
 * Where each place of a metadata file is written: its line (1 and up), by the path of keys (and
 * list positions) that leads to it, joined with `/` (`collections/loans/relationships/borrower`).
 * Built once, when the file is parsed (`parseMetadataSource`), for the problems found after the
 * JSON Schema — resolving (stage 2) and against the database (stage 3) — to say their line as
 * the schema's do (`locateProblems`).
 */
export type SourceLines = ReadonlyMap<string, number>;

/** Every key's and list item's line in a parsed YAML document (an alias's target is not followed: the alias's own line is where it is used). */
export function sourceLinesOf(parsed: Document.Parsed, lineCounter: LineCounter): SourceLines {
  const lines = new Map<string, number>();
  const lineAt = (offset: number | undefined): number | undefined => (offset === undefined ? undefined : lineCounter.linePos(offset).line);
  const walk = (node: unknown, path: string): void => {
    if (isMap(node)) {
      for (const pair of node.items) {
        if (!isScalar(pair.key)) continue;
        const at = `${path}${path ? '/' : ''}${String(pair.key.value)}`;
        const line = lineAt(pair.key.range?.[0]);
        if (line !== undefined) lines.set(at, line);
        walk(pair.value, at);
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, index) => {
        const at = `${path}${path ? '/' : ''}${index}`;
        const line = lineAt((item as { range?: [number, number, number] } | null)?.range?.[0]);
        if (line !== undefined) lines.set(at, line);
        walk(item, at);
      });
    }
  };
  walk(parsed.contents, '');
  return lines;
}

/** The places a problem's words name, as the file's keys: `collection loans` is `collections/loans`. */
const NAMED_PLACES: readonly (readonly [RegExp, string])[] = [
  [/^collection (\S+)$/, 'collections'],
  [/^relationship (\S+)$/, 'relationships'],
  [/^computed field (\S+)$/, 'computed_fields'],
  [/^field (\S+)$/, 'fields'],
  [/^role (\S+)$/, 'roles'],
  [/^function (\S+)$/, 'functions'],
  [/^event type (\S+)$/, 'event_types'],
  [/^argument (\S+)$/, 'args'],
];

/** What starts every problem of stages 2 and 3 that names a place of the file. */
const FIRST_PLACE = /^(collection|role|function|event type) /;

/**
 * The line of the innermost place of the file a problem names before its first `: ` —
 * `collection loans, relationship borrower: …`, `role teller, collection loans, select filter.status._eq: …`
 * — or null when it names none or the file has no such place. A place the file does not have
 * (a field a filter names that is not one) stops the descent: the line is its parent's.
 */
export function lineOfProblem(problem: string, lines: SourceLines): number | null {
  const colon = problem.indexOf(': ');
  if (colon < 0 || !FIRST_PLACE.test(problem)) return null;
  let path = '';
  let line: number | null = null;
  const step = (candidates: readonly string[]): boolean => {
    for (const candidate of candidates) {
      const at = `${path}${path ? '/' : ''}${candidate}`;
      const found = lines.get(at);
      if (found !== undefined) {
        path = at;
        line = found;
        return true;
      }
    }
    return false;
  };
  for (const segment of problem.slice(0, colon).split(', ')) {
    const named = NAMED_PLACES.find(([pattern]) => pattern.test(segment));
    if (named) {
      const name = named[0].exec(segment)![1]!;
      // `field x` of an insert's `set` is the key x itself: the container is tried, then the name alone.
      if (!step([`${named[1]}/${name}`]) && !step([name])) break;
      continue;
    }
    // Words and a dotted path (`select filter.status._eq`, `_or[0].tag_count`): one key each.
    const keys = segment.split(/[\s.[\]]+/).filter(Boolean);
    if (!keys.every((key) => step([key]))) break;
  }
  return line;
}

/** Each problem with ` (line N)` after it, where the file has the place it names (one that says its line already is left as it is). */
export function locateProblems(problems: readonly string[], lines: SourceLines | undefined): readonly string[] {
  if (!lines) return problems;
  return problems.map((problem) => {
    if (/\(line \d+\)/.test(problem)) return problem;
    const line = lineOfProblem(problem, lines);
    return line === null ? problem : `${problem} (line ${line})`;
  });
}
