/**
 * The console's result pane shows the response exactly as the API sent it: numbers keep
 * PostgreSQL's digits (`100000.00`, `0.10`, a 20-digit numeric), which `JSON.parse` followed by
 * `JSON.stringify` would turn into `100000`, `0.1` and a rounded double.
 *
 * GraphiQL renders a fetcher's result with `formatResult` of `@graphiql/toolkit`
 * (`JSON.stringify(result, null, 2)`). `client/build.mjs` points GraphiQL's import of that
 * package at `graphiqlToolkit.ts`, whose `formatResult` is the one below: the fetcher hands
 * over the response text wrapped in `ResponseText`, and it is indented here token by token —
 * every string and number copied byte for byte — into the layout `JSON.stringify` gives.
 */
export class ResponseText {
  constructor(readonly text: string) {}
}

export function formatResult(result: unknown): string {
  return result instanceof ResponseText ? indentJson(result.text) : JSON.stringify(result, null, 2);
}

/**
 * `text` laid out as `JSON.stringify(JSON.parse(text), null, 2)` would, but with every literal
 * as written. Text that is not JSON is returned as it is.
 */
export function indentJson(text: string): string {
  try {
    JSON.parse(text);
  } catch {
    return text;
  }
  let out = '';
  let depth = 0;
  const newline = (): string => `\n${'  '.repeat(depth)}`;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (char === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      out += text.slice(i, end + 1);
      i = end;
    } else if (char === '{' || char === '[') {
      const close = char === '{' ? '}' : ']';
      let next = i + 1;
      while (/\s/.test(text[next] ?? '')) next++;
      if (text[next] === close) {
        out += char + close;
        i = next;
      } else {
        depth++;
        out += char + newline();
      }
    } else if (char === '}' || char === ']') {
      depth--;
      out += newline() + char;
    } else if (char === ',') {
      out += `,${newline()}`;
    } else if (char === ':') {
      out += ': ';
    } else if (!/\s/.test(char)) {
      out += char; // numbers, true, false, null: as sent
    }
  }
  return out;
}
