/**
 * Hasura's `path` argument of a jsonb field (`data(path: "$.a.b[0]")`): the JSON select path, as
 * the steps PostgreSQL's `#>` takes (`'{a,b,0}'`). Accepted, as Hasura's parser accepts: an
 * optional leading `$`; steps `.key`, `[index]`, `["key"]` or `['key']`; a first key without the
 * dot (`a.b`). A key is any text without `.`, `[` or `]` (quoted, anything but its quote).
 * Returns the steps, or an explanation of what is wrong.
 */
export function parseJsonPath(text: string): { readonly steps: readonly string[] } | { readonly error: string } {
  const steps: string[] = [];
  let at = text.startsWith('$') ? 1 : 0;
  const bareKey = (from: number): number => {
    let end = from;
    while (end < text.length && !'.[]'.includes(text[end]!)) end++;
    return end;
  };
  if (at === 0 && text.length && text[0] !== '[') {
    const end = bareKey(0);
    steps.push(text.slice(0, end));
    at = end;
  }
  while (at < text.length) {
    const char = text[at]!;
    if (char === '.') {
      const end = bareKey(at + 1);
      if (end === at + 1) return { error: `an empty key at character ${at + 1}` };
      steps.push(text.slice(at + 1, end));
      at = end;
    } else if (char === '[') {
      const quote = text[at + 1];
      if (quote === '"' || quote === "'") {
        const close = text.indexOf(quote, at + 2);
        if (close < 0 || text[close + 1] !== ']') return { error: `an unterminated quoted key at character ${at + 1}` };
        steps.push(text.slice(at + 2, close));
        at = close + 2;
      } else {
        const close = text.indexOf(']', at);
        const index = close < 0 ? '' : text.slice(at + 1, close);
        if (!/^-?\d{1,9}$/.test(index)) return { error: `expected an index (a whole number) or a quoted key in [] at character ${at + 1}` };
        steps.push(String(Number(index)));
        at = close + 1;
      }
    } else {
      return { error: `unexpected "${char}" at character ${at + 1}` };
    }
  }
  return { steps };
}
