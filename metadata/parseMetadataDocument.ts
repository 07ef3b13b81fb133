import AjvModule, { type ErrorObject, type ValidateFunction } from 'ajv';
import { isMap, isScalar, LineCounter, parseDocument, YAMLParseError, type Document } from 'yaml';
import type { MetadataDocument } from './document.js';
import { sourceLinesOf, type SourceLines } from './sourceLines.js';
import metadataSchema from './metadata.schema.json' with { type: 'json' };
import { FIELD_TYPES, MetadataError, SCALAR_TYPES, type FieldType } from './model.js';

const Ajv = AjvModule.default;
/** The JSON Schema's validator, compiled on first use (about 0.1 CPU-seconds; a CLI command without metadata never pays it). */
let compiled: ValidateFunction | undefined;
const documentValidator = (): ValidateFunction => (compiled ??= new Ajv({ allErrors: true }).compile(metadataSchema));

/**
 * Stage 1: metadata text (YAML) → the document as written (`MetadataDocument`), validated by
 * the JSON Schema (`metadata.schema.json`). Throws `MetadataError` naming every problem by
 * collection and field; `source` names the text in the YAML error.
 */
export function parseMetadataDocument(text: string, source = 'metadata'): MetadataDocument {
  return parseMetadataSource(text, source).document;
}

/**
 * `parseMetadataDocument`, and where each place of the text is (`SourceLines`), for the later
 * stages' problems to say their line.
 */
export function parseMetadataSource(text: string, source = 'metadata'): { readonly document: MetadataDocument; readonly lines: SourceLines } {
  const lineCounter = new LineCounter();
  let parsed: Document.Parsed;
  let document: unknown;
  try {
    parsed = parseDocument(text, { lineCounter });
    if (parsed.errors.length) throw parsed.errors[0];
    document = parsed.toJS();
  } catch (error) {
    const line = error instanceof YAMLParseError && error.linePos ? error.linePos[0].line : null;
    // The library's first line ends with a colon before its code frame: the line itself instead.
    const said = (error as Error).message.split('\n')[0]!.replace(/:\s*$/, '');
    const shown = line === null ? '' : text.split('\n')[line - 1]?.trim() ?? '';
    throw new MetadataError([`${source} is not valid YAML${line === null ? '' : ` at line ${line}`}: ${said}${shown ? ` (the line: ${shown})` : ''}`]);
  }
  return { document: validateMetadataDocument(document, lineLocator(parsed, lineCounter)), lines: sourceLinesOf(parsed, lineCounter) };
}

/** Where in the file a place of the document is: its line (1 and up), or null. */
type LineLocator = (pointer: string, key?: string) => number | null;

/**
 * The line of the node at a JSON pointer (ajv's `instancePath`) — of one of its keys when `key`
 * is given (an unknown key, a name that is not valid) — from the parsed YAML's ranges. Before
 * session 39 a schema problem named its place only by keys ("collection loans, field x"), which
 * in a long file an admin had to search for.
 */
function lineLocator(parsed: Document.Parsed, lineCounter: LineCounter): LineLocator {
  return (pointer, key) => {
    const path = pointer.split('/').slice(1).map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'));
    const node = path.length ? parsed.getIn(path, true) : parsed.contents;
    let offset: number | undefined;
    if (key !== undefined && isMap(node)) {
      const pair = node.items.find((item) => (isScalar(item.key) ? String(item.key.value) : String(item.key)) === key);
      offset = isScalar(pair?.key) ? pair.key.range?.[0] : undefined;
    }
    offset ??= (node as { range?: [number, number, number] } | null | undefined)?.range?.[0];
    return offset === undefined ? null : lineCounter.linePos(offset).line;
  };
}

/**
 * A value checked against the JSON Schema, as the document it then is: the YAML file's
 * contents, or a document the server declares as data (a fixed view: its types are checked by
 * the compiler, its names by the schema's patterns).
 */
export function validateMetadataDocument(document: unknown, lineOf: LineLocator = () => null): MetadataDocument {
  const validateDocument = documentValidator();
  if (!validateDocument(document)) throw new MetadataError(describeSchemaErrors(document, validateDocument.errors ?? [], lineOf));
  return document as unknown as MetadataDocument;
}

/**
 * ajv's errors, one line per place. A field spec is a `oneOf` (a type name, `{type, column}`,
 * `{type, custom_field}`), whose raw errors say little; they are replaced by one plain sentence.
 */
function describeSchemaErrors(document: unknown, errors: readonly ErrorObject[], lineOf: LineLocator): string[] {
  const lines: string[] = [];
  const at = (pointer: string, key?: string): string => {
    const line = lineOf(pointer, key);
    return line === null ? '' : ` (line ${line})`;
  };
  const seenFields = new Set<string>();
  for (const error of errors) {
    // A name that breaks `propertyNames` (a field called my-label): ajv reports the pattern
    // without the name, then "property name must be valid"; one line naming it instead.
    if (error.keyword === 'propertyNames') {
      const name = String((error.params as { propertyName?: unknown }).propertyName);
      const rule = name === 'admin' && error.instancePath === '/roles' ? 'admin is the built-in role' : 'a letter, then letters, digits or _; at most 63 characters';
      lines.push(`${describePath(error.instancePath)}: "${name}" is not a valid name (${rule})${at(error.instancePath, name)}`);
      continue;
    }
    if ((error as { propertyName?: string }).propertyName !== undefined) continue;
    const field = /^\/collections\/[^/]+\/fields\/[^/]+/.exec(error.instancePath)?.[0];
    // A computed field's argument is a `oneOf` too (a type name, or `{type, range}`): one sentence.
    const argument = /^\/collections\/[^/]+\/computed_fields\/[^/]+\/args\/[^/]+/.exec(error.instancePath)?.[0];
    if (argument) {
      if (seenFields.has(argument)) continue;
      seenFields.add(argument);
      lines.push(`${describePath(argument)}: ${describeArgumentProblem(valueAt(document, argument))}${at(argument)}`);
    } else if (field) {
      if (seenFields.has(field)) continue;
      seenFields.add(field);
      lines.push(`${describePath(field)}: ${describeFieldProblem(valueAt(document, field))}${at(field)}`);
    } else {
      const unknownKey = error.keyword === 'additionalProperties' ? (error.params as { additionalProperty?: string }).additionalProperty : undefined;
      lines.push(`${describePath(error.instancePath)}: ${describeProblem(error, valueAt(document, error.instancePath))}${at(error.instancePath, unknownKey)}`);
    }
  }
  return lines;
}

/** What YAML a JSON Schema type is written as. */
const YAML_SHAPES: ReadonlyMap<string, string> = new Map([
  ['object', 'a mapping (name: value entries)'],
  ['array', 'a list'],
  ['string', 'text'],
  ['integer', 'a whole number'],
  ['number', 'a number'],
  ['boolean', 'true or false'],
  ['null', 'nothing (null)'],
]);

/** A value as the file has it, briefly: `a list`, `text "loans"`, `the number 5`. */
function describeValue(value: unknown): string {
  if (value === null || value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') return `text ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  return `${typeof value === 'number' ? 'the number' : ''} ${String(value)}`.trim();
}

/**
 * One of ajv's errors as what was expected and what was found: its own words ("must be object")
 * say neither the YAML nor what is there instead.
 */
function describeProblem(error: ErrorObject, value: unknown): string {
  const params = error.params as { type?: string | string[]; additionalProperty?: string; allowedValues?: unknown[]; allowedValue?: unknown };
  switch (error.keyword) {
    case 'type': {
      const types = Array.isArray(params.type) ? params.type : [params.type ?? ''];
      return `expected ${types.map((type) => YAML_SHAPES.get(type) ?? type).join(' or ')}, found ${describeValue(value)}`;
    }
    case 'additionalProperties':
      return `${error.message ?? 'must NOT have additional properties'}: unknown key ${JSON.stringify(params.additionalProperty)}`;
    case 'enum':
      return `expected one of ${(params.allowedValues ?? []).map((allowed) => JSON.stringify(allowed)).join(', ')}, found ${describeValue(value)}`;
    case 'const':
      return `expected ${JSON.stringify(params.allowedValue)}, found ${describeValue(value)}`;
    default:
      return error.message ?? 'is invalid';
  }
}

function describeFieldProblem(spec: unknown): string {
  const types = `${SCALAR_TYPES.join(', ')}, or an array of one but json and jsonb (text[])`;
  const type = typeof spec === 'string' ? spec : typeof spec === 'object' && spec !== null ? (spec as { type?: unknown }).type : undefined;
  if (typeof type !== 'string') return `give a type (one of ${types})`;
  if (!FIELD_TYPES.includes(type as FieldType)) return `type "${type}" is not one of ${types}`;
  if (typeof spec === 'object' && spec !== null) {
    const keys = Object.keys(spec);
    const unknown = keys.filter((key) => !['type', 'column', 'custom_field'].includes(key));
    if (unknown.length) return `unknown key ${unknown.join(', ')} (a field has type and either column or custom_field)`;
    if (keys.includes('column') && keys.includes('custom_field')) return 'give either column or custom_field, not both';
    return 'column must be a lower-case SQL name, custom_field a lower-case key';
  }
  return 'is invalid';
}

function describeArgumentProblem(spec: unknown): string {
  const type = typeof spec === 'string' ? spec : typeof spec === 'object' && spec !== null ? (spec as { type?: unknown }).type : undefined;
  if (typeof type !== 'string') return `give a type (one of ${SCALAR_TYPES.join(', ')}), or {type, range}`;
  if (!SCALAR_TYPES.includes(type as (typeof SCALAR_TYPES)[number])) return `type "${type}" is not one of ${SCALAR_TYPES.join(', ')}`;
  const unknown = typeof spec === 'object' && spec !== null ? Object.keys(spec).filter((key) => key !== 'type' && key !== 'range') : [];
  if (unknown.length) return `unknown key ${unknown.join(', ')} (an argument has type and, for a date, range)`;
  return 'range is {from: YYYY-MM-DD, to: YYYY-MM-DD} and may say its meaning (meaning: text)';
}

function valueAt(document: unknown, pointer: string): unknown {
  return pointer
    .split('/')
    .slice(1)
    .reduce<unknown>((value, part) => (typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[part] : undefined), document);
}

/**
 * "/collections/loans/fields/amount" → "collection loans, field amount"; a whole section
 * ("/collections", "/version") by its key in the file, any other place by its keys
 * ("functions.loan_age.arguments"); the document itself: "metadata".
 */
function describePath(pointer: string): string {
  const parts = pointer.split('/').slice(1).map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'));
  if (parts.length === 1) return parts[0]!;
  if (parts[0] === 'event_types' && parts[1]) return [`event type ${parts[1]}`, ...parts.slice(2)].join(', ');
  if (parts[0] === 'roles' && parts[1]) {
    // Only under `collections` is the next key a collection: a role's `rate_limit` or `variables` is named by its keys.
    const place = parts[2] === 'collections' && parts[3] ? [`collection ${parts[3]}`, ...parts.slice(4)] : parts.slice(2);
    return [`role ${parts[1]}`, ...place].join(', ');
  }
  if (parts[0] !== 'collections') return parts.length ? parts.join('.') : 'metadata';
  const words = [`collection ${parts[1]}`];
  if (parts[2] === 'fields' && parts[3]) words.push(`field ${parts[3]}`);
  else if (parts[2] === 'relationships' && parts[3]) words.push(`relationship ${parts[3]}`);
  else if (parts[2] === 'computed_fields' && parts[3]) words.push(`computed field ${parts[3]}`, ...(parts[4] === 'args' && parts[5] ? [`argument ${parts[5]}`] : parts.slice(4, 5)));
  else if (parts[2]) words.push(parts[2]);
  return words.join(', ');
}
