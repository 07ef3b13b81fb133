/**
 * Bounds the cost of a client's regular expression (`_regex _iregex _nregex _niregex`) or
 * SIMILAR TO pattern (`_similar _nsimilar`, which PostgreSQL translates into a regular
 * expression) before it reaches the database (issue 26, finding 5).
 *
 * PostgreSQL matches a regular expression without back-references with a DFA (time linear in the
 * text, whatever the pattern); a back-reference forces its backtracking matcher, whose time grows
 * with a power of the text's length: `(.*)(.*)(.*)(.*)(.*)\5\4\3\2\1x` took 8.4 s over an
 * account's loans, and on the embedded database (PGlite, no statement timeout, one thread) a
 * statement blocks the whole process while it runs. So a pattern is refused when it has
 *
 * - a back-reference (`\1`…`\9`; `\k` too, which PostgreSQL would refuse anyway),
 * - a nested repetition: a group repeated more than once (`*`, `+`, `{m,}`, `{m,n}` with n > 1)
 *   that itself holds such a repetition (`(a+)+`, `(.*)*`, `(a{2}){3}`; `%` of SIMILAR TO is `.*`),
 * - more than `MAX_PATTERN_LENGTH` characters, or a size over `MAX_PATTERN_SIZE` once its bounded
 *   repetitions are written out (`a{200}` is 200 atoms: the size of the automaton PostgreSQL
 *   builds),
 * - more than `MAX_PATTERN_FREEDOM` variable-width repetitions (`*`, `+`, `?`, `%` count 1,
 *   `{m,n}` counts n − m, times the repetitions of the groups around them): the states of the
 *   automaton that may be active at once, which is what its time per character grows with.
 *   Measured on PGlite, 10,000 rows of 80 characters, `~*`: a plain count 18 ms, `^Loan 1` 12 ms,
 *   32 × `.*` 300 ms, 32 × `.?` 181 ms, `.{0,32}Z` 129 ms; 200 × `.*` took 3.6 s and 400 × `.?` 12 s,
 *   `(.*)(.*)(.*)\3\2\1x` over 2,000 rows more than 10 minutes,
 * - embedded option `b` (basic regular expressions: another syntax, not checked here).
 *
 * Anything else the check does not understand (an unbalanced parenthesis, a bad bound) is left to
 * PostgreSQL, which refuses an invalid pattern with `data-exception`.
 */

export const MAX_PATTERN_LENGTH = 500;
export const MAX_PATTERN_SIZE = 500;
export const MAX_PATTERN_FREEDOM = 32;

export type PatternDialect = 'regex' | 'similar';

const REGEX_OPERATORS: ReadonlySet<string> = new Set(['_regex', '_iregex', '_nregex', '_niregex']);
const SIMILAR_OPERATORS: ReadonlySet<string> = new Set(['_similar', '_nsimilar']);

/** The dialect of an operator's pattern, or null when the operator takes no pattern of this kind. */
export function patternDialect(operator: string): PatternDialect | null {
  if (REGEX_OPERATORS.has(operator)) return 'regex';
  if (SIMILAR_OPERATORS.has(operator)) return 'similar';
  return null;
}

/** An atom (or group) of the pattern: its size written out, and whether it holds a repetition. */
interface Piece {
  size: number;
  /** Variable-width repetitions inside (see MAX_PATTERN_FREEDOM). */
  freedom: number;
  repeats: boolean;
}

interface Group extends Piece {
  last: Piece | null;
}

/** What is wrong with the pattern (a sentence for the error message), or null when it may run. */
export function patternProblem(pattern: string, dialect: PatternDialect): string | null {
  if (pattern.length > MAX_PATTERN_LENGTH) return `a pattern may have at most ${MAX_PATTERN_LENGTH} characters (this one has ${pattern.length})`;
  let i = 0;
  let expanded = false;
  if (dialect === 'regex') {
    if (pattern.startsWith('***=')) return null; // the rest is a literal string
    if (pattern.startsWith('***:')) i = 4;
    const options = /^\(\?([a-z]*)\)/.exec(pattern.slice(i));
    if (options) {
      const flags = options[1]!;
      if (flags.includes('q')) return null; // literal
      if (flags.includes('b')) return 'basic regular expressions (embedded option b) are not accepted';
      expanded = flags.includes('x');
      i += options[0].length;
    }
  }

  const stack: Group[] = [{ size: 0, freedom: 0, repeats: false, last: null }];
  const top = (): Group => stack[stack.length - 1]!;
  const flush = (): void => {
    const group = top();
    if (group.last) {
      group.size += group.last.size;
      group.freedom += group.last.freedom;
      group.repeats ||= group.last.repeats;
      group.last = null;
    }
  };
  const atom = (piece: Piece): void => {
    flush();
    top().last = piece;
  };

  while (i < pattern.length) {
    const ch = pattern[i]!;
    if (expanded && /\s/.test(ch)) {
      i += 1;
      continue;
    }
    if (expanded && ch === '#') {
      while (i < pattern.length && pattern[i] !== '\n') i += 1;
      continue;
    }
    if (ch === '\\') {
      const next = pattern[i + 1];
      if (next !== undefined && next >= '1' && next <= '9') return `back-references (\\${next}) are not accepted`;
      if (next === 'k') return 'back-references (\\k) are not accepted';
      atom({ size: 1, freedom: 0, repeats: false });
      i += 2;
      continue;
    }
    if (ch === '[') {
      i = bracketEnd(pattern, i);
      atom({ size: 1, freedom: 0, repeats: false });
      continue;
    }
    if (ch === '(') {
      flush();
      stack.push({ size: 0, freedom: 0, repeats: false, last: null });
      i += 1;
      continue;
    }
    if (ch === ')' && stack.length > 1) {
      flush();
      const group = stack.pop()!;
      atom({ size: group.size, freedom: group.freedom, repeats: group.repeats });
      i += 1;
      continue;
    }
    if (ch === '|') {
      flush();
      i += 1;
      continue;
    }
    const bound = ch === '{' ? readBound(pattern, i) : null;
    if (ch === '*' || ch === '+' || ch === '?' || bound) {
      const piece = top().last;
      const [times, end] = bound ? [bound.times, bound.end] : [ch === '?' ? 1 : 2, i + 1];
      const width = bound ? bound.width : 1;
      i = end;
      if (pattern[i] === '?') i += 1; // non-greedy
      if (!piece) continue; // nothing to repeat: PostgreSQL decides
      const repeating = ch === '*' || ch === '+' || (bound !== null && bound.many);
      if (repeating && piece.repeats) return 'nested repetitions (a repeated group holding a repetition, like (a+)+ or (.*)*) are not accepted';
      piece.size *= Math.max(1, times);
      piece.freedom = piece.freedom * Math.max(1, times) + width;
      piece.repeats ||= repeating;
      if (piece.size > MAX_PATTERN_SIZE) return patternTooLarge();
      if (piece.freedom > MAX_PATTERN_FREEDOM) return tooFree();
      continue;
    }
    if (dialect === 'similar' && ch === '%') {
      atom({ size: 2, freedom: 1, repeats: true });
      i += 1;
      continue;
    }
    // ^ and $ are constraints (nothing to repeat); everything else is one character.
    atom({ size: ch === '^' || ch === '$' ? 0 : 1, freedom: 0, repeats: false });
    i += 1;
  }
  while (stack.length > 1) {
    flush();
    const group = stack.pop()!;
    atom({ size: group.size, freedom: group.freedom, repeats: group.repeats });
  }
  flush();
  if (top().size > MAX_PATTERN_SIZE) return patternTooLarge();
  return top().freedom > MAX_PATTERN_FREEDOM ? tooFree() : null;
}

function tooFree(): string {
  return `a pattern may have at most ${MAX_PATTERN_FREEDOM} variable-width repetitions (each *, +, ? and % counts 1, {m,n} counts n - m)`;
}

function patternTooLarge(): string {
  return `a pattern may stand for at most ${MAX_PATTERN_SIZE} characters once its bounded repetitions ({m,n}) are written out`;
}

/** The index after a bracket expression starting at `start` (`[`), or the pattern's end. */
function bracketEnd(pattern: string, start: number): number {
  let i = start + 1;
  if (pattern[i] === '^') i += 1;
  if (pattern[i] === ']') i += 1; // a leading ] is a member
  while (i < pattern.length) {
    const ch = pattern[i]!;
    if (ch === ']') return i + 1;
    if (ch === '\\') i += 2;
    else if (ch === '[' && (pattern[i + 1] === ':' || pattern[i + 1] === '=' || pattern[i + 1] === '.')) {
      const close = pattern.indexOf(`${pattern[i + 1]}]`, i + 2);
      i = close < 0 ? pattern.length : close + 2;
    } else i += 1;
  }
  return i;
}

/**
 * A bound `{m}`, `{m,}` or `{m,n}` at `start`: how many times it may repeat its atom (for the
 * size; an open bound counts m + 1), its variable width (n − m; 1 when open), whether it may repeat more than once, and where it ends.
 */
function readBound(pattern: string, start: number): { times: number; width: number; many: boolean; end: number } | null {
  const match = /^\{(\d{1,4})(,(\d{0,4}))?\}/.exec(pattern.slice(start, start + 12));
  if (!match) return null;
  const low = Number(match[1]);
  const open = match[2] !== undefined && match[3] === '';
  const high = match[2] === undefined ? low : open ? low + 1 : Number(match[3]);
  return { times: Math.max(low, high), width: open ? 1 : Math.max(0, high - low), many: open || high > 1, end: start + match[0].length };
}
