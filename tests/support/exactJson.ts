// JSON with exact numbers, for the tests (re-exported by seededService.ts).

/**
 * A JSON number as written in the response text. `JSON.parse` turns `65000.00` into `65000`;
 * the engine promises PostgreSQL's exact digits, so tests read numbers with `parseExact`.
 */
export class JsonNumber {
  constructor(readonly text: string) {}
  toJSON(): number {
    return Number(this.text);
  }
}

/** `new JsonNumber(text)`, written short for expectations. */
export const num = (text: string | number | bigint): JsonNumber => new JsonNumber(String(text));

/** JSON.parse, except that every number becomes a `JsonNumber` carrying its exact text. */
export function parseExact(text: string): unknown {
  let at = 0;
  const fail = (what: string): never => {
    throw new SyntaxError(`parseExact: ${what} at ${at}: ${JSON.stringify(text.slice(at, at + 40))}`);
  };
  const space = (): void => {
    while (at < text.length && ' \t\n\r'.includes(text[at]!)) at++;
  };
  const value = (): unknown => {
    space();
    const c = text[at];
    if (c === '{') {
      at++;
      const object: Record<string, unknown> = {};
      space();
      if (text[at] === '}') {
        at++;
        return object;
      }
      for (;;) {
        space();
        if (text[at] !== '"') fail('expected a key');
        const key = string();
        space();
        if (text[at++] !== ':') fail('expected ":"');
        object[key] = value();
        space();
        const next = text[at++];
        if (next === '}') return object;
        if (next !== ',') fail('expected "," or "}"');
      }
    }
    if (c === '[') {
      at++;
      const array: unknown[] = [];
      space();
      if (text[at] === ']') {
        at++;
        return array;
      }
      for (;;) {
        array.push(value());
        space();
        const next = text[at++];
        if (next === ']') return array;
        if (next !== ',') fail('expected "," or "]"');
      }
    }
    if (c === '"') return string();
    const literal = /^(?:true|false|null)/.exec(text.slice(at, at + 5));
    if (literal) {
      at += literal[0].length;
      return literal[0] === 'null' ? null : literal[0] === 'true';
    }
    const number = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(at, at + 400));
    if (!number) return fail('unexpected text');
    at += number[0].length;
    return new JsonNumber(number[0]);
  };
  const string = (): string => {
    const start = at;
    at++;
    while (at < text.length && text[at] !== '"') at += text[at] === '\\' ? 2 : 1;
    at++;
    return JSON.parse(text.slice(start, at)) as string;
  };
  const result = value();
  space();
  if (at !== text.length) fail('trailing text');
  return result;
}

/** JSON.stringify with two-space indentation that writes a `JsonNumber` with its exact text. */
export function stringifyExact(value: unknown, indent = ''): string {
  if (value instanceof JsonNumber) return value.text;
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (!value.length) return '[]';
    return `[\n${value.map((item) => inner + stringifyExact(item, inner)).join(',\n')}\n${indent}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (!entries.length) return '{}';
  return `{\n${entries.map(([key, item]) => `${inner}${JSON.stringify(key)}: ${stringifyExact(item, inner)}`).join(',\n')}\n${indent}}`;
}
