import express, { type RequestHandler } from 'express';
import { isSafeNumber, LosslessNumber, parse as parseLossless } from 'lossless-json';

/**
 * JSON bodies read without losing a digit ("Money is exact"). `JSON.parse` reads every number as
 * a double, so `{"Amount": 100.10000000000000001}` arrived as 100.1 and was stored as 100.10 —
 * while the same value as a string was refused for its decimals — and 9007199254740993 became
 * …992. Here a number a double cannot hold exactly arrives as the string of its digits, which the
 * field's rules then judge as written (REST money fields, GraphQL's `numeric` and `bigint` take
 * strings; `Int` and `Float` refuse them rather than take another number). Every number a double
 * holds exactly stays a number, so what JavaScript clients send (the shortest round-trip form,
 * `0.30000000000000004`) is unchanged.
 *
 * Cheap for every other body: only a text with a run of 16 or more digits (and points) can hold
 * such a number, and only that text is read by lossless-json; the rest by `JSON.parse`.
 */
export function parseJsonExact(text: string, numbers: ExactNumbers = 'as-strings'): unknown {
  if (!LONG_NUMBER.test(text)) return JSON.parse(text);
  if (numbers === 'as-lossless') return parseLossless(text, null, (digits) => (isSafeNumber(digits) ? Number(digits) : new LosslessNumber(digits)));
  return parseLossless(text, null, (digits) => (isSafeNumber(digits) ? Number(digits) : digits));
}

/**
 * How a number a double cannot hold arrives: `as-strings` (the REST routes: the string of its
 * digits), or `as-lossless` (GraphQL: a `LosslessNumber`, which the engine makes the string of its
 * digits wherever the variable's type is not json/jsonb, and keeps as a number inside a json/jsonb
 * value — `{"x": 12345678901234567890}` stays a number, as written).
 */
export type ExactNumbers = 'as-strings' | 'as-lossless';

const LONG_NUMBER = /\d[\d.]{15,}/;

/** Whether `text` can hold a number a double cannot hold exactly (a run of 16 or more digits and points). */
export function hasLongNumber(text: string): boolean {
  return LONG_NUMBER.test(text);
}

/**
 * A JSON message as text whose numbers a double cannot hold exactly are written as strings of
 * their digits, for a reader that parses with `JSON.parse` itself (graphql-ws's messages); the
 * same text when there is none, or when it is not JSON (the reader reports that).
 */
export function withExactNumbers(text: string): string {
  if (!LONG_NUMBER.test(text)) return text;
  try {
    return JSON.stringify(parseJsonExact(text));
  } catch {
    return text;
  }
}

/**
 * `express.json({limit, type: () => true, strict: false})` read with `parseJsonExact`: the body
 * as text (its charset, encoding and size handled by body-parser as before), then parsed; a body
 * that is not JSON fails as body-parser's own does (`entity.parse.failed`, 400: `bodyErrors.ts`).
 */
export function exactJsonBody(limit: number, numbers: ExactNumbers = 'as-strings'): RequestHandler {
  const readText = express.text({ limit, type: () => true });
  return (req, res, next) => {
    // JSON is UTF-8 (RFC 8259 §8.1): a body declared in another charset is refused, naming it
    // (`bodyErrors.ts`), before it is read. body-parser's text reader decoded any charset
    // iconv-lite knows, so `charset=latin1` was read as Latin-1 and `utf-16` as UTF-16 — taken,
    // though nothing said so.
    const charset = hasBody(req) ? declaredCharset(req.get('content-type')) : undefined;
    if (charset !== undefined && !UTF8_NAMES.has(charset.toLowerCase())) {
      return next(Object.assign(new Error(`unsupported charset "${charset.toUpperCase()}"`), { status: 415, statusCode: 415, expose: true, type: 'charset.unsupported', charset }));
    }
    readText(req, res, (error?: unknown) => {
      if (error) return next(error);
      if (typeof req.body !== 'string') return next();
      // As body-parser's JSON reader: an empty body is `{}` (README: no body counts as an empty one).
      if (req.body.length === 0) {
        req.body = {};
        return next();
      }
      try {
        req.body = parseJsonExact(req.body, numbers);
      } catch (parseError) {
        return next(Object.assign(new SyntaxError(`request body is not valid JSON: ${(parseError as Error).message}`), { status: 400, statusCode: 400, expose: true, type: 'entity.parse.failed' }));
      }
      next();
    });
  };
}

/** The names of UTF-8 a JSON body may declare (`charset=utf-8`, any case; `utf8` too). */
const UTF8_NAMES = new Set(['utf-8', 'utf8']);

/** The `charset` parameter of a Content-Type (its quotes taken off), or undefined when it has none. */
function declaredCharset(contentType: string | undefined): string | undefined {
  if (!contentType) return undefined;
  for (const parameter of contentType.split(';').slice(1)) {
    const equals = parameter.indexOf('=');
    if (equals < 0 || parameter.slice(0, equals).trim().toLowerCase() !== 'charset') continue;
    return parameter.slice(equals + 1).trim().replace(/^"(.*)"$/, '$1');
  }
  return undefined;
}

/** Whether a request carries a body to decode (chunked, or a Content-Length above 0): a GET without one is not refused for its header. */
function hasBody(req: { get(name: string): string | undefined }): boolean {
  if (req.get('transfer-encoding') !== undefined) return true;
  const length = req.get('content-length');
  return length !== undefined && length.trim() !== '0';
}
