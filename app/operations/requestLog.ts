import { lineBytesOf, lineParts, LOG_LEVELS, type LineBytes, type Logger, type LogLevel } from '../logger.js';

/** `REQUEST_LOG_LEVEL` and `REQUEST_LOG_SAMPLE` (README "Operations"). */
export interface RequestLogSettings {
  /** The pino level of the lines (`info` by default); `silent` turns the log off. */
  readonly level: RequestLogLevel;
  /** The share of requests answered below 400 that get a line, 0 to 1 (1 by default); 4xx and 5xx always get one. */
  readonly sample: number;
}

export const REQUEST_LOG_LEVELS = LOG_LEVELS;
export type RequestLogLevel = LogLevel;

/**
 * One line of the request log. Nothing in it is a secret or a value the client sent: the key's
 * visible prefix (never the key), the role, the operation's name (a GraphQL Name of the
 * document) and the document's hash (never its text or variables).
 */
export interface RequestLine {
  readonly requestId: string;
  readonly method: string;
  readonly route: string;
  readonly status: number;
  readonly durationMs: number;
  /** Time the request waited on the database (a GraphQL request's statement or transaction), when it ran one. */
  readonly databaseMs: number | null;
  /** Bytes written to the connection for the response, headers included. */
  readonly responseBytes: number;
  readonly keyPrefix: string | null;
  readonly role: string | null;
  readonly operationType: string | null;
  readonly operationName: string | null;
  readonly documentHash: string | null;
  /** When the request ended (ms since the epoch, `Date.now()`), when the caller has read the clock already; now otherwise. */
  readonly time?: number;
}

/**
 * The request log (issue 35): one line per request, message `request`, at a configured level and
 * sampled; off when the level is `silent` or below the logger's own (`LOG_LEVEL`). The line is
 * the one pino would write (`{"level":30,"time":…,"service":"loanql",…,"msg":"request"}`), written
 * here as UTF-8 bytes straight into the logger's batch (`lineBytesOf`): no string a line, no
 * string re-encoded; a field is escaped (by JSON.stringify) only when it holds a character JSON
 * escapes or one beyond ASCII, and numbers are written digit by digit. A `RequestLine`'s fields
 * are a closed set that holds no secret, so redaction has nothing to do (its wildcard paths cost
 * ~12 µs a line) (README "Operations", "What observing costs").
 */
export class RequestLog {
  readonly #lines: LineBytes | null;
  readonly #start: Buffer;
  readonly #afterTime: Buffer;

  constructor(
    logger: Logger,
    private readonly settings: RequestLogSettings,
    private readonly random: () => number = Math.random,
    private readonly now: () => number = Date.now,
  ) {
    const { level } = settings;
    const on = level !== 'silent' && logger.isLevelEnabled(level);
    this.#lines = on ? lineBytesOf(logger) : null;
    const { start, afterTime } = lineParts(logger, level);
    [this.#start, this.#afterTime] = [Buffer.from(start), Buffer.from(afterTime)];
  }

  /** Whether any request can get a line (when not, the server does not collect the facts for one). */
  get enabled(): boolean {
    return this.#lines !== null;
  }

  /** Writes the line of a finished request, unless sampling leaves it out. */
  write(line: RequestLine): void {
    const lines = this.#lines;
    if (!lines) return;
    if (line.status < 400 && this.settings.sample < 1 && this.random() >= this.settings.sample) return;
    const { requestId, method, route, keyPrefix, role, operationType, operationName, documentHash } = line;
    // The most bytes the line can take: the fixed parts and numbers, and 6 a character of text (`\u001f`; UTF-8 takes at most 3 a UTF-16 unit).
    const texts = requestId.length + method.length + route.length + (keyPrefix?.length ?? 0) + (role?.length ?? 0) + (operationType?.length ?? 0) + (operationName?.length ?? 0) + (documentHash?.length ?? 0);
    const buffer = lines.room(FIXED_BYTES + this.#start.length + this.#afterTime.length + 6 * texts);
    let at = copy(buffer, lines.length, this.#start);
    at = writeInteger(buffer, at, line.time ?? this.now());
    at = copy(buffer, at, this.#afterTime);
    at = writeText(buffer, copy(buffer, at, REQUEST_ID), requestId);
    at = writeText(buffer, copy(buffer, at, METHOD), method);
    at = writeText(buffer, copy(buffer, at, ROUTE), route);
    at = writeInteger(buffer, copy(buffer, at, STATUS), line.status);
    at = writeHundredths(buffer, copy(buffer, at, DURATION), line.durationMs);
    at = copy(buffer, at, DATABASE);
    at = line.databaseMs === null ? copy(buffer, at, NULL) : writeHundredths(buffer, at, line.databaseMs);
    at = writeInteger(buffer, copy(buffer, at, RESPONSE_BYTES), line.responseBytes);
    at = writeText(buffer, copy(buffer, at, KEY_PREFIX), keyPrefix);
    at = writeText(buffer, copy(buffer, at, ROLE), role);
    at = writeText(buffer, copy(buffer, at, OPERATION_TYPE), operationType);
    at = writeText(buffer, copy(buffer, at, OPERATION_NAME), operationName);
    at = writeText(buffer, copy(buffer, at, DOCUMENT_HASH), documentHash);
    lines.done(copy(buffer, at, END));
  }
}

const REQUEST_ID = Buffer.from('"requestId":');
const METHOD = Buffer.from(',"method":');
const ROUTE = Buffer.from(',"route":');
const STATUS = Buffer.from(',"status":');
const DURATION = Buffer.from(',"durationMs":');
const DATABASE = Buffer.from(',"databaseMs":');
const RESPONSE_BYTES = Buffer.from(',"responseBytes":');
const KEY_PREFIX = Buffer.from(',"keyPrefix":');
const ROLE = Buffer.from(',"role":');
const OPERATION_TYPE = Buffer.from(',"operationType":');
const OPERATION_NAME = Buffer.from(',"operationName":');
const DOCUMENT_HASH = Buffer.from(',"documentHash":');
const END = Buffer.from(',"msg":"request"}\n');
const NULL = Buffer.from('null');
/** The names and punctuation, the quotes of 8 texts, and 5 numbers of at most 24 characters each (`String` of any number). */
const FIXED_BYTES = [REQUEST_ID, METHOD, ROUTE, STATUS, DURATION, DATABASE, RESPONSE_BYTES, KEY_PREFIX, ROLE, OPERATION_TYPE, OPERATION_NAME, DOCUMENT_HASH, END].reduce((sum, part) => sum + part.length, 0) + 8 * 2 + 5 * 24;

/** Copies `part` into `buffer` at `at` (a loop: a native copy costs more for a few bytes); gives where it ended. */
function copy(buffer: Buffer, at: number, part: Buffer): number {
  for (let i = 0; i < part.length; i++) buffer[at + i] = part[i]!;
  return at + part.length;
}

/**
 * A string field as JSON (`null` for none), exactly as JSON.stringify writes it, in UTF-8: a
 * text of printable ASCII without `"` or `\` byte by byte; any other (a character JSON escapes,
 * or beyond ASCII, whose bytes UTF-8 makes) through JSON.stringify, rewritten from its start.
 */
function writeText(buffer: Buffer, at: number, value: string | null): number {
  if (value === null) return copy(buffer, at, NULL);
  buffer[at] = QUOTE;
  const length = value.length;
  for (let i = 0; i < length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x20 || code > 0x7e || code === QUOTE || code === BACKSLASH) return at + buffer.write(JSON.stringify(value), at, 'utf8');
    buffer[at + 1 + i] = code;
  }
  buffer[at + 1 + length] = QUOTE;
  return at + 2 + length;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const ZERO = 0x30;

/** A number as `String` writes it (pino's time, the status, the byte count): a whole number of up to 2^53 digit by digit. */
function writeInteger(buffer: Buffer, at: number, value: number): number {
  if (!(value >= 0 && value <= Number.MAX_SAFE_INTEGER && Number.isInteger(value))) return at + buffer.write(String(value), at, 'latin1');
  let digits = 1;
  for (let rest = value; rest >= 10; rest = Math.floor(rest / 10)) digits++;
  let rest = value;
  for (let i = at + digits - 1; i >= at; i--) {
    const next = Math.floor(rest / 10);
    buffer[i] = ZERO + (rest - next * 10);
    rest = next;
  }
  return at + digits;
}

/**
 * Milliseconds to a hundredth, as JSON writes `Math.round(ms * 100) / 100`: from whole numbers
 * (a fraction's text took V8's slow number formatting).
 */
function writeHundredths(buffer: Buffer, at: number, ms: number): number {
  const total = Math.round(ms * 100);
  if (!(total >= 0 && total < 2 ** 30)) return at + buffer.write(String(total / 100), at, 'latin1');
  const whole = Math.floor(total / 100);
  const fraction = total - whole * 100;
  at = writeInteger(buffer, at, whole);
  if (fraction === 0) return at;
  buffer[at++] = 0x2e; // .
  if (fraction % 10 === 0) {
    buffer[at] = ZERO + fraction / 10;
    return at + 1;
  }
  buffer[at] = ZERO + Math.floor(fraction / 10);
  buffer[at + 1] = ZERO + (fraction % 10);
  return at + 2;
}
