/**
 * The console's SQL panel lays the one long statement the compiler emits out on lines: every
 * subquery `(SELECT …)` opens an indented block, and the clauses of a query (FROM, WHERE,
 * ORDER BY, LIMIT, joins; AND at a query's own level) start lines of their own. Only
 * whitespace changes: strings, quoted identifiers, parameters and every other token are kept
 * as they are, so the text is the same statement (`tests/dashboard/units.test.ts` checks that).
 */
const TOKEN = /\s+|'(?:[^']|'')*'|"(?:[^"]|"")*"|\$\d+|[A-Za-z_][A-Za-z0-9_$]*|\d+(?:\.\d+)?|::|<>|<=|>=|!=|\|\||->>?|#>>?|[\s\S]/g;
const QUERY_START = new Set(['SELECT', 'WITH', 'INSERT', 'UPDATE', 'DELETE', 'VALUES']);
const CLAUSES = new Set(['FROM', 'WHERE', 'GROUP', 'ORDER', 'HAVING', 'LIMIT', 'OFFSET', 'UNION', 'RETURNING', 'SET', 'VALUES', 'LEFT', 'RIGHT', 'INNER', 'CROSS', 'FULL', 'JOIN', 'ON', 'SELECT', 'INSERT', 'UPDATE', 'DELETE']);
const JOIN_PREFIXES = new Set(['LEFT', 'RIGHT', 'INNER', 'CROSS', 'FULL', 'OUTER', 'NATURAL']);
const INDENT = '  ';

interface Frame {
  readonly query: boolean;
  readonly indent: number;
  /** Whether the query's first keyword has been written (SELECT of `(SELECT` does not break). */
  started: boolean;
}

export function formatSql(sql: string): string {
  const tokens = sql.match(TOKEN) ?? [];
  const frames: Frame[] = [{ query: true, indent: 0, started: false }];
  let out = '';
  let pendingSpace = false;
  let previousWord = '';
  const top = (): Frame => frames[frames.length - 1]!;
  const newline = (indent: number): void => {
    out = out.replace(/ +$/, '');
    out += `\n${INDENT.repeat(indent)}`;
    pendingSpace = false;
  };
  const write = (text: string): void => {
    if (pendingSpace && out !== '' && !out.endsWith('\n') && !out.endsWith(' ') && !out.endsWith('(')) out += ' ';
    pendingSpace = false;
    out += text;
  };
  const nextWord = (from: number): string => {
    for (let j = from; j < tokens.length; j++) if (!/^\s+$/.test(tokens[j]!)) return tokens[j]!.toUpperCase();
    return '';
  };

  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (/^\s+$/.test(token)) {
      pendingSpace = true;
      continue;
    }
    const word = token.toUpperCase();
    const frame = top();
    if (token === '(') {
      write('(');
      if (QUERY_START.has(nextWord(i + 1))) {
        frames.push({ query: true, indent: frame.indent + 1, started: false });
        newline(frame.indent + 1);
      } else {
        frames.push({ query: false, indent: frame.indent, started: true });
      }
    } else if (token === ')') {
      const closed = frames.length > 1 ? frames.pop()! : frame;
      if (closed.query) newline(closed.indent - 1);
      write(')');
    } else if (token === ';' && frames.length === 1) {
      write(';');
      out += '\n';
      frame.started = false;
      pendingSpace = false;
    } else if (frame.query && CLAUSES.has(word) && frame.started && !(word === 'JOIN' && JOIN_PREFIXES.has(previousWord)) && !(word === 'ON' && nextWord(i + 1) !== 'CONFLICT')) {
      newline(frame.indent);
      write(token);
    } else if (frame.query && (word === 'AND' || word === 'OR') && frame.started) {
      newline(frame.indent + 1);
      write(token);
    } else {
      if (out.endsWith('\n')) out += INDENT.repeat(frame.indent);
      write(token);
      if (frame.query && QUERY_START.has(word)) frame.started = true;
    }
    previousWord = word;
  }
  return out.replace(/ +$/gm, '').trim();
}
