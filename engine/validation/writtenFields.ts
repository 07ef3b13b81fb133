import type { ErrorCode } from '../errorCode.js';

/**
 * The fewest fields each operation of a document's text can select, read from the text in one
 * pass of its characters, before it is parsed: the fields written in the operation's selection
 * sets (an alias and its field count once), plus those written in every fragment it reaches
 * through spreads (each at least once). Parsing a 100 KB document of 10,000 aliases takes
 * graphql-js 30–40 ms of the Node thread; this pass a fraction of a millisecond, so the MAX_QUERY_FIELDS
 * refusal of such a document costs the thread almost nothing (`loadOperation.ts`). A lower
 * bound of what `maxFieldsRule` counts after parsing (fragments expanded): it refuses no
 * document that rule would admit. Text it cannot read (unbalanced brackets, a stray character)
 * gives what it counted so far; the parser refuses such text anyway.
 */
export function fewestFieldsPerOperation(text: string): WrittenFields[] {
  const definitions: Definition[] = [];
  const byFragment = new Map<string, Definition>();
  /** Open brackets: `s` a selection set, `o` an object or list value, `p` arguments or variable definitions. */
  const open: ('s' | 'o' | 'p')[] = [];
  let current: Definition | null = null;
  /** Selection sets open (the definition's own is 1). */
  let depth = 0;
  /** What the previous significant token asks of the next Name. */
  let next: 'field' | 'spread' | 'typeCondition' | 'skip' | 'fragmentName' = 'field';
  let atTop: 'none' | 'fragment' = 'none';
  const length = text.length;
  let i = 0;
  while (i < length) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0x2c || c === 0xfeff) {
      i++;
    } else if (c === 0x23 /* # */) {
      while (i < length && text.charCodeAt(i) !== 0x0a && text.charCodeAt(i) !== 0x0d) i++;
    } else if (c === 0x22 /* " */) {
      i = skipString(text, i);
      next = 'field';
    } else if (isNameStart(c)) {
      const start = i;
      while (i < length && isNameContinue(text.charCodeAt(i))) i++;
      const top = open.length ? open[open.length - 1] : undefined;
      if (top === undefined) {
        // Between definitions: `query Name`, `fragment Name on Type`.
        if (atTop === 'fragment') {
          current = { fields: 0, rootFields: 0, spreads: new Set(), isOperation: false };
          const name = text.slice(start, i);
          // A name given twice (a validation error later): the first stays, the later one is counted nowhere.
          if (!byFragment.has(name)) byFragment.set(name, current);
          atTop = 'none';
        } else if (!current && text.startsWith('fragment', start) && i - start === 8) atTop = 'fragment';
      } else if (top === 's' && current) {
        if (next === 'spread') {
          if (i - start === 2 && text.startsWith('on', start)) next = 'typeCondition';
          else {
            current.spreads.add(text.slice(start, i));
            next = 'field';
          }
          continue;
        }
        if (next === 'typeCondition' || next === 'skip') {
          next = 'field';
          continue;
        }
        current.fields++;
        if (depth === 1) current.rootFields++;
      }
      next = 'field';
    } else if (c === 0x2e /* . */) {
      i += text.startsWith('...', i) ? 3 : 1;
      next = 'spread';
    } else if (c === 0x40 /* @ */ || c === 0x24 /* $ */) {
      i++;
      next = 'skip';
    } else if (c === 0x3a /* : */) {
      // In a selection set a colon follows an alias: the name before it was no field of its own.
      if (open.length && open[open.length - 1] === 's' && current) {
        current.fields--;
        if (depth === 1) current.rootFields--;
      }
      i++;
      next = 'field';
    } else if (c === 0x7b /* { */) {
      const top = open.length ? open[open.length - 1] : undefined;
      if (top === undefined) {
        current ??= { fields: 0, rootFields: 0, spreads: new Set(), isOperation: true };
        open.push('s');
        depth++;
      } else if (top === 's') {
        open.push('s');
        depth++;
      } else open.push('o');
      i++;
      next = 'field';
    } else if (c === 0x28 /* ( */ || c === 0x5b /* [ */) {
      open.push(c === 0x28 ? 'p' : 'o');
      i++;
      next = 'field';
    } else if (c === 0x7d /* } */ || c === 0x29 /* ) */ || c === 0x5d /* ] */) {
      if (!open.length) break;
      if (open.pop() === 's') depth--;
      i++;
      next = 'field';
      if (!open.length && c === 0x7d && current) {
        definitions.push(current);
        current = null;
      }
    } else if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
      // A number: digits, sign, point, exponent (letters after digits are part of it or an error).
      i++;
      while (i < length && (isNameContinue(text.charCodeAt(i)) || text.charCodeAt(i) === 0x2e || text.charCodeAt(i) === 0x2b || text.charCodeAt(i) === 0x2d)) i++;
      next = 'field';
    } else {
      i++;
      next = 'field';
    }
  }
  return definitions.filter((definition) => definition.isOperation).map((operation) => ({ fields: operation.fields + reachedFragmentFields(operation, byFragment), rootFields: operation.rootFields }));
}

/** What one operation selects at least: fields (fragments reached counted once) and root fields written in it (aliases included). */
export interface WrittenFields {
  readonly fields: number;
  readonly rootFields: number;
}

interface Definition {
  fields: number;
  rootFields: number;
  readonly spreads: Set<string>;
  readonly isOperation: boolean;
}

/** The fields written in every fragment a definition reaches (each fragment once, cycles ignored). */
function reachedFragmentFields(definition: Definition, byFragment: ReadonlyMap<string, Definition>): number {
  const seen = new Set<string>();
  const pending = [...definition.spreads];
  let fields = 0;
  while (pending.length) {
    const name = pending.pop()!;
    if (seen.has(name)) continue;
    seen.add(name);
    const fragment = byFragment.get(name);
    if (!fragment) continue;
    fields += fragment.fields;
    pending.push(...fragment.spreads);
  }
  return fields;
}

/** The index after a string value: `"…"` with escapes, or a block string `"""…"""`. */
function skipString(text: string, at: number): number {
  if (text.startsWith('"""', at)) {
    let i = at + 3;
    while (i < text.length) {
      if (text.startsWith('\\"""', i)) i += 4;
      else if (text.startsWith('"""', i)) return i + 3;
      else i++;
    }
    return i;
  }
  let i = at + 1;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 0x5c /* \ */) i += 2;
    else if (c === 0x22 || c === 0x0a || c === 0x0d) return i + 1;
    else i++;
  }
  return i;
}

const isNameStart = (c: number): boolean => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f;
const isNameContinue = (c: number): boolean => isNameStart(c) || (c >= 0x30 && c <= 0x39);

/** A size refusal, with the code and `extensions` of `maxRootFieldsRule`'s and `maxFieldsRule`'s. */
export interface WrittenSizeRefusal {
  readonly message: string;
  readonly extensions: { readonly code: ErrorCode; readonly rootFields?: number; readonly fields?: number; readonly limit: number };
}

/**
 * `MAX_ROOT_FIELDS` and `MAX_QUERY_FIELDS` checked on the text (`fewestFieldsPerOperation`), in
 * the order `checkDocumentSize` checks them (per operation, root fields first): the first
 * refusal, or null (then the parsed document is checked in full). A limit of 0 is no limit.
 */
export function writtenSizeRefusal(text: string, maxRootFields: number, maxFields: number): WrittenSizeRefusal | null {
  if (maxRootFields <= 0 && maxFields <= 0) return null;
  for (const { rootFields, fields } of fewestFieldsPerOperation(text)) {
    if (maxRootFields > 0 && rootFields > maxRootFields) {
      return {
        message: `the operation has ${rootFields} root fields or more (counted as written, before parsing), over the limit of ${maxRootFields} (MAX_ROOT_FIELDS): split it into several requests`,
        extensions: { code: 'query-too-expensive', rootFields, limit: maxRootFields },
      };
    }
    if (maxFields > 0 && fields > maxFields) {
      return { message: `the operation selects ${fields} fields or more (counted as written, before parsing), over the limit of ${maxFields} (MAX_QUERY_FIELDS)`, extensions: { code: 'query-too-expensive', fields, limit: maxFields } };
    }
  }
  return null;
}
