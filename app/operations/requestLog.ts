import { lineParts, lineWriterOf, type Logger } from '../logger.js';

/** `REQUEST_LOG_LEVEL` and `REQUEST_LOG_SAMPLE` (README "Operations"). */
export interface RequestLogSettings {
  /** The pino level of the lines (`info` by default); `silent` turns the log off. */
  readonly level: RequestLogLevel;
  /** The share of requests answered below 400 that get a line, 0 to 1 (1 by default); 4xx and 5xx always get one. */
  readonly sample: number;
}

export const REQUEST_LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type RequestLogLevel = (typeof REQUEST_LOG_LEVELS)[number];

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
}

/**
 * The request log (issue 35): one line per request, message `request`, at a configured level and
 * sampled; off when the level is `silent` or below the logger's own (`LOG_LEVEL`). The line is
 * the one pino would write (`{"level":30,"time":…,"service":"loanql",…,"msg":"request"}`), put
 * together here and handed to the logger's destination in batches (`lineWriterOf`): a
 * `RequestLine`'s fields are a closed set that holds no secret, so redaction has nothing to do
 * (its wildcard paths cost ~12 µs a line), and the destination's per-line bookkeeping is saved
 * (README "Operations", "What observing costs").
 */
export class RequestLog {
  readonly #write: ((line: string) => void) | null;
  readonly #start: string;
  readonly #afterTime: string;
  /**
   * The last line's time and its text, and the text of its millions of milliseconds: a number
   * this large takes V8's slow formatting (~0.9 µs a line under load), so a time is written as
   * its millions (changing every ~17 minutes) and two three-digit groups from a table.
   */
  #time = -1;
  #timeText = '';
  #millions = -1;
  #millionsText = '';

  constructor(
    logger: Logger,
    private readonly settings: RequestLogSettings,
    private readonly random: () => number = Math.random,
    private readonly now: () => number = Date.now,
  ) {
    const { level } = settings;
    const on = level !== 'silent' && logger.isLevelEnabled(level);
    this.#write = on ? lineWriterOf(logger) : null;
    ({ start: this.#start, afterTime: this.#afterTime } = lineParts(logger, level));
  }

  /** Whether any request can get a line (when not, the server does not collect the facts for one). */
  get enabled(): boolean {
    return this.#write !== null;
  }

  /** Writes the line of a finished request, unless sampling leaves it out. */
  write(line: RequestLine): void {
    if (!this.#write) return;
    if (line.status < 400 && this.settings.sample < 1 && this.random() >= this.settings.sample) return;
    this.#write(
      `${this.#start}${this.#timeNow()}${this.#afterTime}"requestId":${text(line.requestId)},"method":${text(line.method)},"route":${text(line.route)},"status":${line.status},` +
        `"durationMs":${hundredths(line.durationMs)},"databaseMs":${line.databaseMs === null ? 'null' : hundredths(line.databaseMs)},"responseBytes":${line.responseBytes},` +
        `"keyPrefix":${text(line.keyPrefix)},"role":${text(line.role)},"operationType":${text(line.operationType)},"operationName":${text(line.operationName)},` +
        `"documentHash":${text(line.documentHash)},"msg":"request"}\n`,
    );
  }

  #timeNow(): string {
    const now = this.now();
    if (now === this.#time) return this.#timeText;
    this.#time = now;
    const millions = Math.floor(now / 1e6);
    if (!(millions >= 1 && Number.isSafeInteger(now))) return (this.#timeText = String(now));
    if (millions !== this.#millions) {
      this.#millions = millions;
      this.#millionsText = String(millions);
    }
    const rest = now - millions * 1e6;
    const thousands = Math.floor(rest / 1000);
    return (this.#timeText = this.#millionsText + THREE_DIGITS[thousands]! + THREE_DIGITS[rest - thousands * 1000]!);
  }
}

const THREE_DIGITS = Array.from({ length: 1000 }, (_, n) => String(n).padStart(3, '0'));

/** A character JSON.stringify would escape (a quote, a backslash, a control character, a lone surrogate half). */
const ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * A string field as JSON (`null` for none): exactly what JSON.stringify gives, which only the
 * rare field that needs escaping is handed to (each call into it cost ~0.25 µs a field under load).
 */
const text = (value: string | null): string => (value === null ? 'null' : ESCAPED.test(value) ? JSON.stringify(value) : `"${value}"`);

/**
 * Milliseconds to a hundredth, as JSON writes `Math.round(ms * 100) / 100`: put together from
 * whole numbers, whose text V8 makes fast (a fraction's text took its slow number formatting).
 */
export function hundredths(ms: number): string {
  const total = Math.round(ms * 100);
  if (!(total >= 0 && total < 2 ** 30)) return String(total / 100);
  const whole = Math.floor(total / 100);
  const fraction = total - whole * 100;
  if (fraction === 0) return `${whole}`;
  if (fraction % 10 === 0) return `${whole}.${fraction / 10}`;
  return fraction < 10 ? `${whole}.0${fraction}` : `${whole}.${fraction}`;
}
