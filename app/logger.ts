import { pino, type DestinationStream, type Logger } from 'pino';

/**
 * Lines are written once this many bytes wait (~20 request lines), or every `FLUSH_EVERY_MS`:
 * under load a `write(2)` (and the wake-up of the thread that makes it) per line cost more CPU
 * than the line itself on a busy machine (bench/RESULTS.md, operations section).
 */
const BATCH_BYTES = 8 * 1024;
/**
 * Request lines (`lineBytesOf`) are handed to the destination in batches of this many bytes:
 * each hand-over costs a fixed ~50 µs of CPU or so under load (sonic-boom's bookkeeping,
 * `fs.write`'s request, the thread pool's wake-up and `write(2)`), ~2.5 µs a request at 8 KiB.
 */
const REQUEST_BATCH_BYTES = 64 * 1024;
const FLUSH_EVERY_MS = 1_000;

/** pino's levels, lowest first (`LOG_LEVEL`, `REQUEST_LOG_LEVEL`); `silent` writes nothing. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The service's name on every line. */
const BASE = { service: 'loanql' } as const;

/**
 * Structured JSON logs. Secrets never reach them: request headers are not logged at all,
 * and any field that could carry a key or password is redacted as a second line of defence.
 *
 * Without a destination the lines go to standard output through pino's asynchronous
 * destination (sonic-boom, `sync: false`): a line costs a copy into a buffer, not a `write(2)`;
 * the buffer is written when it holds `BATCH_BYTES`, or at the latest after `FLUSH_EVERY_MS`.
 * pino flushes what is left synchronously when the process exits (`process.exit`, a clean stop
 * after SIGTERM), and `flushLog` does so on demand, so no line is lost on a clean stop; a
 * `kill -9` loses at most the last two seconds' lines (a request line may wait a second in its
 * batch, `lineBytesOf`, then a second in the destination).
 */
export function createLogger(level: string, destination?: DestinationStream | NodeJS.WritableStream): Logger {
  const asynchronous = destination ? null : pino.destination({ dest: 1, sync: false, minLength: BATCH_BYTES, periodicFlush: FLUSH_EVERY_MS });
  if (asynchronous) BATCHED.add(asynchronous);
  return pino(
    {
      level,
      base: BASE,
      redact: {
        paths: [
          'password', '*.password', 'key', '*.key', 'authorization', '*.authorization', 'headers', '*.headers', 'cookie', '*.cookie',
          // Request bodies (login and key forms) and the dashboard's session and CSRF tokens.
          'body', '*.body', 'token', '*.token', 'csrfToken', '*.csrfToken',
          // A failed statement's bound values, which PGlite's errors carry (a new webhook secret, a key's hash…).
          'err.params',
        ],
        censor: '[redacted]',
      },
      // Request lines waiting in a batch (`lineBytesOf`) go out before any other line, so the log keeps its order.
      ...(asynchronous ? { hooks: { streamWrite: (line: string) => (BATCHES.get(asynchronous)?.flush(), line) } } : {}),
    },
    destination ?? asynchronous!,
  );
}

/**
 * Where whole lines formatted by the caller as UTF-8 bytes go (the request log's `RequestLine`):
 * lines whose fields are a closed set that carries no secret by construction, so that neither
 * pino's formatting nor its redaction runs for them, and no string is made per line. The caller
 * asks for `room` for a line's most bytes, writes it into the buffer from `length`, and calls
 * `done` with where it ended.
 */
export interface LineBytes {
  /** Where the next line starts in the buffer `room` gives. */
  readonly length: number;
  /** A buffer with at least `bytes` free from `length` on (a new one, or the same one emptied, when needed). */
  room(bytes: number): Buffer;
  /** The line written, up to `end`. */
  done(end: number): void;
}

/**
 * The byte lines of `logger`'s destination (`LineBytes`). On the default destination (standard
 * output, asynchronous) they are gathered in one buffer and handed over as one string of
 * `REQUEST_BATCH_BYTES` or more (or after at most `FLUSH_EVERY_MS`): one UTF-8 decoding a batch
 * instead of a string a line (sonic-boom's `write` also measures its whole pending buffer on each
 * call). `flushLog`, any other line of the logger and the process's exit write out what the
 * batch holds first, so the log keeps its order. On a destination given to `createLogger` (tests
 * capture lines) each line is written at once, as a string.
 */
export function lineBytesOf(logger: Logger): LineBytes {
  const destination = destinationOf(logger);
  if (!BATCHED.has(destination)) return new ImmediateLines(destination);
  let batch = BATCHES.get(destination);
  if (!batch) BATCHES.set(destination, (batch = new LineBatch(destination)));
  return batch;
}

/**
 * How a line of `logger` at `level` starts and what follows its time, as pino writes them:
 * `{"level":30,"time":` and `,"service":"loanql",`; the caller's fields, `"msg"`, `}` and a
 * newline follow.
 */
export function lineParts(logger: Logger, level: string): { readonly start: string; readonly afterTime: string } {
  return { start: `{"level":${logger.levels.values[level]},"time":`, afterTime: `,"service":${JSON.stringify(BASE.service)},` };
}

/** Destinations made by `createLogger` itself (asynchronous standard output): their caller-formatted lines are batched. */
const BATCHED = new WeakSet<DestinationStream>();
const BATCHES = new WeakMap<DestinationStream, LineBatch>();

/** Lines waiting to be handed to an asynchronous destination in one `write`. */
class LineBatch implements LineBytes {
  /** Room for a batch and the line that fills it. */
  #buffer = Buffer.allocUnsafe(2 * REQUEST_BATCH_BYTES);
  length = 0;
  #timer: NodeJS.Timeout | null = null;

  constructor(private readonly destination: DestinationStream & { flushSync?: () => void }) {
    // pino's own exit hook flushed the destination already (it was registered first): write ours, then flush again.
    process.once('exit', () => {
      this.flush();
      try {
        destination.flushSync?.();
      } catch {
        // Closed already: nothing more can be written.
      }
    });
  }

  room(bytes: number): Buffer {
    if (this.length + bytes > this.#buffer.length) this.flush();
    // A line larger than a batch (a GraphQL name has no length limit): a buffer its size.
    if (bytes > this.#buffer.length) this.#buffer = Buffer.allocUnsafe(bytes + REQUEST_BATCH_BYTES);
    return this.#buffer;
  }

  done(end: number): void {
    this.length = end;
    if (end >= REQUEST_BATCH_BYTES) this.flush();
    else if (this.#timer === null) (this.#timer = setTimeout(this.flush, FLUSH_EVERY_MS)).unref();
  }

  /** Hands the waiting lines to the destination, which writes them (`BATCH_BYTES` or more: at once; fewer: within its own `FLUSH_EVERY_MS`). */
  readonly flush = (): void => {
    if (this.#timer !== null) {
      clearTimeout(this.#timer);
      this.#timer = null;
    }
    if (this.length === 0) return;
    const text = this.#buffer.toString('utf8', 0, this.length);
    this.length = 0;
    this.destination.write(text);
  };
}

/** Byte lines written to their destination one by one, as strings. */
class ImmediateLines implements LineBytes {
  #buffer = Buffer.allocUnsafe(4096);
  readonly length = 0;

  constructor(private readonly destination: DestinationStream | NodeJS.WritableStream) {}

  room(bytes: number): Buffer {
    if (bytes > this.#buffer.length) this.#buffer = Buffer.allocUnsafe(bytes);
    return this.#buffer;
  }

  done(end: number): void {
    this.destination.write(this.#buffer.toString('utf8', 0, end));
  }
}

/**
 * Writes out, synchronously, whatever the logger's asynchronous destination still holds: called
 * right before `process.exit` (pino's own exit hook does the same; this does not depend on it).
 */
export function flushLog(logger: Logger): void {
  const destination = destinationOf(logger) as DestinationStream & { flushSync?: () => void };
  BATCHES.get(destination)?.flush();
  try {
    destination.flushSync?.();
  } catch {
    // A destination that cannot flush now (not open yet, or closed): nothing to lose.
  }
}

const destinationOf = (logger: Logger): DestinationStream => (logger as unknown as Record<symbol, DestinationStream>)[pino.symbols.streamSym]!;
export type { Logger };
